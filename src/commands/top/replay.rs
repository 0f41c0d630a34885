//! The record read back: `--between`'s intervals, `--at`'s moment and the
//! record around it (stepped through on a terminal), `--worst`'s
//! episodes. Read-only; the store is read as the recorder writes it (a
//! frame being written is left out).

use std::path::PathBuf;
use std::time::Duration;

use super::tui::{Key, Tui};
use super::worst::{self, WorstReport};
use crate::commands::common::work::Work;
use crate::nodeio::recorded;
use crate::nodeio::sample::TopSample;
use crate::store::StoreError;
use crate::store::read::{Scanned, Store};
use crate::sys::interrupt::Interrupt;

/// Why the record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{}: no record here{}",
        .0.display(),
        if *.1 { "" } else { " (no recorder runs: systemctl enable --now pveprobe-record starts one; --from DIR reads another store)" }
    )]
    Empty(PathBuf, bool),
    #[error("no interval recorded between {0} and {1}")]
    NothingBetween(String, String),
}

/// A window of the record.
#[derive(Debug, Clone)]
pub struct ReplayRequest {
    pub dir: PathBuf,
    pub from_us: i64,
    pub to_us: i64,
}

/// The window's intervals, in the order they were recorded, and what the
/// reading had to say.
#[derive(Debug, Default)]
pub struct Replayed {
    pub samples: Vec<TopSample>,
    pub notes: Vec<String>,
}

fn scan(dir: &std::path::Path, from_us: i64, to_us: i64) -> Result<Scanned, ReplayError> {
    let store = Store::at(dir);
    if !store.exists() {
        return Err(ReplayError::Empty(
            dir.to_path_buf(),
            crate::store::recorder_runs(dir),
        ));
    }
    Ok(store.scan(from_us, to_us)?)
}

fn opened(scanned: &Scanned, indexes: impl Iterator<Item = usize>) -> Replayed {
    let mut out = Replayed {
        notes: scanned.notes.clone(),
        ..Replayed::default()
    };
    for i in indexes {
        match scanned.payload(i).and_then(|p| recorded::decode(&p)) {
            Ok(s) => out.samples.push(s),
            Err(why) => out.notes.push(why),
        }
    }
    out
}

impl Work for ReplayRequest {
    type Report = Replayed;
    type Error = ReplayError;

    fn run(&self, _: &Interrupt) -> Result<Replayed, ReplayError> {
        let scanned = scan(&self.dir, self.from_us, self.to_us)?;
        if scanned.entries.is_empty() {
            let t = |us| {
                super::when::local(
                    &jiff::Timestamp::from_microsecond(us)
                        .map(|t| t.to_string())
                        .unwrap_or_default(),
                )
            };
            return Err(ReplayError::NothingBetween(t(self.from_us), t(self.to_us)));
        }
        Ok(opened(&scanned, 0..scanned.entries.len()))
    }
}

/// The record around a moment, for `--at`: the whole store's index, and
/// where the moment is in it.
pub struct Around {
    pub scanned: Scanned,
    pub at: usize,
}

impl Around {
    /// The record of `dir`, and the first interval ending at or after
    /// `at_us` (or the last).
    pub fn read(dir: &std::path::Path, at_us: i64) -> Result<Around, ReplayError> {
        let scanned = scan(dir, i64::MIN, i64::MAX)?;
        let n = scanned.entries.len();
        if n == 0 {
            return Err(ReplayError::Empty(dir.to_path_buf(), true));
        }
        let at = scanned
            .entries
            .iter()
            .position(|e| e.time_us >= at_us)
            .unwrap_or(n - 1);
        Ok(Around { scanned, at })
    }

    pub fn sample(&self, i: usize) -> Result<TopSample, String> {
        self.scanned.payload(i).and_then(|p| recorded::decode(&p))
    }

    /// The interval an hour (`hours`) from `i`.
    pub fn hours_from(&self, i: usize, hours: i64) -> usize {
        let e = &self.scanned.entries;
        let t = e[i].time_us + hours * 3_600_000_000;
        if hours >= 0 {
            e.iter().position(|k| k.time_us >= t).unwrap_or(e.len() - 1)
        } else {
            e.iter().rposition(|k| k.time_us <= t).unwrap_or(0)
        }
    }

    /// The start of the next bad episode after `i` (wrapping to the first).
    pub fn next_worst(&self, i: usize) -> Option<usize> {
        let mut starts: Vec<usize> = worst::episodes(&self.scanned)
            .into_iter()
            .map(|(r, _)| r.start)
            .collect();
        starts.sort();
        starts.iter().find(|s| **s > i).or(starts.first()).copied()
    }
}

/// `--at` on a terminal: the view at that moment, stepped through with the
/// keys until q or a signal.
pub fn step_through(around: &Around, tui: &mut Tui, interrupt: &Interrupt) {
    let last = around.scanned.entries.len() - 1;
    let mut i = around.at;
    let mut shown = None;
    let mut sample = None;
    loop {
        if shown != Some(i) {
            sample = around.sample(i).ok();
            shown = Some(i);
            redraw(tui, sample.as_ref(), i, last);
        }
        if interrupt.signal().is_some() {
            return;
        }
        let Some(k) = tui.key(Duration::from_millis(100)) else {
            continue;
        };
        if tui.state.apply(k, false) {
            redraw(tui, sample.as_ref(), i, last);
            continue;
        }
        i = match k {
            Key::Quit => return,
            Key::Left => i.saturating_sub(1),
            Key::Right => (i + 1).min(last),
            Key::PageUp => around.hours_from(i, -1),
            Key::PageDown => around.hours_from(i, 1),
            Key::Worst => around.next_worst(i).unwrap_or(i),
            Key::Up | Key::Down | Key::Sort | Key::GuestPanel(_) => i,
        };
    }
}

/// The replayed view of interval `i` of `last + 1`.
fn redraw(tui: &mut Tui, sample: Option<&TopSample>, i: usize, last: usize) {
    let footer = [format!(
        "recorded interval {} of {} · left/right one interval · PgUp/PgDn an hour · w next bad moment · i c m n panels · s sorts · up/down scroll · q quits",
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

/// `--worst`'s window.
#[derive(Debug, Clone)]
pub struct WorstRequest {
    pub dir: PathBuf,
    pub node: String,
    pub since_us: i64,
    pub until_us: i64,
    pub episodes: usize,
}

impl Work for WorstRequest {
    type Report = WorstReport;
    type Error = ReplayError;

    fn run(&self, _: &Interrupt) -> Result<WorstReport, ReplayError> {
        let scanned = scan(&self.dir, self.since_us, self.until_us)?;
        Ok(worst::report(
            &scanned,
            &self.node,
            self.since_us,
            self.until_us,
            self.episodes,
        ))
    }
}
