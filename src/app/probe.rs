//! The probe, `pveprobe [OPTIONS] [PATH]` (`--storage` runs it through
//! `app/storages.rs`): the options checked and made into the run's
//! configuration, the lines printed as they are measured, the result
//! written in its session and compared with `--baseline`.

use std::io::{IsTerminal, Write};
use std::path::Path;

use super::session::{Frame, LockAs, Session};
use crate::cli::ProbeArgs;
use crate::compare::{self, Input};
use crate::error::exit::Exit;
use crate::error::{Ended, PathError, Stop};
use crate::measure::window::Interrupt;
use crate::output::Format as OutputFormat;
use crate::output::progress::Progress;
use crate::probe::report::{Document, text};
use crate::probe::schedule::{self, Event};
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
pub(super) struct Prepared<'a> {
    pub(super) baseline: Option<Input>,
    pub(super) session: Session<'a>,
}

impl Prepared<'_> {
    /// The run's signal flag.
    pub(super) fn interrupt(&self) -> &Interrupt {
        self.session.interrupt()
    }

    /// Whom the run waited for, if it did.
    pub(super) fn waited(&self) -> Option<crate::model::host::Waited> {
        self.session
            .host_lock
            .as_ref()
            .and_then(|l| l.waited.clone())
    }
}

/// Checks the options that need no measurement, installs the signal
/// handlers and takes the host-wide lock (`me` tells a second probe who
/// holds it); `plot` is opened too.
pub(super) fn prepare<'a>(
    args: &'a ProbeArgs,
    me: &str,
    plot: Option<&'a Path>,
) -> Result<Prepared<'a>, Stop> {
    let baseline = args
        .baseline
        .as_deref()
        .map(compare::load)
        .transpose()
        .map_err(Stop::bad_input)?;
    // One probe at a time on this host: two at once halve each other's figures.
    let busy = if args.no_wait {
        lock::Busy::Refuse
    } else {
        lock::Busy::Wait
    };
    let session = Session::start::<Document<'_>>(Frame {
        append: args.append,
        plot,
        signals: true,
        lock: Some(LockAs {
            me: me.to_string(),
            busy,
            nothing_done: "nothing was measured",
        }),
        ..Frame::new("pveprobe", args.output_format, args.output.as_deref())
    })?;
    Ok(Prepared { baseline, session })
}

/// Whether the lines go to stdout as they are measured.
pub(super) fn lines_to_stdout(args: &ProbeArgs) -> bool {
    args.output_format == OutputFormat::Text && args.output.is_none()
}

/// Runs `config`, printing each line as it is measured (text to stdout)
/// and its diagnostics on stderr, with a progress line on a terminal
/// (and SUSTAINED WRITE's seconds as a sparkline under its line).
pub(super) fn measure(
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

/// Writes a finished run's result and compares it with the baseline.
pub(super) fn finish(
    args: &ProbeArgs,
    report: &crate::probe::report::Report,
    prep: Prepared,
) -> Ended {
    report.stop_if_interrupted()?;
    let document = Document {
        verbose: args.verbose,
        lines_printed: lines_to_stdout(args),
        csv_header: prep.session.csv_header,
        ..Document::new(report)
    };
    let mut exit = if report.any_failed() {
        Exit::NotMeasured
    } else {
        Exit::Ok
    };
    if let Some(base) = prep.baseline {
        let current = Input {
            name: "this run".into(),
            doc: document.json.clone(),
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
            exit = Exit::WorseThanBaseline;
        }
    }
    prep.session.finish(&document, exit)
}

/// `pveprobe [OPTIONS] [PATH]`.
pub fn probe(args: &ProbeArgs) -> Ended {
    // The run's configuration, made once from the options.
    let config = args.config();
    check_path(&config.path).map_err(Stop::bad_input)?;
    // --plot draws SUSTAINED WRITE's seconds.
    if args.plot.is_some() && !config.tests.contains(&crate::probe::plan::Test::Sustained) {
        return Err(Stop::bad_input(
            "--plot draws SUSTAINED WRITE's seconds: add --sustained SECS (compare and cluster draw their tables)",
        ));
    }
    let prep = prepare(args, &lock::describe_me(&config.path), args.plot.as_deref())?;
    let mut report = measure(args, &config, prep.interrupt());
    report.waited_for_probe = prep.waited();
    finish(args, &report, prep)
}
