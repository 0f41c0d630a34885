//! `pveprobe ceph`: a Proxmox VE Ceph cluster's storage measured through
//! Ceph's own tools, and the OSD that drags it named.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

use crate::commands::common::reach_args::ReachArgs;

/// Seconds of each rados bench run.
pub const SECONDS: u32 = 10;
/// Bytes of each rbd bench job, and its scratch image's size.
pub const RBD_BYTES: u64 = 256 << 20;

pub const AFTER_HELP: &str = "\
WHAT IT DOES
  On any node of a Ceph cluster, with the node's ceph.conf (/etc/pve/ceph.conf,
  else /etc/ceph/ceph.conf) and the admin keyring it names, through Ceph's own
  tools (ceph, rados, rbd: package ceph-common):
  1. Reads the cluster: ceph status, osd tree, osd metadata (each OSD's data,
     DB and WAL devices), osd perf (commit and apply latency), osd df, osd
     pool ls detail, osd pool autoscale-status.
  2. Per OSD, one at a time (--parallel N: N at once): `ceph tell osd.N bench`
     with its defaults, 1 GiB in 4 MiB writes to the OSD's own store (no
     network, no replication: the OSD's disk), then 4 KiB writes within the
     OSD's own limit (osd_bench_small_size_max_iops x osd_bench_duration, 3000
     writes by default). An OSD more than a third below its device class's
     median is marked ! and named in a hint.
  3. Per pool (--pool NAME, default every pool for RBD images), as the Proxmox
     VE Ceph benchmark papers measure: `rados bench` for --seconds each, 4 MiB
     objects written with 16 threads, read back sequentially and at random,
     then 4 KiB writes with 1 and 16 threads: MiB/s, IOPS, mean and largest
     latency, each second's MiB/s. On a pool for RBD images, `rbd bench`
     (librbd, QEMU's path when krbd is off): 4 KiB random writes, then reads,
     16 threads, --rbd-size each, on a scratch image. Around every job, each
     OSD's own counters (ceph tell osd.N perf dump: its operations' latency,
     sub-op writes, BlueStore commit, RocksDB sync, over the job) and the
     OSDs ceph health detail names under SLOW_OPS: an OSD whose operations
     took more than 3x its class's median is marked * and named, whatever
     makes it slow (its node's CPU, its link, its DB device), however fast
     its own bench.
  With --clients all (or NODE,NODE...), each pool job then runs again from
     every client at once (pveprobe ceph-client there, over the same ssh),
     started together, each client in a namespace and image of its own: the
     total beside the one-client figure, a line per client with its start
     skew and its link on Ceph's public network (--answer-timeout: how long
     past its seconds a client may take before it is given up on).
  4. On every node that holds OSDs: the SMART health of the disks below them
     (smartctl, read-only), the disks' links (sysfs) and the node's links of
     Ceph's networks. Other nodes are reached as `pveprobe cluster` reaches
     them (root ssh to the addresses in /etc/pve/.members, --nodes,
     --ssh-option...), where `pveprobe ceph-node-info` reads them, with the
     node's load (load average, CPU pressure); --this-node-only skips them.
  HINTS (docs/hints.md): osd-slow, osd-drags-pool, osd-commit-latency,
  hdd-osd-without-flash-db,
  osd-disk-unhealthy (SMART of the OSDs' disks), osd-link-below-capability,
  osd-small-writes-slow (the power-loss-protection question), osd-near-full,
  pool-redundancy-low (size below 3, min_size 1), pool-pg-count,
  ceph-network-slow (a node's link of Ceph's public or cluster network
  below 10 Gb/s), ceph-network-shares-corosync.

COST AND SAFETY
  Said before the run; --dry-run prints the plan and does nothing. Without a
  terminal to ask on, --yes is needed. While the pool benches run, the VMs'
  disks on the cluster slow down: run it in a quiet hour. Each OSD bench
  writes 1 GiB to that OSD. The pool benches write as much as the cluster
  takes in --seconds, but never more than a quarter of the pool's MAX AVAIL
  (ceph df; rados bench --max-objects), so a bench cannot fill a pool; with
  an OSD at Ceph's nearfull ratio (85%) nothing runs. They write in a RADOS
  namespace of the pool named by the run (pveprobe-HOST-PID-TIME); the
  scratch image has the same name. Both are removed on every way out,
  Ctrl-C and SIGTERM included (a bench running then is stopped first), and
  the namespace is listed to show it is empty; anything that could not be
  removed is named with the command that removes it. No pool is created or
  deleted, unless --scratch-pool asks for a pool of the run's own: then it
  is made only if every monitor allows pools to be deleted
  (mon_allow_pool_delete, which PVE's ceph.conf sets; otherwise nothing is
  made, exit 2), and deleted on every way out.

EXAMPLES
  pveprobe ceph --dry-run
  pveprobe ceph --yes
  pveprobe ceph --pool ceph-vm --seconds 60 --yes
  pveprobe ceph --no-pool-bench --parallel 3 --yes     only the OSD benches
  pveprobe ceph --scratch-pool --yes                   a pool of its own, deleted after
  pveprobe ceph --clients all --yes                    also from every node at once
  pveprobe ceph --yes --output-format json --output ceph.json
  pveprobe ceph --yes --plot rados.svg                 each second of the pool benches
  pveprobe compare before.json after.json              two runs, OSD by OSD, job by job";

#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_args(worded(&[
    ("output_format", "Output format: text, json, json-pretty or csv (a row per figure)"),
    ("plot", "Also draw the first pool's rados bench MiB/s, second by second, job after job, as an SVG picture in FILE"),
])))]
pub struct CephArgs {
    /// ceph.conf to use [default: /etc/pve/ceph.conf, else /etc/ceph/ceph.conf]
    #[arg(long, value_name = "FILE")]
    pub conf: Option<PathBuf>,

    /// A pool to bench (repeat for more) [default: every pool for RBD images]
    #[arg(long = "pool", value_name = "NAME")]
    pub pools: Vec<String>,

    /// An OSD to bench, by id (repeat for more) [default: every OSD that is up]
    #[arg(long = "osd", value_name = "ID")]
    pub osds: Vec<i64>,

    /// Seconds of each rados bench run (five runs per pool)
    #[arg(long, value_name = "SECS", default_value_t = SECONDS, value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub seconds: u32,

    /// OSD benches at once
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub parallel: u32,

    /// Bytes each rbd bench job moves, and the scratch image's size, at
    /// least 16M [default: 256M]
    #[arg(long, value_name = "SIZE", value_parser = rbd_size)]
    pub rbd_size: Option<u64>,

    /// Skip the OSD benches
    #[arg(long)]
    pub no_osd_bench: bool,

    /// Skip the pool benches (rados and rbd)
    #[arg(long)]
    pub no_pool_bench: bool,

    /// Bench a pool made for the run instead (the cluster's default size
    /// and PG count, named pveprobe-HOST-PID-TIME) and delete it after;
    /// needs mon_allow_pool_delete on the monitors, checked first
    #[arg(long, conflicts_with_all = ["pools", "no_pool_bench"])]
    pub scratch_pool: bool,

    /// Skip rbd bench
    #[arg(long)]
    pub no_rbd_bench: bool,

    /// Seconds one OSD's bench may take before it is given up on
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub osd_timeout: u64,

    /// Print what would run and write, and do nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Go on without asking (needed without a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,

    #[command(flatten)]
    pub out: OutputArgs,

    /// Read only this node's OSD disks and links, not the other nodes' over ssh
    #[arg(long, help_heading = "Nodes")]
    pub this_node_only: bool,

    /// Also run each pool job from these nodes at once (all: every node
    /// online, or NODE,NODE...), after it ran from this node alone: the
    /// total beside the one-client figure
    #[arg(
        long,
        value_name = "all|NODE,...",
        value_delimiter = ',',
        help_heading = "Nodes"
    )]
    pub clients: Vec<String>,

    /// Seconds past a job's own that a client may take to answer before
    /// it is given up on (told to stop and clean up)
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600), help_heading = "Nodes")]
    pub answer_timeout: u64,

    #[command(flatten)]
    pub reach: ReachArgs,
}

/// What `ceph` runs on another node over ssh: the node's OSD disks' SMART
/// health and its links of Ceph's networks, as JSON.
#[derive(Debug, Args)]
pub struct CephNodeInfoArgs {
    /// ceph.conf to use [default: /etc/pve/ceph.conf, else /etc/ceph/ceph.conf]
    #[arg(long, value_name = "FILE")]
    pub conf: Option<PathBuf>,

    /// A disk below an OSD, by its kernel name (repeat for more)
    #[arg(long = "device", value_name = "NAME")]
    pub devices: Vec<String>,
}

/// What `ceph --clients` runs on each client node: one pool job in a
/// RADOS namespace of its own, started at an agreed time; its figure as
/// one line of JSON. Its stdin closed, it stops and removes its objects.
#[derive(Debug, Args)]
pub struct CephClientArgs {
    /// ceph.conf to use [default: /etc/pve/ceph.conf, else /etc/ceph/ceph.conf]
    #[arg(long, value_name = "FILE")]
    pub conf: Option<PathBuf>,

    #[arg(long, value_name = "NAME")]
    pub pool: String,

    /// The client's RADOS namespace and scratch image name
    #[arg(long, value_name = "NAME")]
    pub namespace: String,

    /// The job's key (rados_write_4m... rbd_read_4k)
    #[arg(long, value_name = "KEY")]
    pub job: String,

    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub seconds: u32,

    /// At most this many bytes written
    #[arg(long, value_name = "BYTES")]
    pub cap: Option<u64>,

    /// Bytes an rbd job moves
    #[arg(long, value_name = "BYTES", default_value_t = RBD_BYTES)]
    pub rbd_bytes: u64,

    /// When to start, ms since the epoch
    #[arg(long, value_name = "MS")]
    pub start_at: u64,
}

/// The smallest scratch image `rbd bench` is run on.
pub const RBD_MIN_BYTES: u64 = 16 << 20;

/// `--rbd-size`: a size of at least [`RBD_MIN_BYTES`].
fn rbd_size(text: &str) -> Result<u64, pveprobe_parse::units::UnitError> {
    pveprobe_parse::units::size_at_least(text, RBD_MIN_BYTES)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_rbd_size_below_the_minimum_is_refused_naming_it() {
        assert_eq!(super::rbd_size("16M"), Ok(16 << 20));
        assert_eq!(
            super::rbd_size("8M"),
            Err(pveprobe_parse::units::UnitError::SizeTooSmall {
                text: "8M".into(),
                min: "16M".into()
            })
        );
        assert!(super::rbd_size("1X").is_err());
    }
}
