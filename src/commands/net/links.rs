//! Which links a cluster has and each node's address on them: corosync's
//! links (corosync.conf's ringN_addr), the migration path (datacenter.cfg's
//! migration network, else the nodes' cluster addresses, where PVE
//! migrates without one), Ceph's public and cluster networks (ceph.conf),
//! and the admin's `--link NAME=CIDR`. Pure: the files' parsed contents
//! and the nodes' interfaces in, the plan out.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::nodes::iface::{self, Iface};
use crate::nodes::members::Node;
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
    /// The migration path without a migration network: each node's
    /// cluster address (the members list's, which qemu-server reaches
    /// through `PVE::Cluster::remote_node_ip`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cluster_addresses: bool,
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
    #[error(
        "--link {0}: a corosync link's addresses are each node's ringN_addr in corosync.conf, not a network; name the link alone"
    )]
    CorosyncByNetwork(String),
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The cluster's links, in order: corosync's, migration (datacenter.cfg's
/// network, else the nodes' cluster addresses), Ceph's; then `--link
/// NAME=CIDR`s. With `--link NAME`s given, only those. The cluster
/// addresses of `nodes` are left out unless named when every one is a
/// corosync address ([`cluster_path_on_corosync`]).
pub fn plan(
    corosync: Option<&CorosyncConf>,
    datacenter: Option<&DatacenterCfg>,
    ceph: Option<&CephConf>,
    wanted: &[String],
    nodes: &[Node],
) -> Result<Vec<LinkDef>, LinkError> {
    let mut known = Vec::new();
    if let Some(c) = corosync {
        for n in c.link_numbers() {
            known.push(LinkDef {
                name: format!("corosync{n}"),
                kind: LinkKind::Corosync,
                corosync_link: Some(n),
                network: None,
                cluster_addresses: false,
            });
        }
    }
    match datacenter.and_then(|d| d.migration_network) {
        Some(net) => known.push(network_link("migration", LinkKind::Migration, net)),
        None => known.push(LinkDef {
            name: "migration".into(),
            kind: LinkKind::Migration,
            corosync_link: None,
            network: None,
            cluster_addresses: true,
        }),
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
            // A known link's name: that link, on the network given
            // (`--link migration=CIDR` as `migration: network=CIDR`).
            let kind = match known.iter().position(|l| l.name == name) {
                Some(i) if known[i].kind == LinkKind::Corosync => {
                    return Err(LinkError::CorosyncByNetwork(w.clone()));
                }
                Some(i) => known.remove(i).kind,
                None => LinkKind::Named,
            };
            named.push(network_link(name, kind, net.network()));
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
        let on_corosync = cluster_path_on_corosync(nodes, corosync).is_some();
        chosen = known
            .into_iter()
            .filter(|l| !(l.cluster_addresses && on_corosync))
            .collect();
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
        cluster_addresses: false,
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

/// The corosync link whose ringN_addr is the node's cluster address, if
/// any: where PVE migrates without a migration network, on corosync's.
pub fn cluster_address_on_corosync(node: &Node, corosync: Option<&CorosyncConf>) -> Option<u32> {
    let ip: IpAddr = node.address.parse().ok()?;
    corosync?
        .node(&node.name)?
        .addresses
        .iter()
        .find(|(_, a)| a.parse::<IpAddr>().ok() == Some(ip))
        .map(|(n, _)| *n)
}

/// The corosync link of the first node when every node's cluster address
/// is a corosync address: PVE, without a migration network, migrates over
/// corosync's link, and there is no other path to measure.
pub fn cluster_path_on_corosync(nodes: &[Node], corosync: Option<&CorosyncConf>) -> Option<u32> {
    let links: Vec<Option<u32>> = nodes
        .iter()
        .map(|n| cluster_address_on_corosync(n, corosync))
        .collect();
    if links.is_empty() || links.iter().any(Option::is_none) {
        return None;
    }
    links[0]
}

/// A node's address on a link, or why it has none.
pub fn address(
    link: &LinkDef,
    node: &Node,
    corosync: Option<&CorosyncConf>,
    ifaces: Option<&[Iface]>,
) -> Result<IpAddr, String> {
    if link.cluster_addresses {
        let ip = node.address.parse().map_err(|_| {
            format!(
                "{}'s cluster address {} is a host name; pveprobe measures IP addresses",
                node.name, node.address
            )
        })?;
        if let Some(n) = cluster_address_on_corosync(node, corosync) {
            return Err(format!(
                "{}'s cluster address {ip} is its corosync{n} address: PVE migrates over corosync's link here (no migration network in datacenter.cfg), which pveprobe never measures as a migration path",
                node.name
            ));
        }
        return Ok(ip);
    }
    let node = node.name.as_str();
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

    fn node(name: &str) -> Node {
        Node {
            name: name.into(),
            address: name.into(),
            online: None,
            id: None,
        }
    }

    #[test]
    fn links_come_from_corosync_migration_ceph_and_the_admin() {
        let dc = datacenter::parse("migration: secure,network=10.2.0.0/24\n").unwrap();
        let ceph = cephconf::parse(
            "[global]\npublic_network = 10.3.0.0/24\ncluster_network = 10.4.0.0/24\n",
        )
        .unwrap();
        let c = conf();
        let all = plan(Some(&c), Some(&dc), Some(&ceph), &[], &[]).unwrap();
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
            &[],
        )
        .unwrap();
        assert_eq!(some.len(), 2);
        assert_eq!(some[1].network.unwrap().to_string(), "10.9.0.0/24");
        assert_eq!(some[1].kind, LinkKind::Named);
        let only_named = plan(Some(&c), None, None, &["x=10.9.0.0/24".into()], &[]).unwrap();
        assert_eq!(only_named.len(), 4, "NAME=CIDR adds to all known links");
        // A known link's name with a network: that link on the network.
        let moved = plan(
            Some(&c),
            Some(&dc),
            None,
            &["migration=10.8.0.0/24".into()],
            &[],
        )
        .unwrap();
        let m: Vec<_> = moved.iter().filter(|l| l.name == "migration").collect();
        assert_eq!(m.len(), 1, "{moved:?}");
        assert_eq!(m[0].kind, LinkKind::Migration);
        assert_eq!(m[0].network.unwrap().to_string(), "10.8.0.0/24");
        assert!(matches!(
            plan(Some(&c), None, None, &["corosync0=10.8.0.0/24".into()], &[]),
            Err(LinkError::CorosyncByNetwork(..))
        ));
        assert!(matches!(
            plan(Some(&c), None, None, &["ceph".into()], &[]),
            Err(LinkError::Unknown(..))
        ));
        assert!(matches!(
            plan(None, None, None, &["x=10.0.0.0/33".into()], &[]),
            Err(LinkError::BadNetwork(..))
        ));
        assert!(matches!(
            plan(None, None, None, &["a b=10.0.0.0/8".into()], &[]),
            Err(LinkError::BadName(..))
        ));
        assert_eq!(
            check_throughput(&all, &["corosync1".into()]),
            Err(LinkError::ThroughputOnCorosync("corosync1".into()))
        );
        assert_eq!(check_throughput(&all, &["migration".into()]), Ok(()));
    }

    #[test]
    fn without_a_migration_network_the_path_is_the_cluster_addresses_unless_corosyncs() {
        let c = conf();
        let at = |name: &str, ip: &str| Node {
            address: ip.into(),
            ..node(name)
        };
        let names = |links: &[LinkDef]| links.iter().map(|l| l.name.clone()).collect::<Vec<_>>();
        // The cluster addresses are corosync0's: no path of its own.
        let on = [at("a", "10.0.0.1"), at("b", "10.0.0.2")];
        assert_eq!(cluster_path_on_corosync(&on, Some(&c)), Some(0));
        let all = plan(Some(&c), None, None, &[], &on).unwrap();
        assert_eq!(names(&all), ["corosync0", "corosync1"]);
        // Named, it is measured where it can be: nowhere here.
        let named = plan(Some(&c), None, None, &["migration".into()], &on).unwrap();
        assert!(named[0].cluster_addresses && named[0].network.is_none());
        let why = address(&named[0], &on[0], Some(&c), None).unwrap_err();
        assert!(why.contains("corosync0 address"), "{why}");
        // Apart from corosync's: the path, at the members' addresses.
        let apart = [at("a", "10.5.0.1"), at("b", "10.5.0.2")];
        assert_eq!(cluster_path_on_corosync(&apart, Some(&c)), None);
        let all = plan(Some(&c), None, None, &[], &apart).unwrap();
        assert_eq!(names(&all), ["corosync0", "corosync1", "migration"]);
        assert_eq!(all[2].kind, LinkKind::Migration);
        assert_eq!(
            address(&all[2], &apart[1], Some(&c), None),
            Ok("10.5.0.2".parse().unwrap())
        );
        // One node on corosync's address, the other not: the link stays,
        // that node's end is refused with the reason.
        let mixed = [at("a", "10.0.0.1"), at("b", "10.5.0.2")];
        assert_eq!(cluster_path_on_corosync(&mixed, Some(&c)), None);
        let all = plan(Some(&c), None, None, &[], &mixed).unwrap();
        assert!(address(&all[2], &mixed[0], Some(&c), None).is_err());
        assert!(address(&all[2], &mixed[1], Some(&c), None).is_ok());
        // A name, not an address (`--nodes` given names): said.
        let why = address(&all[2], &node("b"), Some(&c), None).unwrap_err();
        assert!(why.contains("host name"), "{why}");
        // No corosync.conf: nothing to share with.
        assert_eq!(cluster_path_on_corosync(&on, None), None);
        let all = plan(None, None, None, &[], &on).unwrap();
        assert_eq!(
            address(&all[0], &on[0], None, None),
            Ok("10.0.0.1".parse().unwrap())
        );
        // A migration network: that, not the cluster addresses.
        let dc = datacenter::parse("migration: secure,network=10.2.0.0/24\n").unwrap();
        let all = plan(Some(&c), Some(&dc), None, &[], &on).unwrap();
        assert!(all.iter().all(|l| !l.cluster_addresses));
        assert_eq!(names(&all), ["corosync0", "corosync1", "migration"]);
    }

    #[test]
    fn addresses_from_ring_addrs_and_interfaces() {
        let c = conf();
        let all = plan(Some(&c), None, None, &["m=10.2.0.0/24".into()], &[]).unwrap();
        let a_if = [
            iface("eth0", &["10.0.0.1/24", "10.2.0.1/24"]),
            iface("eth1", &["10.1.0.1/24"]),
        ];
        assert_eq!(
            address(&all[0], &node("a"), Some(&c), None),
            Ok("10.0.0.1".parse().unwrap())
        );
        assert!(
            address(&all[1], &node("b"), Some(&c), None)
                .unwrap_err()
                .contains("host name")
        );
        assert!(
            address(&all[0], &node("z"), Some(&c), None)
                .unwrap_err()
                .contains("no ring0_addr")
        );
        assert_eq!(
            address(&all[3], &node("a"), Some(&c), Some(&a_if)),
            Ok("10.2.0.1".parse().unwrap())
        );
        assert!(
            address(&all[3], &node("a"), Some(&c), Some(&a_if[1..]))
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
