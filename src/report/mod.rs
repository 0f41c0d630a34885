//! What a probe run found, as plain data. Renderers (text, and later JSON
//! and CSV) read a [`Report`]; no probe knows how it is shown.

pub mod text;

use std::path::PathBuf;

use crate::probe::blockdev::{ReadFigure, SeekFigure};
use crate::probe::dns::DnsFigure;
use crate::probe::filesystem::FsInfo;
use crate::probe::fsync::FsyncFigure;
use crate::probe::regex::RegexFigure;

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

/// Everything one run measured. `None` marks a line that was not requested
/// (or not reached before an interrupt).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub path: PathBuf,
    pub cpu_bogomips: Option<Outcome<f64>>,
    pub regex: Option<Outcome<RegexFigure>>,
    pub filesystem: Option<Outcome<FsInfo>>,
    pub buffered_reads: Option<Outcome<ReadFigure>>,
    pub seek: Option<Outcome<SeekFigure>>,
    pub fsync: Option<Outcome<FsyncFigure>>,
    pub dns_ext: Option<Outcome<DnsFigure>>,
    pub dns_int: Option<Outcome<DnsFigure>>,
    /// Things the admin should know that belong to no single line.
    pub notes: Vec<String>,
    /// The signal that cut the run short, if one did.
    pub interrupted_by: Option<i32>,
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
        fn of<T>(o: &Option<Outcome<T>>) -> Option<(bool, &str)> {
            match o {
                Some(Outcome::Failed(why)) => Some((true, why)),
                Some(Outcome::Skipped(why)) => Some((false, why)),
                _ => None,
            }
        }
        match line {
            Line::CpuBogomips => of(&self.cpu_bogomips),
            Line::RegexPerSecond => of(&self.regex),
            Line::HdSize => of(&self.filesystem),
            Line::BufferedReads => of(&self.buffered_reads),
            Line::AverageSeekTime => of(&self.seek),
            Line::FsyncsPerSecond => of(&self.fsync),
            Line::DnsExt => of(&self.dns_ext),
            Line::DnsInt => of(&self.dns_int),
        }
    }

    /// True when a requested line that applies could not be measured.
    pub fn any_failed(&self) -> bool {
        let dns_dead = [&self.dns_ext, &self.dns_int].into_iter().any(|o| {
            o.as_ref()
                .and_then(Outcome::measured)
                .is_some_and(DnsFigure::no_answer)
        });
        dns_dead
            || Line::ALL
                .iter()
                .any(|l| self.problem(*l).is_some_and(|(failed, _)| failed))
    }
}
