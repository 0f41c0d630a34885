//! The cluster network's inputs: corosync.conf, datacenter.cfg, ceph.conf,
//! `corosync-cmapctl -m stats` and a CIDR, all from the same bytes.
#![no_main]

use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::cidr::Cidr;
use pveprobe_parse::{cephconf, corosync, datacenter, knet};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);

    // Deterministic, errors included.
    let coro = corosync::parse(&text);
    assert_eq!(corosync::parse(&text), coro);
    if let Ok(conf) = &coro {
        for node in &conf.nodes {
            assert!(!node.name.is_empty());
            assert!(node.addresses.keys().all(|&n| n <= corosync::MAX_LINK));
        }
        assert!(conf.links.iter().all(|l| l.number <= corosync::MAX_LINK));
        assert!(conf.links.windows(2).all(|w| w[0].number < w[1].number));
        let numbers = conf.link_numbers();
        assert!(numbers.windows(2).all(|w| w[0] < w[1]));
        assert!(numbers.iter().all(|&n| n <= corosync::MAX_LINK));
        for node in &conf.nodes {
            assert!(conf.node(&node.name).is_some());
        }
    }

    let dc = datacenter::parse(&text);
    assert_eq!(datacenter::parse(&text), dc);
    if let Ok(cfg) = &dc {
        if let Some(t) = &cfg.migration_type {
            assert!(t == "secure" || t == "insecure", "{t}");
        }
        if let Some(net) = &cfg.migration_network {
            check_cidr(net);
        }
    }

    let ceph = cephconf::parse(&text);
    assert_eq!(cephconf::parse(&text), ceph);
    if let Ok(conf) = &ceph {
        assert!(conf.public_networks.len() <= cephconf::MAX_NETWORKS);
        assert!(conf.cluster_networks.len() <= cephconf::MAX_NETWORKS);
        conf.public_networks.iter().for_each(check_cidr);
        conf.cluster_networks.iter().for_each(check_cidr);
    }

    let stats = knet::parse(&text);
    assert_eq!(knet::parse(&text), stats);
    if let Ok(stats) = &stats {
        assert!(stats.links.iter().all(|l| l.link <= knet::MAX_LINK));
        assert!(
            stats
                .links
                .windows(2)
                .all(|w| (w[0].node_id, w[0].link) < (w[1].node_id, w[1].link))
        );
        for l in &stats.links {
            assert_eq!(stats.get(l.node_id, l.link), Some(l));
        }
    }

    // The whole input, and each line, as a CIDR.
    for candidate in std::iter::once(&*text).chain(text.lines().take(64)) {
        let parsed = Cidr::from_str(candidate);
        assert_eq!(Cidr::from_str(candidate), parsed);
        if let Ok(cidr) = parsed {
            check_cidr(&cidr);
        }
    }
});

fn check_cidr(cidr: &Cidr) {
    assert!(cidr.prefix() <= cidr.bits());
    // Display re-parses to itself.
    assert_eq!(Cidr::from_str(&cidr.to_string()).as_ref(), Ok(cidr));
    let net = cidr.network();
    assert_eq!(net.prefix(), cidr.prefix());
    assert_eq!(net.network(), net);
    assert!(cidr.contains(cidr.addr()));
    assert!(net.contains(cidr.addr()));
    assert!(cidr.contains(net.addr()));
}
