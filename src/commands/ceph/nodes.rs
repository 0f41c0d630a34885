//! The nodes that hold OSDs: the SMART health of the disks below their
//! OSDs and their links of Ceph's networks. This node reads its own;
//! every other node is asked over the ssh `pveprobe cluster` uses, where
//! `pveprobe ceph-node-info` reads the same on that node and prints it as
//! JSON ([`CephNodeFacts`]). A node that cannot be reached is named in a note:
//! its OSDs are still benched, only their disks' health and the node's
//! links are missing.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::network::{self, CephLink};
use super::report::CephReport;
use crate::model::host::NodeLoad;
use crate::model::storage::{Health, Link};
use crate::nodes::members::Node;
use crate::nodes::remote;
use crate::nodes::{Reach, load_nodes};
use crate::sys::host::Host;
use crate::sys::interrupt::Interrupt;

/// How long a node gets to answer (one smartctl per disk, each bounded).
const NODE_LIMIT: Duration = Duration::from_secs(120);

/// What `pveprobe ceph-node-info` prints: one node's disks and links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CephNodeFacts {
    pub pveprobe_version: String,
    pub node: String,
    pub disks: Vec<DiskHealth>,
    pub links: Vec<CephLink>,
    pub notes: Vec<String>,
    /// How loaded the node was when read (before the benches): what its
    /// OSDs share the node's CPUs with. Absent from older pveprobes.
    #[serde(default)]
    pub load: Option<NodeLoad>,
}

/// `host`'s load, from /proc/loadavg and /proc/pressure/cpu, beside the
/// CPUs this node's pveprobe may use (`sys::cpus`, the one count).
pub fn node_load(host: &Host) -> Option<NodeLoad> {
    use pveprobe_parse::pressure;
    let load = pressure::loadavg(&host.read("/proc/loadavg").ok()?)?;
    Some(NodeLoad {
        load1: load[0],
        cpus: crate::sys::cpus::usable(),
        cpu_pressure_pct: host
            .read("/proc/pressure/cpu")
            .ok()
            .and_then(|t| pressure::pressure(&t))
            .map(|p| p.some.avg60),
    })
}

/// One disk's SMART health (or why there is none) and its links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskHealth {
    /// The kernel's name (`sda`, `nvme0n1`), as Ceph's metadata gives it.
    pub device: String,
    pub health: Option<Health>,
    pub problem: Option<String>,
    /// Its SATA link, SAS phy or USB port and its controller's PCIe link (sysfs).
    #[serde(default)]
    pub links: Vec<Link>,
}

/// A kernel device name as Ceph's `devices` gives it: letters, digits,
/// `_`, `-`, `.`, not starting with `-` or `.`.
pub fn valid_device(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['-', '.'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// This node's facts: `devices`' SMART health (read-only, a disk asleep
/// left asleep) and its links of the networks in ceph.conf at `conf`.
pub fn facts(
    host: &Host,
    conf: &Path,
    node: &str,
    devices: &[String],
    interrupt: Option<&Interrupt>,
) -> CephNodeFacts {
    let mut notes = Vec::new();
    let disks = devices
        .iter()
        .map(|d| {
            if !valid_device(d) {
                return DiskHealth {
                    device: d.clone(),
                    health: None,
                    problem: Some(format!("{d:?} is not a device name")),
                    links: Vec::new(),
                };
            }
            let r = crate::blockstack::smart::read(&format!("/dev/{d}"), None, interrupt);
            DiskHealth {
                device: d.clone(),
                health: r.health,
                problem: r.problem,
                links: crate::blockstack::sysfs::disk(host, d).links,
            }
        })
        .collect();
    let links = network::this_node(host, conf, node).unwrap_or_else(|e| {
        notes.push(format!("Ceph's networks on {node} not read: {e}"));
        Vec::new()
    });
    CephNodeFacts {
        pveprobe_version: env!("CARGO_PKG_VERSION").into(),
        node: node.into(),
        disks,
        links,
        notes,
        load: node_load(host),
    }
}

/// Whether a host name Ceph gives (`pve1.example.com`) is `node`.
pub fn same_host(host: &str, node: &str) -> bool {
    host == node || host.split('.').next() == Some(node) || node.split('.').next() == Some(host)
}

/// The devices below each node's OSDs, by the host name Ceph gives.
fn devices_by_host(report: &CephReport) -> BTreeMap<String, Vec<String>> {
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for o in &report.osds {
        if let Some(h) = &o.host {
            let list = by.entry(h.clone()).or_default();
            for d in &o.devices {
                if !list.contains(d) {
                    list.push(d.clone());
                }
            }
        }
    }
    by
}

/// Puts one node's facts into the report: each disk's health on the
/// OSDs of that host that sit on it, the links with the node named.
pub fn merge(report: &mut CephReport, host: &str, facts: CephNodeFacts, remote: bool) {
    let mut missing = false;
    for d in &facts.disks {
        for o in report
            .osds
            .iter_mut()
            .filter(|o| o.host.as_deref() == Some(host) && o.devices.contains(&d.device))
        {
            o.health.extend(d.health.clone());
            o.links
                .extend(d.links.iter().map(|l| (d.device.clone(), l.clone())));
        }
        if d.health.is_none()
            && d.problem
                .as_deref()
                .is_some_and(|p| p.contains("not installed"))
        {
            missing = true;
        }
    }
    if missing {
        report.notes.push(format!(
            "smartctl is not installed on {} (package smartmontools): its OSDs' disks' health was not read",
            facts.node
        ));
    }
    for o in report
        .osds
        .iter_mut()
        .filter(|o| o.host.as_deref() == Some(host))
    {
        o.node_load = facts.load;
    }
    report.notes.extend(facts.notes);
    report.networks.extend(facts.links.into_iter().map(|mut l| {
        if remote {
            l.node = Some(facts.node.clone());
        }
        l
    }));
}

/// How the other nodes are reached, and what `ceph-node-info` is told.
pub struct NodeReach<'a> {
    pub reach: &'a Reach,
    /// `--conf`, forwarded when given (PVE's ceph.conf is the same path on every node).
    pub conf: Option<&'a Path>,
}

/// The words the node's shell runs.
fn node_line(reach: &NodeReach, devices: &[String]) -> String {
    let mut words: Vec<String> = vec!["ceph-node-info".into()];
    if let Some(conf) = reach.conf {
        words.extend(["--conf".into(), conf.display().to_string()]);
    }
    for d in devices.iter().filter(|d| valid_device(d)) {
        words.extend(["--device".into(), d.clone()]);
    }
    remote::timed_line(&reach.reach.remote_command, &words, NODE_LIMIT)
}

/// Reads every node that holds OSDs: this one directly, the others over
/// ssh (when `reach` is given and the node is in its list).
pub fn read_all(
    report: &mut CephReport,
    this_node: &str,
    conf: &Path,
    reach: Option<&NodeReach>,
    interrupt: &Interrupt,
) {
    let host = Host::real();
    let by_host = devices_by_host(report);
    let mine = by_host
        .iter()
        .find(|(h, _)| same_host(h, this_node))
        .map(|(h, d)| (h.clone(), d.clone()));
    let (mine_host, mine_devices) = mine.unwrap_or_else(|| (this_node.to_string(), Vec::new()));
    let f = facts(&host, conf, this_node, &mine_devices, Some(interrupt));
    merge(report, &mine_host, f, false);
    let others: Vec<(String, Vec<String>)> = by_host
        .into_iter()
        .filter(|(h, _)| !same_host(h, this_node))
        .collect();
    if others.is_empty() {
        return;
    }
    let Some(reach) = reach else {
        report.notes.push(format!(
            "OSDs on {}: --this-node-only, their disks' health and links not read",
            others
                .iter()
                .map(|o| o.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return;
    };
    let members = match load_nodes(reach.reach) {
        Ok((m, _)) => m.nodes,
        Err(e) => {
            report.notes.push(format!(
                "the other nodes' OSD disks and links not read: {e}"
            ));
            return;
        }
    };
    let ssh = reach.reach.ssh(&[]);
    for (h, devices) in others {
        if interrupt.signal().is_some() {
            break;
        }
        let Some(node) = members.iter().find(|n| same_host(&h, &n.name)) else {
            report.notes.push(format!(
                "node {h} (of OSDs) is not in the cluster's node list: its OSDs' disks and its links not read"
            ));
            continue;
        };
        match ask(&ssh, node, reach, &devices) {
            Ok(f) => merge(report, &h, f, true),
            Err(why) => report.notes.push(format!(
                "node {} not read ({why}): its OSDs' disks' health and its links of Ceph's networks are missing",
                node.name
            )),
        }
    }
}

/// `ceph-node-info` on `node`, over ssh.
fn ask(
    ssh: &remote::Ssh,
    node: &Node,
    reach: &NodeReach,
    devices: &[String],
) -> Result<CephNodeFacts, String> {
    if !node.contacted() {
        return Err("offline in pmxcfs's members list".into());
    }
    let line = node_line(reach, devices);
    let run = crate::sys::child::run(
        remote::SSH,
        &ssh.args(node, &line, false),
        &remote::ssh_opts(NODE_LIMIT),
    );
    let facts = remote::answer::<CephNodeFacts>(&run, NODE_LIMIT, "ceph-node-info").map_err(
        |(status, detail)| match detail {
            Some(d) => format!("{}: {d}", status.word()),
            None => status.word().to_string(),
        },
    )?;
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_kernel_names_reach_a_node_or_smartctl() {
        for ok in ["sda", "nvme0n1", "dm-0", "sdb1", "vd_a.1"] {
            assert!(valid_device(ok), "{ok}");
        }
        for bad in ["", "-o", ".x", "../sda", "sd a", "sda;rm", "a/b", "$(x)"] {
            assert!(!valid_device(bad), "{bad}");
        }
    }

    #[test]
    fn a_host_is_its_node_with_or_without_its_domain() {
        assert!(same_host("pve1", "pve1"));
        assert!(same_host("pve1.example.com", "pve1"));
        assert!(same_host("pve1", "pve1.example.com"));
        assert!(!same_host("pve10", "pve1"));
        assert!(!same_host("pve2.example.com", "pve1"));
    }

    #[test]
    fn the_nodes_line_is_quoted_and_carries_only_plain_devices() {
        let reach = Reach {
            members: "/etc/pve/.members".into(),
            nodes: vec![],
            nodes_file: None,
            remote_command: vec!["sudo".into(), "/opt/my tools/pveprobe".into()],
            ssh_user: "root".into(),
            connect_timeout: 5,
            ssh_config: None,
            ssh_options: vec![],
        };
        let r = NodeReach {
            reach: &reach,
            conf: Some(Path::new("/etc/pve/ceph.conf")),
        };
        let line = node_line(&r, &["sda".into(), "x;reboot".into(), "nvme0n1".into()]);
        assert_eq!(
            line,
            "timeout -k 5 120 sudo '/opt/my tools/pveprobe' ceph-node-info --conf /etc/pve/ceph.conf --device sda --device nvme0n1"
        );
    }

    #[test]
    fn a_nodes_disk_health_lands_on_its_own_osds_only() {
        let osd = |id, host: &str, dev: &str| super::super::report::OsdResult {
            id,
            host: Some(host.into()),
            devices: vec![dev.into()],
            ..Default::default()
        };
        let mut report = CephReport {
            osds: vec![
                osd(0, "pve1", "sda"),
                osd(1, "pve2", "sda"),
                osd(2, "pve2", "sdb"),
            ],
            ..CephReport::default()
        };
        let failed = Health {
            passed: Some(false),
            ..Health::default()
        };
        let sata_at_3g = Link {
            kind: "SATA".into(),
            at: "ata1".into(),
            current: "3.0 Gb/s".into(),
            ceiling_mb_s: 300.0,
            capable: Some("6.0 Gb/s".into()),
            capable_mb_s: Some(600.0),
            capable_by: Some("the disk and the port".into()),
        };
        let facts = CephNodeFacts {
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            node: "pve2".into(),
            disks: vec![
                DiskHealth {
                    device: "sda".into(),
                    health: Some(failed.clone()),
                    problem: None,
                    links: vec![sata_at_3g.clone()],
                },
                DiskHealth {
                    device: "sdb".into(),
                    health: None,
                    problem: Some("smartctl is not installed: ...".into()),
                    links: Vec::new(),
                },
            ],
            links: vec![CephLink {
                kind: "public".into(),
                network: "10.0.0.0/24".into(),
                interface: Some("ens1".into()),
                speed_mbps: Some(1000),
                shares_corosync: None,
                node: None,
            }],
            notes: vec![],
            load: Some(NodeLoad {
                load1: 9.5,
                cpus: 4,
                cpu_pressure_pct: Some(35.0),
            }),
        };
        merge(&mut report, "pve2", facts, true);
        // pve2's load lands on its OSDs only.
        assert_eq!(report.osds[1].node_load.map(|l| l.load1), Some(9.5));
        assert_eq!(report.osds[0].node_load, None);
        assert!(
            report.osds[0].health.is_empty(),
            "pve1's sda is another disk"
        );
        assert_eq!(report.osds[1].health, [failed]);
        assert_eq!(report.osds[1].links, [("sda".to_string(), sata_at_3g)]);
        assert!(report.osds[0].links.is_empty());
        assert!(report.osds[2].health.is_empty());
        assert!(report.notes[0].contains("not installed on pve2"));
        assert_eq!(report.networks[0].node.as_deref(), Some("pve2"));
    }
}
