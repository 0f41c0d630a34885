//! A stand-in for the measurements, for the scheduler's tests: canned
//! figures, a log of what the scheduler asked in order, and a failure or
//! an interrupt on demand.

use super::*;
use crate::model::filesystem::FsInfo;

/// A call that fails: (the call, its nth time from 1, the error it gives).
pub(super) type Failure = (&'static str, usize, fn() -> ProbeError);

/// A stand-in for the measurements: canned figures, a log of what the
/// scheduler asked in order, and a failure or an interrupt on demand.
pub(super) struct Mock {
    pub(super) fs: Result<FsInfo, String>,
    pub(super) space: Space,
    pub(super) resolv_conf: Option<String>,
    pub(super) calls: Vec<String>,
    pub(super) fail: Option<Failure>,
    pub(super) left_behind: Vec<String>,
}

impl Mock {
    pub(super) fn new(fs: Outcome<FsInfo>) -> Self {
        Mock {
            fs: match fs {
                Outcome::Measured(f) => Ok(f),
                _ => Err("no filesystem".into()),
            },
            space: Space {
                available: 100 << 30,
                read_only: false,
            },
            resolv_conf: Some("nameserver 127.0.0.1\nsearch example.org\n".into()),
            calls: Vec::new(),
            fail: None,
            left_behind: Vec::new(),
        }
    }

    /// The calls in order, without the cache drops.
    pub(super) fn order(&self) -> Vec<&str> {
        self.calls
            .iter()
            .map(String::as_str)
            .filter(|c| *c != "drop_caches")
            .collect()
    }

    /// Logs the call and gives its failure, if it is the one to fail.
    fn call(&mut self, what: &'static str) -> Result<(), ProbeError> {
        self.calls.push(what.to_string());
        let n = self.calls.iter().filter(|c| *c == what).count();
        match self.fail {
            Some((call, nth, err)) if call == what && nth == n => Err(err()),
            _ => Ok(()),
        }
    }

    pub(super) fn count(&self, what: &str) -> usize {
        self.calls.iter().filter(|c| *c == what).count()
    }
}

fn io() -> crate::model::io::IoStats {
    crate::model::io::IoStats {
        engine: crate::model::io::Engine::Psync,
        block: 4096,
        depth: 1,
        reads: 100,
        writes: 0,
        elapsed: Duration::from_secs(1),
        read_latency: Default::default(),
        write_latency: Default::default(),
        cpu: Duration::ZERO,
        fallback: None,
    }
}

impl Measure for Mock {
    fn filesystem(&mut self, _: &Path) -> Result<FsInfo, ProbeError> {
        self.call("filesystem")?;
        self.fs.clone().map_err(ProbeError::Unavailable)
    }
    fn storage(&mut self, _: &FsInfo) -> Storage {
        Storage::default()
    }
    fn host_info(&mut self) -> crate::model::host::HostInfo {
        Default::default()
    }
    fn drop_caches(&mut self) -> std::io::Result<()> {
        self.calls.push("drop_caches".into());
        Err(std::io::ErrorKind::PermissionDenied.into())
    }
    fn bogomips(&mut self) -> Result<f64, ProbeError> {
        self.call("bogomips").map(|()| 4800.0)
    }
    fn regex(
        &mut self,
        engine: RegexEngine,
        window: Duration,
    ) -> Result<crate::model::regex::RegexFigure, ProbeError> {
        self.call("regex")?;
        Ok(crate::model::regex::RegexFigure {
            engine,
            iterations: 1000,
            window,
        })
    }
    fn buffered_reads(
        &mut self,
        dev: &Path,
        window: Duration,
    ) -> Result<crate::model::blockdev::ReadFigure, ProbeError> {
        self.call("buffered_reads")?;
        Ok(crate::model::blockdev::ReadFigure {
            device: dev.into(),
            bytes: 100 << 20,
            elapsed: window,
            reached_end: false,
        })
    }
    fn seek(
        &mut self,
        dev: &Path,
        window: Duration,
        _: bool,
    ) -> Result<crate::model::blockdev::SeekFigure, ProbeError> {
        self.call("seek")?;
        Ok(crate::model::blockdev::SeekFigure {
            device: dev.into(),
            block_size: 512,
            device_bytes: 1 << 30,
            reads: 100,
            elapsed: window,
            latency: None,
        })
    }
    fn device_job(
        &mut self,
        _: &Path,
        job: JobParams,
        _: Duration,
        _: EngineChoice,
    ) -> Result<crate::model::io::IoStats, ProbeError> {
        self.call("device_job")?;
        Ok(crate::model::io::IoStats {
            depth: job.depth,
            block: job.block,
            ..io()
        })
    }
    fn space(&mut self, _: &Path) -> Result<Space, ProbeError> {
        self.call("space").map(|()| self.space)
    }
    fn seq_write(
        &mut self,
        _: &Path,
        bytes: u64,
        runs: u32,
        zero_data: bool,
    ) -> Result<Vec<crate::model::io::SeqWriteFigure>, ProbeError> {
        self.call("seq_write")?;
        let run = crate::model::io::SeqWriteFigure {
            bytes,
            elapsed: Duration::from_secs(1),
            zero_data,
        };
        Ok(vec![run; runs as usize])
    }
    fn mixed(
        &mut self,
        _: &Path,
        bytes: u64,
        _: JobParams,
        _: Duration,
        _: EngineChoice,
    ) -> Result<crate::model::io::MixedFigure, ProbeError> {
        self.call("mixed")?;
        Ok(crate::model::io::MixedFigure {
            stats: io(),
            direct: true,
            file_bytes: bytes,
        })
    }
    fn fsync(
        &mut self,
        _: &Path,
        _: Duration,
        record_latency: bool,
    ) -> Result<crate::model::fsync::FsyncFigure, ProbeError> {
        self.call("fsync")?;
        let mut latency = crate::model::latency::Latency::default();
        latency.record(Duration::from_millis(1));
        Ok(crate::model::fsync::FsyncFigure {
            iterations: 300,
            elapsed: Duration::from_secs(1),
            latency: record_latency.then_some(latency),
        })
    }
    fn sync_write(
        &mut self,
        _: &Path,
        jobs: u32,
        bytes: u64,
        mode: SyncMode,
        _: Duration,
    ) -> Result<SyncWriteFigure, ProbeError> {
        self.call("sync_write")?;
        let mut latency = crate::model::latency::Latency::default();
        latency.record(Duration::from_millis(1));
        Ok(SyncWriteFigure {
            jobs,
            mode,
            file_bytes: bytes,
            writes: 1000 * u64::from(jobs.min(4)),
            elapsed: Duration::from_secs(1),
            latency,
            cpu: Duration::ZERO,
        })
    }
    fn sustained(
        &mut self,
        _: &Path,
        bytes: u64,
        window: Duration,
    ) -> Result<crate::model::sustained::SustainedFigure, ProbeError> {
        self.call("sustained")?;
        Ok(crate::model::sustained::SustainedFigure {
            bytes_per_second: vec![100 << 20, 50 << 20],
            window,
            elapsed: Duration::from_secs(2),
            file_bytes: bytes,
            direct: true,
        })
    }
    fn volume(&mut self, dev: &Path) -> Result<FsInfo, ProbeError> {
        self.call("volume")?;
        Ok(FsInfo {
            total_bytes: 4 << 30,
            avail_bytes: 4 << 30,
            source: dev.display().to_string(),
            fstype: "volume".into(),
            mount_point: dev.into(),
            read_only: false,
            dev: (253, 7),
            options: String::new(),
        })
    }
    fn prefill(
        &mut self,
        _: &Path,
        zero_data: bool,
    ) -> Result<crate::model::io::SeqWriteFigure, ProbeError> {
        self.call("prefill")?;
        Ok(crate::model::io::SeqWriteFigure {
            bytes: 4 << 30,
            elapsed: Duration::from_secs(8),
            zero_data,
        })
    }
    fn sync_write_device(
        &mut self,
        _: &Path,
        bytes: u64,
        mode: SyncMode,
        window: Duration,
    ) -> Result<SyncWriteFigure, ProbeError> {
        self.call("sync_write_device")?;
        let mut f = self.sync_write(Path::new("/"), 1, bytes, mode, window)?;
        self.calls.pop();
        f.file_bytes = bytes;
        Ok(f)
    }
    fn write_jobs(
        &mut self,
        target: WriteTarget,
        jobs: &[JobParams],
        _: Duration,
        _: EngineChoice,
    ) -> Result<Vec<crate::model::io::IoStats>, ProbeError> {
        self.call(match target {
            WriteTarget::Device(_) => "write_jobs_device",
            WriteTarget::File { .. } => "write_jobs_file",
        })?;
        Ok(jobs
            .iter()
            .map(|j| crate::model::io::IoStats {
                block: j.block,
                depth: j.depth,
                reads: 0,
                writes: 100 * j.depth as u64,
                ..io()
            })
            .collect())
    }
    fn cpu_bench(
        &mut self,
        duration: Duration,
        threads: Option<u32>,
    ) -> Result<crate::model::cpubench::CpuBench, ProbeError> {
        use crate::model::cpubench::{CpuBench, CpuOp, CpuOpFigure, CpuThroughput};
        self.call("cpu_bench")?;
        let t = |bytes| CpuThroughput {
            bytes,
            elapsed: Duration::from_secs(1),
        };
        Ok(CpuBench {
            ops: CpuOp::ALL
                .into_iter()
                .map(|op| CpuOpFigure {
                    op,
                    window: crate::commands::probe::extended::cpubench::scaled_window(op, duration),
                    single: t(1 << 30),
                    threads: (0..threads.unwrap_or(0)).map(|_| t(1 << 29)).collect(),
                })
                .collect(),
        })
    }
    fn read_resolv_conf(&mut self, _: &Path) -> std::io::Result<String> {
        self.calls.push("read_resolv_conf".into());
        self.resolv_conf
            .clone()
            .ok_or_else(|| std::io::ErrorKind::NotFound.into())
    }
    fn dns(&mut self, q: &DnsQuery) -> Result<crate::model::dns::DnsFigure, ProbeError> {
        self.call(if q.domain.is_some() {
            "dns_int"
        } else {
            "dns_ext"
        })?;
        Ok(crate::commands::probe::report::text::tests::dns(
            q.domain, 10,
        ))
    }
    fn left_behind(&self) -> Vec<String> {
        self.left_behind.clone()
    }
}
