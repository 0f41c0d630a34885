//! The commands, one folder each, every one in the same three parts:
//! `args.rs`, its clap arguments (no other code sees clap, and they build
//! no domain type); `run.rs`, the code that makes them into the
//! command's plain request, runs it in its session
//! ([`common::session`]), decides the exit status and hands the report
//! to be written; and the command's own work ([`common::work::Work`]),
//! which returns that report or its typed error. `common` is what
//! several commands share around their work (the session, the argument
//! groups more than one command takes); it is no command. A command never
//! imports another; the layers below never import a command
//! (`tests/it/layers.rs`). This file is the command line's top and the
//! one place that sends each command to its `run`.

pub mod ceph;
pub mod cluster;
pub mod common;
pub mod compare;
pub mod datastore;
pub mod guest;
pub mod load;
pub mod net;
pub mod probe;
pub mod qualify;
pub mod record;
pub mod storages;
pub mod top;

use clap::{Parser, Subcommand};

use crate::error::Ended;
use ceph::args::{CephArgs, CephClientArgs, CephNodeInfoArgs};
use cluster::args::ClusterArgs;
use compare::args::CompareArgs;
use datastore::args::DatastoreArgs;
use guest::args::{GuestArgs, GuestSideArgs};
use load::args::{LoadArgs, LoadGuestArgs, LoadInitramfsArgs, LoadNodeArgs, LoadWorkerArgs};
use net::args::{NetArgs, NetInfoArgs, NetMigrateArgs, NetProbeArgs, NetServeArgs, NetSinkArgs};
use probe::args::{ABOUT, AFTER_LONG_HELP, LONG_ABOUT, ProbeArgs};
use qualify::args::QualifyArgs;
use record::args::RecordArgs;
use storages::args::StoragesArgs;
use top::args::TopArgs;

#[derive(Debug, Parser)]
#[command(
    name = "pveprobe",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP,
    args_conflicts_with_subcommands = true
)]
pub struct Opts {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub probe: ProbeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Put JSON results side by side, with each figure's ratio to the first file
    Compare(CompareArgs),
    /// Run the probe on every node of a Proxmox VE cluster through ssh: one table
    Cluster(Box<ClusterArgs>),
    /// List this node's Proxmox VE storages (/etc/pve/storage.cfg) and how
    /// --storage ID would measure each, or why it would not
    Storages(StoragesArgs),
    /// Measure the network between nodes: UDP latency, jitter, loss and path
    /// MTU per cluster link and pair of nodes (TCP throughput with
    /// --net-throughput, never on corosync links)
    Net(Box<NetArgs>),
    /// Test an empty disk before it goes into Ceph, ZFS or LVM-thin, as
    /// Proxmox's Ceph benchmark paper does: destroys its data, refuses a
    /// disk in use (see --help: SAFETY)
    Qualify(Box<QualifyArgs>),
    /// Measure a VM's disks from inside through its guest agent, beside
    /// the host's figures on the same storage, and name the VM settings
    /// that cost
    Guest(Box<GuestArgs>),
    /// Measure a Ceph cluster through its own tools: each OSD's bench and
    /// latency, each pool's rados and rbd bench, the slow OSD named (writes
    /// to the cluster: see --help, COST AND SAFETY)
    Ceph(Box<CephArgs>),
    /// Load the cluster's storage from worker VMs on every node at once
    /// (HCIBench for PVE): total IOPS, merged latency percentiles, the slow
    /// node or VM; makes and destroys its VMs (see --help, COST AND SAFETY)
    Load(Box<LoadArgs>),
    /// Which guest and which job make the node's IO delay, live and
    /// read-only: each VM drive's I/O as the guest sees it (QEMU's counters),
    /// each container's, the disks and the node's pressure
    Top(Box<TopArgs>),
    /// Keep top's intervals on disk (a week by default), so last night's IO
    /// delay is named the morning after (top --worst, --at); runs as
    /// pveprobe-record.service
    Record(Box<RecordArgs>),
    /// How long a Proxmox Backup Server restore, verify, garbage
    /// collection and backup take on PATH's storage, by PBS's own calls
    /// replayed in a private directory; the hours of the datastore there
    Datastore(Box<DatastoreArgs>),
    /// What the probe copied into a guest runs
    #[command(name = "guest-side", hide = true)]
    GuestSide(GuestSideArgs),
    /// The responder `net` starts on a node over ssh
    #[command(name = "net-serve", hide = true)]
    NetServe(NetServeArgs),
    /// The measuring end `net` starts on a node over ssh
    #[command(name = "net-probe", hide = true)]
    NetProbe(NetProbeArgs),
    /// One way of the secure migration channel, which `net` starts on a node
    #[command(name = "net-migrate", hide = true)]
    NetMigrate(NetMigrateArgs),
    /// The target's end of `net-migrate`'s stream, started by its ssh
    #[command(name = "net-sink", hide = true)]
    NetSink(NetSinkArgs),
    /// A node's interfaces and knet statistics, as JSON, for `net`
    #[command(name = "net-info", hide = true)]
    NetInfo(NetInfoArgs),
    /// A node's OSD disks' health and Ceph links, as JSON, for `ceph`
    #[command(name = "ceph-node-info", hide = true)]
    CephNodeInfo(CephNodeInfoArgs),
    #[command(name = "ceph-client", hide = true)]
    CephClient(CephClientArgs),
    /// A node's agent in a `load` run (its plan on stdin)
    #[command(name = "load-node", hide = true)]
    LoadNode(LoadNodeArgs),
    /// One step of `load --vms` in an existing VM, through its agent
    #[command(name = "load-guest", hide = true)]
    LoadGuest(LoadGuestArgs),
    /// A worker VM's /init, for `load`
    #[command(name = "load-worker", hide = true)]
    LoadWorker(LoadWorkerArgs),
    /// A worker VM's initramfs, for `load`
    #[command(name = "load-initramfs", hide = true)]
    LoadInitramfs(LoadInitramfsArgs),
}

/// Every command: the options parsed, the exit status to return or the
/// [`crate::error::Stop`] that `main` prints.
pub fn run(opts: &Opts) -> Ended {
    match &opts.command {
        Some(Command::Compare(args)) => compare::run::compare(args, &results_readers()),
        Some(Command::Cluster(args)) if cluster::run::wants_net(args)? => net::run::across_cluster(
            &net::run::AcrossCluster {
                reach: &args.reach,
                net_options: &args.net_options,
                parallel: args.parallel,
                dry_run: args.dry_run,
                out: &args.out,
            },
            &results_readers(),
        ),
        Some(Command::Cluster(args)) => cluster::run::cluster(args),
        Some(Command::Storages(args)) => storages::run::storages(args),
        Some(Command::Net(args)) => net::run::net(args, &results_readers()),
        Some(Command::NetServe(args)) => net::run::net_serve(args),
        Some(Command::NetProbe(args)) => net::run::net_probe(args),
        Some(Command::NetMigrate(args)) => net::run::net_migrate(args),
        Some(Command::NetSink(args)) => net::run::net_sink(args),
        Some(Command::NetInfo(args)) => net::run::net_info(args),
        Some(Command::Qualify(args)) => qualify::run::qualify(args),
        Some(Command::Guest(args)) => guest::run::guest(args),
        Some(Command::Ceph(args)) => ceph::run::ceph(args),
        Some(Command::CephNodeInfo(args)) => ceph::run::node_info(args),
        Some(Command::CephClient(args)) => ceph::run::client(args),
        Some(Command::GuestSide(args)) => guest::run::guest_side(args),
        Some(Command::Load(args)) => load::run::load(args, &results_readers()),
        Some(Command::Top(args)) => top::run::top(args),
        Some(Command::Record(args)) => record::run::record(args),
        Some(Command::Datastore(args)) => datastore::run::datastore(args, &results_readers()),
        Some(Command::LoadNode(args)) => load::run::load_node(args),
        Some(Command::LoadGuest(args)) => load::run::load_guest(args),
        Some(Command::LoadWorker(args)) => load::run::load_worker(args),
        Some(Command::LoadInitramfs(args)) => load::run::load_initramfs(args),
        None => probe::run::probe(&opts.probe, &results_readers()),
    }
}

/// Every kind of document a pveprobe command writes, each with its
/// reader, for `compare` and the probe's `--baseline`: each finds a
/// file's reader by its `kind` (a cluster's file gives a result per node).
pub fn results_readers() -> crate::results::Readers {
    crate::results::Readers::new(vec![
        crate::results::Reader::of::<net::report::NetReport>(),
        crate::results::Reader::of::<qualify::report::QualifyReport>(),
        crate::results::Reader::of::<guest::report::GuestReport>(),
        crate::results::Reader::of::<ceph::report::CephReport>(),
        crate::results::Reader::of::<load::report::LoadReport>(),
        crate::results::Reader::of::<cluster::ClusterReport>(),
        crate::results::Reader::of::<datastore::report::DatastoreReport>(),
        crate::results::Reader::of::<datastore::cluster::DatastoreClusterReport>(),
    ])
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Opts::command().debug_assert();
    }

    #[test]
    fn compare_is_a_subcommand_and_dot_slash_reaches_a_directory_of_that_name() {
        let opts = Opts::parse_from(["pveprobe", "compare", "a.json", "b.json"]);
        assert!(matches!(opts.command, Some(Command::Compare(ref c)) if c.files.len() == 2));
        let opts = Opts::parse_from(["pveprobe", "./compare"]);
        assert!(opts.command.is_none());
        assert_eq!(opts.probe.path, std::path::PathBuf::from("./compare"));
        assert!(
            Opts::try_parse_from(["pveprobe", "compare"]).is_err(),
            "compare needs files"
        );
    }
}
