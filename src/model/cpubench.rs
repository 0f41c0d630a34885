//! Proxmox Backup's CPU benchmark as data: the five operations of
//! `proxmox-backup-client benchmark` ([`CpuOp`]) with its windows and its
//! reference machine's figures, and what one run of each measured, on one
//! thread and (with `--cpu-threads`) on several at once ([`CpuOpFigure`]).
//! How they are measured is `extended::cpubench`.

use std::time::Duration;

/// Bytes in PBS's "MB": its figures are decimal megabytes per second.
pub const MB: f64 = 1_000_000.0;

/// One operation of PBS's benchmark, in PBS's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuOp {
    /// SHA256 of the 1 MiB buffer (OpenSSL).
    Sha256,
    /// zstd level 1 compression of the buffer, a fresh encoder per call.
    Compress,
    /// zstd decompression of the buffer's compressed form.
    Decompress,
    /// AES-256-GCM encryption of the buffer as PBS encrypts a chunk.
    Aes256Gcm,
    /// A compressed chunk's check: decompress, SHA256, compare digest and length.
    Verify,
}

impl CpuOp {
    pub const ALL: [CpuOp; 5] = [
        CpuOp::Sha256,
        CpuOp::Compress,
        CpuOp::Decompress,
        CpuOp::Aes256Gcm,
        CpuOp::Verify,
    ];

    /// Its key in `proxmox-backup-client benchmark --output-format json`.
    pub fn pbs_key(self) -> &'static str {
        match self {
            CpuOp::Sha256 => "sha256",
            CpuOp::Compress => "compress",
            CpuOp::Decompress => "decompress",
            CpuOp::Aes256Gcm => "aes256_gcm",
            CpuOp::Verify => "verify",
        }
    }

    /// PBS's window: the loop stops after the first call that ends past it.
    pub fn pbs_window(self) -> Duration {
        match self {
            CpuOp::Compress => Duration::from_secs(3),
            _ => Duration::from_secs(1),
        }
    }

    /// PBS's reference (`BENCHMARK_RESULT_2020_TOP`, an AMD Ryzen 7
    /// 2700X), in bytes per second.
    pub fn reference_bytes_per_s(self) -> f64 {
        MB * match self {
            CpuOp::Sha256 => 2022.0,
            CpuOp::Compress => 752.0,
            CpuOp::Decompress => 1198.0,
            CpuOp::Aes256Gcm => 3645.0,
            CpuOp::Verify => 758.0,
        }
    }

    /// The speed as a percentage of the reference, as PBS computes it.
    pub fn percent(self, bytes_per_s: f64) -> f64 {
        (bytes_per_s * 100.0) / self.reference_bytes_per_s()
    }
}

/// Bytes processed by one thread's loop in its time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuThroughput {
    pub bytes: u64,
    pub elapsed: Duration,
}

impl CpuThroughput {
    pub fn bytes_per_s(&self) -> f64 {
        super::per_second(self.bytes as f64, self.elapsed)
    }

    /// In PBS's MB/s (10^6 bytes).
    pub fn mb_per_s(&self) -> f64 {
        self.bytes_per_s() / MB
    }
}

/// One operation measured: on one thread, then, with `--cpu-threads`, on
/// each of several threads running at once.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuOpFigure {
    pub op: CpuOp,
    /// The window each loop ran for (PBS's, scaled with `--duration`).
    pub window: Duration,
    pub single: CpuThroughput,
    /// Each thread's, all started together; empty without `--cpu-threads`.
    pub threads: Vec<CpuThroughput>,
}

impl CpuOpFigure {
    /// One thread's speed in MB/s: PBS's figure.
    pub fn mb_per_s(&self) -> f64 {
        self.single.mb_per_s()
    }

    /// PBS's percentage of its reference machine.
    pub fn percent(&self) -> f64 {
        self.op.percent(self.single.bytes_per_s())
    }

    /// How many threads ran at once (`None` without `--cpu-threads`).
    pub fn thread_count(&self) -> Option<u32> {
        (!self.threads.is_empty()).then_some(self.threads.len() as u32)
    }

    /// All threads together, in MB/s.
    pub fn threads_mb_per_s(&self) -> Option<f64> {
        self.thread_count()?;
        Some(self.threads.iter().map(CpuThroughput::mb_per_s).sum())
    }

    /// The mean thread's MB/s.
    pub fn per_thread_mb_per_s(&self) -> Option<f64> {
        Some(self.threads_mb_per_s()? / f64::from(self.thread_count()?))
    }

    /// All threads against N times one thread alone: 1 where every thread
    /// kept a core's full speed; SMT siblings, a shared power budget and
    /// other load pull it below.
    pub fn scaling(&self) -> Option<f64> {
        let alone = self.mb_per_s() * f64::from(self.thread_count()?);
        (alone > 0.0).then(|| self.threads_mb_per_s().unwrap_or(0.0) / alone)
    }
}

/// The CPU benchmark's run: one figure per operation, in PBS's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuBench {
    pub ops: Vec<CpuOpFigure>,
}

impl CpuBench {
    pub fn get(&self, op: CpuOp) -> Option<&CpuOpFigure> {
        self.ops.iter().find(|f| f.op == op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(single: u64, threads: &[u64]) -> CpuOpFigure {
        let secs = Duration::from_secs(1);
        CpuOpFigure {
            op: CpuOp::Sha256,
            window: secs,
            single: CpuThroughput {
                bytes: single,
                elapsed: secs,
            },
            threads: threads
                .iter()
                .map(|&bytes| CpuThroughput {
                    bytes,
                    elapsed: secs,
                })
                .collect(),
        }
    }

    #[test]
    fn percentages_are_pbs_arithmetic_on_decimal_megabytes() {
        // The reference machine itself is 100%.
        for op in CpuOp::ALL {
            assert_eq!(op.percent(op.reference_bytes_per_s()), 100.0);
        }
        let f = figure(1_011_000_000, &[]);
        assert_eq!(f.mb_per_s(), 1011.0);
        assert_eq!(f.percent(), 50.0);
        assert_eq!(CpuOp::Aes256Gcm.percent(7290.0 * MB), 200.0);
        // PBS prints `{:.0}%`: 2022.00 MB/s (100%).
        assert_eq!(format!("{:.0}", CpuOp::Verify.percent(379.0 * MB)), "50");
    }

    #[test]
    fn threads_add_up_and_scale_against_one_thread() {
        let f = figure(1000 * MB as u64, &[900 * MB as u64, 700 * MB as u64]);
        assert_eq!(f.thread_count(), Some(2));
        assert_eq!(f.threads_mb_per_s(), Some(1600.0));
        assert_eq!(f.per_thread_mb_per_s(), Some(800.0));
        assert_eq!(f.scaling(), Some(0.8));
        let alone = figure(1000, &[]);
        assert_eq!(
            (
                alone.thread_count(),
                alone.threads_mb_per_s(),
                alone.scaling()
            ),
            (None, None, None)
        );
        assert_eq!(figure(0, &[5]).scaling(), None, "nothing to scale from");
    }

    #[test]
    fn windows_are_pbss() {
        let secs: Vec<u64> = CpuOp::ALL
            .iter()
            .map(|o| o.pbs_window().as_secs())
            .collect();
        assert_eq!(secs, [1, 3, 1, 1, 1]);
    }
}
