//! The scheduler: runs the requested tests in print order (pveperf's,
//! then `-x`'s) and fills a [`ProbeReport`], checking each test's preconditions
//! (read-only, free space, a device to read) before it runs. The
//! measurements are behind [`Measure`], so the scheduler is tested with a
//! stand-in.

mod dns;
mod extended;
mod real;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use real::{DnsQuery, Measure, Real, Space, WriteTarget};

use crate::commands::common::work::Work;
use crate::commands::probe::report::{Outcome, ProbeReport};
use crate::error::ProbeError;
use crate::figure::Figure;
use crate::measure::engine::EngineChoice;
use crate::measure::engine::JobParams;
use crate::measure::plan::Test;
use crate::model::Devices;
use crate::model::regex::RegexEngine;
use crate::model::storage::Storage;
use crate::model::sync::{
    FlushVerdict, SyncMode, SyncResult, SyncScaling, SyncWriteFigure, VerdictKind, jobs_words,
};
use crate::output::result::Settings;
use crate::sys::host::Host;
use crate::sys::interrupt::Interrupt;
use pveprobe_parse::resolv;

/// Everything a run needs, already validated.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    pub path: PathBuf,
    pub window: Duration,
    pub tests: BTreeSet<Test>,
    pub regex_engine: RegexEngine,
    pub resolv_conf: PathBuf,
    pub dns_timeout: Duration,
    pub dns_schedule: crate::model::dns::Schedule,
    /// How often each timed test runs (`--runs`); lines print the median.
    pub runs: u32,
    /// Record per-operation latency of the seek and fsync loops.
    pub record_latency: bool,
    /// Bytes SEQ WRITE writes per run, and the size of MIXED's test file.
    pub write_size: u64,
    /// SEQ WRITE writes zeros (dd-compatible) instead of incompressible data.
    pub zero_data: bool,
    pub io_engine: EngineChoice,
    /// How SYNC WRITE 4K makes each write durable.
    pub sync_mode: SyncMode,
    /// `--sync-jobs`: the counts of jobs of SYNC WRITE 4K's scaling (none: no scaling).
    pub sync_jobs: Vec<u32>,
    /// `--plp`: whether the disks have power-loss protection, as the admin says.
    pub plp: Option<bool>,
    /// `--cpu-threads`: the CPU figures also on this many threads at once.
    pub cpu_threads: Option<u32>,
    /// `--sustained`: SUSTAINED WRITE's window and its file's size.
    pub sustained: Duration,
    pub sustained_bytes: u64,
    /// A scratch volume's device (`--storage` on a volume storage): the
    /// tests run on it, writes included, instead of in `path`'s filesystem.
    pub volume: Option<PathBuf>,
    /// When the source is no block device (ZFS), read its pool's data disks
    /// instead (pveperf omits the lines; its own mode turns this off).
    pub leaf_reads: bool,
    /// Read the leaf disks' health and heat (smartctl, hwmon) around the
    /// timed tests; off as pveperf, which shows neither.
    pub disk_health: bool,
    pub host: Host,
}

/// The devices the read tests use.
#[derive(Debug, Clone)]
struct Targets {
    devices: Vec<PathBuf>,
    /// Not the source itself: the line names them.
    named: bool,
}

impl ProbeConfig {
    /// The settings a report records.
    pub fn settings(&self) -> Settings {
        Settings {
            duration_s: self.window.as_secs_f64(),
            runs: self.runs,
            regex_engine: self.regex_engine.name().to_string(),
            dns_timeout_s: self.dns_timeout.as_secs_f64(),
            fsync_order: crate::model::fsync::Order::Pveperf.name().to_string(),
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
    fs: &Outcome<crate::model::filesystem::FsInfo>,
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

/// What a test sized by `--write-size` suggests when space is short.
const WRITE_SIZE_HINT: &str = "; a smaller --write-size fits";

/// Why a test that needs a filesystem skips a scratch volume.
const NO_FILESYSTEM: &str = "a scratch volume has no filesystem (this test needs one)";

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
    config: &'a ProbeConfig,
    measure: &'a mut dyn Measure,
    report: ProbeReport,
    sink: &'a mut dyn FnMut(&ProbeReport, Event),
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
        mut test: impl FnMut(&mut dyn Measure, &Path, Duration) -> Result<T, ProbeError>,
    ) -> Result<Devices<T>, ProbeError> {
        let share = self.config.window / targets.devices.len().max(1) as u32;
        let mut each = Vec::with_capacity(targets.devices.len());
        for dev in &targets.devices {
            self.drop_caches();
            each.push(test(&mut *self.measure, dev, share)?);
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
        let Err(e) = self.measure.drop_caches() else {
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
        let fs = match &cfg.volume {
            Some(dev) => outcome(self.measure.volume(dev))?,
            None => outcome(self.measure.filesystem(&cfg.path))?,
        };
        let storage = fs.measured().map(|f| self.measure.storage(f));
        let mut device = targets(&fs, storage.as_ref(), cfg.leaf_reads);
        self.report.filesystem = Some(fs);
        self.report.storage = storage;
        // A scratch volume is written in full before anything reads it:
        // thin and sparse volumes answer reads of unwritten blocks with
        // zeros they never fetch. The pass is SEQ WRITE.
        if let Some(dev) = &cfg.volume {
            let prefill = outcome(self.measure.prefill(dev, cfg.zero_data).map(|f| vec![f]))?;
            if let Outcome::Failed(why) | Outcome::Skipped(why) = &prefill {
                device = Err(Outcome::Failed(format!(
                    "the scratch volume's prefill failed: {why}"
                )));
            }
            self.report.extended.seq_write = Some(prefill);
        }

        if self.wants(Test::Cpu) {
            self.report.cpu_bogomips = Some(outcome(
                self.measure.bogomips().map(crate::model::host::Bogomips),
            )?);
            self.emit(Figure::CpuBogomips);
        }
        if self.wants(Test::Regex) {
            self.report.regex = Some(self.repeat(Figure::RegexPerSecond, |this| {
                this.measure.regex(cfg.regex_engine, cfg.window)
            })?);
            self.emit(Figure::RegexPerSecond);
        }
        self.emit(Figure::HdSize);

        if self.wants(Test::Read) {
            self.report.buffered_reads = Some(match &device {
                Ok(targets) => self.repeat(Figure::BufferedReads, |this| {
                    this.each_device(targets, |m, dev, window| m.buffered_reads(dev, window))
                })?,
                Err(missing) => missing.retype(),
            });
            self.emit(Figure::BufferedReads);
        }
        if self.wants(Test::Seek) {
            self.report.seek = Some(match &device {
                Ok(targets) => self.repeat(Figure::AverageSeekTime, |this| {
                    this.each_device(targets, |m, dev, window| {
                        m.seek(dev, window, cfg.record_latency)
                    })
                })?,
                Err(missing) => missing.retype(),
            });
            self.emit(Figure::AverageSeekTime);
        }
        if self.wants(Test::Fsync) && cfg.volume.is_some() {
            self.report.fsync = Some(Outcome::Skipped(NO_FILESYSTEM.into()));
            self.emit(Figure::FsyncsPerSecond);
        } else if self.wants(Test::Fsync) {
            self.report.fsync =
                Some(self.repeat(Figure::FsyncsPerSecond, |this| this.fsync_test())?);
            self.emit(Figure::FsyncsPerSecond);
        }
        if self.wants(Test::Dns) {
            self.dns_tests()?;
        }
        self.extended_tests(&device)
    }

    /// Free space for a file test of `bytes`, with a margin.
    fn space_for(&mut self, bytes: u64, what: &str, hint: &str) -> Result<(), ProbeError> {
        let path = &self.config.path;
        let space = self.measure.space(path)?;
        if space.read_only {
            return Err(ProbeError::Unavailable(format!(
                "{} is on a read-only filesystem",
                path.display()
            )));
        }
        let need = bytes + (bytes / 10).max(64 << 20);
        if space.available < need {
            return Err(ProbeError::Unavailable(format!(
                "{what} needs {} MiB free (the file and a margin), {} has {} MiB{hint}",
                need >> 20,
                path.display(),
                space.available >> 20
            )));
        }
        Ok(())
    }

    /// PATH's filesystem takes writes: not read-only, not full.
    fn writable(&self) -> Result<(), ProbeError> {
        let path = &self.config.path;
        let Some(fs) = self.report.filesystem.as_ref().and_then(Outcome::measured) else {
            return Ok(());
        };
        if fs.read_only {
            return Err(ProbeError::Unavailable(format!(
                "{} is on a read-only filesystem",
                path.display()
            )));
        }
        if fs.avail_bytes == 0 {
            return Err(ProbeError::Unavailable(format!(
                "no space available on {}",
                fs.source
            )));
        }
        Ok(())
    }

    /// FSYNCS/SECOND: pveperf's loop, in pveperf's order.
    fn fsync_test(&mut self) -> Result<crate::model::fsync::FsyncFigure, ProbeError> {
        let cfg = self.config;
        self.writable()?;
        self.drop_caches();
        self.measure
            .fsync(&cfg.path, cfg.window, cfg.record_latency)
    }
}

/// A probe run: its configuration, and who hears of each line as soon
/// as it is known (so text is printed as pveperf prints it, line by line).
pub struct ProbeRun<'a> {
    pub config: &'a ProbeConfig,
    pub each: &'a dyn Fn(&ProbeReport, Event),
}

/// Runs every requested test on this host. What fails, and a signal that
/// cut the run short, are in the report.
impl Work for ProbeRun<'_> {
    type Report = ProbeReport;
    type Error = std::convert::Infallible;

    fn run(&self, interrupt: &Interrupt) -> Result<ProbeReport, Self::Error> {
        let mut real = Real::new(&self.config.host, interrupt);
        real.disk_health = self.config.disk_health;
        Ok(run_with(self.config, &mut real, &mut |r, e| {
            (self.each)(r, e)
        }))
    }
}

/// Runs every requested test through `measure`.
pub fn run_with(
    config: &ProbeConfig,
    measure: &mut dyn Measure,
    sink: &mut dyn FnMut(&ProbeReport, Event),
) -> ProbeReport {
    let host = measure.host_info();
    let mut runner = Runner {
        config,
        measure,
        report: ProbeReport {
            settings: config.settings(),
            started: Some(jiff::Timestamp::now()),
            host: Some(host),
            ..ProbeReport::new(config.path.clone())
        },
        sink,
        cache_note_given: false,
    };
    if let Err(Stopped(sig)) = runner.run() {
        runner.report.interrupted_by = Some(sig);
    }
    if let Some(storage) = runner.report.storage.as_mut() {
        runner.measure.after_tests(storage);
    }
    for note in runner.report.add_measured_hints() {
        runner.note(note);
    }
    runner.report.left_behind = runner.measure.left_behind();
    runner.report
}

#[cfg(test)]
mod mock;

#[cfg(test)]
mod tests {
    use super::mock::Mock;
    use super::*;

    /// A figure's value as every output reads it.
    fn value(report: &ProbeReport, figure: Figure) -> Option<f64> {
        report.projection(figure)?.value()
    }
    use crate::model::filesystem::FsInfo;

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
            zfs: Some(crate::model::storage::ZfsInfo {
                dataset: "rpool/data".into(),
                pool: "rpool".into(),
                state: None,
                layout: None,
                vdevs: vec![],
                properties: Default::default(),
                ashift: None,
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

    fn config(tests: &[Test]) -> ProbeConfig {
        ProbeConfig {
            path: "/var/lib/vz".into(),
            window: Duration::from_millis(10),
            tests: tests.iter().copied().collect(),
            regex_engine: RegexEngine::Rust,
            resolv_conf: "/etc/resolv.conf".into(),
            dns_timeout: Duration::from_secs(1),
            dns_schedule: crate::model::dns::Schedule::Bounded,
            runs: 1,
            record_latency: true,
            write_size: 1 << 30,
            zero_data: false,
            io_engine: EngineChoice::Auto,
            sync_mode: SyncMode::Fdatasync,
            sync_jobs: Vec::new(),
            plp: None,
            cpu_threads: None,
            sustained: Duration::from_millis(20),
            sustained_bytes: 1 << 20,
            volume: None,
            leaf_reads: true,
            disk_health: false,
            host: Host::real(),
        }
    }

    /// Runs the scheduler on `mock`; the figures in the order announced.
    fn schedule(config: &ProbeConfig, mock: &mut Mock) -> (ProbeReport, Vec<Figure>) {
        let mut announced = Vec::new();
        let report = run_with(config, mock, &mut |_, event| {
            if let Event::Figure(f) = event {
                announced.push(f);
            }
        });
        (report, announced)
    }

    #[test]
    fn a_scratch_volume_is_written_and_read_and_fsync_skips() {
        let mut cfg = config(&[&Test::ON_VOLUME[..], &[Test::Mixed]].concat());
        cfg.volume = Some("/dev/dm-7".into());
        cfg.sync_jobs = vec![1, 2];
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        let (report, _) = schedule(&cfg, &mut mock);
        let order = mock.order();
        // No filesystem, no free-space checks, no files: the device only,
        // written in full before anything reads it.
        assert_eq!(
            order,
            [
                "volume",
                "prefill",
                "buffered_reads",
                "seek",
                "device_job",
                "device_job",
                "write_jobs_device",
                "sync_write_device",
            ]
        );
        assert_eq!(
            report.problem(Figure::FsyncsPerSecond),
            Some((false, NO_FILESYSTEM.into()))
        );
        assert_eq!(
            report.problem(Figure::Mixed),
            Some((false, NO_FILESYSTEM.into()))
        );
        assert!(
            report
                .problem(Figure::SyncWritePeak)
                .is_some_and(|(f, _)| !f)
        );
        assert_eq!(value(&report, Figure::RandWrite4kQd32), Some(3200.0));
        assert_eq!(value(&report, Figure::RandWrite4kQd1), Some(100.0));
        let seq = value(&report, Figure::SeqWrite).unwrap();
        assert_eq!(seq, 512.0, "the prefill is SEQ WRITE: 4 GiB in 8 s");
        assert!(!report.any_failed(), "{report:?}");

        // A failed prefill fails every test of the volume: reads of a
        // volume never written would measure nothing.
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.fail = Some(("prefill", 1, || ProbeError::Unavailable("EIO".into())));
        let (report, _) = schedule(&cfg, &mut mock);
        assert_eq!(
            mock.count("buffered_reads") + mock.count("write_jobs_device"),
            0
        );
        for f in [
            Figure::SeqWrite,
            Figure::BufferedReads,
            Figure::RandRead4kQd1,
            Figure::RandWrite4kQd32,
            Figure::SyncWrite4k,
        ] {
            let (failed, why) = report.problem(f).unwrap();
            assert!(failed && why.contains("EIO"), "{f:?}: {why}");
        }
    }

    #[test]
    fn cpu_figures_need_no_filesystem_and_run_once_with_their_threads() {
        let mut cfg = config(&[Test::CpuBench]);
        cfg.runs = 3;
        cfg.cpu_threads = Some(3);
        let mut mock = Mock::new(Outcome::Failed("gone".into()));
        let (report, announced) = schedule(&cfg, &mut mock);
        assert_eq!(mock.count("cpu_bench"), 1, "PBS runs them once");
        assert_eq!(&announced[1..], Figure::CPU_BENCH);
        let sha = report.extended.cpu(Figure::Sha256).unwrap();
        assert_eq!(sha.thread_count(), Some(3));
        assert_eq!(sha.window, Duration::from_millis(10) / 3);
        assert_eq!(value(&report, Figure::Verify), Some(sha.mb_per_s()));

        // A failure is each CPU figure's, and the run's.
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.fail = Some(("cpu_bench", 1, || {
            ProbeError::Unavailable("no AES-256-GCM".into())
        }));
        let (report, _) = schedule(&config(&[Test::CpuBench]), &mut mock);
        for f in Figure::CPU_BENCH {
            assert_eq!(
                report.problem(f),
                Some((true, "no AES-256-GCM".into())),
                "{f:?}"
            );
        }
        assert!(report.any_failed());
    }

    #[test]
    fn the_scheduler_runs_every_test_in_print_order() {
        let mut all = config(&Test::ALL);
        all.runs = 2;
        all.sync_jobs = vec![1, 2, 4, 8];
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        let (report, announced) = schedule(&all, &mut mock);
        // Every figure of a probe run (the network's are `net`'s), in print order.
        let probe: Vec<Figure> = Figure::ALL
            .into_iter()
            .filter(|f| {
                matches!(
                    f.group(),
                    crate::figure::Group::Pveperf | crate::figure::Group::Extended
                )
            })
            .collect();
        assert_eq!(announced, probe, "every figure, in print order");
        assert!(!report.any_failed(), "{report:?}");
        // pveperf drops the page cache before each disk test (reads, seeks,
        // fsyncs, each run) and the device jobs; the note is given once.
        let order = mock.order();
        assert_eq!(
            order,
            [
                "filesystem",
                "bogomips",
                "regex",
                "regex",
                "buffered_reads",
                "buffered_reads",
                "seek",
                "seek",
                "fsync",
                "fsync",
                "read_resolv_conf",
                "dns_ext",
                "dns_ext",
                "dns_int",
                "dns_int",
                "space",
                "seq_write",
                "device_job",
                "device_job",
                "device_job",
                "space",
                "write_jobs_file",
                "space",
                "mixed",
                "space",
                "sync_write",
                "space",
                "sync_write",
                "space",
                "sync_write",
                "space",
                "sync_write",
                "space",
                "sync_write",
                "space",
                "sustained",
                "cpu_bench",
            ]
        );
        assert_eq!(mock.count("drop_caches"), 2 + 2 + 2 + 3);
        assert_eq!(report.notes.len(), 1, "{:?}", report.notes);
        assert!(report.notes[0].starts_with("page cache not dropped (not root)"));
        // The job parameters come from the plan's table.
        let qd32 = report
            .extended
            .rand_read_qd32
            .as_ref()
            .and_then(Outcome::measured)
            .unwrap();
        assert_eq!(qd32.each[0].depth, JobParams::RAND_READ_4K_QD32.depth);
        let runs = report
            .extended
            .seq_write
            .as_ref()
            .unwrap()
            .measured()
            .unwrap();
        assert_eq!(runs.len() as u32, Test::Seqwrite.cost().writes);
        // SYNC WRITE 4K is judged (the stand-in's storage shows no disk),
        // and the scaling stops where the next step gains under 10%.
        let sync = report
            .extended
            .sync_write
            .as_ref()
            .unwrap()
            .measured()
            .unwrap();
        assert_eq!(sync.verdict.kind, VerdictKind::Unknown);
        assert_eq!(sync.verdict.reason, "no disk found behind ");
        let scaling = report.extended.scaling().unwrap();
        let jobs: Vec<u32> = scaling.steps.iter().map(|s| s.jobs).collect();
        assert_eq!(jobs, [1, 2, 4, 8]);
        assert_eq!(scaling.stops_at(crate::model::sync::SYNC_MIN_GAIN), Some(4));
    }

    #[test]
    fn a_later_run_that_fails_is_named_and_ends_the_test() {
        let mut three = config(&[Test::Fsync, Test::Cpu]);
        three.runs = 3;
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.fail = Some(("fsync", 2, || ProbeError::Unavailable("disk gone".into())));
        let (report, _) = schedule(&three, &mut mock);
        assert_eq!(
            report.problem(Figure::FsyncsPerSecond),
            Some((true, "run 2 of 3: disk gone".into()))
        );
        assert_eq!(mock.count("fsync"), 2, "no third run after a failure");
        assert!(report.any_failed());
        assert!(report.cpu_bogomips.as_ref().unwrap().measured().is_some());
    }

    #[test]
    fn preconditions_fail_a_test_before_it_writes() {
        // A read-only filesystem: no fsync loop runs.
        let mut ro = fs("/dev/sda1", "ext4");
        if let Outcome::Measured(f) = &mut ro {
            f.read_only = true;
        }
        let mut mock = Mock::new(ro);
        let (report, _) = schedule(&config(&[Test::Fsync, Test::Syncwrite]), &mut mock);
        assert_eq!(
            report.problem(Figure::FsyncsPerSecond),
            Some((true, "/var/lib/vz is on a read-only filesystem".into()))
        );
        assert!(report.problem(Figure::SyncWrite4k).unwrap().0);
        assert_eq!(mock.count("fsync") + mock.count("sync_write"), 0);

        // Too little space for SEQ WRITE's and MIXED's files: nothing written.
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.space.available = 512 << 20;
        let (report, _) = schedule(&config(&[Test::Seqwrite, Test::Mixed]), &mut mock);
        let (failed, why) = report.problem(Figure::SeqWrite).unwrap();
        assert!(failed);
        assert_eq!(
            why,
            "SEQ WRITE needs 1126 MiB free (the file and a margin), /var/lib/vz has 512 MiB; a smaller --write-size fits"
        );
        assert!(
            report
                .problem(Figure::Mixed)
                .unwrap()
                .1
                .starts_with("MIXED 70/30 needs")
        );
        assert_eq!(mock.count("seq_write") + mock.count("mixed"), 0);

        // Too little space for the scaling's largest step: the steps before
        // it are kept out too, and the failure names the step.
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.space.available = 512 << 20;
        let mut cfg = config(&[Test::Syncwrite]);
        cfg.sync_jobs = vec![1, 16];
        let (report, announced) = schedule(&cfg, &mut mock);
        assert!(
            report
                .extended
                .sync_write
                .as_ref()
                .unwrap()
                .measured()
                .is_some()
        );
        let (failed, why) = report.problem(Figure::SyncWritePeak).unwrap();
        assert!(failed);
        assert_eq!(
            why,
            "16 jobs: SYNC WRITE 4K with 16 jobs needs 1126 MiB free (the file and a margin), /var/lib/vz has 512 MiB; fewer --sync-jobs fit"
        );
        assert_eq!(mock.count("sync_write"), 2, "one job, then the scaling's 1");
        assert_eq!(
            &announced[1..],
            [
                Figure::SyncWrite4k,
                Figure::SyncWriteJobs,
                Figure::SyncWritePeak
            ]
        );
    }

    #[test]
    fn device_tests_skip_where_there_is_no_device() {
        let mut mock = Mock::new(fs("tmpfs", "tmpfs"));
        let tests = [Test::Read, Test::Seek, Test::Seqread, Test::Randread];
        let (report, announced) = schedule(&config(&tests), &mut mock);
        for f in [
            Figure::BufferedReads,
            Figure::AverageSeekTime,
            Figure::SeqReadDirect,
            Figure::RandRead4kQd1,
            Figure::RandRead4kQd32,
        ] {
            assert_eq!(
                report.problem(f),
                Some((false, "tmpfs (tmpfs) is not a block device".into())),
                "{f:?}"
            );
            assert!(announced.contains(&f));
        }
        assert!(!report.any_failed(), "skipped is no failure");
        assert_eq!(
            mock.count("buffered_reads") + mock.count("seek") + mock.count("device_job"),
            0
        );
        // An unknown filesystem: the device tests apply but cannot run.
        let mut mock = Mock::new(Outcome::Failed(String::new()));
        let (report, _) = schedule(&config(&[Test::Read]), &mut mock);
        assert!(report.problem(Figure::BufferedReads).unwrap().0);
    }

    #[test]
    fn an_interrupt_stops_the_run_and_nothing_after_it_runs() {
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.fail = Some(("fsync", 1, || ProbeError::Interrupted(15)));
        mock.left_behind = vec!["/var/lib/vz/pveprobe.x (Permission denied)".into()];
        let (report, announced) = schedule(&config(&Test::ALL), &mut mock);
        assert_eq!(report.interrupted_by, Some(15));
        assert_eq!(announced.last(), Some(&Figure::AverageSeekTime));
        assert_eq!(report.fsync, None, "the interrupted test has no outcome");
        assert_eq!(mock.calls.last().map(String::as_str), Some("fsync"));
        assert_eq!(report.left_behind, mock.left_behind);
        assert!(
            report
                .cleanup()
                .starts_with("stopped, but could not remove: ")
        );
    }

    #[test]
    fn dns_lines_follow_resolv_conf() {
        // No search domain: DNS INT does not apply.
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.resolv_conf = Some("nameserver 127.0.0.1\n".into());
        let (report, _) = schedule(&config(&[Test::Dns]), &mut mock);
        assert!(report.dns(Figure::DnsExt).is_some());
        assert_eq!(
            report.problem(Figure::DnsInt),
            Some((false, "no search domain in /etc/resolv.conf".into()))
        );
        assert_eq!(mock.count("dns_int"), 0);
        // No resolv.conf: both lines fail, nothing is asked.
        let mut mock = Mock::new(fs("/dev/sda1", "ext4"));
        mock.resolv_conf = None;
        let (report, announced) = schedule(&config(&[Test::Dns]), &mut mock);
        for f in [Figure::DnsExt, Figure::DnsInt] {
            let (failed, why) = report.problem(f).unwrap();
            assert!(
                failed && why.starts_with("cannot read /etc/resolv.conf"),
                "{why}"
            );
        }
        assert_eq!(announced, [Figure::HdSize, Figure::DnsExt, Figure::DnsInt]);
        assert_eq!(mock.count("dns_ext"), 0);
    }
}
