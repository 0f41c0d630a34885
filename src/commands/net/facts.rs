//! What `pveprobe net-info` prints of a node: its interfaces, where
//! corosync runs knet's statistics, and its running VMs (their QMP sockets:
//! what a migration would move).

use std::process::Command;
use std::time::Duration;

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
    let mut cmd = Command::new("corosync-cmapctl");
    cmd.args(["-m", "stats"]);
    match crate::sys::child::run(
        &mut cmd,
        &crate::sys::child::ChildOptions::limit(Duration::from_secs(5)),
    ) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
        Err(e) => (
            None,
            Some(format!("corosync-cmapctl: {}", crate::error::describe(&e))),
        ),
        Ok(f) if !f.success() => (
            None,
            Some(format!(
                "corosync-cmapctl -m stats: {} {}",
                f.status_words(),
                f.first_error_line()
            )),
        ),
        Ok(f) => match pveprobe_parse::knet::parse(&String::from_utf8_lossy(&f.stdout)) {
            Ok(stats) => (Some(stats), None),
            Err(e) => (None, Some(format!("corosync-cmapctl -m stats: {e}"))),
        },
    }
}
