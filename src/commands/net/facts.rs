//! What `pveprobe net-info` prints of a node: its interfaces, where
//! corosync runs knet's statistics, and its running VMs (their QMP sockets:
//! what a migration would move).

use std::time::Duration;

use crate::sys::child::ToolFailure;

use serde::{Deserialize, Serialize};

use crate::nodes::iface::Iface;
use pveprobe_parse::knet::KnetStats;

/// What `pveprobe net-info` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFacts {
    pub pveprobe_version: String,
    pub interfaces: Vec<Iface>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knet: Option<KnetStats>,
    /// Why knet's statistics are missing where corosync-cmapctl exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knet_error: Option<String>,
    /// The VMs running here (`VMID.qmp` in `/var/run/qemu-server`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running_vms: Vec<u32>,
}

/// This host's facts: its interfaces and, where corosync-cmapctl exists,
/// knet's statistics.
pub fn facts(qmp_dir: &std::path::Path) -> std::io::Result<NodeFacts> {
    let (knet, knet_error) = knet_stats();
    Ok(NodeFacts {
        pveprobe_version: env!("CARGO_PKG_VERSION").into(),
        interfaces: crate::nodes::iface::interfaces()?,
        knet,
        knet_error,
        running_vms: crate::nodeio::read::running_vms(qmp_dir),
    })
}

/// `corosync-cmapctl -m stats`: knet's own per-link counters, which cost
/// no traffic. Nothing when corosync is not installed.
fn knet_stats() -> (Option<KnetStats>, Option<String>) {
    let limit = crate::sys::child::ChildOptions::limit(Duration::from_secs(5));
    match crate::sys::child::run("corosync-cmapctl", &["-m", "stats"], &limit) {
        Err(ToolFailure::NotStarted { missing: true, .. }) => (None, None),
        Err(e) => (None, Some(format!("corosync-cmapctl -m stats: {e}"))),
        Ok(f) => match pveprobe_parse::knet::parse(&f.stdout_text()) {
            Ok(stats) => (Some(stats), None),
            Err(e) => (None, Some(format!("corosync-cmapctl -m stats: {e}"))),
        },
    }
}
