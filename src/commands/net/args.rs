//! `pveprobe net NODE...` and `cluster --net`: the options of the
//! network measurement between nodes; and the hidden `net-serve`,
//! `net-probe`, `net-info`, `net-migrate` and `net-sink` that run on the
//! nodes through ssh.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

use crate::commands::common::net_args::{NET_AFTER_HELP, NetOptions};
use crate::commands::common::reach_args::ReachArgs;

/// `pveprobe net NODE NODE...`.
#[derive(Debug, Args)]
#[command(after_long_help = NET_AFTER_HELP)]
#[command(mut_args(worded(&[
    ("quiet", "No progress on stderr (notes, warnings and errors are still said): for cron and scripts. Without it, each node's step is a line"),
    ("output_format", "text (the matrix), json, json-pretty or csv (a row per link and pair), influx or prometheus (a subject per link, pair and way)"),
    ("output", "Write the matrix to FILE instead of stdout"),
    ("plot", "Also draw the migration path as an SVG picture in FILE: a panel per pair and way, bars for secure, insecure and the link's TCP (with --net-throughput)"),
])))]
pub struct NetArgs {
    /// The nodes to measure between (names of the members list, or of
    /// --nodes): every pair of them
    #[arg(value_name = "NODE", num_args = 2.., required = true)]
    pub pair_nodes: Vec<String>,

    #[command(flatten)]
    pub reach: ReachArgs,

    /// Measure all pairs at once (refused with --net-throughput on a link
    /// corosync shares)
    #[arg(long, help_heading = "Nodes")]
    pub parallel: bool,

    /// List the links and pairs that would be measured, and run nothing
    #[arg(long, help_heading = "Nodes")]
    pub dry_run: bool,

    #[command(flatten)]
    pub net_options: NetOptions,

    #[command(flatten)]
    pub out: OutputArgs,
}

/// `pveprobe net-serve`: the responder (run by `net` over ssh).
#[derive(Debug, Args)]
pub struct NetServeArgs {
    /// This node's address on the link: the only one bound
    #[arg(long, value_name = "ADDR")]
    pub bind: IpAddr,
    /// The only address answered
    #[arg(long, value_name = "ADDR")]
    pub peer: IpAddr,
    /// 0: a free port
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub port: u16,
    /// Exit after this many seconds whatever happens
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub lifetime: u64,
    /// Datagrams answered per second at most
    #[arg(long, value_name = "PPS", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_rate: u32,
}

/// `pveprobe net-probe`: the measuring end (run by `net` over ssh).
#[derive(Debug, Args)]
pub struct NetProbeArgs {
    /// This node's address on the link
    #[arg(long, value_name = "ADDR")]
    pub from: IpAddr,
    /// The responder's ADDR:PORT ([ADDR]:PORT for IPv6)
    #[arg(long, value_name = "ADDR:PORT")]
    pub to: SocketAddr,
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub count: u32,
    #[arg(long, value_name = "PPS", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rate: u32,
    /// Also the path MTU each way
    #[arg(long)]
    pub mtu: bool,
    /// TCP throughput each way for this many seconds per run
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u32).range(1..=60))]
    pub throughput_seconds: Option<u32>,
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub streams: u32,
}

/// `pveprobe net-migrate`: one way of the secure migration channel, from
/// this node (run by `net` over ssh).
#[derive(Debug, Args)]
pub struct NetMigrateArgs {
    /// The target's node name (ssh's HostKeyAlias, its known_hosts)
    #[arg(long, value_name = "NODE", value_parser = node_name)]
    pub node: String,
    /// The target's address in the migration network
    #[arg(long, value_name = "ADDR")]
    pub to: IpAddr,
    /// `forward` or `back`: which way of the pair, as the report names it
    #[arg(long, value_name = "WAY", value_parser = ["forward", "back"])]
    pub way: String,
    /// Seconds of the stream
    #[arg(long, value_name = "SECS", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=60))]
    pub seconds: u32,
    /// Seconds ssh may take to connect
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=120))]
    pub connect_timeout: u32,
    /// Where the cluster's files are (the nodes' ssh_known_hosts)
    #[arg(long, value_name = "DIR", default_value = "/etc/pve")]
    pub pve_config: PathBuf,
    /// How the target runs pveprobe: a word each (default: pveprobe)
    #[arg(long = "remote-word", value_name = "WORD")]
    pub remote: Vec<String>,
}

/// `pveprobe net-sink`: the target's end of `net-migrate`'s stream (run
/// by its ssh).
#[derive(Debug, Args)]
pub struct NetSinkArgs {
    /// The private directory to make in /run: pveprobe.<16 hex digits>
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// Exit after this many seconds whatever happens
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub lifetime: u64,
}

/// A PVE node name: letters, digits, `-` and `.` (a host name).
fn node_name(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 253
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    if ok {
        Ok(s.to_string())
    } else {
        Err("a node name is letters, digits, '-' and '.'".into())
    }
}

/// `pveprobe net-info`: this node's interfaces, knet's statistics and
/// running VMs, as JSON (run by `net` over ssh).
#[derive(Debug, Args)]
pub struct NetInfoArgs {
    /// Where the VMs' QMP sockets are
    #[arg(long, value_name = "DIR", env = "PVEPROBE_QMP_DIR", default_value = crate::pvevm::qmp::RUN_DIR, hide = true)]
    pub qmp_dir: PathBuf,
}
