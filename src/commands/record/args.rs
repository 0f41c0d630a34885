//! `pveprobe record`'s arguments: the node's intervals kept in a store,
//! as the service runs it.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::source_args::SourceArgs;

pub const AFTER_HELP: &str = "\
WHAT IT KEEPS
  top's intervals, read by the sampler top stands on every --interval (10 s): each
  VM drive's I/O and latency as QEMU counts it, each container's, the disks,
  the node's IO delay and pressure, each guest's CPU (used, ready, limited),
  memory and network, the node's memory, ARC and OOM kills (each victim
  named from the kernel's log), PVE's tasks and the other jobs, the
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
#[command(after_long_help = AFTER_HELP)]
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
