//! The probe, `pveprobe [OPTIONS] [PATH]` and `--storage ID|all`: the
//! options checked and made into the run's configuration, the lines
//! printed as they are measured, the result written in its session and
//! compared with `--baseline`.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use super::args::ProbeArgs;
use super::report::{ProbeDocument, ProbeReport, text};
use super::schedule::{Event, ProbeConfig, ProbeRun};
use super::storage::{self, AllStorages, StorageRequest};
use crate::commands::common::measure_args::{CpuThreadsArg, VOLUME_SIZE, WRITE_SIZE};
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, LockAs, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, PathError, Stop};
use crate::measure::plan::{SUSTAINED_BYTES, SUSTAINED_SECS, Test};
use crate::model::pve::PveTarget;
use crate::model::regex::RegexEngine;
use crate::output::Format as OutputFormat;
use crate::output::result::JsonReport;
use crate::results::{self, Input, Readers};
use crate::sys::host::Host;
use crate::sys::interrupt::Interrupt;
use crate::sys::lock;

fn check_path(path: &Path) -> Result<(), PathError> {
    let meta = std::fs::metadata(path).map_err(|source| PathError::Inaccessible {
        path: path.into(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(PathError::NotADirectory { path: path.into() });
    }
    Ok(())
}

/// What every probe run settles before it measures: the baseline, and
/// its session (the CSV header, the signal flag and the host-wide lock).
struct Prepared<'a> {
    baseline: Option<Input>,
    session: Session<'a>,
}

impl Prepared<'_> {
    /// The run's signal flag.
    fn interrupt(&self) -> &Interrupt {
        self.session.interrupt()
    }

    /// Whom the run waited for, if it did.
    fn waited(&self) -> Option<crate::model::host::Waited> {
        self.session
            .host_lock
            .as_ref()
            .and_then(|l| l.waited.clone())
    }
}

/// Checks the options that need no measurement, installs the signal
/// handlers and takes the host-wide lock (`me` tells a second probe who
/// holds it); `plot` is opened too.
fn prepare<'a>(
    args: &'a ProbeArgs,
    readers: &Readers,
    me: &str,
    plot: Option<&'a Path>,
) -> Result<Prepared<'a>, Stop> {
    let baseline = args
        .baseline
        .as_deref()
        .map(|b| readers.load(b))
        .transpose()
        .map_err(Stop::bad_input)?;
    // One probe at a time on this host: two at once halve each other's figures.
    let busy = if args.no_wait {
        lock::Busy::Refuse
    } else {
        lock::Busy::Wait
    };
    let session = Session::start::<ProbeDocument<'_>>(Frame {
        plot,
        signals: true,
        lock: Some(LockAs {
            me: me.to_string(),
            busy,
            nothing_done: "nothing was measured",
        }),
        ..crate::commands::common::requests::frame(&args.out, "pveprobe")
    })?;
    Ok(Prepared { baseline, session })
}

/// Whether the lines go to stdout as they are measured.
fn lines_to_stdout(args: &ProbeArgs) -> bool {
    args.out.output_format == OutputFormat::Text && args.out.output.is_none()
}

/// Runs `config`, printing each line as it is measured (text to stdout)
/// and its diagnostics on stderr, with a progress line on a terminal
/// (and SUSTAINED WRITE's seconds as a sparkline under its line).
fn run_printing(args: &ProbeArgs, config: &ProbeConfig, interrupt: &Interrupt) -> ProbeReport {
    let to_stdout = lines_to_stdout(args);
    let sparkline = to_stdout && std::io::stdout().is_terminal();
    let progress = crate::commands::common::requests::progress(&args.out);
    let each = |report: &ProbeReport, event: Event| match event {
        Event::Begin {
            line,
            run,
            runs,
            window,
        } => {
            let runs = if runs > 1 {
                format!(" (run {run}/{runs})")
            } else {
                String::new()
            };
            progress.timed(&format!("{}{runs}", line.label()), window)
        }
        Event::Figure(figure) => {
            progress.done();
            if to_stdout && let Some(text) = text::line(report, figure) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}");
                if sparkline
                    && figure == crate::figure::Figure::SustainedWrite
                    && let Some(s) = report
                        .extended
                        .sustained
                        .as_ref()
                        .and_then(|o| o.measured())
                {
                    let _ = writeln!(
                        out,
                        "{:26}{}",
                        "",
                        crate::output::plot::sparkline(&s.series())
                    );
                }
                let _ = out.flush();
            }
            if let Some(why) = text::diagnostic(report, figure) {
                progress.say(&why.to_string());
            }
        }
        Event::Note(note) => progress.say(note),
    };
    let Ok(report) = Work::run(
        &ProbeRun {
            config,
            each: &each,
        },
        interrupt,
    );
    progress.done();
    report
}

/// Writes a finished run's result and compares it with the baseline.
fn finish(args: &ProbeArgs, report: &ProbeReport, prep: Prepared) -> Ended {
    report.interrupted().map_err(interrupted_stop)?;
    let document = ProbeDocument {
        verbose: args.verbose,
        lines_printed: lines_to_stdout(args),
        ..ProbeDocument::new(report)
    };
    let mut exit = exit_status(&document.json);
    if let Some(base) = prep.baseline {
        let current = Input {
            name: "this run".into(),
            doc: document.json.clone(),
        };
        let (table, worse) = results::against_baseline(base, current, args.tolerance);
        let progress = requests::progress(&args.out);
        progress.say("compared with the baseline:");
        progress.block(&table);
        worse.iter().for_each(|w| progress.say(w));
        if !worse.is_empty() {
            exit = Exit::WorseThanBaseline;
        }
    }
    prep.session.finish(&document, exit)
}

/// The run's configuration on the real host.
pub fn config(args: &ProbeArgs) -> ProbeConfig {
    let m = &args.measure;
    let tests = requests::selected_tests(m);
    // Whether perl runs pveperf's loop is asked only of a run that
    // measures REGEX/SECOND (a child process on the node otherwise).
    let regex_engine = match m.regex_engine {
        Some(asked) => asked,
        None if tests.contains(&Test::Regex) => {
            crate::commands::probe::pveperf::regex::default_engine()
        }
        None => RegexEngine::Perl,
    };
    ProbeConfig {
        path: args.path.clone(),
        window: Duration::from_secs_f64(m.duration),
        tests,
        regex_engine,
        resolv_conf: m.resolv_conf.clone(),
        dns_timeout: Duration::from_secs_f64(m.dns_timeout),
        dns_schedule: m.dns_schedule,
        runs: m.runs,
        record_latency: !m.no_latency,
        write_size: m.write_size.unwrap_or(WRITE_SIZE),
        zero_data: m.zero_data,
        io_engine: m.io_engine,
        sync_mode: m.sync_mode,
        sync_jobs: m.sync_jobs.clone(),
        plp: m.plp,
        cpu_threads: m.cpu_threads.map(CpuThreadsArg::count),
        sustained: Duration::from_secs_f64(m.sustained.unwrap_or(SUSTAINED_SECS)),
        sustained_bytes: m.write_size.unwrap_or(SUSTAINED_BYTES),
        volume: None,
        leaf_reads: true,
        disk_health: true,
        host: args
            .sysroot
            .as_ref()
            .map_or_else(Host::real, Host::with_root),
    }
}

/// `pveprobe [OPTIONS] [PATH]`, or `--storage ID|all`; `readers` read
/// `--baseline`.
pub fn probe(args: &ProbeArgs, readers: &Readers) -> Ended {
    if let Some(which) = &args.measure.storage {
        return on_storage(args, readers, which);
    }
    // The run's configuration, made once from the options.
    let config = config(args);
    check_path(&config.path).map_err(Stop::bad_input)?;
    // --plot draws SUSTAINED WRITE's seconds.
    if args.out.plot.is_some()
        && !config
            .tests
            .contains(&crate::measure::plan::Test::Sustained)
    {
        return Err(Stop::bad_input(
            "--plot draws SUSTAINED WRITE's seconds: add --sustained SECS (compare and cluster draw their tables)",
        ));
    }
    let prep = prepare(
        args,
        readers,
        &lock::describe_me(&config.path),
        args.out.plot.as_deref(),
    )?;
    let mut report = run_printing(args, &config, prep.interrupt());
    report.waited_for_probe = prep.waited();
    finish(args, &report, prep)
}

/// The request: which storage, and the tests a storage run makes unless
/// `--tests` says (pveperf's disk lines, and -x's; on a volume its writes too).
fn storage_request(args: &ProbeArgs, which: &str) -> StorageRequest {
    let disk = [Test::Read, Test::Seek, Test::Fsync];
    let asked = requests::asked(&args.measure);
    StorageRequest {
        which: which.to_string(),
        pve_config: args.pve_config.clone(),
        config: config(args),
        on_path: asked.select(&disk),
        on_volume: asked.select(&Test::ON_VOLUME),
        volume_bytes: args.measure.write_size.unwrap_or(VOLUME_SIZE),
        progress: requests::progress(&args.out),
    }
}

/// The probe's runs on storages, printed as the probe prints them.
struct Lines<'a> {
    args: &'a ProbeArgs,
    prep: &'a Prepared<'a>,
}

impl storage::ProbeRunner for Lines<'_> {
    fn interrupt(&self) -> &Interrupt {
        self.prep.interrupt()
    }

    /// `STORAGE: ...` before the lines, where they go to stdout; then the run.
    fn run(&mut self, config: &ProbeConfig, target: &PveTarget) -> ProbeReport {
        if lines_to_stdout(self.args) {
            let line = format!("{:<19}{}", "STORAGE:", target.describe());
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", crate::model::printable(&line));
            let _ = out.flush();
        }
        run_printing(self.args, config, self.prep.interrupt())
    }

    /// A blank line between two storages' lines.
    fn measured(&mut self, _report: &ProbeReport) {
        if lines_to_stdout(self.args) {
            println!();
        }
    }
}

/// `--storage ID|all`.
fn on_storage(args: &ProbeArgs, readers: &Readers, which: &str) -> Ended {
    let req = storage_request(args, which);
    let plan = storage::plan(&req).map_err(storage_stop)?;
    let prep = prepare(
        args,
        readers,
        &format!("pid {}, --storage {which}", std::process::id()),
        None,
    )?;
    let mut lines = Lines { args, prep: &prep };
    if which != "all" {
        let mut report = plan.probe_one(&req, &mut lines).map_err(storage_stop)?;
        report.waited_for_probe = prep.waited();
        return finish(args, &report, prep);
    }
    let mut all = plan.probe_all(&req, &mut lines).map_err(storage_stop)?;
    all.lines_printed = lines_to_stdout(args);
    let exit = all_exit_status(&all);
    prep.session.finish::<AllStorages>(&all, exit)
}

/// A run cut short ends with its signal's status, after its cleanup.
fn interrupted_stop(i: super::report::Interrupted) -> Stop {
    Stop::new(Exit::Signal(i.signal), i)
}

/// `--storage`'s end when it measured nothing: a storage that cannot be
/// measured or named wrong is bad input (2), one that failed is 1.
fn storage_stop(e: storage::StorageError) -> Stop {
    use storage::StorageError as E;
    match e {
        E::Interrupted(i) => interrupted_stop(i),
        E::Failed(_) => Stop::not_measured(e),
        E::Config(_) | E::NoSuch { .. } | E::NotMeasurable(_) => Stop::bad_input(e),
    }
}

/// A run's status: the signal that cut it short; else 1 when a line that
/// applies could not be measured.
pub fn exit_status(result: &JsonReport) -> Exit {
    match result.interrupted_by_signal {
        Some(sig) => Exit::Signal(sig),
        None if result.not_measured.iter().any(|n| n.failed) => Exit::NotMeasured,
        None => Exit::Ok,
    }
}

/// `--storage all`'s status: 1 when a storage could not be measured or
/// one of its lines failed, else 0 (an interrupted run ends before its
/// document).
fn all_exit_status(all: &AllStorages) -> Exit {
    let failed =
        all.skipped.iter().any(|s| s.failed) || all.docs.iter().any(|d| exit_status(d) != Exit::Ok);
    if failed { Exit::NotMeasured } else { Exit::Ok }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use super::*;
    use crate::commands::Opts;
    use crate::commands::common::measure_args::parse_size;
    use crate::model::regex::RegexEngine;

    #[test]
    fn defaults_match_pveperf() {
        let config = super::config(&Opts::parse_from(["pveprobe"]).probe);
        assert_eq!(config.path, PathBuf::from("/"));
        assert_eq!(config.window, Duration::from_secs(3));
        assert_eq!(config.tests.len(), 6);
        // pveperf's loop in the host's Perl; Rust's engine only without it.
        let perl = crate::commands::probe::pveperf::regex::perl_runs();
        let engine = if perl {
            RegexEngine::Perl
        } else {
            RegexEngine::Rust
        };
        assert_eq!(config.regex_engine, engine);
        let asked = super::config(&Opts::parse_from(["pveprobe", "--regex-engine", "rust"]).probe);
        assert_eq!(asked.regex_engine, RegexEngine::Rust);
        assert_eq!(config.resolv_conf, PathBuf::from("/etc/resolv.conf"));
    }

    #[test]
    fn parses_test_lists_and_rejects_bad_seconds() {
        let opts = Opts::parse_from([
            "pveprobe",
            "--tests",
            "fsync,dns",
            "--duration",
            "0.5",
            "/x",
        ]);
        let config = super::config(&opts.probe);
        assert_eq!(
            config.tests.into_iter().collect::<Vec<_>>(),
            vec![Test::Fsync, Test::Dns]
        );
        assert_eq!(config.window, Duration::from_millis(500));
        for bad in ["0", "-1", "nan", "inf", "abc", "3601"] {
            assert!(
                Opts::try_parse_from(["pveprobe", "--duration", bad]).is_err(),
                "{bad}"
            );
        }
        assert!(Opts::try_parse_from(["pveprobe", "--tests", "cpu,bogus"]).is_err());
        assert!(Opts::try_parse_from(["pveprobe", "a", "b"]).is_err());
        assert!(
            Opts::try_parse_from(["pveprobe", "--append"]).is_err(),
            "--append needs --output"
        );
        assert!(Opts::try_parse_from(["pveprobe", "--runs", "0"]).is_err());
        assert!(Opts::try_parse_from(["pveprobe", "--tolerance", "-1"]).is_err());
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("256m"), Ok(256 << 20));
        assert_eq!(parse_size("2097152"), Ok(2 << 20));
        assert!(parse_size("512K").is_err(), "below 1M");
        assert!(parse_size("x").is_err() && parse_size("99999999999T").is_err());
        let x = super::config(&Opts::parse_from(["pveprobe", "-x"]).probe);
        assert_eq!(x.tests.len(), 12);
        let one = super::config(&Opts::parse_from(["pveprobe", "--tests", "seqwrite"]).probe);
        assert_eq!(
            one.tests.into_iter().collect::<Vec<_>>(),
            vec![Test::Seqwrite]
        );
    }
}
