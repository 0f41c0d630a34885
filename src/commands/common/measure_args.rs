//! The measurement options: what a probe measures and how. Declared once,
//! with their defaults, and flattened into the probe's options and into
//! `pveprobe cluster`'s, which forwards to every node those the admin gave
//! ([`Forwarded`]), as typed, so each node applies its own defaults.

use std::ffi::OsStr;
use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args, FromArgMatches};

use crate::measure::engine::EngineChoice;
use crate::measure::plan::CPU_THREADS_MAX;
use crate::measure::plan::Test;
use crate::model::choice::Choice;
use crate::model::dns::Schedule;
use crate::model::regex::RegexEngine;
use crate::model::sync::SyncMode;
use crate::sys::host::ETC_RESOLV_CONF;
use pveprobe_parse::units::{self, UnitError};

#[derive(Debug, Clone, PartialEq, Args)]
pub struct MeasureArgs {
    /// Length of each timed test in seconds; REGEX/SECOND is scaled to 3 s
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = parse_seconds)]
    pub duration: f64,

    /// Comma-separated tests to run, by default all but the extended (HD SIZE
    /// is always printed)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parser::<Test>())]
    pub tests: Vec<Test>,

    /// Regex engine for REGEX/SECOND [default: perl, pveperf's own loop
    /// on pveperf's scale; rust where perl is missing, and stderr says
    /// that figure is 3 to 7 times pveperf's]
    #[arg(long, value_name = "ENGINE", value_parser = parser::<RegexEngine>())]
    pub regex_engine: Option<RegexEngine>,

    /// Read name servers and the search domain from FILE
    #[arg(long, value_name = "FILE", default_value = ETC_RESOLV_CONF)]
    pub resolv_conf: PathBuf,

    /// Longest wait for one DNS answer, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = parse_seconds)]
    pub dns_timeout: f64,

    /// How a DNS query waits for its answer: bounded (each server in turn
    /// for at most --dns-timeout; a line lasts at most its window plus one
    /// --dns-timeout) or pveperf (Net::DNS's schedule with pveperf's
    /// arguments: one second per query shared by every nameserver line,
    /// and DNS INT only from a `search` line with exactly one domain)
    #[arg(long, value_name = "SCHEDULE", value_parser = parser::<Schedule>(), default_value = Schedule::Bounded.name())]
    pub dns_schedule: Schedule,

    /// Run each timed test N times; lines print the median
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,

    /// Do not record per-operation latency (to measure what recording costs)
    #[arg(long)]
    pub no_latency: bool,

    /// Also run the extended tests: SEQ WRITE, SEQ READ DIRECT, RANDOM READ 4K
    /// QD1 and QD32, MIXED 70/30 4K QD16, SYNC WRITE 4K
    #[arg(short = 'x', long)]
    pub extended: bool,

    /// Bytes SEQ WRITE writes per run (three runs) and the size of MIXED's
    /// and RANDOM WRITE's test file, e.g. 1G, 256M [default: 1G; a
    /// --storage scratch volume: 4G]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub write_size: Option<u64>,

    /// SEQ WRITE writes zeros like dd if=/dev/zero (compressing filesystems
    /// then measure the CPU)
    #[arg(long)]
    pub zero_data: bool,

    /// I/O engine of the extended device and file tests
    #[arg(long, value_name = "ENGINE", value_parser = parser::<EngineChoice>(), default_value = EngineChoice::Auto.name())]
    pub io_engine: EngineChoice,

    /// How SYNC WRITE 4K makes each write durable
    #[arg(long, value_name = "MODE", value_parser = parser::<SyncMode>(), default_value = SyncMode::Fdatasync.name())]
    pub sync_mode: SyncMode,

    /// SYNC WRITE 4K's scaling: run it with each count of jobs, e.g.
    /// 1,2,4,8,16 (each job a thread with its own file; loads the host for
    /// one window per count; implies the syncwrite test)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=64))]
    pub sync_jobs: Vec<u32>,

    /// Whether the disks have power-loss protection, for SYNC WRITE 4K's
    /// reference band (Linux does not tell; default: a table of models)
    #[arg(long, value_name = "yes|no", value_parser = parse_yes_no)]
    pub plp: Option<bool>,

    /// Also run the CPU figures on N threads at once, or on every CPU the
    /// probe may use (all): MB/s in total and per thread, and the scaling
    /// against N times one thread. Takes that much CPU from running guests
    /// for about 7 s; implies the cpu-bench test
    #[arg(long, value_name = "N|all", value_parser = parse_cpu_threads)]
    pub cpu_threads: Option<CpuThreadsArg>,

    /// SUSTAINED WRITE for SECS seconds: 1 MiB O_DIRECT writes cycling
    /// over a file of --write-size (default 8G), throughput per second
    /// (finds caches that run out). It loads the host and wears SSDs:
    /// off by default; implies the sustained test
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub sustained: Option<f64>,

    /// Measure the Proxmox VE storage ID (of /etc/pve/storage.cfg) instead
    /// of PATH: a directory storage in its directory, a volume storage
    /// (LVM-thin, LVM, ZFS, RBD) through a scratch volume that pvesm
    /// allocates, prefills and frees; `all`: every storage of this node in
    /// turn (`pveprobe storages` lists them and how each is measured)
    #[arg(long, value_name = "ID|all")]
    pub storage: Option<String>,
}

/// `--write-size`'s default for files.
pub const WRITE_SIZE: u64 = 1 << 30;
/// `--write-size`'s default for a `--storage` scratch volume.
pub const VOLUME_SIZE: u64 = 4 << 30;

/// `--cpu-threads`: a count, or every CPU this process may run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuThreadsArg {
    Count(u32),
    All,
}

impl CpuThreadsArg {
    /// The count: `all` is what the kernel lets this process use
    /// (its CPU affinity and cgroup quota).
    pub fn count(self) -> u32 {
        match self {
            CpuThreadsArg::Count(n) => n,
            CpuThreadsArg::All => (crate::sys::cpus::usable() as u32).min(CPU_THREADS_MAX),
        }
    }
}

/// `all`, or a count from 1 to [`CPU_THREADS_MAX`].
fn parse_cpu_threads(text: &str) -> Result<CpuThreadsArg, String> {
    if text == "all" {
        return Ok(CpuThreadsArg::All);
    }
    match text.parse::<u32>() {
        Ok(n) if (1..=CPU_THREADS_MAX).contains(&n) => Ok(CpuThreadsArg::Count(n)),
        _ => Err(format!(
            "{text:?} is neither all nor a count of threads from 1 to {CPU_THREADS_MAX}"
        )),
    }
}

/// `yes` or `no`.
fn parse_yes_no(text: &str) -> Result<bool, String> {
    match text {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("{text:?} is neither yes nor no")),
    }
}

/// The measurement options of `pveprobe cluster`: their values (defaults
/// included, for the timeout estimate) and those the admin typed, as
/// typed, for the nodes.
#[derive(Debug, Clone)]
pub struct Forwarded {
    pub measure: MeasureArgs,
    given: Vec<Given>,
}

/// One option given on the command line, as pveprobe's arguments.
#[derive(Debug, Clone, PartialEq)]
struct Given {
    id: clap::Id,
    words: Vec<String>,
}

impl Forwarded {
    /// The options the admin gave, as pveprobe's arguments: `--long VALUE`
    /// (`--long=VALUE` for a value that starts with `-`), several values of
    /// a comma-separated option joined by commas, a flag alone.
    pub fn argv(&self) -> Vec<String> {
        self.given.iter().flat_map(|g| g.words.clone()).collect()
    }
}

/// The measurement options `matches` holds from the command line (not from
/// defaults), in [`MeasureArgs`]'s order. Every option of `MeasureArgs` is
/// found here, so a new one travels without more code.
fn given(matches: &ArgMatches) -> Result<Vec<Given>, clap::Error> {
    let cmd = MeasureArgs::augment_args(clap::Command::new("measure"));
    let mut given = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let long = arg
            .get_long()
            .expect("every measurement option has a long name");
        let flag = format!("--{long}");
        let words = match arg.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => vec![flag],
            ArgAction::Count => vec![flag; usize::from(matches.get_count(id))],
            _ => {
                let values = matches
                    .get_raw(id)
                    .into_iter()
                    .flatten()
                    .map(|value| utf8(&flag, value))
                    .collect::<Result<Vec<&str>, _>>()?;
                match arg.get_value_delimiter() {
                    Some(delimiter) => with_value(&flag, &values.join(&delimiter.to_string())),
                    None => values.iter().flat_map(|v| with_value(&flag, v)).collect(),
                }
            }
        };
        given.push(Given {
            id: arg.get_id().clone(),
            words,
        });
    }
    Ok(given)
}

/// `--long VALUE`, or `--long=VALUE` where VALUE would read as an option.
fn with_value(flag: &str, value: &str) -> Vec<String> {
    if value.starts_with('-') {
        vec![format!("{flag}={value}")]
    } else {
        vec![flag.to_string(), value.to_string()]
    }
}

/// A value that can travel in the nodes' command line, which is text.
fn utf8<'a>(flag: &str, value: &'a OsStr) -> Result<&'a str, clap::Error> {
    value.to_str().ok_or_else(|| {
        clap::Error::raw(
            ErrorKind::InvalidUtf8,
            format!(
                "the value of {flag} ({}) is not UTF-8: the command line the nodes run is text",
                value.to_string_lossy()
            ),
        )
    })
}

impl FromArgMatches for Forwarded {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        // First: MeasureArgs takes the values out of `matches`.
        let given = given(matches)?;
        let measure = MeasureArgs::from_arg_matches_mut(matches)?;
        Ok(Forwarded { measure, given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.update_from_arg_matches_mut(&mut matches.clone())
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        let newly = given(matches)?;
        // clap's update sets every option `matches` holds, defaults
        // included; the others keep their values, and so their words.
        self.given
            .retain(|old| !matches.contains_id(old.id.as_str()));
        self.measure.update_from_arg_matches_mut(matches)?;
        self.given.extend(newly);
        Ok(())
    }
}

impl Args for Forwarded {
    fn group_id() -> Option<clap::Id> {
        MeasureArgs::group_id()
    }

    fn augment_args(cmd: clap::Command) -> clap::Command {
        nodes_defaults(MeasureArgs::augment_args(cmd))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        nodes_defaults(MeasureArgs::augment_args_for_update(cmd))
    }
}

/// Help says "[node's default: X]" instead of "[default: X]": what is not
/// given does not travel, and each node applies its own.
fn nodes_defaults(mut cmd: clap::Command) -> clap::Command {
    let measure = MeasureArgs::augment_args(clap::Command::new("measure"));
    for arg in measure.get_arguments() {
        let defaults = arg.get_default_values();
        if defaults.is_empty() || !arg.get_action().takes_values() {
            continue;
        }
        let shown: Vec<_> = defaults.iter().map(|d| d.to_string_lossy()).collect();
        let label = format!("[node's default: {}]", shown.join(","));
        let help = arg.get_help().map(|h| format!("{h} {label}"));
        let long_help = arg.get_long_help().map(|h| format!("{h}\n\n{label}"));
        cmd = cmd.mut_arg(arg.get_id(), |mut a| {
            a = a.hide_default_value(true);
            if let Some(help) = help {
                a = a.help(help);
            }
            if let Some(long_help) = long_help {
                a = a.long_help(long_help);
            }
            a
        });
    }
    cmd
}

/// clap's parser of a [`Choice`]: its names, each with its help, and
/// back to the value.
pub(crate) fn parser<T: Choice + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|&value| {
        let possible = PossibleValue::new(value.name());
        match value.help() {
            "" => possible,
            help => possible.help(help),
        }
    }))
    .map(|name: String| {
        *T::ALL
            .iter()
            .find(|value| value.name() == name)
            .expect("clap accepts only the possible values")
    })
}

/// A measurement's window or length: from 10 ms to an hour.
/// `--tolerance`: a percentage between 0 and 1000.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let pct: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a percentage"))?;
    if !(pct.is_finite() && (0.0..=1000.0).contains(&pct)) {
        return Err(format!("{text} must be between 0 and 1000"));
    }
    Ok(pct)
}

pub fn parse_seconds(text: &str) -> Result<f64, UnitError> {
    units::seconds(text, 0.01, 3600.0)
}

/// A size of a test's file or volume: at least 1 MiB.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    units::size_at_least(text, 1 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name of every choice parses back to its value; the names are
    /// the command line's (and EngineChoice's the same as serde's).
    fn round_trips<T: Choice + Send + Sync + PartialEq + std::fmt::Debug>() {
        let cmd = clap::Command::new("x");
        let arg = clap::Arg::new("v");
        for &value in T::ALL {
            let parsed = parser::<T>()
                .parse_ref(&cmd, Some(&arg), std::ffi::OsStr::new(value.name()))
                .unwrap();
            assert_eq!(parsed, value);
        }
    }

    #[test]
    fn choices_parse_by_their_names() {
        round_trips::<Test>();
        round_trips::<RegexEngine>();
        round_trips::<Schedule>();
        round_trips::<EngineChoice>();
        let names = |all: &[&'static str]| all.join(",");
        assert_eq!(
            names(&Test::ALL.map(Test::name)),
            "cpu,regex,read,seek,fsync,dns,seqwrite,seqread,randread,mixed,syncwrite,cpu-bench,randwrite,sustained"
        );
        assert_eq!(names(&RegexEngine::ALL.map(RegexEngine::name)), "rust,perl");
        assert_eq!(names(&Schedule::ALL.map(Schedule::name)), "bounded,pveperf");
        for engine in EngineChoice::ALL {
            assert_eq!(
                serde_json::to_string(&engine).unwrap(),
                format!("\"{}\"", engine.name())
            );
        }
        assert_eq!(
            names(&EngineChoice::ALL.map(EngineChoice::name)),
            "auto,io-uring,psync"
        );
    }

    #[test]
    fn cpu_threads_is_a_count_or_all_and_implies_the_cpu_figures() {
        assert_eq!(parse_cpu_threads("4"), Ok(CpuThreadsArg::Count(4)));
        assert_eq!(parse_cpu_threads("all"), Ok(CpuThreadsArg::All));
        for bad in ["0", "-1", "1025", "x", "ALL", ""] {
            assert!(parse_cpu_threads(bad).is_err(), "{bad:?}");
        }
        let all = CpuThreadsArg::All.count();
        assert!((1..=CPU_THREADS_MAX).contains(&all));
        assert_eq!(
            all as usize,
            std::thread::available_parallelism().unwrap().get()
        );
        let parse = |argv: &[&str]| {
            let cmd = MeasureArgs::augment_args(clap::Command::new("x"));
            let m = cmd.try_get_matches_from(argv).unwrap();
            MeasureArgs::from_arg_matches(&m).unwrap()
        };
        let m = parse(&["x", "--tests", "cpu", "--cpu-threads", "2"]);
        assert_eq!(m.cpu_threads, Some(CpuThreadsArg::Count(2)));
        assert_eq!(
            super::super::requests::selected_tests(&m)
                .into_iter()
                .collect::<Vec<_>>(),
            [Test::Cpu, Test::CpuBench]
        );
        assert!(!super::super::requests::selected_tests(&parse(&["x"])).contains(&Test::CpuBench));
        assert!(
            super::super::requests::selected_tests(&parse(&["x", "-x"])).contains(&Test::CpuBench)
        );
    }
}
