//! `load`'s worker VM, booted for real: QEMU (TCG) boots Debian's cloud
//! kernel with the initramfs `pveprobe load-initramfs` builds from that
//! kernel's modules, the tested binary as its `/init` (with the libraries
//! it links, which the package's static probe needs none of), two raw
//! disks on virtio-scsi as PVE's `virtio-scsi-single` lays them out, and
//! its first serial port on a socket as PVE's `serial0: socket`. The test
//! talks to the worker over that socket as a node does.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, pveprobe, stderr, workdir};

mod runs;

/// Debian's cloud kernel and its release (scripts/install-test-deps).
pub fn cloud_kernel() -> Option<(PathBuf, String)> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/boot")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("vmlinuz-") && name.ends_with("-cloud-amd64")
        })
        .collect();
    found.sort();
    let kernel = found.pop()?;
    let release = kernel.file_name()?.to_string_lossy()["vmlinuz-".len()..].to_string();
    Path::new("/lib/modules")
        .join(&release)
        .is_dir()
        .then_some((kernel, release))
}

/// The tested binary without its symbols, and the files it needs to run
/// (its libraries and loader, as `ldd` names them).
pub fn probe_and_libraries(dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    let probe = dir.join("probe");
    let st = Command::new("strip")
        .arg("-o")
        .arg(&probe)
        .arg(env!("CARGO_BIN_EXE_pveprobe"))
        .status()
        .unwrap();
    assert!(st.success(), "strip");
    let out = Command::new("ldd").arg(&probe).output().unwrap();
    let libs = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let path = match l.split_once("=>") {
                Some((_, right)) => right.split_whitespace().next()?,
                None => l.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect();
    (probe, libs)
}

/// The worker's initramfs for `release`, built by `pveprobe
/// load-initramfs` in `dir` with the tested binary as its /init.
/// What a worker VM boots, in `dir`: Debian's cloud kernel and an
/// initramfs with the tested binary as its /init (the tools it needs
/// checked first).
pub(crate) fn worker_kit(dir: &Path) -> (PathBuf, PathBuf) {
    common::needs_tools(
        &["qemu-system-x86_64", "strip", "ldd"],
        "qemu-system-x86 and binutils",
    );
    let (kernel, release) = cloud_kernel()
        .expect("Debian's cloud kernel and its modules (linux-image-cloud-amd64; scripts/install-test-deps)");
    let initrd = worker_initramfs(dir, &release);
    (kernel, initrd)
}

pub(crate) fn worker_initramfs(dir: &Path, release: &str) -> PathBuf {
    let (probe, libs) = probe_and_libraries(dir);
    let initrd = dir.join("initrd");
    let mut build = pveprobe();
    build
        .args(["load-initramfs", "--out"])
        .arg(&initrd)
        .args(["--release", release, "--probe"])
        .arg(&probe);
    for lib in &libs {
        build.arg("--with").arg(lib);
    }
    let out = build.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("modules of"), "{}", stderr(&out));
    initrd
}

/// A worker VM under QEMU; killed when dropped if it has not ended.
pub(crate) struct Worker {
    pub(crate) child: Child,
    socket: PathBuf,
    console: PathBuf,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Worker {
    fn boot(dir: &Path, kernel: &Path, initrd: &Path, disks: &[PathBuf]) -> Worker {
        Worker::boot_with(dir, kernel, initrd, disks, &[])
    }

    /// As [`Worker::boot`], with more of QEMU's arguments (a QMP socket).
    pub(crate) fn boot_with(
        dir: &Path,
        kernel: &Path,
        initrd: &Path,
        disks: &[PathBuf],
        more: &[String],
    ) -> Worker {
        let socket = dir.join("serial0");
        let console = dir.join("console.log");
        let mut cmd = Command::new("qemu-system-x86_64");
        cmd.args(["-nodefaults", "-machine", "q35,accel=tcg", "-cpu", "max"])
            .args(["-m", "512", "-smp", "2", "-display", "none", "-no-reboot"])
            .arg("-kernel")
            .arg(kernel)
            .arg("-initrd")
            .arg(initrd)
            // ttyS1 is the console; ttyS0 (PVE's serial0) is the worker's.
            .args(["-append", "console=ttyS1 panic=-1 quiet -- load-worker"])
            .arg("-chardev")
            .arg(format!(
                "socket,id=serial0,path={},server=on,wait=off",
                socket.display()
            ))
            .args(["-device", "isa-serial,chardev=serial0"])
            .arg("-chardev")
            .arg(format!("file,id=console,path={}", console.display()))
            .args(["-device", "isa-serial,chardev=console"]);
        // virtio-scsi-single: a controller per disk, the disk LUN 0.
        for (i, disk) in disks.iter().enumerate() {
            cmd.arg("-drive")
                .arg(format!(
                    "file={},if=none,id=drive-scsi{i},format=raw,cache=none",
                    disk.display()
                ))
                .args(["-device", &format!("virtio-scsi-pci,id=virtioscsi{i}")])
                .args([
                    "-device",
                    &format!(
                        "scsi-hd,bus=virtioscsi{i}.0,channel=0,scsi-id=0,lun=0,drive=drive-scsi{i},id=scsi{i}"
                    ),
                ]);
        }
        let child = cmd
            .args(more)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("qemu-system-x86_64 starts");
        Worker {
            child,
            socket,
            console,
        }
    }

    /// The worker's port, once QEMU listens on it.
    pub(crate) fn connect(&mut self) -> UnixStream {
        let start = Instant::now();
        loop {
            if let Ok(s) = UnixStream::connect(&self.socket) {
                return s;
            }
            assert!(
                self.child.try_wait().unwrap().is_none(),
                "QEMU ended before its serial socket was there"
            );
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no serial socket"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn console(&self) -> String {
        std::fs::read_to_string(&self.console).unwrap_or_default()
    }
}

/// The next protocol line from the worker, skipping others, within `limit`.
pub(crate) fn next(
    port: &mut BufReader<UnixStream>,
    worker: &Worker,
    limit: Duration,
) -> serde_json::Value {
    port.get_ref().set_read_timeout(Some(limit)).unwrap();
    let mut line = String::new();
    loop {
        line.clear();
        let n = port.read_line(&mut line).unwrap_or_else(|e| {
            panic!(
                "no line from the worker ({e}); its console:\n{}",
                worker.console()
            )
        });
        assert!(n > 0, "the port closed; the console:\n{}", worker.console());
        if let Some(json) = line.trim_end().strip_prefix("pveprobe-worker ") {
            return serde_json::from_str(json).unwrap();
        }
    }
}

#[test]
#[ignore = "needs QEMU and Debian's cloud kernel: a worker VM boots (scripts/test runs it)"]
fn a_worker_vm_boots_the_probe_as_init_runs_a_job_on_its_raw_disks_and_powers_off() {
    common::needs_tools(
        &["qemu-system-x86_64", "strip", "ldd"],
        "qemu-system-x86 and binutils",
    );
    let (kernel, release) = cloud_kernel()
        .expect("Debian's cloud kernel and its modules (linux-image-cloud-amd64; scripts/install-test-deps)");
    let dir = workdir();
    let initrd = worker_initramfs(dir.path(), &release);
    // It writes a new file, never over one.
    let again = pveprobe()
        .args(["load-initramfs", "--out"])
        .arg(&initrd)
        .args(["--release", &release])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));

    let disks: Vec<PathBuf> = (0..2)
        .map(|i| {
            let d = dir.path().join(format!("disk{i}.raw"));
            std::fs::File::create(&d)
                .unwrap()
                .set_len(64 << 20)
                .unwrap();
            d
        })
        .collect();
    let mut worker = Worker::boot(dir.path(), &kernel, &initrd, &disks);
    let stream = worker.connect();
    let mut port = BufReader::new(stream.try_clone().unwrap());
    let hello = next(&mut port, &worker, Duration::from_secs(300));
    assert_eq!(hello["type"], "hello", "{hello}");
    let found: Vec<(&str, u64)> = hello["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap(), d["bytes"].as_u64().unwrap()))
        .collect();
    assert_eq!(found, [("sda", 64 << 20), ("sdb", 64 << 20)], "{hello}");

    let mut to = stream;
    to.write_all(
        b"pveprobe-worker {\"type\":\"job\",\"block\":4096,\"read_pct\":70,\"random_pct\":100,\"workers\":2,\"iodepth\":4,\"warmup\":0.5,\"seconds\":2.5}\n",
    )
    .unwrap();
    // The window's start once the warm-up is over, then each whole
    // second's operations, then the result.
    let started = next(&mut port, &worker, Duration::from_secs(120));
    assert_eq!(started["type"], "started", "{started}");
    let mut seconds = Vec::new();
    let result = loop {
        let m = next(&mut port, &worker, Duration::from_secs(120));
        if m["type"] != "second" {
            break m;
        }
        assert_eq!(m["n"].as_u64().unwrap(), seconds.len() as u64, "{m}");
        seconds.push(m["ops"].as_u64().unwrap());
    };
    assert_eq!(result["type"], "result", "{result}");
    let (reads, writes) = (
        result["reads"].as_u64().unwrap(),
        result["writes"].as_u64().unwrap(),
    );
    assert!(reads > 0 && writes > 0, "{result}");
    // About 70% reads, as asked.
    let share = reads as f64 / (reads + writes) as f64;
    assert!((0.6..0.8).contains(&share), "{share} reads in {result}");
    assert!(result["seconds"].as_f64().unwrap() >= 2.5, "{result}");
    // Two whole seconds in a 2.5 s window, their operations within the total.
    assert_eq!(seconds.len(), 2, "{seconds:?}");
    assert!(seconds.iter().all(|&n| n > 0), "{seconds:?}");
    assert!(
        seconds.iter().sum::<u64>() <= reads + writes,
        "{seconds:?} {result}"
    );
    // The latencies come as HdrHistogram's compressed form: every read
    // is counted in it.
    let histogram = result["read_latency"].as_str().unwrap();
    let read_latency = pveprobe::model::latency::Latency::decode(histogram).unwrap();
    assert_eq!(read_latency.summary().unwrap().count, reads, "{result}");

    // A fill writes every byte of both disks.
    to.write_all(b"pveprobe-worker {\"type\":\"fill\",\"zero\":false}\n")
        .unwrap();
    let filled = next(&mut port, &worker, Duration::from_secs(120));
    assert_eq!(filled["type"], "filled", "{filled}");
    assert_eq!(
        filled["bytes"].as_u64().unwrap(),
        2 * (64 << 20),
        "{filled}"
    );
    // The disks were written where the job wrote: raw, no filesystem.
    let unwritten = disks.iter().any(|d| {
        std::fs::read(d)
            .unwrap()
            .chunks(4096)
            .any(|c| c.iter().all(|&b| b == 0))
    });
    assert!(
        !unwritten,
        "a block of a disk was left unwritten by the fill"
    );

    // Bye: the VM powers off by itself.
    to.write_all(b"pveprobe-worker {\"type\":\"bye\"}\n")
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = worker.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the worker did not power off; its console:\n{}",
            worker.console()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        status.success(),
        "QEMU: {status}; console:\n{}",
        worker.console()
    );
}

/// Run anywhere but as a VM's PID 1, the worker refuses and touches
/// nothing (it would mount over this host's /proc and power it off).
#[test]
fn the_worker_refuses_to_run_but_as_a_vms_init() {
    let out = pveprobe().arg("load-worker").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("runs only as a worker VM's /init (PID 1)"),
        "{}",
        stderr(&out)
    );
}
