//! Which links a cluster has and each node's address on them: corosync's
//! links (corosync.conf's ringN_addr), the migration network
//! (datacenter.cfg), Ceph's public and cluster networks (ceph.conf), and
//! the admin's `--link NAME=CIDR`. Pure: the files' parsed contents and
//! the nodes' interfaces in, the plan out.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::nodes::iface::{self, Iface};
use pveprobe_parse::cephconf::CephConf;
use pveprobe_parse::cidr::Cidr;
use pveprobe_parse::corosync::CorosyncConf;
use pveprobe_parse::datacenter::DatacenterCfg;

/// What a link carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkKind {
    /// A corosync (knet) link: latency and MTU probes only, ever.
    Corosync,
    Migration,
    CephPublic,
    CephCluster,
    /// `--link NAME=CIDR`.
    Named,
}

impl LinkKind {
    pub fn word(self) -> &'static str {
        match self {
            LinkKind::Corosync => "corosync",
            LinkKind::Migration => "migration",
            LinkKind::CephPublic => "ceph-public",
            LinkKind::CephCluster => "ceph-cluster",
            LinkKind::Named => "named",
        }
    }

    /// Storage or migration traffic, which corosync must not share a network with.
    pub fn is_bulk(self) -> bool {
        !matches!(self, LinkKind::Corosync)
    }
}

/// One link of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkDef {
    /// `corosync0`, `migration`, `ceph-public`, `ceph-cluster` or the admin's name.
    pub name: String,
    pub kind: LinkKind,
    /// The knet link number of a corosync link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corosync_link: Option<u32>,
    /// The network of a link defined by one (not corosync's: its
    /// addresses are per node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Cidr>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LinkError {
    #[error("--link {0}: no such link (this cluster has: {1})")]
    Unknown(String, String),
    #[error("--link {0}: {1}")]
    BadNetwork(String, String),
    #[error("--link {0}: a name is letters, digits, '-' and '_', at most 32")]
    BadName(String),
    #[error(
        "--link {0} is a corosync link: --net-throughput never runs on one (filling it can cost corosync its token, and an HA cluster its nodes); name a migration, Ceph or own link"
    )]
    ThroughputOnCorosync(String),
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The cluster's links, in order: corosync's, migration, Ceph's; then
/// `--link NAME=CIDR`s. With `--link NAME`s given, only those.
pub fn plan(
    corosync: Option<&CorosyncConf>,
    datacenter: Option<&DatacenterCfg>,
    ceph: Option<&CephConf>,
    wanted: &[String],
) -> Result<Vec<LinkDef>, LinkError> {
    let mut known = Vec::new();
    if let Some(c) = corosync {
        for n in c.link_numbers() {
            known.push(LinkDef {
                name: format!("corosync{n}"),
                kind: LinkKind::Corosync,
                corosync_link: Some(n),
                network: None,
            });
        }
    }
    if let Some(net) = datacenter.and_then(|d| d.migration_network) {
        known.push(network_link("migration", LinkKind::Migration, net));
    }
    if let Some(ceph) = ceph {
        for (i, net) in ceph.public_networks.iter().enumerate() {
            let name = numbered("ceph-public", i);
            known.push(network_link(&name, LinkKind::CephPublic, *net));
        }
        for (i, net) in ceph.cluster_networks.iter().enumerate() {
            let name = numbered("ceph-cluster", i);
            known.push(network_link(&name, LinkKind::CephCluster, *net));
        }
    }
    let mut chosen = Vec::new();
    let mut named = Vec::new();
    for w in wanted {
        if let Some((name, cidr)) = w.split_once('=') {
            if !valid_name(name) {
                return Err(LinkError::BadName(w.clone()));
            }
            let net: Cidr = cidr.parse().map_err(|e: pveprobe_parse::cidr::CidrError| {
                LinkError::BadNetwork(w.clone(), e.to_string())
            })?;
            named.push(network_link(name, LinkKind::Named, net.network()));
        } else {
            let found = known.iter().find(|l| l.name == *w).ok_or_else(|| {
                LinkError::Unknown(
                    w.clone(),
                    if known.is_empty() {
                        "none; name one with NAME=CIDR".into()
                    } else {
                        known
                            .iter()
                            .map(|l| l.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                )
            })?;
            if !chosen.contains(found) {
                chosen.push(found.clone());
            }
        }
    }
    if wanted.iter().all(|w| w.contains('=')) {
        chosen = known;
    }
    chosen.extend(named);
    Ok(chosen)
}

fn numbered(base: &str, i: usize) -> String {
    if i == 0 {
        base.to_string()
    } else {
        format!("{base}{}", i + 1)
    }
}

fn network_link(name: &str, kind: LinkKind, net: Cidr) -> LinkDef {
    LinkDef {
        name: name.to_string(),
        kind,
        corosync_link: None,
        network: Some(net.network()),
    }
}

/// `--net-throughput` with a corosync link named in `--link`: refused.
pub fn check_throughput(links: &[LinkDef], wanted: &[String]) -> Result<(), LinkError> {
    for w in wanted {
        let name = w.split_once('=').map_or(w.as_str(), |(n, _)| n);
        if let Some(l) = links
            .iter()
            .find(|l| l.name == name && l.kind == LinkKind::Corosync)
        {
            return Err(LinkError::ThroughputOnCorosync(l.name.clone()));
        }
    }
    Ok(())
}

/// A node's address on a link, or why it has none.
pub fn address(
    link: &LinkDef,
    node: &str,
    corosync: Option<&CorosyncConf>,
    ifaces: Option<&[Iface]>,
) -> Result<IpAddr, String> {
    if let Some(n) = link.corosync_link {
        let text = corosync
            .and_then(|c| c.node(node))
            .and_then(|c| c.addresses.get(&n))
            .ok_or_else(|| format!("{node} has no ring{n}_addr in corosync.conf"))?;
        return text.parse().map_err(|_| {
            format!("{node}'s ring{n}_addr {text} is a host name; pveprobe measures IP addresses")
        });
    }
    let net = link.network.as_ref().ok_or("no network")?;
    let ifaces = ifaces.ok_or_else(|| format!("{node}'s interfaces are unknown"))?;
    iface::in_network(ifaces, net)
        .map(|(ip, _)| ip)
        .ok_or_else(|| format!("{node} has no address in {net}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pveprobe_parse::{cephconf, corosync, datacenter};

    fn conf() -> CorosyncConf {
        corosync::parse(
            "nodelist {\n node {\n name: a\n nodeid: 1\n ring0_addr: 10.0.0.1\n ring1_addr: 10.1.0.1\n }\n \
             node {\n name: b\n nodeid: 2\n ring0_addr: 10.0.0.2\n ring1_addr: pve-b\n }\n}\n\
             totem {\n cluster_name: t\n interface {\n linknumber: 0\n }\n interface {\n linknumber: 1\n }\n}\n",
        )
        .unwrap()
    }

    use crate::nodes::iface::fixture as iface;
    use crate::nodes::iface::shares_with;

    #[test]
    fn links_come_from_corosync_migration_ceph_and_the_admin() {
        let dc = datacenter::parse("migration: secure,network=10.2.0.0/24\n").unwrap();
        let ceph = cephconf::parse(
            "[global]\npublic_network = 10.3.0.0/24\ncluster_network = 10.4.0.0/24\n",
        )
        .unwrap();
        let c = conf();
        let all = plan(Some(&c), Some(&dc), Some(&ceph), &[]).unwrap();
        let names: Vec<_> = all.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "corosync0",
                "corosync1",
                "migration",
                "ceph-public",
                "ceph-cluster"
            ]
        );
        let some = plan(
            Some(&c),
            Some(&dc),
            None,
            &["migration".into(), "storage=10.9.0.7/24".into()],
        )
        .unwrap();
        assert_eq!(some.len(), 2);
        assert_eq!(some[1].network.unwrap().to_string(), "10.9.0.0/24");
        assert_eq!(some[1].kind, LinkKind::Named);
        let only_named = plan(Some(&c), None, None, &["x=10.9.0.0/24".into()]).unwrap();
        assert_eq!(only_named.len(), 3, "NAME=CIDR adds to all known links");
        assert!(matches!(
            plan(Some(&c), None, None, &["ceph".into()]),
            Err(LinkError::Unknown(..))
        ));
        assert!(matches!(
            plan(None, None, None, &["x=10.0.0.0/33".into()]),
            Err(LinkError::BadNetwork(..))
        ));
        assert!(matches!(
            plan(None, None, None, &["a b=10.0.0.0/8".into()]),
            Err(LinkError::BadName(..))
        ));
        assert_eq!(
            check_throughput(&all, &["corosync1".into()]),
            Err(LinkError::ThroughputOnCorosync("corosync1".into()))
        );
        assert_eq!(check_throughput(&all, &["migration".into()]), Ok(()));
    }

    #[test]
    fn addresses_from_ring_addrs_and_interfaces() {
        let c = conf();
        let all = plan(Some(&c), None, None, &["m=10.2.0.0/24".into()]).unwrap();
        let a_if = [
            iface("eth0", &["10.0.0.1/24", "10.2.0.1/24"]),
            iface("eth1", &["10.1.0.1/24"]),
        ];
        assert_eq!(
            address(&all[0], "a", Some(&c), None),
            Ok("10.0.0.1".parse().unwrap())
        );
        assert!(
            address(&all[1], "b", Some(&c), None)
                .unwrap_err()
                .contains("host name")
        );
        assert!(
            address(&all[0], "z", Some(&c), None)
                .unwrap_err()
                .contains("no ring0_addr")
        );
        assert_eq!(
            address(&all[2], "a", Some(&c), Some(&a_if)),
            Ok("10.2.0.1".parse().unwrap())
        );
        assert!(
            address(&all[2], "a", Some(&c), Some(&a_if[1..]))
                .unwrap_err()
                .contains("no address in 10.2.0.0/24")
        );
        // Migration on eth0 with corosync0: shared.
        let corosync = ["10.0.0.1".parse().unwrap(), "10.1.0.1".parse().unwrap()];
        assert_eq!(
            shares_with("10.2.0.1".parse().unwrap(), &corosync, &a_if).as_deref(),
            Some("interface eth0")
        );
        let apart = [
            iface("eth0", &["10.0.0.1/24"]),
            iface("eth2", &["10.2.0.1/24"]),
        ];
        assert_eq!(
            shares_with("10.2.0.1".parse().unwrap(), &corosync, &apart),
            None
        );
    }
}
