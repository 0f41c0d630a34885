//! pveperf's name: run as `pveperf` (through a symlink the admin makes, see
//! pveprobe(1) and the README), the binary takes pveperf's command line and
//! keeps pveperf's output and exit statuses:
//!
//! - `pveperf [PATH]`, no options: any argument, also one that starts with
//!   `-`, is the PATH; PATH defaults to `/`.
//! - Two or more arguments: `usage: pveperf [PATH]` on stderr, status 255.
//! - Only pveperf's eight lines, 3-second windows; REGEX/SECOND from the
//!   host's Perl (pveperf's scale) when `perl` with Time::HiRes runs, from
//!   Rust's engine otherwise; DNS on Net::DNS's schedule with pveperf's
//!   arguments, DNS INT only from a `search` line with one domain.
//! - Status 0 also when a line is missing (stderr says why), as pveperf;
//!   128+signal when interrupted (the files made are removed).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::args::ProbeArgs;
use crate::commands::common::session::{Frame, LockAs, Session};
use crate::commands::common::work::Work;
use crate::commands::probe::report::{ProbeReport, text};
use crate::commands::probe::schedule::{Event, ProbeRun};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::figure::Figure;
use crate::measure::plan::Test;
use crate::model::PVEPERF_WINDOW;
use crate::model::dns::Schedule;

/// The name under which the binary behaves as pveperf.
pub const NAME: &str = "pveperf";

const USAGE: &str = "usage: pveperf [PATH]";

/// True when `argv0`'s last component is `pveperf`.
pub fn invoked_as_pveperf(argv0: &OsStr) -> bool {
    Path::new(argv0).file_name() == Some(OsStr::new(NAME))
}

/// pveperf's reading of its arguments (without argv\[0\]): the PATH, or
/// `None` for a usage error.
fn path_from(mut args: Vec<OsString>) -> Option<PathBuf> {
    match args.len() {
        0 => Some(PathBuf::from("/")),
        1 => args.pop().map(PathBuf::from),
        _ => None,
    }
}

/// A line as pveperf prints it. pveperf has no words for a name server
/// that never answers: it prints the mean time per query, waits included,
/// so parsers that read the number after the colon keep working.
fn pveperf_line(report: &ProbeReport, line: Figure) -> Option<String> {
    if !report.dns_dead(line) {
        return text::line(report, line);
    }
    let runs = report.dns(line)?;
    let mean = runs.iter().map(|r| r.mean_ms()).sum::<f64>() / runs.len().max(1) as f64;
    let domain = runs
        .first()
        .and_then(|r| r.domain.as_ref())
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    Some(format!(
        "{}{mean:.2} ms{domain}",
        crate::output::line::label(line)
    ))
}

/// Runs as pveperf with `args` (argv without argv\[0\]), from pveprobe's
/// `defaults` (the probe's arguments as given none).
pub fn main(args: Vec<OsString>, defaults: &ProbeArgs) -> Ended {
    let Some(path) = path_from(args) else {
        return Err(Stop::new(Exit::PveperfUsage, USAGE));
    };
    // pveprobe's defaults, then pveperf's choices. PATH is not checked
    // first: pveperf prints what it can for a missing PATH and exits 0.
    let mut config = super::run::config(defaults);
    config.path = path;
    // pveperf prints no BUFFERED READS or SEEK TIME line for a ZFS dataset.
    config.leaf_reads = false;
    // Nor does it read the disks' health: nothing here would show it.
    config.disk_health = false;
    config.runs = 1;
    config.tests = Test::PVEPERF.into_iter().collect();
    config.window = PVEPERF_WINDOW;
    config.dns_schedule = Schedule::Pveperf;

    // One probe at a time on this host; pveperf has no words for waiting.
    let session = Session::start::<crate::commands::probe::report::ProbeDocument<'_>>(Frame {
        signals: true,
        lock: Some(LockAs {
            me: crate::sys::lock::describe_me(&config.path),
            busy: crate::sys::lock::Busy::WaitQuietly,
            nothing_done: "nothing was measured",
        }),
        ..Frame::new(NAME, crate::output::Format::Text, None)
    });
    let session = match session {
        Ok(session) => session,
        Err(stop) if matches!(stop.exit, Exit::Signal(_)) => return Err(Stop::new(stop.exit, "")),
        Err(stop) => return Err(Stop::new(Exit::PveperfUsage, stop)),
    };
    let said = crate::output::progress::Progress::default().named(NAME);
    let each = |report: &ProbeReport, event: Event| match event {
        Event::Figure(line) => {
            if let Some(text) = pveperf_line(report, line) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}");
                let _ = out.flush();
            }
            if let Some(why) = text::diagnostic(report, line) {
                said.say(&why.to_string());
            }
        }
        Event::Begin { .. } => {}
        Event::Note(note) => said.say(note),
    };
    let Ok(report) = Work::run(
        &ProbeRun {
            config: &config,
            each: &each,
        },
        session.interrupt(),
    );

    report
        .interrupted()
        .map_err(|i| Stop::new(Exit::Signal(i.signal), i))?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_basename_pveperf_counts() {
        for name in [
            "pveperf",
            "/usr/local/sbin/pveperf",
            "./pveperf",
            "../x/pveperf",
        ] {
            assert!(invoked_as_pveperf(OsStr::new(name)), "{name}");
        }
        for name in [
            "pveprobe",
            "/usr/bin/pveprobe",
            "pveperf.sh",
            "xpveperf",
            "/pveperf/pveprobe",
            "",
        ] {
            assert!(!invoked_as_pveperf(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn arguments_as_pveperf_reads_them() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(path_from(args(&[])), Some(PathBuf::from("/")));
        assert_eq!(
            path_from(args(&["/var/lib/vz"])),
            Some(PathBuf::from("/var/lib/vz"))
        );
        for option_like in ["--help", "-V", "--tests", "--"] {
            assert_eq!(
                path_from(args(&[option_like])),
                Some(PathBuf::from(option_like)),
                "pveperf has no options"
            );
        }
        assert_eq!(path_from(args(&["/", "/tmp"])), None);
        assert_eq!(path_from(args(&["a", "b", "c"])), None);
    }

    #[test]
    fn pveperfs_tests_are_the_six_of_pveperf() {
        assert_eq!(
            Test::PVEPERF,
            [
                Test::Cpu,
                Test::Regex,
                Test::Read,
                Test::Seek,
                Test::Fsync,
                Test::Dns
            ]
        );
        let mut sorted = Figure::PVEPERF;
        sorted.sort();
        assert_eq!(sorted, Figure::PVEPERF, "lines come in pveperf's order");
    }
}
