//! What a network run measures and how: the plain options `net` and
//! `cluster --net` make from their arguments.

/// What `--net` measures and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// TCP throughput each way too, never on a corosync link.
    pub net_throughput: bool,
    /// `--link`: only these links, or NAME=CIDR for one more.
    pub links: Vec<String>,
    /// Latency probes per pair and link.
    pub net_count: u32,
    /// Probes per second at most.
    pub net_rate: u32,
    /// Seconds of each throughput run.
    pub net_seconds: u32,
    /// TCP streams at once for the second throughput run.
    pub net_streams: u32,
    /// The responders' port instead of a free one.
    pub port: Option<u16>,
    /// Where corosync.conf, datacenter.cfg and ceph.conf are.
    pub pve_config: std::path::PathBuf,
}

/// Extra seconds the node's `timeout` and our own wait allow beyond the
/// measurement's own bound.
pub(super) const SLACK: std::time::Duration = std::time::Duration::from_secs(15);

/// The longest line a responder says (its counts as one JSON line).
pub(super) const MAX_LINE: usize = 64 << 10;
