//! `pveprobe record`: the node's intervals, made by the sampler `top`
//! stands on (`nodeio::sampling`: what is replayed is what the live view
//! would have shown), each kept in the store as it ends, and each written
//! to the node_exporter textfile and sent to PVE's metric servers when
//! asked. What the store has to say (a pause, a resume, a shard dropped, a
//! torn end cut) is said once, as it happens. Nothing else is written.

pub mod args;
pub mod run;

use std::path::PathBuf;

use crate::commands::common::work::Work;
use crate::nodeio::recorded;
use crate::nodeio::sampling::Sampling;
use crate::output::metrics::servers::{Payload, Servers, ServersError};
use crate::output::progress::Progress;
use crate::store::{self, Appended, Limits, StoreError};
use crate::sys::interrupt::Interrupt;

/// What `record` does.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    /// The sampling (its `count` the run's).
    pub sampling: Sampling,
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
    #[error("{0}")]
    Textfile(String),
    #[error("--metric-servers: {0}")]
    Servers(#[from] ServersError),
}

impl RecordRequest {
    /// status.cfg's metric servers, when asked for, each said.
    fn servers(&self) -> Result<Option<Servers>, RecordError> {
        if !self.metric_servers {
            return Ok(None);
        }
        let src = &self.sampling.sources;
        let (servers, notes) = Servers::from_pve_dir(&src.host, &src.pve_dir)?;
        notes.iter().for_each(|n| self.progress.say(n));
        match servers.describe() {
            d if d.is_empty() => self
                .progress
                .say("no metric server enabled in status.cfg: none is sent to"),
            d => self
                .progress
                .say(&format!("sending each interval to {}", d.join(", "))),
        }
        Ok(Some(servers))
    }
}

impl Work for RecordRequest {
    type Report = RecordReport;
    type Error = RecordError;

    fn run(&self, interrupt: &Interrupt) -> Result<RecordReport, RecordError> {
        let mut servers = self.servers()?;
        let mut writer = store::Writer::open(&self.dir, self.limits)?;
        let mut report = RecordReport {
            dir: self.dir.clone(),
            ..RecordReport::default()
        };
        let say_notes = |w: &mut store::Writer| {
            w.notes.drain(..).for_each(|n| self.progress.say(&n));
        };
        say_notes(&mut writer);
        self.sampling.run(interrupt, None, &mut |s| {
            let appended = recorded::keep(&mut writer, s);
            say_notes(&mut writer);
            report.intervals += 1;
            match appended? {
                Appended::Written { .. } => report.written += 1,
                Appended::Paused => report.paused += 1,
            }
            if let Some(servers) = &mut servers {
                let influx = s.influx();
                let graphite = |root: &str| s.graphite(root);
                let notes = servers.send(&Payload {
                    influx: &influx,
                    graphite: &graphite,
                });
                notes.iter().for_each(|n| self.progress.say(n));
            }
            if let Some(path) = &self.textfile {
                crate::output::replace(path, &s.prometheus())
                    .map_err(|e| RecordError::Textfile(e.to_string()))?;
            }
            Ok::<(), RecordError>(())
        })?;
        Ok(report)
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
