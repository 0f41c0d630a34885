//! `pveprobe ceph` against a real one-node Ceph cluster (Debian's
//! ceph-mon, ceph-mgr and three memstore ceph-osd, `common::ceph`): the
//! OSD benches, `ceph osd perf`/`metadata`/`tree`, rados bench on a pool
//! and rbd bench on a scratch image, and that nothing of the run's is left
//! in the pool afterwards, after a SIGINT mid-bench too.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::ceph::{self, Cluster, POOL};
use crate::common::{pveprobe, stderr, stdout, wait_within};

fn run(c: &Cluster, args: &[&str]) -> Output {
    pveprobe()
        .arg("ceph")
        .arg("--conf")
        .arg(c.conf())
        .args(args)
        .output()
        .unwrap()
}

/// What a run of pveprobe's left in the rig's pool: objects in a
/// `pveprobe-` namespace, images named `pveprobe-`.
pub(crate) fn leftovers(c: &Cluster) -> Vec<String> {
    let mut left: Vec<String> = c
        .objects(POOL)
        .into_iter()
        .filter(|o| o.starts_with("pveprobe-"))
        .collect();
    left.extend(
        c.rbd(&["ls", POOL])
            .lines()
            .filter(|i| i.starts_with("pveprobe-"))
            .map(String::from),
    );
    left
}

#[test]
#[ignore = "needs Ceph: a one-node cluster runs in a private directory (scripts/test runs it)"]
fn the_whole_run_benches_every_osd_and_the_pool_and_leaves_nothing() {
    ceph::needs_ceph();
    let c = Cluster::start();
    let svg = c.dir.path().join("rados.svg");
    let out = run(
        &c,
        &[
            "--yes",
            "--seconds",
            "2",
            "--rbd-size",
            "16M",
            "--output-format",
            "json",
            "--plot",
            svg.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["kind"], "ceph");
    let osds = doc["osds"].as_array().unwrap();
    assert_eq!(osds.len(), ceph::OSDS);
    for o in osds {
        // ceph osd tree and metadata read, ceph osd perf read, both benches run.
        assert_eq!(o["objectstore"], "memstore", "{o}");
        assert!(o["host"].is_string() && o["commit_ms"].is_number(), "{o}");
        assert!(o["bench_4m"]["mib_s"].as_f64().unwrap() > 0.0, "{o}");
        assert_eq!(o["bench_4m"]["block"], 4 << 20);
        assert!(o["bench_4k"]["iops"].as_f64().unwrap() > 0.0, "{o}");
        assert_eq!(o["bench_4k"]["block"], 4096);
    }
    let pool = &doc["pools"].as_array().unwrap()[0];
    assert_eq!(pool["name"], POOL);
    let keys: Vec<&str> = pool["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "rados_write_4m",
            "rados_seq_4m",
            "rados_rand_4m",
            "rados_write_4k_t1",
            "rados_write_4k",
            "rbd_write_4k",
            "rbd_read_4k"
        ]
    );
    for j in pool["jobs"].as_array().unwrap() {
        let f = &j["figure"];
        assert!(
            f["iops"].as_f64().unwrap() > 0.0 && f["mib_s"].as_f64().unwrap() > 0.0,
            "{j}"
        );
    }
    // rados bench's per-second figures came through (the 4 MiB write may
    // end within its first second, at its cap of a quarter of the pool's
    // room; the 4 KiB runs take their seconds).
    assert!(
        !pool["jobs"][3]["figure"]["per_second"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // The 4 MiB write wrote at most a quarter of the pool's MAX AVAIL.
    let w = &pool["jobs"][0]["figure"];
    let written = w["ops"].as_f64().unwrap() * w["block"].as_f64().unwrap();
    let df: serde_json::Value = serde_json::from_str(&c.ceph(&["df", "-f", "json"])).unwrap();
    let room = df["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == POOL)
        .unwrap()["stats"]["max_avail"]
        .as_f64()
        .unwrap();
    assert!(
        written <= room / 4.0 * 1.05 + 64.0 * 1048576.0,
        "wrote {written} of {room}"
    );
    // size 1 on a one-node rig: named.
    assert!(
        doc["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["code"] == "pool-redundancy-low"),
        "{}",
        doc["hints"]
    );
    // Every OSD's own view of every job: its counters read around it.
    for j in pool["jobs"].as_array().unwrap() {
        let seen = j["osds"].as_array().unwrap();
        assert_eq!(seen.len(), ceph::OSDS, "{j}");
        let ops: u64 = seen.iter().map(|o| o["ops"].as_u64().unwrap()).sum();
        assert!(ops > 0, "{j}");
    }
    // A healthy rig: no OSD is slow, in its bench or in the pool.
    let codes = crate::common::hint_codes(&doc["hints"]);
    assert!(
        !codes.contains(&"osd-slow") && !codes.contains(&"osd-drags-pool"),
        "{}",
        doc["hints"]
    );
    assert!(doc["left_behind"].as_array().unwrap().is_empty());
    assert!(leftovers(&c).is_empty(), "{:?}", leftovers(&c));
    // ceph.conf's public network, found on this node's loopback.
    assert_eq!(doc["networks"][0]["kind"], "public", "{}", doc["networks"]);
    assert_eq!(doc["networks"][0]["interface"], "lo", "{}", doc["networks"]);

    // --plot: the pool's rados bench seconds, job after job.
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("rados bench on pool rbd"), "{picture}");
    assert!(crate::output::plot::png(&picture).len() > 1000);

    // compare ranks each OSD's benches and each pool job: a second result
    // with osd.1's bench halved shows it worse, the rest the same.
    let mut slower = doc.clone();
    let mib = slower["osds"][1]["bench_4m"]["mib_s"].as_f64().unwrap();
    slower["osds"][1]["bench_4m"]["mib_s"] = (mib / 2.0).into();
    let table = crate::common::compare_with_copy(c.dir.path(), &doc, &slower);
    let rows = table["rows"].as_array().unwrap();
    // 3 OSDs x 2 benches, 7 pool jobs.
    assert_eq!(rows.len(), 3 * 2 + 7, "{table}");
    let osd1 = rows
        .iter()
        .find(|r| {
            r["label"]
                .as_str()
                .is_some_and(|l| l.contains("CEPH OSD BENCH 4M") && l.contains("osd.1"))
        })
        .unwrap_or_else(|| panic!("no osd.1 row: {table}"));
    assert!(osd1.to_string().contains("worse"), "{osd1}");
}

/// Ctrl-C to a running pveprobe (SIGINT); what it printed and how it ended.
fn interrupt(mut child: std::process::Child) -> Output {
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = wait_within(&mut child, Duration::from_secs(120));
    let mut out = child.wait_with_output().unwrap();
    out.status = status;
    out
}

#[test]
#[ignore = "needs Ceph: a one-node cluster runs in a private directory (scripts/test runs it)"]
fn sigint_mid_bench_stops_it_and_removes_the_objects_and_the_image() {
    ceph::needs_ceph();
    let c = Cluster::start();
    for (stage, extra) in [
        ("rados bench", &["--seconds", "30"][..]),
        ("rbd bench", &["--seconds", "1", "--rbd-size", "4G"][..]),
    ] {
        let child = pveprobe()
            .arg("ceph")
            .arg("--conf")
            .arg(c.conf())
            .args(["--yes", "--no-osd-bench"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Until the bench has written: objects in the run's namespace, or its image.
        let start = Instant::now();
        loop {
            let busy = if stage == "rados bench" {
                c.objects(POOL)
                    .iter()
                    .any(|o| o.starts_with("pveprobe-") && o.contains("benchmark_data"))
            } else {
                c.rbd(&["ls", POOL])
                    .lines()
                    .any(|i| i.starts_with("pveprobe-"))
            };
            if busy {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{stage} never started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        if stage == "rbd bench" {
            // Into the write job itself.
            std::thread::sleep(Duration::from_secs(1));
        }
        let out = interrupt(child);
        assert_eq!(out.status.code(), Some(130), "{stage}: {}", stderr(&out));
        assert!(
            leftovers(&c).is_empty(),
            "{stage}: {:?} {}",
            leftovers(&c),
            stderr(&out)
        );
        assert!(!stderr(&out).contains("left behind"), "{}", stderr(&out));
    }
}

#[test]
#[ignore = "needs Ceph: a one-node cluster runs in a private directory (scripts/test runs it)"]
fn without_yes_or_a_terminal_nothing_is_written_and_dry_run_says_the_plan() {
    ceph::needs_ceph();
    let c = Cluster::start();
    let before = c.objects(POOL);
    let out = run(&c, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    let out = run(&c, &["--dry-run", "--seconds", "7"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = stdout(&out);
    for said in [
        "ceph tell osd.N bench",
        "rados bench` 7 s",
        "rbd bench",
        "slows",
        "namespace pveprobe-",
    ] {
        assert!(plan.contains(said), "{said:?} not in {plan}");
    }
    let out = run(&c, &["--yes", "--pool", "nosuchpool"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no pool \"nosuchpool\""),
        "{}",
        stderr(&out)
    );
    let out = run(&c, &["--yes", "--osd", "7"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(c.objects(POOL), before, "a refused run wrote nothing");
    // No cluster at all: said, exit 2.
    let out = pveprobe()
        .args(["ceph", "--conf", "/nonexistent/ceph.conf"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no such file"), "{}", stderr(&out));
}

#[test]
#[ignore = "needs Ceph: a one-node cluster runs in a private directory (scripts/test runs it)"]
fn csv_rows_append_under_one_header_and_text_shows_the_tables() {
    ceph::needs_ceph();
    let c = Cluster::start();
    let csv = c.dir.path().join("ceph.csv");
    for _ in 0..2 {
        let out = pveprobe()
            .arg("ceph")
            .arg("--conf")
            .arg(c.conf())
            .args([
                "--yes",
                "--no-pool-bench",
                "--osd",
                "1",
                "--output-format",
                "csv",
                "--append",
                "--output",
            ])
            .arg(&csv)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("timestamp,fsid,run_id,subject,test"));
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("timestamp")).count(),
        1
    );
    // Two runs, each a row per OSD per bench (osd.1 benched, the other two listed).
    assert_eq!(lines.len(), 1 + 2 * ceph::OSDS * 2, "{text}");
    assert!(
        lines
            .iter()
            .filter(|l| l.contains(",osd.1,osd_bench_4m,4194304,"))
            .count()
            == 2,
        "{text}"
    );
    // The metrics formats: each OSD's figures, as promtool and line protocol read them.
    let osd2_as = |format: &str| {
        run(
            &c,
            &[
                "--yes",
                "--no-pool-bench",
                "--osd",
                "2",
                "--output-format",
                format,
            ],
        )
    };
    let out = osd2_as("prometheus");
    assert!(out.status.success(), "{}", stderr(&out));
    let prom = stdout(&out);
    assert!(
        prom.contains("pveprobe_ceph_osd_bench_4m_bytes_per_second{osd=\"osd.2\""),
        "{prom}"
    );
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus, scripts/install-test-deps)");
    std::io::Write::write_all(promtool.stdin.as_mut().unwrap(), prom.as_bytes()).unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "{}{}",
        stdout(&checked),
        stderr(&checked)
    );
    let out = osd2_as("influx");
    let influx = stdout(&out);
    let lines: Vec<_> = influxdb_line_protocol::parse_lines(&influx)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(lines.len(), ceph::OSDS, "{influx}");
    let out = run(&c, &["--yes", "--no-pool-bench", "--osd", "0"]);
    let t = stdout(&out);
    assert!(
        t.contains("OSD      HOST") && t.contains("osd.0 ") && t.contains("memstore"),
        "{t}"
    );
}

#[test]
#[ignore = "needs root and Ceph: the slow OSD's store is on the tests' FUSE filesystem"]
fn an_osd_whose_disk_flushes_slowly_is_marked_and_named() {
    ceph::needs_ceph();
    // Three BlueStore OSDs on block files: two on /var/tmp, the third on a
    // faultfs whose every flush waits 40 ms, as a disk without power-loss
    // protection makes each flush wait for its media.
    let slow = crate::common::faultfs::FaultFs::mount("slowdisk", 0);
    let fast = crate::common::workdir();
    let c = Cluster::start_with(&[fast.path(), fast.path(), slow.path()]);
    slow.faults().fsync_delay = Duration::from_millis(40);
    // The OSDs on /var/tmp sit on this machine's disk (metadata `devices`);
    // a stand-in smartctl says it is failing (a capture of a real NVMe disk
    // whose SMART said FAILED).
    let smartctl = crate::common::smartctl::Smartctl::new();
    let metadata: serde_json::Value =
        serde_json::from_str(&c.ceph(&["osd", "metadata", "-f", "json"])).unwrap();
    let disks: Vec<String> = metadata
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["devices"].as_str())
        .flat_map(|d| d.split(','))
        .filter(|d| !d.is_empty())
        .map(String::from)
        .collect();
    for d in &disks {
        smartctl.answer(d, "nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json");
    }
    let out = pveprobe()
        .arg("ceph")
        .arg("--conf")
        .arg(c.conf())
        .args(["--yes", "--seconds", "2", "--rbd-size", "16M"])
        .args(["--output-format", "json"])
        .env("PATH", smartctl.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let osds = doc["osds"].as_array().unwrap();
    let mib: Vec<f64> = osds
        .iter()
        .map(|o| o["bench_4m"]["mib_s"].as_f64().unwrap())
        .collect();
    eprintln!("OSD bench MiB/s, osd.0 to osd.2: {mib:.0?}");
    assert!(
        osds.iter().all(|o| o["objectstore"] == "bluestore"),
        "{doc}"
    );
    assert_eq!(
        osds.iter()
            .map(|o| o["slow"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [false, false, true],
        "MiB/s {mib:?}"
    );
    let hints = doc["hints"].as_array().unwrap();
    assert!(
        hints
            .iter()
            .any(|h| h["code"] == "osd-slow" && h["subject"] == "osd.2"),
        "{hints:?}"
    );
    // Slow in the pool too: its operations, by its own counters, far
    // slower than its peers'. Named by both hints, and only it.
    let dragging: Vec<&str> = hints
        .iter()
        .filter(|h| h["code"] == "osd-drags-pool")
        .map(|h| h["subject"].as_str().unwrap())
        .collect();
    assert_eq!(dragging, ["osd.2"], "{hints:?}");
    assert_eq!(
        osds.iter()
            .map(|o| o["drags"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [false, false, true],
        "{}",
        doc["pools"]
    );
    assert!(
        slow.faults().fsyncs > 0,
        "the OSD flushed through the faultfs"
    );
    // The failing disk under the fast OSDs: read through smartctl, named.
    assert!(!disks.is_empty(), "no OSD names a disk in its metadata");
    assert!(
        hints
            .iter()
            .any(|h| h["code"] == "osd-disk-unhealthy" && h["subject"] == "osd.0"),
        "{hints:?}"
    );
    assert!(smartctl.refused().is_empty(), "{}", smartctl.refused());
    drop(c);
}

#[test]
#[ignore = "needs root and Ceph: an OSD in a network namespace of its own behind a slow link"]
fn an_osd_on_a_slow_link_drags_the_pool_and_is_named_though_its_disk_is_fast() {
    use crate::common::netns::{Behaviour, TestCluster};
    ceph::needs_ceph();
    // Two nodes; the monitor, the manager, osd.0 and osd.1 in pve1's
    // namespace, osd.2 in pve2's: three BlueStore OSDs on block files in
    // RAM (tmpfs takes O_DIRECT; memstore's bench measures memcpy, and this
    // VM's disk moves a bench 2x between runs: neither says a disk is
    // fast), but pve2's link is held to 32 Mbit/s each way (htb on its end
    // and on the switch's port towards it).
    let nodes = TestCluster::new(&[("pve1", Behaviour::Good), ("pve2", Behaviour::Good)]);
    let (pve1, pve2) = (&nodes.nodes[0], &nodes.nodes[1]);
    crate::common::netlinks::htb(&pve2.ns, "eth0", 32);
    crate::common::netlinks::htb(&format!("{}-sw", nodes.tag()), "p1", 32);
    let blocks = tempfile::Builder::new()
        .prefix("pveprobe-test.")
        .tempdir_in("/dev/shm")
        .unwrap();
    let c = Cluster::start_laid_out(ceph::Layout {
        block_dirs: &[blocks.path(), blocks.path(), blocks.path()],
        netns: Some(pve1.ns.clone()),
        hosts: vec![(2, "pve2".into())],
        public_network: Some("10.231.7.0/24".into()),
        mon_ip: Some(pve1.addr.to_string()),
        osd_netns: vec![(2, pve2.ns.clone())],
    });
    let out = nodes
        .pveprobe_on(0, "ceph")
        .arg("--conf")
        .arg(c.conf())
        .args([
            "--yes",
            "--this-node-only",
            "--seconds",
            "5",
            "--no-rbd-bench",
            // The three OSD benches at once: each gets the same share of
            // this 2-core machine's CPU, whatever else runs meanwhile.
            "--parallel",
            "3",
        ])
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let hints = doc["hints"].as_array().unwrap();
    let named = |code: &str| -> Vec<&str> {
        hints
            .iter()
            .filter(|h| h["code"] == code)
            .map(|h| h["subject"].as_str().unwrap())
            .collect()
    };
    // What each job looked like to each OSD, first in every failure's message.
    let seen: Vec<String> = doc["pools"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let each: Vec<String> = j["osds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    format!(
                        "{} ops {:.1} ms",
                        o["ops"],
                        o["op_ms"].as_f64().unwrap_or(-1.0)
                    )
                })
                .collect();
            format!("{}: {}", j["label"], each.join(", "))
        })
        .collect();
    let benches: Vec<String> = doc["osds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| format!("osd.{} {}", o["id"], o["bench_4m"]["mib_s"]))
        .collect();
    let facts = format!("jobs (osd.0 to osd.2): {seen:?}; benches MiB/s: {benches:?}");
    eprintln!("{facts}");
    // Its disk is as fast as the others': its own bench says nothing ...
    assert!(!named("osd-slow").contains(&"osd.2"), "{facts}\n{hints:?}");
    // ... but in the pool its writes waited for the link. (Another OSD may
    // be named too, for a job in which this 2-core machine's CPU held its
    // queue: its counters say so, and the hint names that job.)
    assert!(
        named("osd-drags-pool").contains(&"osd.2"),
        "{facts}\n{hints:?}"
    );
    let said = hints
        .iter()
        .find(|h| h["code"] == "osd-drags-pool" && h["subject"] == "osd.2")
        .unwrap()["message"]
        .as_str()
        .unwrap();
    // The hint names its worst job: a write's data comes over the link.
    assert!(said.contains("RADOS WRITE"), "{facts}\n{said}");
    assert!(
        said.contains("its own bench is not slow"),
        "{facts}\n{said}"
    );
    assert!(
        said.contains("its store answered quickly"),
        "{facts}\n{said}"
    );
    let marked: Vec<bool> = doc["osds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["drags"].as_bool().unwrap())
        .collect();
    assert!(marked[2], "{marked:?}");
    assert!(doc["left_behind"].as_array().unwrap().is_empty(), "{doc}");
    assert!(leftovers(&c).is_empty(), "{:?}", leftovers(&c));
}

/// `pveprobe ceph ARGS` on `node` of `nodes` (in its network namespace),
/// reaching the other nodes with the test's ssh key; with `path` as PATH.
fn run_on_node(
    nodes: &crate::common::netns::TestCluster,
    node: usize,
    c: &Cluster,
    path: &str,
    args: &[&str],
) -> Output {
    nodes
        .pveprobe_on(node, "ceph")
        .arg("--conf")
        .arg(c.conf())
        .args(args)
        .env("PATH", path)
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs root and Ceph: network namespaces with an sshd each stand in for the nodes"]
fn osds_on_another_node_get_their_disks_health_and_links_read_over_ssh() {
    use crate::common::netns::{Behaviour, TestCluster};
    ceph::needs_ceph();
    // Two nodes, each a network namespace with its own sshd; the cluster
    // runs in pve1's, and its osd.2 under the host name pve2, so Ceph
    // places it on node pve2. Ceph's public network includes the nodes'.
    let nodes = TestCluster::new(&[("pve1", Behaviour::Good), ("pve2", Behaviour::Good)]);
    let blocks = crate::common::workdir();
    let c = Cluster::start_laid_out(ceph::Layout {
        block_dirs: &[blocks.path(), blocks.path(), blocks.path()],
        netns: Some(nodes.nodes[0].ns.clone()),
        hosts: vec![(2, "pve2".into())],
        public_network: Some("127.0.0.0/8, 10.231.7.0/24".into()),
        ..ceph::Layout::default()
    });
    let metadata: serde_json::Value =
        serde_json::from_str(&c.ceph(&["osd", "metadata", "-f", "json"])).unwrap();
    let osd2 = metadata
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == 2)
        .unwrap();
    assert_eq!(osd2["hostname"], "pve2", "the rig placed osd.2 on pve2");
    let disk = osd2["devices"]
        .as_str()
        .and_then(|d| d.split(',').next())
        .filter(|d| !d.is_empty())
        .expect("a BlueStore OSD on a file names the disk below it")
        .to_string();
    // pve2's smartctl says its disk is failing (a real NVMe disk's capture
    // whose SMART said FAILED); this node's says the same disk is well (a
    // real healthy Samsung SSD's capture): so each answer shows where it
    // was read.
    let remote = crate::common::smartctl::Smartctl::new();
    remote.answer(&disk, "nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json");
    let pve2_bin = nodes.dir.path().join("pve2/bin/smartctl");
    std::fs::write(
        &pve2_bin,
        format!("#!/bin/sh\nexec {}/smartctl \"$@\"\n", remote.bin.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &pve2_bin,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let local = crate::common::smartctl::Smartctl::new();
    local.answer(
        &disk,
        "sat-Samsung_based_SSDs-SAMSUNG_MZ7LH480HAHQ-00005-sda.json",
    );

    let args = [
        "--yes",
        "--no-pool-bench",
        "--no-osd-bench",
        "--output-format",
        "json",
    ];
    let out = run_on_node(&nodes, 0, &c, &local.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let osds = doc["osds"].as_array().unwrap();
    let passed = |id: i64| -> Vec<bool> {
        osds.iter().find(|o| o["id"] == id).unwrap()["health"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["passed"].as_bool().unwrap())
            .collect()
    };
    assert_eq!(passed(0), [true], "read on this node: {doc}");
    let links = |id: i64| &osds.iter().find(|o| o["id"] == id).unwrap()["links"];
    assert_eq!(links(2), links(0), "one disk's links, read on either node");
    assert_eq!(passed(2), [false], "read on pve2: {doc}");
    let hints = doc["hints"].as_array().unwrap();
    let unhealthy: Vec<&str> = hints
        .iter()
        .filter(|h| h["code"] == "osd-disk-unhealthy")
        .map(|h| h["subject"].as_str().unwrap())
        .collect();
    assert_eq!(unhealthy, ["osd.2"], "{hints:?}");
    assert!(
        remote
            .calls()
            .iter()
            .all(|c| c.ends_with(&format!("/dev/{disk}"))),
        "pve2 was asked about its OSD's disk only: {:?}",
        remote.calls()
    );
    assert!(remote.refused().is_empty() && local.refused().is_empty());
    // pve2's link of Ceph's public network, as its own sysfs gives it.
    let speed = crate::common::sh(
        "ip",
        &[
            "netns",
            "exec",
            &nodes.nodes[1].ns,
            "cat",
            "/sys/class/net/eth0/speed",
        ],
    );
    let link = doc["networks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["node"] == "pve2" && l["network"] == "10.231.7.0/24")
        .unwrap_or_else(|| panic!("pve2's link: {doc}"));
    assert_eq!(link["interface"], "eth0");
    assert_eq!(
        link["speed_mbps"].as_i64(),
        speed.trim().parse::<i64>().ok().filter(|s| *s > 0),
        "{link}"
    );
    assert!(doc["notes"].as_array().unwrap().is_empty(), "{doc}");

    // pve2 gone: its OSD is still listed, the note says what is missing.
    let sshd = nodes.sshd_pid("pve2").unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(sshd as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let out = run_on_node(&nodes, 0, &c, &local.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("node pve2 not read") && notes.contains("health"),
        "{notes}"
    );
    assert!(
        doc["osds"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["id"] == 2 && o["health"].as_array().unwrap().is_empty()),
        "{doc}"
    );
    drop(c);
}

/// The cluster's pools, by name.
fn pools(c: &Cluster) -> Vec<String> {
    c.ceph(&["osd", "pool", "ls"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
#[ignore = "needs Ceph: a one-node cluster runs in a private directory (scripts/test runs it)"]
fn a_scratch_pool_is_made_only_where_it_can_be_deleted_and_is_deleted_after_a_sigint_too() {
    ceph::needs_ceph();
    let c = Cluster::start();
    let before = pools(&c);
    let args = [
        "--yes",
        "--scratch-pool",
        "--no-osd-bench",
        "--seconds",
        "1",
        "--rbd-size",
        "16M",
        "--output-format",
        "json",
    ];
    // The rig's monitor refuses to delete pools (mon_allow_pool_delete =
    // false in its ceph.conf): nothing is made.
    let out = run(&c, &args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("mon.a")
            && err.contains("mon_allow_pool_delete")
            && err.contains("nothing was created"),
        "{err}"
    );
    assert_eq!(pools(&c), before);
    let plan = stdout(&run(&c, &["--scratch-pool", "--dry-run"]));
    assert!(plan.is_empty(), "the refusal comes before the plan: {plan}");

    // Allowed for the running monitor: made, benched, deleted.
    c.ceph(&[
        "tell",
        "mon.a",
        "config",
        "set",
        "mon_allow_pool_delete",
        "true",
    ]);
    let plan = stdout(&run(&c, &["--scratch-pool", "--dry-run"]));
    assert!(
        plan.contains("made for the run") && plan.contains("One pool is created and deleted"),
        "{plan}"
    );
    let out = run(&c, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let benched = doc["pools"].as_array().unwrap();
    assert_eq!(benched.len(), 1, "only the scratch pool: {doc}");
    let p = &benched[0];
    assert_eq!(p["scratch"], true);
    assert!(p["name"].as_str().unwrap().starts_with("pveprobe-"), "{p}");
    let jobs: Vec<&str> = p["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["figure"]["iops"].as_f64().unwrap() > 0.0)
        .map(|j| j["key"].as_str().unwrap())
        .collect();
    assert!(
        jobs.contains(&"rados_write_4m") && jobs.contains(&"rbd_write_4k"),
        "{jobs:?}"
    );
    assert_eq!(pools(&c), before, "the scratch pool is gone");
    assert!(
        !doc["hints"].to_string().contains("pveprobe-"),
        "no advice on a pool that is gone: {}",
        doc["hints"]
    );

    // Ctrl-C in the middle of its rados bench: the pool is deleted all the same.
    let child = pveprobe()
        .arg("ceph")
        .arg("--conf")
        .arg(c.conf())
        .args([
            "--yes",
            "--scratch-pool",
            "--no-osd-bench",
            "--seconds",
            "30",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let scratch = loop {
        if let Some(name) = pools(&c).into_iter().find(|p| p.starts_with("pveprobe-"))
            && c.objects(&name)
                .iter()
                .any(|o| o.contains("benchmark_data"))
        {
            break name;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the bench never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = interrupt(child);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(pools(&c), before, "{scratch} deleted: {}", stderr(&out));
    assert!(!stderr(&out).contains("left behind"), "{}", stderr(&out));
}
