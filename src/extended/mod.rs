//! `--extended` (`-x`): the benchmarks admins run after pveperf, done the
//! way the reference tools do them: bench.sh's dd write speed (SEQ WRITE),
//! O_DIRECT sequential reads at queue depth 8, IOMeter-style 4 KiB random
//! reads at depth 1 and 32, IOMeter's 70/30 mix at depth 16, and the latency
//! percentiles of a loop that writes 4,001 bytes and then fsyncs them (FSYNC
//! LATENCY; FSYNCS/SECOND's loop, in pveperf's order, syncs before it
//! writes). Device tests only read; writes go to files in the private
//! scratch directory.

pub mod engine;
pub mod seqwrite;

use std::fmt::Write as _;

use engine::IoStats;
use seqwrite::SeqWriteFigure;

use crate::latency::LatencySummary;
use crate::report::{Devices, Outcome};

/// The extended lines, in the order they print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum XLine {
    SeqWrite,
    SeqReadDirect,
    RandRead4kQd1,
    RandRead4kQd32,
    Mixed,
    FsyncLatency,
}

impl XLine {
    pub const ALL: [XLine; 6] = [
        XLine::SeqWrite,
        XLine::SeqReadDirect,
        XLine::RandRead4kQd1,
        XLine::RandRead4kQd32,
        XLine::Mixed,
        XLine::FsyncLatency,
    ];

    pub fn label(self) -> &'static str {
        match self {
            XLine::SeqWrite => "SEQ WRITE",
            XLine::SeqReadDirect => "SEQ READ DIRECT",
            XLine::RandRead4kQd1 => "RANDOM READ 4K QD1",
            XLine::RandRead4kQd32 => "RANDOM READ 4K QD32",
            XLine::Mixed => "MIXED 70/30 4K QD16",
            XLine::FsyncLatency => "FSYNC LATENCY",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            XLine::SeqWrite => "seq_write",
            XLine::SeqReadDirect => "seq_read_direct",
            XLine::RandRead4kQd1 => "rand_read_4k_qd1",
            XLine::RandRead4kQd32 => "rand_read_4k_qd32",
            XLine::Mixed => "mixed_70_30_4k_qd16",
            XLine::FsyncLatency => "fsync_latency",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            XLine::SeqWrite | XLine::SeqReadDirect => "MiB/s",
            XLine::RandRead4kQd1 | XLine::RandRead4kQd32 | XLine::Mixed => "IOPS",
            XLine::FsyncLatency => "ms",
        }
    }
}

/// The mixed test's result and how its file was opened.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedFigure {
    pub stats: IoStats,
    /// The file was opened with O_DIRECT (false where the filesystem refuses it).
    pub direct: bool,
    pub file_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extended {
    pub seq_write: Option<Outcome<Vec<SeqWriteFigure>>>,
    pub seq_read: Option<Outcome<Devices<IoStats>>>,
    pub rand_read_qd1: Option<Outcome<Devices<IoStats>>>,
    pub rand_read_qd32: Option<Outcome<Devices<IoStats>>>,
    pub mixed: Option<Outcome<MixedFigure>>,
    pub fsync_latency: Option<Outcome<LatencySummary>>,
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// The figure of a device test: the mean over the devices read.
pub fn device_value(line: XLine, devices: &Devices<IoStats>) -> f64 {
    match line {
        XLine::SeqReadDirect => mean(devices.each.iter().map(IoStats::read_mib_per_sec)),
        _ => mean(devices.each.iter().map(IoStats::read_iops)),
    }
}

impl Extended {
    pub fn is_empty(&self) -> bool {
        *self == Extended::default()
    }

    /// Why a line has no figure, with whether that is a failure.
    pub fn problem(&self, line: XLine) -> Option<(bool, &str)> {
        match line {
            XLine::SeqWrite => Outcome::problem_of(&self.seq_write),
            XLine::SeqReadDirect => Outcome::problem_of(&self.seq_read),
            XLine::RandRead4kQd1 => Outcome::problem_of(&self.rand_read_qd1),
            XLine::RandRead4kQd32 => Outcome::problem_of(&self.rand_read_qd32),
            XLine::Mixed => Outcome::problem_of(&self.mixed),
            XLine::FsyncLatency => Outcome::problem_of(&self.fsync_latency),
        }
    }

    pub fn devices(&self, line: XLine) -> Option<&Devices<IoStats>> {
        let o = match line {
            XLine::SeqReadDirect => &self.seq_read,
            XLine::RandRead4kQd1 => &self.rand_read_qd1,
            XLine::RandRead4kQd32 => &self.rand_read_qd32,
            _ => return None,
        };
        o.as_ref().and_then(Outcome::measured)
    }

    /// The number a line stands for (MiB/s, read IOPS, p99 ms).
    pub fn value(&self, line: XLine) -> Option<f64> {
        match line {
            XLine::SeqWrite => {
                let runs = self.seq_write.as_ref()?.measured()?;
                Some(mean(runs.iter().map(SeqWriteFigure::mib_per_sec)))
            }
            XLine::Mixed => Some(self.mixed.as_ref()?.measured()?.stats.read_iops()),
            XLine::FsyncLatency => Some(self.fsync_latency.as_ref()?.measured()?.p99_us / 1000.0),
            _ => Some(device_value(line, self.devices(line)?)),
        }
    }

    pub fn any_failed(&self) -> bool {
        XLine::ALL
            .iter()
            .any(|l| self.problem(*l).is_some_and(|(failed, _)| failed))
    }
}

/// Column where the extended lines' values start (their labels are longer
/// than pveperf's).
pub const VALUE_COLUMN: usize = 26;

fn names(devices: &Devices<IoStats>, paths: &[String]) -> String {
    if devices.named {
        format!(" on {}", paths.join(", "))
    } else {
        String::new()
    }
}

fn engine_note(s: &IoStats) -> String {
    match &s.fallback {
        Some(_) => format!("{} (io_uring refused)", s.engine.name()),
        None => s.engine.name().to_string(),
    }
}

/// The text line of an extended figure; `paths` names the devices read.
pub fn line(x: &Extended, line: XLine, paths: &[String]) -> Option<String> {
    let ms = |us: f64| us / 1000.0;
    let value = match line {
        XLine::SeqWrite => {
            let runs = x.seq_write.as_ref()?.measured()?;
            let each: Vec<String> = runs
                .iter()
                .map(|r| format!("{:.2}", r.mib_per_sec()))
                .collect();
            let data = if runs.iter().any(|r| r.zero_data) {
                "zeros"
            } else {
                "incompressible data"
            };
            format!(
                "{:.2} MB/sec ({} runs: {}; {data})",
                x.value(line)?,
                runs.len(),
                each.join(", ")
            )
        }
        XLine::SeqReadDirect => {
            let d = x.devices(line)?;
            format!(
                "{:.2} MB/sec (1 MiB O_DIRECT reads, QD8, {}{})",
                x.value(line)?,
                engine_note(d.each.first()?),
                names(d, paths)
            )
        }
        XLine::RandRead4kQd1 | XLine::RandRead4kQd32 => {
            let d = x.devices(line)?;
            let lat =
                crate::latency::merged(d.each.iter().map(|s| Some(&s.read_latency)))?.summary()?;
            format!(
                "{:.0} IOPS (mean {:.3} ms, p99 {:.3} ms, {}{})",
                x.value(line)?,
                ms(lat.mean_us),
                ms(lat.p99_us),
                engine_note(d.each.first()?),
                names(d, paths)
            )
        }
        XLine::Mixed => {
            let m = x.mixed.as_ref()?.measured()?;
            let file = if m.direct {
                "O_DIRECT file"
            } else {
                "buffered file: the filesystem refuses O_DIRECT"
            };
            format!(
                "{:.0} read IOPS, {:.0} write IOPS (80% random, {file}, {})",
                m.stats.read_iops(),
                m.stats.write_iops(),
                engine_note(&m.stats)
            )
        }
        XLine::FsyncLatency => {
            let l = x.fsync_latency.as_ref()?.measured()?;
            let mut v = String::new();
            let _ = write!(
                v,
                "p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms (write 4001 bytes, then fsync)",
                ms(l.p50_us),
                ms(l.p99_us),
                ms(l.max_us)
            );
            v
        }
    };
    Some(format!(
        "{:<width$}{value}",
        format!("{}:", line.label()),
        width = VALUE_COLUMN
    ))
}

/// What stderr says about an extended line: why it is missing, or that
/// io_uring was refused and psync ran instead.
pub fn diagnostic(x: &Extended, line: XLine) -> Option<String> {
    if let Some((failed, why)) = x.problem(line) {
        let verdict = if failed { "not measured" } else { "skipped" };
        return Some(format!("{}: {verdict}: {why}", line.label()));
    }
    let stats = match line {
        XLine::Mixed => x.mixed.as_ref()?.measured().map(|m| &m.stats),
        _ => x.devices(line).and_then(|d| d.each.first()),
    }?;
    stats
        .fallback
        .as_ref()
        .map(|why| format!("{}: {why}; ran psync instead", line.label()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::latency::Latency;

    fn stats(reads: u64, writes: u64) -> IoStats {
        let mut read_latency = Latency::default();
        for _ in 0..reads.min(1000) {
            read_latency.record(Duration::from_micros(100));
        }
        IoStats {
            engine: engine::Engine::IoUring,
            block: 4096,
            depth: 1,
            reads,
            writes,
            elapsed: Duration::from_secs(2),
            read_latency,
            write_latency: Latency::default(),
            cpu: Duration::from_millis(10),
            fallback: None,
        }
    }

    #[test]
    fn lines_have_their_formats() {
        let mut x = Extended::default();
        let w = |mib: u64| SeqWriteFigure {
            bytes: mib << 20,
            elapsed: Duration::from_secs(1),
            zero_data: false,
        };
        x.seq_write = Some(Outcome::Measured(vec![w(100), w(200), w(300)]));
        x.rand_read_qd1 = Some(Outcome::Measured(Devices {
            each: vec![stats(20000, 0)],
            named: false,
        }));
        let mut fallback = stats(1000, 0);
        fallback.engine = engine::Engine::Psync;
        fallback.fallback = Some("io_uring refused: Operation not permitted".into());
        x.rand_read_qd32 = Some(Outcome::Measured(Devices {
            each: vec![fallback, stats(3000, 0)],
            named: true,
        }));
        x.mixed = Some(Outcome::Measured(MixedFigure {
            stats: stats(1400, 600),
            direct: false,
            file_bytes: 1 << 30,
        }));
        let paths = ["sda3".to_string(), "sdb3".to_string()];
        assert_eq!(
            line(&x, XLine::SeqWrite, &[]).unwrap(),
            "SEQ WRITE:                200.00 MB/sec (3 runs: 100.00, 200.00, 300.00; incompressible data)"
        );
        assert_eq!(
            line(&x, XLine::RandRead4kQd1, &[]).unwrap(),
            "RANDOM READ 4K QD1:       10000 IOPS (mean 0.100 ms, p99 0.100 ms, io_uring)"
        );
        assert_eq!(
            line(&x, XLine::RandRead4kQd32, &paths).unwrap(),
            "RANDOM READ 4K QD32:      1000 IOPS (mean 0.100 ms, p99 0.100 ms, psync (io_uring refused) on sda3, sdb3)"
        );
        assert_eq!(
            line(&x, XLine::Mixed, &[]).unwrap(),
            "MIXED 70/30 4K QD16:      700 read IOPS, 300 write IOPS (80% random, buffered file: the filesystem refuses O_DIRECT, io_uring)"
        );
        assert_eq!(line(&x, XLine::SeqReadDirect, &[]), None);
        assert_eq!(x.value(XLine::RandRead4kQd32), Some(1000.0));
        assert!(!x.any_failed());
        x.seq_read = Some(Outcome::Failed("no".into()));
        assert!(x.any_failed());
    }
}
