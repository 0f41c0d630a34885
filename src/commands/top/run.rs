//! `pveprobe top`: the arguments made into a request, then the intervals
//! written as they come: redrawn on a terminal (q quits, the terminal
//! restored on every way out), else one after another; with `--record`
//! each also added to a file as a line of JSON.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::args::{RecordArgs, SourceArgs, TopArgs};
use super::cluster::ClusterWorstRequest;
use super::record::{RecordError, RecordReport, RecordRequest};
use super::replay::{Around, ReplayError, ReplayRequest, WorstRequest};
use super::tui::{Key, Tui};
use super::{TopError, TopRequest, TopRun};
use crate::commands::common::session::{Frame, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::nodeio::read::Sources;
use crate::nodeio::sample::TopSample;
use crate::output::{self, Destination, Document as _, Format};

/// How each interval is written (not on a terminal: the view draws those).
struct Writer<'a> {
    args: &'a TopArgs,
    first: bool,
    /// Whether the CSV needs its header (the session's `--append` check).
    csv_header: bool,
}

impl Writer<'_> {
    /// `--record`'s line.
    fn record(&self, s: &TopSample) -> Result<(), TopError> {
        if let Some(r) = &self.args.record {
            output::write(
                Destination::File {
                    path: r,
                    append: true,
                },
                &format!("{}\n", output::json(s, false).trim_end()),
            )
            .map_err(|e| TopError(e.to_string()))?;
        }
        Ok(())
    }

    fn emit(&mut self, s: &TopSample) -> Result<(), TopError> {
        self.record(s)?;
        let format = self.args.out.output_format;
        let text = match format {
            Format::Text => format!("{}\n", s.text()),
            Format::Json => format!("{}\n", output::json(s, false).trim_end()),
            Format::JsonPretty => format!("{}\n", output::json(s, true).trim_end()),
            Format::Csv => s.csv(self.first && self.csv_header),
            Format::Influx => s.influx(),
            Format::Prometheus => s.prometheus(),
        };
        // A metrics file holds the last interval, replaced whole (a
        // collector reading it meanwhile sees one interval, never a part);
        // the others grow.
        match (&self.args.out.output, format.is_metrics()) {
            (Some(path), true) => output::replace(path, &text),
            (output, _) => output::write(
                Destination::of(output.as_deref(), !self.first || self.args.out.append),
                &text,
            ),
        }
        .map_err(|e| TopError(e.to_string()))?;
        self.first = false;
        Ok(())
    }
}

/// The intervals `--plot` draws at most (the last ones).
const PLOTTED: usize = 3600;

/// `--plot FILE --from RECORD`: the record drawn, nothing sampled.
fn plot_record(session: Session, from: &std::path::Path) -> Ended {
    let text = std::fs::read_to_string(from).map_err(|e| {
        Stop::bad_input(format!(
            "{}: {}",
            from.display(),
            crate::error::describe(&e)
        ))
    })?;
    let samples = super::plot::read_record(&text)
        .map_err(|e| Stop::bad_input(format!("{}: {e}", from.display())))?;
    session.finish_picture(Some(super::plot::picture(&samples)), Exit::Ok)
}

/// Where the node is read: PVE's places, or the tests' stand-ins.
pub fn sources_of(args: &SourceArgs) -> Sources {
    Sources {
        qmp_dir: args.qmp_dir.clone(),
        pve_dir: args.pve_dir.clone(),
        jobs: crate::nodeio::jobs::JobSources {
            tasks_file: args.tasks_file.clone(),
            replication_state: args.replication_state.clone(),
            zfs_kstat: args.zfs_kstat.clone(),
            ceph_conf: args.pve_dir.join("ceph.conf"),
        },
        ..crate::nodeio::default_sources()
    }
}

/// The lines under the live view: its keys, and whether a recorder runs.
fn live_footer(args: &TopArgs) -> Vec<String> {
    let mut out = vec!["q quits · s sorts · up/down and PgUp/PgDn scroll the guests".to_string()];
    if !crate::store::recorder_runs(&store_dir(args)) {
        out.push(NOT_RECORDED.to_string());
    }
    out
}

/// What a live run samples, and for how long.
fn live_request(args: &TopArgs, terminal: bool) -> TopRequest {
    TopRequest {
        sources: sources_of(&args.sources),
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

/// `pveprobe top`.
pub fn top(args: &TopArgs) -> Ended {
    // The format, `--append`'s CSV header (only CSV has one: the other
    // formats add to the file as they are), the `--plot` file (opened
    // first: one that cannot be written costs no sampling) and the
    // signal flag, as every command's.
    let session = Session::start::<TopSample>(Frame {
        append: args.out.append && args.out.output_format == Format::Csv,
        signals: true,
        ..crate::commands::common::requests::frame(&args.out, "top")
    })?;
    if args.worst && args.cluster {
        return cluster_worst(args, session);
    }
    if args.worst {
        return worst(args, session);
    }
    if args.at.is_some() || args.between.is_some() {
        return replay(args, session);
    }
    match (&args.from, &args.out.plot) {
        (Some(from), Some(_)) => return plot_record(session, from),
        (Some(_), None) => {
            return Err(Stop::bad_input(
                "--from reads a record: give --at, --between, --worst, or --plot with a --record file",
            ));
        }
        _ => {}
    }
    let terminal = args.out.output_format == Format::Text
        && args.out.output.is_none()
        && std::io::stdout().is_terminal();
    let req = live_request(args, terminal);
    let tui = if terminal {
        Tui::take().map(RefCell::new)
    } else {
        None
    };
    let footer = live_footer(args);
    let writer = RefCell::new(Writer {
        args,
        first: true,
        csv_header: session.csv_header,
    });
    let kept: RefCell<VecDeque<TopSample>> = Default::default();
    let last: RefCell<Option<TopSample>> = RefCell::new(None);
    let each = |s: &TopSample| {
        if args.out.plot.is_some() {
            let mut kept = kept.borrow_mut();
            if kept.len() == PLOTTED {
                kept.pop_front();
            }
            kept.push_back(s.clone());
        }
        match &tui {
            Some(t) => {
                writer.borrow().record(s)?;
                t.borrow_mut().draw(s, &footer);
                *last.borrow_mut() = Some(s.clone());
                Ok(())
            }
            None => writer.borrow_mut().emit(s),
        }
    };
    // The view's keys, read while the run waits for the next interval.
    let quit = || {
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
    let run = TopRun {
        req: &req,
        quit: &quit,
        each: &each,
    };
    let ran = Work::run(&run, session.interrupt());
    drop(tui);
    ran.map_err(Stop::not_measured)?;
    let exit = match session.interrupt().signal() {
        Some(sig) => Exit::Signal(sig),
        None => Exit::Ok,
    };
    let picture = args
        .out
        .plot
        .is_some()
        .then(|| super::plot::picture(kept.borrow_mut().make_contiguous()));
    session.finish_picture(picture, exit)
}

/// `pveprobe record`.
pub fn record(args: &RecordArgs) -> Ended {
    let session = Session::start::<RecordReport>(Frame {
        signals: true,
        ..Frame::new("record", Format::Text, None)
    })?;
    let req = RecordRequest {
        top: TopRequest {
            sources: sources_of(&args.sources),
            node: crate::pvestorage::node_name(),
            interval: Duration::from_secs_f64(args.interval),
            count: args.count,
            seconds: None,
        },
        dir: args.dir.clone(),
        limits: crate::store::Limits {
            retain_days: args.retain_days,
            max_bytes: args.max_size,
            ..crate::store::Limits::default()
        },
        textfile: args.textfile.clone(),
        metric_servers: args.metric_servers,
        progress: crate::output::progress::Progress::new(crate::output::progress::Look::Lines),
    };
    let report = Work::run(&req, session.interrupt()).map_err(|e| match e {
        RecordError::Store(e) => Stop::not_measured(e),
        RecordError::Interval(e) => Stop::not_measured(e),
        RecordError::Servers(e) => Stop::bad_input(e),
    })?;
    let exit = match session.interrupt().signal() {
        // SIGTERM is how systemd stops the service: a clean stop.
        Some(sig) if sig != libc::SIGTERM => Exit::Signal(sig),
        _ => Exit::Ok,
    };
    session.finish(&report, exit)
}

/// What the live view says when no recorder runs.
const NOT_RECORDED: &str = "Not recorded: systemctl enable --now pveprobe-record keeps these intervals (top --worst, --at)";

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

/// The recorder's setting of its store.
const RECORD_DIR_ENV: &str = "PVEPROBE_RECORD_DIR";

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

/// `--worst`: the window's episodes.
fn worst(args: &TopArgs, session: Session) -> Ended {
    if args.out.output_format.is_metrics() {
        return Err(Stop::bad_input(
            "--worst writes text, json, json-pretty or csv (its episodes are no metrics)",
        ));
    }
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
/// intervals written as the live view writes them; `--at T` on a
/// terminal: stepped through.
fn replay(args: &TopArgs, session: Session) -> Ended {
    let now = jiff::ZonedDateTime::now();
    let dir = store_dir(args);
    let terminal = args.out.output_format == Format::Text
        && args.out.output.is_none()
        && std::io::stdout().is_terminal();
    // Stepped through where the keys can be read (stdin a terminal too);
    // else, as in a script, the interval written.
    let at_us = args.at.as_ref().map(|at| when(at, &now)).transpose()?;
    let tui = at_us.filter(|_| terminal).and_then(|_| Tui::take());
    let samples = match (at_us, &args.between) {
        (Some(at_us), _) if tui.is_some() => {
            let tui = tui.expect("taken above");
            return step_through(&dir, at_us, tui, session);
        }
        (Some(at_us), _) => {
            let around = Around::read(&dir, at_us).map_err(replay_error)?;
            let s = around.sample(around.at).map_err(Stop::bad_input)?;
            for n in &around.scanned.notes {
                eprintln!("pveprobe: note: {n}");
            }
            vec![s]
        }
        (None, Some(ab)) => {
            let req = ReplayRequest {
                dir,
                from_us: when(&ab[0], &now)?,
                to_us: when(&ab[1], &now)?,
            };
            let got = Work::run(&req, session.interrupt()).map_err(replay_error)?;
            for n in &got.notes {
                eprintln!("pveprobe: note: {n}");
            }
            got.samples
        }
        (None, None) => unreachable!("replay is asked for by --at or --between"),
    };
    let mut writer = Writer {
        args,
        first: true,
        csv_header: session.csv_header,
    };
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

/// `--at` on a terminal: the view at that moment, stepped through with the
/// keys until q or a signal.
fn step_through(dir: &Path, at_us: i64, mut tui: Tui, session: Session) -> Ended {
    let around = Around::read(dir, at_us).map_err(replay_error)?;
    let last = around.scanned.entries.len() - 1;
    let mut i = around.at;
    let mut shown = None;
    let mut sample = None;
    loop {
        if shown != Some(i) {
            sample = around.sample(i).ok();
            shown = Some(i);
            redraw(&mut tui, sample.as_ref(), i, last);
        }
        if session.interrupt().signal().is_some() {
            break;
        }
        let Some(k) = tui.key(Duration::from_millis(100)) else {
            continue;
        };
        if tui.state.apply(k, false) {
            redraw(&mut tui, sample.as_ref(), i, last);
            continue;
        }
        i = match k {
            Key::Quit => break,
            Key::Left => i.saturating_sub(1),
            Key::Right => (i + 1).min(last),
            Key::PageUp => around.hours_from(i, -1),
            Key::PageDown => around.hours_from(i, 1),
            Key::Worst => around.next_worst(i).unwrap_or(i),
            Key::Up | Key::Down | Key::Sort => i,
        };
    }
    drop(tui);
    let exit = match session.interrupt().signal() {
        Some(sig) => Exit::Signal(sig),
        None => Exit::Ok,
    };
    session.finish_picture(None, exit)
}

/// The replayed view of interval `i` of `last + 1`.
fn redraw(tui: &mut Tui, sample: Option<&TopSample>, i: usize, last: usize) {
    let footer = [format!(
        "recorded interval {} of {} · left/right one interval · PgUp/PgDn an hour · w next bad moment · s sorts · up/down scroll · q quits",
        i + 1,
        last + 1
    )];
    match sample {
        Some(s) => tui.draw(s, &footer),
        None => tui.draw(
            &TopSample::default(),
            &["(this interval could not be read)".into()],
        ),
    }
}

/// `--worst --cluster`: every node's episodes, ranked together.
fn cluster_worst(args: &TopArgs, session: Session) -> Ended {
    if args.out.output_format.is_metrics() {
        return Err(Stop::bad_input(
            "--worst writes text, json, json-pretty or csv (its episodes are no metrics)",
        ));
    }
    let since = args.since.clone().unwrap_or_else(|| "24h".into());
    super::when::span(&since).map_err(Stop::bad_input)?;
    let req = ClusterWorstRequest {
        reach: crate::commands::common::requests::reach(&args.reach),
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
