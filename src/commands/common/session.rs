//! What every command needs around its work, in one place: the format
//! checked against what its document renders, the `--append` file's CSV
//! header, the `--plot` file opened before anything runs, the signal
//! handlers and the host-wide lock, and at the end the document written
//! and its picture saved, with one policy for a step that fails after
//! the work: it is said, and it fails a command that had ended well.
//!
//! A command's `run.rs` makes a [`Frame`] from its arguments,
//! [`Session::start`]s it, runs the command's own code with the session's
//! [`Interrupt`], and hands the document to [`Session::finish`].

use std::io::IsTerminal;
use std::path::Path;

use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::output::csv;
use crate::output::plot::SvgFile;
use crate::output::progress::Progress;
use crate::output::{self, Destination, Document, Format};
use crate::sys::interrupt::Interrupt;
use crate::sys::lock::{self, Busy, HostLock, LockError};

/// The host-wide lock a command takes: one measurement at a time per host.
pub struct LockAs {
    /// Who this is, for a second probe's message.
    pub me: String,
    pub busy: Busy,
    /// What an interrupt while waiting leaves: "nothing was measured".
    pub nothing_done: &'static str,
}

/// What a command asks of its session.
pub struct Frame<'a> {
    /// `pveprobe compare`, for messages.
    pub command: &'static str,
    pub format: Format,
    pub output: Option<&'a Path>,
    pub append: bool,
    pub plot: Option<&'a Path>,
    /// Signal handlers: SIGINT, SIGTERM and SIGHUP raise a flag (always
    /// with a lock).
    pub signals: bool,
    pub lock: Option<LockAs>,
}

impl<'a> Frame<'a> {
    /// A command that writes `format` to `output` (stdout when `None`) and
    /// needs nothing else.
    pub fn new(command: &'static str, format: Format, output: Option<&'a Path>) -> Self {
        Frame {
            command,
            format,
            output,
            append: false,
            plot: None,
            signals: false,
            lock: None,
        }
    }
}

/// A command under way.
pub struct Session<'a> {
    format: Format,
    output: Option<&'a Path>,
    append: bool,
    plot_file: Option<SvgFile>,
    /// Whether the CSV needs its header (not when appending to a file that has it).
    pub csv_header: bool,
    interrupt: Option<Interrupt>,
    pub host_lock: Option<HostLock>,
}

impl<'a> Session<'a> {
    /// Settles everything that needs no work, in this order: the format
    /// (a usage error), the `--append` file's header, the `--plot` file,
    /// the signal handlers, then the host lock (waiting, or refusing with
    /// `--no-wait`). Nothing of the command has run when it fails.
    pub fn start<D: Document>(frame: Frame<'a>) -> Result<Self, Stop> {
        output::check::<D>(frame.format, frame.command).map_err(Stop::bad_input)?;
        let csv_header = match D::csv_header() {
            Some(header) => csv::needs_header(frame.format, frame.output, frame.append, &header)
                .map_err(Stop::bad_input)?,
            None if frame.append => {
                return Err(Stop::bad_input(format!(
                    "--append: {} adds no rows to a file; write it whole with --output",
                    frame.command
                )));
            }
            None => true,
        };
        if frame.plot.is_some() && !D::PICTURE {
            return Err(Stop::bad_input(format!(
                "--plot: {} draws no picture",
                frame.command
            )));
        }
        // Opened before the work, so a FILE that cannot be written costs
        // no measurement (exit status 2).
        let plot_file = frame
            .plot
            .map(SvgFile::create)
            .transpose()
            .map_err(Stop::bad_input)?;
        let interrupt = if frame.signals || frame.lock.is_some() {
            Some(Interrupt::install().map_err(|err| {
                Stop::not_measured(format!("cannot install signal handlers: {err}"))
            })?)
        } else {
            None
        };
        let host_lock = match (&frame.lock, &interrupt) {
            (Some(how), Some(interrupt)) => Some(take_lock(how, interrupt)?),
            _ => None,
        };
        Ok(Session {
            format: frame.format,
            output: frame.output,
            append: frame.append,
            plot_file,
            csv_header,
            interrupt,
            host_lock,
        })
    }

    /// The signal flag (installed by every frame that asks for signals or a lock).
    pub fn interrupt(&self) -> &Interrupt {
        self.interrupt
            .as_ref()
            .expect("a frame that runs work asks for signals")
    }

    /// Writes `doc` and saves its picture; `exit` is the command's status
    /// when both work.
    pub fn finish<D: Document>(mut self, doc: &D, exit: Exit) -> Ended {
        drop(self.host_lock.take());
        let for_person =
            self.format == Format::Text && self.output.is_none() && std::io::stdout().is_terminal();
        let text = if for_person {
            doc.text_for_person()
        } else {
            output::render(doc, self.format, self.csv_header)
        };
        output::write(Destination::of(self.output, self.append), &text)
            .map_err(Stop::not_measured)?;
        self.finish_picture(doc.picture(), exit)
    }

    /// Saves the picture of a command that wrote its output as it went
    /// (`top`'s intervals); `exit` is its status when that works.
    pub fn finish_picture(
        mut self,
        picture: Option<Result<String, crate::output::plot::PlotError>>,
        exit: Exit,
    ) -> Ended {
        drop(self.host_lock.take());
        let ended = Ok(exit);
        match (self.plot_file, picture) {
            (Some(file), Some(drawn)) => match file.save(drawn) {
                Ok(path) => {
                    Progress::default().say(&format!("plot written to {}", path.display()));
                    ended
                }
                Err(why) => also_failed(ended, why),
            },
            _ => ended,
        }
    }
}

/// The host-wide lock, or why not.
fn take_lock(how: &LockAs, interrupt: &Interrupt) -> Result<HostLock, Stop> {
    let quiet = matches!(how.busy, Busy::WaitQuietly);
    let held = lock::acquire(
        lock::path_from_env().as_deref(),
        &how.me,
        how.busy,
        interrupt,
        &mut |s| {
            if !quiet {
                Progress::default().say(s)
            }
        },
    )
    .map_err(|err| match err {
        LockError::Interrupted(sig) => Stop::new(
            Exit::Signal(sig),
            format!(
                "interrupted while waiting for another probe; {}",
                how.nothing_done
            ),
        ),
        err => Stop::bad_input(err),
    })?;
    if let (Some(note), false) = (&held.note, quiet) {
        Progress::default().say(note);
    }
    Ok(held)
}

/// A command's end when a later step failed too: that failure, when the
/// command had ended well, else the first end (the later failure said on
/// stderr beside it).
pub fn also_failed(ended: Ended, why: impl std::fmt::Display) -> Ended {
    match ended {
        Ok(Exit::Ok) => Err(Stop::not_measured(why)),
        first => {
            Progress::default().say(&why.to_string());
            first
        }
    }
}
