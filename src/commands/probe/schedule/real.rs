//! The measurements the scheduler calls, behind one trait: [`Real`] runs
//! the probes on this host; the scheduler's tests put a stand-in in its
//! place, so the run order, the preconditions and the skip rules are
//! tested without root or devices.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::blockstack;
use crate::commands::probe::extended::cpubench;
use crate::commands::probe::pveperf::dns;
use crate::commands::probe::pveperf::fsync;
use crate::commands::probe::pveperf::hostinfo;
use crate::commands::probe::pveperf::regex;
use crate::error::ProbeError;
use crate::measure::blockdev;
use crate::measure::engine::JobParams;
use crate::measure::engine::{self, EngineChoice};
use crate::measure::filesystem;
use crate::measure::seqwrite;
use crate::measure::sustained;
use crate::measure::syncwrite;
use crate::measure::volume;
use crate::model::blockdev::ReadFigure;
use crate::model::blockdev::SeekFigure;
use crate::model::cpubench::CpuBench;
use crate::model::dns::DnsFigure;
use crate::model::dns::Schedule;
use crate::model::filesystem::FsInfo;
use crate::model::fsync::FsyncFigure;
use crate::model::host::HostInfo;
use crate::model::io::IoStats;
use crate::model::io::MixedFigure;
use crate::model::io::SeqWriteFigure;
use crate::model::regex::RegexEngine;
use crate::model::regex::RegexFigure;
use crate::model::storage::Storage;
use crate::model::sustained::SustainedFigure;
use crate::model::sync::SyncMode;
use crate::model::sync::SyncWriteFigure;
use crate::sys::host::Host;
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;

/// Free space where a test writes its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    pub available: u64,
    pub read_only: bool,
}

/// Where write jobs write.
#[derive(Debug, Clone, Copy)]
pub enum WriteTarget<'a> {
    /// A scratch volume's device (the probe allocated it).
    Device(&'a Path),
    /// A file of `bytes` in a scratch directory inside the path.
    File { path: &'a Path, bytes: u64 },
}

/// What the DNS lines ask.
#[derive(Debug, Clone, Copy)]
pub struct DnsQuery<'a> {
    pub servers: &'a [SocketAddr],
    /// DNS INT's search domain; `None` for DNS EXT.
    pub domain: Option<&'a str>,
    pub window: Duration,
    pub timeout: Duration,
    pub schedule: Schedule,
}

/// One measurement each; an interrupt is `Err(ProbeError::Interrupted)`.
pub trait Measure {
    fn filesystem(&mut self, path: &Path) -> Result<FsInfo, ProbeError>;
    fn storage(&mut self, fs: &FsInfo) -> Storage;
    /// After the last timed test: what changed in the storage meanwhile
    /// (the disks' heat).
    fn after_tests(&mut self, _storage: &mut Storage) {}
    fn host_info(&mut self) -> HostInfo;
    /// Drops the page cache, as pveperf does before each disk test.
    fn drop_caches(&mut self) -> std::io::Result<()>;
    fn bogomips(&mut self) -> Result<f64, ProbeError>;
    fn regex(&mut self, engine: RegexEngine, window: Duration) -> Result<RegexFigure, ProbeError>;
    fn buffered_reads(&mut self, dev: &Path, window: Duration) -> Result<ReadFigure, ProbeError>;
    fn seek(
        &mut self,
        dev: &Path,
        window: Duration,
        record_latency: bool,
    ) -> Result<SeekFigure, ProbeError>;
    /// An extended I/O job on a device, read-only.
    fn device_job(
        &mut self,
        dev: &Path,
        job: JobParams,
        window: Duration,
        engine: EngineChoice,
    ) -> Result<IoStats, ProbeError>;
    fn space(&mut self, path: &Path) -> Result<Space, ProbeError>;
    /// SEQ WRITE: `runs` writes of `bytes` to one file in a scratch directory.
    fn seq_write(
        &mut self,
        path: &Path,
        bytes: u64,
        runs: u32,
        zero_data: bool,
    ) -> Result<Vec<SeqWriteFigure>, ProbeError>;
    /// MIXED: a file of `bytes` written first, then the job on it.
    fn mixed(
        &mut self,
        path: &Path,
        bytes: u64,
        job: JobParams,
        window: Duration,
        engine: EngineChoice,
    ) -> Result<MixedFigure, ProbeError>;
    /// FSYNCS/SECOND: pveperf's loop, in pveperf's order.
    fn fsync(
        &mut self,
        path: &Path,
        window: Duration,
        record_latency: bool,
    ) -> Result<FsyncFigure, ProbeError>;
    /// SYNC WRITE 4K: `jobs` jobs, each over its own file of `bytes`.
    fn sync_write(
        &mut self,
        path: &Path,
        jobs: u32,
        bytes: u64,
        mode: SyncMode,
        window: Duration,
    ) -> Result<SyncWriteFigure, ProbeError>;
    /// A scratch volume's device, as the filesystem the lines describe:
    /// its path as source, its size, its device number.
    fn volume(&mut self, dev: &Path) -> Result<FsInfo, ProbeError>;
    /// SEQ WRITE on a scratch volume: its whole device written once.
    fn prefill(&mut self, dev: &Path, zero_data: bool) -> Result<SeqWriteFigure, ProbeError>;
    /// SYNC WRITE 4K on a scratch volume's device: one job over its first `bytes`.
    fn sync_write_device(
        &mut self,
        dev: &Path,
        bytes: u64,
        mode: SyncMode,
        window: Duration,
    ) -> Result<SyncWriteFigure, ProbeError>;
    /// Write jobs (RANDOM WRITE 4K) on a scratch volume's device, or on a
    /// file of `bytes` in a scratch directory in `path`, written first.
    fn write_jobs(
        &mut self,
        target: WriteTarget,
        jobs: &[JobParams],
        window: Duration,
        engine: EngineChoice,
    ) -> Result<Vec<IoStats>, ProbeError>;
    /// SUSTAINED WRITE: a file of `bytes` in a scratch directory in `path`,
    /// written for `window`.
    fn sustained(
        &mut self,
        path: &Path,
        bytes: u64,
        window: Duration,
    ) -> Result<SustainedFigure, ProbeError>;
    /// PBS's CPU figures, their windows scaled with `duration`, on one
    /// thread and then on `threads` at once.
    fn cpu_bench(
        &mut self,
        duration: Duration,
        threads: Option<u32>,
    ) -> Result<CpuBench, ProbeError>;
    /// resolv.conf's text.
    fn read_resolv_conf(&mut self, path: &Path) -> std::io::Result<String>;
    fn dns(&mut self, query: &DnsQuery) -> Result<DnsFigure, ProbeError>;
    /// What could not be removed so far.
    fn left_behind(&self) -> Vec<String>;
}

/// The probes on this host.
pub struct Real<'a> {
    pub host: &'a Host,
    pub interrupt: &'a Interrupt,
    /// Read the leaf disks' health and heat (`ProbeConfig::disk_health`).
    pub disk_health: bool,
    left_behind: Vec<String>,
}

impl<'a> Real<'a> {
    pub fn new(host: &'a Host, interrupt: &'a Interrupt) -> Self {
        Real {
            host,
            interrupt,
            disk_health: true,
            left_behind: Vec::new(),
        }
    }

    /// Runs `test` in a fresh scratch directory inside `path` and removes
    /// it; what cannot be removed is kept for the report.
    fn in_scratch<T>(
        &mut self,
        path: &Path,
        test: impl FnOnce(&mut ScratchDir, &Interrupt) -> Result<T, ProbeError>,
    ) -> Result<T, ProbeError> {
        let mut scratch = match ScratchDir::create(path) {
            Ok(scratch) => scratch,
            Err(ProbeError::LeftBehind(what)) => {
                self.left_behind.push(what.clone());
                return Err(ProbeError::LeftBehind(what));
            }
            Err(e) => return Err(e),
        };
        let result = test(&mut scratch, self.interrupt);
        let (result, left) = scratch.finish(result);
        self.left_behind.extend(left);
        result
    }
}

impl Measure for Real<'_> {
    fn filesystem(&mut self, path: &Path) -> Result<FsInfo, ProbeError> {
        filesystem::filesystem(self.host, path)
    }

    fn storage(&mut self, fs: &FsInfo) -> Storage {
        let mut s = blockstack::storage(self.host, fs);
        if self.disk_health {
            blockstack::smart::read_storage(self.host, &mut s, Some(self.interrupt));
            s.hints = blockstack::hints::hints(&s);
        }
        s
    }

    fn after_tests(&mut self, s: &mut Storage) {
        if self.disk_health {
            blockstack::smart::read_heat_after(self.host, s, Some(self.interrupt));
        }
    }

    fn host_info(&mut self) -> HostInfo {
        hostinfo::host_info(self.host)
    }

    fn drop_caches(&mut self) -> std::io::Result<()> {
        crate::sys::host::drop_caches(self.host)
    }

    fn bogomips(&mut self) -> Result<f64, ProbeError> {
        crate::commands::probe::pveperf::cpu::bogomips(self.host)
    }

    fn regex(&mut self, engine: RegexEngine, window: Duration) -> Result<RegexFigure, ProbeError> {
        regex::measure(engine, window, self.interrupt)
    }

    fn buffered_reads(&mut self, dev: &Path, window: Duration) -> Result<ReadFigure, ProbeError> {
        blockdev::buffered_reads(dev, window, self.interrupt)
    }

    fn seek(
        &mut self,
        dev: &Path,
        window: Duration,
        record_latency: bool,
    ) -> Result<SeekFigure, ProbeError> {
        blockdev::seek_time(dev, window, record_latency, self.interrupt)
    }

    fn device_job(
        &mut self,
        dev: &Path,
        params: JobParams,
        window: Duration,
        choice: EngineChoice,
    ) -> Result<IoStats, ProbeError> {
        let file = blockdev::open_device(dev, true)?;
        let size = blockdev::device_size(&file, dev)?;
        let block = params.block as u64;
        engine::run(
            &engine::Job::new(&file, params, size / block * block, window),
            choice,
            self.interrupt,
        )
    }

    fn space(&mut self, path: &Path) -> Result<Space, ProbeError> {
        let vfs = nix::sys::statvfs::statvfs(path)
            .map_err(|e| ProbeError::io(format!("statvfs {}", path.display()), e.into()))?;
        Ok(Space {
            available: (vfs.blocks_available() as u64).saturating_mul(vfs.fragment_size() as u64),
            read_only: vfs.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY),
        })
    }

    fn seq_write(
        &mut self,
        path: &Path,
        bytes: u64,
        runs: u32,
        zero_data: bool,
    ) -> Result<Vec<SeqWriteFigure>, ProbeError> {
        let pool = seqwrite::data(zero_data);
        self.in_scratch(path, |scratch, interrupt| {
            (0..runs)
                .map(|_| seqwrite::run(scratch, "seqwrite.dat", bytes, &pool, interrupt))
                .collect()
        })
    }

    fn mixed(
        &mut self,
        path: &Path,
        bytes: u64,
        params: JobParams,
        window: Duration,
        choice: EngineChoice,
    ) -> Result<MixedFigure, ProbeError> {
        self.in_scratch(path, |scratch, interrupt| {
            // Fill the file with data first: reads of holes would flatter the figure.
            let pool = seqwrite::data(false);
            seqwrite::run(scratch, "mixed.dat", bytes, &pool, interrupt)?;
            let (file, direct) = scratch.open_rw("mixed.dat")?;
            let size = bytes / params.block as u64 * params.block as u64;
            let stats = engine::run(
                &engine::Job::new(&file, params, size, window),
                choice,
                interrupt,
            )?;
            Ok(MixedFigure {
                stats,
                direct,
                file_bytes: size,
            })
        })
    }

    fn fsync(
        &mut self,
        path: &Path,
        window: Duration,
        record_latency: bool,
    ) -> Result<FsyncFigure, ProbeError> {
        self.in_scratch(path, |scratch, interrupt| {
            fsync::measure(
                scratch,
                crate::model::fsync::Order::Pveperf,
                window,
                record_latency,
                interrupt,
            )
        })
    }

    fn sync_write(
        &mut self,
        path: &Path,
        jobs: u32,
        bytes: u64,
        mode: SyncMode,
        window: Duration,
    ) -> Result<SyncWriteFigure, ProbeError> {
        self.in_scratch(path, |scratch, interrupt| {
            syncwrite::measure(scratch, jobs, bytes, mode, window, interrupt)
        })
    }

    fn cpu_bench(
        &mut self,
        duration: Duration,
        threads: Option<u32>,
    ) -> Result<CpuBench, ProbeError> {
        cpubench::measure(duration, threads, self.interrupt)
    }

    fn sustained(
        &mut self,
        path: &Path,
        bytes: u64,
        window: Duration,
    ) -> Result<SustainedFigure, ProbeError> {
        self.in_scratch(path, |scratch, interrupt| {
            sustained::measure(scratch, bytes, window, interrupt)
        })
    }

    fn volume(&mut self, dev: &Path) -> Result<FsInfo, ProbeError> {
        use std::os::unix::fs::MetadataExt;
        let file = blockdev::open_device(dev, false)?;
        let size = blockdev::device_size(&file, dev)?;
        let rdev = file
            .metadata()
            .map_err(|e| ProbeError::io(format!("stat {}", dev.display()), e))?
            .rdev();
        Ok(FsInfo {
            total_bytes: size,
            avail_bytes: size,
            source: dev.display().to_string(),
            fstype: crate::model::filesystem::VOLUME.into(),
            mount_point: dev.to_path_buf(),
            read_only: false,
            dev: (
                nix::sys::stat::major(rdev) as u32,
                nix::sys::stat::minor(rdev) as u32,
            ),
            options: String::new(),
        })
    }

    fn prefill(&mut self, dev: &Path, zero_data: bool) -> Result<SeqWriteFigure, ProbeError> {
        let file = volume::open_exclusive(dev, false)?;
        let size = blockdev::device_size(&file, dev)?;
        let pool = seqwrite::aligned_data();
        volume::prefill(&file, dev, size, &pool, zero_data, self.interrupt)
    }

    fn sync_write_device(
        &mut self,
        dev: &Path,
        bytes: u64,
        mode: SyncMode,
        window: Duration,
    ) -> Result<SyncWriteFigure, ProbeError> {
        let file = volume::open_exclusive(dev, mode == SyncMode::Dsync)?;
        let size = blockdev::device_size(&file, dev)?;
        let name = dev.display().to_string();
        syncwrite::measure_device(&file, &name, bytes.min(size), mode, window, self.interrupt)
    }

    fn write_jobs(
        &mut self,
        target: WriteTarget,
        jobs: &[JobParams],
        window: Duration,
        choice: EngineChoice,
    ) -> Result<Vec<IoStats>, ProbeError> {
        let job = |file: &std::fs::File, size: u64, params: &JobParams, interrupt: &Interrupt| {
            let span = size / params.block as u64 * params.block as u64;
            engine::run(
                &engine::Job::new(file, *params, span, window),
                choice,
                interrupt,
            )
        };
        match target {
            WriteTarget::Device(dev) => {
                let file = volume::open_exclusive(dev, false)?;
                let size = blockdev::device_size(&file, dev)?;
                jobs.iter()
                    .map(|params| job(&file, size, params, self.interrupt))
                    .collect()
            }
            WriteTarget::File { path, bytes } => self.in_scratch(path, |scratch, interrupt| {
                // Each job on a fresh file, as `fio --rw=randwrite` makes
                // its file by default (fallocate=native, no layout: fio
                // writes a file first only for reads or with overwrite=1):
                // preallocated and not written, so each block's first
                // write lands in an unwritten extent (with the random map,
                // every write of the window is a first one). QD32 on the
                // file QD1 wrote would find part of it written, cheaper.
                // Where the filesystem cannot preallocate, a sparse file
                // (fio's fallback too). Truncating frees the last job's.
                jobs.iter()
                    .map(|params| {
                        let file = scratch.create_file("randwrite.dat")?;
                        crate::sys::scratch::preallocate(&file, bytes).map_err(|e| {
                            ProbeError::io(
                                format!("preallocating {bytes} bytes for RANDOM WRITE 4K"),
                                e,
                            )
                        })?;
                        drop(file);
                        let (file, _direct) = scratch.open_rw("randwrite.dat")?;
                        job(&file, bytes, params, interrupt)
                    })
                    .collect()
            }),
        }
    }

    fn read_resolv_conf(&mut self, path: &Path) -> std::io::Result<String> {
        // glibc reads no further than it needs; 1 MiB is thousands of lines.
        crate::sys::host::read_capped(path, 1 << 20)
    }

    fn dns(&mut self, q: &DnsQuery) -> Result<DnsFigure, ProbeError> {
        let names: Box<dyn FnMut() -> String> = match q.domain {
            Some(d) => Box::new(dns::internal_names(d)),
            None => Box::new(dns::external_names()),
        };
        dns::measure(
            q.servers,
            q.domain,
            names,
            q.window,
            q.timeout,
            q.schedule,
            self.interrupt,
        )
    }

    fn left_behind(&self) -> Vec<String> {
        self.left_behind.clone()
    }
}
