//! PVE storage IDs as a command: `pveprobe storages` lists this node's
//! storages and how each would be measured; `--storage ID|all` measures
//! them. A path storage is probed in its directory after PVE's own
//! checks; a volume storage through a scratch volume allocated, checked,
//! prefilled, measured and freed on every way out (success, failure,
//! Ctrl-C, SIGTERM, SIGHUP); `all` probes each of this node's storages in
//! turn and ends with one table ([`table`]). The probe's runs themselves
//! are the caller's ([`ProbeRunner`]): it prints their lines as they come.

mod measure;
pub use measure::check_path;
pub mod table;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Stop;
use crate::error::exit::Exit;
use crate::measure::window::Interrupt;
use crate::model::pve::PveTarget;
use crate::output::Format;
use crate::probe::plan::Test;
use crate::probe::report::Report;
use crate::probe::report::json::JsonReport;
use crate::probe::report::metrics::{MetricsSource, influx, prometheus};
use crate::probe::schedule::Config;
use crate::pvestorage::{self, Approach, PveStorage, pvesm};
use pveprobe_parse::pvesm::StatusRow;
use pveprobe_parse::storagecfg::{self, StorageCfg};

/// storage.cfg, `pvesm status` and this node's name, read once.
pub struct Pve {
    pub dir: PathBuf,
    cfg: StorageCfg,
    /// `Err`: why pvesm gave no status.
    pub status: Result<Vec<StatusRow>, String>,
    pub node: String,
}

impl Pve {
    pub fn load(dir: &Path) -> Result<Pve, String> {
        let file = dir.join("storage.cfg");
        let text = crate::sys::host::read_capped(&file, storagecfg::MAX_BYTES as u64 + 1).map_err(
            |e| {
                format!(
                    "cannot read {}: {}",
                    file.display(),
                    crate::error::describe(&e)
                )
            },
        )?;
        let cfg = storagecfg::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        for warning in &cfg.warnings {
            eprintln!("pveprobe: {}: {warning}", file.display());
        }
        Ok(Pve {
            dir: dir.to_path_buf(),
            cfg,
            status: pvesm::status().map_err(|e| e.to_string()),
            node: pvestorage::node_name(),
        })
    }

    pub fn storages(&self) -> Vec<PveStorage> {
        let status = self.status.as_deref().unwrap_or_default();
        pvestorage::storages(&self.cfg, status, &self.node)
    }

    /// The VMIDs of the cluster's guests (none where there is no .vmlist).
    pub(crate) fn vmids(&self) -> Result<BTreeSet<u32>, String> {
        let file = self.dir.join(".vmlist");
        match crate::sys::host::read_capped(&file, pveprobe_parse::vmlist::MAX_BYTES as u64 + 1) {
            Ok(text) => {
                pveprobe_parse::vmlist::vmids(&text).map_err(|e| format!("{}: {e}", file.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
            Err(e) => Err(format!(
                "cannot read {}: {}",
                file.display(),
                crate::error::describe(&e)
            )),
        }
    }
}

/// What `pveprobe storages` says about a storage: how it would be
/// measured, or why not.
fn plan_words(s: &PveStorage, status_error: Option<&str>) -> String {
    if let Some(why) = s.unavailable() {
        return format!("skipped: {why}");
    }
    match s.approach() {
        Approach::Path { path, mount_point } => {
            let mounted = mount_point
                .map(|m| format!(" (must be a mount point: {})", m.display()))
                .unwrap_or_default();
            format!("the probe in {}{mounted}", path.display())
        }
        Approach::Volume { activate } => {
            let how = if activate {
                ", activated through PVE::Storage"
            } else {
                ""
            };
            let active = match (s.active(), status_error) {
                (None, Some(why)) => format!(" (pvesm status: {why})"),
                (None, None) => " (pvesm status does not list it)".into(),
                _ => String::new(),
            };
            format!(
                "a scratch volume (pvesm alloc, 4 GiB by default{how}): prefill, reads, writes, sync writes on its device{active}"
            )
        }
        Approach::Skip(why) => format!("skipped: {why}"),
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// One storage as `pveprobe storages --output-format json` lists it.
#[derive(Debug, serde::Serialize)]
struct Listed {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    enabled: bool,
    on_this_node: bool,
    active: Option<bool>,
    shared: bool,
    content: Vec<String>,
    available_bytes: Option<u64>,
    measured: bool,
    plan: String,
}

/// `pveprobe storages`'s list.
#[derive(Debug, serde::Serialize)]
#[serde(transparent)]
pub struct StorageList(Vec<Listed>);

impl crate::output::Render for StorageList {
    /// A list of storages is no measurement to send to a dashboard.
    const FORMATS: &'static [Format] = crate::output::TABLES;

    fn text(&self) -> String {
        let listed = &self.0;
        let id_w = listed.iter().map(|l| l.id.len()).max().unwrap_or(2).max(2);
        let mut out = format!(
            "{:<id_w$}  {:<11} {:<7} {:<6} {:<6} {:<24} measured as\n",
            "ID", "TYPE", "ENABLED", "ACTIVE", "SHARED", "CONTENT"
        );
        for l in listed {
            let line = format!(
                "{:<id_w$}  {:<11} {:<7} {:<6} {:<6} {:<24} {}",
                l.id,
                l.kind,
                yes_no(l.enabled),
                l.active.map_or("?", yes_no),
                yes_no(l.shared),
                l.content.join(","),
                l.plan
            );
            out.push_str(&crate::model::printable(&line));
            out.push('\n');
        }
        out
    }

    fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "id", "type", "enabled", "active", "shared", "content", "measured", "plan",
        ]);
        for l in &self.0 {
            let _ = w.write_record([
                l.id.as_str(),
                &l.kind,
                yes_no(l.enabled),
                l.active.map_or("", yes_no),
                yes_no(l.shared),
                &l.content.join(","),
                yes_no(l.measured),
                &l.plan,
            ]);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// `pveprobe storages`: this node's storages, read from `pve_config`.
pub fn list(pve_config: &Path) -> Result<StorageList, Stop> {
    let pve = Pve::load(pve_config).map_err(Stop::bad_input)?;
    if let Err(why) = &pve.status {
        eprintln!("pveprobe: {why}; active and free space are unknown");
    }
    let status_error = pve.status.as_ref().err().map(String::as_str);
    let listed: Vec<Listed> = pve
        .storages()
        .iter()
        .map(|s| Listed {
            id: s.id().into(),
            kind: s.kind().into(),
            enabled: s.enabled(),
            on_this_node: s.on_this_node(),
            active: s.active(),
            shared: s.shared(),
            content: s.content(),
            available_bytes: s.available_bytes(),
            measured: s.unavailable().is_none() && !matches!(s.approach(), Approach::Skip(_)),
            plan: plan_words(s, status_error),
        })
        .collect();
    Ok(StorageList(listed))
}

/// What `--storage` is asked: which storage, and how the probe runs on it.
#[derive(Debug, Clone)]
pub struct StoragesRequest {
    /// A storage ID, or `all`.
    pub which: String,
    pub pve_config: PathBuf,
    /// The probe's configuration; its path and tests are set per storage.
    pub config: Config,
    /// The tests on a path storage.
    pub on_path: BTreeSet<Test>,
    /// The tests on a scratch volume.
    pub on_volume: BTreeSet<Test>,
    /// A scratch volume's size.
    pub volume_bytes: u64,
}

impl StoragesRequest {
    /// The configuration of a run on `path` (a volume's device when `volume`).
    fn config(&self, path: PathBuf, volume: bool) -> Config {
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
    fn run(&mut self, config: &Config, target: &PveTarget) -> Report;
    /// One storage of `all` was measured: what goes between two.
    fn measured(&mut self, _report: &Report) {}
}

/// `--storage ID|all`, checked before anything runs.
pub struct StoragesPlan {
    pve: Pve,
    all: Vec<PveStorage>,
}

/// Reads the storages and checks that `req.which` names one to measure.
pub fn plan(req: &StoragesRequest) -> Result<StoragesPlan, Stop> {
    let pve = Pve::load(&req.pve_config).map_err(Stop::bad_input)?;
    if let Err(why) = &pve.status {
        return Err(Stop::bad_input(why));
    }
    let all = pve.storages();
    if req.which != "all" {
        let s = one(&pve, &all, &req.which)?;
        if let Some(why) = why_not(s) {
            return Err(Stop::bad_input(not_measured(s, why)));
        }
    }
    Ok(StoragesPlan { pve, all })
}

/// The storage `which` names.
fn one<'a>(pve: &Pve, all: &'a [PveStorage], which: &str) -> Result<&'a PveStorage, Stop> {
    all.iter().find(|s| s.id() == which).ok_or_else(|| {
        Stop::bad_input(format!(
            "no storage {which} in {} (pveprobe storages lists them)",
            pve.dir.join("storage.cfg").display()
        ))
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

impl StoragesPlan {
    /// `--storage ID`: that storage's report.
    pub fn probe_one(
        &self,
        req: &StoragesRequest,
        runner: &mut dyn ProbeRunner,
    ) -> Result<Report, Stop> {
        let s = one(&self.pve, &self.all, &req.which)?;
        measure::storage(req, &self.pve, s, runner)
            .map_err(|why| Stop::not_measured(not_measured(s, why)))
    }

    /// `--storage all`: this node's storages in turn, one document.
    pub fn probe_all(
        self,
        req: &StoragesRequest,
        runner: &mut dyn ProbeRunner,
    ) -> Result<(AllReport, Exit), Stop> {
        let mut all = AllReport {
            node: self.pve.node.clone(),
            ..AllReport::default()
        };
        let mut failed = false;
        for s in &self.all {
            if let Some(why) = why_not(s) {
                eprintln!(
                    "pveprobe: storage {} ({}): skipped: {why}",
                    s.id(),
                    s.kind()
                );
                all.skipped.push(Skipped {
                    id: s.id().into(),
                    kind: s.kind().into(),
                    failed: false,
                    reason: why,
                });
                continue;
            }
            match measure::storage(req, &self.pve, s, runner) {
                Ok(report) => {
                    report.stop_if_interrupted()?;
                    failed |= report.any_failed();
                    runner.measured(&report);
                    all.docs.push(JsonReport::from_report(&report));
                    all.reports.push(report);
                }
                Err(why) => {
                    eprintln!("pveprobe: {}", not_measured(s, why.clone()));
                    failed = true;
                    all.skipped.push(Skipped {
                        id: s.id().into(),
                        kind: s.kind().into(),
                        failed: true,
                        reason: why,
                    });
                }
            }
        }
        Ok((all, if failed { Exit::NotMeasured } else { Exit::Ok }))
    }
}

/// One storage's line of `--storage all`'s JSON when it was not measured.
#[derive(Debug, serde::Serialize)]
pub struct Skipped {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    failed: bool,
    reason: String,
}

/// `--storage all`'s document: each storage's result, and those not measured.
#[derive(Debug, Default)]
pub struct AllReport {
    pub node: String,
    pub docs: Vec<JsonReport>,
    pub reports: Vec<Report>,
    pub skipped: Vec<Skipped>,
    /// The lines are on stdout already: the text is the table.
    pub lines_printed: bool,
    /// CSV: the header too (not when adding rows under it).
    pub csv_header: bool,
}

impl serde::Serialize for AllReport {
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

impl crate::output::Render for AllReport {
    fn text(&self) -> String {
        let mut out = String::new();
        if !self.lines_printed {
            for r in &self.reports {
                out.push_str(&crate::probe::report::text::render(r));
                out.push('\n');
            }
        }
        out.push_str(&table::table(&self.docs));
        out
    }

    fn csv(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.docs.iter().enumerate() {
            out.push_str(&crate::probe::report::csv::render(
                d,
                i == 0 && self.csv_header,
            ));
        }
        out
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(crate::probe::report::csv::header())
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
