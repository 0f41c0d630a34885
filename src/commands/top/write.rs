//! How `top` writes its intervals as they come (live, or replayed without
//! a terminal): each rendered by `output::render` as the document it is,
//! one after another on stdout or in `--output`, the metrics formats'
//! file replaced whole with the last; and with `--record DIR`, each also
//! kept in the store there, as `record` keeps it.

use std::path::PathBuf;

use crate::nodeio::recorded;
use crate::nodeio::sample::TopSample;
use crate::output::progress::Progress;
use crate::output::{self, Destination, Format};
use crate::store::{self, StoreError};

/// An interval that could not be written, or kept.
#[derive(Debug, thiserror::Error)]
pub enum IntervalError {
    #[error("{0}")]
    Output(String),
    #[error("--record: {0}")]
    Store(#[from] StoreError),
}

/// Where and how each interval goes.
pub struct IntervalWriter {
    pub format: Format,
    pub output: Option<PathBuf>,
    /// `--append`: the first interval added to `output` too.
    pub append: bool,
    /// Whether the CSV needs its header (the session's `--append` check).
    pub csv_header: bool,
    /// `--record DIR`'s store, and who says its notes.
    pub store: Option<(store::Writer, Progress)>,
    pub first: bool,
}

impl IntervalWriter {
    /// `--record`: the interval kept in the store, what the store had to
    /// say said.
    pub fn keep(&mut self, s: &TopSample) -> Result<(), IntervalError> {
        if let Some((w, progress)) = &mut self.store {
            let kept = recorded::keep(w, s);
            w.notes.drain(..).for_each(|n| progress.say(&n));
            kept?;
        }
        Ok(())
    }

    /// The interval kept and written.
    pub fn emit(&mut self, s: &TopSample) -> Result<(), IntervalError> {
        self.keep(s)?;
        let mut text = output::render(s, self.format, self.first && self.csv_header);
        if self.format == Format::Text {
            // A blank line between the intervals.
            text.push('\n');
        }
        // A metrics file holds the last interval, replaced whole (a
        // collector reading it meanwhile sees one interval, never a part);
        // the others grow.
        match (&self.output, self.format.is_metrics()) {
            (Some(path), true) => output::replace(path, &text),
            (output, _) => output::write(
                Destination::of(output.as_deref(), !self.first || self.append),
                &text,
            ),
        }
        .map_err(|e| IntervalError::Output(e.to_string()))?;
        self.first = false;
        Ok(())
    }
}
