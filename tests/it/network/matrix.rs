//! `pveprobe cluster --net` and `pveprobe net NODE...` on the simulated
//! cluster (tests/it/common/netns.rs: a namespace, an sshd and this build's
//! pveprobe per node) with links of their own between the nodes
//! (tests/it/common/netlinks.rs: veth networks, MTUs, htb caps, a delaying
//! router), the whole path through ssh, measured against `ping` and
//! `iperf3` run between the same namespaces. Root: namespaces. All traffic
//! stays inside the test's namespaces (10.231.7.0/24, 10.232.0.0/16).

use std::net::Ipv4Addr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::netlinks::{Links, Network, Pinger, in_namespace, iperf3, udp_in_datagrams};
use crate::common::netns::{Behaviour::Good, TestCluster};
use crate::common::{json, root_or_skip, stderr, stdout};
use serde_json::Value;

/// corosync.conf as `pvecm` writes it, a link per `rings` entry: each
/// node's address on it.
pub(super) fn corosync_conf(nodes: &[&str], rings: &[Vec<Ipv4Addr>]) -> String {
    let mut text = String::from("logging {\n  debug: off\n  to_syslog: yes\n}\n\nnodelist {\n");
    for (i, name) in nodes.iter().enumerate() {
        text += &format!(
            "  node {{\n    name: {name}\n    nodeid: {}\n    quorum_votes: 1\n",
            i + 1
        );
        for (r, ring) in rings.iter().enumerate() {
            text += &format!("    ring{r}_addr: {}\n", ring[i]);
        }
        text += "  }\n";
    }
    text += "}\n\nquorum {\n  provider: corosync_votequorum\n}\n\ntotem {\n  cluster_name: testc\n  config_version: 3\n";
    for r in 0..rings.len() {
        text += &format!("  interface {{\n    linknumber: {r}\n  }}\n");
    }
    text += "  ip_version: ipv4-6\n  link_mode: passive\n  secauth: on\n  version: 2\n}\n";
    text
}

pub(super) fn pve_dir(c: &TestCluster) -> std::path::PathBuf {
    c.dir.path().join("pve")
}

pub(super) fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

pub(super) fn namespaces(c: &TestCluster) -> Vec<String> {
    c.nodes.iter().map(|n| n.ns.clone()).collect()
}

pub(super) fn addrs(net: &Network, n: usize) -> Vec<Ipv4Addr> {
    (0..n).map(|i| net.addr(i)).collect()
}

pub(super) fn pair<'a>(doc: &'a Value, link: &str, a: &str, b: &str) -> &'a Value {
    doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["link"] == link && p["a"]["node"] == a && p["b"]["node"] == b)
        .unwrap_or_else(|| panic!("no {link} {a}-{b} in {doc:#}"))
}

pub(super) fn tcp(p: &Value, way: &str, streams: u64) -> f64 {
    p["throughput"]
        .as_array()
        .unwrap_or_else(|| panic!("no throughput in {p:#}"))
        .iter()
        .find(|t| t["way"] == way && t["streams"] == streams)
        .unwrap_or_else(|| panic!("no {way} {streams} in {p:#}"))["mbit_per_s"]
        .as_f64()
        .unwrap()
}

/// A pair's hints' messages.
pub(super) fn hints(p: &Value) -> Vec<String> {
    p["hints"]
        .as_array()
        .map(|h| {
            h.iter()
                .map(|h| h["message"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Processes of a network run left in the cluster's namespaces: those whose
/// command line names a helper, and the migration channel's ssh.
pub(super) fn responders_left(c: &TestCluster) -> Vec<String> {
    let mut left = Vec::new();
    for n in &c.nodes {
        for pid in c.pids(&n.name) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            // The responder, both ends of the migration stream and the
            // source's ssh (its tunnel's option).
            if [
                "net-serve",
                "net-migrate",
                "net-sink",
                "ExitOnForwardFailure",
            ]
            .iter()
            .any(|w| line.contains(w))
            {
                left.push(format!("{}: {pid} {line}", n.name));
            }
        }
    }
    left
}

/// `pveprobe net NODES... --pve-config DIR ARGS` from the first node, as
/// `TestCluster::command` runs `cluster` (its ssh settings and members).
pub(super) fn net(c: &TestCluster, nodes: &[&str], args: &[&str]) -> std::process::Output {
    c.pveprobe_on(0, "net")
        .args(nodes)
        .arg("--pve-config")
        .arg(pve_dir(c))
        .args(args)
        .output()
        .unwrap()
}

/// The `q` quantile of `v` (nearest rank below).
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * q) as usize).min(v.len() - 1)]
}

/// One test at a time: each compares timings (ping, iperf3, a delay) that
/// another test's ssh sessions and streams on this 2-core machine would
/// disturb.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(super) fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Three nodes, corosync on a network of its own (one node's end at MTU
/// 1400), migration on another capped at 200 Mbit/s each way: the matrix
/// has every pair of both links; throughput only on migration, within
/// the cap and iperf3's figure; RTT against ping; the MTU mismatch on
/// the pairs with that node only; knet's statistics where
/// corosync-cmapctl is.
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn cluster_net_prints_the_matrix_against_ping_iperf3_and_the_cap() {
    if !root_or_skip() {
        return;
    }
    let _quiet = one_at_a_time();
    let names = ["pve1", "pve2", "pve3"];
    let c = TestCluster::new(&[("pve1", Good), ("pve2", Good), ("pve3", Good)]);
    let mut links = Links::new(&namespaces(&c));
    let coro = links.add_network(41, "eth1");
    // Migration between pve1 and pve2 only: pve3 is not on it.
    let migration = links.add_pair(0, 1, 42, "eth2");
    links.set_mtu(2, "eth1", 1400);
    links.rate_limit(&migration, 200);
    write(
        &pve_dir(&c).join("corosync.conf"),
        &corosync_conf(&names, &[addrs(&coro, 3)]),
    );
    write(
        &pve_dir(&c).join("datacenter.cfg"),
        "keyboard: en-us\nmigration: secure,network=10.232.42.0/24\n",
    );
    // knet's statistics on pve1, as corosync-cmapctl prints them there.
    let knet = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/pve/knet/three-nodes.txt"
    ))
    .unwrap();
    let fake = c.dir.path().join("pve1/bin/corosync-cmapctl");
    write(
        &fake,
        &format!("#!/bin/sh\n[ \"$1 $2\" = '-m stats' ] || exit 1\ncat <<'EOF'\n{knet}EOF\n"),
    );
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    let pve = pve_dir(&c);
    let (out, _) = c.run(&[
        "--net",
        "--pve-config",
        pve.to_str().unwrap(),
        "--net-throughput",
        "--net-seconds",
        "2",
        "--net-streams",
        "2",
        "--net-count",
        "50",
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    crate::common::validate_against(&doc, "docs/net.schema.json");
    assert_eq!(doc["kind"], "net");
    assert_eq!(
        doc["pairs"].as_array().unwrap().len(),
        6,
        "2 links x 3 pairs"
    );
    for (a, b) in [("pve1", "pve3"), ("pve2", "pve3")] {
        let p = pair(&doc, "migration", a, b);
        assert_eq!(p["status"], "not_on_link", "{p:#}");
        assert!(
            p["detail"]
                .as_str()
                .unwrap()
                .contains("pve3 has no address in 10.232.42.0/24"),
            "{p:#}"
        );
    }
    for p in doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] != "not_on_link")
    {
        assert_eq!(p["status"], "ok", "{p:#}");
        assert_eq!(p["latency"]["sent"], 50);
        assert_eq!(p["latency"]["received"], 50, "{p:#}");
        // The responder never answered more than the stated rate.
        let peak = p["responder"]["peak_per_second"].as_u64().unwrap();
        assert!(peak <= 50, "{peak} datagrams in one second: {p:#}");
    }
    // Corosync: no throughput, ever; migration: each way, 1 and 2 streams.
    for (a, b) in [("pve1", "pve2"), ("pve1", "pve3"), ("pve2", "pve3")] {
        let p = pair(&doc, "corosync0", a, b);
        assert!(p.get("throughput").is_none(), "{p:#}");
        assert!(
            p["throughput_skipped"]
                .as_str()
                .unwrap()
                .contains("corosync")
        );
    }
    let m = pair(&doc, "migration", "pve1", "pve2");
    for way in ["forward", "back"] {
        for streams in [1, 2] {
            let r = tcp(m, way, streams) / 200.0;
            assert!(
                (0.9..=1.05).contains(&r),
                "{way} {streams}: {r:.3} of the cap"
            );
        }
    }
    // Against iperf3 between the same namespaces, each way.
    let m = pair(&doc, "migration", "pve1", "pve2");
    for (way, reverse) in [("forward", false), ("back", true)] {
        let reference = iperf3(
            &c.nodes[1].ns,
            &c.nodes[0].ns,
            migration.addr(1),
            2,
            1,
            reverse,
        ) / 1e6;
        let r = tcp(m, way, 1) / reference;
        assert!(
            (0.9..=1.1).contains(&r),
            "{way}: {:.1} vs iperf3 {reference:.1} Mbit/s ({r:.3})",
            tcp(m, way, 1)
        );
    }
    // The secure migration channel (ssh, as qemu-server opens it) each
    // way, held by the same 200 Mbit/s (23.8 MiB/s) as the plain stream:
    // both at the link, the link named as the cap, no hint.
    let cap_mib = 200e6 / 8.0 / 1048576.0;
    for way in ["forward", "back"] {
        let s = crate::network::migration::secure(m, way);
        let r = s["mib_per_s"].as_f64().unwrap() / cap_mib;
        assert!(
            (0.85..=1.05).contains(&r),
            "secure {way}: {r:.3} of the cap: {s:#}"
        );
        assert!(s["cipher"].as_str().is_some_and(|c| !c.is_empty()), "{s:#}");
        assert_eq!(s["command"][0], "/usr/bin/ssh", "{s:#}");
    }
    assert!(
        !hints(m).iter().any(|h| h.contains("secure migration")),
        "{:?}",
        hints(m)
    );
    // RTT against ping on the corosync link, both at once (this machine's
    // load changes from second to second), ping at a pace of its own: at
    // pveprobe's 20 ms the two lock into one phase for the whole run, and
    // one tool's probes then always meet the other's polling responder on
    // this 2-core machine, so the two medians fall apart in either
    // direction (0.025 against 0.058 ms, then 0.059 against 0.016; CI once
    // had 0.022 against 0.041). At 23 ms ping's probes sweep every phase of
    // pveprobe's. ping runs from before the run to after it, and only its
    // replies within the run count. pveprobe's median is held within
    // ping's own spread over those seconds: no faster than ping's fastest
    // tenth (the kernel's own answer is the shortest way there and back,
    // and a clock read in the wrong place would undercut it) and no slower
    // than ping's median by a fifth and 50 µs (a wake-up or a timer's
    // slack in the path would exceed it).
    let pinger = Pinger::start(&c.nodes[0].ns, coro.addr(1), Duration::from_millis(23));
    let from = std::time::SystemTime::now();
    let out = net(
        &c,
        &["pve1", "pve2"],
        &[
            "--link",
            "corosync0",
            "--net-count",
            "100",
            "--net-rate",
            "50",
            "--output-format",
            "json",
        ],
    );
    let to = std::time::SystemTime::now();
    let pings: Vec<f64> = pinger
        .stop()
        .into_iter()
        .filter(|(at, _)| (from..=to).contains(at))
        .map(|(_, rtt)| rtt.as_secs_f64() * 1000.0)
        .collect();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let p = pair(&json(&out), "corosync0", "pve1", "pve2").clone();
    let ours = p["latency"]["p50_ms"].as_f64().unwrap();
    // 100 probes at 50/s: the run is at least 2 s long, 86 of ping's.
    assert!(
        pings.len() >= 80,
        "{} pings answered during the run",
        pings.len()
    );
    let (fastest_tenth, theirs) = (quantile(&pings, 0.1), quantile(&pings, 0.5));
    eprintln!(
        "RTT p50: pveprobe {ours:.4} ms, ping {theirs:.4} ms (p10 {fastest_tenth:.4} ms, {} pings)",
        pings.len()
    );
    assert!(
        ours >= fastest_tenth && ours <= theirs * 1.2 + 0.05,
        "RTT p50 {ours:.4} ms vs ping's {theirs:.4} ms (p10 {fastest_tenth:.4} ms)"
    );
    // The mismatch is named on pve3's corosync pairs only.
    for (a, b, mismatch) in [
        ("pve1", "pve2", false),
        ("pve1", "pve3", true),
        ("pve2", "pve3", true),
    ] {
        let p = pair(&doc, "corosync0", a, b);
        let named = hints(p)
            .iter()
            .any(|h| h.contains("MTU mismatch") && h.contains("1400"));
        assert_eq!(named, mismatch, "{a}-{b}: {:?}", hints(p));
        assert_eq!(p["b"]["mtu"] == 1400 || p["a"]["mtu"] == 1400, mismatch);
        // Packets larger than 1400 (and the veth's slack) do not reach pve3.
        let fwd = p["path_mtu"]["forward"].as_u64().unwrap();
        if mismatch {
            assert!((1400..1420).contains(&fwd), "{a}->{b} path MTU {fwd}");
        } else {
            assert_eq!(fwd, 1500);
        }
    }
    assert!(
        !hints(m).iter().any(|h| h.contains("MTU")),
        "{:?}",
        hints(m)
    );
    // knet's statistics of pve1.
    let pve1 = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "pve1")
        .unwrap();
    assert!(
        !pve1["knet"]["links"].as_array().unwrap().is_empty(),
        "{pve1:#}"
    );
    assert!(responders_left(&c).is_empty(), "{:?}", responders_left(&c));

    // The text matrix: a row per link and pair, the hints below; with
    // throughput, the migration link's secure channel beside it.
    let (out, _) = c.run(&[
        "--net",
        "--pve-config",
        pve.to_str().unwrap(),
        "--net-count",
        "10",
        "--net-throughput",
        "--net-seconds",
        "1",
        "--net-streams",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for link in ["corosync0", "migration"] {
        for pair in ["pve1-pve2", "pve1-pve3", "pve2-pve3"] {
            assert!(
                text.lines()
                    .any(|l| l.starts_with(link) && l.contains(pair)),
                "no row {link} {pair}:\n{text}"
            );
        }
    }
    assert!(
        text.lines().any(|l| l.starts_with("migration")
            && l.contains("pve1-pve3")
            && l.contains("not on link")),
        "{text}"
    );
    assert!(
        text.contains("HINTS") && text.contains("MTU mismatch"),
        "{text}"
    );
    for way in ["pve1->pve2", "pve2->pve1"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("  migration {way}: secure "))
                    && l.contains("capped by the link")),
            "{way}:\n{text}"
        );
    }
    assert!(text.contains("SECURE ->/<-"), "{text}");
    // knet's node ids by name (corosync.conf's nodeid): pve1 sees pve2's link.
    assert!(
        text.contains("KNET") && text.contains("  pve1 -> pve2 link 0: connected"),
        "{text}"
    );

    // --net measures the network only: the probe's options are refused.
    let (out, _) = c.run(&[
        "--net",
        "--pve-config",
        pve.to_str().unwrap(),
        "--tests",
        "fsync",
        "/var/lib/vz",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--tests, PATH do not apply"),
        "{}",
        stderr(&out)
    );
    let (out, _) = c.run(&["--net-throughput"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("add --net"), "{}", stderr(&out));
    drop(links);
}

/// Two nodes through a delaying router on their corosync link, measured
/// with `pveprobe net`: the RTT holds the delay; corosync's 5 ms is named;
/// the responder gets no more than the stated packets; throughput on a
/// corosync link is refused.
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn net_between_two_nodes_includes_the_delay_and_keeps_to_the_packet_rate() {
    if !root_or_skip() {
        return;
    }
    let _quiet = one_at_a_time();
    let c = TestCluster::new(&[("pve1", Good), ("pve2", Good)]);
    let mut links = Links::new(&namespaces(&c));
    let mut coro = links.add_pair(0, 1, 43, "eth1");
    let delay = Duration::from_millis(3);
    links.delay(&mut coro, 0, delay);
    write(
        &pve_dir(&c).join("corosync.conf"),
        &corosync_conf(&["pve1", "pve2"], &[addrs(&coro, 2)]),
    );
    // Migration on corosync's own subnet: what the PVE docs warn against.
    write(
        &pve_dir(&c).join("datacenter.cfg"),
        "migration: secure,network=10.232.43.0/24\n",
    );
    let net = |args: &[&str]| net(&c, &["pve1", "pve2"], args);

    // Refused: throughput on a corosync link (nothing runs).
    let out = net(&["--net-throughput", "--link", "corosync0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("corosync link"), "{}", stderr(&out));
    // Refused: all pairs' streams at once on a link corosync shares.
    let out = net(&["--net-throughput", "--parallel"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "--parallel with --net-throughput is refused: migration on pve1: corosync shares"
        ),
        "{}",
        stderr(&out)
    );
    // Named, one pair at a time.
    let out = net(&[
        "--link",
        "migration",
        "--net-count",
        "5",
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    let shared = doc["hints"].to_string();
    assert!(
        doc["hints"].as_array().unwrap().iter().any(|h| {
            h["code"] == "corosync-shares-network"
                && h["subject"] == "pve1"
                && h["message"].as_str().unwrap().starts_with(
                    "corosync shares the same address 10.232.43.11 with migration traffic",
                )
        }),
        "{shared}"
    );

    let before = udp_in_datagrams(&c.nodes[1].ns);
    let start = Instant::now();
    let out = net(&[
        "--link",
        "corosync0",
        "--net-count",
        "60",
        "--net-rate",
        "20",
        "--output-format",
        "json",
    ]);
    let took = start.elapsed();
    let after = udp_in_datagrams(&c.nodes[1].ns);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    let p = pair(&doc, "corosync0", "pve1", "pve2");
    let l = &p["latency"];
    let p50 = l["p50_ms"].as_f64().unwrap();
    let rtt = 2.0 * delay.as_secs_f64() * 1000.0;
    assert!(
        p50 >= rtt && p50 <= rtt * 1.1,
        "p50 {p50:.3} ms for a {rtt} ms delay"
    );
    // 6 ms is above corosync's 5 ms (the router's own scheduling can push
    // the p99 past 10 ms too).
    assert!(
        hints(p)
            .iter()
            .any(|h| h.starts_with("corosync latency p99")),
        "{:?}",
        hints(p)
    );
    // 60 probes at 20/s take 3 s at least; what reached pve2's namespace is
    // the probes and the MTU search (a handful), nothing more.
    assert!(took >= Duration::from_secs(3), "{took:?}");
    let sent = p["responder"]["datagrams"].as_u64().unwrap();
    assert!(sent <= 60 + 2 * 2 * 12, "{sent}");
    assert!(
        after - before <= sent + 5,
        "{} datagrams in pve2's namespace, the responder saw {sent}",
        after - before
    );
    assert!(
        p["responder"]["peak_per_second"].as_u64().unwrap() <= 20,
        "{p:#}"
    );
    assert!(responders_left(&c).is_empty(), "{:?}", responders_left(&c));
    drop(links);
}

/// A node whose responder cannot start (its port is taken), a node whose
/// responder is bound and silent, and a node that goes away once the
/// measurement starts: each reported on its links, the run bounded in
/// time, no responder left in any namespace.
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn failing_responders_and_a_vanishing_node_are_reported_per_link() {
    if !root_or_skip() {
        return;
    }
    let _quiet = one_at_a_time();
    let names = ["pve1", "pve2", "pve3", "pve4"];
    let c = TestCluster::new(&[
        ("pve1", Good),
        ("pve2", Good),
        ("pve3", Good),
        ("pve4", Good),
    ]);
    let mgmt: Vec<Ipv4Addr> = c.nodes.iter().map(|n| n.addr).collect();
    write(
        &pve_dir(&c).join("corosync.conf"),
        &corosync_conf(&names, std::slice::from_ref(&mgmt)),
    );
    let port: u16 = 42000 + (std::process::id() % 1000) as u16;
    // pve2: the port is taken.
    let taken = in_namespace(&c.nodes[1].ns, move || {
        std::net::UdpSocket::bind((mgmt[1], port)).unwrap()
    });
    let real = env!("CARGO_BIN_EXE_pveprobe");
    let wrap = |node: &str, body: &str| {
        let bin = c.dir.path().join(node).join("bin/pveprobe");
        std::fs::remove_file(&bin).unwrap();
        write(&bin, &format!("#!/bin/sh\n{body}\nexec '{real}' \"$@\"\n"));
        std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    };
    // pve3: goes away (its network down) when asked to measure.
    wrap(
        "pve3",
        "case \"$1\" in net-serve|net-probe) ip link set eth0 down; exec sleep 600;; esac",
    );
    // pve4: its responder answers another address than the peer's.
    wrap(
        "pve4",
        "if [ \"$1\" = net-serve ]; then\n  n=$#; prev=\n  for a in \"$@\"; do\n    [ \"$prev\" = --peer ] && a=192.0.2.99\n    set -- \"$@\" \"$a\"; prev=$a\n  done\n  shift \"$n\"\nfi",
    );
    let pve = pve_dir(&c);
    let start = Instant::now();
    let (out, _) = c.run(&[
        "--net",
        "--pve-config",
        pve.to_str().unwrap(),
        "--port",
        &port.to_string(),
        "--net-count",
        "20",
        "--ssh-option",
        "ServerAliveInterval=1",
        "--ssh-option",
        "ServerAliveCountMax=2",
        "--output-format",
        "json",
    ]);
    let took = start.elapsed();
    drop(taken);
    let doc = json(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(took < Duration::from_secs(120), "{took:?}");
    let status = |a: &str, b: &str| {
        pair(&doc, "corosync0", a, b)["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("pve1", "pve2"), "no_responder");
    let detail = pair(&doc, "corosync0", "pve1", "pve2")["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("pve2") && detail.contains("bind"),
        "{detail}"
    );
    assert_eq!(status("pve1", "pve4"), "no_answer");
    assert_eq!(status("pve2", "pve4"), "no_answer");
    assert_eq!(status("pve1", "pve3"), "no_responder");
    for (a, b) in [("pve2", "pve3"), ("pve3", "pve4")] {
        assert_ne!(status(a, b), "ok", "{a}-{b}");
    }
    // No migration network and every cluster address corosync0's: PVE
    // migrates over corosync's link, said (a note, a hint per node) and
    // not filled.
    assert!(
        doc["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["link"] == "corosync0"),
        "{doc:#}"
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("migrates over the nodes' cluster addresses, corosync0's"),
        "{notes}"
    );
    for node in names {
        assert!(
            doc["hints"].as_array().unwrap().iter().any(|h| {
                h["code"] == "corosync-shares-network"
                    && h["subject"] == node
                    && h["message"].as_str().unwrap().contains("migration")
            }),
            "{node}: {:#}",
            doc["hints"]
        );
    }
    // No responder runs anywhere; on pve3, gone from the network, only
    // the `timeout` that bounds what was started there waits out its time.
    for left in responders_left(&c) {
        assert!(
            left.starts_with("pve3: ") && left.contains(" timeout -k "),
            "{left}"
        );
    }
}
