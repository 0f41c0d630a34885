//! What the binary does between parsed options and an exit status: check
//! the input, run the probe or the comparison, and write the results.

use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::cli::{Command, CompareArgs, Opts, ProbeArgs};
use crate::compare::{self, Input};
use crate::error::exit::Exit;
use crate::error::{Ended, PathError, Stop};
use crate::measure::window::Interrupt;
use crate::output;
use crate::output::Format as OutputFormat;
use crate::output::plot;
use crate::output::progress::Progress;
use crate::probe::report::{Document, csv, text};
use crate::probe::schedule::{self, Event};
use crate::sys::lock;

mod nodes;
mod storage;
pub use storage::storages;

/// Every command: the options parsed, the exit status to return or the
/// [`Stop`] that `main` prints.
pub fn run(opts: &Opts) -> Ended {
    match &opts.command {
        Some(Command::Compare(args)) => compare(args),
        Some(Command::Cluster(args)) => nodes::cluster(args),
        Some(Command::Storages(args)) => storages(args),
        Some(Command::Net(args)) => nodes::net(args),
        Some(Command::NetServe(args)) => nodes::net_serve(args),
        Some(Command::NetProbe(args)) => nodes::net_probe(args),
        Some(Command::NetInfo) => nodes::net_info(),
        Some(Command::Qualify(args)) => crate::qualify::run(args),
        None => probe(&opts.probe),
    }
}

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

/// What every probe run settles before it measures: the CSV header, the
/// baseline, the signal flag and the host-wide lock.
struct Prepared {
    header: bool,
    baseline: Option<Input>,
    interrupt: Interrupt,
    host_lock: lock::HostLock,
}

/// Checks the options that need no measurement, installs the signal
/// handlers and takes the host-wide lock (`me` tells a second probe who
/// holds it).
fn prepare(args: &ProbeArgs, me: &str) -> Result<Prepared, Stop> {
    let header = csv::needs_header(
        args.output_format,
        args.output.as_deref(),
        args.append,
        &csv::header(),
    )
    .map_err(Stop::bad_input)?;
    let baseline = args
        .baseline
        .as_deref()
        .map(compare::load)
        .transpose()
        .map_err(Stop::bad_input)?;
    let interrupt = Interrupt::install()
        .map_err(|err| Stop::not_measured(format!("cannot install signal handlers: {err}")))?;
    // One probe at a time on this host: two at once halve each other's figures.
    let busy = if args.no_wait {
        lock::Busy::Refuse
    } else {
        lock::Busy::Wait
    };
    let host_lock = match lock::acquire(
        lock::path_from_env().as_deref(),
        me,
        busy,
        &interrupt,
        &mut |s| eprintln!("pveprobe: {s}"),
    ) {
        Ok(held) => held,
        Err(err @ lock::LockError::Refused { .. }) => return Err(Stop::bad_input(err)),
        Err(lock::LockError::Interrupted(sig)) => {
            return Err(Stop::new(
                Exit::Signal(sig),
                "interrupted while waiting for another probe; nothing was measured",
            ));
        }
    };
    if let Some(note) = &host_lock.note {
        eprintln!("pveprobe: {note}");
    }
    Ok(Prepared {
        header,
        baseline,
        interrupt,
        host_lock,
    })
}

/// Whether the lines go to stdout as they are measured.
fn lines_to_stdout(args: &ProbeArgs) -> bool {
    args.output_format == OutputFormat::Text && args.output.is_none()
}

/// Runs `config`, printing each line as it is measured (text to stdout)
/// and its diagnostics on stderr, with a progress line on a terminal
/// (and SUSTAINED WRITE's seconds as a sparkline under its line).
fn measure(
    args: &ProbeArgs,
    config: &schedule::Config,
    interrupt: &Interrupt,
) -> crate::probe::report::Report {
    let is_text = args.output_format == OutputFormat::Text;
    let to_stdout = lines_to_stdout(args);
    let sparkline = to_stdout && std::io::stdout().is_terminal();
    let mut progress = Progress::new(is_text && std::io::stderr().is_terminal());
    let mut sink = |report: &crate::probe::report::Report, event: Event| match event {
        Event::Begin {
            line,
            run,
            runs,
            window,
        } => progress.begin(line, run, runs, window),
        Event::Figure(figure) => {
            progress.finish();
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
                progress.eprintln(&format!("pveprobe: {why}"));
            }
        }
        Event::Note(note) => progress.eprintln(&format!("pveprobe: {note}")),
    };
    schedule::run(config, interrupt, &mut sink)
}

/// The message and status of an interrupted run.
fn interrupted(report: &crate::probe::report::Report) -> Result<(), Stop> {
    let Some(sig) = report.interrupted_by else {
        return Ok(());
    };
    let name = nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str())
        .unwrap_or("signal");
    Err(Stop::new(
        Exit::Signal(sig),
        format!("interrupted by {name}; {}", report.cleanup()),
    ))
}

/// Writes a finished run's result and compares it with the baseline.
fn finish(args: &ProbeArgs, report: &crate::probe::report::Report, prep: Prepared) -> Ended {
    interrupted(report)?;
    let document = Document {
        verbose: args.verbose,
        lines_printed: lines_to_stdout(args),
        csv_header: prep.header,
        ..Document::new(report)
    };
    let rendered = output::render(&document, args.output_format);
    output::write(
        output::Destination::of(args.output.as_deref(), args.append),
        &rendered,
    )
    .map_err(Stop::not_measured)?;

    if let Some(base) = prep.baseline {
        let current = Input {
            name: "this run".into(),
            doc: document.json,
        };
        let worse = compare::regressions(&base.doc, &current.doc, args.tolerance);
        eprint!(
            "pveprobe: compared with the baseline:\n{}",
            compare::render_text(&compare::table(&[base, current]))
        );
        for r in &worse {
            eprintln!(
                "pveprobe: {} is worse than the baseline by more than {}%: {:.2} against {:.2} (ratio {:.3})",
                r.label, args.tolerance, r.current, r.baseline, r.ratio
            );
        }
        if !worse.is_empty() {
            return Ok(Exit::WorseThanBaseline);
        }
    }
    Ok(if report.any_failed() {
        Exit::NotMeasured
    } else {
        Exit::Ok
    })
}

/// `pveprobe [OPTIONS] [PATH]`, or `--storage ID|all`.
pub fn probe(args: &ProbeArgs) -> Ended {
    // The run's configuration, made once from the options.
    let config = args.config();
    if let Some(which) = &args.measure.storage {
        return storage::probe(args, storage::Plan::new(args, config), which);
    }
    check_path(&config.path).map_err(Stop::bad_input)?;
    // --plot draws SUSTAINED WRITE's seconds; its FILE is opened before
    // the run, so one that cannot be written costs no measurement.
    let plot_file = match &args.plot {
        None => None,
        Some(_) if !config.tests.contains(&crate::probe::plan::Test::Sustained) => {
            return Err(Stop::bad_input(
                "--plot draws SUSTAINED WRITE's seconds: add --sustained SECS (compare and cluster draw their tables)",
            ));
        }
        Some(path) => Some(crate::output::plot::SvgFile::create(path).map_err(Stop::bad_input)?),
    };
    let prep = prepare(args, &lock::describe_me(&config.path))?;
    let mut report = measure(args, &config, &prep.interrupt);
    report.waited_for_probe = prep.host_lock.waited.clone();
    let ended = finish(args, &report, prep);
    let sustained = report
        .extended
        .sustained
        .as_ref()
        .and_then(|o| o.measured());
    if let (Some(file), Some(s), None) = (plot_file, sustained, report.interrupted_by) {
        let title = format!("SUSTAINED WRITE on {}", config.path.display());
        match file.save(crate::output::plot::seconds_svg(&title, s.series())) {
            Ok(path) => eprintln!("pveprobe: plot written to {}", path.display()),
            Err(why) => return also_failed(ended, why),
        }
    }
    ended
}

/// A command's end when a later step failed too: that failure, when the
/// command had ended well, else the first end (the later failure said on
/// stderr beside it).
fn also_failed(ended: Ended, why: impl std::fmt::Display) -> Ended {
    match ended {
        Ok(Exit::Ok) => Err(Stop::not_measured(why)),
        first => {
            eprintln!("pveprobe: {why}");
            first
        }
    }
}

/// `pveprobe compare FILE...`.
pub fn compare(args: &CompareArgs) -> Ended {
    // Ratios of results are no measurement to send to a dashboard.
    args.output_format
        .without_metrics("pveprobe compare")
        .map_err(Stop::bad_input)?;
    // A cluster document gives one input per node that answered.
    let inputs: Result<Vec<Input>, _> = args
        .files
        .iter()
        .map(|f| crate::cluster::render::compare_inputs(f))
        .collect::<Result<Vec<_>, _>>()
        .map(|each| each.into_iter().flatten().collect());
    let inputs = inputs.map_err(Stop::bad_input)?;
    // Checked before anything is written: a FILE that cannot be written
    // is bad usage (exit status 2).
    let plot_file = args
        .plot
        .as_deref()
        .map(plot::SvgFile::create)
        .transpose()
        .map_err(Stop::bad_input)?;
    let table = compare::table(&inputs);
    // Inline bars only for people: text on a terminal, never in a pipe or file.
    let rendered = match args.output_format {
        OutputFormat::Text => compare::render_text_with(&table, std::io::stdout().is_terminal()),
        format => output::render(&table, format),
    };
    let ended = output::write(output::Destination::Stdout, &rendered)
        .map(|()| Exit::Ok)
        .map_err(Stop::not_measured);
    if let Some(file) = plot_file {
        match file.save(compare::plot_svg(&table)) {
            Ok(path) => eprintln!("pveprobe: plot written to {}", path.display()),
            Err(why) => return also_failed(ended, why),
        }
    }
    ended
}
