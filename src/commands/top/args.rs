//! `pveprobe top`: which guest and which job make the node's IO delay,
//! read-only and live.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::measure_args;
use crate::model::choice::Choice;
use crate::output::Format;

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
  - what else runs: PVE's backup, migration, restore, clone and disk move
    tasks (its task list, each task's process checked), replication jobs,
    a ZFS scrub or resilver (zpool status, every 10 s), Ceph's recovery,
    backfill and scrubs (ceph status, every 30 s), fstrim;
  - each PVE storage on this node: the disks below it and how full it is
    (a thin pool's data and metadata from lvs, a dataset from zfs list, a
    directory from statvfs; every 30 s);
  - what the sampling itself cost: its share of a CPU and its memory.
  On a terminal the view is redrawn every interval, busiest guest first (q
  quits); otherwise one interval is printed (--count or --seconds for more).

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

EXAMPLES
  pveprobe top                                  the live view (q quits)
  pveprobe top --count 10 --output-format json  ten intervals, a JSON line each
  pveprobe top --record top.jsonl               the view, and every interval kept
  pveprobe top --plot io.svg --from top.jsonl   that record drawn
  pveprobe top --count 1 --output-format prometheus --output /var/lib/prometheus/node-exporter/pveprobe_top.prom";

#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
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

    /// Output format: text, json or json-pretty (an object per interval),
    /// csv (rows per interval), influx or prometheus
    #[arg(long, value_name = "FORMAT", value_parser = measure_args::parser::<Format>(), default_value = Format::Text.name())]
    pub output_format: Format,

    /// Write to FILE instead of stdout (the metrics formats: the last
    /// interval only)
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// With --output: add to FILE
    #[arg(long, requires = "output")]
    pub append: bool,

    /// Also add every interval to FILE as a line of JSON
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Draw the run's intervals (the last hour of them), or --from's, as an
    /// SVG picture in FILE: the busiest guests' IOPS and latency, the
    /// node's pressure, on one time axis
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// With --plot: draw a --record file instead of sampling
    #[arg(long, value_name = "RECORD", requires = "plot")]
    pub from: Option<PathBuf>,

    /// Where the VMs' QMP sockets are (tests)
    #[arg(long, value_name = "DIR", default_value = crate::pvevm::qmp::RUN_DIR, hide = true)]
    pub qmp_dir: PathBuf,

    /// Read the guests' configs from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", default_value = crate::pvestorage::ETC_PVE, hide = true)]
    pub pve_dir: PathBuf,

    /// PVE's active task list (tests)
    #[arg(long, value_name = "FILE", default_value = crate::nodeio::jobs::TASKS_FILE, hide = true)]
    pub tasks_file: PathBuf,

    /// PVE's replication state (tests)
    #[arg(long, value_name = "FILE", default_value = crate::nodeio::jobs::REPLICATION_STATE, hide = true)]
    pub replication_state: PathBuf,

    /// Present when ZFS is loaded (tests)
    #[arg(long, value_name = "DIR", default_value = crate::nodeio::jobs::ZFS_KSTAT, hide = true)]
    pub zfs_kstat: PathBuf,
}
