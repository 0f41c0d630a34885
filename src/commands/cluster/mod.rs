//! `pveprobe cluster`: the probe on every node of a Proxmox VE cluster,
//! through what every cluster has (pmxcfs's membership list and root ssh
//! between the nodes), and one table of all nodes.
//!
//! `crate::nodes` says who is in the cluster, how ssh reaches a node and
//! what its pveprobe's answer means; each node's ssh is run through
//! `sys::child::run`. `summary` does the arithmetic over the nodes and
//! `render` writes the table as text, CSV or JSON, each node's figures as
//! influx or prometheus metrics, and `--plot`'s picture. `--net` is
//! `net`'s work across the cluster's pairs.

pub mod args;
pub mod run;

pub mod render;
pub mod summary;

use std::path::Path;
use std::sync::Barrier;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::commands::common::work::Work;
use crate::nodes::members::{Members, Node};
use crate::nodes::remote::{self, NodeOutcome, Ssh, Status};
use crate::nodes::{Reach, load_nodes};
use crate::output::result::JsonReport;
use crate::sys::interrupt::Interrupt;
use summary::FigureSummary;

/// The cluster document's version (`kind: "cluster"`); see docs/output.md.
pub const SCHEMA_VERSION: u32 = 1;
/// The `kind` of a cluster document, which a single result does not have.
pub const KIND: &str = "cluster";

/// What a whole-cluster run found: one entry per node and each figure over
/// the nodes. Written as JSON; the text and CSV tables are made from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterReport {
    pub kind: String,
    pub schema_version: u32,
    pub pveprobe_version: String,
    /// When the run started, RFC 3339 in UTC.
    pub timestamp: Option<String>,
    pub path: String,
    /// The cluster's name, from pmxcfs.
    pub cluster: Option<String>,
    /// All nodes at once (`--parallel`) rather than one after another.
    pub parallel: bool,
    /// The command line each node's shell ran.
    pub command: String,
    pub timeout_s: f64,
    pub nodes: Vec<NodeReport>,
    /// Each figure over the nodes that answered, in the probe's order.
    pub figures: Vec<FigureSummary>,
    /// What went wrong around the nodes' runs (a result that could not
    /// be saved), said on stderr; not in the JSON.
    #[serde(skip)]
    pub problems: Vec<String>,
}

/// One node's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeReport {
    pub name: String,
    pub address: String,
    pub status: Status,
    /// Why, when the status is not `ok`.
    pub detail: Option<String>,
    /// ssh's exit status (the node's pveprobe's, when it ran).
    pub exit_status: Option<i32>,
    /// How long the node took, from starting ssh.
    pub seconds: Option<f64>,
    /// Keys of the figures on which the node is an outlier.
    pub outliers: Vec<String>,
    /// The node's own result, as `pveprobe --output-format json` wrote it.
    pub result: Option<JsonReport>,
}

impl crate::results::Stored for ClusterReport {
    const KIND: Option<&'static str> = Some(KIND);
    const SCHEMA_VERSION: u32 = SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    fn results(self) -> Vec<crate::results::Named> {
        // Each node that answered, named by the node.
        self.nodes
            .into_iter()
            .filter(|n| n.status.answered())
            .filter_map(|n| Some(crate::results::Named::new(Some(n.name), n.result?)))
            .collect()
    }
}

impl ClusterReport {
    pub fn answered(&self) -> usize {
        self.nodes.iter().filter(|n| n.status.answered()).count()
    }

    /// `(node, result)` of the nodes that answered.
    pub fn results(&self) -> Vec<(&str, &JsonReport)> {
        self.nodes
            .iter()
            .filter(|n| n.status.answered())
            .filter_map(|n| Some((n.name.as_str(), n.result.as_ref()?)))
            .collect()
    }

    /// Builds the report from each node's outcome and marks the outliers.
    pub fn new(head: Head, runs: Vec<(Node, NodeOutcome, Option<i32>, Option<f64>)>) -> Self {
        let nodes = runs
            .into_iter()
            .map(|(node, outcome, exit_status, seconds)| NodeReport {
                name: node.name,
                address: node.address,
                status: outcome.status,
                detail: outcome.detail,
                exit_status,
                seconds,
                outliers: Vec::new(),
                result: outcome.result,
            })
            .collect();
        let mut report = ClusterReport {
            problems: Vec::new(),
            kind: KIND.into(),
            schema_version: SCHEMA_VERSION,
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: head.timestamp,
            path: head.path,
            cluster: head.cluster,
            parallel: head.parallel,
            command: head.command,
            timeout_s: head.timeout.as_secs_f64(),
            nodes,
            figures: Vec::new(),
        };
        report.figures = summary::summarise_all(&report.results(), report.parallel);
        for fig in &report.figures {
            for o in &fig.outliers {
                if let Some(n) = report.nodes.iter_mut().find(|n| n.name == o.node) {
                    n.outliers.push(fig.key.clone());
                }
            }
        }
        report
    }
}

/// What a report says about the run as a whole.
#[derive(Debug, Clone, Default)]
pub struct Head {
    pub timestamp: Option<String>,
    pub path: String,
    pub cluster: Option<String>,
    pub parallel: bool,
    pub command: String,
    pub timeout: Duration,
}

/// What a whole-cluster run is asked.
pub struct ClusterRequest<'a> {
    pub reach: &'a Reach,
    /// The directory every node measures (not with `storage`).
    pub path: &'a str,
    /// `--storage ID` on every node instead of `path`.
    pub storage: Option<&'a str>,
    /// The probe's options every node gets, as pveprobe's arguments.
    pub forwarded: Vec<String>,
    /// The longest a node may take.
    pub timeout: Duration,
    pub parallel: bool,
    /// Print what would run where, run nothing.
    /// Keep each node's result as DIR/NODE.json.
    pub save_dir: Option<&'a Path>,
    /// Each node's step, said as it starts and ends.
    pub progress: crate::output::progress::Progress,
}

/// Runs one node: not at all when pmxcfs says it is offline.
fn run_node(
    node: &Node,
    ssh: &Ssh,
    line: &str,
    timeout: Duration,
) -> (NodeOutcome, Option<i32>, Option<f64>) {
    if !node.contacted() {
        return (
            NodeOutcome::failed(Status::Offline, "pmxcfs lists it as offline; not contacted"),
            None,
            None,
        );
    }
    let finished = crate::sys::child::run(
        remote::SSH,
        &ssh.args(node, line, false),
        &remote::ssh_opts(timeout + remote::LOCAL_GRACE),
    );
    let outcome = remote::classify(&finished, timeout, env!("CARGO_PKG_VERSION"));
    match &finished {
        Ok(f) => (outcome, f.code, Some(f.elapsed.as_secs_f64())),
        Err(_) => (outcome, None, None),
    }
}

/// Every node, one after another or all at once; in the nodes' order.
fn run_all(
    nodes: &[Node],
    ssh: &Ssh,
    line: &str,
    timeout: Duration,
    parallel: bool,
    tell: &(dyn Fn(&str) + Sync),
) -> Vec<(NodeOutcome, Option<i32>, Option<f64>)> {
    let done = |node: &Node, r: &(NodeOutcome, Option<i32>, Option<f64>)| {
        let took = r.2.map(|s| format!(" after {s:.1} s")).unwrap_or_default();
        tell(&format!("{}: {}{took}", node.name, r.0.status.word()));
    };
    if !parallel {
        return nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                if node.contacted() {
                    tell(&format!(
                        "{}: running ({} of {})",
                        node.name,
                        i + 1,
                        nodes.len()
                    ));
                }
                let r = run_node(node, ssh, line, timeout);
                done(node, &r);
                r
            })
            .collect();
    }
    let contacted = nodes.iter().filter(|n| n.contacted()).count();
    let start = Barrier::new(contacted);
    tell(&format!("starting {contacted} nodes at once"));
    std::thread::scope(|scope| {
        let handles: Vec<_> = nodes
            .iter()
            .map(|node| {
                let start = &start;
                scope.spawn(move || {
                    if node.contacted() {
                        start.wait();
                    }
                    let r = run_node(node, ssh, line, timeout);
                    done(node, &r);
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a node's thread does not panic"))
            .collect()
    })
}

/// What `--dry-run` prints: the plan, one line per node.
fn dry_run(
    members: &Members,
    source: &str,
    ssh: &Ssh,
    line: &str,
    args: &ClusterRequest,
    timeout: Duration,
) -> String {
    let contacted = members.nodes.iter().filter(|n| n.contacted()).count();
    let cluster = members
        .cluster
        .as_ref()
        .map(|c| format!(" of cluster {c}"))
        .unwrap_or_default();
    let how = if args.parallel {
        "all at once"
    } else {
        "one node at a time"
    };
    let mut out = format!(
        "pveprobe cluster: would run on {contacted} of {} nodes{cluster} ({source}), {how}, at most {} s each\n",
        members.nodes.len(),
        timeout.as_secs_f64().ceil()
    );
    out.push_str(&format!("COMMAND (each node's shell runs it): {line}\n"));
    for node in &members.nodes {
        if node.contacted() {
            let mut argv = ssh.argv(node, line);
            argv.pop();
            out.push_str(&format!(
                "{}: {} COMMAND\n",
                node.name,
                remote::display_argv(&argv)
            ));
        } else {
            out.push_str(&format!(
                "{}: offline in {source}; would not be contacted\n",
                node.name
            ));
        }
    }
    if let Some(dir) = args.save_dir {
        out.push_str(&format!(
            "results would be kept as {}\n",
            dir.join("NODE.json").display()
        ));
    }
    out
}

/// Keeps each answering node's result as DIR/NODE.json.
fn save(
    dir: &Path,
    nodes: &[Node],
    outcomes: &[(NodeOutcome, Option<i32>, Option<f64>)],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (node, (outcome, ..)) in nodes.iter().zip(outcomes) {
        if let (true, Some(raw)) = (outcome.status.answered(), &outcome.raw) {
            let path = remote::saved_path(dir, node);
            if let Err(e) = std::fs::write(&path, format!("{raw}\n")) {
                problems.push(format!(
                    "cannot write {}: {}",
                    path.display(),
                    crate::error::describe(&e)
                ));
            }
        }
    }
    problems
}

/// A cluster run checked before anything runs: the nodes, the command
/// each node's shell runs, and how they are reached.
pub struct ClusterPlan<'a> {
    req: &'a ClusterRequest<'a>,
    members: Members,
    source: String,
    line: String,
    ssh: Ssh,
}

/// Why a cluster run did not start: each is a usage error (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Nodes(#[from] crate::nodes::NodesError),
    #[error("--remote-command is empty")]
    NoRemoteCommand,
    #[error("PATH is empty")]
    NoPath,
    #[error(
        "cluster --storage takes one storage ID, not all (each node's --storage all is a table of its own: run it on the node)"
    )]
    AllStorages,
    #[error("cannot make {}: {}", dir.display(), crate::error::describe(source))]
    SaveDir {
        dir: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Checks `req` and plans the run.
pub fn plan<'a>(req: &'a ClusterRequest<'a>) -> Result<ClusterPlan<'a>, ClusterError> {
    let (members, source) = load_nodes(req.reach)?;
    if req.reach.remote_command_is_empty() {
        return Err(ClusterError::NoRemoteCommand);
    }
    if req.path.is_empty() {
        return Err(ClusterError::NoPath);
    }
    if req.storage == Some("all") {
        return Err(ClusterError::AllStorages);
    }
    // With --storage the node measures that storage, not a PATH.
    let path = req.storage.is_none().then_some(req.path);
    let line = remote::remote_line(&req.reach.remote_command, &req.forwarded, path, req.timeout);
    Ok(ClusterPlan {
        members,
        source,
        line,
        ssh: req.reach.ssh(&[]),
        req,
    })
}

impl ClusterPlan<'_> {
    /// What `--dry-run` prints.
    pub fn dry_run(&self) -> String {
        dry_run(
            &self.members,
            &self.source,
            &self.ssh,
            &self.line,
            self.req,
            self.req.timeout,
        )
    }
}

/// Runs every node: the table, with what went wrong beside it (a result
/// that could not be kept in `--save-dir`) in its `problems`. A node's
/// ssh is in pveprobe's process group: Ctrl-C ends it with pveprobe.
impl Work for ClusterPlan<'_> {
    type Report = ClusterReport;
    type Error = ClusterError;

    fn run(&self, _interrupt: &Interrupt) -> Result<ClusterReport, ClusterError> {
        let req = self.req;
        if let Some(dir) = req.save_dir
            && let Err(source) = std::fs::create_dir_all(dir)
        {
            return Err(ClusterError::SaveDir {
                dir: dir.into(),
                source,
            });
        }
        let tell = |what: &str| req.progress.step(what);
        let started = jiff::Timestamp::now();
        let nodes = self.members.nodes.clone();
        let outcomes = run_all(
            &nodes,
            &self.ssh,
            &self.line,
            req.timeout,
            req.parallel,
            &tell,
        );
        let problems = match req.save_dir {
            Some(dir) => save(dir, &nodes, &outcomes),
            None => Vec::new(),
        };
        let head = Head {
            timestamp: Some(
                started
                    .round(jiff::Unit::Second)
                    .unwrap_or(started)
                    .to_string(),
            ),
            path: match req.storage {
                Some(id) => format!("storage {id}"),
                None => req.path.to_string(),
            },
            cluster: self.members.cluster.clone(),
            parallel: req.parallel,
            command: self.line.clone(),
            timeout: req.timeout,
        };
        let runs = nodes
            .into_iter()
            .zip(outcomes)
            .map(|(node, (o, code, secs))| (node, o, code, secs))
            .collect();
        let mut report = ClusterReport::new(head, runs);
        report.problems = problems;
        Ok(report)
    }
}
