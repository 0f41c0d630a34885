//! The cluster's network, node to node: `pveprobe cluster --net` and
//! `pveprobe net NODE...`. `options` is what a run measures and how;
//! `links` plans which links each pair has, `pairs` starts the responder
//! (`serve`) and the measuring end (`probe`) on the nodes over ssh, and
//! with `--net-throughput` the migration path each way (`secure`: PVE's
//! ssh tunnel, `net-migrate` on the sender, `migrate`, and `net-sink` on
//! the target, `sink`; `migration` names what caps it, `moves` the largest
//! VMs' time to move); `report` holds what they found with its hints,
//! `render` writes the matrix and `metrics` its metrics. `wire` is what the
//! two ends say; `facts` is what `net-info` prints of a node. `run` makes
//! the arguments (`args`) into the request, for `net` and for `cluster
//! --net`.

pub mod args;
pub mod run;

mod facts;
pub mod links;
mod metrics;
pub mod migrate;
mod migration;
pub mod moves;
pub mod options;
pub mod pairs;
pub mod probe;
pub mod render;
pub mod report;
mod secure;
pub mod serve;
pub mod sink;
mod sockopt;
pub mod wire;

use crate::commands::common::work::Work;
use crate::nodes::Reach;
use crate::output::Format;
use crate::output::progress::Progress;
use crate::sys::interrupt::Interrupt;
use options::Options;
use report::NetReport;
use std::path::Path;

/// Why the run cannot start (exit status 2), or its matrix could not be
/// written (1).
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error(transparent)]
    Output(#[from] crate::output::WriteError),
    #[error(transparent)]
    Nodes(#[from] crate::nodes::NodesError),
    #[error("cannot read {}: {}", path.display(), crate::error::describe(source))]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Parse {
        path: std::path::PathBuf,
        message: String,
    },
    #[error(transparent)]
    Link(#[from] links::LinkError),
    #[error("{0}")]
    Usage(String),
}

/// A file of /etc/pve, parsed; `None` when it does not exist.
fn read_config<T, E: std::fmt::Display>(
    dir: &Path,
    name: &str,
    parse: fn(&str) -> Result<T, E>,
) -> Result<Option<T>, NetError> {
    let path = dir.join(name);
    match crate::sys::host::read_capped(&path, crate::sys::host::MAX_HOST_FILE) {
        Ok(text) => parse(&text).map(Some).map_err(|e| NetError::Parse {
            path,
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(NetError::Read { path, source }),
    }
}

/// What a network run is asked.
pub struct NetRequest<'a> {
    pub reach: &'a Reach,
    pub opts: &'a Options,
    /// `net NODE...`: only these nodes.
    pub only: Option<&'a [String]>,
    pub parallel: bool,
    /// `--baseline`: an earlier matrix to compare with, and how much worse
    /// a figure may be (percent).
    pub baseline: Option<&'a Path>,
    pub tolerance: f64,
    /// Each node's and pair's step, said as it ends.
    pub progress: Progress,
}

/// A network run checked before anything runs: the nodes and the links.
pub struct NetPlan<'a> {
    req: &'a NetRequest<'a>,
    members: crate::nodes::members::Members,
    nodes: Vec<crate::nodes::members::Node>,
    corosync: Option<pveprobe_parse::corosync::CorosyncConf>,
    link_defs: Vec<links::LinkDef>,
    /// datacenter.cfg's migration type.
    migration_type: Option<String>,
    /// Without a migration network: the nodes whose cluster address
    /// (where PVE migrates then) is a corosync address, with its link.
    migration_on_corosync: Vec<(String, u32)>,
}

/// `net NODE...`'s nodes out of the members list, in the order given.
fn chosen(
    nodes: &[crate::nodes::members::Node],
    only: &[String],
) -> Result<Vec<crate::nodes::members::Node>, NetError> {
    let mut chosen = Vec::new();
    for name in only {
        let node = nodes.iter().find(|n| n.name == *name).ok_or_else(|| {
            NetError::Usage(format!(
                "{name} is not a node of the members list ({})",
                nodes
                    .iter()
                    .map(|n| n.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if !chosen.contains(node) {
            chosen.push(node.clone());
        }
    }
    Ok(chosen)
}

/// Checks `req` and plans the run: `pveprobe cluster --net` and
/// `pveprobe net NODE...`.
pub fn plan<'a>(req: &'a NetRequest<'a>) -> Result<NetPlan<'a>, NetError> {
    let opts = req.opts;
    let (members, _) = crate::nodes::load_nodes(req.reach)?;
    let nodes = match req.only {
        Some(only) => chosen(&members.nodes, only)?,
        None => members.nodes.clone(),
    };
    if nodes.len() < 2 {
        return Err(NetError::Usage(
            "the network is measured between two nodes at least".into(),
        ));
    }
    if req.reach.remote_command_is_empty() {
        return Err(NetError::Usage("--remote-command is empty".into()));
    }
    let dir = &opts.pve_config;
    let corosync = read_config(dir, "corosync.conf", pveprobe_parse::corosync::parse)?;
    let datacenter = read_config(dir, "datacenter.cfg", pveprobe_parse::datacenter::parse)?;
    let ceph = read_config(dir, "ceph.conf", pveprobe_parse::cephconf::parse)?;
    let link_defs = links::plan(
        corosync.as_ref(),
        datacenter.as_ref(),
        ceph.as_ref(),
        &opts.links,
        &nodes,
    )?;
    if opts.net_throughput {
        links::check_throughput(&link_defs, &opts.links)?;
    }
    if link_defs.is_empty() {
        return Err(NetError::Usage(format!(
            "no cluster links: {} has no corosync.conf, no migration network and no ceph.conf; name one with --link NAME=CIDR",
            dir.display()
        )));
    }
    let migration_on_corosync = match datacenter.as_ref().and_then(|d| d.migration_network) {
        Some(_) => Vec::new(),
        None => nodes
            .iter()
            .filter_map(|n| {
                links::cluster_address_on_corosync(n, corosync.as_ref())
                    .map(|l| (n.name.clone(), l))
            })
            .collect(),
    };
    Ok(NetPlan {
        req,
        members,
        nodes,
        corosync,
        link_defs,
        migration_type: datacenter.and_then(|d| d.migration_type),
        migration_on_corosync,
    })
}

impl NetPlan<'_> {
    /// Said when no migration link is measured and no node has a path but
    /// corosync's: PVE, without a migration network, migrates over the
    /// nodes' cluster addresses, and those are a corosync link's.
    fn migration_note(&self) -> Option<String> {
        let on = &self.migration_on_corosync;
        let (_, link) = on.first()?;
        if on.len() < self.nodes.len()
            || self
                .link_defs
                .iter()
                .any(|l| l.kind == links::LinkKind::Migration)
        {
            return None;
        }
        Some(format!(
            "migration: no migration network in datacenter.cfg, so PVE migrates over the nodes' cluster addresses, corosync{link}'s; not measured as a migration path (pveprobe never fills a corosync link): `migration: network=CIDR` gives it a network of its own, `--link migration=CIDR` measures one"
        ))
    }

    /// A hint per node whose cluster address, where PVE migrates without
    /// a migration network, is a corosync address.
    fn migration_on_corosync_hints(&self) -> Vec<crate::model::hint::Hint> {
        self.migration_on_corosync
            .iter()
            .map(|(node, link)| {
                crate::model::hint::Hint::new(
                    "corosync-shares-network",
                    node.clone(),
                    format!(
                        "corosync shares its address with migration traffic (corosync{link}): without a migration network in datacenter.cfg, PVE migrates over the node's cluster address; the PVE docs want corosync on a network of its own"
                    ),
                )
            })
            .collect()
    }

    /// The largest running VMs of each node that answered, moving over
    /// the migration link's measured pairs (none without one).
    fn moves(
        &self,
        nodes: &[report::NetNode],
        facts: &[Option<facts::NodeFacts>],
        pairs: &[report::PairResult],
    ) -> Vec<crate::model::net::Move> {
        if pairs.iter().all(|p| p.secure.is_empty()) {
            return Vec::new();
        }
        let dir = &self.req.opts.pve_config;
        let storage = read_config(dir, "storage.cfg", pveprobe_parse::storagecfg::parse)
            .ok()
            .flatten();
        let vms: Vec<(String, Vec<moves::VmSize>)> = nodes
            .iter()
            .zip(facts)
            .filter_map(|(n, f)| {
                let running = &f.as_ref()?.running_vms;
                Some((
                    n.name.clone(),
                    moves::largest(dir, &n.name, running, storage.as_ref()),
                ))
            })
            .collect();
        moves::estimate(&vms, pairs)
    }

    /// What `--dry-run` prints.
    pub fn dry_run(&self) -> String {
        let mut out = dry_run(
            &self.nodes,
            &self.link_defs,
            self.req.opts,
            self.corosync.as_ref(),
        );
        if let Some(note) = self.migration_note() {
            out = format!("{out}note: {note}\n");
        }
        out
    }
}

/// Measures every pair on every link. The probes and responders on the
/// nodes run under ssh in pveprobe's process group and end with it.
impl Work for NetPlan<'_> {
    type Report = NetReport;
    type Error = NetError;

    fn run(&self, _interrupt: &Interrupt) -> Result<NetReport, NetError> {
        let (req, opts, corosync) = (self.req, self.req.opts, self.corosync.as_ref());
        let mut notes = Vec::new();
        if corosync.is_none() {
            notes.push(format!(
                "no {}: no corosync links",
                opts.pve_config.join("corosync.conf").display()
            ));
        }
        // A node that goes away mid-run costs seconds, not the whole bound:
        // ssh gives up after 3 unanswered keepalives (the admin's own
        // ServerAlive options come first and win).
        let ssh = req
            .reach
            .ssh(&["ServerAliveInterval=5", "ServerAliveCountMax=3"]);
        let runner = pairs::Runner {
            ssh: &ssh,
            command: req.reach.remote_command.clone(),
            opts,
            progress: &req.progress,
        };
        let started = jiff::Timestamp::now();
        let (mut net_nodes, facts) = pairs::gather(&runner, &self.nodes);
        for n in &mut net_nodes {
            n.corosync_nodeid = corosync.and_then(|c| c.node(&n.name)?.nodeid);
        }
        if req.parallel
            && opts.net_throughput
            && let Some(why) =
                pairs::parallel_throughput_refused(&self.nodes, &facts, &self.link_defs, corosync)
        {
            return Err(NetError::Usage(format!(
                "--parallel with --net-throughput is refused: {why}; streams of all pairs at once would fill corosync's network (run without --parallel)"
            )));
        }
        let (pairs, mut hints) = pairs::measure(
            &runner,
            &self.nodes,
            &net_nodes,
            &facts,
            &self.link_defs,
            corosync,
            req.parallel,
        );
        hints.extend(self.migration_on_corosync_hints());
        notes.extend(self.migration_note());
        let figures = report::figures(&pairs);
        let moves = self.moves(&net_nodes, &facts, &pairs);
        Ok(NetReport {
            kind: report::KIND.into(),
            schema_version: report::SCHEMA_VERSION,
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: Some(
                started
                    .round(jiff::Unit::Second)
                    .unwrap_or(started)
                    .to_string(),
            ),
            cluster: self
                .members
                .cluster
                .clone()
                .or_else(|| corosync.and_then(|c| c.cluster_name.clone())),
            settings: pairs::settings(opts, req.parallel),
            migration_type: self.migration_type.clone(),
            links: self.link_defs.clone(),
            nodes: net_nodes,
            pairs,
            moves,
            hints,
            notes,
            figures,
        })
    }
}

impl crate::output::Document for NetReport {
    const PICTURE: bool = true;

    fn text(&self) -> String {
        render::text(self)
    }

    fn csv(&self, header: bool) -> String {
        render::csv(self, header)
    }

    /// A subject per link, pair and way.
    fn metrics(&self, format: Format) -> String {
        metrics::metrics(self, format)
    }

    /// The migration path: a panel per pair and way.
    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        Some(render::picture(self))
    }
}

/// What `--dry-run` prints: each link, and each pair on it with the
/// addresses known without asking the nodes (corosync's).
fn dry_run(
    nodes: &[crate::nodes::members::Node],
    link_defs: &[links::LinkDef],
    opts: &Options,
    corosync: Option<&pveprobe_parse::corosync::CorosyncConf>,
) -> String {
    let mut out = String::new();
    for link in link_defs {
        let what = match (link.kind, opts.net_throughput) {
            (links::LinkKind::Corosync, _) => "latency and MTU probes only",
            (links::LinkKind::Migration, true) => {
                "latency, MTU, TCP throughput and the secure migration channel (PVE's ssh, net-migrate on each node in turn)"
            }
            (_, true) => "latency, MTU and TCP throughput",
            (_, false) => "latency and MTU probes",
        };
        let net = match link.network {
            Some(n) => format!(" {n}"),
            None if link.cluster_addresses => ", the nodes' cluster addresses".into(),
            None => String::new(),
        };
        out += &format!("{} ({}{net}): {what}\n", link.name, link.kind.word());
        for (i, a) in nodes.iter().enumerate() {
            for b in &nodes[i + 1..] {
                let addr = |n: &crate::nodes::members::Node| {
                    links::address(link, n, corosync, None).map_or_else(
                        |_| "(its address in the network, asked at run time)".to_string(),
                        |ip| ip.to_string(),
                    )
                };
                out += &format!(
                    "  {}-{}: net-probe on {} ({}) -> net-serve on {} ({})\n",
                    a.name,
                    b.name,
                    a.name,
                    addr(a),
                    b.name,
                    addr(b)
                );
            }
        }
    }
    out += &format!(
        "{} probes per pair and link at {} per second at most; nothing was run\n",
        opts.net_count, opts.net_rate
    );
    out
}
