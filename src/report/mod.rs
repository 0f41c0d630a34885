//! What a probe run found, as plain data. The renderers (`text`, `json`,
//! `csv`, `verbose`) read a [`Report`]; no probe knows how it is shown, and
//! what each figure is (key, label, unit, direction) comes from
//! [`crate::figure`].

pub mod csv;
pub mod json;
pub mod metrics;
pub mod storages;
pub mod text;
pub mod verbose;

use std::path::PathBuf;

pub use crate::figure::Figure;
use crate::model::blockdev::{ReadFigure, SeekFigure};
use crate::model::cpubench::{CpuBench, CpuOp, CpuOpFigure};
use crate::model::dns::{DnsFigure, Schedule};
use crate::model::filesystem::FsInfo;
use crate::model::fsync::{FsyncFigure, Order};
use crate::model::host::HostInfo;
use crate::model::io::{IoStats, MixedFigure, SeqWriteFigure};
use crate::model::pve::PveTarget;
use crate::model::regex::RegexFigure;
use crate::model::storage::Storage;
use crate::model::sustained::SustainedFigure;
use crate::model::sync::{SyncResult, SyncScaling};
use crate::stats::Stats;
pub use storages::table as storages_table;

/// The result of one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    Measured(T),
    /// Does not apply here, as pveperf would omit it (a source that is not
    /// a block device, no search domain). Not an error.
    Skipped(String),
    /// Applies but could not be measured; the run exits with status 1.
    Failed(String),
}

impl<T> Outcome<T> {
    pub fn measured(&self) -> Option<&T> {
        match self {
            Outcome::Measured(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed(_))
    }

    /// Why a requested line has no figure, and whether that is a failure.
    pub fn problem_of(outcome: &Option<Outcome<T>>) -> Option<(bool, &str)> {
        match outcome {
            Some(Outcome::Failed(why)) => Some((true, why)),
            Some(Outcome::Skipped(why)) => Some((false, why)),
            _ => None,
        }
    }
}

impl Outcome<()> {
    /// A figure-less outcome (skipped or failed) for a line of another type.
    pub fn retype<T>(&self) -> Outcome<T> {
        match self {
            Outcome::Measured(()) | Outcome::Skipped(_) => {
                Outcome::Skipped(self.reason().to_string())
            }
            Outcome::Failed(why) => Outcome::Failed(why.clone()),
        }
    }

    /// Why there is no figure (empty for a measured one).
    pub fn reason(&self) -> &str {
        match self {
            Outcome::Measured(()) => "",
            Outcome::Skipped(why) | Outcome::Failed(why) => why,
        }
    }
}

/// What a probe run writes, in every format: the report and its JSON
/// form, made once. Text is pveperf's lines (unless they went to stdout
/// as they were measured) and `-v`'s details; JSON, CSV and the metrics
/// formats (`influx`, `prometheus`) come from the JSON form.
#[derive(Debug)]
pub struct Document<'a> {
    pub report: &'a Report,
    pub json: json::JsonReport,
    /// `-v`: the details after the lines.
    pub verbose: bool,
    /// The lines are on stdout already: the text is the rest.
    pub lines_printed: bool,
    /// CSV: the header too (not when adding a row under it).
    pub csv_header: bool,
}

impl<'a> Document<'a> {
    pub fn new(report: &'a Report) -> Self {
        Document {
            report,
            json: json::JsonReport::from_report(report),
            verbose: false,
            lines_printed: false,
            csv_header: true,
        }
    }
}

impl serde::Serialize for Document<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl crate::output::Render for Document<'_> {
    fn text(&self) -> String {
        let mut out = if self.lines_printed {
            String::new()
        } else {
            text::render(self.report)
        };
        if self.verbose {
            out.push_str(&verbose::render(&self.json));
        }
        out
    }

    fn csv(&self) -> String {
        csv::render(&self.json, self.csv_header)
    }

    /// The run's result, named by the host it records.
    fn metrics(&self, format: crate::output::Format) -> String {
        metrics::render(format, &[metrics::Measured::of(&self.json)])
    }
}

/// The options and methods that shape the figures, recorded with them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    pub duration_s: f64,
    pub runs: u32,
    pub regex_engine: String,
    pub dns_timeout_s: f64,
    /// FSYNCS/SECOND's order of system calls: `pveperf` (open, fsync,
    /// write, close). Results written before it was recorded synced after
    /// writing: they read as `write-then-fsync`.
    #[serde(default = "write_then_fsync")]
    pub fsync_order: String,
    /// How the DNS lines wait for answers: `bounded` (each server in turn
    /// for at most --dns-timeout) or `pveperf` (Net::DNS's schedule with
    /// pveperf's arguments). Older results read as `bounded`.
    #[serde(default = "bounded")]
    pub dns_schedule: String,
}

fn write_then_fsync() -> String {
    Order::WriteThenFsync.name().to_string()
}

fn bounded() -> String {
    Schedule::Bounded.name().to_string()
}

/// A wait for another probe on the same host before measuring (see
/// `lock`), as JSON records it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Waited {
    pub seconds: f64,
    /// The probe that held the lock, as it described itself.
    pub holder: String,
}

/// One measurement of a timed test, reduced to the number its line prints.
pub trait Sample {
    fn value(&self) -> f64;
}

impl Sample for RegexFigure {
    fn value(&self) -> f64 {
        self.per_pveperf_window() as f64
    }
}

impl Sample for ReadFigure {
    fn value(&self) -> f64 {
        self.mib_per_sec()
    }
}

impl Sample for SeekFigure {
    fn value(&self) -> f64 {
        self.mean_ms()
    }
}

impl Sample for FsyncFigure {
    fn value(&self) -> f64 {
        self.per_sec()
    }
}

impl Sample for SeqWriteFigure {
    fn value(&self) -> f64 {
        self.mib_per_sec()
    }
}

impl Sample for DnsFigure {
    fn value(&self) -> f64 {
        self.mean_ms()
    }
}

/// One run of a device test over one or more devices (a ZFS pool's data
/// disks are read in turn); the sample is the mean over the devices.
#[derive(Debug, Clone, PartialEq)]
pub struct Devices<T> {
    pub each: Vec<T>,
    /// True when the devices are not the filesystem's source itself, so the
    /// line names them: `BUFFERED READS:    512.34 MB/sec (sda, sdb)`.
    pub named: bool,
}

impl<T: Sample> Sample for Devices<T> {
    fn value(&self) -> f64 {
        let values: Vec<f64> = self.each.iter().map(Sample::value).collect();
        crate::stats::mean(&values).unwrap_or(0.0)
    }
}

/// Everything one run measured. `None` marks a line that was not requested
/// (or not reached before an interrupt). Timed tests hold one sample per run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub path: PathBuf,
    pub cpu_bogomips: Option<Outcome<f64>>,
    pub regex: Option<Outcome<Vec<RegexFigure>>>,
    pub filesystem: Option<Outcome<FsInfo>>,
    pub buffered_reads: Option<Outcome<Vec<Devices<ReadFigure>>>>,
    pub seek: Option<Outcome<Vec<Devices<SeekFigure>>>>,
    pub fsync: Option<Outcome<Vec<FsyncFigure>>>,
    pub dns_ext: Option<Outcome<Vec<DnsFigure>>>,
    pub dns_int: Option<Outcome<Vec<DnsFigure>>>,
    /// Things the admin should know that belong to no single line.
    pub notes: Vec<String>,
    /// How the run was made.
    pub settings: Settings,
    /// When the run started.
    pub started: Option<jiff::Timestamp>,
    /// What was measured: the host's fingerprint.
    pub host: Option<HostInfo>,
    /// What stands behind PATH: layers, disks, controllers, ZFS.
    pub storage: Option<Storage>,
    /// The `-x` figures.
    pub extended: Extended,
    /// The signal that cut the run short, if one did.
    pub interrupted_by: Option<i32>,
    /// What the run made and could not remove, with why.
    pub left_behind: Vec<String>,
    /// How long the run waited for another probe on this host first.
    pub waited_for_probe: Option<Waited>,
    /// `--storage`: the PVE storage measured, and how.
    pub pve_storage: Option<PveTarget>,
}

impl Report {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            ..Self::default()
        }
    }

    /// The reason a figure is missing, with whether that is a failure.
    pub fn problem(&self, figure: Figure) -> Option<(bool, &str)> {
        match figure {
            Figure::CpuBogomips => Outcome::problem_of(&self.cpu_bogomips),
            Figure::RegexPerSecond => Outcome::problem_of(&self.regex),
            Figure::HdSize => Outcome::problem_of(&self.filesystem),
            Figure::BufferedReads => Outcome::problem_of(&self.buffered_reads),
            Figure::AverageSeekTime => Outcome::problem_of(&self.seek),
            Figure::FsyncsPerSecond => Outcome::problem_of(&self.fsync),
            Figure::DnsExt => Outcome::problem_of(&self.dns_ext),
            Figure::DnsInt => Outcome::problem_of(&self.dns_int),
            x => self.extended.problem(x),
        }
    }

    /// The DNS runs of a DNS line.
    pub fn dns(&self, line: Figure) -> Option<&[DnsFigure]> {
        let outcome = match line {
            Figure::DnsExt => &self.dns_ext,
            Figure::DnsInt => &self.dns_int,
            _ => return None,
        };
        outcome
            .as_ref()
            .and_then(Outcome::measured)
            .map(Vec::as_slice)
    }

    /// True when no run of a DNS line got any answer: it has no figure.
    pub fn dns_dead(&self, line: Figure) -> bool {
        self.dns(line)
            .is_some_and(|runs| runs.iter().all(DnsFigure::no_answer))
    }

    /// The samples of a figure, one per run (one for CPU BOGOMIPS, HD SIZE
    /// and the extended figures but SEQ WRITE); `None` when it has none.
    pub fn samples(&self, line: Figure) -> Option<Vec<f64>> {
        fn of<T: Sample>(o: &Option<Outcome<Vec<T>>>) -> Option<Vec<f64>> {
            let runs = o.as_ref()?.measured()?;
            (!runs.is_empty()).then(|| runs.iter().map(Sample::value).collect())
        }
        match line {
            Figure::CpuBogomips => self.cpu_bogomips.as_ref()?.measured().map(|v| vec![*v]),
            Figure::RegexPerSecond => of(&self.regex),
            Figure::HdSize => self
                .filesystem
                .as_ref()?
                .measured()
                .map(|f| vec![f.size_gib()]),
            Figure::BufferedReads => of(&self.buffered_reads),
            Figure::AverageSeekTime => of(&self.seek),
            Figure::FsyncsPerSecond => of(&self.fsync),
            Figure::DnsExt | Figure::DnsInt if self.dns_dead(line) => None,
            Figure::DnsExt => of(&self.dns_ext),
            Figure::DnsInt => of(&self.dns_int),
            Figure::SeqWrite => of(&self.extended.seq_write),
            x => self.extended.value(x).map(|v| vec![v]),
        }
    }

    /// The devices a device line read (those of its first run) and whether
    /// the line names them (they are not the source itself).
    pub fn devices(&self, line: Figure) -> Option<(Vec<&std::path::Path>, bool)> {
        fn of<T>(
            o: &Option<Outcome<Vec<Devices<T>>>>,
            path: fn(&T) -> &std::path::Path,
        ) -> Option<(Vec<&std::path::Path>, bool)> {
            let first = o.as_ref()?.measured()?.first()?;
            Some((first.each.iter().map(path).collect(), first.named))
        }
        match line {
            Figure::BufferedReads => of(&self.buffered_reads, |r| r.device.as_path()),
            Figure::AverageSeekTime => of(&self.seek, |s| s.device.as_path()),
            _ => None,
        }
    }

    /// The statistics of a line's samples.
    pub fn stats(&self, line: Figure) -> Option<Stats> {
        Stats::of(&self.samples(line)?)
    }

    /// True when the run measured a `--storage` scratch volume's device.
    pub fn on_volume(&self) -> bool {
        self.filesystem
            .as_ref()
            .and_then(Outcome::measured)
            .is_some_and(|f| f.fstype == crate::model::filesystem::VOLUME)
    }

    /// How an interrupted run ends its message: the files were removed, or
    /// what is left and where.
    pub fn cleanup(&self) -> String {
        if self.left_behind.is_empty() {
            "stopped and removed the files it made".into()
        } else {
            format!(
                "stopped, but could not remove: {}",
                self.left_behind.join("; ")
            )
        }
    }

    /// True when a requested figure that applies could not be measured.
    pub fn any_failed(&self) -> bool {
        let dns_dead = [Figure::DnsExt, Figure::DnsInt]
            .into_iter()
            .any(|l| self.dns_dead(l));
        dns_dead
            || Figure::ALL
                .iter()
                .any(|f| self.problem(*f).is_some_and(|(failed, _)| failed))
    }
}

/// The `-x` figures. `None` marks a figure that was not requested.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extended {
    pub seq_write: Option<Outcome<Vec<SeqWriteFigure>>>,
    pub seq_read: Option<Outcome<Devices<IoStats>>>,
    pub rand_read_qd1: Option<Outcome<Devices<IoStats>>>,
    pub rand_read_qd32: Option<Outcome<Devices<IoStats>>>,
    /// RANDOM WRITE 4K QD1 and QD32: on a scratch volume's device, or on
    /// a file in PATH (one "device", not named).
    pub rand_write_qd1: Option<Outcome<Devices<IoStats>>>,
    pub rand_write_qd32: Option<Outcome<Devices<IoStats>>>,
    pub mixed: Option<Outcome<MixedFigure>>,
    /// SYNC WRITE 4K, one job, judged.
    pub sync_write: Option<Outcome<SyncResult>>,
    /// `--sync-jobs`: SYNC WRITE 4K JOBS and PEAK.
    pub sync_scaling: Option<Outcome<SyncScaling>>,
    /// PBS's CPU figures (SHA256 to VERIFY).
    pub cpu_bench: Option<Outcome<CpuBench>>,
    /// `--sustained`: SUSTAINED WRITE.
    pub sustained: Option<Outcome<SustainedFigure>>,
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    crate::stats::mean(&values.collect::<Vec<_>>()).unwrap_or(0.0)
}

impl Extended {
    /// Why an extended figure is missing, with whether that is a failure.
    pub fn problem(&self, figure: Figure) -> Option<(bool, &str)> {
        match figure {
            Figure::SeqWrite => Outcome::problem_of(&self.seq_write),
            Figure::Mixed => Outcome::problem_of(&self.mixed),
            Figure::SyncWrite4k => Outcome::problem_of(&self.sync_write),
            Figure::SyncWriteJobs | Figure::SyncWritePeak => {
                Outcome::problem_of(&self.sync_scaling)
            }
            _ if Figure::CPU_BENCH.contains(&figure) => Outcome::problem_of(&self.cpu_bench),
            Figure::SustainedWrite => Outcome::problem_of(&self.sustained),
            _ => Outcome::problem_of(self.device_outcome(figure)?),
        }
    }

    fn device_outcome(&self, figure: Figure) -> Option<&Option<Outcome<Devices<IoStats>>>> {
        match figure {
            Figure::SeqReadDirect => Some(&self.seq_read),
            Figure::RandRead4kQd1 => Some(&self.rand_read_qd1),
            Figure::RandRead4kQd32 => Some(&self.rand_read_qd32),
            Figure::RandWrite4kQd1 => Some(&self.rand_write_qd1),
            Figure::RandWrite4kQd32 => Some(&self.rand_write_qd32),
            _ => None,
        }
    }

    /// A CPU figure, where it was measured.
    pub fn cpu(&self, figure: Figure) -> Option<&CpuOpFigure> {
        let op = CpuOp::ALL[Figure::CPU_BENCH.iter().position(|f| *f == figure)?];
        self.cpu_bench.as_ref()?.measured()?.get(op)
    }

    /// `--sync-jobs`'s steps, where they were measured.
    pub fn scaling(&self) -> Option<&SyncScaling> {
        self.sync_scaling.as_ref()?.measured()
    }

    /// The runs of a device test (the devices read in turn).
    pub fn devices(&self, figure: Figure) -> Option<&Devices<IoStats>> {
        self.device_outcome(figure)?
            .as_ref()
            .and_then(Outcome::measured)
    }

    /// The number a figure stands for (MiB/s, read IOPS, p99 ms): for a
    /// device test the mean over the devices read.
    pub fn value(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::SeqWrite => {
                let runs = self.seq_write.as_ref()?.measured()?;
                let samples: Vec<f64> = runs.iter().map(Sample::value).collect();
                figure.spec().runs.of(&samples)
            }
            Figure::Mixed => Some(self.mixed.as_ref()?.measured()?.stats.read_iops()),
            Figure::SyncWrite4k => Some(self.sync_write.as_ref()?.measured()?.figure.iops()),
            Figure::SyncWritePeak => Some(self.scaling()?.peak()?.iops()),
            // Measured once per count of jobs: no single value.
            Figure::SyncWriteJobs => None,
            _ if Figure::CPU_BENCH.contains(&figure) => Some(self.cpu(figure)?.mb_per_s()),
            Figure::SustainedWrite => Some(self.sustained.as_ref()?.measured()?.mean()),
            Figure::RandWrite4kQd1 | Figure::RandWrite4kQd32 => Some(mean(
                self.devices(figure)?.each.iter().map(IoStats::write_iops),
            )),
            Figure::SeqReadDirect => Some(mean(
                self.devices(figure)?
                    .each
                    .iter()
                    .map(IoStats::read_mib_per_sec),
            )),
            _ => Some(mean(
                self.devices(figure)?.each.iter().map(IoStats::read_iops),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_figures_and_pbs_operations_are_in_the_same_order() {
        let squash = |s: &str| s.replace('_', "");
        for (f, op) in Figure::CPU_BENCH.into_iter().zip(CpuOp::ALL) {
            assert!(
                squash(f.key()).ends_with(&squash(op.pbs_key())),
                "{f:?} {op:?}"
            );
        }
    }
}
