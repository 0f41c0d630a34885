//! `pveprobe top`: the arguments made into a request, then the intervals
//! written as they come: redrawn on a terminal (q quits, the terminal
//! restored on every way out), else one after another; with `--record`
//! each also added to a file as a line of JSON.

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::args::TopArgs;
use super::sample::TopSample;
use super::{TopRequest, read::Sources};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::output::{self, Destination, Format};

/// The terminal's stdin without line editing or echo while the view runs
/// (Ctrl-C still signals); `q` asks to stop. Restored when dropped.
struct Keys {
    saved: Option<nix::sys::termios::Termios>,
    quit: Arc<AtomicBool>,
}

impl Keys {
    fn start() -> Keys {
        use nix::sys::termios::{self, LocalFlags, SetArg};
        let quit = Arc::new(AtomicBool::new(false));
        let stdin = std::io::stdin();
        let saved = if stdin.is_terminal() {
            termios::tcgetattr(&stdin).ok().inspect(|t| {
                let mut raw = t.clone();
                raw.local_flags
                    .remove(LocalFlags::ICANON | LocalFlags::ECHO);
                let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &raw);
            })
        } else {
            None
        };
        if saved.is_some() {
            let flag = Arc::clone(&quit);
            std::thread::spawn(move || {
                use std::io::Read as _;
                let mut byte = [0u8; 1];
                while let Ok(1) = std::io::stdin().lock().read(&mut byte) {
                    if matches!(byte[0], b'q' | b'Q') {
                        flag.store(true, Ordering::Relaxed);
                        return;
                    }
                }
            });
        }
        Keys { saved, quit }
    }

    fn quit(&self) -> bool {
        self.quit.load(Ordering::Relaxed)
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        if let Some(t) = &self.saved {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                t,
            );
        }
    }
}

/// How each interval is written.
struct Writer<'a> {
    args: &'a TopArgs,
    terminal: bool,
    first: bool,
}

impl Writer<'_> {
    fn emit(&mut self, s: &TopSample) -> Result<(), String> {
        if let Some(r) = &self.args.record {
            output::write(
                Destination::File {
                    path: r,
                    append: true,
                },
                &format!("{}\n", output::json(s, false).trim_end()),
            )
            .map_err(|e| e.to_string())?;
        }
        let format = self.args.output_format;
        let text = match format {
            Format::Text if self.terminal => format!("\x1b[H\x1b[2J{}", s.text()),
            Format::Text => format!("{}\n", s.text()),
            Format::Json => format!("{}\n", output::json(s, false).trim_end()),
            Format::JsonPretty => format!("{}\n", output::json(s, true).trim_end()),
            Format::Csv => s.csv(self.first && !self.has_header()),
            Format::Influx => s.influx(),
            Format::Prometheus => s.prometheus(),
        };
        // A metrics file holds the last interval; the others grow.
        let append = if format.is_metrics() {
            false
        } else {
            !self.first || self.args.append
        };
        output::write(Destination::of(self.args.output.as_deref(), append), &text)
            .map_err(|e| e.to_string())?;
        self.first = false;
        Ok(())
    }

    /// Whether `--append`'s file already starts with the CSV header.
    fn has_header(&self) -> bool {
        match (&self.args.output, self.args.append) {
            (Some(path), true) => std::fs::read_to_string(path)
                .map(|t| t.starts_with(&super::render::CSV_HEADER.join(",")))
                .unwrap_or(false),
            _ => false,
        }
    }
}

/// The intervals `--plot` draws at most (the last ones).
const PLOTTED: usize = 3600;

/// `--plot FILE --from RECORD`: the record drawn, nothing sampled.
fn plot_record(plot: &std::path::Path, from: &std::path::Path) -> Ended {
    let file = crate::output::plot::SvgFile::create(plot).map_err(Stop::bad_input)?;
    let text = std::fs::read_to_string(from).map_err(|e| {
        Stop::bad_input(format!(
            "{}: {}",
            from.display(),
            crate::error::describe(&e)
        ))
    })?;
    let samples = super::plot::read_record(&text)
        .map_err(|e| Stop::bad_input(format!("{}: {e}", from.display())))?;
    save(file, &samples)
}

/// Draws `samples` into `file`.
fn save(file: crate::output::plot::SvgFile, samples: &[TopSample]) -> Ended {
    let path = file
        .save(super::plot::picture(samples))
        .map_err(Stop::not_measured)?;
    eprintln!("pveprobe: plot written to {}", path.display());
    Ok(Exit::Ok)
}

/// `pveprobe top`.
pub fn top(args: &TopArgs) -> Ended {
    if let (Some(plot), Some(from)) = (&args.plot, &args.from) {
        return plot_record(plot, from);
    }
    // Opened first: a FILE that cannot be written costs no sampling.
    let plot_file = args
        .plot
        .as_deref()
        .map(crate::output::plot::SvgFile::create)
        .transpose()
        .map_err(Stop::bad_input)?;
    let terminal = args.output_format == Format::Text
        && args.output.is_none()
        && std::io::stdout().is_terminal();
    let req = TopRequest {
        sources: Sources {
            qmp_dir: args.qmp_dir.clone(),
            pve_dir: args.pve_dir.clone(),
            jobs: super::jobs::JobSources {
                tasks_file: args.tasks_file.clone(),
                replication_state: args.replication_state.clone(),
                zfs_kstat: args.zfs_kstat.clone(),
                ceph_conf: args.pve_dir.join("ceph.conf"),
            },
            ..super::default_sources()
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
    let interrupt = crate::sys::interrupt::Interrupt::install()
        .map_err(|e| Stop::not_measured(format!("cannot install signal handlers: {e}")))?;
    let keys = terminal.then(Keys::start);
    let mut writer = Writer {
        args,
        terminal,
        first: true,
    };
    let mut kept: std::collections::VecDeque<TopSample> = Default::default();
    let ran = super::run(
        &req,
        &interrupt,
        &|| keys.as_ref().is_some_and(Keys::quit),
        &mut |s| {
            if plot_file.is_some() {
                if kept.len() == PLOTTED {
                    kept.pop_front();
                }
                kept.push_back(s.clone());
            }
            writer.emit(s)
        },
    );
    drop(keys);
    ran.map_err(Stop::not_measured)?;
    if let Some(file) = plot_file {
        save(file, kept.make_contiguous())?;
    }
    match interrupt.signal() {
        Some(sig) => Ok(Exit::Signal(sig)),
        None => Ok(Exit::Ok),
    }
}
