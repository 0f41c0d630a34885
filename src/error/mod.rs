//! The errors every layer shares, typed: a measurement's [`ProbeError`],
//! a PATH that cannot be probed ([`PathError`]), an I/O error in words
//! ([`describe`]); and [`Stop`], what ends a command, built only by a
//! command's `run.rs` from its work's own typed error (each layer and
//! command keeps its error type beside its code) and printed once, by
//! `main`, under the name it runs as. [`exit`] has the exit statuses, one
//! enum. (`anyhow` serves only the build tool examples/gen-docs.rs, a
//! dev-dependency.)

pub mod exit;

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
    #[error("{context}: {}", describe(source))]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    #[error("{0}")]
    Unavailable(String),
    /// Something the probe made could not be removed (said how and where).
    #[error("{0}")]
    LeftBehind(String),
}

impl ProbeError {
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<nix::Error> for ProbeError {
    fn from(err: nix::Error) -> Self {
        Self::io("system call failed", io::Error::from(err))
    }
}

/// An I/O error as `strerror` words, without Rust's "(os error N)" suffix.
pub fn describe(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => nix::errno::Errno::from_raw(code).desc().to_string(),
        None => err.to_string(),
    }
}

/// Attaches a description to I/O results, for `?` inside probes.
pub trait IoContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, ProbeError>;
}

impl<T, E: Into<io::Error>> IoContext<T> for Result<T, E> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, ProbeError> {
        self.map_err(|e| ProbeError::io(what(), e.into()))
    }
}

/// PATH could not be probed at all (exit status 2, nothing created).
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("{}: {}", path.display(), describe(source))]
    Inaccessible {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: not a directory", path.display())]
    NotADirectory { path: PathBuf },
}

/// What ends a command before it could finish: the message, which `main`
/// prints once as `pveprobe: MESSAGE`, and the exit status it carries.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Stop {
    pub exit: crate::error::exit::Exit,
    pub message: String,
}

impl Stop {
    /// Bad usage or input, found before anything was measured (status 2).
    pub fn bad_input(message: impl std::fmt::Display) -> Self {
        Self::new(crate::error::exit::Exit::BadInput, message)
    }

    /// Something could not be measured or written (status 1).
    pub fn not_measured(message: impl std::fmt::Display) -> Self {
        Self::new(crate::error::exit::Exit::NotMeasured, message)
    }

    pub fn new(exit: crate::error::exit::Exit, message: impl std::fmt::Display) -> Self {
        Self {
            exit,
            message: message.to_string(),
        }
    }

    /// The line `main` prints for it, as program `name` says it: `NAME:
    /// MESSAGE`; pveperf's usage line bare, as pveperf prints it; nothing
    /// for an empty message (pveperf interrupted while it waited: it has
    /// no words for waiting).
    pub fn line(&self, name: &str) -> Option<String> {
        match self.exit {
            _ if self.message.is_empty() => None,
            crate::error::exit::Exit::PveperfUsage if self.message.starts_with("usage: ") => {
                Some(self.message.clone())
            }
            _ => Some(format!("{name}: {}", self.message)),
        }
    }
}

/// A command's end: its exit status, or a [`Stop`] to print.
pub type Ended = Result<crate::error::exit::Exit, Stop>;
