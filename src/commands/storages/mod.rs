//! `pveprobe storages`: this node's PVE storages and how `--storage ID`
//! would measure each, or why not. (`--storage` itself is the probe's:
//! [`crate::commands::probe::storage`].)

pub mod args;
pub mod run;

use std::path::PathBuf;

use crate::commands::common::work::Work;
use crate::output::Format;
use crate::pvestorage::{Approach, Pve, PveStorage};
use crate::sys::interrupt::Interrupt;

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

impl crate::output::Document for StorageList {
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

    fn csv(&self, header: bool) -> String {
        let columns = [
            "id", "type", "enabled", "active", "shared", "content", "measured", "plan",
        ];
        let rows = self.0.iter().map(|l| {
            [
                l.id.clone(),
                l.kind.clone(),
                yes_no(l.enabled).into(),
                l.active.map_or("", yes_no).into(),
                yes_no(l.shared).into(),
                l.content.join(","),
                yes_no(l.measured).into(),
                l.plan.clone(),
            ]
        });
        crate::output::csv::table(header.then_some(columns), rows)
    }
}

/// `pveprobe storages`: where the node's config is.
pub struct StoragesRequest {
    pub pve_config: PathBuf,
    /// Where what is missing is said.
    pub progress: crate::output::progress::Progress,
}

/// Why there is no list: the node's storage.cfg could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoStorageCfg(pub String);

/// `pveprobe storages`: this node's storages, read from `pve_config`.
impl Work for StoragesRequest {
    type Report = StorageList;
    type Error = NoStorageCfg;

    fn run(&self, _interrupt: &Interrupt) -> Result<StorageList, NoStorageCfg> {
        let pve = Pve::load(&self.pve_config).map_err(NoStorageCfg)?;
        pve.warnings.iter().for_each(|w| self.progress.say(w));
        if let Err(why) = &pve.status {
            self.progress
                .say(&format!("{why}; active and free space are unknown"));
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
}
