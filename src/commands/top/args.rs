//! `pveprobe top`: which guest and which job make the node's IO delay,
//! read-only and live.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};
use crate::commands::common::source_args::SourceArgs;

pub const AFTER_HELP: &str = "\
WHAT IT SHOWS
  Every --interval (1 s), read-only:
  - each running VM's drives as the guest sees them, from QEMU's own
    counters through the VM's QMP socket (/var/run/qemu-server/VMID.qmp,
    query-blockstats): reads and writes a second, MiB/s, and the mean time
    an operation took as the guest waited. The socket is visited once per
    interval and left at once, as qemu-server does (pvestatd, qm and the GUI
    need it); a socket another client holds is left alone and read next
    time;
  - each container's I/O from its cgroup (io.stat, or blkio on cgroup v1);
  - the node's disks (/proc/diskstats): IOPS, MiB/s, the mean wait of a read
    and a write (AWAIT), requests in flight (QUEUE) and the share of the
    interval with one in flight (UTIL), each with the guest drives on it;
  - the node's pressure: IO delay (the CPUs' iowait, what PVE's IO delay
    graph draws), PSI's share of the interval some or all tasks waited for
    I/O, CPU and memory, dirty and writeback pages;
  - each running guest's CPU, memory and network: the CPU it used, its
    vCPUs' READY share (runnable but not running, each vCPU thread's run
    queue wait, as esxtop's %RDY; a container's from its cgroup's PSI)
    beyond what its own cpulimit held it (LIMITED, its cgroup's cpu.stat),
    the host memory its QEMU holds and what of it is in swap, its balloon
    against its maximum and the guest's own report, its cgroup's pressure,
    and each tap or veth's MiB/s, packets and drops, as the guest sees them;
  - the node against its guests: vCPUs per core, memory available, the
    memory the running guests were given, swap, the ZFS ARC, KSM, and each
    OOM kill from the kernel's log, its victim named;
  - what else runs: PVE's backup, migration, restore, clone and disk move
    tasks (its task list, each task's process checked), replication jobs,
    a ZFS scrub or resilver (zpool status, every 10 s), Ceph's recovery,
    backfill and scrubs (ceph status, every 30 s), fstrim;
  - each PVE storage on this node: the disks below it and how full it is
    (a thin pool's data and metadata from lvs, a dataset from zfs list, a
    directory from statvfs; every 30 s);
  - what the sampling itself cost: its share of a CPU and its memory.
  On a terminal the view is redrawn every interval, busiest guest first; i, c,
  m and n switch the guests' panel (I/O, CPU, memory, network), q quits;
  otherwise one interval is printed (--count or --seconds for more).

THE RECORD (pveprobe record --help, docs/record.md)
  With pveprobe-record.service running, the node's intervals are kept for a
  week: --worst ranks its worst moments, --at shows the view at a moment
  and steps through it, --between gives a window in any format.

HINTS (docs/hints.md)
  top-guest-drives-disk      a guest makes half or more of a busy disk's
                             operations (80% utilised or 20 ms waits, or
                             the node's tasks waited for I/O 20% of the time)
  top-guest-waits-above-disk a guest drive's operations took 3x its disk's
                             wait and 5 ms more: the queue is above the disk
  top-disk-saturated         a disk with a request in flight 95% of the time
  top-io-pressure            the node's tasks waited for I/O 20% of the time
  top-job-while-guests-wait  a backup, migration, scrub, Ceph recovery... runs
                             while the node waits (20%) or a guest waits 20 ms
  top-storage-near-full      a thin pool, dataset or directory 90% full
  guest-cpu-ready            a guest's vCPU ready 10% of the time: the node's
                             cores are short (vCPUs per core, who used them)
  guest-cpu-limited          its own cpulimit held it 10% of the time
  guest-memory-swapped       host swap holds 64 MiB of it and the node swaps in
  guest-balloon-squeezed     its balloon is below its maximum while it swaps
                             or faults
  guest-oom-killed           the OOM killer killed it: when, and the memory then
  guest-net-drops            packets dropped on its interface
  node-memory-overcommitted  the running guests and the ARC's maximum over RAM
  arc-squeezes-guests        the ARC holds memory while guests swap or the
                             node is short

EXAMPLES
  pveprobe top                                  the live view (q quits)
  pveprobe top --count 10 --output-format json  ten intervals, a JSON line each
  pveprobe top --record /tmp/top                the view, every interval kept there
  pveprobe top --from /tmp/top --between -1h now --plot io.svg   that hour drawn
  pveprobe top --worst                          last 24 hours' worst moments
  pveprobe top --worst --since 7d --output-format csv
  pveprobe top --worst --cluster                every node's, ranked together
  pveprobe top --at 03:00                       the view at 3 a.m. (pveprobe record)
  pveprobe top --between 'yesterday 02:50' 'yesterday 03:30' --output-format json
  pveprobe top --count 1 --output-format prometheus --output /var/lib/prometheus/node-exporter/pveprobe_top.prom";

#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_args(worded(&[
    ("output_format", "Output format: text, json or json-pretty (an object per interval), csv (rows per interval), influx or prometheus"),
    ("output", "Write to FILE instead of stdout (the metrics formats: the last interval only)"),
    ("append", "With --output: add to FILE"),
    ("plot", "Draw the run's intervals (the last hour of them), or --between's window of the store, as an SVG picture in FILE: the busiest guests' IOPS and latency, the node's pressure, on one time axis"),
])))]
pub struct TopArgs {
    /// Seconds between readings
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = pveprobe_parse::units::seconds_between(0.1, 3600.0))]
    pub interval: f64,

    /// Stop after N intervals [default: on a terminal, with --record or
    /// --plot, until q or Ctrl-C; else 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    /// Stop after SECS seconds
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub seconds: Option<u64>,

    #[command(flatten)]
    pub out: OutputArgs,

    /// Also keep every interval in a store in DIR, as pveprobe record
    /// keeps them (read back with --from DIR and --between, --at or
    /// --worst); refused when a recorder writes there
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// The store --at, --between and --worst read (pveprobe record's
    /// directory, or top --record's) [default: the recorder's,
    /// /var/lib/pveprobe/record or its PVEPROBE_RECORD_DIR]
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,

    /// Show the recorded interval at TIME: 03:00 (the last 3 a.m.),
    /// "yesterday 03:00", "2026-12-06 03:00", an RFC 3339 time, -2h. On a
    /// terminal, step through the record from there (left/right one
    /// interval, PgUp/PgDn an hour, w the next bad moment, q quits);
    /// without one (stdout or stdin), that interval written
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, conflicts_with_all = ["between", "worst", "count", "seconds", "record"])]
    pub at: Option<String>,

    /// The recorded intervals from A to B, in any output format (times as
    /// --at's; now for B)
    #[arg(long, num_args = 2, value_names = ["A", "B"], allow_hyphen_values = true, conflicts_with_all = ["worst", "count", "seconds", "record"])]
    pub between: Option<Vec<String>>,

    /// The record's worst moments, merged into episodes and ranked: when and
    /// how long, how bad, the disk, the guests and their share of its
    /// operations, the job that ran, the hints
    #[arg(long, conflicts_with_all = ["count", "seconds", "record", "plot"])]
    pub worst: bool,

    /// With --worst: how far back [default: 24h] (24h, 7d, 90m)
    #[arg(long, value_name = "SPAN", requires = "worst")]
    pub since: Option<String>,

    /// With --worst: ask every node of the cluster (over ssh, as pveprobe
    /// cluster reaches them) and rank the cluster's worst moments, each
    /// with its node; a node without a recorder, or that does not answer,
    /// is named
    #[arg(long, requires = "worst")]
    pub cluster: bool,

    /// With --worst: the episodes shown at most
    #[arg(long, value_name = "N", default_value_t = 10, requires = "worst", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub episodes: u64,

    #[command(flatten)]
    pub reach: crate::commands::common::reach_args::ReachArgs,

    #[command(flatten)]
    pub sources: SourceArgs,
}
