//! `pveprobe ceph`: a hyper-converged cluster's storage measured through
//! Ceph's own tools, as the Proxmox VE Ceph benchmark papers measure it,
//! and the OSD that drags it named.
//!
//! Everything goes through the cluster's command-line tools (`ceph`,
//! `rados`, `rbd`, with the node's ceph.conf and the keyring it names),
//! run by [`crate::sys::child`] with a time limit each, never through a
//! shell:
//!
//! - read: `ceph status`, `osd tree`, `osd metadata`, `osd perf`, `osd df`,
//!   `osd pool ls detail`, `osd pool autoscale-status` (`-f json`);
//! - per OSD: `ceph tell osd.N bench` with its defaults (1 GiB in 4 MiB
//!   writes) and a 4 KiB run within the OSD's own limit
//!   (`osd_bench_small_size_max_iops` x `osd_bench_duration` writes, read
//!   from the OSD), one OSD at a time unless `parallel` says more;
//! - per pool: `rados bench` writes of 4 MiB objects with 16 threads, then
//!   sequential and random reads of what they wrote, then 4 KiB writes with
//!   1 and 16 threads; and on a pool for RBD images, `rbd bench` (librbd,
//!   QEMU's path when krbd is off) 4 KiB random writes and reads on a
//!   scratch image.
//!
//! What a run writes lives in a RADOS namespace of its own named by the
//! run's id (`pveprobe-HOST-PID-TIME`), and its scratch image carries the
//! same name: [`Scratch`] removes both on every way out, Ctrl-C included
//! (a bench running then is stopped with SIGTERM, so `rbd bench` closes
//! its image and leaves no watcher behind), and then lists the namespace
//! to show it is empty. No pool is created or deleted, unless the run is
//! asked for a scratch pool ([`ScratchPool`]): then the pool is made for
//! the run, only when every monitor would let it be deleted, and deleted
//! on every way out.

pub mod args;
pub mod run;

pub mod clients;
pub mod drag;

pub mod network;
pub mod nodes;
mod osd_bench;
mod pools;
pub mod report;
mod scratch;
mod scratch_pool;

pub use osd_bench::{BenchFigure, OsdBenches, bench_osds};
use pools::bench_pools;
pub use scratch::{PoolJob, RADOS_JOBS, RBD_JOBS, Scratch};
pub use scratch_pool::{POOL_DELETE, ScratchPool, pool_delete_refused};

use std::path::{Path, PathBuf};
use std::time::Duration;

use pveprobe_parse::ceph::{self as parse, CephOutputError};

use crate::commands::common::work::Work;
use crate::output::progress::Progress;
use crate::sys::child;
use crate::sys::interrupt::Interrupt;

use report::CephReport;

/// Where PVE keeps the cluster's ceph.conf (`/etc/ceph/ceph.conf` links to it).
pub const PVE_CONF: &str = "/etc/pve/ceph.conf";
/// Where a plain Ceph node keeps it.
pub const CEPH_CONF: &str = "/etc/ceph/ceph.conf";
/// Threads of the pool benches, as the PVE Ceph benchmark papers use.
pub const THREADS: u32 = 16;
/// The large object size of the pool benches.
pub const OBJECT: u64 = 4 << 20;
/// The small block of the pool and RBD benches.
pub const SMALL: u64 = 4096;
/// How long a reading command (`ceph osd tree`...) may take.
const READ_LIMIT: Duration = Duration::from_secs(60);
/// How long a removal may take (`rados cleanup` of many small objects,
/// `rbd rm` waiting out a watcher of a killed client).
const CLEAN_LIMIT: Duration = Duration::from_secs(300);
/// How long a stopped bench gets to finish its way out.
const GRACE: Duration = Duration::from_secs(10);

/// What the run does, from the command line.
#[derive(Debug, Clone)]
pub struct CephRequest {
    /// Each OSD's and pool's bench, said as it starts.
    pub progress: Progress,
    /// ceph.conf; the tools find the keyring through it.
    pub conf: PathBuf,
    /// Pools to bench; empty: every pool whose application is rbd.
    pub pools: Vec<String>,
    /// OSDs to bench; empty: every OSD that is up.
    pub osds: Vec<i64>,
    pub osd_bench: bool,
    pub pool_bench: bool,
    pub rbd_bench: bool,
    /// Seconds of each rados bench run.
    pub seconds: u32,
    /// OSD benches at once.
    pub parallel: usize,
    /// Bytes each rbd bench job moves, and the scratch image's size.
    pub rbd_bytes: u64,
    /// How long one OSD's bench may take.
    pub osd_limit: Duration,
    /// The run's id: the RADOS namespace and the scratch image's name.
    pub run_id: String,
    /// This node's name, for its corosync addresses and its OSDs.
    pub node: String,
    /// Whether `conf` was given (`--conf`): then the other nodes are told it too.
    pub conf_given: bool,
    /// How the other nodes holding OSDs are reached; `None`: this node only.
    pub reach: Option<crate::nodes::Reach>,
    /// Bench a pool made for the run (named by `run_id`), deleted after it.
    pub scratch_pool: bool,
    /// `--clients`: each pool job also from these nodes at once; empty:
    /// from this node alone.
    pub clients: Vec<clients::resolve::ClientNode>,
    /// How long past its seconds a client may take to answer.
    pub answer_within: Duration,
}

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum CephError {
    #[error("{command}: {why}")]
    Tool { command: String, why: String },
    #[error(transparent)]
    Output(#[from] CephOutputError),
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

/// The cluster's tools with the node's ceph.conf.
pub struct CephTools<'a> {
    pub conf: &'a Path,
    pub interrupt: &'a Interrupt,
    /// Where each bench's step is said.
    pub progress: &'a Progress,
}

/// One call of a Ceph tool, as plain data: `sys::child::run` runs it at
/// its call (`child::run(c.program, &c.argv, &c.opts)`) and
/// [`CephCall::answer`] reads what it printed, or says why it did not.
pub struct CephCall<'a> {
    pub program: &'static str,
    /// `-c CONF` and the call's words.
    pub argv: Vec<&'a std::ffi::OsStr>,
    pub opts: child::ChildOptions<'a>,
    limit: Duration,
}

impl<'a> CephTools<'a> {
    /// `program -c CONF args` for at most `limit`; `stop` says whether the
    /// interrupt stops it (a cleanup runs to its end), and stopped, it gets
    /// SIGTERM and [`GRACE`] first.
    pub fn call<'b>(
        &'b self,
        program: &'static str,
        args: &[&'b str],
        limit: Duration,
        stop: bool,
    ) -> CephCall<'b>
    where
        'a: 'b,
    {
        let mut argv: Vec<&std::ffi::OsStr> = vec!["-c".as_ref(), self.conf.as_os_str()];
        argv.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
        CephCall {
            program,
            argv,
            opts: child::ChildOptions {
                interrupt: stop.then_some(self.interrupt),
                ..child::ChildOptions::limit(limit).grace(GRACE)
            },
            limit,
        }
    }
}

impl CephCall<'_> {
    /// Its stdout when it exited 0; else why not, in the run's words.
    pub fn answer(
        &self,
        ran: Result<child::Finished, child::ToolFailure>,
    ) -> Result<String, CephError> {
        use crate::sys::child::ToolFailure;
        let program = self.program;
        let words = || {
            let rest: Vec<String> = self.argv[2..]
                .iter()
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            format!("{program} {}", rest.join(" "))
        };
        ran.map(|done| done.stdout_text()).map_err(|f| match f {
            ToolFailure::Interrupted(sig) => CephError::Interrupted(sig),
            ToolFailure::NotStarted { missing: true, .. } => CephError::Tool {
                command: words(),
                why: format!("{program} is not installed (package ceph-common on the node)"),
            },
            ToolFailure::TimedOut => CephError::Tool {
                command: words(),
                why: format!("gave no answer within {} s", self.limit.as_secs()),
            },
            ToolFailure::Failed { status, message } => CephError::Tool {
                command: words(),
                why: if message.is_empty() { status } else { message },
            },
            ToolFailure::NotStarted { why, .. } => CephError::Tool {
                command: words(),
                why,
            },
        })
    }
}

/// What the cluster says of itself before anything is written.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    pub fsid: Option<String>,
    /// The monitors in quorum, by name.
    pub mons: Vec<String>,
    pub health: Option<String>,
    pub tree: Vec<parse::TreeOsd>,
    pub metadata: Vec<parse::OsdMetadata>,
    pub perf: Vec<parse::OsdPerf>,
    pub df: Vec<parse::OsdDf>,
    pub pools: Vec<parse::Pool>,
    pub autoscale: Vec<parse::Autoscale>,
    /// Each pool's MAX AVAIL (`ceph df`).
    pub space: Vec<parse::PoolSpace>,
    /// What could not be read (the run goes on without it).
    pub notes: Vec<String>,
}

/// Reads the cluster: the tree and pools are needed, the rest is for the
/// table and the hints and only noted when it fails.
pub fn inspect(tools: &CephTools) -> Result<ClusterView, CephError> {
    // Each read: `ceph -c CONF ARGS`, run by `sys::child::run`.
    let read = |args: &[&str]| {
        let c = tools.call("ceph", args, READ_LIMIT, true);
        c.answer(child::run(c.program, &c.argv, &c.opts))
    };
    let status = read(&["status", "-f", "json"])?;
    let status: serde_json::Value = serde_json::from_str(&status).unwrap_or_default();
    let mut view = ClusterView {
        fsid: status
            .get("fsid")
            .and_then(|v| v.as_str())
            .map(String::from),
        health: status
            .pointer("/health/status")
            .and_then(|v| v.as_str())
            .map(String::from),
        mons: status
            .get("quorum_names")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str().map(String::from))
            .collect(),
        tree: parse::osd_tree(&read(&["osd", "tree", "-f", "json"])?)?,
        pools: parse::pools(&read(&["osd", "pool", "ls", "detail", "-f", "json"])?)?,
        ..ClusterView::default()
    };
    let mut note = |what: &str, e: CephError| view_note(&mut view.notes, what, e);
    match read(&["osd", "metadata", "-f", "json"]).and_then(|t| Ok(parse::osd_metadata(&t)?)) {
        Ok(m) => view.metadata = m,
        Err(e) => note("OSD metadata", e),
    }
    match read(&["osd", "perf", "-f", "json"]).and_then(|t| Ok(parse::osd_perf(&t)?)) {
        Ok(p) => view.perf = p,
        Err(e) => note("OSD latencies", e),
    }
    match read(&["osd", "df", "-f", "json"]).and_then(|t| Ok(parse::osd_df(&t)?)) {
        Ok(d) => view.df = d,
        Err(e) => note("OSD use", e),
    }
    match read(&["osd", "pool", "autoscale-status", "-f", "json"])
        .and_then(|t| Ok(parse::autoscale_status(&t)?))
    {
        Ok(a) => view.autoscale = a,
        Err(e) => note("the autoscaler's view", e),
    }
    match read(&["df", "-f", "json"]).and_then(|t| Ok(parse::df_pools(&t)?)) {
        Ok(s) => view.space = s,
        Err(e) => note("the pools' room (ceph df)", e),
    }
    Ok(view)
}

/// The most a pool bench may write to `pool`: a quarter of its MAX AVAIL,
/// so a bench never fills a pool (a full pool stops every client's
/// writes). `None` when ceph df did not say.
pub fn write_cap(view: &ClusterView, pool: &str) -> Option<u64> {
    view.space
        .iter()
        .find(|s| s.pool == pool)
        .map(|s| (s.max_avail.max(0.0) / WRITE_SHARE) as u64)
}

/// The share of a pool's MAX AVAIL a run may write is one in this many.
pub const WRITE_SHARE: f64 = 4.0;

fn view_note(notes: &mut Vec<String>, what: &str, e: CephError) {
    notes.push(format!("{what} not read: {e}"));
}

/// The pools a run benches: those named, or every pool for RBD images.
pub fn chosen_pools<'a>(
    req: &CephRequest,
    view: &'a ClusterView,
) -> Result<Vec<&'a parse::Pool>, String> {
    if req.pools.is_empty() {
        return Ok(view
            .pools
            .iter()
            .filter(|p| p.applications.iter().any(|a| a == "rbd"))
            .collect());
    }
    req.pools
        .iter()
        .map(|name| {
            view.pools.iter().find(|p| &p.name == name).ok_or_else(|| {
                format!(
                    "no pool {name:?} in this cluster (it has: {}); a run creates no pool",
                    view.pools
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
        })
        .collect()
}

/// The OSDs a run benches: those named, or every OSD; `Err` names one the tree lacks.
pub fn chosen_osds<'a>(
    req: &CephRequest,
    view: &'a ClusterView,
) -> Result<Vec<&'a parse::TreeOsd>, String> {
    if req.osds.is_empty() {
        return Ok(view.tree.iter().collect());
    }
    req.osds
        .iter()
        .map(|id| {
            view.tree
                .iter()
                .find(|o| o.id == *id)
                .ok_or_else(|| format!("no osd.{id} in this cluster's tree"))
        })
        .collect()
}

/// The plan, said before the run and by `--dry-run`: what runs where, for
/// how long, and what it writes.
pub fn plan(req: &CephRequest, view: &ClusterView) -> Result<String, String> {
    let pools = chosen_pools(req, view)?;
    let osds = chosen_osds(req, view)?;
    if req.osd_bench || req.pool_bench {
        refuse_full(view)?;
    }
    let mut out = format!(
        "pveprobe ceph: cluster {} ({}), {} OSDs, {} pools\n",
        view.fsid.as_deref().unwrap_or("?"),
        view.health.as_deref().unwrap_or("health unknown"),
        view.tree.len(),
        view.pools.len()
    );
    let mut secs = 0u64;
    if req.osd_bench {
        let per = 2;
        out += &format!(
            "- OSD bench on {} OSD(s), {} at a time: `ceph tell osd.N bench` writes 1 GiB in 4 MiB blocks to each OSD's own store, then a 4 KiB run within the OSD's limit (osd_bench_small_size_max_iops x osd_bench_duration writes, 12 MB by default); the OSD's disk is busy meanwhile, the cluster's other OSDs are not\n",
            osds.len(),
            req.parallel
        );
        secs += per * osds.len() as u64 * 10 / req.parallel.max(1) as u64;
    }
    if req.pool_bench && req.scratch_pool {
        out += &format!(
            "- pool {0}: made for the run (the cluster's default size and PG count, for RBD images), benched as below, then deleted (every monitor allows it: mon_allow_pool_delete)\n\
             - pool {0}: `rados bench` {1} s each: write 4 MiB objects with {THREADS} threads (at most a quarter of the new pool's MAX AVAIL), read them back sequentially and at random, then 4 KiB writes with 1 and {THREADS} threads\n",
            req.run_id, req.seconds
        );
        secs += 5 * u64::from(req.seconds);
        if req.rbd_bench {
            out += &format!(
                "- pool {0}: `rbd bench` on a scratch image {0}/{0} of {1}: {1} of 4 KiB random writes, then as much read, {THREADS} threads\n",
                req.run_id,
                crate::model::human::Size(req.rbd_bytes).whole()
            );
        }
    }
    if req.pool_bench && !req.scratch_pool {
        if pools.is_empty() {
            out += "- no pool to bench: none is for RBD images; name one with --pool, or --scratch-pool\n";
        }
        for p in &pools {
            out += &format!(
                "- pool {}: `rados bench` {} s each: write 4 MiB objects with {THREADS} threads (as many as the cluster takes in {} s, at most {}: a quarter of the pool's MAX AVAIL), read them back sequentially and at random, then 4 KiB writes with 1 and {THREADS} threads; all in RADOS namespace {} of the pool, removed afterwards\n",
                p.name,
                req.seconds,
                req.seconds,
                write_cap(view, &p.name)
                    .map(|b| crate::model::human::Size(b).whole())
                    .unwrap_or_else(|| "as ceph df does not say its room, no cap".into()),
                req.run_id
            );
            secs += 5 * u64::from(req.seconds);
            if req.rbd_bench && p.applications.iter().any(|a| a == "rbd") {
                out += &format!(
                    "- pool {}: `rbd bench` on a scratch image {}/{} of {}: {} of 4 KiB random writes, then as much read, {THREADS} threads; the image is removed afterwards\n",
                    p.name,
                    p.name,
                    req.run_id,
                    crate::model::human::Size(req.rbd_bytes).whole(),
                    crate::model::human::Size(req.rbd_bytes).whole()
                );
            }
        }
    }
    if req.pool_bench && !req.clients.is_empty() {
        let names: Vec<&str> = req.clients.iter().map(|c| c.name.as_str()).collect();
        out += &format!(
            "- then each pool job again from {} nodes at once ({}): `pveprobe ceph-client` on each (this node directly, the others over ssh) starts the same bench at one agreed time, each client in its own RADOS namespace {}-NODE (and scratch image of that name), the quarter of the pool's room shared among them; all removed afterwards\n",
            names.len(),
            names.join(", "),
            req.run_id
        );
        secs *= 2;
    }
    out += &format!(
        "About {} min; client I/O on the cluster (the VMs' disks) slows while the pool benches run. {}\n",
        secs.div_ceil(60).max(1),
        if req.scratch_pool && req.pool_bench {
            "One pool is created and deleted."
        } else {
            "No pool is created or deleted."
        }
    );
    Ok(out)
}

/// Refuses to write to a cluster with an OSD at its nearfull ratio: a
/// bench could fill it, and a full OSD stops every client's writes.
pub fn refuse_full(view: &ClusterView) -> Result<(), String> {
    let full: Vec<String> = view
        .df
        .iter()
        .filter(|d| d.utilization >= report::NEARFULL_PCT)
        .map(|d| format!("osd.{} {:.0}%", d.id, d.utilization))
        .collect();
    if full.is_empty() {
        return Ok(());
    }
    Err(format!(
        "refusing to bench: {} used, at or above Ceph's nearfull ratio ({:.0}%); a bench could fill an OSD, and a full OSD stops every client's writes",
        full.join(", "),
        report::NEARFULL_PCT
    ))
}

/// The run's id: host, process and time, unique on the cluster.
pub fn run_id(hostname: &str) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let host: String = hostname
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(32)
        .collect();
    format!("pveprobe-{host}-{}-{secs}", std::process::id())
}

/// A run planned and agreed to: the request and the cluster as read.
pub struct CephRun<'a> {
    pub req: &'a CephRequest,
    pub view: ClusterView,
}

/// The whole run: the cluster read, then the OSD benches, then each
/// pool's, each pool's scratch space removed before the next. What fails
/// is in the report: an OSD's or pool's errors, what was left behind.
impl Work for CephRun<'_> {
    type Report = CephReport;
    type Error = std::convert::Infallible;

    fn run(&self, interrupt: &Interrupt) -> Result<CephReport, Self::Error> {
        let (req, view) = (self.req, &self.view);
        let tools = CephTools {
            conf: &req.conf,
            interrupt,
            progress: &req.progress,
        };
        let mut report = CephReport::from_view(req, view);
        let reach = req.reach.as_ref().map(|r| nodes::NodeReach {
            reach: r,
            conf: req.conf_given.then_some(req.conf.as_path()),
        });
        nodes::read_all(&mut report, &req.node, &req.conf, reach.as_ref(), interrupt);
        if req.osd_bench {
            let ids: Vec<i64> = chosen_osds(req, view)
                .unwrap_or_default()
                .iter()
                .filter(|o| o.status.as_deref() != Some("down"))
                .map(|o| o.id)
                .collect();
            for (id, r) in bench_osds(&tools, &ids, req.parallel, req.osd_limit) {
                if let Some(osd) = report.osds.iter_mut().find(|o| o.id == id) {
                    osd.bench_4m = r.large;
                    osd.bench_4k = r.small;
                    osd.errors = r.errors;
                }
            }
            for osd in report
                .osds
                .iter_mut()
                .filter(|o| o.status.as_deref() == Some("down"))
            {
                osd.errors.push("down: not benched".into());
            }
        }
        if req.pool_bench {
            bench_pools(req, view.clone(), &tools, &mut report);
        }
        report.interrupted_by = interrupt.signal();
        report.finish();
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_with_a_nearly_full_osd_is_not_benched() {
        let mut view = ClusterView {
            df: vec![
                parse::OsdDf {
                    id: 0,
                    utilization: 40.0,
                    ..Default::default()
                },
                parse::OsdDf {
                    id: 3,
                    utilization: 88.5,
                    ..Default::default()
                },
            ],
            ..ClusterView::default()
        };
        let why = refuse_full(&view).unwrap_err();
        assert!(
            why.contains("osd.3 88%") || why.contains("osd.3 89%"),
            "{why}"
        );
        view.df[1].utilization = 84.0;
        assert!(refuse_full(&view).is_ok());
    }
}
