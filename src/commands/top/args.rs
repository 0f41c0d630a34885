//! `pveprobe top`: which guest and which job make the node's IO delay,
//! read-only and live.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::OutputArgs;

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

EXAMPLES
  pveprobe top                                  the live view (q quits)
  pveprobe top --count 10 --output-format json  ten intervals, a JSON line each
  pveprobe top --record top.jsonl               the view, and every interval kept
  pveprobe top --plot io.svg --from top.jsonl   that record drawn
  pveprobe top --worst                          last 24 hours' worst moments
  pveprobe top --worst --since 7d --output-format csv
  pveprobe top --worst --cluster                every node's, ranked together
  pveprobe top --at 03:00                       the view at 3 a.m. (pveprobe record)
  pveprobe top --between 'yesterday 02:50' 'yesterday 03:30' --output-format json
  pveprobe top --count 1 --output-format prometheus --output /var/lib/prometheus/node-exporter/pveprobe_top.prom";

#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_arg("output_format", |a| a.help("Output format: text, json or json-pretty (an object per interval), csv (rows per interval), influx or prometheus")))]
#[command(mut_arg("output", |a| a.help("Write to FILE instead of stdout (the metrics formats: the last interval only)")))]
#[command(mut_arg("append", |a| a.help("With --output: add to FILE")))]
#[command(mut_arg("plot", |a| a.help("Draw the run's intervals (the last hour of them), or --from's, as an SVG picture in FILE: the busiest guests' IOPS and latency, the node's pressure, on one time axis")))]
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

    /// Also add every interval to FILE as a line of JSON
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Read recorded intervals instead of sampling: a store (pveprobe
    /// record's directory; with --at, --between or --worst, the recorder's,
    /// /var/lib/pveprobe/record or its PVEPROBE_RECORD_DIR), or with --plot
    /// a --record file
    #[arg(long, value_name = "DIR|RECORD")]
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

/// Where a run reads the node (the tests' stand-ins; hidden).
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
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

pub const RECORD_AFTER_HELP: &str = "\
WHAT IT KEEPS
  top's intervals, read by top's own sampler every --interval (10 s): each
  VM drive's I/O and latency as QEMU counts it, each container's, the disks,
  the node's IO delay and pressure, PVE's tasks and the other jobs, the
  storages and the hints. top reads them back: --worst ranks the worst
  moments, --at shows the view at a moment, --between gives a window.

THE STORE (docs/record.md)
  One file a day in --dir (/var/lib/pveprobe/record), written only at its
  end, each interval a frame under its own checksum: a crash or power loss
  loses at most the interval being written, and damage is skipped, with a
  note, to the next good frame. Whole days are dropped past --retain-days,
  and the oldest while the store is over --max-size or 5% of its
  filesystem's free space. On a full filesystem it pauses, says so once,
  and goes on when there is room. One recorder a store.

THE SERVICE
  The .deb ships pveprobe-record.service, not enabled. To record, on each
  node: systemctl enable --now pveprobe-record. It runs at idle CPU and I/O
  priority, with a memory limit, read-only but for its store; SIGTERM stops
  it cleanly.

SETTINGS (/etc/default/pveprobe-record)
  The service reads its settings from there, as these variables; a flag
  given on the command line wins.
  PVEPROBE_RECORD_INTERVAL     --interval
  PVEPROBE_RECORD_DIR          --dir
  PVEPROBE_RECORD_RETAIN_DAYS  --retain-days
  PVEPROBE_RECORD_MAX_SIZE     --max-size
  PVEPROBE_RECORD_TEXTFILE     --textfile
  PVEPROBE_RECORD_METRIC_SERVERS --metric-servers (yes or no)

EXAMPLES
  systemctl enable --now pveprobe-record     record on this node
  pveprobe top --worst                       the last 24 hours' worst moments
  pveprobe top --at 03:00                    the view at 3 a.m.
  pveprobe top --between -2h now --output-format csv
  pveprobe record --dir /tmp/rec --interval 1 --count 60
  pveprobe record --metric-servers         also to PVE's metric servers";

#[derive(Debug, Args)]
#[command(after_long_help = RECORD_AFTER_HELP)]
pub struct RecordArgs {
    /// Seconds between readings
    #[arg(long, value_name = "SECS", env = "PVEPROBE_RECORD_INTERVAL", default_value_t = 10.0, value_parser = pveprobe_parse::units::seconds_between(1.0, 3600.0))]
    pub interval: f64,

    /// The store's directory
    #[arg(long, value_name = "DIR", env = "PVEPROBE_RECORD_DIR", default_value = crate::store::DEFAULT_DIR)]
    pub dir: PathBuf,

    /// Whole days kept before today's
    #[arg(long, value_name = "DAYS", env = "PVEPROBE_RECORD_RETAIN_DAYS", default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=366))]
    pub retain_days: u32,

    /// The store's size at most (and never over 5% of its filesystem's
    /// free space)
    #[arg(long, value_name = "SIZE", env = "PVEPROBE_RECORD_MAX_SIZE", default_value = "1G", value_parser = max_size)]
    pub max_size: u64,

    /// Also write each interval to FILE as node_exporter's textfile
    /// (prometheus format, replaced whole)
    #[arg(long, value_name = "FILE", env = "PVEPROBE_RECORD_TEXTFILE")]
    pub textfile: Option<PathBuf>,

    /// Also send each interval to the external metric servers set up in
    /// PVE (/etc/pve/status.cfg: InfluxDB over UDP or HTTP(S), Graphite
    /// over TCP or UDP), tagged and named as PVE's own metrics are
    #[arg(long, env = "PVEPROBE_RECORD_METRIC_SERVERS")]
    pub metric_servers: bool,

    /// Stop after N intervals [default: until SIGTERM or Ctrl-C]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    #[command(flatten)]
    pub sources: SourceArgs,
}

fn max_size(text: &str) -> Result<u64, String> {
    pveprobe_parse::units::size_at_least(text, 1 << 20).map_err(|e| e.to_string())
}
