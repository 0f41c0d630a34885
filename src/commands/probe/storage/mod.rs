//! `--storage ID|all`: the probe on PVE storage IDs. A path storage is
//! probed in its directory after PVE's own checks; a volume storage
//! through a scratch volume allocated, checked, prefilled, measured and
//! freed on every way out (success, failure, Ctrl-C, SIGTERM, SIGHUP);
//! `all` probes each of this node's storages in turn and ends with one
//! table ([`table`]). The probe's runs themselves are the caller's
//! ([`ProbeRunner`]): it prints their lines as they come.

mod one;
pub mod table;

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::commands::probe::report::ProbeReport;
use crate::commands::probe::schedule::ProbeConfig;
use crate::measure::plan::Test;
use crate::model::pve::PveTarget;
use crate::output::Format;
use crate::output::metrics::{MetricsSource, influx, prometheus};
use crate::output::result::JsonReport;
use crate::pvestorage::{Approach, Pve, PveStorage};
use crate::sys::interrupt::Interrupt;

/// What `--storage` is asked: which storage, and how the probe runs on it.
#[derive(Debug, Clone)]
pub struct StorageRequest {
    /// A storage ID, or `all`.
    pub which: String,
    pub pve_config: PathBuf,
    /// The probe's configuration; its path and tests are set per storage.
    pub config: ProbeConfig,
    /// The tests on a path storage.
    pub on_path: BTreeSet<Test>,
    /// The tests on a scratch volume.
    pub on_volume: BTreeSet<Test>,
    /// A scratch volume's size.
    pub volume_bytes: u64,
    /// Where a skipped storage, a freed volume and storage.cfg's warnings are said.
    pub progress: crate::output::progress::Progress,
}

impl StorageRequest {
    /// The configuration of a run on `path` (a volume's device when `volume`).
    fn config(&self, path: PathBuf, volume: bool) -> ProbeConfig {
        let mut config = self.config.clone();
        config.path = path.clone();
        if volume {
            config.volume = Some(path);
            config.tests = self.on_volume.clone();
        } else {
            config.tests = self.on_path.clone();
        }
        config
    }
}

/// The caller's part of a storage's run: the probe on a configuration,
/// its lines printed as they are measured.
pub trait ProbeRunner {
    fn interrupt(&self) -> &Interrupt;
    /// Runs the probe on `config`, measuring `target`.
    fn run(&mut self, config: &ProbeConfig, target: &PveTarget) -> ProbeReport;
    /// One storage of `all` was measured: what goes between two.
    fn measured(&mut self, _report: &ProbeReport) {}
}

/// Why `--storage` measured nothing.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The node's storages could not be read (status 2).
    #[error("{0}")]
    Config(String),
    #[error("no storage {which} in {} (pveprobe storages lists them)", cfg.display())]
    NoSuch { which: String, cfg: PathBuf },
    /// The storage asked for is one the probe does not measure (2).
    #[error("{0}")]
    NotMeasurable(String),
    /// It could not be measured (1).
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Interrupted(#[from] crate::commands::probe::report::Interrupted),
}

/// `--storage ID|all`, checked before anything runs.
pub struct StoragePlan {
    pve: Pve,
    all: Vec<PveStorage>,
}

/// Reads the storages and checks that `req.which` names one to measure.
pub fn plan(req: &StorageRequest) -> Result<StoragePlan, StorageError> {
    let pve = Pve::load(&req.pve_config).map_err(StorageError::Config)?;
    pve.warnings.iter().for_each(|w| req.progress.say(w));
    if let Err(why) = &pve.status {
        return Err(StorageError::Config(why.clone()));
    }
    let all = pve.storages();
    if req.which != "all" {
        let s = one(&pve, &all, &req.which)?;
        if let Some(why) = why_not(s) {
            return Err(StorageError::NotMeasurable(not_measured(s, why)));
        }
    }
    Ok(StoragePlan { pve, all })
}

/// The storage `which` names.
fn one<'a>(pve: &Pve, all: &'a [PveStorage], which: &str) -> Result<&'a PveStorage, StorageError> {
    all.iter()
        .find(|s| s.id() == which)
        .ok_or_else(|| StorageError::NoSuch {
            which: which.into(),
            cfg: pve.dir.join("storage.cfg"),
        })
}

/// Why a storage is not measured at all, if it is not.
fn why_not(s: &PveStorage) -> Option<String> {
    s.unavailable().or(match s.approach() {
        Approach::Skip(why) => Some(why),
        _ => None,
    })
}

fn not_measured(s: &PveStorage, why: String) -> String {
    format!("storage {} ({}): not measured: {why}", s.id(), s.kind())
}

impl StoragePlan {
    /// `--storage ID`: that storage's report.
    pub fn probe_one(
        &self,
        req: &StorageRequest,
        runner: &mut dyn ProbeRunner,
    ) -> Result<ProbeReport, StorageError> {
        let s = one(&self.pve, &self.all, &req.which)?;
        one::storage(req, &self.pve, s, runner)
            .map_err(|why| StorageError::Failed(not_measured(s, why)))
    }

    /// `--storage all`: this node's storages in turn, one document.
    pub fn probe_all(
        self,
        req: &StorageRequest,
        runner: &mut dyn ProbeRunner,
    ) -> Result<AllStorages, StorageError> {
        let mut all = AllStorages {
            node: self.pve.node.clone(),
            ..AllStorages::default()
        };
        for s in &self.all {
            if let Some(why) = why_not(s) {
                req.progress.say(&format!(
                    "storage {} ({}): skipped: {why}",
                    s.id(),
                    s.kind()
                ));
                all.skipped.push(Skipped {
                    id: s.id().into(),
                    kind: s.kind().into(),
                    failed: false,
                    reason: why,
                });
                continue;
            }
            match one::storage(req, &self.pve, s, runner) {
                Ok(report) => {
                    report.interrupted()?;
                    runner.measured(&report);
                    all.docs.push(report.to_json());
                    all.reports.push(report);
                }
                Err(why) => {
                    req.progress.say(&not_measured(s, why.clone()));
                    all.skipped.push(Skipped {
                        id: s.id().into(),
                        kind: s.kind().into(),
                        failed: true,
                        reason: why,
                    });
                }
            }
        }
        Ok(all)
    }
}

/// One storage's line of `--storage all`'s JSON when it was not measured.
#[derive(Debug, serde::Serialize)]
pub struct Skipped {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    pub failed: bool,
    reason: String,
}

/// `--storage all`'s document: each storage's result, and those not measured.
#[derive(Debug, Default)]
pub struct AllStorages {
    pub node: String,
    pub docs: Vec<JsonReport>,
    pub reports: Vec<ProbeReport>,
    pub skipped: Vec<Skipped>,
    /// The lines are on stdout already: the text is the table.
    pub lines_printed: bool,
}

impl serde::Serialize for AllStorages {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// `--storage all`'s JSON document.
        #[derive(serde::Serialize)]
        struct AllDocument<'a> {
            node: &'a str,
            storages: &'a [JsonReport],
            not_measured: &'a [Skipped],
        }
        AllDocument {
            node: &self.node,
            storages: &self.docs,
            not_measured: &self.skipped,
        }
        .serialize(serializer)
    }
}

impl crate::output::Document for AllStorages {
    fn text(&self) -> String {
        let mut out = String::new();
        if !self.lines_printed {
            for r in &self.reports {
                out.push_str(&crate::commands::probe::report::text::render(r));
                out.push('\n');
            }
        }
        out.push_str(&table::table(&self.docs));
        out
    }

    fn csv(&self, header: bool) -> String {
        let rows = self.docs.iter().map(crate::output::csv::row);
        crate::output::csv::table(header.then(crate::output::csv::header), rows)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(crate::output::csv::header())
    }

    /// Each storage's figures, labelled with its ID and type, measured on
    /// this node.
    fn metrics(&self, format: Format) -> String {
        let each: Vec<MetricsSource> = self
            .docs
            .iter()
            .map(|d| MetricsSource::on(&self.node, d))
            .collect();
        match format {
            Format::Influx => influx::render(&each),
            _ => prometheus::render(&each),
        }
    }
}
