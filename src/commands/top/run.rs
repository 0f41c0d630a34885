//! `pveprobe top`: the arguments made into a request, then the intervals
//! written as they come: redrawn on a terminal (q quits, the terminal
//! restored on every way out), else one after another ([`IntervalWriter`]); with
//! `--record DIR` each also kept in a store there. The record read back
//! (`--between`, `--at`, `--worst`) is [`super::replay`]'s.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use super::args::TopArgs;
use super::cluster::ClusterWorstRequest;
use super::replay::{self, Around, ReplayError, ReplayRequest, WorstRequest};
use super::tui::{Key, Tui};
use super::write::IntervalWriter;
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::nodeio::sample::TopSample;
use crate::nodeio::sampling::Sampling;
use crate::output::Format;

/// The intervals `--plot` draws at most (the last ones).
const PLOTTED: usize = 3600;

/// What the live view says when no recorder runs.
const NOT_RECORDED: &str = "Not recorded: systemctl enable --now pveprobe-record keeps these intervals (top --worst, --at)";

/// The recorder's setting of its store.
const RECORD_DIR_ENV: &str = "PVEPROBE_RECORD_DIR";

/// `pveprobe top`.
pub fn top(args: &TopArgs) -> Ended {
    // The format, `--append`'s CSV header (only CSV has one: the other
    // formats add to the file as they are), the `--plot` file (opened
    // first: one that cannot be written costs no sampling) and the
    // signal flag, as every command's.
    let session = Session::start::<TopSample>(Frame {
        append: args.out.append && args.out.output_format == Format::Csv,
        signals: true,
        ..requests::frame(&args.out, "pveprobe top")
    })?;
    if args.worst && args.cluster {
        return cluster_worst(args, session);
    }
    if args.worst {
        return worst(args, session);
    }
    if args.at.is_some() || args.between.is_some() {
        return replayed(args, session);
    }
    if args.from.is_some() {
        return Err(Stop::bad_input(
            "--from reads a store: give --at, --between or --worst (--between A B --plot FILE draws it)",
        ));
    }
    live(args, session)
}

/// How each interval is written, and kept with `--record DIR`.
fn writer(args: &TopArgs, session: &Session) -> Result<IntervalWriter, Stop> {
    let store = match &args.record {
        Some(dir) => {
            let progress = requests::progress(&args.out);
            let w = crate::store::Writer::open(dir, crate::store::Limits::default())
                .map_err(|e| Stop::bad_input(format!("--record: {e}")))?;
            Some((w, progress))
        }
        None => None,
    };
    let mut w = IntervalWriter {
        format: args.out.output_format,
        output: args.out.output.clone(),
        append: args.out.append,
        csv_header: session.csv_header,
        store,
        first: true,
    };
    if let Some((s, progress)) = &mut w.store {
        s.notes.drain(..).for_each(|n| progress.say(&n));
    }
    Ok(w)
}

/// What a live run samples, and for how long.
fn sampling(args: &TopArgs, terminal: bool) -> Sampling {
    Sampling {
        sources: requests::sources(&args.sources),
        node: crate::pvestorage::node_name(),
        interval: Duration::from_secs_f64(args.interval),
        // Not on a terminal: one interval, unless asked for more (or
        // recording, or drawing: until stopped).
        count: args.count.or((!terminal
            && args.seconds.is_none()
            && args.record.is_none()
            && args.out.plot.is_none())
        .then_some(1)),
        seconds: args.seconds.map(Duration::from_secs),
    }
}

/// The lines under the live view: its keys, and whether a recorder runs.
fn live_footer(args: &TopArgs) -> Vec<String> {
    let mut out = vec!["q quits · s sorts · up/down and PgUp/PgDn scroll the guests".to_string()];
    if args.record.is_none() && !crate::store::recorder_runs(&store_dir(args)) {
        out.push(NOT_RECORDED.to_string());
    }
    out
}

/// The live run: the view on a terminal, else the intervals written.
fn live(args: &TopArgs, session: Session) -> Ended {
    let terminal = args.out.for_person();
    let sampling = sampling(args, terminal);
    let mut writer = writer(args, &session)?;
    let tui = terminal.then(Tui::take).flatten().map(RefCell::new);
    let footer = live_footer(args);
    let mut kept: VecDeque<TopSample> = VecDeque::new();
    let last: RefCell<Option<TopSample>> = RefCell::new(None);
    let mut each = |s: &TopSample| {
        if args.out.plot.is_some() {
            if kept.len() == PLOTTED {
                kept.pop_front();
            }
            kept.push_back(s.clone());
        }
        match &tui {
            Some(t) => {
                writer.keep(s)?;
                t.borrow_mut().draw(s, &footer);
                *last.borrow_mut() = Some(s.clone());
                Ok(())
            }
            None => writer.emit(s),
        }
    };
    // The view's keys, read while the run waits for the next interval.
    let mut quit = || {
        let Some(t) = &tui else { return false };
        let mut t = t.borrow_mut();
        while let Some(k) = t.key(Duration::ZERO) {
            if k == Key::Quit {
                return true;
            }
            if t.state.apply(k, true)
                && let Some(s) = &*last.borrow()
            {
                t.draw(s, &footer);
            }
        }
        false
    };
    // Without a view nothing is asked between intervals.
    let keys = tui
        .is_some()
        .then_some(&mut quit as &mut dyn FnMut() -> bool);
    let ran = sampling.run(session.interrupt(), keys, &mut each);
    drop(tui);
    ran.map_err(Stop::not_measured)?;
    let picture = args
        .out
        .plot
        .is_some()
        .then(|| super::plot::picture(kept.make_contiguous()));
    let exit = signalled(&session);
    session.finish_picture(picture, exit)
}

fn signalled(session: &Session) -> Exit {
    match session.interrupt().signal() {
        Some(sig) => Exit::Signal(sig),
        None => Exit::Ok,
    }
}

/// The store `--from` names, or the recorder's: its `PVEPROBE_RECORD_DIR`
/// (as /etc/default/pveprobe-record sets it for the service), or the default.
fn store_dir(args: &TopArgs) -> PathBuf {
    args.from
        .clone()
        .or_else(|| {
            std::env::var_os(RECORD_DIR_ENV)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from(crate::store::DEFAULT_DIR))
}

fn when(text: &str, now: &jiff::ZonedDateTime) -> Result<i64, Stop> {
    super::when::parse(text, now)
        .map(|t| t.as_microsecond())
        .map_err(Stop::bad_input)
}

fn replay_error(e: ReplayError) -> Stop {
    match e {
        ReplayError::NothingBetween(..) => Stop::not_measured(e),
        _ => Stop::bad_input(e),
    }
}

/// `--worst` refuses the metrics formats: its episodes are no figures.
fn no_metrics(args: &TopArgs) -> Result<(), Stop> {
    match args.out.output_format.is_metrics() {
        true => Err(Stop::bad_input(
            "--worst writes text, json, json-pretty or csv (its episodes are no metrics)",
        )),
        false => Ok(()),
    }
}

/// `--worst`: the window's episodes.
fn worst(args: &TopArgs, session: Session) -> Ended {
    no_metrics(args)?;
    let now = jiff::ZonedDateTime::now();
    let since =
        super::when::span(args.since.as_deref().unwrap_or("24h")).map_err(Stop::bad_input)?;
    let until_us = now.timestamp().as_microsecond();
    let req = WorstRequest {
        dir: store_dir(args),
        node: crate::pvestorage::node_name(),
        since_us: until_us - since.as_micros() as i64,
        until_us,
        episodes: args.episodes as usize,
    };
    let report = Work::run(&req, session.interrupt()).map_err(replay_error)?;
    session.finish(&report, Exit::Ok)
}

/// `--between A B`, or `--at T` without a terminal (stdin or stdout): the
/// intervals written as the live view writes them (and drawn with
/// `--plot`); `--at T` on a terminal: stepped through.
fn replayed(args: &TopArgs, session: Session) -> Ended {
    let now = jiff::ZonedDateTime::now();
    let dir = store_dir(args);
    let progress = requests::progress(&args.out);
    // Stepped through where the keys can be read (stdin a terminal too);
    // else, as in a script, the interval written.
    let at_us = args.at.as_ref().map(|at| when(at, &now)).transpose()?;
    let tui = at_us
        .filter(|_| args.out.for_person())
        .and_then(|_| Tui::take());
    let samples = match (at_us, &args.between, tui) {
        (Some(at_us), _, Some(mut tui)) => {
            let around = Around::read(&dir, at_us).map_err(replay_error)?;
            replay::step_through(&around, &mut tui, session.interrupt());
            drop(tui);
            let exit = signalled(&session);
            return session.finish_picture(None, exit);
        }
        (Some(at_us), _, None) => {
            let around = Around::read(&dir, at_us).map_err(replay_error)?;
            let s = around.sample(around.at).map_err(Stop::bad_input)?;
            around.scanned.notes.iter().for_each(|n| progress.note(n));
            vec![s]
        }
        (None, Some(ab), _) => {
            let req = ReplayRequest {
                dir,
                from_us: when(&ab[0], &now)?,
                to_us: when(&ab[1], &now)?,
            };
            let got = Work::run(&req, session.interrupt()).map_err(replay_error)?;
            got.notes.iter().for_each(|n| progress.note(n));
            got.samples
        }
        (None, None, _) => unreachable!("replay is asked for by --at or --between"),
    };
    let mut writer = writer(args, &session)?;
    for s in &samples {
        writer.emit(s).map_err(Stop::not_measured)?;
    }
    let picture = args
        .out
        .plot
        .is_some()
        .then(|| super::plot::picture(&samples));
    session.finish_picture(picture, Exit::Ok)
}

/// `--worst --cluster`: every node's episodes, ranked together.
fn cluster_worst(args: &TopArgs, session: Session) -> Ended {
    no_metrics(args)?;
    let since = args.since.clone().unwrap_or_else(|| "24h".into());
    super::when::span(&since).map_err(Stop::bad_input)?;
    let req = ClusterWorstRequest {
        reach: requests::reach(&args.reach),
        since,
        episodes: args.episodes as usize,
    };
    let report = Work::run(&req, session.interrupt()).map_err(Stop::bad_input)?;
    let exit = match report.nodes.iter().all(|n| n.status == "ok") {
        true => Exit::Ok,
        false => Exit::NodeDidNotAnswer,
    };
    session.finish(&report, exit)
}
