//! `--storage ID|all` and `pveprobe storages`: Proxmox VE's storages by
//! ID. A path storage is probed in its directory after PVE's own checks;
//! a volume storage through a scratch volume allocated, checked,
//! prefilled, measured and freed on every way out (success, failure,
//! Ctrl-C, SIGTERM, SIGHUP); `all` probes each of this node's storages in
//! turn and ends with one table.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::probe::{Prepared, finish, interrupted, lines_to_stdout, measure, prepare};
use super::session::{Frame, Session};
use crate::cli::{ProbeArgs, StoragesArgs};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::model::pve::{How, PveTarget};
use crate::output::Format as OutputFormat;
use crate::probe::plan::Test;
use crate::probe::report::Report;
use crate::probe::report::json::JsonReport;
use crate::probe::report::metrics::{MetricsSource, influx, prometheus};
use crate::pvestorage::volume::ScratchVolume;
use crate::pvestorage::{self, Approach, PveStorage, pvesm};
use pveprobe_parse::pvesm::StatusRow;
use pveprobe_parse::storagecfg::{self, StorageCfg};

/// storage.cfg, `pvesm status` and this node's name, read once.
struct Pve {
    dir: PathBuf,
    cfg: StorageCfg,
    /// `Err`: why pvesm gave no status.
    status: Result<Vec<StatusRow>, String>,
    node: String,
}

impl Pve {
    fn load(dir: &Path) -> Result<Pve, String> {
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

    fn storages(&self) -> Vec<PveStorage> {
        let status = self.status.as_deref().unwrap_or_default();
        pvestorage::storages(&self.cfg, status, &self.node)
    }

    /// The VMIDs of the cluster's guests (none where there is no .vmlist).
    fn vmids(&self) -> Result<BTreeSet<u32>, String> {
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
struct StorageList(Vec<Listed>);

impl crate::output::Render for StorageList {
    /// A list of storages is no measurement to send to a dashboard.
    const FORMATS: &'static [OutputFormat] = crate::output::TABLES;

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
            out.push_str(&crate::output::table::printable(&line));
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

/// `pveprobe storages`.
pub fn storages(args: &StoragesArgs) -> Ended {
    let session =
        Session::start::<StorageList>(Frame::new("pveprobe storages", args.output_format, None))?;
    let pve = Pve::load(&args.pve_config).map_err(Stop::bad_input)?;
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
    session.finish(&StorageList(listed), Exit::Ok)
}

/// How each storage is measured, made once from the options: the run's
/// configuration, and the tests a storage run makes unless `--tests`
/// says (pveperf's disk lines, and -x's; on a volume its writes too).
pub(super) struct Plan {
    config: crate::probe::schedule::Config,
    on_path: BTreeSet<Test>,
    on_volume: BTreeSet<Test>,
}

impl Plan {
    pub(super) fn new(args: &ProbeArgs, config: crate::probe::schedule::Config) -> Plan {
        let disk = [Test::Read, Test::Seek, Test::Fsync];
        let with_writes = [
            Test::Read,
            Test::Seek,
            Test::Fsync,
            Test::Seqwrite,
            Test::Randread,
            Test::Randwrite,
            Test::Syncwrite,
        ];
        let asked = args.measure.asked();
        Plan {
            config,
            on_path: asked.select(&disk),
            on_volume: asked.select(&with_writes),
        }
    }

    /// The configuration of a run on `path` (a volume's device when `volume`).
    fn config(&self, path: PathBuf, volume: bool) -> crate::probe::schedule::Config {
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

/// Whether `path` is a mount point (a mountinfo entry mounted there).
fn is_mount_point(path: &Path) -> bool {
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    let text = crate::sys::host::read_capped(Path::new("/proc/self/mountinfo"), 16 << 20)
        .unwrap_or_default();
    pveprobe_parse::mountinfo::parse(&text)
        .iter()
        .any(|m| m.mount_point == real)
}

/// Prints `STORAGE: ...` before the lines, where they go to stdout.
fn announce(args: &ProbeArgs, target: &PveTarget) {
    if lines_to_stdout(args) {
        let line = format!("{:<19}{}", "STORAGE:", target.describe());
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", crate::output::table::printable(&line));
        let _ = out.flush();
    }
}

/// Measures one storage (already known to be available and measurable).
/// `Err`: nothing was measured, with why.
fn measure_storage(
    args: &ProbeArgs,
    plan: &Plan,
    pve: &Pve,
    s: &PveStorage,
    prep: &Prepared,
) -> Result<Report, String> {
    let target = |how, path: Option<String>| PveTarget {
        id: s.id().into(),
        kind: s.kind().into(),
        shared: s.shared(),
        how,
        path,
        volume: None,
        device: None,
        size_bytes: None,
    };
    match s.approach() {
        Approach::Skip(why) => Err(why),
        Approach::Path { path, mount_point } => {
            // PVE's own checks: nothing is created, an unmounted mount
            // point is an inactive storage.
            if !path.is_dir() {
                return Err(format!(
                    "its directory {} does not exist (pveprobe creates nothing there)",
                    path.display()
                ));
            }
            if let Some(m) = mount_point
                && !is_mount_point(&m)
            {
                return Err(format!(
                    "{} is not a mount point, and this storage must be mounted there (a network storage, or is_mountpoint): PVE treats it as inactive",
                    m.display()
                ));
            }
            let config = plan.config(path.clone(), false);
            let t = target(How::Path, Some(path.display().to_string()));
            announce(args, &t);
            let mut report = measure(args, &config, prep.interrupt());
            report.pve_storage = Some(t);
            Ok(report)
        }
        Approach::Volume { activate } => {
            if activate {
                crate::pvestorage::volume::storage_library()?;
            }
            let bytes = args.measure.write_size.unwrap_or(crate::cli::VOLUME_SIZE);
            if let Some(avail) = s.available_bytes()
                && avail < bytes
            {
                return Err(format!(
                    "a scratch volume of {} MiB does not fit: pvesm status gives {} MiB available; a smaller --write-size fits",
                    bytes >> 20,
                    avail >> 20
                ));
            }
            let vmids = pve.vmids()?;
            let mut volume =
                ScratchVolume::plan(s.id(), bytes, &vmids, activate).map_err(|e| e.to_string())?;
            let created = volume.create();
            let mut t = target(How::ScratchVolume, None);
            t.volume = Some(volume.volid());
            t.size_bytes = Some(bytes);
            t.device = volume.device.as_ref().map(|d| d.display().to_string());
            let mut report = match created {
                Err(e) => {
                    let freed = volume.free();
                    let mut why = e.to_string();
                    if let Err(left) = freed {
                        why = format!("{why}; {left}");
                    }
                    return Err(why);
                }
                Ok(_) if prep.interrupt().signal().is_some() => {
                    // A signal came while pvesm allocated: nothing measured.
                    let mut r = Report::new(PathBuf::from(volume.volid()));
                    r.interrupted_by = prep.interrupt().signal();
                    r
                }
                Ok(device) => {
                    let config = plan.config(device, true);
                    announce(args, &t);
                    measure(args, &config, prep.interrupt())
                }
            };
            match volume.free() {
                Err(left) => {
                    eprintln!("pveprobe: {left}");
                    report.left_behind.push(left);
                }
                Ok(()) if report.interrupted_by.is_some() => {
                    eprintln!("pveprobe: freed the scratch volume {}", volume.volid());
                }
                Ok(()) => {}
            }
            report.pve_storage = Some(t);
            Ok(report)
        }
    }
}

/// `--storage ID|all`.
pub(super) fn probe(args: &ProbeArgs, plan: Plan, which: &str) -> Ended {
    let pve = Pve::load(&args.pve_config).map_err(Stop::bad_input)?;
    if let Err(why) = &pve.status {
        return Err(Stop::bad_input(why));
    }
    let all = pve.storages();
    if which == "all" {
        return probe_all(args, &plan, &pve, &all);
    }
    let Some(s) = all.iter().find(|s| s.id() == which) else {
        return Err(Stop::bad_input(format!(
            "no storage {which} in {} (pveprobe storages lists them)",
            pve.dir.join("storage.cfg").display()
        )));
    };
    let why_not = s.unavailable().or(match s.approach() {
        Approach::Skip(why) => Some(why),
        _ => None,
    });
    let not_measured = |why| format!("storage {which} ({}): not measured: {why}", s.kind());
    if let Some(why) = why_not {
        return Err(Stop::bad_input(not_measured(why)));
    }
    let prep = prepare(
        args,
        &format!("pid {}, --storage {which}", std::process::id()),
        None,
    )?;
    let mut report = measure_storage(args, &plan, &pve, s, &prep)
        .map_err(|why| Stop::not_measured(not_measured(why)))?;
    report.waited_for_probe = prep.waited();
    finish(args, &report, prep)
}

/// One storage's line of `--storage all`'s JSON when it was not measured.
#[derive(Debug, serde::Serialize)]
struct Skipped {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    failed: bool,
    reason: String,
}

/// `--storage all`'s JSON document.
#[derive(Debug, serde::Serialize)]
struct AllDocument<'a> {
    node: &'a str,
    storages: &'a [JsonReport],
    not_measured: &'a [Skipped],
}

/// `--storage all`'s results for the metrics formats, each measured on
/// this node.
fn on_this_node<'a>(pve: &'a Pve, docs: &'a [JsonReport]) -> Vec<MetricsSource<'a>> {
    docs.iter()
        .map(|d| MetricsSource::on(&pve.node, d))
        .collect()
}

/// `--storage all`: this node's storages in turn, one table.
fn probe_all(args: &ProbeArgs, plan: &Plan, pve: &Pve, all: &[PveStorage]) -> Ended {
    let prep = prepare(
        args,
        &format!("pid {}, --storage all", std::process::id()),
        None,
    )?;
    let mut docs = Vec::new();
    let mut reports = Vec::new();
    let mut skipped = Vec::new();
    let mut failed = false;
    for s in all {
        let why_not = s.unavailable().or(match s.approach() {
            Approach::Skip(why) => Some(why),
            _ => None,
        });
        if let Some(why) = why_not {
            eprintln!(
                "pveprobe: storage {} ({}): skipped: {why}",
                s.id(),
                s.kind()
            );
            skipped.push(Skipped {
                id: s.id().into(),
                kind: s.kind().into(),
                failed: false,
                reason: why,
            });
            continue;
        }
        match measure_storage(args, plan, pve, s, &prep) {
            Ok(report) => {
                interrupted(&report)?;
                failed |= report.any_failed();
                if lines_to_stdout(args) {
                    println!();
                }
                docs.push(JsonReport::from_report(&report));
                reports.push(report);
            }
            Err(why) => {
                eprintln!(
                    "pveprobe: storage {} ({}): not measured: {why}",
                    s.id(),
                    s.kind()
                );
                failed = true;
                skipped.push(Skipped {
                    id: s.id().into(),
                    kind: s.kind().into(),
                    failed: true,
                    reason: why,
                });
            }
        }
    }
    let rendered = match args.output_format {
        OutputFormat::Text => {
            let mut out = String::new();
            if !lines_to_stdout(args) {
                for r in &reports {
                    out.push_str(&crate::probe::report::text::render(r));
                    out.push('\n');
                }
            }
            out.push_str(&crate::probe::report::storages::table(&docs));
            out
        }
        OutputFormat::Json | OutputFormat::JsonPretty => {
            let doc = AllDocument {
                node: &pve.node,
                storages: &docs,
                not_measured: &skipped,
            };
            if args.output_format == OutputFormat::Json {
                serde_json::to_string(&doc).expect("plain data") + "\n"
            } else {
                serde_json::to_string_pretty(&doc).expect("plain data") + "\n"
            }
        }
        OutputFormat::Csv => {
            let mut out = String::new();
            for (i, d) in docs.iter().enumerate() {
                out.push_str(&crate::probe::report::csv::render(
                    d,
                    i == 0 && prep.session.csv_header,
                ));
            }
            out
        }
        // Each storage's figures, labelled with its ID and type.
        OutputFormat::Influx => influx::render(&on_this_node(pve, &docs)),
        OutputFormat::Prometheus => prometheus::render(&on_this_node(pve, &docs)),
    };
    crate::output::write(
        crate::output::Destination::of(args.output.as_deref(), args.append),
        &rendered,
    )
    .map_err(Stop::not_measured)?;
    Ok(if failed { Exit::NotMeasured } else { Exit::Ok })
}
