//! Runs the requested tests in pveperf's order and fills a [`Report`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::ProbeError;
use crate::extended::engine::{self, EngineChoice};
use crate::extended::{self, MixedFigure};
use crate::host::Host;
use crate::parse::resolv;
use crate::probe::{self, blockdev, dns, filesystem, fsync, hostinfo, regex::RegexEngine};
use crate::report::{Devices, Figure, Outcome, Report, Settings};
use crate::scratch::ScratchDir;
use crate::storage::{self, Storage};
use crate::window::Interrupt;

use crate::plan::JobParams;
pub use crate::plan::Test;

/// Everything a run needs, already validated.
#[derive(Debug, Clone)]
pub struct Config {
    pub path: PathBuf,
    pub window: Duration,
    pub tests: BTreeSet<Test>,
    pub regex_engine: RegexEngine,
    pub resolv_conf: PathBuf,
    pub dns_timeout: Duration,
    pub dns_schedule: dns::Schedule,
    /// How often each timed test runs (`--runs`); lines print the median.
    pub runs: u32,
    /// Record per-operation latency of the seek and fsync loops.
    pub record_latency: bool,
    /// Bytes SEQ WRITE writes per run, and the size of MIXED's test file.
    pub write_size: u64,
    /// SEQ WRITE writes zeros (dd-compatible) instead of incompressible data.
    pub zero_data: bool,
    pub io_engine: EngineChoice,
    /// When the source is no block device (ZFS), read its pool's data disks
    /// instead (pveperf omits the lines; its own mode turns this off).
    pub leaf_reads: bool,
    pub host: Host,
}

/// The devices the read tests use.
#[derive(Debug, Clone)]
struct Targets {
    devices: Vec<PathBuf>,
    /// Not the source itself: the line names them.
    named: bool,
}

impl Config {
    /// The settings a report records.
    pub fn settings(&self) -> Settings {
        Settings {
            duration_s: self.window.as_secs_f64(),
            runs: self.runs,
            regex_engine: self.regex_engine.name().to_string(),
            dns_timeout_s: self.dns_timeout.as_secs_f64(),
            fsync_order: fsync::Order::Pveperf.name().to_string(),
            dns_schedule: self.dns_schedule.name().to_string(),
        }
    }
}

/// What the run tells its caller as it goes.
pub enum Event<'a> {
    /// A timed test starts its `run`th window (from 1) of `runs`.
    Begin {
        line: Figure,
        run: u32,
        runs: u32,
        window: Duration,
    },
    /// A figure's outcome is known (in print order).
    Figure(Figure),
    /// A note that belongs to no single line.
    Note(&'a str),
}

/// The devices the read tests use, or why there are none: the source when
/// it is a block device (as pveperf), else a ZFS pool's data disks.
fn targets(
    fs: &Outcome<filesystem::FsInfo>,
    storage: Option<&Storage>,
    leaf_reads: bool,
) -> Result<Targets, Outcome<()>> {
    let f = match fs {
        Outcome::Measured(f) => f,
        Outcome::Failed(why) | Outcome::Skipped(why) => {
            return Err(Outcome::Failed(format!("filesystem unknown: {why}")));
        }
    };
    if let Some(dev) = f.block_device() {
        return Ok(Targets {
            devices: vec![dev.to_path_buf()],
            named: false,
        });
    }
    let not_a_device = format!("{} ({}) is not a block device", f.source, f.fstype);
    match storage {
        Some(s) if leaf_reads && !s.read_devices.is_empty() => Ok(Targets {
            devices: s.read_devices.clone(),
            named: true,
        }),
        Some(s) if leaf_reads && s.zfs.is_some() => Err(Outcome::Failed(format!(
            "{not_a_device}, and its pool's disks are unknown: {}",
            s.problems
                .first()
                .map(String::as_str)
                .unwrap_or("zpool lists none")
        ))),
        _ => Err(Outcome::Skipped(not_a_device)),
    }
}

/// A signal (SIGINT, SIGTERM, SIGHUP) stopped the run: what unwinds the
/// scheduler, so every test's files are removed on the way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped(pub i32);

/// The scheduler's steps: done, or stopped by a signal.
type Step<T = ()> = Result<T, Stopped>;

/// Turns a probe result into an outcome; an interrupt stops the run.
fn outcome<T>(result: Result<T, ProbeError>) -> Step<Outcome<T>> {
    match result {
        Ok(v) => Ok(Outcome::Measured(v)),
        Err(ProbeError::Interrupted(sig)) => Err(Stopped(sig)),
        Err(e) => Ok(Outcome::Failed(e.to_string())),
    }
}

struct Runner<'a> {
    config: &'a Config,
    interrupt: &'a Interrupt,
    report: Report,
    sink: &'a mut dyn FnMut(&Report, Event),
    cache_note_given: bool,
}

impl Runner<'_> {
    fn emit(&mut self, figure: Figure) {
        (self.sink)(&self.report, Event::Figure(figure));
    }

    fn note(&mut self, text: String) {
        (self.sink)(&self.report, Event::Note(&text));
        self.report.notes.push(text);
    }

    /// Runs one timed test `runs` times; the first failure ends it.
    fn repeat<T>(
        &mut self,
        line: Figure,
        mut test: impl FnMut(&mut Self) -> Result<T, ProbeError>,
    ) -> Step<Outcome<Vec<T>>> {
        let runs = self.config.runs.max(1);
        let mut samples = Vec::with_capacity(runs as usize);
        for run in 1..=runs {
            (self.sink)(
                &self.report,
                Event::Begin {
                    line,
                    run,
                    runs,
                    window: self.config.window,
                },
            );
            match outcome(test(self))? {
                Outcome::Measured(sample) => samples.push(sample),
                Outcome::Failed(why) if run > 1 => {
                    return Ok(Outcome::Failed(format!("run {run} of {runs}: {why}")));
                }
                Outcome::Failed(why) => return Ok(Outcome::Failed(why)),
                Outcome::Skipped(why) => return Ok(Outcome::Skipped(why)),
            }
        }
        Ok(Outcome::Measured(samples))
    }

    /// One run of a device test: each target in turn, the window shared
    /// among them, caches dropped before each.
    fn each_device<T>(
        &mut self,
        targets: &Targets,
        mut test: impl FnMut(&Path, Duration, &Interrupt) -> Result<T, ProbeError>,
    ) -> Result<Devices<T>, ProbeError> {
        let share = self.config.window / targets.devices.len().max(1) as u32;
        let mut each = Vec::with_capacity(targets.devices.len());
        for dev in &targets.devices {
            self.drop_caches();
            each.push(test(dev, share, self.interrupt)?);
        }
        Ok(Devices {
            each,
            named: targets.named,
        })
    }

    fn wants(&self, test: Test) -> bool {
        self.config.tests.contains(&test)
    }

    /// pveperf drops the page cache before each disk test; say once when we cannot.
    fn drop_caches(&mut self) {
        let Err(e) = probe::drop_caches(&self.config.host) else {
            return;
        };
        if !self.cache_note_given {
            self.cache_note_given = true;
            let why = if e.kind() == std::io::ErrorKind::PermissionDenied {
                "not root".to_string()
            } else {
                crate::error::describe(&e)
            };
            self.note(format!(
                "page cache not dropped ({why}): disk figures may come partly from memory"
            ));
        }
    }

    fn run(&mut self) -> Step {
        let cfg = self.config;
        let fs = outcome(filesystem::filesystem(&cfg.host, &cfg.path))?;
        let storage = fs.measured().map(|f| storage::storage(&cfg.host, f));
        let device = targets(&fs, storage.as_ref(), cfg.leaf_reads);
        self.report.filesystem = Some(fs);
        self.report.storage = storage;

        if self.wants(Test::Cpu) {
            self.report.cpu_bogomips = Some(outcome(probe::cpu::bogomips(&cfg.host))?);
            self.emit(Figure::CpuBogomips);
        }
        if self.wants(Test::Regex) {
            let engine = cfg.regex_engine;
            self.report.regex = Some(self.repeat(Figure::RegexPerSecond, |this| {
                probe::regex::measure(engine, cfg.window, this.interrupt)
            })?);
            self.emit(Figure::RegexPerSecond);
        }
        self.emit(Figure::HdSize);

        if self.wants(Test::Read) {
            self.report.buffered_reads = Some(match &device {
                Ok(targets) => self.repeat(Figure::BufferedReads, |this| {
                    this.each_device(targets, |dev, window, interrupt| {
                        blockdev::buffered_reads(dev, window, interrupt)
                    })
                })?,
                Err(missing) => missing.retype(),
            });
            self.emit(Figure::BufferedReads);
        }
        if self.wants(Test::Seek) {
            self.report.seek = Some(match &device {
                Ok(targets) => self.repeat(Figure::AverageSeekTime, |this| {
                    this.each_device(targets, |dev, window, interrupt| {
                        blockdev::seek_time(dev, window, cfg.record_latency, interrupt)
                    })
                })?,
                Err(missing) => missing.retype(),
            });
            self.emit(Figure::AverageSeekTime);
        }
        if self.wants(Test::Fsync) {
            self.report.fsync = Some(self.repeat(Figure::FsyncsPerSecond, |this| {
                this.fsync_test(fsync::Order::Pveperf)
            })?);
            self.emit(Figure::FsyncsPerSecond);
        }
        if self.wants(Test::Dns) {
            self.dns_tests()?;
        }
        self.extended_tests(&device)
    }

    /// Free space for a file test of `bytes`, with a margin.
    fn space_for(&self, bytes: u64, what: &str) -> Result<(), ProbeError> {
        let vfs = nix::sys::statvfs::statvfs(&self.config.path).map_err(|e| {
            ProbeError::io(format!("statvfs {}", self.config.path.display()), e.into())
        })?;
        if vfs.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY) {
            return Err(ProbeError::Unavailable(format!(
                "{} is on a read-only filesystem",
                self.config.path.display()
            )));
        }
        let avail = (vfs.blocks_available() as u64).saturating_mul(vfs.fragment_size() as u64);
        let need = bytes + (bytes / 10).max(64 << 20);
        if avail < need {
            return Err(ProbeError::Unavailable(format!(
                "{what} needs {} MiB free (the file and a margin), {} has {} MiB; a smaller --write-size fits",
                need >> 20,
                self.config.path.display(),
                avail >> 20
            )));
        }
        Ok(())
    }

    fn extended_tests(&mut self, device: &Result<Targets, Outcome<()>>) -> Step {
        let cfg = self.config;
        if self.wants(Test::Seqwrite) {
            let result = self.space_for(cfg.write_size, "SEQ WRITE").and_then(|()| {
                let pool = extended::seqwrite::data(cfg.zero_data);
                let mut scratch = ScratchDir::create(&cfg.path)?;
                let runs = (0..3)
                    .map(|_| {
                        extended::seqwrite::run(
                            &mut scratch,
                            "seqwrite.dat",
                            cfg.write_size,
                            &pool,
                            self.interrupt,
                        )
                    })
                    .collect::<Result<Vec<_>, _>>();
                scratch.finish(runs)
            });
            self.report.extended.seq_write = Some(outcome(result)?);
            self.emit(Figure::SeqWrite);
        }
        let device_test = |this: &mut Self, params: JobParams| match device {
            Ok(targets) => outcome(this.each_device(targets, |dev, window, interrupt| {
                let file = blockdev::open_device(dev, true)?;
                let size = blockdev::device_size(&file, dev)?;
                let block = params.block;
                let job = engine::Job {
                    file: &file,
                    block,
                    span: size / block as u64 * block as u64,
                    depth: params.depth,
                    pattern: engine::Pattern {
                        read_pct: params.read_pct,
                        random_pct: params.random_pct,
                    },
                    window,
                };
                engine::run(&job, cfg.io_engine, interrupt)
            })),
            Err(missing) => Ok(missing.retype()),
        };
        if self.wants(Test::Seqread) {
            self.report.extended.seq_read = Some(device_test(self, JobParams::SEQ_READ_DIRECT)?);
            self.emit(Figure::SeqReadDirect);
        }
        if self.wants(Test::Randread) {
            self.report.extended.rand_read_qd1 =
                Some(device_test(self, JobParams::RAND_READ_4K_QD1)?);
            self.emit(Figure::RandRead4kQd1);
            self.report.extended.rand_read_qd32 =
                Some(device_test(self, JobParams::RAND_READ_4K_QD32)?);
            self.emit(Figure::RandRead4kQd32);
        }
        if self.wants(Test::Mixed) {
            let result = self
                .space_for(cfg.write_size, "MIXED 70/30")
                .and_then(|()| self.mixed_test());
            self.report.extended.mixed = Some(outcome(result)?);
            self.emit(Figure::Mixed);
        }
        if self.wants(Test::Fsynclat) {
            // Its own loop, which syncs the data it writes: FSYNCS/SECOND's
            // (pveperf's order) syncs a file its open just emptied.
            let result = self.fsync_test(fsync::Order::WriteThenFsync).and_then(|f| {
                f.latency.and_then(|l| l.summary()).ok_or_else(|| {
                    ProbeError::Unavailable("latency recording is off (--no-latency)".into())
                })
            });
            self.report.extended.fsync_latency = Some(outcome(result)?);
            self.emit(Figure::FsyncLatency);
        }
        Ok(())
    }

    /// IOMeter's 70% read, 80% random, 4 KiB, 16 outstanding on a test file.
    fn mixed_test(&mut self) -> Result<MixedFigure, ProbeError> {
        let cfg = self.config;
        let mut scratch = ScratchDir::create(&cfg.path)?;
        let result: Result<MixedFigure, ProbeError> = (|| {
            // Fill the file with data first: reads of holes would flatter the figure.
            let pool = extended::seqwrite::data(false);
            extended::seqwrite::run(
                &mut scratch,
                "mixed.dat",
                cfg.write_size,
                &pool,
                self.interrupt,
            )?;
            let (file, direct) = scratch.open_rw("mixed.dat")?;
            let params = JobParams::MIXED;
            let size = cfg.write_size / params.block as u64 * params.block as u64;
            let job = engine::Job {
                file: &file,
                block: params.block,
                span: size,
                depth: params.depth,
                pattern: engine::Pattern {
                    read_pct: params.read_pct,
                    random_pct: params.random_pct,
                },
                window: cfg.window,
            };
            let stats = engine::run(&job, cfg.io_engine, self.interrupt)?;
            Ok(MixedFigure {
                stats,
                direct,
                file_bytes: size,
            })
        })();
        scratch.finish(result)
    }

    fn fsync_test(&mut self, order: fsync::Order) -> Result<fsync::FsyncFigure, ProbeError> {
        let cfg = self.config;
        if let Some(fs) = self.report.filesystem.as_ref().and_then(Outcome::measured) {
            if fs.read_only {
                return Err(ProbeError::Unavailable(format!(
                    "{} is on a read-only filesystem",
                    cfg.path.display()
                )));
            }
            if fs.avail_bytes == 0 {
                return Err(ProbeError::Unavailable(format!(
                    "no space available on {}",
                    fs.source
                )));
            }
        }
        self.drop_caches();
        let mut scratch = ScratchDir::create(&cfg.path)?;
        let measured = fsync::measure(
            &mut scratch,
            order,
            cfg.window,
            cfg.record_latency,
            self.interrupt,
        );
        scratch.finish(measured)
    }

    fn dns_tests(&mut self) -> Step {
        let cfg = self.config;
        // glibc reads no further than it needs; 1 MiB is thousands of lines.
        let text = match crate::host::read_capped(&cfg.resolv_conf, 1 << 20) {
            Ok(text) => text,
            Err(e) => {
                let why = format!(
                    "cannot read {}: {}",
                    cfg.resolv_conf.display(),
                    crate::error::describe(&e)
                );
                return self.dns_unavailable(why);
            }
        };
        let plan = match cfg.dns_schedule {
            dns::Schedule::Bounded => self.bounded_plan(&text),
            dns::Schedule::Pveperf => self.pveperf_plan(&text),
        };
        let (servers, domain) = match plan {
            Ok(plan) => plan,
            Err(why) => return self.dns_unavailable(why),
        };
        let measure = |this: &mut Self, domain: Option<&str>| {
            let names: Box<dyn FnMut() -> String> = match domain {
                Some(d) => Box::new(dns::internal_names(d)),
                None => Box::new(dns::external_names()),
            };
            dns::measure(
                &servers,
                domain,
                names,
                cfg.window,
                cfg.dns_timeout,
                cfg.dns_schedule,
                this.interrupt,
            )
        };
        self.report.dns_ext = Some(self.repeat(Figure::DnsExt, |this| measure(this, None))?);
        self.emit(Figure::DnsExt);
        self.report.dns_int = Some(match domain {
            Ok(domain) => self.repeat(Figure::DnsInt, |this| measure(this, Some(&domain)))?,
            Err(why) => Outcome::Skipped(why),
        });
        self.emit(Figure::DnsInt);
        Ok(())
    }

    /// Both DNS lines fail for `why`.
    fn dns_unavailable(&mut self, why: String) -> Step {
        self.report.dns_ext = Some(Outcome::Failed(why.clone()));
        self.emit(Figure::DnsExt);
        self.report.dns_int = Some(Outcome::Failed(why));
        self.emit(Figure::DnsInt);
        Ok(())
    }

    /// glibc's reading: the first three servers, the first domain of the
    /// last `search` or `domain` line.
    fn bounded_plan(&mut self, text: &str) -> Result<DnsPlan, String> {
        let file = self.config.resolv_conf.display().to_string();
        let conf = resolv::parse(text);
        if conf.nameservers.is_empty() {
            return Err(no_server(&file, &conf.invalid));
        }
        if conf.ignored > 0 {
            self.note(format!(
                "{file} lists {} more name servers; only the first {} are used, as glibc does",
                conf.ignored,
                resolv::MAXNS
            ));
        }
        let domain = conf
            .internal_domain()
            .map(str::to_string)
            .ok_or_else(|| format!("no search domain in {file}"));
        Ok((conf.nameservers, domain))
    }

    /// pveperf's reading: Net::DNS's servers, the domain of the first
    /// `search` line with exactly one domain.
    fn pveperf_plan(&mut self, text: &str) -> Result<DnsPlan, String> {
        let file = self.config.resolv_conf.display().to_string();
        let conf = resolv::parse_netdns(text);
        if conf.nameservers.is_empty() {
            return Err(no_server(&file, &conf.invalid));
        }
        if !conf.invalid.is_empty() {
            self.note(format!(
                "{file}: name servers by name are not asked{}",
                not_addresses(&conf.invalid)
            ));
        }
        if conf.defaults {
            self.note(format!(
                "{file} names no name server; asking Net::DNS's defaults, ::1 and 127.0.0.1, as pveperf does"
            ));
        }
        if conf.ignored > 0 {
            self.note(format!(
                "{file} lists {} more name servers; only the first {} are asked",
                conf.ignored,
                resolv::NETDNS_MAX_SERVERS
            ));
        }
        let domain = resolv::pveperf_search_domain(text)
            .ok_or_else(|| format!("no `search` line with exactly one domain in {file}"));
        Ok((conf.nameservers, domain))
    }
}

/// The servers to ask, and DNS INT's domain or why there is none.
type DnsPlan = (Vec<std::net::SocketAddr>, Result<String, String>);

/// Why `file` gives no server to ask, naming the values that are not addresses.
fn no_server(file: &str, invalid: &[String]) -> String {
    format!("no usable nameserver in {file}{}", not_addresses(invalid))
}

/// ` (not addresses: a, b)` for a message, or nothing.
fn not_addresses(invalid: &[String]) -> String {
    if invalid.is_empty() {
        String::new()
    } else {
        format!(" (not addresses: {})", invalid.join(", "))
    }
}

/// Runs every requested test. `sink` hears of each line as soon as it is
/// known, so text can be printed as pveperf prints it, line by line.
pub fn run(config: &Config, interrupt: &Interrupt, sink: &mut dyn FnMut(&Report, Event)) -> Report {
    let mut runner = Runner {
        config,
        interrupt,
        report: Report {
            settings: config.settings(),
            started: Some(jiff::Timestamp::now()),
            host: Some(hostinfo::host_info(&config.host)),
            ..Report::new(config.path.clone())
        },
        sink,
        cache_note_given: false,
    };
    if let Err(Stopped(sig)) = runner.run() {
        runner.report.interrupted_by = Some(sig);
    }
    runner.report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::filesystem::FsInfo;

    fn fs(source: &str, fstype: &str) -> Outcome<FsInfo> {
        Outcome::Measured(FsInfo {
            total_bytes: 1 << 30,
            avail_bytes: 1 << 29,
            source: source.into(),
            fstype: fstype.into(),
            mount_point: "/".into(),
            read_only: false,
            dev: (0, 40),
            options: String::new(),
        })
    }

    #[test]
    fn zfs_reads_its_leaves_unless_running_as_pveperf() {
        let zfs = fs("rpool/data", "zfs");
        let storage = Storage {
            zfs: Some(crate::storage::ZfsInfo {
                dataset: "rpool/data".into(),
                pool: "rpool".into(),
                state: None,
                layout: None,
                vdevs: vec![],
                properties: Default::default(),
            }),
            read_devices: vec!["/dev/sda3".into(), "/dev/sdb3".into()],
            ..Storage::default()
        };
        let t = targets(&zfs, Some(&storage), true).unwrap();
        assert!(t.named);
        assert_eq!(
            t.devices,
            [PathBuf::from("/dev/sda3"), PathBuf::from("/dev/sdb3")]
        );
        // pveperf omits the lines for a ZFS dataset; so does its mode.
        assert!(matches!(
            targets(&zfs, Some(&storage), false),
            Err(Outcome::Skipped(_))
        ));
        // No zpool: the lines apply but cannot be measured.
        let unknown = Storage {
            read_devices: vec![],
            problems: vec!["zpool is not installed".into()],
            ..storage
        };
        match targets(&zfs, Some(&unknown), true) {
            Err(Outcome::Failed(why)) => {
                assert!(why.ends_with("its pool's disks are unknown: zpool is not installed"))
            }
            other => panic!("{other:?}"),
        }
        let dev = targets(&fs("/dev/sda1", "ext4"), None, true).unwrap();
        assert!(!dev.named);
        assert!(matches!(
            targets(&fs("tmpfs", "tmpfs"), None, true),
            Err(Outcome::Skipped(_))
        ));
    }
}
