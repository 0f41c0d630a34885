//! The rig of the cluster network measurements (tests/it/common/netlinks.rs)
//! checked against the reference tools: its rate limit against iperf3, its
//! delaying router and plain links against ping, its MTU mismatch against
//! ping with Don't Fragment, and its teardown. Root for the namespaces;
//! every address is in 10.232.0.0/16 inside namespaces the tests make, so
//! no traffic reaches this machine's own network. Figures are compared as
//! ratios, never absolute times; the file runs in well under 40 s.

use std::net::UdpSocket;
use std::time::Duration;

use crate::common::netlinks::{
    Links, Namespaces, in_namespace, iperf3, ping, ping_df, udp_in_datagrams,
};
use crate::common::{root_or_skip, sh};

fn p50(mut rtts: Vec<Duration>) -> Duration {
    assert!(!rtts.is_empty(), "no ping answered");
    rtts.sort();
    rtts[rtts.len() / 2]
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn rate_limit_caps_each_direction() {
    if !root_or_skip() {
        return;
    }
    let nodes = Namespaces::new(2);
    let mut links = Links::new(&nodes.names);
    let net = links.add_network(1, "eth1");
    links.rate_limit(&net, 200);
    let (a, b) = (net.end(0), net.end(1));
    let cap = 200e6;
    let forward = iperf3(&b.ns, &a.ns, b.addr, 2, 1, false) / cap;
    let reverse = iperf3(&b.ns, &a.ns, b.addr, 2, 1, true) / cap;
    eprintln!("200 Mbit/s cap: iperf3 forward {forward:.3}, reverse {reverse:.3} of the cap");
    for (direction, ratio) in [("forward", forward), ("reverse", reverse)] {
        assert!(
            (0.85..=1.02).contains(&ratio),
            "{direction}: {ratio:.3} of 200 Mbit/s"
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn router_delays_each_direction() {
    if !root_or_skip() {
        return;
    }
    let nodes = Namespaces::new(2);
    let mut links = Links::new(&nodes.names);
    let plain = links.add_pair(0, 1, 2, "eth1");
    let mut pair = links.add_pair(0, 1, 3, "eth2");
    links.delay(&mut pair, 1, Duration::from_millis(20));
    let mut net = links.add_network(4, "eth3");
    links.delay(&mut net, 1, Duration::from_millis(20));
    let interval = Duration::from_millis(20);
    let rtt = |n: &crate::common::netlinks::Network| {
        p50(ping(&n.end(0).ns, n.addr(1), 25, interval)).as_secs_f64() / 0.020
    };
    let (plain, pair, net) = (rtt(&plain), rtt(&pair), rtt(&net));
    eprintln!(
        "p50 RTT / one-way delay (20 ms): plain {plain:.3}, pair through router {pair:.3}, bridge network through router {net:.3}"
    );
    assert!(plain < 0.1, "plain link: p50 RTT {:.2} ms", plain * 20.0);
    for (what, ratio) in [("pair", pair), ("network", net)] {
        assert!(
            (2.0..=2.3).contains(&ratio),
            "{what} through the router: p50 RTT {:.2} ms, not 40..46 ms",
            ratio * 20.0
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn mtu_mismatch_drops_oversize_frames() {
    if !root_or_skip() {
        return;
    }
    let nodes = Namespaces::new(2);
    let mut links = Links::new(&nodes.names);
    let net = links.add_network(5, "eth1");
    let pair = links.add_pair(0, 1, 6, "eth2");
    for (what, n) in [("network", &net), ("pair", &pair)] {
        links.set_mtu(1, &n.end(1).dev, 1400);
        let (big, small) = (n.end(0), n.end(1));
        assert!(
            ping_df(&big.ns, small.addr, 1372),
            "{what}: 1400-byte packet lost"
        );
        assert!(
            !ping_df(&big.ns, small.addr, 1472),
            "{what}: a 1500-byte packet reached the 1400-MTU end"
        );
        assert!(
            ping_df(&small.ns, big.addr, 1372),
            "{what}: 1400-byte packet lost"
        );
        assert!(
            !ping_df(&small.ns, big.addr, 1472),
            "{what}: 1500 bytes sent on a 1400 MTU"
        );
        assert!(
            ping_df(&big.ns, small.addr, 1372),
            "{what}: lost after the failures"
        );
    }
    // The bridge kept its 1500.
    let br = net.bridge_ns.as_ref().unwrap();
    assert!(sh("ip", &["-n", br, "link", "show", "br0"]).contains("mtu 1500"));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn udp_counter_counts_received_datagrams() {
    if !root_or_skip() {
        return;
    }
    let nodes = Namespaces::new(2);
    let mut links = Links::new(&nodes.names);
    let net = links.add_pair(0, 1, 7, "eth1");
    let (a, b) = (net.end(0).clone(), net.end(1).clone());
    let to = (b.addr, 9999);
    let receiver = in_namespace(&b.ns, move || UdpSocket::bind(to).unwrap());
    let sender = in_namespace(&a.ns, move || UdpSocket::bind((a.addr, 0)).unwrap());
    let before = udp_in_datagrams(&b.ns);
    receiver
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut buf = [0u8; 16];
    for _ in 0..5 {
        sender.send_to(b"x", to).unwrap();
        receiver.recv(&mut buf).unwrap();
    }
    assert_eq!(udp_in_datagrams(&b.ns) - before, 5);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn drop_removes_everything() {
    if !root_or_skip() {
        return;
    }
    let nodes = Namespaces::new(3);
    let device_gone = |ns: &str, dev: &str| {
        !std::process::Command::new("ip")
            .args(["-n", ns, "link", "show", dev])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    let build = |names: &[String]| {
        let mut links = Links::new(names);
        let mut net = links.add_network(8, "eth1");
        let mut pair = links.add_pair(0, 2, 9, "eth2");
        links.delay(&mut net, 1, Duration::from_millis(5));
        links.delay(&mut pair, 0, Duration::from_millis(5));
        links.rate_limit(&net, 100);
        links.set_mtu(2, "eth2", 1400);
        assert!(ping(&names[0], pair.addr(2), 1, Duration::from_millis(10)).len() == 1);
        let watch = links.watch();
        assert_eq!(watch.threads(), 8, "two routers, four threads each");
        assert_eq!(watch.namespaces().len(), 3, "{:?}", watch.namespaces());
        (links, watch)
    };
    let (links, watch) = build(&nodes.names);
    drop(links);
    assert_eq!(watch.threads(), 0, "router threads still running");
    assert_eq!(watch.namespaces(), Vec::<String>::new());
    for ns in &nodes.names {
        assert!(device_gone(ns, "eth1") && device_gone(ns, "eth2"), "{ns}");
    }
    // The same when a test panics with the rig up.
    let names = nodes.names.clone();
    let (sender, watched) = std::sync::mpsc::channel();
    let panicked = std::thread::spawn(move || {
        let (_links, watch) = build(&names);
        sender.send(watch).unwrap();
        panic!("intended: a test failing with the rig up (its Drop must still remove it)");
    })
    .join();
    assert!(panicked.is_err());
    let watch = watched.recv().unwrap();
    assert_eq!(watch.threads(), 0, "router threads still running");
    assert_eq!(watch.namespaces(), Vec::<String>::new());
    for ns in &nodes.names {
        assert!(device_gone(ns, "eth1") && device_gone(ns, "eth2"), "{ns}");
    }
}
