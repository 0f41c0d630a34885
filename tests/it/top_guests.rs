//! `top`'s whole guest against real VMs: two QEMU VMs (TCG, the test
//! kernel and the worker's initramfs) busy reading their disks, their
//! QEMU confined to one core by a cpuset the test makes (their vCPUs
//! ready but not running), then one held by a CFS quota as PVE's
//! `cpulimit` holds it (limited, not ready). Each figure is checked
//! against the vCPU threads' own schedstat and the cgroup's own cpu.stat,
//! read by the test over the same window.

use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::cgroup::Cgroup;
use crate::common::{
    self, LoopDevice, LoopOptions, pveprobe, root_or_skip, stderr, stdout, workdir,
};
use crate::load::{Worker, next, worker_kit};

/// One QMP exchange (top's VM test's), its answer.
fn qmp(path: &Path, command: &str) -> serde_json::Value {
    crate::top::qmp(path, command).unwrap()
}

/// A VM of the rig: its VMID, worker (the VM stops when it goes), socket,
/// QEMU's PID and vCPU threads.
struct Vm {
    id: u32,
    _worker: Worker,
    qmp: PathBuf,
    pid: u32,
    vcpus: Vec<u32>,
}

/// Each vCPU thread's run-queue wait so far, ns (its schedstat's second
/// field), read by the test itself.
fn waits(vm: &Vm) -> Vec<u64> {
    vm.vcpus
        .iter()
        .map(|tid| {
            let t =
                std::fs::read_to_string(format!("/proc/{}/task/{tid}/schedstat", vm.pid)).unwrap();
            t.split_whitespace().nth(1).unwrap().parse().unwrap()
        })
        .collect()
}

/// `cpu.stat`'s throttled time so far, µs (v1: ns).
fn throttled_us(cg: &Cgroup) -> u64 {
    cg.read("cpu.stat")
        .lines()
        .find_map(|l| l.strip_prefix("throttled_time "))
        .unwrap()
        .trim()
        .parse::<u64>()
        .unwrap()
        / 1000
}

/// One interval of `top` as JSON, `seconds` long, of the VMs in `qmp_dir`.
fn top_once(qmp_dir: &Path, pve: &Path, seconds: u32) -> serde_json::Value {
    let out = pveprobe()
        .args(["top", "--interval", &seconds.to_string(), "--count", "1"])
        .args(["--output-format", "json", "--qmp-dir"])
        .arg(qmp_dir)
        .arg("--pve-dir")
        .arg(pve)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(stdout(&out).trim()).unwrap()
}

fn guest_use(s: &serde_json::Value, id: u32) -> &serde_json::Value {
    s["guest_use"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id && g["kind"] == "vm")
        .unwrap_or_else(|| panic!("no VM {id} in guest_use: {s}"))
}

fn hinted(s: &serde_json::Value, code: &str) -> Vec<String> {
    s["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["code"] == code)
        .map(|h| h["subject"].as_str().unwrap().to_string())
        .collect()
}

/// Sends `command` and does not wait for the answer (QEMU may be gone
/// before it comes).
fn qmp_send(path: &Path, command: &str) {
    let mut s = UnixStream::connect(path).unwrap();
    s.write_all(b"{\"execute\":\"qmp_capabilities\"}\n")
        .unwrap();
    s.write_all(format!("{command}\n").as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(200));
}

#[test]
#[ignore = "needs root, QEMU, Debian's cloud kernel and v1 cpu, cpuset and memory controllers: two VMs boot (scripts/test runs it)"]
fn ready_is_the_vcpus_own_wait_limited_the_quotas_hold_and_an_oom_kill_is_named() {
    if !root_or_skip() {
        return;
    }
    let dir = workdir();
    let (kernel, initrd) = worker_kit(dir.path());
    // The cgroups first: they go after the VMs, on every way out.
    let cpuset = Cgroup::new("cpuset", "one-core");
    cpuset.set("cpuset.cpus", "0");
    cpuset.set(
        "cpuset.mems",
        std::fs::read_to_string(cpuset.parent.join("cpuset.mems"))
            .unwrap()
            .trim(),
    );
    let memory = Cgroup::new("memory", "oom");
    let quota = Cgroup::new("cpu", "cpulimit");
    // PVE's cpulimit 0.2: 20 ms of CPU in every 100 ms.
    quota.set("cpu.cfs_period_us", "100000");
    quota.set("cpu.cfs_quota_us", "20000");

    // The VMs' sockets and pidfiles as PVE keeps them, in a directory of
    // the test's own (top's other VM test reads PVE's).
    let qmp_dir = dir.path().join("qemu-server");
    std::fs::create_dir_all(&qmp_dir).unwrap();
    let base = 910_000 + (std::process::id() % 40_000) * 2;
    let disks = [
        LoopDevice::new(64, LoopOptions::default()),
        LoopDevice::new(64, LoopOptions::default()),
    ];
    let mut vms = Vec::new();
    for (i, id) in [base, base + 1].into_iter().enumerate() {
        let vm_dir = dir.path().join(format!("vm{id}"));
        std::fs::create_dir_all(&vm_dir).unwrap();
        let qmp_path = qmp_dir.join(format!("{id}.qmp"));
        let pidfile = qmp_dir.join(format!("{id}.pid"));
        // As qemu-server starts a VM: its socket and pidfile where PVE
        // keeps them.
        let worker = Worker::boot_with(
            &vm_dir,
            &kernel,
            &initrd,
            &[disks[i].dev.clone()],
            &[
                "-qmp".into(),
                format!("unix:{},server=on,wait=off", qmp_path.display()),
                "-pidfile".into(),
                pidfile.display().to_string(),
                // As qemu-server gives every VM its balloon.
                "-device".into(),
                "virtio-balloon-pci,id=balloon0".into(),
            ],
        );
        vms.push((id, worker, qmp_path, pidfile));
    }
    let pve = dir.path().join("pve");
    std::fs::create_dir_all(pve.join("qemu-server")).unwrap();
    let mut ports = Vec::new();
    for (id, worker, _, _) in vms.iter_mut() {
        std::fs::write(
            pve.join(format!("qemu-server/{id}.conf")),
            format!("name: busy{id}\ncores: 2\nmemory: 512\n"),
        )
        .unwrap();
        let stream = worker.connect();
        let port = BufReader::new(stream.try_clone().unwrap());
        ports.push((stream, port));
    }
    let mut rig = Vec::new();
    for ((id, worker, qmp_path, pidfile), (mut stream, mut port)) in vms.into_iter().zip(ports) {
        let hello = next(&mut port, &worker, Duration::from_secs(300));
        assert_eq!(hello["type"], "hello", "{hello}");
        // Both read their disk at random, 2 workers x 8 deep, for longer
        // than the test: TCG keeps their vCPUs busy.
        stream
            .write_all(b"pveprobe-worker {\"type\":\"job\",\"block\":4096,\"read_pct\":100,\"random_pct\":100,\"workers\":2,\"iodepth\":8,\"warmup\":0,\"seconds\":90}\n")
            .unwrap();
        let started = next(&mut port, &worker, Duration::from_secs(120));
        assert_eq!(started["type"], "started", "{started}");
        let pid: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let cpus = qmp(&qmp_path, "{\"execute\":\"query-cpus-fast\"}");
        let vcpus: Vec<u32> = cpus["return"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["thread-id"].as_u64().unwrap() as u32)
            .collect();
        assert_eq!(vcpus.len(), 2, "{cpus}");
        rig.push((
            Vm {
                id,
                _worker: worker,
                qmp: qmp_path,
                pid,
                vcpus,
            },
            stream,
            port,
        ));
    }

    // 1. Both QEMUs on one core: four busy vCPUs and their I/O threads
    // share it, and each vCPU is ready but not running much of the time.
    for (vm, _, _) in &rig {
        cpuset.take(vm.pid);
    }
    std::thread::sleep(Duration::from_secs(1));
    let before: Vec<Vec<u64>> = rig.iter().map(|(vm, _, _)| waits(vm)).collect();
    let t0 = Instant::now();
    let s = top_once(&qmp_dir, &pve, 4);
    let window = t0.elapsed().as_secs_f64();
    let after: Vec<Vec<u64>> = rig.iter().map(|(vm, _, _)| waits(vm)).collect();
    let mut ratios = Vec::new();
    for (i, (vm, _, _)) in rig.iter().enumerate() {
        let g = guest_use(&s, vm.id);
        assert_eq!(g["name"], format!("busy{}", vm.id), "{g}");
        assert_eq!(g["cpu"]["vcpus"], 2, "{g}");
        let theirs: Vec<f64> = g["cpu"]["vcpu_ready_pct"]
            .as_array()
            .unwrap_or_else(|| panic!("{g}"))
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(theirs.len(), 2, "{g}");
        // The test's own reading of each vCPU thread's wait, over its
        // window around top's interval.
        let ours: Vec<f64> = before[i]
            .iter()
            .zip(&after[i])
            .map(|(a, b)| (b - a) as f64 / (window * 1e7))
            .collect();
        let worst = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        assert!(worst(&ours) >= 10.0, "VM {} barely waited: {ours:?}", vm.id);
        assert_eq!(g["cpu"]["ready_pct"].as_f64(), Some(worst(&theirs)), "{g}");
        ratios.push(worst(&theirs) / worst(&ours));
        assert!(
            g["cpu"]["used_pct"].as_f64().unwrap() > 5.0,
            "the VM ran: {g}"
        );
        assert!(g["memory"]["host_mib"].as_f64().unwrap() > 10.0, "{g}");
    }
    eprintln!(
        "ready: top's worst vCPU over the test's own schedstat reading, each VM: {ratios:.3?}"
    );
    for r in &ratios {
        assert!((0.9..=1.1).contains(r), "{ratios:?}: {s}");
    }
    let ready = hinted(&s, "guest-cpu-ready");
    for (vm, _, _) in &rig {
        assert!(ready.contains(&format!("VM {}", vm.id)), "{ready:?}: {s}");
    }
    assert!(hinted(&s, "guest-cpu-limited").is_empty(), "{s}");
    let n = &s["node_use"];
    assert_eq!(n["vcpus"].as_u64(), Some(4), "{n}");
    assert!(n["cores"].as_u64().unwrap() >= 1, "{n}");

    for (vm, _, _) in &rig {
        cpuset.give_back(vm.pid);
    }
    let (first, second) = (&rig[0].0, &rig[1].0);

    // 2. The balloon: the second VM's stats polled every 2 s as
    // qemu-server sets it, then its target set to 320 of its 512 MiB. The
    // figure follows what QEMU says the guest gave back.
    let polled = qmp(
        &second.qmp,
        r#"{"execute":"qom-set","arguments":{"path":"/machine/peripheral/balloon0","property":"guest-stats-polling-interval","value":2}}"#,
    );
    assert!(polled.get("return").is_some(), "{polled}");
    let set = qmp(
        &second.qmp,
        r#"{"execute":"balloon","arguments":{"value":335544320}}"#,
    );
    assert!(set.get("return").is_some(), "{set}");
    let asked = Instant::now();
    let actual = || {
        qmp(&second.qmp, r#"{"execute":"query-balloon"}"#)["return"]["actual"]
            .as_u64()
            .unwrap()
    };
    while actual() > 340 << 20 {
        assert!(
            asked.elapsed() < Duration::from_secs(60),
            "the guest did not inflate its balloon: {} MiB",
            actual() >> 20
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    // A poll of the guest's stats after the balloon settled.
    std::thread::sleep(Duration::from_secs(3));
    let s = top_once(&qmp_dir, &pve, 2);
    let g = guest_use(&s, second.id);
    let balloon = g["memory"]["balloon_mib"]
        .as_f64()
        .unwrap_or_else(|| panic!("{g}"));
    let theirs = actual() as f64 / 1048576.0;
    eprintln!("balloon: top {balloon:.1} MiB, QEMU's query-balloon {theirs:.1} MiB");
    assert!((balloon - theirs).abs() <= 2.0, "{g}");
    assert_eq!(g["memory"]["max_mib"].as_f64(), Some(512.0), "{g}");
    let available = g["memory"]["guest_available_mib"]
        .as_f64()
        .unwrap_or_else(|| panic!("the guest's own report: {g}"));
    assert!(available > 0.0 && available < 340.0, "{g}");

    // 3. The first VM done, both back on every core, the second held by
    // its own cpulimit (20% of a core): limited, and never blamed on the
    // node.
    // The first stops: its QEMU paused (`stop`), its vCPUs idle.
    let stopped = qmp(&first.qmp, "{\"execute\":\"stop\"}");
    assert!(stopped.get("return").is_some(), "{stopped}");
    quota.take(second.pid);
    std::thread::sleep(Duration::from_secs(1));
    let (held0, waited0, t0) = (throttled_us(&quota), waits(second), Instant::now());
    let s = top_once(&qmp_dir, &pve, 4);
    let waited: Vec<f64> = waits(second)
        .iter()
        .zip(&waited0)
        .map(|(b, a)| (b - a) as f64 / (t0.elapsed().as_secs_f64() * 1e7))
        .collect();
    // The kernel sums the time held over the CPUs: the VM's two vCPUs on
    // (at most) the node's cores.
    let spread = 2.min(std::thread::available_parallelism().unwrap().get()) as f64;
    let held = (throttled_us(&quota) - held0) as f64 / (t0.elapsed().as_secs_f64() * 1e4 * spread);
    let g = guest_use(&s, second.id);
    let limited = g["cpu"]["limited_pct"]
        .as_f64()
        .unwrap_or_else(|| panic!("{g}"));
    eprintln!(
        "limited: top {limited:.1}%, the cgroup's own cpu.stat {held:.1}% of the interval on each of {spread} CPUs"
    );
    assert!(limited >= 30.0, "{g}");
    assert!(
        (limited / held - 1.0).abs() <= 0.1,
        "top {limited} against cpu.stat {held}: {g}"
    );
    // Ready is the wait beyond the quota's hold, as the test reads both.
    let beyond = waited
        .iter()
        .map(|w| (w - held).max(0.0))
        .fold(0.0, f64::max);
    let ready = g["cpu"]["ready_pct"].as_f64().unwrap();
    eprintln!(
        "ready beyond the quota: top {ready:.1}%, the test's own {beyond:.1}% (its vCPUs waited {waited:.1?}%)"
    );
    assert!((ready - beyond).abs() <= 5.0, "{g}");
    assert!(ready < limited, "{g}");
    assert_eq!(
        hinted(&s, "guest-cpu-limited"),
        [format!("VM {}", second.id)],
        "{s}"
    );
    // Its own limit is never blamed on the node's cores: the node is named
    // only for a wait beyond the hold (other tests' load on this machine).
    if hinted(&s, "guest-cpu-ready").contains(&format!("VM {}", second.id)) {
        assert!(beyond >= 9.0, "{s}");
    }
    quota.give_back(second.pid);

    // 4. While record runs, the first VM's QEMU, in a memory cgroup of
    // 64 MiB, allocates 256 MiB more (a RAM backend, preallocated, as a
    // hot-plugged DIMM's): the kernel kills it. --worst names the VM, the
    // time and the kill.
    let store = dir.path().join("store");
    let mut record = pveprobe()
        .args(["record", "--interval", "1", "--qmp-dir"])
        .arg(&qmp_dir)
        .arg("--pve-dir")
        .arg(&pve)
        .arg("--dir")
        .arg(&store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    struct Stop(std::process::Child);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    std::thread::sleep(Duration::from_millis(2500));
    memory.set("memory.limit_in_bytes", &(64u64 << 20).to_string());
    memory.take(first.pid);
    let before_kill = jiff::Timestamp::now();
    qmp_send(
        &first.qmp,
        r#"{"execute":"object-add","arguments":{"qom-type":"memory-backend-ram","id":"pveprobe-oom","size":268435456,"prealloc":true}}"#,
    );
    let gone = Instant::now();
    while Path::new(&format!("/proc/{}", first.pid)).exists()
        && std::fs::read_to_string(format!("/proc/{}/stat", first.pid))
            .is_ok_and(|s| !s.contains(") Z "))
    {
        assert!(
            gone.elapsed() < Duration::from_secs(30),
            "the VM was not killed: {}",
            memory.read("memory.oom_control")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let killed_by = jiff::Timestamp::now();
    assert!(
        memory.read("memory.oom_control").contains("oom_kill 1"),
        "{}",
        memory.read("memory.oom_control")
    );
    std::thread::sleep(Duration::from_millis(2500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(record.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = record.wait().unwrap();
    let mut why = String::new();
    let _ = std::io::Read::read_to_string(record.stderr.as_mut().unwrap(), &mut why);
    let _record = Stop(record);
    // Stopped by SIGINT: 128 + 2, its store written.
    assert_eq!(status.code(), Some(130), "{why}");
    let worst = crate::top::worst_json(&store);
    let ep = &worst["episodes"][0];
    assert!(
        ep["peak"]["oom_kills"].as_f64().unwrap_or(0.0) >= 1.0,
        "{worst}"
    );
    let cause = &ep["causes"][0];
    assert_eq!(cause["guest"], format!("VM {}", first.id), "{worst}");
    let why = cause["why"].as_str().unwrap();
    assert!(
        why.starts_with("killed by the OOM killer at")
            && why.contains(&format!("PID {}", first.pid)),
        "{why}"
    );
    let hint = ep["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["code"] == "guest-oom-killed")
        .unwrap_or_else(|| panic!("{ep}"));
    assert_eq!(hint["subject"], format!("VM {}", first.id), "{hint}");
    assert!(
        hint["message"]
            .as_str()
            .unwrap()
            .contains("reached its memory limit"),
        "{hint}"
    );
    // The kill's time, as the kernel's log says it, inside the test's own
    // window around it (a second's slack for the clocks' rounding).
    let at: jiff::Timestamp = hint["message"]
        .as_str()
        .and_then(|m| m.split_once("killed it at "))
        .and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no time in {hint}"));
    let slack = jiff::SignedDuration::from_secs(1);
    assert!(
        at >= before_kill - slack && at <= killed_by + slack,
        "killed at {at}, between {before_kill} and {killed_by}"
    );
    let text = pveprobe()
        .args(["top", "--worst", "--since", "1h", "--from"])
        .arg(&store)
        .output()
        .unwrap();
    let text = stdout(&text);
    assert!(
        text.contains(&format!("VM {}", first.id)) && text.contains("killed by the OOM killer"),
        "{text}"
    );
}

/// A network namespace the test makes, removed on every way out.
struct Netns(String);

impl Netns {
    fn new() -> Netns {
        let name = format!("pveprobe-it-tap-{}", std::process::id());
        common::sh("ip", &["netns", "add", &name]);
        Netns(name)
    }

    fn ip(&self, args: &[&str]) -> String {
        let mut all = vec!["-n", &self.0];
        all.extend(args);
        common::sh("ip", &all)
    }

    /// A counter of `iface` in the namespace, from sysfs (the interface's
    /// own statistics, not /proc/net/dev that top reads).
    fn counter(&self, iface: &str, name: &str) -> u64 {
        let path = format!("/sys/class/net/{iface}/statistics/{name}");
        common::sh("ip", &["netns", "exec", &self.0, "cat", &path])
            .trim()
            .parse()
            .unwrap()
    }

    /// Runs `f` on a thread of its own inside the namespace.
    fn spawn<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::thread::JoinHandle<T> {
        let fd = std::fs::File::open(format!("/var/run/netns/{}", self.0)).unwrap();
        std::thread::spawn(move || {
            nix::sched::setns(&fd, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
            f()
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// `tap` opened as QEMU opens a VM's (`/dev/net/tun`, `TUNSETIFF`, a tap
/// without packet information), on the calling thread's namespace.
fn open_tap(tap: &str) -> std::fs::File {
    use std::os::fd::AsRawFd as _;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .unwrap();
    #[repr(C)]
    struct IfReq {
        name: [u8; 16],
        flags: libc::c_short,
        _pad: [u8; 22],
    }
    let mut req = IfReq {
        name: [0; 16],
        flags: (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..tap.len()].copy_from_slice(tap.as_bytes());
    // TUNSETIFF
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), 0x400454ca, &mut req) };
    assert_eq!(
        rc,
        0,
        "TUNSETIFF {tap}: {}",
        std::io::Error::last_os_error()
    );
    f
}

#[test]
#[ignore = "needs root, iproute2 and the tun device: a tap in a namespace (scripts/test runs it)"]
fn a_taps_rates_and_drops_are_its_own_counters_seen_from_the_guest() {
    if !root_or_skip() {
        return;
    }
    common::needs_tools(&["ip"], "iproute2");
    let vmid = 930_000 + std::process::id() % 60_000;
    let tap = format!("tap{vmid}i0");
    let ns = Netns::new();
    ns.ip(&["tuntap", "add", "dev", &tap, "mode", "tap"]);
    ns.ip(&["link", "set", &tap, "up"]);
    ns.ip(&["addr", "add", "192.0.2.1/24", "dev", &tap]);
    ns.ip(&[
        "neigh",
        "add",
        "192.0.2.2",
        "lladdr",
        "02:00:00:00:00:02",
        "dev",
        &tap,
        "nud",
        "permanent",
    ]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The VM's side: it sends 2,000 frames of 100 bytes a second and never
    // reads what comes (a guest that does not keep up).
    let writer = {
        let (stop, tap) = (stop.clone(), tap.clone());
        ns.spawn(move || {
            let mut f = open_tap(&tap);
            let mut frame = vec![0xffu8; 6];
            frame.extend([0x02, 0, 0, 0, 0, 0x02, 0x88, 0xb5]);
            frame.resize(100, 0x5a);
            let start = Instant::now();
            let mut sent = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let due = (start.elapsed().as_secs_f64() * 2000.0) as u64;
                while sent < due {
                    f.write_all(&frame).unwrap();
                    sent += 1;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            f
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    // The host's side: 3,000 datagrams a second to the guest, which its
    // tap queues until full and then drops.
    let sender = {
        let stop = stop.clone();
        ns.spawn(move || {
            let s = std::net::UdpSocket::bind("192.0.2.1:0").unwrap();
            let start = Instant::now();
            let mut sent = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let due = (start.elapsed().as_secs_f64() * 3000.0) as u64;
                while sent < due {
                    let _ = s.send_to(&[0u8; 64], "192.0.2.2:9");
                    sent += 1;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    let dir = workdir();
    let pve = dir.path().join("pve");
    std::fs::create_dir_all(pve.join("qemu-server")).unwrap();
    std::fs::write(
        pve.join(format!("qemu-server/{vmid}.conf")),
        "name: chatty\nnet0: virtio=BC:24:11:00:00:01,bridge=vmbr0\n",
    )
    .unwrap();
    let read = |name: &str| ns.counter(&tap, name);
    let before = ["rx_bytes", "rx_packets", "tx_dropped"].map(read);
    let t0 = Instant::now();
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.0])
        .arg(env!("CARGO_BIN_EXE_pveprobe"))
        .args([
            "top",
            "--interval",
            "3",
            "--count",
            "1",
            "--output-format",
            "json",
        ])
        .arg("--qmp-dir")
        .arg(dir.path())
        .arg("--pve-dir")
        .arg(&pve)
        .output()
        .unwrap();
    let window = t0.elapsed().as_secs_f64();
    let after = ["rx_bytes", "rx_packets", "tx_dropped"].map(read);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(writer.join().unwrap());
    sender.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let g = s["guest_use"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == vmid)
        .unwrap_or_else(|| panic!("no VM {vmid}: {s}"));
    assert_eq!(g["name"], "chatty", "{g}");
    let n = &g["net"][0];
    assert_eq!(
        (n["net"].as_str(), n["interface"].as_str()),
        (Some("net0"), Some(tap.as_str())),
        "{n}"
    );
    // The test's own rates from the interface's own counters: what the
    // tap received the guest sent, what it dropped on the way to the guest
    // the guest did not receive.
    let rate = |i: usize| (after[i] - before[i]) as f64 / window;
    let theirs = [
        n["tx_mib_s"].as_f64().unwrap() * 1048576.0,
        n["tx_packets_s"].as_f64().unwrap(),
        n["rx_drops_s"].as_f64().unwrap(),
    ];
    let ratios: Vec<f64> = (0..3).map(|i| theirs[i] / rate(i)).collect();
    eprintln!(
        "tap: top's sent bytes, packets and drops a second over the interface's own: {ratios:.3?}"
    );
    for r in &ratios {
        assert!((0.9..=1.1).contains(r), "{ratios:?}: {n}");
    }
    assert!(theirs[2] > 100.0, "{n}");
    let drops: Vec<&serde_json::Value> = s["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["code"] == "guest-net-drops")
        .collect();
    assert_eq!(drops.len(), 1, "{s}");
    assert_eq!(drops[0]["subject"], format!("VM {vmid} net0"), "{s}");
}
