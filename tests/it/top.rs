//! `top` against real guests: two QEMU VMs (TCG) with their QMP sockets
//! where PVE keeps them and a disk each on a loop device, one writing hard
//! inside (`load`'s worker: the tested binary as the VM's /init, running a
//! job on its raw disk), the other idle; a process in a cgroup the test
//! makes, as a container's; and the live view in a real terminal (tmux).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::common::{
    self, LoopDevice, LoopOptions, pveprobe, root_or_skip, stderr, stdout, workdir,
};
use crate::load::{Worker, next, worker_kit};

/// VMIDs no other test uses: this process's, so parallel runs differ.
fn vmids() -> (u32, u32) {
    let base = 900_000 + (std::process::id() % 40_000) * 2;
    (base, base + 1)
}

const QMP_DIR: &str = "/var/run/qemu-server";

/// One QMP exchange as `pvestatd` makes it: connect, greeting,
/// capabilities, `command`, close; waiting up to 3 s for each answer.
pub(crate) fn qmp(path: &Path, command: &str) -> Result<serde_json::Value, String> {
    let s = UnixStream::connect(path).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut w = s;
    let mut line = String::new();
    let mut read = |what: &str| -> Result<serde_json::Value, String> {
        loop {
            line.clear();
            r.read_line(&mut line).map_err(|e| format!("{what}: {e}"))?;
            let v: serde_json::Value =
                serde_json::from_str(line.trim()).map_err(|e| format!("{what}: {e}"))?;
            if v.get("event").is_none() {
                return Ok(v);
            }
        }
    };
    read("greeting")?;
    w.write_all(b"{\"execute\":\"qmp_capabilities\"}\n")
        .unwrap();
    read("capabilities")?;
    w.write_all(format!("{command}\n").as_bytes()).unwrap();
    read(command)
}

/// `top --worst` over the last hour of `store`, as JSON.
pub(crate) fn worst_json(store: &Path) -> serde_json::Value {
    let out = pveprobe()
        .args([
            "top",
            "--worst",
            "--since",
            "1h",
            "--output-format",
            "json",
            "--from",
        ])
        .arg(store)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(stdout(&out).trim()).unwrap()
}

/// `query-status`, as pvestatd asks it every cycle.
fn as_pvestatd(path: &Path) -> Result<(), String> {
    let status = qmp(path, "{\"execute\":\"query-status\"}")?;
    status
        .pointer("/return/status")
        .map(drop)
        .ok_or_else(|| format!("no status: {status}"))
}

/// The VMs' configs, as PVE keeps them.
fn pve_dir(dir: &Path, vms: &[(u32, &str)]) -> PathBuf {
    let pve = dir.join("pve");
    std::fs::create_dir_all(pve.join("qemu-server")).unwrap();
    for (vmid, name) in vms {
        std::fs::write(
            pve.join(format!("qemu-server/{vmid}.conf")),
            format!("name: {name}\nscsihw: virtio-scsi-single\nscsi0: local-lvm:vm-{vmid}-disk-0,iothread=1\n"),
        )
        .unwrap();
    }
    pve
}

#[test]
#[ignore = "needs root, QEMU and Debian's cloud kernel: two VMs boot (scripts/test runs it)"]
fn top_names_the_busy_vm_and_its_figures_match_its_loop_devices_own() {
    if !root_or_skip() {
        return;
    }
    let dir = workdir();
    let (kernel, initrd) = worker_kit(dir.path());

    std::fs::create_dir_all(QMP_DIR).unwrap();
    let (busy_id, idle_id) = vmids();
    let disks = [
        LoopDevice::new(256, LoopOptions::default()),
        LoopDevice::new(256, LoopOptions::default()),
    ];
    let mut vms = Vec::new();
    for (i, vmid) in [busy_id, idle_id].into_iter().enumerate() {
        let vm_dir = dir.path().join(format!("vm{vmid}"));
        std::fs::create_dir_all(&vm_dir).unwrap();
        let qmp = Path::new(QMP_DIR).join(format!("{vmid}.qmp"));
        let _ = std::fs::remove_file(&qmp);
        let worker = Worker::boot_with(
            &vm_dir,
            &kernel,
            &initrd,
            &[disks[i].dev.clone()],
            &[
                "-qmp".into(),
                format!("unix:{},server=on,wait=off", qmp.display()),
            ],
        );
        vms.push((vmid, worker, qmp));
    }
    // Removed on every way out, with the VMs.
    struct Sockets(Vec<PathBuf>);
    impl Drop for Sockets {
        fn drop(&mut self) {
            for s in &self.0 {
                let _ = std::fs::remove_file(s);
            }
        }
    }
    let _sockets = Sockets(vms.iter().map(|v| v.2.clone()).collect());
    let pve = pve_dir(dir.path(), &[(busy_id, "busy"), (idle_id, "idle")]);
    // Both ports connected before either VM says hello: what a VM writes
    // to its serial socket with no client there is lost.
    let mut ports: Vec<(UnixStream, BufReader<UnixStream>)> = vms
        .iter_mut()
        .map(|(_, worker, _)| {
            let stream = worker.connect();
            let port = BufReader::new(stream.try_clone().unwrap());
            (stream, port)
        })
        .collect();
    for ((_, worker, _), (_, port)) in vms.iter().zip(ports.iter_mut()) {
        let hello = next(port, worker, Duration::from_secs(300));
        assert_eq!(hello["type"], "hello", "{hello}");
    }
    // The busy VM writes 4 KiB blocks at random, 2 workers x 8 deep.
    ports[0]
        .0
        .write_all(
            b"pveprobe-worker {\"type\":\"job\",\"block\":4096,\"read_pct\":0,\"random_pct\":100,\"workers\":2,\"iodepth\":8,\"warmup\":0,\"seconds\":30}\n",
        )
        .unwrap();
    let started = next(&mut ports[0].1, &vms[0].1, Duration::from_secs(120));
    assert_eq!(started["type"], "started", "{started}");

    // The admin sets a latency histogram on the busy VM's drive (top only
    // reads one where it is set).
    let set = qmp(
        &vms[0].2,
        r#"{"execute":"block-latency-histogram-set","arguments":{"id":"scsi0","boundaries":[100000,1000000,10000000,100000000,1000000000]}}"#,
    )
    .unwrap();
    assert!(set.get("return").is_some(), "{set}");
    // Meanwhile another client asks the busy VM's socket as pvestatd does.
    let stop = Arc::new(AtomicBool::new(false));
    let (asked, failed) = (
        Arc::new(AtomicU32::new(0)),
        Arc::new(std::sync::Mutex::new(Vec::new())),
    );
    let other = {
        let (stop, asked, failed, qmp) = (
            stop.clone(),
            asked.clone(),
            failed.clone(),
            vms[0].2.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Err(e) = as_pvestatd(&qmp) {
                    failed.lock().unwrap().push(e);
                }
                asked.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(150));
            }
        })
    };
    let record = dir.path().join("top-store");
    let out = pveprobe()
        .args([
            "top",
            "--interval",
            "1",
            "--count",
            "6",
            "--output-format",
            "json",
            "--qmp-dir",
            QMP_DIR,
            "--pve-dir",
        ])
        .arg(&pve)
        .arg("--record")
        .arg(&record)
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    other.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let samples: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(samples.len(), 6, "{}", stdout(&out));
    // The other client got its answer every time top sampled.
    assert!(
        asked.load(Ordering::Relaxed) >= 20,
        "{}",
        asked.load(Ordering::Relaxed)
    );
    assert!(
        failed.lock().unwrap().is_empty(),
        "{:?}",
        failed.lock().unwrap()
    );

    let loop_name = disks[0]
        .dev
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let mut ratios = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let guests = s["guests"].as_array().unwrap();
        let mine = |id: u32| guests.iter().find(|g| g["id"] == id && g["kind"] == "vm");
        // Every interval, the first included, lists both running VMs.
        let busy = mine(busy_id)
            .unwrap_or_else(|| panic!("interval {} lists no VM {busy_id}: {s}", i + 1));
        if busy["busy"] == true {
            // Its socket was held by the other client: said, read next time.
            continue;
        }
        // The busy VM first, named, on its loop device; the idle one quiet.
        assert_eq!(guests[0]["id"], busy_id, "{s}");
        assert_eq!(busy["name"], "busy", "{s}");
        assert_eq!(busy["drive"], "scsi0", "{s}");
        assert_eq!(busy["disk"], loop_name, "{s}");
        let idle = mine(idle_id).unwrap_or_else(|| panic!("{s}"));
        assert!(idle["write_iops"].as_f64().unwrap() < 1.0, "{idle}");
        // The histogram set on the busy drive gives the interval's p99 (a
        // boundary of it); the idle drive has none.
        let p99 = busy["write_p99_ms"]
            .as_f64()
            .unwrap_or_else(|| panic!("{busy}"));
        assert!([0.1, 1.0, 10.0, 100.0, 1000.0].contains(&p99), "{busy}");
        assert!(idle.get("write_p99_ms").is_none(), "{idle}");
        // What the guest wrote, as QEMU counts it, against what the loop
        // device completed in the same interval (/proc/diskstats).
        let disk = s["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == loop_name)
            .unwrap();
        assert_eq!(disk["guests"][0], format!("VM {busy_id} scsi0"), "{disk}");
        let (g, d) = (
            busy["write_mib_s"].as_f64().unwrap(),
            disk["write_mib_s"].as_f64().unwrap(),
        );
        assert!(g > 0.0 && d > 0.0, "{s}");
        ratios.push(g / d);
        // Any hint that names a guest names the busy one.
        for h in s["hints"].as_array().unwrap() {
            assert!(
                !h["subject"]
                    .as_str()
                    .unwrap()
                    .contains(&idle_id.to_string()),
                "{h}"
            );
        }
    }
    eprintln!("the busy VM's write MiB/s over its loop device's, each interval: {ratios:.3?}");
    assert!(ratios.len() >= 4, "{ratios:?}");

    // What a script or cron meets first, while the busy VM still writes:
    // `pveprobe top` with no flags and no terminal (one interval of text),
    // and one interval as JSON and as Prometheus' text. Each lists both
    // VMs from its first interval on.
    let first = |args: &[&str]| {
        let out = pveprobe().arg("top").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let text = first(&[]);
    for id in [busy_id, idle_id] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("VM {id} scsi0"))),
            "no row of VM {id}:\n{text}"
        );
    }
    assert!(!text.contains("(no running guest)"), "{text}");
    let json = first(&["--count", "1", "--output-format", "json"]);
    assert_eq!(json.lines().count(), 1, "{json}");
    let one: serde_json::Value = serde_json::from_str(&json).unwrap();
    for id in [busy_id, idle_id] {
        let g = one["guests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["id"] == id)
            .unwrap_or_else(|| panic!("no VM {id}: {one}"));
        assert!(g["write_iops"].as_f64().is_some(), "{g}");
    }
    let busy_writes = one["guests"][0]["write_iops"].as_f64().unwrap();
    assert_eq!(one["guests"][0]["id"], busy_id, "{one}");
    assert!(busy_writes > 10.0, "the busy VM writes: {one}");
    let prom = first(&["--count", "1", "--output-format", "prometheus"]);
    for id in [busy_id, idle_id] {
        assert!(
            prom.lines()
                .any(|l| !l.starts_with('#') && l.contains(&format!("guest=\"vm/{id}\""))),
            "no gauge of VM {id}:\n{prom}"
        );
    }
    for r in &ratios {
        assert!((0.9..=1.1).contains(r), "{ratios:?}");
    }
    // Its own cost is stated.
    assert!(samples[1]["own"]["cpu_pct"].as_f64().is_some());
    // The store --record made holds every interval written, the first
    // included, and its window draws.
    let first = samples[0]["timestamp"].as_str().unwrap();
    let last = samples[5]["timestamp"].as_str().unwrap();
    let window = |extra: &[&std::ffi::OsStr]| {
        pveprobe()
            .args(["top", "--from"])
            .arg(&record)
            .args(["--between", first, last])
            .args(extra)
            .output()
            .unwrap()
    };
    let replayed = window(&["--output-format".as_ref(), "json".as_ref()]);
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    let kept: Vec<serde_json::Value> = stdout(&replayed)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let stamps = |v: &[serde_json::Value]| -> Vec<String> {
        v.iter().map(|s| s["timestamp"].to_string()).collect()
    };
    assert_eq!(stamps(&kept), stamps(&samples), "{}", stdout(&replayed));
    for (k, s) in kept.iter().zip(&samples) {
        assert_eq!(
            k["guests"].as_array().unwrap().len(),
            s["guests"].as_array().unwrap().len()
        );
    }
    let svg = dir.path().join("top.svg");
    let drawn = window(&["--plot".as_ref(), svg.as_os_str()]);
    assert!(drawn.status.success(), "{}", stderr(&drawn));
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains(&format!("VM {busy_id} scsi0")),
        "{picture}"
    );
    assert!(!crate::output::plot::png(&picture).is_empty());

    // The recorder beside the same VMs, and a backup while it records: the
    // morning after, --worst ranks that episode first and names the VM and
    // the task, and --at inside it shows it.
    // The first job's end (its seconds reported on the way).
    loop {
        let m = next(&mut ports[0].1, &vms[0].1, Duration::from_secs(120));
        match m["type"].as_str() {
            Some("second") => continue,
            _ => {
                assert_eq!(m["type"], "result", "{m}");
                break;
            }
        }
    }
    ports[0]
        .0
        .write_all(
            b"pveprobe-worker {\"type\":\"job\",\"block\":4096,\"read_pct\":0,\"random_pct\":100,\"workers\":1,\"iodepth\":1,\"warmup\":0,\"seconds\":45}\n",
        )
        .unwrap();
    let started = next(&mut ports[0].1, &vms[0].1, Duration::from_secs(120));
    assert_eq!(started["type"], "started", "{started}");
    let store = dir.path().join("record");
    let tasks = dir.path().join("tasks-active");
    std::fs::write(&tasks, "").unwrap();
    struct Stopped(Vec<std::process::Child>);
    impl Drop for Stopped {
        fn drop(&mut self) {
            for c in &mut self.0 {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
    let mut running = Stopped(vec![
        pveprobe()
            .args(["record", "--interval", "1", "--qmp-dir", QMP_DIR, "--dir"])
            .arg(&store)
            .arg("--pve-dir")
            .arg(&pve)
            .arg("--tasks-file")
            .arg(&tasks)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(8));
    // The backup: a real process that writes to the busy VM's disk, synced
    // (as vzdump's reads and the target's writes keep a disk busy), listed
    // as PVE lists a running vzdump of that VM.
    let backup_from = jiff::Timestamp::now();
    let backup = Command::new("dd")
        .args([
            "if=/dev/zero",
            "bs=4k",
            "count=1000000",
            "oflag=direct,dsync",
            "status=none",
        ])
        .arg(format!("of={}", disks[0].dev.display()))
        .spawn()
        .unwrap();
    let pid = backup.id();
    running.0.push(backup);
    let ticks = crate::top_jobs::start_ticks(pid);
    let upid = format!(
        "UPID:pve1:{pid:08X}:{ticks:08X}:{:08X}:vzdump:{busy_id}:root@pam:",
        backup_from.as_second()
    );
    std::fs::write(&tasks, format!("{upid} 1\n")).unwrap();
    std::thread::sleep(Duration::from_secs(15));
    let dd = running.0.pop().unwrap();
    drop(Stopped(vec![dd]));
    std::fs::write(&tasks, "").unwrap();
    let backup_to = jiff::Timestamp::now();
    std::thread::sleep(Duration::from_secs(6));
    let report = worst_json(&store);
    let first = &report["episodes"][0];
    assert!(first.is_object(), "no episode: {report:#}");
    let at = |k: &str| {
        first[k]
            .as_str()
            .unwrap()
            .parse::<jiff::Timestamp>()
            .unwrap()
    };
    assert!(
        at("start") <= backup_to && at("end") >= backup_from,
        "the first episode is not the backup's ({backup_from} to {backup_to}): {report:#}"
    );
    assert!(
        first["guests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["guest"] == format!("VM {busy_id} scsi0") && g["name"] == "busy"),
        "{report:#}"
    );
    assert!(
        first["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["kind"] == "backup" && j["upid"] == upid.as_str()),
        "{report:#}"
    );
    let text = pveprobe()
        .args(["top", "--worst", "--since", "1h", "--from"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(stdout(&text).contains(&upid), "{}", stdout(&text));
    // A moment inside the backup (the episode's peak may fall after it:
    // the VM's own job keeps its disk busy past the backup's end).
    assert!(first["peak"]["at"].as_str().is_some(), "{report:#}");
    let mid = backup_from
        .checked_add(jiff::SignedDuration::from_millis(
            backup_to.duration_since(backup_from).as_millis() as i64 / 2,
        ))
        .unwrap()
        .to_string();
    let moment = pveprobe()
        .args(["top", "--at", &mid, "--output-format", "json", "--from"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(moment.status.success(), "{}", stderr(&moment));
    let s: serde_json::Value = serde_json::from_str(&stdout(&moment)).unwrap();
    assert!(
        s["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["upid"] == upid.as_str()),
        "{s}"
    );
    assert!(
        s["guests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["id"] == busy_id),
        "{s}"
    );
    eprintln!("the backup's episode, ranked first: {first}");
}

#[test]
#[ignore = "needs root: a cgroup and a loop device (scripts/test runs it)"]
fn a_containers_io_is_read_from_its_cgroup() {
    if !root_or_skip() {
        return;
    }
    let blkio = Path::new("/sys/fs/cgroup/blkio");
    let unified = !blkio.join("cgroup.procs").exists();
    let root = if unified {
        Path::new("/sys/fs/cgroup")
    } else {
        blkio
    };
    let lxc = root.join("lxc");
    let made_lxc = !lxc.exists();
    std::fs::create_dir_all(&lxc).unwrap();
    let ctid = 900_000 + std::process::id() % 90_000;
    let cg = lxc.join(ctid.to_string());
    std::fs::create_dir(&cg).unwrap();
    let disk = LoopDevice::new(256, LoopOptions::default());
    // Its writes to the disk held to 16 MiB/s, as PVE's `mbps_wr` would:
    // on cgroup v1 Linux 6.x counts a cgroup's I/O (blkio.throttle.*) only
    // on a device with a limit in it (cgroup v2's io.stat always).
    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&disk.dev).unwrap());
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let limit = 16u64 << 20;
    let (file, rule) = if unified {
        ("io.max", format!("{major}:{minor} wbps={limit}"))
    } else {
        (
            "blkio.throttle.write_bps_device",
            format!("{major}:{minor} {limit}"),
        )
    };
    std::fs::write(cg.join(file), rule).unwrap();
    // dd in the container's cgroup, 64 MiB in 64 KiB writes: 4 s at the limit.
    let mut dd = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec dd if=/dev/zero of={} bs=64k count=1024 oflag=direct status=none",
            cg.display(),
            disk.path()
        ))
        .spawn()
        .unwrap();
    let out = pveprobe()
        .args([
            "top",
            "--interval",
            "1",
            "--count",
            "3",
            "--output-format",
            "json",
            "--qmp-dir",
        ])
        .arg(workdir().path())
        .output()
        .unwrap();
    let _ = dd.wait();
    let _ = std::fs::remove_dir(&cg);
    if made_lxc {
        let _ = std::fs::remove_dir(&lxc);
    }
    assert!(out.status.success(), "{}", stderr(&out));
    let loop_name = disk.dev.file_name().unwrap().to_string_lossy().to_string();
    // The middle interval lies inside dd's run: the container writes at its limit.
    let middle: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().nth(1).unwrap()).unwrap();
    let ct = middle["guests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == "ct" && g["id"] == ctid)
        .unwrap_or_else(|| panic!("{middle}"));
    let rate = ct["write_mib_s"].as_f64().unwrap();
    assert!(
        (12.8..=19.2).contains(&rate),
        "{rate} MiB/s against a limit of 16: {ct}"
    );
    assert_eq!(ct["disk"], loop_name, "{ct}");
    // Its writes are 64 KiB each, as dd wrote them.
    let per = ct["write_mib_s"].as_f64().unwrap() * 1024.0 / ct["write_iops"].as_f64().unwrap();
    assert!((60.0..=68.0).contains(&per), "{per} KiB a write: {ct}");
}

/// `top`'s live view in a tmux server of the test's own (160 x 40), its
/// exit status then `after` (a shell line) run in the same terminal.
struct LiveView {
    session: String,
    done: PathBuf,
}

impl LiveView {
    fn start(dir: &Path, after: &str) -> LiveView {
        common::needs_tools(&["tmux"], "tmux");
        static VIEWS: AtomicU32 = AtomicU32::new(0);
        let n = VIEWS.fetch_add(1, Ordering::Relaxed);
        let session = format!("pveprobe-top-{}-{n}", std::process::id());
        let done = dir.join("exit");
        let line = format!(
            "{} top --interval 0.5 --qmp-dir {} --pve-dir {}; echo $? > {}; {after}",
            env!("CARGO_BIN_EXE_pveprobe"),
            dir.display(),
            dir.display(),
            done.display()
        );
        let view = LiveView { session, done };
        let st = view.tmux(&[
            "new-session",
            "-d",
            "-s",
            &view.session,
            "-x",
            "160",
            "-y",
            "40",
            &line,
        ]);
        assert!(st.status.success(), "{}", stderr(&st));
        let start = Instant::now();
        while !view.screen().contains("DISK") {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no view: {}",
                view.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        view
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.session])
            .args(args)
            .output()
            .unwrap()
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(
            &self
                .tmux(&["capture-pane", "-p", "-t", &self.session])
                .stdout,
        )
        .into_owned()
    }

    /// The exit status `top` ended with, once it has.
    fn exit_status(&self, why: &str) -> String {
        let start = Instant::now();
        while !self.done.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{why}: {}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Written by the shell's echo: wait for its newline.
        std::thread::sleep(Duration::from_millis(200));
        let mut code = String::new();
        std::fs::File::open(&self.done)
            .unwrap()
            .read_to_string(&mut code)
            .unwrap();
        code.trim().to_string()
    }

    /// The PID of the program the pane's shell runs (`top`).
    fn top_pid(&self) -> u32 {
        let out = self.tmux(&["display-message", "-p", "-t", &self.session, "#{pane_pid}"]);
        let shell = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
        children
            .split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("the shell {shell} runs nothing"))
            .parse()
            .unwrap()
    }
}

impl LiveView {
    /// `pveprobe ARGS` in a tmux pane of `width` x `height`, once `ready`
    /// is on its screen.
    fn run(dir: &Path, args: &str, width: u16, height: u16, ready: &str) -> LiveView {
        common::needs_tools(&["tmux"], "tmux");
        static RUNS: AtomicU32 = AtomicU32::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let session = format!("pveprobe-tui-{}-{n}", std::process::id());
        let done = dir.join(format!("exit-{n}"));
        let line = format!(
            "{} {args}; echo $? > {}; sleep 30",
            env!("CARGO_BIN_EXE_pveprobe"),
            done.display()
        );
        let view = LiveView { session, done };
        let (w, h) = (width.to_string(), height.to_string());
        let st = view.tmux(&[
            "new-session",
            "-d",
            "-s",
            &view.session,
            "-x",
            &w,
            "-y",
            &h,
            &line,
        ]);
        assert!(st.status.success(), "{}", stderr(&st));
        view.until(ready);
        view
    }

    /// Waits until `text` is on the screen.
    fn until(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no {text:?} on the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend(keys);
        self.tmux(&args);
    }
}

/// A store of five intervals ten seconds apart, each with 40 VMs (VM 100
/// the slowest, VM 139 the busiest), written by the recorder's own writer.
fn forty_vm_store(dir: &Path) -> (PathBuf, Vec<jiff::Timestamp>) {
    use pveprobe::nodeio::sample::{DiskIo, GuestIo, NodePressure, TopSample};
    let store = dir.join("record");
    let mut w = pveprobe::store::Writer::open(&store, pveprobe::store::Limits::default()).unwrap();
    let t0 = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(10);
    let mut times = Vec::new();
    for k in 0..5i64 {
        let t = t0 + jiff::SignedDuration::from_secs(10 * k);
        times.push(t);
        let guests = (0..40u32)
            .map(|i| GuestIo {
                kind: "vm".into(),
                id: 100 + i,
                name: Some(format!("guest-{i:02}")),
                drive: Some("scsi0".into()),
                file: Some(format!("/dev/zvol/rpool/data/vm-{}-disk-0", 100 + i)),
                disk: Some("zd0".into()),
                read_iops: f64::from(i) * 10.0 + k as f64,
                write_iops: f64::from(i) * 20.0,
                read_mib_s: 1.0,
                write_mib_s: 2.0,
                read_ms: Some(50.0 - f64::from(i)),
                write_ms: Some(1.0),
                seconds: 10.0,
                read_p99_ms: Some(100.0),
                ..GuestIo::default()
            })
            .collect();
        let s = TopSample {
            schema_version: 1,
            kind: "top".into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            node: "pve1".into(),
            timestamp: t.to_string(),
            seconds: 10.0,
            pressure: NodePressure {
                iowait_pct: Some(12.0),
                ..NodePressure::default()
            },
            guests,
            disks: vec![DiskIo {
                name: "zd0".into(),
                util_pct: 97.0,
                ..DiskIo::default()
            }],
            ..TopSample::default()
        };
        let (sum, payload) = pveprobe::nodeio::recorded::encode(&s);
        w.append(t.as_microsecond(), sum, &payload).unwrap();
    }
    (store, times)
}

fn local(t: jiff::Timestamp) -> String {
    t.to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// The first guest row's label on a screen.
fn first_guest(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with("VM "))
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

#[test]
#[ignore = "needs tmux: the replayed view in a real terminal (scripts/test runs it)"]
fn the_replayed_view_fits_80_and_200_columns_scrolls_sorts_and_steps() {
    let dir = workdir();
    let (store, times) = forty_vm_store(dir.path());
    let args = format!("top --from {} --at {}", store.display(), times[2]);
    let view = LiveView::run(dir.path(), &args, 80, 24, "recorded interval 3 of 5");
    let screen = view.screen();
    // The header's time is local, to the second.
    assert!(
        screen.contains(&format!("at {}", local(times[2]))),
        "{screen}"
    );
    // 80 columns: the columns that matter most, and no more.
    let heading = |screen: &str, first: &str| -> String {
        screen
            .lines()
            .find(|l| l.starts_with(first))
            .unwrap_or_else(|| panic!("no {first} heading:\n{screen}"))
            .to_string()
    };
    let guests = heading(&screen, "GUEST ");
    let cols: Vec<&str> = guests
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cols,
        ["GUEST", "R IOPS", "W IOPS", "R ms", "W ms", "NAME"],
        "{screen}"
    );
    assert!(heading(&screen, "DISK ").contains("UTIL"), "{screen}");
    assert!(screen.lines().all(|l| l.chars().count() <= 80));
    // 40 guests do not fit: scrolled, the busiest first.
    assert!(screen.contains("GUESTS 1-"), "{screen}");
    assert_eq!(first_guest(&screen), "VM 139", "{screen}");
    view.keys(&["Down"]);
    let screen = view.until("GUESTS 2-");
    assert_eq!(first_guest(&screen), "VM 138", "{screen}");
    // s: by latency, the slowest first.
    view.keys(&["s"]);
    let screen = view.until("by latency");
    assert_eq!(first_guest(&screen), "VM 100", "{screen}");
    // Right: the next interval.
    view.keys(&["Right"]);
    let screen = view.until("recorded interval 4 of 5");
    assert!(screen.contains(&local(times[3])), "{screen}");
    view.keys(&["q"]);
    assert_eq!(view.exit_status("q did not quit the replay"), "0");

    // 200 columns: every column.
    let wide = LiveView::run(dir.path(), &args, 200, 50, "recorded interval 3 of 5");
    let screen = wide.screen();
    for col in [
        "R MiB/s",
        "W MiB/s",
        "R p99",
        "FILE",
        "ON",
        "STORAGES AND GUESTS",
    ] {
        assert!(screen.contains(col), "no {col} at 200 columns:\n{screen}");
    }
    assert!(
        screen.contains("/dev/zvol/rpool/data/vm-139-disk-0"),
        "{screen}"
    );
    // Marks in color: a latency from 20 ms and a disk 95% utilised in red.
    let colored = String::from_utf8_lossy(
        &wide
            .tmux(&["capture-pane", "-e", "-p", "-t", &wide.session])
            .stdout,
    )
    .into_owned();
    let red = |l: &str| l.contains("\x1b[31m") || l.contains("\x1b[38;5;1m");
    assert!(
        colored
            .lines()
            .any(|l| l.contains("zd0") && l.contains("97%") && red(l)),
        "{colored:?}"
    );
    assert!(
        colored.lines().any(|l| l.contains("VM 100 ") && red(l)),
        "{colored:?}"
    );
    wide.keys(&["q"]);
    assert_eq!(wide.exit_status("q did not quit"), "0");

    // Its stdin no terminal (a script's `< /dev/null` on a terminal's
    // stdout): that interval written, as without a terminal, not refused.
    let piped = LiveView::run(dir.path(), &format!("{args} < /dev/null"), 200, 50, "zd0");
    assert_eq!(piped.exit_status("top --at < /dev/null did not end"), "0");
    let screen = piped.screen();
    assert!(
        !screen.contains("recorded interval") && !screen.contains("terminal only"),
        "{screen}"
    );
    drop(piped);

    // Its terminal gone (the window closed, tmux's server killed): it ends,
    // and spins nowhere.
    let gone = LiveView::run(dir.path(), &args, 80, 24, "recorded interval 3 of 5");
    let pid = gone.top_pid();
    gone.tmux(&["kill-server"]);
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "top --at still runs 5 s after its terminal hung up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

#[test]
#[ignore = "needs tmux: the live view in a real terminal (scripts/test runs it)"]
fn the_live_view_redraws_in_a_terminal_and_q_quits() {
    let dir = workdir();
    let view = LiveView::start(dir.path(), "true");
    let first = view.screen();
    assert!(
        first.contains("pveprobe top:") && first.contains("IO pressure"),
        "{first}"
    );
    // No recorder writes the store this run would read: the view says how
    // to start one.
    assert!(
        first.contains("systemctl enable --now pveprobe-record"),
        "{first}"
    );
    // Redrawn in place: one view on the screen, however many intervals.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        view.screen().matches("pveprobe top:").count(),
        1,
        "{}",
        view.screen()
    );
    view.tmux(&["send-keys", "-t", &view.session, "q"]);
    assert_eq!(view.exit_status("q did not quit"), "0");
}

#[test]
#[ignore = "needs tmux: the live view in a real terminal (scripts/test runs it)"]
fn after_a_sigterm_the_terminal_echoes_and_edits_lines_again() {
    let dir = workdir();
    let settings = dir.path().join("stty");
    let view = LiveView::start(
        dir.path(),
        &format!("stty -a > {}; sleep 30", settings.display()),
    );
    // The view holds the terminal: no echo, no line editing.
    let pid = view.top_pid();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert_eq!(view.exit_status("SIGTERM did not end top"), "143");
    let start = Instant::now();
    while std::fs::metadata(&settings).map_or(true, |m| m.len() == 0) {
        assert!(start.elapsed() < Duration::from_secs(10), "no stty output");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    let stty = std::fs::read_to_string(&settings).unwrap();
    let flags: Vec<&str> = stty.split_whitespace().collect();
    for flag in ["icanon", "echo"] {
        assert!(flags.contains(&flag), "{flag} not given back: {stty}");
    }
}
