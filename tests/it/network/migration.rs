//! The migration path between two nodes of the simulated cluster
//! (tests/it/common/netns.rs): the secure channel through ssh as
//! qemu-server opens it, from node to node with PVE's options and the
//! cluster's known_hosts, beside one plain TCP stream (insecure
//! migration's path). Uncapped, ssh's core is the cap and the hint fires;
//! held by htb (tests/it/network/matrix.rs), both sit at the link. A
//! SIGINT mid-stream leaves no process, socket or directory on any node.
//! Without a migration network, the path is the nodes' cluster addresses.
//! Root: namespaces; all traffic inside them (10.231.7.0/24, 10.232.0.0/16).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::matrix::{
    addrs, corosync_conf, hints, namespaces, net, one_at_a_time, pair, pve_dir, responders_left,
    tcp, write,
};
use crate::common::netlinks::Links;
use crate::common::netns::{Behaviour::Good, TestCluster};
use crate::common::{json, root_or_skip, stderr};

/// A pair's secure stream one way.
pub fn secure<'a>(p: &'a Value, way: &str) -> &'a Value {
    p["secure"]
        .as_array()
        .unwrap_or_else(|| panic!("no secure streams in {p:#}"))
        .iter()
        .find(|s| s["way"] == way)
        .unwrap_or_else(|| panic!("no secure {way} in {p:#}"))
}

/// Two nodes with a migration network of their own, uncapped.
fn two_nodes() -> (TestCluster, Links) {
    let c = TestCluster::new(&[("pve1", Good), ("pve2", Good)]);
    let mut links = Links::new(&namespaces(&c));
    links.add_pair(0, 1, 43, "eth2");
    write(
        &pve_dir(&c).join("datacenter.cfg"),
        "keyboard: en-us\nmigration: secure,network=10.232.43.0/24\n",
    );
    (c, links)
}

/// A private directory of /run as a net-sink killed by SIGKILL three hours
/// ago left it: its socket inside, no listener. The helpers sweep it.
fn stale_run_dir() -> std::path::PathBuf {
    let d = std::path::Path::new("/run").join(format!(
        "pveprobe.{:016x}",
        u64::from(std::process::id()) << 32 | 0x5eed
    ));
    std::fs::create_dir(&d).unwrap();
    drop(std::os::unix::net::UnixListener::bind(d.join("migrate.sock")).unwrap());
    let then = std::time::SystemTime::now() - Duration::from_secs(3 * 3600);
    std::fs::File::open(&d).unwrap().set_modified(then).unwrap();
    d
}

/// The private directories of /run (each end's socket is in one) that
/// were not there `before`.
fn new_run_dirs(before: &[String]) -> Vec<String> {
    run_dirs()
        .into_iter()
        .filter(|d| !before.contains(d))
        .collect()
}

/// The private directories of /run (each end's socket is in one).
fn run_dirs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/run")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pveprobe."))
        .collect();
    v.sort();
    v
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn uncapped_the_secure_channel_is_ssh_bound_and_the_hint_says_what_insecure_gives() {
    if !root_or_skip() {
        return;
    }
    let _quiet = one_at_a_time();
    let (c, _links) = two_nodes();
    // VM 100 runs on pve1 (its QMP socket where pve1's net-info looks),
    // 2 GiB of memory, a 1 GiB disk on local storage and one on Ceph.
    let pve = pve_dir(&c);
    std::fs::create_dir_all(pve.join("nodes/pve1/qemu-server")).unwrap();
    write(
        &pve.join("nodes/pve1/qemu-server/100.conf"),
        "name: db1\nmemory: 2048\nscsi0: local:100/vm-100-disk-0.qcow2,size=1G\nscsi1: ceph:vm-100-disk-1,size=50G\n",
    );
    write(
        &pve.join("storage.cfg"),
        "dir: local\n\tpath /var/lib/vz\n\tcontent images\n\nrbd: ceph\n\tpool vms\n\tcontent images\n",
    );
    let qmp = c.dir.path().join("pve1/qemu-server");
    std::fs::create_dir_all(&qmp).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(qmp.join("100.qmp")).unwrap();
    let stale = stale_run_dir();
    let before = run_dirs();
    let plot = c.dir.path().join("migration.svg");
    let out = net(
        &c,
        &["pve1", "pve2"],
        &[
            "--plot",
            plot.to_str().unwrap(),
            "--link",
            "migration",
            "--net-throughput",
            "--net-seconds",
            "3",
            "--net-streams",
            "1",
            "--net-count",
            "20",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    crate::common::validate_against(&doc, "docs/net.schema.json");
    let p = pair(&doc, "migration", "pve1", "pve2");
    assert_eq!(p["status"], "ok", "{p:#}");
    let mut hinted = 0;
    for (way, from) in [("forward", "pve1"), ("back", "pve2")] {
        let s = secure(p, way);
        let secure_mib = s["mib_per_s"].as_f64().unwrap();
        let insecure_mib = tcp(p, way, 1) * 1e6 / 8.0 / 1048576.0;
        let ssh = s["ssh_cpu_percent"].as_f64().unwrap();
        let sshd = s["sshd_cpu_percent"].as_f64().unwrap();
        eprintln!(
            "{way}: secure {secure_mib:.0} MiB/s (ssh {ssh:.0}%, sshd {sshd:.0}%, {}), insecure {insecure_mib:.0} MiB/s",
            s["cipher"]
        );
        // The stream crossed: gigabytes in 3 s on a veth, counted there.
        assert!(s["bytes"].as_u64().unwrap() > 100 << 20, "{s:#}");
        // ssh (or sshd) at its core (75% and more: this machine's 2 cores
        // run both nodes, ssh, sshd and both ends of the stream), and on
        // a core of its own still below the plain stream: the cap.
        let busiest = ssh.max(sshd);
        assert!(busiest >= 75.0, "{way}: ssh {ssh:.0}%, sshd {sshd:.0}%");
        assert!(secure_mib * 100.0 / busiest < insecure_mib, "{way}");
        assert!(
            ssh.max(sshd) <= 105.0,
            "{way}: one process, one core: {ssh}, {sshd}"
        );
        assert!(
            insecure_mib >= 1.5 * secure_mib,
            "{way}: insecure {insecure_mib:.0} vs secure {secure_mib:.0} MiB/s"
        );
        assert!(
            s["cipher_mib_per_s"].as_f64().unwrap() > secure_mib,
            "{s:#}"
        );
        // PVE's command: the target's alias and the cluster's known_hosts.
        let command: Vec<&str> = s["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        let to = if from == "pve1" { "pve2" } else { "pve1" };
        assert!(
            command.contains(&format!("HostKeyAlias={to}").as_str()),
            "{command:?}"
        );
        assert!(
            command.iter().any(|w| w.starts_with("UserKnownHostsFile=")
                && w.ends_with(&format!("pve/nodes/{to}/ssh_known_hosts"))),
            "{command:?}"
        );
        assert!(
            command.last().unwrap().starts_with("root@10.232.43."),
            "{command:?}"
        );
        hinted += hints(p)
            .iter()
            .filter(|h| h.contains(&format!("secure migration {from}->{to} is capped")))
            .count();
    }
    assert_eq!(hinted, 2, "{:?}", hints(p));
    // --plot: a panel per way, drawn.
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(crate::output::plot::png(&svg).len() > 1000);
    for title in ["migration pve1-&gt;pve2", "migration pve2-&gt;pve1"] {
        assert!(svg.contains(title), "no panel {title}");
    }
    // VM 100 moves pve1->pve2 only: its 2 GiB at each figure, its local
    // 1 GiB disk at the secure one, the Ceph disk not at all.
    let moves = doc["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 1, "{moves:#?}");
    let m = &moves[0];
    assert_eq!(
        (m["vmid"].as_u64(), m["from"].as_str(), m["to"].as_str()),
        (Some(100), Some("pve1"), Some("pve2"))
    );
    assert_eq!(m["local_disk_bytes"], 1u64 << 30);
    let s = secure(p, "forward")["mib_per_s"].as_f64().unwrap();
    let i = tcp(p, "forward", 1) * 1e6 / 8.0 / 1048576.0;
    let near = |got: &Value, want: f64| (got.as_f64().unwrap() / want - 1.0).abs() < 1e-6;
    assert!(near(&m["secure_seconds"], 3072.0 / s), "{m:#}");
    assert!(
        near(&m["insecure_seconds"], 2048.0 / i + 1024.0 / s),
        "{m:#}"
    );
    assert!(responders_left(&c).is_empty(), "{:?}", responders_left(&c));
    assert_eq!(new_run_dirs(&before), [""; 0], "directories left in /run");
    assert!(!stale.exists(), "{} was not swept", stale.display());
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sigint_mid_stream_leaves_nothing_on_either_node() {
    if !root_or_skip() {
        return;
    }
    let _quiet = one_at_a_time();
    let (c, _links) = two_nodes();
    let before = run_dirs();
    let mut child = c
        .pveprobe_on(0, "net")
        .args(["pve1", "pve2", "--pve-config"])
        .arg(pve_dir(&c))
        .args([
            "--link",
            "migration",
            "--net-throughput",
            // TCP's two runs first (8 s), then the secure stream's 4 s,
            // cut 1 s in.
            "--net-seconds",
            "4",
            "--net-streams",
            "1",
            "--net-count",
            "10",
            "--quiet",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until the sink runs on the target (the secure stream is under way).
    let start = Instant::now();
    let streaming = || {
        c.nodes.iter().any(|n| {
            c.pids(&n.name).iter().any(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|l| String::from_utf8_lossy(&l).contains("net-sink"))
            })
        })
    };
    while !streaming() {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "no net-sink ran within 90 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status:?}");
    // Everything on the nodes ends by itself within seconds: the helpers'
    // stdin ends with the run's ssh, the tunnel's ssh with its net-migrate.
    let start = Instant::now();
    while !responders_left(&c).is_empty() || !new_run_dirs(&before).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "left 20 s after SIGINT: {:?}, /run: {:?} (before {before:?})",
            responders_left(&c),
            run_dirs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Without a migration network, over the nodes' cluster addresses (corosync
/// on a link of its own): a node whose root key the other refuses is named
/// in the pair, and the way back is measured.
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn over_the_cluster_addresses_a_refused_key_is_named_and_the_other_way_stands() {
    if !root_or_skip() {
        return;
    }
    let _quiet = one_at_a_time();
    // Corosync on a link of its own, no migration network: PVE migrates
    // over the nodes' cluster addresses (the members list's), measured.
    let c = TestCluster::new(&[("pve1", Good), ("pve2", Good)]);
    let mut links = Links::new(&namespaces(&c));
    let coro = links.add_pair(0, 1, 43, "eth2");
    write(
        &pve_dir(&c).join("corosync.conf"),
        &corosync_conf(&["pve1", "pve2"], &[addrs(&coro, 2)]),
    );
    write(&pve_dir(&c).join("datacenter.cfg"), "keyboard: en-us\n");
    // pve1's root offers a key pve2 does not have (its sshd takes the
    // cluster's key only): PVE's own ssh from pve1 to pve2 is refused,
    // while this run reaches both nodes. The file is the one bound over
    // pve1's /etc/ssh/ssh_config, written in place.
    write(
        &c.dir.path().join("pve1/ssh_client_config"),
        &format!(
            "Host *\n  IdentityFile {}/other_ed25519\n  IdentitiesOnly yes\n  LogLevel ERROR\n",
            c.dir.path().display()
        ),
    );
    let out = net(
        &c,
        &["pve1", "pve2"],
        &[
            "--link",
            "migration",
            "--net-throughput",
            "--net-seconds",
            "1",
            "--net-streams",
            "1",
            "--net-count",
            "10",
            "--output-format",
            "json",
        ],
    );
    // Not all measured: exit 1, the rest of the pair stands.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    crate::common::validate_against(&doc, "docs/net.schema.json");
    let link = &doc["links"][0];
    assert_eq!(link["name"], "migration", "{doc:#}");
    assert_eq!(link["cluster_addresses"], true, "{doc:#}");
    let p = pair(&doc, "migration", "pve1", "pve2");
    for (end, node) in [("a", &c.nodes[0]), ("b", &c.nodes[1])] {
        assert_eq!(p[end]["address"], node.addr.to_string(), "{p:#}");
    }
    assert_eq!(p["status"], "partial", "{p:#}");
    let detail = p["detail"].as_str().unwrap();
    assert!(
        detail.contains("secure pve1->pve2") && detail.contains("Permission denied"),
        "{detail}"
    );
    assert!(secure(p, "back")["mib_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(p["secure"].as_array().unwrap().len(), 1, "{p:#}");
    assert!(tcp(p, "forward", 1) > 0.0);
    assert!(responders_left(&c).is_empty(), "{:?}", responders_left(&c));
    drop(links);
}

#[test]
#[ignore = "needs root and the v1 cpu controller: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_node_whose_sshd_waits_for_a_cpu_is_named_as_the_cap() {
    if !root_or_skip() {
        return;
    }
    let _quiet = one_at_a_time();
    let (c, _links) = two_nodes();
    // pve2's sshd held to a fifth of a core, as a node whose guests keep
    // its cores busy would hold it: its sessions (forked from it) are held
    // with it.
    let held = crate::common::cgroup::Cgroup::new("cpu", "busy-node");
    held.set("cpu.cfs_period_us", "100000");
    held.set("cpu.cfs_quota_us", "20000");
    let sshd = c.sshd_pid("pve2").expect("pve2's sshd");
    held.take(sshd);
    let out = net(
        &c,
        &["pve1", "pve2"],
        &[
            "--link",
            "migration",
            "--net-throughput",
            "--net-seconds",
            "3",
            "--net-streams",
            "1",
            "--net-count",
            "20",
            "--output-format",
            "json",
        ],
    );
    held.give_back(sshd);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    crate::common::validate_against(&doc, "docs/net.schema.json");
    let p = pair(&doc, "migration", "pve1", "pve2");
    let s = secure(p, "forward");
    let (sshd_cpu, sshd_wait) = (
        s["sshd_cpu_percent"].as_f64().unwrap(),
        s["sshd_wait_percent"].as_f64().unwrap(),
    );
    eprintln!(
        "forward: secure {:.0} MiB/s, ssh {:.0}% (waited {:.0}%), sshd {sshd_cpu:.0}% (waited {sshd_wait:.0}%)",
        s["mib_per_s"].as_f64().unwrap(),
        s["ssh_cpu_percent"].as_f64().unwrap(),
        s["ssh_wait_percent"].as_f64().unwrap_or(f64::NAN),
    );
    // Held: well under a core, and waiting for one much of the stream.
    assert!(sshd_cpu < 40.0, "{s:#}");
    assert!(sshd_wait >= 10.0, "{s:#}");
    let named: Vec<String> = hints(p)
        .into_iter()
        .filter(|h| h.contains("secure migration pve1->pve2 is capped"))
        .collect();
    assert_eq!(named.len(), 1, "{:?}", hints(p));
    assert!(
        named[0].contains("sshd at") && named[0].contains("on pve2 and waiting for a CPU"),
        "{}",
        named[0]
    );
    assert!(named[0].contains("pve2's CPU is the cap"), "{}", named[0]);
    // The other way starts on pve2 (its ssh held too): if named, pve2's.
    for h in hints(p)
        .iter()
        .filter(|h| h.contains("secure migration pve2->pve1 is capped"))
    {
        assert!(h.contains("on pve2"), "{h}");
    }
    assert!(responders_left(&c).is_empty(), "{:?}", responders_left(&c));
}
