//! `pveprobe record`: top's intervals, made by top's own run (the same
//! sampler, so what is replayed is what the live view would have shown),
//! each kept in the store as it ends, and each written to the
//! node_exporter textfile when asked. What the store has to say (a pause,
//! a resume, a shard dropped, a torn end cut) is said once, as it happens.

use std::cell::RefCell;
use std::path::PathBuf;

use super::{TopError, TopRequest, TopRun};
use crate::commands::common::work::Work;
use crate::nodeio::recorded;
use crate::nodeio::sample::TopSample;
use crate::output::metrics::servers::{Payload, Servers, ServersError};
use crate::output::progress::Progress;
use crate::store::{self, Appended, Limits, StoreError};
use crate::sys::interrupt::Interrupt;

/// What `record` does.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    /// The sampling, as top's (its `count` the run's).
    pub top: TopRequest,
    pub dir: PathBuf,
    pub limits: Limits,
    pub textfile: Option<PathBuf>,
    /// Send each interval to status.cfg's metric servers too.
    pub metric_servers: bool,
    pub progress: Progress,
}

/// What a recorder did, said when it stops.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RecordReport {
    pub dir: PathBuf,
    pub intervals: u64,
    pub written: u64,
    /// Intervals not written while the store was paused.
    pub paused: u64,
}

/// Why a recorder stopped.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Interval(#[from] TopError),
    #[error("--metric-servers: {0}")]
    Servers(#[from] ServersError),
}

impl Work for RecordRequest {
    type Report = RecordReport;
    type Error = RecordError;

    fn run(&self, interrupt: &Interrupt) -> Result<RecordReport, RecordError> {
        let say = |n: &str| self.progress.say(&format!("pveprobe record: {n}"));
        let servers = match self.metric_servers {
            true => {
                let src = &self.top.sources;
                let (servers, notes) = Servers::from_pve_dir(&src.host, &src.pve_dir)?;
                notes.iter().for_each(|n| say(n));
                match servers.describe() {
                    d if d.is_empty() => {
                        say("no metric server enabled in status.cfg: none is sent to")
                    }
                    d => say(&format!("sending each interval to {}", d.join(", "))),
                }
                Some(RefCell::new(servers))
            }
            false => None,
        };
        let writer = RefCell::new(store::Writer::open(&self.dir, self.limits)?);
        let report = RefCell::new(RecordReport {
            dir: self.dir.clone(),
            ..RecordReport::default()
        });
        let say_notes = |w: &mut store::Writer| {
            for n in w.notes.drain(..) {
                self.progress.say(&format!("pveprobe record: {n}"));
            }
        };
        say_notes(&mut writer.borrow_mut());
        let each = |s: &TopSample| -> Result<(), TopError> {
            let (summary, payload) = recorded::encode(s);
            let wall = s
                .timestamp
                .parse::<jiff::Timestamp>()
                .unwrap_or_else(|_| jiff::Timestamp::now())
                .as_microsecond();
            let mut w = writer.borrow_mut();
            let appended = w.append(wall, summary, &payload);
            say_notes(&mut w);
            let mut r = report.borrow_mut();
            r.intervals += 1;
            match appended.map_err(|e| TopError(e.to_string()))? {
                Appended::Written { .. } => r.written += 1,
                Appended::Paused => r.paused += 1,
            }
            if let Some(servers) = &servers {
                let influx = s.influx();
                let graphite = |root: &str| s.graphite(root);
                let notes = servers.borrow_mut().send(&Payload {
                    influx: &influx,
                    graphite: &graphite,
                });
                notes.iter().for_each(|n| say(n));
            }
            if let Some(path) = &self.textfile {
                crate::output::replace(path, &s.prometheus())
                    .map_err(|e| TopError(e.to_string()))?;
            }
            Ok(())
        };
        let run = TopRun {
            req: &self.top,
            quit: &|| false,
            each: &each,
        };
        run.run(interrupt)?;
        Ok(report.into_inner())
    }
}

impl crate::output::Document for RecordReport {
    const FORMATS: &'static [crate::output::Format] = &[crate::output::Format::Text];

    fn text(&self) -> String {
        format!(
            "pveprobe record: {} interval(s) recorded in {}{}\n",
            self.written,
            self.dir.display(),
            match self.paused {
                0 => String::new(),
                n => format!(" ({n} not, while the store was paused)"),
            }
        )
    }

    fn csv(&self, _header: bool) -> String {
        String::new()
    }
}
