//! What a probe run found, as plain data. Renderers (text, and later JSON
//! and CSV) read a [`Report`]; no probe knows how it is shown.

pub mod csv;
pub mod json;
pub mod text;
pub mod verbose;

use std::path::PathBuf;

use crate::extended::Extended;
use crate::probe::blockdev::{ReadFigure, SeekFigure};
use crate::probe::dns::DnsFigure;
use crate::probe::filesystem::FsInfo;
use crate::probe::fsync::FsyncFigure;
use crate::probe::hostinfo::HostInfo;
use crate::probe::regex::RegexFigure;
use crate::storage::Storage;

/// The eight pveperf lines, in pveperf's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Line {
    CpuBogomips,
    RegexPerSecond,
    HdSize,
    BufferedReads,
    AverageSeekTime,
    FsyncsPerSecond,
    DnsExt,
    DnsInt,
}

impl Line {
    pub const ALL: [Line; 8] = [
        Line::CpuBogomips,
        Line::RegexPerSecond,
        Line::HdSize,
        Line::BufferedReads,
        Line::AverageSeekTime,
        Line::FsyncsPerSecond,
        Line::DnsExt,
        Line::DnsInt,
    ];

    /// The key of the figure in JSON and the stem of its CSV column.
    pub fn key(self) -> &'static str {
        match self {
            Line::CpuBogomips => "cpu_bogomips",
            Line::RegexPerSecond => "regex_per_second",
            Line::HdSize => "hd_size",
            Line::BufferedReads => "buffered_reads",
            Line::AverageSeekTime => "average_seek_time",
            Line::FsyncsPerSecond => "fsyncs_per_second",
            Line::DnsExt => "dns_ext",
            Line::DnsInt => "dns_int",
        }
    }

    /// The unit of the figure (what pveperf prints as "GB" is GiB, "MB/sec" MiB/s).
    pub fn unit(self) -> &'static str {
        match self {
            Line::CpuBogomips => "bogomips",
            Line::RegexPerSecond => "iterations/3s",
            Line::HdSize => "GiB",
            Line::BufferedReads => "MiB/s",
            Line::AverageSeekTime => "ms",
            Line::FsyncsPerSecond => "1/s",
            Line::DnsExt | Line::DnsInt => "ms",
        }
    }

    /// Which way is better, for comparisons; `None` for HD SIZE, which is no performance figure.
    pub fn higher_is_better(self) -> Option<bool> {
        match self {
            Line::CpuBogomips
            | Line::RegexPerSecond
            | Line::BufferedReads
            | Line::FsyncsPerSecond => Some(true),
            Line::AverageSeekTime | Line::DnsExt | Line::DnsInt => Some(false),
            Line::HdSize => None,
        }
    }

    /// The line whose JSON key is `key`.
    pub fn from_key(key: &str) -> Option<Line> {
        Line::ALL.into_iter().find(|l| l.key() == key)
    }

    /// The label as pveperf prints it, without the colon and padding.
    pub fn label(self) -> &'static str {
        match self {
            Line::CpuBogomips => "CPU BOGOMIPS",
            Line::RegexPerSecond => "REGEX/SECOND",
            Line::HdSize => "HD SIZE",
            Line::BufferedReads => "BUFFERED READS",
            Line::AverageSeekTime => "AVERAGE SEEK TIME",
            Line::FsyncsPerSecond => "FSYNCS/SECOND",
            Line::DnsExt => "DNS EXT",
            Line::DnsInt => "DNS INT",
        }
    }
}

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

    fn reason(&self) -> &str {
        match self {
            Outcome::Measured(()) => "",
            Outcome::Skipped(why) | Outcome::Failed(why) => why,
        }
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
    crate::probe::fsync::Order::WriteThenFsync
        .name()
        .to_string()
}

fn bounded() -> String {
    crate::probe::dns::Schedule::Bounded.name().to_string()
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
        if self.each.is_empty() {
            return 0.0;
        }
        self.each.iter().map(Sample::value).sum::<f64>() / self.each.len() as f64
    }
}

/// Median, extremes and count of a figure's samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

impl Stats {
    pub fn of(values: &[f64]) -> Option<Stats> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[mid]
        } else {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        };
        Some(Stats {
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            count: sorted.len(),
        })
    }

    /// (max - min) / median: how far the runs lie apart, relative to the figure.
    pub fn spread(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs()
        }
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
    /// How long the run waited for another probe on this host first.
    pub waited_for_probe: Option<Waited>,
}

impl Report {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            ..Self::default()
        }
    }

    /// The reason a line has no figure, with whether that is a failure.
    pub fn problem(&self, line: Line) -> Option<(bool, &str)> {
        match line {
            Line::CpuBogomips => Outcome::problem_of(&self.cpu_bogomips),
            Line::RegexPerSecond => Outcome::problem_of(&self.regex),
            Line::HdSize => Outcome::problem_of(&self.filesystem),
            Line::BufferedReads => Outcome::problem_of(&self.buffered_reads),
            Line::AverageSeekTime => Outcome::problem_of(&self.seek),
            Line::FsyncsPerSecond => Outcome::problem_of(&self.fsync),
            Line::DnsExt => Outcome::problem_of(&self.dns_ext),
            Line::DnsInt => Outcome::problem_of(&self.dns_int),
        }
    }

    /// The DNS runs of a DNS line.
    pub fn dns(&self, line: Line) -> Option<&[DnsFigure]> {
        let outcome = match line {
            Line::DnsExt => &self.dns_ext,
            Line::DnsInt => &self.dns_int,
            _ => return None,
        };
        outcome
            .as_ref()
            .and_then(Outcome::measured)
            .map(Vec::as_slice)
    }

    /// True when no run of a DNS line got any answer: it has no figure.
    pub fn dns_dead(&self, line: Line) -> bool {
        self.dns(line)
            .is_some_and(|runs| runs.iter().all(DnsFigure::no_answer))
    }

    /// The samples of a line, one per run (one for CPU BOGOMIPS and HD SIZE);
    /// `None` when the line has no figure.
    pub fn samples(&self, line: Line) -> Option<Vec<f64>> {
        fn of<T: Sample>(o: &Option<Outcome<Vec<T>>>) -> Option<Vec<f64>> {
            let runs = o.as_ref()?.measured()?;
            (!runs.is_empty()).then(|| runs.iter().map(Sample::value).collect())
        }
        match line {
            Line::CpuBogomips => self.cpu_bogomips.as_ref()?.measured().map(|v| vec![*v]),
            Line::RegexPerSecond => of(&self.regex),
            Line::HdSize => self
                .filesystem
                .as_ref()?
                .measured()
                .map(|f| vec![f.size_gib()]),
            Line::BufferedReads => of(&self.buffered_reads),
            Line::AverageSeekTime => of(&self.seek),
            Line::FsyncsPerSecond => of(&self.fsync),
            Line::DnsExt | Line::DnsInt if self.dns_dead(line) => None,
            Line::DnsExt => of(&self.dns_ext),
            Line::DnsInt => of(&self.dns_int),
        }
    }

    /// The devices a device line read (those of its first run) and whether
    /// the line names them (they are not the source itself).
    pub fn devices(&self, line: Line) -> Option<(Vec<&std::path::Path>, bool)> {
        fn of<T>(
            o: &Option<Outcome<Vec<Devices<T>>>>,
            path: fn(&T) -> &std::path::Path,
        ) -> Option<(Vec<&std::path::Path>, bool)> {
            let first = o.as_ref()?.measured()?.first()?;
            Some((first.each.iter().map(path).collect(), first.named))
        }
        match line {
            Line::BufferedReads => of(&self.buffered_reads, |r| r.device.as_path()),
            Line::AverageSeekTime => of(&self.seek, |s| s.device.as_path()),
            _ => None,
        }
    }

    /// The statistics of a line's samples.
    pub fn stats(&self, line: Line) -> Option<Stats> {
        Stats::of(&self.samples(line)?)
    }

    /// True when a requested line that applies could not be measured.
    pub fn any_failed(&self) -> bool {
        let dns_dead = [Line::DnsExt, Line::DnsInt]
            .into_iter()
            .any(|l| self.dns_dead(l));
        self.extended.any_failed()
            || dns_dead
            || Line::ALL
                .iter()
                .any(|l| self.problem(*l).is_some_and(|(failed, _)| failed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_odd_and_even_sample_counts() {
        let s = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.count), (2.0, 1.0, 3.0, 3));
        assert_eq!(s.spread(), 1.0);
        let s = Stats::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!(Stats::of(&[]).is_none());
        assert_eq!(Stats::of(&[0.0]).unwrap().spread(), 0.0);
    }

    #[test]
    fn keys_round_trip() {
        for line in Line::ALL {
            assert_eq!(Line::from_key(line.key()), Some(line));
        }
        assert_eq!(Line::from_key("nope"), None);
    }
}
