//! `ceph --clients`: each pool job from several nodes at once, against a
//! real one-node Ceph cluster whose monitor listens on pve1's address in
//! the test cluster's network (each node a namespace with its own sshd),
//! so every node's `rados` reaches it.

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::ceph::leftovers;
use crate::common::ceph::{self, Cluster, POOL};
use crate::common::netns::{Behaviour, TestCluster};
use crate::common::{stderr, stdout, wait_within};

/// Three nodes, and the cluster's daemons in pve1's namespace (memstore).
fn rig() -> (TestCluster, Cluster) {
    ceph::needs_ceph();
    let nodes = TestCluster::new(&[
        ("pve1", Behaviour::Good),
        ("pve2", Behaviour::Good),
        ("pve3", Behaviour::Good),
    ]);
    let c = Cluster::start_laid_out(ceph::Layout {
        block_dirs: &[],
        netns: Some(nodes.nodes[0].ns.clone()),
        hosts: vec![],
        public_network: Some("10.231.7.0/24".into()),
        mon_ip: Some(nodes.nodes[0].addr.to_string()),
        osd_netns: vec![],
    });
    (nodes, c)
}

/// The pids of every process whose command line holds all of `words`.
fn processes(words: &[&str]) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if words.iter().all(|w| line.contains(w)) {
            out.push(pid);
        }
    }
    out
}

/// A bench of the run still running anywhere (every namespace shares /proc).
fn benches_left(run_id: &str) -> Vec<u32> {
    let mut left = processes(&[run_id, "bench"]);
    left.extend(processes(&["ceph-client", run_id]));
    left
}

fn signal(pids: &[u32], sig: &str) {
    for p in pids {
        let _ = std::process::Command::new("kill")
            .args([sig, &p.to_string()])
            .status();
    }
}

/// The run's id from its stderr (the plan names its namespace).
fn run_id_in(text: &str) -> String {
    let at = text.find("pveprobe-").expect("a run id in the plan");
    text[at..]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .next()
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "needs root and Ceph: network namespaces with an sshd each stand in for the nodes"]
fn each_pool_job_runs_from_three_nodes_at_once_and_the_total_is_their_sum() {
    let (nodes, c) = rig();
    let svg = c.dir.path().join("clients.svg");
    let out = nodes
        .pveprobe_on(0, "ceph")
        .arg("--conf")
        .arg(c.conf())
        .args(["--yes", "--no-osd-bench", "--seconds", "2"])
        .args(["--rbd-size", "16M", "--clients", "all"])
        .args(["--output-format", "json", "--plot"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let run_id = doc["run_id"].as_str().unwrap();
    let jobs = doc["pools"][0]["jobs"].as_array().unwrap();
    let (alone, together): (Vec<_>, Vec<_>) = jobs
        .iter()
        .partition(|j| j["clients"].as_array().is_none_or(|c| c.is_empty()));
    // Each job once from this node alone, then from all three at once.
    assert_eq!(alone.len(), 7, "{jobs:?}");
    assert_eq!(together.len(), 7, "{jobs:?}");
    for (a, t) in alone.iter().zip(&together) {
        assert_eq!(a["key"], t["key"]);
        let clients = t["clients"].as_array().unwrap();
        let names: Vec<&str> = clients
            .iter()
            .map(|c| c["node"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["pve1", "pve2", "pve3"], "{t}");
        let each = |field: &str| -> Vec<f64> {
            clients
                .iter()
                .map(|c| c["figure"][field].as_f64().unwrap_or_else(|| panic!("{c}")))
                .collect()
        };
        for field in ["mib_s", "iops", "ops"] {
            let sum: f64 = each(field).iter().sum();
            let total = t["figure"][field].as_f64().unwrap();
            assert!(
                (total - sum).abs() <= 1e-6 * sum.max(1.0),
                "{}: {field} {total} against the clients' sum {sum}",
                t["label"]
            );
            assert!(sum > 0.0, "{t}");
        }
        for cl in clients {
            // Told one start; each says how far off it started.
            let skew = cl["skew_ms"].as_f64().unwrap();
            assert!((0.0..3000.0).contains(&skew), "{cl}");
            // Its node's link on Ceph's public network: its veth.
            assert_eq!(cl["link"]["interface"], "eth0", "{cl}");
            assert!(cl["error"].is_null(), "{cl}");
        }
        if t["key"] == "rados_write_4m" {
            // The largest latency is the largest client's; the mean weighs
            // each client by its operations.
            let max = each("max_lat_ms").into_iter().fold(0.0, f64::max);
            assert_eq!(t["figure"]["max_lat_ms"].as_f64(), Some(max));
            let ops = each("ops");
            let weighted: f64 = ops.iter().zip(each("avg_lat_ms")).map(|(o, l)| o * l).sum();
            let mean = weighted / ops.iter().sum::<f64>();
            let said = t["figure"]["avg_lat_ms"].as_f64().unwrap();
            assert!((said - mean).abs() < 1e-6 * mean, "{said} {mean}");
        }
    }
    // The picture has the one-client chart and the clients' chart.
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("from 3 clients at once"), "{picture}");
    assert!(picture.contains("pve3"), "{picture}");
    assert!(doc["left_behind"].as_array().unwrap().is_empty(), "{doc}");
    assert!(leftovers(&c).is_empty(), "{:?}", leftovers(&c));
    assert!(benches_left(run_id).is_empty());
}

/// Waits until a client's bench of the run has written into its
/// namespace (`RUN-NODE`); that namespace.
fn until_a_client_writes(c: &Cluster, node: &str) -> String {
    let start = Instant::now();
    loop {
        let written = c.objects(POOL).into_iter().find_map(|o| {
            let ns = o.split('\t').next().unwrap().to_string();
            (ns.starts_with("pveprobe-") && ns.ends_with(node)).then_some(ns)
        });
        if let Some(ns) = written {
            return ns;
        }
        // The jobs from this node alone come first.
        assert!(
            start.elapsed() < Duration::from_secs(400),
            "no client ever wrote"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `ceph` on pve1 writing the pool (no OSD bench, no rbd), JSON on
/// stdout, with `args`; under way.
fn spawn(nodes: &TestCluster, c: &Cluster, args: &[&str]) -> std::process::Child {
    nodes
        .pveprobe_on(0, "ceph")
        .arg("--conf")
        .arg(c.conf())
        .args(["--yes", "--no-osd-bench", "--no-rbd-bench"])
        .args(["--output-format", "json"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn interrupt_and_wait(mut child: std::process::Child) -> Output {
    signal(&[child.id()], "-INT");
    let status = wait_within(&mut child, Duration::from_secs(120));
    let mut out = child.wait_with_output().unwrap();
    out.status = status;
    out
}

#[test]
#[ignore = "needs root and Ceph: network namespaces with an sshd each stand in for the nodes"]
fn sigint_on_the_first_node_mid_job_stops_every_client_and_leaves_nothing() {
    let (nodes, c) = rig();
    let child = spawn(
        &nodes,
        &c,
        &["--seconds", "3", "--clients", "pve1,pve2,pve3"],
    );
    until_a_client_writes(&c, "-pve3");
    let out = interrupt_and_wait(child);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let run_id = run_id_in(&stderr(&out));
    assert!(leftovers(&c).is_empty(), "{:?}", leftovers(&c));
    assert!(benches_left(&run_id).is_empty(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("left behind"), "{}", stderr(&out));
}

#[test]
#[ignore = "needs root and Ceph: network namespaces with an sshd each stand in for the nodes"]
fn a_client_node_that_stops_answering_is_given_up_on_and_its_objects_still_go() {
    let (nodes, c) = rig();
    let child = spawn(
        &nodes,
        &c,
        &[
            "--seconds",
            "2",
            "--clients",
            "all",
            "--answer-timeout",
            "5",
        ],
    );
    // pve3 freezes mid-write: its client and its bench stop answering.
    // (Its processes only: other tests' clusters run meanwhile.)
    let ns = until_a_client_writes(&c, "-pve3");
    let frozen: Vec<u32> = processes(&[&format!("{ns} ")]);
    assert!(!frozen.is_empty());
    signal(&frozen, "-STOP");
    let mut child = child;
    let status = wait_within(&mut child, Duration::from_secs(300));
    let mut out = child.wait_with_output().unwrap();
    out.status = status;
    // Thawed, the node finds its run gone: it stops and cleans up.
    signal(&frozen, "-CONT");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let run_id = doc["run_id"].as_str().unwrap().to_string();
    let write = doc["pools"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["key"] == "rados_write_4m" && j["clients"].as_array().is_some())
        .unwrap();
    let clients = write["clients"].as_array().unwrap();
    assert!(
        clients[2]["error"]
            .as_str()
            .unwrap()
            .contains("given up on"),
        "{write}"
    );
    // The others' figures stand, and the total is theirs.
    let sum: f64 = clients[..2]
        .iter()
        .map(|c| {
            c["figure"]["mib_s"]
                .as_f64()
                .unwrap_or_else(|| panic!("{c}\n{}", stderr(&out)))
        })
        .sum();
    assert!((write["figure"]["mib_s"].as_f64().unwrap() - sum).abs() < 1e-6 * sum);
    let start = Instant::now();
    while !benches_left(&run_id).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "pve3's client never ended after its thaw"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(leftovers(&c).is_empty(), "{:?}", leftovers(&c));
}
