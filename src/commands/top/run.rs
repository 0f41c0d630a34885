//! `pveprobe top`: the arguments made into a request, then the intervals
//! written as they come: redrawn on a terminal (q quits, the terminal
//! restored on every way out), else one after another; with `--record`
//! each also added to a file as a line of JSON.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::IsTerminal as _;
use std::time::Duration;

use super::args::TopArgs;
use super::terminal::{self, Terminal};
use super::{TopError, TopRequest, TopRun};
use crate::commands::common::session::{Frame, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::nodeio::read::Sources;
use crate::nodeio::sample::TopSample;
use crate::output::{self, Destination, Document as _, Format};

/// How each interval is written.
struct Writer<'a> {
    args: &'a TopArgs,
    terminal: bool,
    first: bool,
    /// Whether the CSV needs its header (the session's `--append` check).
    csv_header: bool,
}

impl Writer<'_> {
    fn emit(&mut self, s: &TopSample) -> Result<(), TopError> {
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
        let format = self.args.output_format;
        let text = match format {
            Format::Text if self.terminal => format!("{}{}", terminal::CLEAR, s.text()),
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
        match (&self.args.output, format.is_metrics()) {
            (Some(path), true) => output::replace(path, &text),
            (output, _) => output::write(
                Destination::of(output.as_deref(), !self.first || self.args.append),
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

/// `pveprobe top`.
pub fn top(args: &TopArgs) -> Ended {
    // The format, `--append`'s CSV header (only CSV has one: the other
    // formats add to the file as they are), the `--plot` file (opened
    // first: one that cannot be written costs no sampling) and the
    // signal flag, as every command's.
    let session = Session::start::<TopSample>(Frame {
        append: args.append && args.output_format == Format::Csv,
        plot: args.plot.as_deref(),
        signals: true,
        ..Frame::new("top", args.output_format, args.output.as_deref())
    })?;
    if let Some(from) = &args.from {
        return plot_record(session, from);
    }
    let terminal = args.output_format == Format::Text
        && args.output.is_none()
        && std::io::stdout().is_terminal();
    let req = TopRequest {
        sources: Sources {
            qmp_dir: args.qmp_dir.clone(),
            pve_dir: args.pve_dir.clone(),
            jobs: crate::nodeio::jobs::JobSources {
                tasks_file: args.tasks_file.clone(),
                replication_state: args.replication_state.clone(),
                zfs_kstat: args.zfs_kstat.clone(),
                ceph_conf: args.pve_dir.join("ceph.conf"),
            },
            ..crate::nodeio::default_sources()
        },
        node: crate::pvestorage::node_name(),
        interval: Duration::from_secs_f64(args.interval),
        // Not on a terminal: one interval, unless asked for more (or
        // recording, or drawing: until stopped).
        count: args.count.or((!terminal
            && args.seconds.is_none()
            && args.record.is_none()
            && args.plot.is_none())
        .then_some(1)),
        seconds: args.seconds.map(Duration::from_secs),
    };
    let keys = if terminal { Terminal::take() } else { None };
    let writer = RefCell::new(Writer {
        args,
        terminal,
        first: true,
        csv_header: session.csv_header,
    });
    let kept: RefCell<VecDeque<TopSample>> = Default::default();
    let each = |s: &TopSample| {
        if args.plot.is_some() {
            let mut kept = kept.borrow_mut();
            if kept.len() == PLOTTED {
                kept.pop_front();
            }
            kept.push_back(s.clone());
        }
        writer.borrow_mut().emit(s)
    };
    let run = TopRun {
        req: &req,
        quit: &|| keys.as_ref().is_some_and(Terminal::quit),
        each: &each,
    };
    let ran = Work::run(&run, session.interrupt());
    drop(keys);
    ran.map_err(Stop::not_measured)?;
    let exit = match session.interrupt().signal() {
        Some(sig) => Exit::Signal(sig),
        None => Exit::Ok,
    };
    let picture = args
        .plot
        .is_some()
        .then(|| super::plot::picture(kept.borrow_mut().make_contiguous()));
    session.finish_picture(picture, exit)
}
