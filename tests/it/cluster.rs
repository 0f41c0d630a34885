//! `pveprobe cluster` on real hosts: simulated Proxmox VE nodes in network
//! namespaces on this machine, each with its own OpenSSH server, reached
//! through the system's ssh client (tests/it/common/netns.rs). Root for the
//! namespaces; the tests without hosts (dry run, bad lists) run as anyone.
//! Probe runs are short (`--tests cpu,fsync`, fractions of a second) and
//! never query DNS.

use std::path::Path;
use std::time::Duration;

use crate::common::netns::{Behaviour::*, TestCluster, leftover_namespaces};
use crate::common::{json, pveprobe, root_or_skip, stderr, stdout, workdir};
use serde_json::Value;

/// The table's row of a node.
fn row<'a>(text: &'a str, node: &str) -> &'a str {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(node))
        .unwrap_or_else(|| panic!("no row for {node} in\n{text}"))
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name} in {doc}"))
}

fn timestamp(doc: &Value) -> jiff::Timestamp {
    doc["timestamp"].as_str().unwrap().parse().unwrap()
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn four_nodes_answer_one_row_each_one_after_another() {
    if !root_or_skip() {
        return;
    }
    let c = TestCluster::new(&[
        ("pve1", Good),
        ("pve2", Good),
        ("pve3", Good),
        ("pve4", Good),
    ]);
    let work = workdir();
    let results = c.dir.path().join("results");
    let path = work.path().to_str().unwrap();
    let (out, took) = c.run(&[
        "--tests",
        "cpu,fsync",
        "--duration",
        "0.3",
        "--runs",
        "2",
        "--save-dir",
        results.to_str().unwrap(),
        path,
    ]);
    let text = stdout(&out);
    eprintln!(
        "pveprobe cluster {path} ({took:.1?}):\n{text}{}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(text.starts_with(&format!(
        "pveprobe cluster: {path} on 4 nodes of cluster testc, one node at a time\n"
    )));
    for name in ["pve1", "pve2", "pve3", "pve4"] {
        let cells: Vec<&str> = row(&text, name).split_whitespace().collect();
        assert_eq!(cells[1], "ok", "{text}");
        // BOGOMIPS, HD SIZE (always measured) and FSYNCS, all numbers.
        assert_eq!(cells.len(), 5, "{text}");
        for cell in &cells[2..] {
            assert!(
                cell.trim_end_matches('!').parse::<f64>().unwrap() > 0.0,
                "{text}"
            );
        }
    }
    assert_eq!(row(&text, "median").split_whitespace().count(), 4);
    assert!(text.ends_with("4 of 4 nodes answered\n"), "{text}");
    assert!(!text.contains("at once"), "no aggregate one node at a time");

    // Each node's own result, kept for compare: every one ran on its own
    // host (its own host name), one after another.
    let mut docs: Vec<Value> = Vec::new();
    for name in ["pve1", "pve2", "pve3", "pve4"] {
        let file = results.join(format!("{name}.json"));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        crate::common::validate_schema(&doc);
        assert_eq!(doc["host"]["hostname"], name);
        assert_eq!(doc["path"], path);
        assert_eq!(
            doc["figures"]["fsyncs_per_second"]["samples"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        docs.push(doc);
    }
    let starts: Vec<jiff::Timestamp> = docs.iter().map(timestamp).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    assert!(
        starts[3].duration_since(starts[0]).as_secs_f64() >= 1.0,
        "four runs of at least 0.6 s one after another: {starts:?}"
    );
    let files: Vec<String> = ["pve1", "pve2", "pve3", "pve4"]
        .iter()
        .map(|n| {
            results
                .join(format!("{n}.json"))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let compared = pveprobe().arg("compare").args(&files).output().unwrap();
    assert_eq!(compared.status.code(), Some(0), "{}", stderr(&compared));
    assert!(stdout(&compared).contains("[4] pve4 (pve4.json)"));

    // The CSV: one table, the single run's columns after the cluster's.
    let (out, _) = c.run(&[
        "--tests",
        "cpu,fsync",
        "--duration",
        "0.2",
        "--output-format",
        "csv",
        path,
    ]);
    let text = stdout(&out);
    eprintln!("--output-format csv:\n{text}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let single = pveprobe()
        .args(["--tests", "cpu", "--output-format", "csv"])
        .arg(work.path())
        .output()
        .unwrap();
    let single_header = stdout(&single).lines().next().unwrap().to_string();
    assert_eq!(header[4..].join(","), single_header);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(
        rows.iter().map(|r| r[0].to_string()).collect::<Vec<_>>(),
        ["pve1", "pve2", "pve3", "pve4", "(median)", "(spread)"]
    );
    let hostname = header.iter().position(|h| h == "hostname").unwrap();
    assert!(
        rows[..4]
            .iter()
            .all(|r| r[hostname] == r[0] && &r[1] == "ok")
    );
    assert!(rows.iter().all(|r| r.len() == header.len()));

    assert!(
        work_is_empty(work.path()),
        "nothing left behind on any node"
    );
    let tag = c.tag().to_string();
    drop(c);
    assert_eq!(leftover_namespaces(&tag), Vec::<String>::new());
}

/// A failed node's row: its status word(s) and the reason after them.
fn status_and_detail<'a>(text: &'a str, node: &str) -> (&'a str, &'a str) {
    let rest = row(text, node)[node.len()..].trim_start();
    let words = [
        "ok",
        "partial",
        "offline",
        "unreachable",
        "ssh refused",
        "no pveprobe",
        "timeout",
        "version",
        "bad output",
        "error",
    ];
    let status = words
        .iter()
        .find(|w| rest.starts_with(*w))
        .unwrap_or_else(|| panic!("no status in {rest:?}"));
    (&rest[..status.len()], rest[status.len()..].trim_start())
}

fn work_is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_node_down_refusing_ssh_or_without_pveprobe_gets_its_own_row() {
    if !root_or_skip() {
        return;
    }
    let c = TestCluster::new(&[
        ("pve1", Good),
        ("pve2", Offline),
        ("pve3", KeyRefused),
        ("pve4", NoPveprobe),
        ("pve5", NoSshd),
    ]);
    let work = workdir();
    let path = work.path().to_str().unwrap();
    let (out, took) = c.run(&["--tests", "cpu,fsync", "--duration", "0.2", path]);
    let text = stdout(&out);
    eprintln!(
        "pveprobe cluster {path} ({took:.1?}):\n{text}{}",
        stderr(&out)
    );
    assert_eq!(
        out.status.code(),
        Some(4),
        "a node did not answer: {}",
        stderr(&out)
    );
    assert_eq!(status_and_detail(&text, "pve1").0, "ok");
    assert_eq!(
        status_and_detail(&text, "pve2"),
        ("offline", "pmxcfs lists it as offline; not contacted")
    );
    assert_eq!(
        status_and_detail(&text, "pve3"),
        (
            "ssh refused",
            "root@10.231.7.13: Permission denied (publickey)."
        )
    );
    let (status, detail) = status_and_detail(&text, "pve4");
    assert_eq!(status, "no pveprobe");
    assert!(
        detail.starts_with(
            "timeout: failed to run command 'pveprobe': No such file or directory (exit status 127)"
        ),
        "{detail}"
    );
    assert_eq!(
        status_and_detail(&text, "pve5"),
        (
            "unreachable",
            "ssh: connect to host 10.231.7.15 port 22: Connection refused"
        )
    );
    assert!(
        text.ends_with(
            "1 of 5 nodes answered; not: pve2 offline, pve3 ssh refused, pve4 no pveprobe, pve5 unreachable\n"
        ),
        "{text}"
    );
    // Failures never held up the others: well within one connect timeout each.
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(work_is_empty(work.path()));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_hanging_node_times_out_and_wrong_answers_are_named() {
    if !root_or_skip() {
        return;
    }
    let c = TestCluster::new(&[
        ("pve1", Good),
        ("pve2", Hangs),
        ("pve3", OldVersion),
        ("pve4", Garbage),
        ("pve5", Frozen),
    ]);
    let work = workdir();
    let path = work.path().to_str().unwrap();
    let (out, took) = c.run(&[
        "--tests",
        "cpu,fsync",
        "--duration",
        "0.2",
        "--timeout",
        "3",
        "--output-format",
        "json-pretty",
        path,
    ]);
    eprintln!("({took:.1?}) {}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc = json(&out);
    let status = |n: &str| node(&doc, n)["status"].as_str().unwrap().to_string();
    assert_eq!(
        ["pve1", "pve2", "pve3", "pve4", "pve5"].map(status),
        ["ok", "timeout", "version", "bad_output", "unreachable"]
    );
    // A frozen machine costs the connect timeout (3 s here), no more.
    assert_eq!(
        node(&doc, "pve5")["detail"],
        "Connection timed out during banner exchange"
    );
    let frozen = node(&doc, "pve5")["seconds"].as_f64().unwrap();
    assert!((2.5..8.0).contains(&frozen), "{frozen}");
    assert_eq!(
        node(&doc, "pve2")["detail"],
        "still running after 3 s; stopped on the node"
    );
    assert_eq!(node(&doc, "pve2")["exit_status"], 124);
    assert!(
        node(&doc, "pve3")["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!(
                "pveprobe 0.0.1 on the node, {} here",
                env!("CARGO_PKG_VERSION")
            )),
        "{doc}"
    );
    assert!(
        node(&doc, "pve4")["detail"]
            .as_str()
            .unwrap()
            .contains("Segmentation fault"),
        "{doc}"
    );
    assert!(node(&doc, "pve2")["result"].is_null() && node(&doc, "pve3")["result"].is_null());
    assert_eq!(
        doc["figures"][0]["nodes"], 1,
        "figures of the node that answered only"
    );
    // The hung node took its timeout, no more; its probe was ended there.
    let hung = node(&doc, "pve2")["seconds"].as_f64().unwrap();
    assert!((3.0..8.0).contains(&hung), "{hung}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert_eq!(
        c.pids("pve2"),
        [c.sshd_pid("pve2").unwrap()],
        "only sshd is left on pve2"
    );
    assert!(work_is_empty(work.path()));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn parallel_runs_start_together_and_add_up() {
    if !root_or_skip() {
        return;
    }
    let c = TestCluster::new(&[
        ("pve1", Good),
        ("pve2", Good),
        ("pve3", Good),
        ("pve4", KeyRefused),
    ]);
    let work = workdir();
    let path = work.path().to_str().unwrap();
    let (out, took) = c.run(&[
        "--parallel",
        "--tests",
        "cpu,fsync,syncwrite",
        "--duration",
        "1",
        "--output-format",
        "json",
        path,
    ]);
    assert_eq!(out.status.code(), Some(4), "pve4 refused: {}", stderr(&out));
    let doc = json(&out);
    eprintln!("--parallel --output-format json ({took:.1?})");
    assert_eq!(doc["parallel"], true);
    let answered: Vec<&Value> = ["pve1", "pve2", "pve3"]
        .iter()
        .map(|n| &node(&doc, n)["result"])
        .collect();
    // Started together: one-second runs, all begun within a second.
    let starts: Vec<jiff::Timestamp> = answered.iter().map(|r| timestamp(r)).collect();
    let first = starts.iter().min().unwrap();
    let last = starts.iter().max().unwrap();
    assert!(
        last.duration_since(*first).as_secs_f64() <= 1.0,
        "{starts:?}"
    );

    let figure = |key: &str| {
        doc["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["key"] == key)
            .unwrap_or_else(|| panic!("no {key} in {doc}"))
            .clone()
    };
    let fsyncs: Vec<f64> = answered
        .iter()
        .map(|r| r["figures"]["fsyncs_per_second"]["value"].as_f64().unwrap())
        .collect();
    let f = figure("fsyncs_per_s");
    assert_eq!(f["aggregate"], "sum");
    assert_eq!(f["nodes"], 3);
    assert_eq!(
        f["aggregate_value"].as_f64().unwrap(),
        fsyncs.iter().sum::<f64>()
    );
    let p99: Vec<f64> = answered
        .iter()
        .map(|r| {
            r["extended"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["key"] == "sync_write_4k")
                .unwrap()["latency"]["p99_us"]
                .as_f64()
                .unwrap()
                / 1000.0
        })
        .collect();
    let f = figure("sync_write_4k_p99_ms");
    assert_eq!(f["aggregate"], "max");
    assert_eq!(
        f["aggregate_value"].as_f64().unwrap(),
        p99.iter().copied().fold(f64::MIN, f64::max)
    );
    let f = figure("cpu_bogomips");
    assert!(f.get("aggregate").is_none(), "CPU is no shared figure: {f}");
    eprintln!(
        "fsyncs {fsyncs:?} -> sum {}; p99 {p99:?} -> max {}",
        figure("fsyncs_per_s")["aggregate_value"],
        figure("sync_write_4k_p99_ms")["aggregate_value"]
    );

    // The same as a table: the "at once" row.
    let (out, _) = c.run(&[
        "--parallel",
        "--tests",
        "cpu,fsync,syncwrite",
        "--duration",
        "0.3",
        path,
    ]);
    let text = stdout(&out);
    eprintln!("pveprobe cluster --parallel:\n{text}");
    let at_once = row(&text, "at");
    assert!(
        at_once.contains(" sum ") && at_once.contains(" max "),
        "{text}"
    );
    let sum: f64 = at_once
        .split("sum")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // NODE STATUS BOGOMIPS HD-SIZE FSYNCS ...
    let nodes: f64 = ["pve1", "pve2", "pve3"]
        .iter()
        .map(|n| {
            row(&text, n)
                .split_whitespace()
                .nth(4)
                .unwrap()
                .trim_end_matches('!')
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    assert!(
        (sum - nodes).abs() <= 3.0 * 0.5 + 0.5,
        "{sum} against {nodes} (rounded cells)"
    );
    assert!(work_is_empty(work.path()));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn any_path_reaches_the_nodes_unchanged_from_a_nodes_file() {
    if !root_or_skip() {
        return;
    }
    let c = TestCluster::new(&[("pve1", Good), ("pve2", Good)]);
    let work = workdir();
    let odd = work.path().join("it's a $(touch pwned) `x` dir; *");
    std::fs::create_dir(&odd).unwrap();
    let nodes = c.dir.path().join("fleet");
    std::fs::write(
        &nodes,
        "# the fleet\npve1 10.231.7.11\npve2 10.231.7.12  # rack 2\n",
    )
    .unwrap();
    let known = format!(
        "UserKnownHostsFile={}",
        c.dir.path().join("known_hosts").display()
    );
    let results = c.dir.path().join("saved");
    let (out, _) = c.run(&[
        "--nodes-file",
        nodes.to_str().unwrap(),
        "--ssh-option",
        &known,
        "--tests",
        "fsync",
        "--duration",
        "0.2",
        "--output-format",
        "json",
        "--output",
        c.dir.path().join("cluster.json").to_str().unwrap(),
        "--save-dir",
        results.to_str().unwrap(),
        odd.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "--output takes the table");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(c.dir.path().join("cluster.json")).unwrap())
            .unwrap();
    for name in ["pve1", "pve2"] {
        assert_eq!(node(&doc, name)["result"]["path"], odd.to_str().unwrap());
        assert_eq!(
            node(&doc, name)["address"],
            if name == "pve1" {
                "10.231.7.11"
            } else {
                "10.231.7.12"
            }
        );
    }
    assert!(doc["cluster"].is_null());
    assert_eq!(
        std::fs::read_dir(&odd).unwrap().count(),
        0,
        "nothing made, nothing left"
    );
    assert!(!work.path().join("pwned").exists() && !Path::new("pwned").exists());
    // compare takes the cluster document (one column per node) and the kept files.
    let compared = pveprobe()
        .arg("compare")
        .arg(c.dir.path().join("cluster.json"))
        .arg(results.join("pve1.json"))
        .output()
        .unwrap();
    assert_eq!(compared.status.code(), Some(0), "{}", stderr(&compared));
    let text = stdout(&compared);
    assert!(
        text.starts_with(
            "[1] pve1 (cluster.json)\n[2] pve2 (cluster.json)\n[3] pve1 (pve1.json)\n"
        ),
        "{text}"
    );
}

#[test]
fn dry_run_lists_each_node_and_runs_nothing() {
    let members = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cluster/members-4.json");
    let out = pveprobe()
        .args([
            "cluster",
            "--dry-run",
            "--tests",
            "cpu,fsync",
            "--duration",
            "0.5",
            "--members",
        ])
        .arg(&members)
        .arg("/var/lib/it's")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[0].starts_with("pveprobe cluster: would run on 3 of 4 nodes of cluster prod"));
    assert!(
        lines[0].ends_with("one node at a time, at most 62 s each"),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        r#"COMMAND (each node's shell runs it): timeout -k 10 62 pveprobe --output-format json --duration 0.5 --tests 'cpu,fsync' -- "/var/lib/it's""#
    );
    assert_eq!(
        lines[2],
        "pve1: ssh -o 'BatchMode=yes' -o 'ConnectTimeout=10' -o 'HostKeyAlias=pve1' -T -n -e none -l root -- 192.0.2.11 COMMAND"
    );
    assert!(lines[4].starts_with("pve3: offline in "), "{text}");
    assert!(lines[5].starts_with("pve10: ssh ") && lines[5].ends_with("-l root -- pve10 COMMAND"));
}

#[test]
fn bad_node_lists_are_refused_before_anything_runs() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cluster");
    for (args, says) in [
        (
            vec!["--members", "/nonexistent/.members"],
            "cannot read /nonexistent/.members: No such file or directory (not a Proxmox VE cluster node?",
        ),
        (
            vec![
                "--members",
                fixtures.join("members-standalone.json").to_str().unwrap(),
            ],
            "pve is in no cluster",
        ),
        (
            vec!["--nodes", "a,b;rm"],
            "--nodes: \"b;rm\" is not a node name",
        ),
        (vec!["--nodes", "a=-oProxyCommand=x"], "is not an address"),
        (vec!["--nodes", "a,a"], "node a is listed twice"),
        (
            vec!["--nodes", "a", "--remote-command", " "],
            "--remote-command is empty",
        ),
    ] {
        let out = pveprobe()
            .arg("cluster")
            .args(&args)
            .arg("/")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
    }
    let out = pveprobe()
        .args(["cluster", "--nodes", "a", "--nodes-file", "f"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_shared_storage_on_every_node_one_after_another_and_at_once() {
    if !root_or_skip() {
        return;
    }
    // One fake PVE for all nodes, as a shared storage is one for all: its
    // pvesm makes loop devices, each node's probe allocates its own volume.
    let fake = crate::common::pve::FakePve::new("lvm: san\n\tvgname san\n\tcontent images\n");
    fake.set_status(&[("san", "lvm", "active", 100 << 20, 0, 100 << 20)]);
    let c = TestCluster::new(&[("pve1", Good), ("pve2", Good)]);
    // The nodes' PATH lacks /usr/sbin (losetup): the remote command sets
    // the fake's environment and calls this build directly.
    let remote = format!(
        "env PATH={}:/usr/sbin:/usr/bin:/sbin:/bin {}={} {} --pve-config {}",
        fake.state_dir().parent().unwrap().join("bin").display(),
        crate::common::pve::STATE_ENV,
        fake.state_dir().display(),
        env!("CARGO_BIN_EXE_pveprobe"),
        fake.pve_dir().display()
    );
    for parallel in [false, true] {
        let mut args = vec![
            "--remote-command",
            &remote,
            "--storage",
            "san",
            "--write-size",
            "16M",
            "--tests",
            "read,randwrite",
            "--duration",
            "0.3",
        ];
        if parallel {
            args.push("--parallel");
        }
        let (out, _) = c.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.starts_with("pveprobe cluster: storage san on 2 nodes"),
            "{text}"
        );
        for n in ["pve1", "pve2"] {
            assert!(row(&text, n).contains(" ok "), "{text}");
        }
        assert!(fake.volumes().is_empty() && fake.loop_devices().is_empty());
    }
    let allocs = fake.calls().iter().filter(|c| c[0] == "alloc").count();
    let frees = fake.calls().iter().filter(|c| c[0] == "free").count();
    assert_eq!((allocs, frees), (4, 4), "{:?}", fake.calls());
    // `all` is one table per node: refused.
    let (out, _) = c.run(&["--storage", "all"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
