//! `pveprobe guest VMID` against Debian's real QEMU guest agent, started on
//! a UNIX socket in a private directory (`qemu-ga -m unix-listen`), which
//! stands in for the guest: the guest is this machine, the probe copied
//! into it is the tested binary, and what the "guest" holds afterwards is
//! checked on this machine's filesystem and process table.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, pveprobe, stderr, stdout, wait_within, workdir};

/// The probe copied into the "guest": the tested binary without its
/// symbols (13 MiB instead of 46: qemu-ga parses each chunk's base64 at
/// about 10 MB/s), made once in cargo's scratch directory for tests.
pub fn guest_probe() -> &'static Path {
    static PROBE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PROBE.get_or_init(|| {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("guest-probe.{}", std::process::id()));
        let st = Command::new("strip")
            .arg("-o")
            .arg(&path)
            .arg(env!("CARGO_BIN_EXE_pveprobe"))
            .status()
            .expect("strip (binutils) runs");
        assert!(st.success());
        path
    })
}

/// A running qemu-ga and its private directory; stopped when dropped.
pub struct Qga {
    child: Child,
    socket: PathBuf,
}

/// Fails the test unless Debian's qemu-ga is installed
/// (scripts/install-test-deps); the test is `#[ignore]`d for it.
pub fn needs_qga() {
    common::needs_tools(&["qemu-ga"], "qemu-guest-agent");
}

impl Qga {
    fn start(dir: &Path, extra: &[&str]) -> Qga {
        Qga::start_at(&dir.join("qga.sock"), dir, extra)
    }

    /// qemu-ga listening on `socket`, its pid file, state and log in `dir`.
    pub fn start_at(socket: &Path, dir: &Path, extra: &[&str]) -> Qga {
        let socket = socket.to_path_buf();
        let child = Command::new("qemu-ga")
            .args(["-m", "unix-listen", "-p"])
            .arg(&socket)
            .arg("-f")
            .arg(dir.join("qga.pid"))
            .arg("-t")
            .arg(dir)
            .arg("-l")
            .arg(dir.join("qga.log"))
            .args(extra)
            .stdin(Stdio::null())
            .spawn()
            .expect("qemu-ga starts");
        let start = Instant::now();
        while !socket.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "qemu-ga made no socket"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Qga { child, socket }
    }

    fn signal(&self, sig: &str) {
        let st = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    }
}

impl Drop for Qga {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Killed, it leaves its socket: PVE's directory stays as it was.
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// A PVE config directory with VM 100 and a directory storage `local`.
struct Rig {
    dir: tempfile::TempDir,
}

impl Rig {
    fn new(conf: &str) -> Rig {
        let dir = workdir();
        let pve = dir.path().join("pve");
        std::fs::create_dir_all(pve.join("qemu-server")).unwrap();
        std::fs::create_dir_all(dir.path().join("store")).unwrap();
        std::fs::create_dir_all(dir.path().join("guestfs")).unwrap();
        std::fs::write(pve.join("qemu-server/100.conf"), conf).unwrap();
        std::fs::write(
            pve.join("storage.cfg"),
            format!(
                "dir: local\n\tpath {}\n\tcontent images\n",
                dir.path().join("store").display()
            ),
        )
        .unwrap();
        Rig { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn guest(&self, qga: &Qga, extra: &[&str]) -> Command {
        let mut cmd = pveprobe();
        cmd.arg("guest")
            .arg("100")
            .arg("--pve-config")
            .arg(self.path("pve"))
            .arg("--agent-socket")
            .arg(&qga.socket)
            .arg("--guest-probe")
            .arg(guest_probe())
            .arg("--guest-path")
            .arg(self.path("guestfs"))
            .args(["--write-size", "32M"])
            .args(extra);
        if !extra.contains(&"--seconds") {
            cmd.args(["--seconds", "0.3"]);
        }
        cmd
    }

    /// What is in the guest's directory and the host's storage.
    fn leftovers(&self) -> Vec<String> {
        ["guestfs", "store"]
            .iter()
            .flat_map(|d| std::fs::read_dir(self.path(d)).unwrap())
            .map(|e| e.unwrap().path().display().to_string())
            .collect()
    }
}

const CONF: &str = "agent: 1\nname: web\nostype: l26\nscsihw: lsi\nscsi0: local:100/vm-100-disk-0.raw,cache=writeback,iothread=1,size=1G\n";

/// Processes of the probe copied into the "guest".
fn guest_probes(rig: &Rig) -> Vec<String> {
    let guestfs = rig.path("guestfs").display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("guest-side") && c.contains(&guestfs))
        .collect()
}

/// Waits until the probe runs in the "guest" (the copy takes a second or two).
fn wait_for_the_probe(rig: &Rig, child: &mut Child) {
    let start = Instant::now();
    while guest_probes(rig).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("pveprobe ended ({status}) before the probe ran in the guest: {err}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the probe never ran in the guest"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs qemu-ga: it stands in for the guest (scripts/test runs it)"]
fn the_whole_exchange_with_a_real_agent_measures_both_sides_and_leaves_nothing() {
    needs_qga();
    let rig = Rig::new(CONF);
    let qga = Qga::start(rig.dir.path(), &[]);
    let out = rig
        .guest(&qga, &["--output-format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["kind"], "guest");
    assert_eq!(doc["vm"]["vmid"], 100);
    assert_eq!(doc["vm"]["scsihw"], "lsi");
    assert!(
        doc["vm"]["agent_version"]
            .as_str()
            .unwrap()
            .starts_with(char::is_numeric)
    );
    let disk = &doc["disks"][0];
    assert_eq!(disk["settings"]["key"], "scsi0");
    assert_eq!(disk["settings"]["cache"], "writeback");
    assert_eq!(disk["settings"]["storage_type"], "dir");
    for side in ["guest", "host"] {
        let figures = disk[side]["figures"].as_array().unwrap();
        assert_eq!(figures.len(), 7, "{side}: {figures:?}");
        assert!(
            figures.iter().all(|f| f["value"].as_f64().unwrap() > 0.0),
            "{side}"
        );
    }
    assert!(
        disk["guest"]["target"]
            .as_str()
            .unwrap()
            .contains("guestfs")
    );
    assert!(disk["host"]["target"].as_str().unwrap().contains("store"));
    let codes = crate::common::hint_codes(&doc["hints"]);
    assert!(
        codes.contains(&"iothread-ignored") && codes.contains(&"controller-emulated"),
        "{codes:?}"
    );
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
    assert!(guest_probes(&rig).is_empty());
}

#[test]
#[ignore = "needs qemu-ga: it stands in for the guest (scripts/test runs it)"]
fn the_text_table_gives_guest_host_and_share() {
    needs_qga();
    let rig = Rig::new(CONF);
    let qga = Qga::start(rig.dir.path(), &[]);
    let out = rig.guest(&qga, &["--no-host"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("VM 100 (web): "), "{text}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("RANDOM READ 4K QD32 IOPS"))
        .unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    // The guest's figure, no host's (--no-host), so no share.
    assert!(cols[5].parse::<f64>().unwrap() > 0.0, "{row}");
    assert_eq!(&cols[6..8], ["-", "-"], "{row}");
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
    // --append: a row per VM disk, the header once.
    let csv = rig.path("vms.csv");
    for _ in 0..2 {
        let out = rig
            .guest(
                &qga,
                &[
                    "--no-host",
                    "--output-format",
                    "csv",
                    "--append",
                    "--output",
                    csv.to_str().unwrap(),
                ],
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("timestamp,vmid,disk,") && lines[1].contains(",100,scsi0,local,"),
        "{text}"
    );
}

#[test]
#[ignore = "needs qemu-ga: it stands in for the guest (scripts/test runs it)"]
fn an_agent_with_guest_exec_blocked_gets_an_error_that_names_the_fix_and_nothing_is_copied() {
    needs_qga();
    let rig = Rig::new(CONF);
    let qga = Qga::start(rig.dir.path(), &["-b", "guest-exec"]);
    let out = rig.guest(&qga, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("guest-exec")
            && err.contains("block-rpcs")
            && err.contains("nothing was copied"),
        "{err}"
    );
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
}

#[test]
#[ignore = "needs qemu-ga: it stands in for the guest (scripts/test runs it)"]
fn an_agent_that_stops_answering_mid_run_is_given_up_on_and_what_is_left_is_named() {
    needs_qga();
    let rig = Rig::new(CONF);
    let qga = Qga::start(rig.dir.path(), &[]);
    let mut child = rig
        .guest(
            &qga,
            &["--no-host", "--seconds", "2", "--agent-timeout", "2"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the probe runs in the "guest", the agent stops.
    wait_for_the_probe(&rig, &mut child);
    qga.signal("-STOP");
    // Each command's limit is 2 s: the run and the cleanup's sync give up.
    let status = wait_within(&mut child, Duration::from_secs(60));
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("did not answer") && err.contains("within 2 s"),
        "{err}"
    );
    assert!(
        err.contains("left in the guest") && err.contains("stopped answering"),
        "{err}"
    );
    // The agent back: the probe in the guest ends, removing its own files;
    // the named directory with the copy is what was left.
    qga.signal("-CONT");
    let start = Instant::now();
    while !guest_probes(&rig).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = rig.leftovers();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(err.contains(&left[0]), "{err}");
}

#[test]
#[ignore = "needs qemu-ga: it stands in for the guest (scripts/test runs it)"]
fn sigint_mid_run_stops_the_probe_in_the_guest_and_leaves_no_file() {
    needs_qga();
    let rig = Rig::new(CONF);
    let qga = Qga::start(rig.dir.path(), &[]);
    let mut child = rig
        .guest(&qga, &["--no-host", "--seconds", "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_the_probe(&rig, &mut child);
    std::thread::sleep(Duration::from_millis(300));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = wait_within(&mut child, Duration::from_secs(60));
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(130), "{}", stderr(&out));
    assert!(guest_probes(&rig).is_empty(), "{:?}", guest_probes(&rig));
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
}

#[test]
fn a_vm_without_the_agent_or_on_another_node_is_told_what_to_do() {
    let rig = Rig::new("scsi0: local:100/vm-100-disk-0.raw,size=1G\n");
    let socket = rig.path("none.sock");
    let run = |rig: &Rig, vmid: &str| {
        pveprobe()
            .args(["guest", vmid, "--pve-config"])
            .arg(rig.path("pve"))
            .arg("--agent-socket")
            .arg(&socket)
            .arg("--guest-probe")
            .arg(env!("CARGO_BIN_EXE_pveprobe"))
            .output()
            .unwrap()
    };
    let out = run(&rig, "100");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("qm set 100 --agent enabled=1"),
        "{}",
        stderr(&out)
    );
    let other = rig.path("pve/nodes/pve2/qemu-server");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("101.conf"), CONF).unwrap();
    let out = run(&rig, "101");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("on node pve2"), "{}", stderr(&out));
    let out = run(&rig, "102");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("there is no VM 102"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs qemu-ga: it stands in for the guest (scripts/test runs it)"]
fn compare_puts_two_guest_results_side_by_side_per_disk() {
    needs_qga();
    let rig = Rig::new(CONF);
    let qga = Qga::start(rig.dir.path(), &[]);
    let mut files = Vec::new();
    for (i, cache) in ["writeback", "none"].iter().enumerate() {
        let conf = CONF.replace("cache=writeback", &format!("cache={cache}"));
        std::fs::write(rig.path("pve/qemu-server/100.conf"), conf).unwrap();
        let file = rig.path(&format!("run{i}.json"));
        let out = rig
            .guest(
                &qga,
                &[
                    "--no-host",
                    "--output-format",
                    "json",
                    "--output",
                    file.to_str().unwrap(),
                ],
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(doc["disks"][0]["settings"]["cache"], *cache);
        files.push(file);
    }
    let out = pveprobe()
        .args(["compare", "--output-format", "json"])
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = table["rows"].as_array().unwrap();
    let labels: Vec<String> = rows
        .iter()
        .map(|r| r["label"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        labels
            .iter()
            .any(|l| l.contains("GUEST SYNC WRITE 4K") && l.contains("scsi0")),
        "{labels:?}"
    );
    assert_eq!(rows.len(), 7, "{labels:?}");
}

#[test]
#[ignore = "needs root and qemu-ga: the fake pvesm's scratch volumes are loop devices"]
fn on_a_volume_storage_the_host_side_runs_on_a_scratch_volume_freed_afterwards() {
    needs_qga();
    if !common::root_or_skip() {
        return;
    }
    let fake = crate::common::pve::FakePve::new(
        "lvmthin: local-lvm\n\tthinpool data\n\tvgname pve\n\tcontent rootdir,images\n",
    );
    fake.set_status(&[("local-lvm", "lvmthin", "active", 100 << 20, 0, 100 << 20)]);
    let qemu_server = fake.pve_dir().join("qemu-server");
    std::fs::create_dir_all(&qemu_server).unwrap();
    std::fs::write(
        qemu_server.join("100.conf"),
        "agent: 1\nscsihw: virtio-scsi-single\nscsi0: local-lvm:vm-100-disk-0,iothread=1,size=8G\n",
    )
    .unwrap();
    let rig = Rig::new(CONF);
    let qga = Qga::start(rig.dir.path(), &[]);
    let out = fake
        .command()
        .args(["guest", "100", "--pve-config"])
        .arg(fake.pve_dir())
        .arg("--agent-socket")
        .arg(&qga.socket)
        .arg("--guest-probe")
        .arg(guest_probe())
        .arg("--guest-path")
        .arg(rig.path("guestfs"))
        .args([
            "--write-size",
            "32M",
            "--seconds",
            "0.3",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let disk = &doc["disks"][0];
    assert_eq!(disk["settings"]["storage_type"], "lvmthin");
    let target = disk["host"]["target"].as_str().unwrap();
    assert!(
        target.starts_with("a scratch volume local-lvm:vm-"),
        "{target}"
    );
    assert_eq!(disk["host"]["figures"].as_array().unwrap().len(), 7);
    let codes = crate::common::hint_codes(&doc["hints"]);
    // The scratch volume is a loop device over a file: what turns is the
    // disk under that file (this VM's). The drive has no ssd=1, so
    // ssd-off follows what was read.
    let rotational = disk["host_rotational"].as_bool().expect("read");
    if rotational {
        assert_eq!(codes, ["discard-off-on-thin"]);
    } else {
        assert_eq!(codes, ["discard-off-on-thin", "ssd-off"]);
    }
    // pvesm alloc, then free: no volume and no loop device is left.
    let calls: Vec<String> = fake
        .calls()
        .iter()
        .filter_map(|c| c.first().cloned())
        .collect();
    assert!(
        calls.contains(&"alloc".to_string()) && calls.contains(&"free".to_string()),
        "{calls:?}"
    );
    assert!(fake.volumes().is_empty(), "{:?}", fake.volumes());
    assert!(fake.loop_devices().is_empty(), "{:?}", fake.loop_devices());
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
}

/// A real VM: QEMU booting Debian's cloud kernel with tests/vm/make-guest's
/// initramfs (busybox, Debian's qemu-ga, the tested binary and the
/// libraries they link), a virtio-scsi disk with ext4 at /mnt/data and the
/// agent on a virtio-serial port whose host end is a UNIX socket, as PVE
/// wires them. No udev runs in it, so the agent gives no serial and
/// pveprobe finds the disk by the address PVE gives it.
mod vm {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    pub struct Vm {
        child: Child,
        pub socket: PathBuf,
        pub accel: &'static str,
    }

    fn kernel() -> Option<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir("/boot")
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with("vmlinuz-") && name.ends_with("-cloud-amd64")
            })
            .collect();
        found.sort();
        found.pop()
    }

    /// Fails the test unless QEMU, busybox and the cloud kernel are
    /// installed (scripts/install-test-deps); the test is `#[ignore]`d for them.
    pub fn needs_qemu() {
        common::needs_tools(
            &["qemu-system-x86_64", "busybox"],
            "qemu-system-x86 and busybox-static",
        );
        assert!(
            kernel().is_some(),
            "{} needs Debian's cloud kernel (linux-image-cloud-amd64; scripts/install-test-deps)",
            common::test_name()
        );
    }

    impl Vm {
        pub fn start(dir: &Path) -> Vm {
            let st =
                Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vm/make-guest"))
                    .arg(dir)
                    .arg(guest_probe())
                    .status()
                    .unwrap();
            assert!(st.success(), "tests/vm/make-guest");
            let disk = dir.join("disk.raw");
            std::fs::File::create(&disk)
                .unwrap()
                .set_len(512 << 20)
                .unwrap();
            let st = Command::new("mkfs.ext4")
                .args(["-q", "-F"])
                .arg(&disk)
                .status()
                .unwrap();
            assert!(st.success());
            // TCG unless PVEPROBE_TEST_ACCEL=kvm: on the VMs this suite runs
            // on, /dev/kvm opens but QEMU with KVM boots no stock kernel
            // (-cpu host fails to set MSR 0x10a; EPYC and qemu64 print
            // nothing), while TCG boots this one in about 3 s.
            let kvm = std::env::var("PVEPROBE_TEST_ACCEL").as_deref() == Ok("kvm");
            let accel = if kvm { "kvm" } else { "tcg" };
            let socket = dir.join("qga.sock");
            let console = dir.join("console.log");
            let child = Command::new("qemu-system-x86_64")
                .args([
                    "-machine",
                    &format!("q35,accel={accel}"),
                    "-cpu",
                    if kvm { "host" } else { "max" },
                ])
                .args([
                    "-m",
                    "1024",
                    "-smp",
                    "2",
                    "-display",
                    "none",
                    "-monitor",
                    "none",
                    "-no-reboot",
                ])
                .arg("-kernel")
                .arg(dir.join("vmlinuz"))
                .arg("-initrd")
                .arg(dir.join("initrd"))
                .args(["-append", "console=ttyS0 panic=-1 quiet"])
                .arg("-serial")
                .arg(format!("file:{}", console.display()))
                .arg("-chardev")
                .arg(format!(
                    "socket,path={},server=on,wait=off,id=qga0",
                    socket.display()
                ))
                .args([
                    "-device",
                    "virtio-serial-pci",
                    "-device",
                    "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0",
                ])
                .arg("-drive")
                .arg(format!(
                    "file={},if=none,id=drive-scsi0,format=raw,cache=none",
                    disk.display()
                ))
                // PVE's layout for scsihw virtio-scsi-pci: its controller at
                // slot 5 of bus 0, scsi0 as LUN 0 of target 0 (qemu-server's
                // PCI.pm and DriveDevice.pm).
                .args([
                    "-device",
                    "virtio-scsi-pci,id=scsihw0,bus=pcie.0,addr=0x5",
                    "-device",
                    "scsi-hd,bus=scsihw0.0,channel=0,scsi-id=0,lun=0,drive=drive-scsi0,id=scsi0",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .expect("qemu-system-x86_64 starts");
            let mut vm = Vm {
                child,
                socket,
                accel,
            };
            let start = Instant::now();
            loop {
                let log = std::fs::read_to_string(&console).unwrap_or_default();
                if log.contains("guest: up") {
                    break;
                }
                if let Some(status) = vm.child.try_wait().unwrap() {
                    panic!("QEMU ended ({status}) before the guest was up: {log}");
                }
                assert!(
                    start.elapsed() < Duration::from_secs(300),
                    "the guest did not come up ({accel}): {log}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
            // The agent answers once it listens on its port.
            while vm.exec("true", &[]).is_none() {
                assert!(
                    start.elapsed() < Duration::from_secs(300),
                    "the guest's agent never answered"
                );
                std::thread::sleep(Duration::from_millis(500));
            }
            vm
        }

        /// `path args` run in the guest through its agent; its stdout.
        pub fn exec(&self, path: &str, args: &[&str]) -> Option<String> {
            let mut s = UnixStream::connect(&self.socket).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let read_line = |s: &mut UnixStream| -> Option<serde_json::Value> {
                let mut buf = Vec::new();
                let mut byte = [0u8];
                while s.read(&mut byte).ok()? == 1 {
                    match byte[0] {
                        b'\n' => break,
                        0xFF => buf.clear(),
                        b => buf.push(b),
                    }
                }
                serde_json::from_slice(&buf).ok()
            };
            s.write_all(
                b"\xff{\"execute\": \"guest-sync-delimited\", \"arguments\": {\"id\": 4242}}",
            )
            .ok()?;
            while read_line(&mut s)?["return"] != 4242 {}
            let cmd = serde_json::json!({"execute": "guest-exec", "arguments": {"path": path, "arg": args, "capture-output": true}});
            s.write_all(cmd.to_string().as_bytes()).ok()?;
            let pid = read_line(&mut s)?["return"]["pid"].as_i64()?;
            loop {
                let q =
                    serde_json::json!({"execute": "guest-exec-status", "arguments": {"pid": pid}});
                s.write_all(q.to_string().as_bytes()).ok()?;
                let r = read_line(&mut s)?;
                if r["return"]["exited"] == true {
                    let out = r["return"]["out-data"].as_str().unwrap_or("");
                    use base64::Engine as _;
                    let bytes = base64::engine::general_purpose::STANDARD.decode(out).ok()?;
                    return Some(String::from_utf8_lossy(&bytes).into_owned());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    impl Drop for Vm {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[test]
#[ignore = "needs qemu-ga, QEMU and the cloud kernel: a real VM boots (scripts/test runs it)"]
fn the_whole_command_against_a_real_vm_booted_with_qemu() {
    needs_qga();
    vm::needs_qemu();
    let rig = Rig::new(
        "agent: 1\nname: tiny\nscsihw: virtio-scsi-pci\nscsi0: local:100/vm-100-disk-0.raw,size=512M\n",
    );
    let vm = vm::Vm::start(rig.dir.path());
    let out = pveprobe()
        .args(["guest", "100", "--pve-config"])
        .arg(rig.path("pve"))
        .arg("--agent-socket")
        .arg(&vm.socket)
        .arg("--guest-probe")
        .arg(guest_probe())
        .args([
            "--write-size",
            "32M",
            "--seconds",
            "0.5",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "({}) {}", vm.accel, stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let disk = &doc["disks"][0];
    assert_eq!(disk["guest_path"], "/mnt/data", "{disk}");
    assert_eq!(disk["guest_fstype"], "ext4", "{disk}");
    let figures = disk["guest"]["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 7);
    assert!(
        figures.iter().all(|f| f["value"].as_f64().unwrap() > 0.0),
        "{figures:?}"
    );
    assert!(disk["guest"]["direct"].as_bool().unwrap());
    assert_eq!(disk["host"]["figures"].as_array().unwrap().len(), 7);
    // The guest holds only what mkfs made; nothing runs there but the agent.
    assert_eq!(
        vm.exec("ls", &["-A", "/mnt/data"]).unwrap().trim(),
        "lost+found"
    );
    let ps = vm.exec("ps", &[]).unwrap();
    assert!(
        !ps.contains("guest-side") && !ps.contains("pveprobe"),
        "{ps}"
    );
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
}
