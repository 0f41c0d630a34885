//! Ceph's public and cluster networks on this node: which interface
//! carries each (ceph.conf's `public_network` and `cluster_network`
//! against this node's addresses), its link speed (sysfs), and whether
//! corosync shares it (this node's corosync.conf addresses). Proxmox asks
//! for 10 Gb/s or more for Ceph, and for corosync on a network of its own.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::nodes::iface::{self, Iface};
use crate::sys::host::Host;
use pveprobe_parse::cephconf::CephConf;
use pveprobe_parse::cidr::Cidr;

/// Below this link speed, in Mb/s, a Ceph network is slower than Proxmox asks.
pub const MIN_MBPS: u64 = 10_000;

/// One of Ceph's networks as this node meets it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CephLink {
    /// `public` or `cluster`.
    pub kind: String,
    pub network: String,
    /// This node's interface with an address in it, if any.
    pub interface: Option<String>,
    /// Its link speed in Mb/s (sysfs `speed`; none for virtual links).
    pub speed_mbps: Option<u64>,
    /// What it shares with corosync: `interface vmbr0`, `subnet 10.0.0.0/24`.
    pub shares_corosync: Option<String>,
    /// The node, when it is another than the one the run is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// The links of `conf`'s networks on this node. `speed` gives an
/// interface's Mb/s; `corosync` this node's corosync addresses.
pub fn links(
    conf: &CephConf,
    ifaces: &[Iface],
    speed: &dyn Fn(&str) -> Option<u64>,
    corosync: &[IpAddr],
) -> Vec<CephLink> {
    let nets = conf
        .public_networks
        .iter()
        .map(|n| ("public", n))
        .chain(conf.cluster_networks.iter().map(|n| ("cluster", n)));
    nets.map(|(kind, net): (&str, &Cidr)| {
        let found = iface::in_network(ifaces, net);
        CephLink {
            kind: kind.into(),
            network: net.to_string(),
            interface: found.map(|(_, i)| i.name.clone()),
            speed_mbps: found.and_then(|(_, i)| speed(&i.name)),
            shares_corosync: found
                .and_then(|(ip, _)| crate::nodes::iface::shares_with(ip, corosync, ifaces)),
            node: None,
        }
    })
    .collect()
}

/// An interface's speed in Mb/s from sysfs; none where the kernel gives
/// none (-1 or unreadable: a virtual or down link).
pub fn sysfs_speed(host: &Host, name: &str) -> Option<u64> {
    if name.contains('/') || name.starts_with('.') {
        return None;
    }
    host.read_value(format!("/sys/class/net/{name}/speed"))?
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|s| *s > 0)
        .map(|s| s as u64)
}

/// This node's links of the cluster's Ceph networks: ceph.conf at `conf`,
/// corosync.conf from /etc/pve, the interfaces and their speeds; empty
/// where ceph.conf names no network (Ceph then uses any).
pub fn this_node(host: &Host, conf: &std::path::Path, node: &str) -> Result<Vec<CephLink>, String> {
    let text = host
        .read(conf)
        .map_err(|e| format!("{}: {}", conf.display(), crate::error::describe(&e)))?;
    let ceph = pveprobe_parse::cephconf::parse(&text).map_err(|e| e.to_string())?;
    let corosync: Vec<IpAddr> = host
        .read("/etc/pve/corosync.conf")
        .ok()
        .and_then(|t| pveprobe_parse::corosync::parse(&t).ok())
        .and_then(|c| {
            c.node(node).map(|n| {
                n.addresses
                    .values()
                    .filter_map(|a| a.parse().ok())
                    .collect()
            })
        })
        .unwrap_or_default();
    let ifaces =
        iface::interfaces().map_err(|e| format!("interfaces: {}", crate::error::describe(&e)))?;
    Ok(links(
        &ceph,
        &ifaces,
        &|name| sysfs_speed(host, name),
        &corosync,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::nodes::iface::fixture as iface;

    #[test]
    fn each_network_finds_its_interface_speed_and_corosync() {
        let conf = pveprobe_parse::cephconf::parse(
            "[global]\n\tpublic_network = 10.10.10.0/24\n\tcluster_network = 10.20.20.0/24\n",
        )
        .unwrap();
        let ifaces = [
            iface("vmbr0", &["192.168.1.5/24"]),
            iface("ens1", &["10.10.10.5/24", "10.30.0.5/24"]),
            iface("ens2", &["10.20.20.5/24"]),
        ];
        let speed = |name: &str| match name {
            "ens1" => Some(1000),
            "ens2" => Some(25000),
            _ => None,
        };
        let corosync: Vec<IpAddr> = vec!["10.30.0.5".parse().unwrap()];
        let l = links(&conf, &ifaces, &speed, &corosync);
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[0].kind.as_str(), l[0].interface.as_deref()),
            ("public", Some("ens1"))
        );
        assert_eq!(l[0].speed_mbps, Some(1000));
        assert_eq!(l[0].shares_corosync.as_deref(), Some("interface ens1"));
        assert_eq!(
            (l[1].interface.as_deref(), l[1].speed_mbps),
            (Some("ens2"), Some(25000))
        );
        assert_eq!(l[1].shares_corosync, None);
        // A network no interface is in: no interface, no speed.
        let none = links(&conf, &ifaces[..1], &speed, &[]);
        assert!(
            none.iter()
                .all(|l| l.interface.is_none() && l.speed_mbps.is_none())
        );
    }

    #[test]
    fn the_speed_comes_from_sysfs_and_virtual_links_have_none() {
        let dir = tempfile::tempdir().unwrap();
        for (name, speed) in [("ens1", "10000\n"), ("veth0", "-1\n")] {
            let d = dir.path().join("sys/class/net").join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("speed"), speed).unwrap();
        }
        let host = Host::with_root(dir.path());
        assert_eq!(sysfs_speed(&host, "ens1"), Some(10000));
        assert_eq!(sysfs_speed(&host, "veth0"), None);
        assert_eq!(sysfs_speed(&host, "missing"), None);
        assert_eq!(sysfs_speed(&host, "../../etc"), None);
    }
}
