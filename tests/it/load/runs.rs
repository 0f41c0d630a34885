//! `pveprobe load` as an admin runs it: two nodes (network namespaces,
//! each with its own sshd, as the cluster tests), PVE's `qm`, `pvesh` and
//! `pvesm` standing in on each node's PATH with real effects
//! (tests/fake/qm makes real disk files and starts a real QEMU with the
//! worker kernel and the initramfs pveprobe built, its serial socket
//! where PVE puts it). The run gives figures for every worker; after it,
//! and after a SIGINT mid-window, nothing of the run is left on either
//! node: no QEMU, config, disk or socket.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{cloud_kernel, probe_and_libraries};
use crate::common::netns::{Behaviour, TestCluster};
use crate::common::{self, pveprobe, root_or_skip, stderr, stdout, wait_within, workdir};

/// The fakes, tests/fake/qm and tests/fake/pvesh; and pvesm's.
fn fake(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fake")
        .join(name)
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A first VMID no other test of this machine uses at the time.
fn vmid_base() -> u32 {
    100_000_000 + rand::random::<u32>() % 800_000_000 / 100 * 100
}

/// Puts `qm`, `pvesh` and `pvesm` on a node's PATH (its `bin`), the fakes
/// with their state: the cluster's /etc/pve at `pve`, the node's own
/// state in `state`, a storage `local-lvm` with 100 GiB free.
fn install_fakes(bin: &Path, pve: &Path, node: &str, state: &Path) {
    std::fs::create_dir_all(state.join("pvesm")).unwrap();
    std::fs::write(
        state.join("pvesm/status"),
        "local-lvm lvmthin active 104857600 0 104857600\n",
    )
    .unwrap();
    let env = format!(
        "PVEPROBE_FAKE_PVE_DIR='{}' PVEPROBE_FAKE_QM_NODE='{node}' PVEPROBE_FAKE_QM_STATE='{}' PVEPROBE_FAKE_PVESM_DIR='{}'",
        pve.display(),
        state.join("qm").display(),
        state.join("pvesm").display()
    );
    for tool in ["qm", "pvesh", "pvesm"] {
        script(
            &bin.join(tool),
            &format!("#!/bin/sh\n{env} exec '{}' \"$@\"\n", fake(tool).display()),
        );
    }
}

/// Two nodes with the fakes, the worker's kernel and probe.
struct LoadRig {
    cluster: TestCluster,
    base: u32,
    kernel: PathBuf,
    probe: PathBuf,
    libs: Vec<PathBuf>,
    _dir: tempfile::TempDir,
}

impl LoadRig {
    fn new() -> LoadRig {
        common::needs_tools(
            &["qemu-system-x86_64", "strip", "ldd", "sshd", "flock"],
            "qemu-system-x86, binutils, openssh-server and util-linux",
        );
        let (kernel, _) = cloud_kernel()
            .expect("Debian's cloud kernel and its modules (linux-image-cloud-amd64; scripts/install-test-deps)");
        let dir = workdir();
        let (probe, libs) = probe_and_libraries(dir.path());
        let cluster = TestCluster::new(&[("pve1", Behaviour::Good), ("pve2", Behaviour::Good)]);
        let pve = cluster.dir.path().join("pve");
        let base = vmid_base();
        std::fs::write(pve.join("nextid-base"), base.to_string()).unwrap();
        for node in &cluster.nodes {
            let home = cluster.dir.path().join(&node.name);
            install_fakes(&home.join("bin"), &pve, &node.name, &home.join("state"));
        }
        LoadRig {
            cluster,
            base,
            kernel,
            probe,
            libs,
            _dir: dir,
        }
    }

    /// `pveprobe load` on pve1, small and short: one worker of two 64 MiB
    /// disks per node, a second of warm-up and `seconds` measured.
    fn command(&self, seconds: &str, more: &[&str]) -> Command {
        let mut cmd = self.cluster.pveprobe_on(0, "load");
        let bin = self.cluster.dir.path().join("pve1/bin");
        cmd.env(
            "PATH",
            format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", bin.display()),
        )
        .args([
            "--storage",
            "local-lvm",
            "--disks-per-vm",
            "2",
            "--disk-size",
            "64M",
        ])
        .args([
            "--profile",
            "hci-70-30",
            "--warmup",
            "1",
            "--seconds",
            seconds,
        ])
        .args(["--memory", "512", "--cores", "2", "--yes"])
        .arg("--kernel")
        .arg(&self.kernel)
        .arg("--worker-probe")
        .arg(&self.probe);
        for lib in &self.libs {
            cmd.arg("--worker-file").arg(lib);
        }
        cmd.args(more);
        cmd
    }

    /// Whatever of the run is still there: configs, disks, sockets, QEMUs.
    fn leftovers(&self) -> Vec<String> {
        let mut left = Vec::new();
        let pve = self.cluster.dir.path().join("pve/nodes");
        for node in &self.cluster.nodes {
            let confs = pve.join(&node.name).join("qemu-server");
            let images = self
                .cluster
                .dir
                .path()
                .join(&node.name)
                .join("state/qm/images");
            for dir in [confs, images] {
                for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    left.push(e.path().display().to_string());
                }
            }
        }
        for id in self.base..self.base + 10 {
            for ext in ["serial0", "qmp", "pid"] {
                let p = PathBuf::from(format!("/var/run/qemu-server/{id}.{ext}"));
                if p.exists() {
                    left.push(p.display().to_string());
                }
            }
        }
        let mark = self.cluster.dir.path().display().to_string();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
                continue;
            };
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.starts_with("qemu-system") && cmdline.contains(&mark) {
                left.push(format!(
                    "QEMU {}: {cmdline}",
                    e.file_name().to_string_lossy()
                ));
            }
        }
        left
    }

    fn console(&self) -> String {
        let mut out = String::new();
        for node in &self.cluster.nodes {
            let state = self.cluster.dir.path().join(&node.name).join("state/qm");
            for e in std::fs::read_dir(&state).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.ends_with(".console") || name.ends_with(".qemu.log") {
                    out += &format!(
                        "--- {}/{name}\n{}\n",
                        node.name,
                        std::fs::read_to_string(e.path()).unwrap_or_default()
                    );
                }
            }
        }
        out
    }
}

#[test]
#[ignore = "needs root, QEMU and Debian's cloud kernel: worker VMs on two nodes (scripts/test runs it)"]
fn a_run_on_two_nodes_gives_every_workers_figures_and_leaves_nothing() {
    if !root_or_skip() {
        return;
    }
    let rig = LoadRig::new();
    let dir = workdir();
    let svg = dir.path().join("load.svg");
    // Each node's figures measured alone, as `pveprobe -x --storage
    // local-lvm` writes them (the probe's pinned result: MIXED 7000 reads
    // and 3000 writes a second), pve2's in a second file.
    let baseline: Vec<PathBuf> = ["pve1", "pve2"]
        .iter()
        .map(|node| {
            let file = dir.path().join(format!("{node}.json"));
            std::fs::write(&file, alone_on(node, "local-lvm").to_string()).unwrap();
            file
        })
        .collect();
    let mut cmd = rig.command("3", &["--output-format", "json"]);
    cmd.arg("--plot")
        .arg(&svg)
        .arg("--baseline")
        .args(&baseline);
    let out = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}\n{}",
        stderr(&out),
        stdout(&out),
        rig.console()
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["kind"], "load");
    // The plan named both workers, and said what the run costs.
    let said = stderr(&out);
    for id in [rig.base, rig.base + 1] {
        assert!(said.contains(&id.to_string()), "{said}");
    }
    assert!(said.contains("slow down meanwhile"), "{said}");
    let vms = doc["vms"].as_array().unwrap();
    assert_eq!(vms.len(), 2, "{doc}");
    for vm in vms {
        assert_eq!(vm["disks"], 2, "{vm}");
        assert!(vm["failed"].is_null(), "{vm}");
        // Every byte of both disks was filled.
        assert_eq!(vm["filled_bytes"].as_u64().unwrap(), 2 * (64 << 20), "{vm}");
    }
    let phase = &doc["phases"][0];
    let workers = phase["workers"].as_array().unwrap();
    let nodes: Vec<&str> = workers
        .iter()
        .map(|w| w["node"].as_str().unwrap())
        .collect();
    assert_eq!(nodes, ["pve1", "pve2"], "{phase}");
    for w in workers {
        assert!(w["error"].is_null(), "{w}");
        let (reads, writes) = (w["reads"].as_u64().unwrap(), w["writes"].as_u64().unwrap());
        assert!(reads > 0 && writes > 0, "{w}");
        assert!(w["started_ns"].as_u64().is_some(), "{w}");
        assert_eq!(w["per_second"].as_array().unwrap().len(), 3, "{w}");
    }
    let f = &phase["figures"];
    assert_eq!(
        (f["answered"].as_u64(), f["asked"].as_u64()),
        (Some(2), Some(2))
    );
    // The cluster's total is its workers' sum; its latency counts every I/O.
    let sum: f64 = f["vms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["iops"].as_f64().unwrap())
        .sum();
    assert!((f["iops"].as_f64().unwrap() - sum).abs() < 1e-6, "{f}");
    let reads: u64 = workers.iter().map(|w| w["reads"].as_u64().unwrap()).sum();
    assert_eq!(f["read_latency"]["count"].as_u64(), Some(reads), "{f}");
    assert_eq!(f["nodes"].as_array().unwrap().len(), 2, "{f}");
    // Both started within the run's skew, which is measured and said.
    let skew = f["start_skew_ms"].as_f64().unwrap();
    assert!((0.0..10_000.0).contains(&skew), "{skew}");
    assert!(f["vm_fairness"].as_f64().is_some(), "{f}");
    assert_eq!(doc["left_behind"].as_array().unwrap().len(), 0, "{doc}");
    assert_eq!(rig.leftovers(), Vec::<String>::new());
    // --baseline: the phase beside MIXED's reads and writes alone, summed.
    let beside = &doc["one_at_a_time"][0];
    assert_eq!(beside["figure"], "mixed_70_30_4k_qd16", "{doc}");
    assert_eq!(beside["sum"].as_f64(), Some(20_000.0), "{beside}");
    assert_eq!(beside["at_once"], f["iops"], "{beside}");
    // --plot: each node's IOPS second by second.
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("IOPS per node, each second"), "{picture}");
    assert!(picture.contains("\npve2\n"), "{picture}");
    assert!(crate::output::plot::png(&picture).len() > 1000);
    compare_sees_a_change(&doc, dir.path());
    // pve2's workers were made on pve2, by its own qm.
    let calls =
        std::fs::read_to_string(rig.cluster.dir.path().join("pve2/state/qm/calls.log")).unwrap();
    assert!(
        calls.contains(&format!("create {}", rig.base + 1)),
        "{calls}"
    );
    assert!(
        calls.contains(&format!("destroy {} --purge", rig.base + 1)),
        "{calls}"
    );
}

/// The probe's pinned result as measured alone on `node`'s `storage`.
fn alone_on(node: &str, storage: &str) -> serde_json::Value {
    let snap = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/snapshots/report.json.snap"),
    )
    .unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_str(snap.splitn(3, "---\n").nth(2).unwrap()).unwrap();
    doc["host"]["hostname"] = node.into();
    doc["pve_storage"] = serde_json::json!({
        "id": storage, "type": "lvmthin", "shared": false, "how": "scratch_volume"
    });
    doc
}

/// `compare` of a run with a copy whose pve2 is half as fast: LOAD IOPS
/// worse, the VM fairness too.
fn compare_sees_a_change(doc: &serde_json::Value, dir: &Path) {
    let mut slower = doc.clone();
    let f = &mut slower["phases"][0]["figures"];
    let iops = f["iops"].as_f64().unwrap();
    f["iops"] = (iops / 2.0).into();
    f["vm_fairness"] = 0.5.into();
    let table = common::compare_with_copy(dir, doc, &slower);
    let row = |key: &str| {
        table["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == key)
            .unwrap_or_else(|| panic!("no {key}: {table}"))
            .clone()
    };
    assert_eq!(row("load_iops[70-30]")["cells"][1]["verdict"], "worse");
    assert_eq!(row("load_iops[70-30]")["cells"][1]["ratio"], 0.5);
    assert_eq!(
        row("load_vm_fairness[70-30]")["cells"][1]["verdict"],
        "worse"
    );
    assert_eq!(row("load_throughput[70-30]")["cells"][1]["verdict"], "same");
}

/// A run under way: its process and what it prints, read as it goes.
struct Running {
    child: std::process::Child,
    stderr: std::thread::JoinHandle<String>,
    stdout: std::thread::JoinHandle<String>,
    /// Each line of stderr as it comes.
    lines: std::sync::mpsc::Receiver<String>,
}

impl Running {
    /// Starts the run and returns once its measured window has begun.
    fn into_window(rig: &LoadRig, seconds: &str, more: &[&str]) -> Running {
        Running::start(&mut rig.command(seconds, more), &|| rig.console())
    }

    /// Starts `cmd` (a run) and returns once its measured window has
    /// begun; `console` says what the workers said, if it never does.
    fn start(cmd: &mut Command, console: &dyn Fn() -> String) -> Running {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let (line_tx, lines) = std::sync::mpsc::channel();
        let stderr = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(err).lines() {
                let line = line.unwrap_or_default();
                if line.contains("s measured") && line.contains("workers,") {
                    let _ = tx.send(());
                }
                let _ = line_tx.send(line.clone());
                all += &line;
                all.push('\n');
            }
            all
        });
        let out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || std::io::read_to_string(out).unwrap_or_default());
        rx.recv_timeout(Duration::from_secs(240))
            .unwrap_or_else(|_| panic!("the window never began:\n{}", console()));
        // Past the warm-up, inside the window.
        std::thread::sleep(Duration::from_secs(2));
        Running {
            child,
            stderr,
            stdout,
            lines,
        }
    }

    /// Waits until stderr says `text`, for at most `limit`.
    fn wait_for(&self, text: &str, limit: Duration) -> bool {
        let until = std::time::Instant::now() + limit;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(text) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// How it ended, its stderr and its stdout.
    fn end(mut self) -> (std::process::ExitStatus, String, String) {
        let status = wait_within(&mut self.child, Duration::from_secs(180));
        (
            status,
            self.stderr.join().unwrap(),
            self.stdout.join().unwrap(),
        )
    }
}

#[test]
#[ignore = "needs root, QEMU and Debian's cloud kernel: worker VMs on two nodes (scripts/test runs it)"]
fn a_sigint_mid_window_destroys_every_worker_on_both_nodes() {
    if !root_or_skip() {
        return;
    }
    let rig = LoadRig::new();
    let run = Running::into_window(&rig, "60", &[]);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let (status, said, _) = run.end();
    assert_eq!(status.code(), Some(130), "{said}\n{}", rig.console());
    assert!(!said.contains("left behind"), "{said}");
    assert_eq!(rig.leftovers(), Vec::<String>::new(), "{said}");
}

#[test]
#[ignore = "needs root, QEMU and Debian's cloud kernel: worker VMs on two nodes (scripts/test runs it)"]
fn a_worker_that_stops_answering_is_given_up_on_and_named_and_the_others_stand() {
    if !root_or_skip() {
        return;
    }
    let rig = LoadRig::new();
    let run = Running::into_window(
        &rig,
        "6",
        &["--answer-timeout", "3", "--output-format", "json"],
    );
    // pve2's worker freezes mid-window: its QEMU is stopped.
    let pid_file = rig
        .cluster
        .dir
        .path()
        .join(format!("pve2/state/qm/{}.pid", rig.base + 1));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .unwrap();
    let (status, said, text) = run.end();
    assert_eq!(status.code(), Some(1), "{said}\n{text}\n{}", rig.console());
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let failed = doc["vms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vmid"] == rig.base + 1)
        .unwrap();
    assert!(
        failed["failed"]
            .as_str()
            .is_some_and(|m| m.contains("stopped answering")),
        "{doc}"
    );
    assert!(said.contains(&format!("VM {}", rig.base + 1)), "{said}");
    // pve1's worker's figures stand; pve2's is counted as asked, not answered.
    let phase = &doc["phases"][0];
    let good = phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["node"] == "pve1")
        .unwrap();
    assert!(
        good["error"].is_null() && good["reads"].as_u64().unwrap() > 0,
        "{phase}"
    );
    let f = &phase["figures"];
    assert_eq!(
        (f["answered"].as_u64(), f["asked"].as_u64()),
        (Some(1), Some(2)),
        "{phase}"
    );
    let frozen = phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["node"] == "pve2")
        .unwrap();
    assert!(
        frozen["error"]
            .as_str()
            .is_some_and(|m| m.contains("stopped answering")),
        "{frozen}"
    );
    // Its QEMU stopped as it was, it is still destroyed.
    assert_eq!(rig.leftovers(), Vec::<String>::new(), "{said}");
}

/// The pid of `node`'s load agent: the `pveprobe load-node` in its
/// network namespace.
fn agent_on(node: &crate::common::netns::TestNode) -> i32 {
    use std::os::unix::fs::MetadataExt as _;
    let ns = std::fs::metadata(format!("/run/netns/{}", node.ns))
        .unwrap()
        .ino();
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid: &i32| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmdline.split(|b| *b == 0).any(|a| a == b"load-node")
                && std::fs::metadata(format!("/proc/{pid}/ns/net")).is_ok_and(|m| m.ino() == ns)
        })
        .collect();
    assert_eq!(pids.len(), 1, "{}'s agents: {pids:?}", node.name);
    pids[0]
}

#[test]
#[ignore = "needs root, QEMU and Debian's cloud kernel: worker VMs on two nodes (scripts/test runs it)"]
fn a_node_whose_agent_stops_answering_is_given_up_on_and_still_cleans_up() {
    if !root_or_skip() {
        return;
    }
    let rig = LoadRig::new();
    let run = Running::into_window(
        &rig,
        "4",
        &["--answer-timeout", "2", "--output-format", "json"],
    );
    // pve2's agent freezes mid-window (its worker runs on); once the run
    // has given up on it, it thaws and must still remove its worker.
    let agent = nix::unistd::Pid::from_raw(agent_on(&rig.cluster.nodes[1]));
    nix::sys::signal::kill(agent, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let given_up = run.wait_for("pve2: its agent did not answer", Duration::from_secs(60));
    nix::sys::signal::kill(agent, nix::sys::signal::Signal::SIGCONT).unwrap();
    let (status, said, text) = run.end();
    assert!(given_up, "{said}");
    assert_eq!(status.code(), Some(1), "{said}\n{text}\n{}", rig.console());
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        doc["problems"][0]
            .as_str()
            .is_some_and(|p| p.starts_with("pve2: its agent did not answer")),
        "{doc}"
    );
    // pve1's figures stand.
    let phase = &doc["phases"][0];
    assert_eq!(phase["figures"]["answered"].as_u64(), Some(1), "{phase}");
    let good = &phase["figures"]["nodes"][0];
    assert!(
        good["name"] == "pve1" && good["iops"].as_f64().unwrap() > 0.0,
        "{phase}"
    );
    // Told to clean up after all, the thawed agent removed its worker.
    assert_eq!(doc["left_behind"].as_array().unwrap().len(), 0, "{doc}");
    assert_eq!(rig.leftovers(), Vec::<String>::new(), "{said}");
}

/// The plan and its cost, and nothing made: `--dry-run` prints it; without
/// `--yes` and no terminal to ask on, the run is refused.
#[test]
fn dry_run_says_the_plan_and_a_run_without_yes_or_a_terminal_is_refused() {
    let dir = workdir();
    let bin = dir.path().join("bin");
    let pve = dir.path().join("pve");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&pve).unwrap();
    std::fs::write(pve.join("nextid-base"), "4200").unwrap();
    install_fakes(&bin, &pve, "pve1", &dir.path().join("state"));
    let path = format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", bin.display());
    let run = |more: &[&str]| {
        pveprobe()
            .env("PATH", &path)
            .args([
                "load",
                "--storage",
                "local-lvm",
                "--nodes",
                "pve1=127.0.0.1,pve2=127.0.0.1",
            ])
            .args([
                "--vms-per-node",
                "2",
                "--disks-per-vm",
                "8",
                "--disk-size",
                "10G",
            ])
            .args(more)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = stdout(&out);
    assert!(
        plan.contains("4 worker VMs on 2 nodes, 8 disks of 10.00 GiB each (320.00 GiB in all)"),
        "{plan}"
    );
    assert!(
        plan.contains("pve1: VMID 4200, 4201") && plan.contains("pve2: VMID 4202, 4203"),
        "{plan}"
    );
    assert!(
        plan.contains("hci-read") || plan.contains("read:"),
        "{plan}"
    );
    assert!(plan.contains("slow down meanwhile"), "{plan}");
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--yes says go"), "{}", stderr(&out));
    // Nothing was made either time: qm was never called.
    assert!(!dir.path().join("state/qm/calls.log").exists());
}

#[test]
#[ignore = "needs root, QEMU and Debian's cloud kernel: worker VMs on two nodes (scripts/test runs it)"]
fn a_latency_target_raises_the_depth_until_crossed_and_keeps_the_best_within() {
    if !root_or_skip() {
        return;
    }
    let rig = LoadRig::new();
    // TCG's disks are slow: 20 ms at the 99th percentile is crossed within
    // the depths tried; each step is a second.
    let out = rig
        .command(
            "1",
            &[
                "--latency-target",
                "p99=20ms",
                "--step-seconds",
                "1",
                "--output-format",
                "json",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", stderr(&out), rig.console());
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let t = &doc["target"];
    let steps = t["steps"].as_array().unwrap();
    assert!(!steps.is_empty(), "{t}");
    // A step per phase, at depths 1, 2, 4...
    let phases = doc["phases"].as_array().unwrap();
    assert_eq!(phases.len(), steps.len(), "{t}");
    for (i, (s, p)) in steps.iter().zip(phases).enumerate() {
        assert_eq!(s["depth"].as_u64(), Some(1 << i), "{t}");
        assert_eq!(p["job"]["iodepth"], s["depth"], "{p}");
        assert_eq!(p["name"], format!("depth {}", 1 << i));
        // Each step's figure is its phase's total, its latency within or not.
        assert!(
            (s["iops"].as_f64().unwrap() - p["figures"]["iops"].as_f64().unwrap()).abs() < 1e-6
        );
        assert_eq!(
            s["within"],
            s["latency_us"].as_f64().unwrap() <= 20_000.0,
            "{s}"
        );
    }
    // Only the last step may be beyond; the best is the highest within.
    assert!(
        steps[..steps.len() - 1].iter().all(|s| s["within"] == true),
        "{t}"
    );
    if let Some(best) = t["best"].as_object() {
        let most = steps
            .iter()
            .filter(|s| s["within"] == true)
            .map(|s| s["iops"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(best["iops"].as_f64(), Some(most), "{t}");
    }
    assert_eq!(rig.leftovers(), Vec::<String>::new());
}

/// Three existing "VMs" for `--vms`: real qemu-ga on the sockets where PVE
/// puts them, each standing in for a guest (the guest is this machine:
/// what it holds afterwards is checked here), two on pve1 and one on
/// pve2 by the cluster's .vmlist.
struct Guests {
    rig_dir: tempfile::TempDir,
    vmids: Vec<u32>,
    _agents: Vec<crate::guest::Qga>,
}

impl Guests {
    fn start(cluster: &TestCluster) -> Guests {
        crate::guest::needs_qga();
        let rig_dir = workdir();
        let base = vmid_base();
        let vmids = vec![base, base + 1, base + 2];
        std::fs::create_dir_all("/var/run/qemu-server").unwrap();
        let mut agents = Vec::new();
        for id in &vmids {
            let state = rig_dir.path().join(format!("qga{id}"));
            std::fs::create_dir_all(&state).unwrap();
            agents.push(crate::guest::Qga::start_at(
                Path::new(&format!("/var/run/qemu-server/{id}.qga")),
                &state,
                &[],
            ));
        }
        std::fs::create_dir_all(rig_dir.path().join("guest-tmp")).unwrap();
        std::fs::write(
            cluster.dir.path().join("pve/.vmlist"),
            format!(
                r#"{{"version": 9, "ids": {{"{}": {{"node": "pve1", "type": "qemu", "version": 1}}, "{}": {{"node": "pve1", "type": "qemu", "version": 1}}, "{}": {{"node": "pve2", "type": "qemu", "version": 1}}}}}}"#,
                vmids[0], vmids[1], vmids[2]
            ),
        )
        .unwrap();
        Guests {
            rig_dir,
            vmids,
            _agents: agents,
        }
    }

    fn guest_dir(&self) -> PathBuf {
        self.rig_dir.path().join("guest-tmp")
    }

    fn command(&self, cluster: &TestCluster, seconds: &str, more: &[&str]) -> Command {
        let mut cmd = cluster.pveprobe_on(0, "load");
        let list: Vec<String> = self.vmids.iter().map(u32::to_string).collect();
        cmd.args(["--vms", &list.join(",")])
            .arg("--pve-config")
            .arg(cluster.dir.path().join("pve"))
            .arg("--guest-dir")
            .arg(self.guest_dir())
            .arg("--worker-probe")
            .arg(crate::guest::guest_probe())
            .args([
                "--disks-per-vm",
                "2",
                "--disk-size",
                "32M",
                "--profile",
                "hci-70-30",
            ])
            .args(["--warmup", "1", "--seconds", seconds, "--yes"])
            .args(more);
        cmd
    }

    /// What the run left in the guests: its directories, its processes.
    fn leftovers(&self) -> Vec<String> {
        let mut left: Vec<String> = std::fs::read_dir(self.guest_dir())
            .unwrap()
            .flatten()
            .map(|e| e.path().display().to_string())
            .collect();
        let mark = self.guest_dir().display().to_string();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
                continue;
            };
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains("load-guest") && cmdline.contains(&mark) {
                left.push(format!(
                    "process {}: {cmdline}",
                    e.file_name().to_string_lossy()
                ));
            }
        }
        left
    }
}

#[test]
#[ignore = "needs root and qemu-ga: three guests at once through their agents (scripts/test runs it)"]
fn existing_vms_run_at_once_through_their_agents_with_their_skew_and_leave_nothing() {
    if !root_or_skip() {
        return;
    }
    common::needs_tools(&["sshd", "strip"], "openssh-server and binutils");
    let cluster = TestCluster::new(&[("pve1", Behaviour::Good), ("pve2", Behaviour::Good)]);
    let guests = Guests::start(&cluster);
    let out = guests
        .command(&cluster, "2", &["--output-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    let said = stderr(&out);
    assert!(said.contains("3 existing VMs on 2 nodes"), "{said}");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let phase = &doc["phases"][0];
    let workers = phase["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 3, "{phase}");
    for w in workers {
        assert!(w["error"].is_null(), "{w}");
        assert!(
            w["reads"].as_u64().unwrap() > 0 && w["writes"].as_u64().unwrap() > 0,
            "{w}"
        );
        assert!(w["started_ns"].as_u64().is_some(), "{w}");
        assert_eq!(w["per_second"].as_array().unwrap().len(), 2, "{w}");
    }
    let nodes: Vec<&str> = workers
        .iter()
        .map(|w| w["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        nodes.iter().filter(|n| **n == "pve1").count(),
        2,
        "{nodes:?}"
    );
    // The starts' spread is measured and said: three agents started at
    // once, within a few seconds of each other.
    let skew = phase["figures"]["start_skew_ms"].as_f64().unwrap();
    assert!((0.0..5000.0).contains(&skew), "{skew}");
    for vm in doc["vms"].as_array().unwrap() {
        assert_eq!(vm["filled_bytes"].as_u64(), Some(2 * (32 << 20)), "{vm}");
    }
    assert_eq!(doc["left_behind"].as_array().unwrap().len(), 0, "{doc}");
    assert_eq!(guests.leftovers(), Vec::<String>::new());
}

#[test]
#[ignore = "needs root and qemu-ga: three guests at once through their agents (scripts/test runs it)"]
fn a_sigint_mid_window_leaves_nothing_in_any_existing_vm() {
    if !root_or_skip() {
        return;
    }
    common::needs_tools(&["sshd", "strip"], "openssh-server and binutils");
    let cluster = TestCluster::new(&[("pve1", Behaviour::Good), ("pve2", Behaviour::Good)]);
    let guests = Guests::start(&cluster);
    let run = Running::start(&mut guests.command(&cluster, "60", &[]), &String::new);
    // The probes run in the guests now.
    assert!(!guests.leftovers().is_empty());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let (status, said, _) = run.end();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(!said.contains("left behind"), "{said}");
    assert_eq!(guests.leftovers(), Vec::<String>::new(), "{said}");
}
