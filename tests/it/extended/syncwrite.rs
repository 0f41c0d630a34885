//! SYNC WRITE 4K for real: on ext4, xfs and btrfs loop devices (the line,
//! the JSON, the verdict `unknown` naming the loop device, nothing left
//! behind after success or SIGTERM); on a faultfs whose --sysroot places
//! it on a 7,200 rpm SAS disk (fsyncs that return at once are faster than
//! the disk, 20 ms fsyncs are about 50 a second and plausible, failing
//! fsyncs and writes fail the figure and clean up); on tmpfs and on a ZFS
//! dataset with sync=disabled (not synced); and `--sync-jobs`,
//! `--sync-mode dsync`. Needs root; skips with a message otherwise.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use crate::common::faultfs::FaultFs;
use crate::common::zfs::ZfsRig;
use crate::common::{
    LoopDevice, LoopOptions, Mount, mkfs, no_panic, pveprobe, root_or_skip, stderr, stdout,
};
use serde_json::Value;

/// The one-job line, whatever the verdict and reference.
const LINE: &str = r"^SYNC WRITE 4K:            (\d+) IOPS \(mean \d+\.\d{3} ms, p50 \d+\.\d{3} ms, p99 \d+\.\d{3} ms(, p99\.9 \d+\.\d{3} ms)?, max \d+\.\d{3} ms; (fdatasync|dsync), 64 MiB file, 1 job\); flushes: (plausible|faster than the device can commit|not synced|unknown)(; .+)?$";

const DURATION: f64 = 0.3;

/// The test that measures a rate (20 ms fsyncs) runs alone: the others
/// fill 64 MiB files and would take the CPU from the faultfs's threads.
static TIMING: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    TIMING.read().unwrap_or_else(|e| e.into_inner())
}

fn alone() -> RwLockWriteGuard<'static, ()> {
    TIMING.write().unwrap_or_else(|e| e.into_inner())
}

/// `pveprobe --tests syncwrite --duration D [args] PATH`.
fn probe(path: &Path, duration: f64, args: &[&str]) -> Output {
    probe_with(path, duration, args, None, None)
}

fn probe_with(
    path: &Path,
    duration: f64,
    args: &[&str],
    sysroot: Option<&Path>,
    bin: Option<&Path>,
) -> Output {
    let mut cmd = pveprobe();
    cmd.args(["--tests", "syncwrite", "--duration", &duration.to_string()])
        .args(args);
    if let Some(root) = sysroot {
        cmd.arg("--sysroot").arg(root);
    }
    if let Some(bin) = bin {
        cmd.env(
            "PATH",
            format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", bin.display()),
        );
    }
    let out = cmd.arg(path).output().unwrap();
    no_panic(&stderr(&out));
    out
}

/// The SYNC WRITE 4K line of a successful text run, checked against [`LINE`].
fn sync_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let text = stdout(out);
    let line = text
        .lines()
        .find(|l| l.starts_with("SYNC WRITE 4K:"))
        .unwrap_or_else(|| panic!("no SYNC WRITE 4K line in {text}"))
        .to_string();
    assert!(
        regex::Regex::new(LINE).unwrap().is_match(&line),
        "{line:?} does not match {LINE}"
    );
    line
}

/// A successful JSON run's document, validated against the schema.
/// The JSON of a run that succeeded, checked against the schema.
fn valid_json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let doc = crate::common::json(out);
    crate::common::validate_schema(&doc);
    doc
}

/// The `extended[]` entries with `key`.
fn entries<'a>(doc: &'a Value, key: &str) -> Vec<&'a Value> {
    doc["extended"]
        .as_array()
        .expect("extended[]")
        .iter()
        .filter(|e| e["key"] == key)
        .collect()
}

/// The one `sync_write_4k` entry, with its latency consistent with its
/// IOPS: the value is writes / elapsed and the latency counts every write,
/// so count / value is the elapsed time: past the window, and by at most
/// the last write (its latency is at most the max) and a little more.
fn sync_entry(doc: &Value, duration: f64) -> Value {
    let all = entries(doc, "sync_write_4k");
    assert_eq!(all.len(), 1, "{doc}");
    let e = all[0].clone();
    let iops = e["value"].as_f64().unwrap();
    let latency = &e["latency"];
    let count = latency["count"].as_u64().unwrap();
    assert!(iops > 0.0 && count >= 1, "{e}");
    let elapsed = count as f64 / iops;
    let max = latency["max_us"].as_f64().unwrap() / 1e6;
    assert!(
        elapsed >= duration - 1e-6 && elapsed <= duration + max + 0.05,
        "count {count} at {iops} IOPS is {elapsed} s of writes; window {duration} s, max {max} s: {e}"
    );
    let at = |p: &str| latency[p].as_f64().unwrap();
    assert!(
        at("p50_us") <= at("p99_us") && at("p99_us") <= at("max_us"),
        "{e}"
    );
    assert_eq!(e["jobs"], 1, "{e}");
    assert_eq!(e["file_bytes"], 64 << 20, "{e}");
    assert_eq!(e["block_size"], 4096, "{e}");
    e
}

fn verdict(entry: &Value) -> (String, String) {
    (
        entry["verdict"]["kind"].as_str().unwrap().to_string(),
        entry["verdict"]["reason"].as_str().unwrap().to_string(),
    )
}

fn dev_name(dev: &Path) -> String {
    dev.file_name().unwrap().to_string_lossy().into_owned()
}

/// Entries of `dir` named `pveprobe.*`.
fn scratch_dirs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("pveprobe."))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until the probe's first job file in `dir` has its full 64 MiB
/// (the fill is done: the timed writes follow).
fn wait_for_filled_file(dir: &Path) {
    let start = Instant::now();
    loop {
        let full = scratch_dirs(dir)
            .iter()
            .any(|d| std::fs::metadata(d.join("sync_0.dat")).is_ok_and(|m| m.len() == 64 << 20));
        if full {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the probe never filled sync_0.dat in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// SIGTERM during the timed writes: exit 143, the message, nothing left.
fn sigterm_mid_run(path: &Path, leftovers: impl Fn() -> Vec<String>) {
    use nix::sys::signal::{Signal, kill};
    let mut child = pveprobe()
        .args(["--tests", "syncwrite", "--duration", "60"])
        .arg(path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_filled_file(path);
    std::thread::sleep(Duration::from_millis(200));
    kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        Signal::SIGTERM,
    )
    .unwrap();
    let status = crate::common::wait_within(&mut child, Duration::from_secs(30));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    no_panic(&err);
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(
        err.contains("interrupted by SIGTERM; stopped and removed the files it made"),
        "{err}"
    );
    assert!(leftovers().is_empty(), "left behind: {:?}", leftovers());
}

/// Item 1: a loop device with `fstype`: the line, the verdict naming the
/// loop device, the JSON, and nothing left after success or SIGTERM.
fn on_a_loop_device(fstype: &str) {
    let _guard = shared();
    let dev = LoopDevice::new(512, LoopOptions::default());
    mkfs(fstype, dev.path(), &[]);
    let mount = Mount::new(dev.path(), "rw");
    let loop_name = dev_name(&dev.dev);
    let reason = format!("{loop_name} is a loop device: its flags say nothing about a disk");

    let out = probe(mount.path(), DURATION, &[]);
    let line = sync_line(&out);
    assert!(
        line.ends_with("; fdatasync, 64 MiB file, 1 job); flushes: unknown"),
        "{line}"
    );
    assert!(
        stderr(&out).contains(&format!(
            "pveprobe: SYNC WRITE 4K: flushes: unknown: {reason}\n"
        )),
        "{}",
        stderr(&out)
    );
    assert!(mount.leftovers().is_empty(), "{:?}", mount.leftovers());

    let doc = valid_json(&probe(mount.path(), DURATION, &["--output-format", "json"]));
    assert_eq!(doc["filesystem"]["fstype"], fstype, "{}", doc["filesystem"]);
    let e = sync_entry(&doc, DURATION);
    eprintln!(
        "{fstype} on {loop_name}: {:.0} IOPS, {}",
        e["value"].as_f64().unwrap(),
        e["latency"]
    );
    assert_eq!(verdict(&e), ("unknown".to_string(), reason), "{e}");
    assert_eq!(e["sync_mode"], "fdatasync", "{e}");
    assert!(e["reference"].is_null(), "no band for a loop device: {e}");
    assert!(entries(&doc, "sync_write_4k_jobs").is_empty(), "{doc}");
    assert!(mount.leftovers().is_empty(), "{:?}", mount.leftovers());

    sigterm_mid_run(mount.path(), || mount.leftovers());
    drop(mount);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sync_write_on_an_ext4_loop_device() {
    if root_or_skip() {
        on_a_loop_device("ext4");
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sync_write_on_an_xfs_loop_device() {
    if root_or_skip() {
        on_a_loop_device("xfs");
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sync_write_on_a_btrfs_loop_device() {
    if root_or_skip() {
        on_a_loop_device("btrfs");
    }
}

/// A --sysroot whose mountinfo is this process's own, except that the
/// faultfs at `fuse_path` has the source /dev/sda1 (its real 0:N device
/// number stays: with major 0 the probe finds the device by the source),
/// and whose /sys holds sda1, partition 1 of sda: a 7,200 rpm SAS disk
/// (VPD page B1h) behind an mpt3sas HBA, rotational, write cache on.
struct SasDisk {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl SasDisk {
    fn new(fuse_path: &Path) -> Self {
        let dir = crate::common::workdir();
        let root = dir.path().join("root");
        let fuse_path = std::fs::canonicalize(fuse_path).unwrap();
        let mut replaced = 0;
        let mountinfo: String = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .map(|l| {
                let (left, right) = l.split_once(" - ").unwrap();
                if left.split(' ').nth(4) != fuse_path.to_str() {
                    return format!("{l}\n");
                }
                replaced += 1;
                let mut fields: Vec<&str> = right.split(' ').collect();
                fields[1] = "/dev/sda1";
                format!("{left} - {}\n", fields.join(" "))
            })
            .collect();
        assert_eq!(replaced, 1, "the faultfs's mountinfo line: {mountinfo}");
        std::fs::create_dir_all(root.join("proc/self")).unwrap();
        std::fs::write(root.join("proc/self/mountinfo"), mountinfo).unwrap();

        let pci = root.join("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
        let scsi = pci.join("host1/port-1:0/end_device-1:0/target1:0:0/1:0:0:0");
        let sda = scsi.join("block/sda");
        let write = |path: PathBuf, text: &[u8]| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(sda.join("queue/rotational"), b"1\n");
        write(sda.join("queue/write_cache"), b"write back\n");
        write(sda.join("queue/logical_block_size"), b"512\n");
        write(sda.join("queue/physical_block_size"), b"4096\n");
        write(sda.join("queue/scheduler"), b"none [mq-deadline]\n");
        write(sda.join("size"), b"7814037168\n");
        write(sda.join("sda1/partition"), b"1\n");
        write(sda.join("sda1/size"), b"7814035087\n");
        write(scsi.join("model"), b"ST4000NM0025    \n");
        write(scsi.join("vendor"), b"SEAGATE \n");
        // VPD page B1h (Block Device Characteristics): rate 7200 in bytes 4-5.
        let mut b1 = vec![0u8; 64];
        b1[1] = 0xb1;
        b1[3] = 0x3c;
        b1[4..6].copy_from_slice(&7200u16.to_be_bytes());
        write(scsi.join("vpd_pgb1"), &b1);
        let link = |target: &str, at: PathBuf| {
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, at).unwrap();
        };
        link("../../../1:0:0:0", sda.join("device"));
        link(
            "../../../../../../../../../../bus/scsi/drivers/sd",
            scsi.join("driver"),
        );
        link("../../../../bus/pci/drivers/mpt3sas", pci.join("driver"));
        let under = "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/host1/port-1:0/end_device-1:0/target1:0:0/1:0:0:0/block/sda";
        link(under, root.join("sys/class/block/sda"));
        link(&format!("{under}/sda1"), root.join("sys/class/block/sda1"));
        Self { _dir: dir, root }
    }
}

/// The faultfs seen as /dev/sda1 on the 7,200 rpm disk: the storage the
/// probe found, so a verdict below is about this disk and not a fallback.
fn assert_sees_the_sas_disk(doc: &Value) {
    let storage = &doc["storage"];
    assert_eq!(storage["source"], "/dev/sda1", "{storage}");
    assert_eq!(storage["device"], "sda1", "{storage}");
    assert_eq!(storage["disks"].as_array().unwrap().len(), 1, "{storage}");
    let disk = &storage["disks"][0];
    assert_eq!(disk["name"], "sda", "{disk}");
    assert_eq!(disk["rotational"], true, "{disk}");
    assert_eq!(disk["transport"], "SAS", "{disk}");
    assert_eq!(disk["write_cache"], "write back", "{disk}");
    assert_eq!(disk["controller_driver"], "mpt3sas", "{disk}");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn fsyncs_that_return_at_once_are_faster_than_a_7200_rpm_disk() {
    if !root_or_skip() {
        return;
    }
    let _guard = shared();
    let fs = FaultFs::mount("faultfs", 0);
    let sas = SasDisk::new(fs.path());
    let cache = "sda's write cache is on (write back) and may ignore flushes";

    let out = probe_with(fs.path(), DURATION, &[], Some(&sas.root), None);
    let line = sync_line(&out);
    assert!(
        line.ends_with(
            "; fdatasync, 64 MiB file, 1 job); flushes: faster than the device can commit"
        ),
        "{line}"
    );
    let err = stderr(&out);
    let said = err
        .lines()
        .find(|l| l.starts_with("pveprobe: SYNC WRITE 4K: flushes: "))
        .unwrap_or_else(|| panic!("no verdict on stderr: {err}"));
    assert!(
        said.starts_with("pveprobe: SYNC WRITE 4K: flushes: faster than the device can commit: ")
            && said.contains(" synced writes a second; sda (7200 rpm) commits at most 120: ")
            && said.ends_with(cache),
        "{said}"
    );
    assert!(fs.leftovers().is_empty(), "{:?}", fs.leftovers());

    let fsyncs_before = fs.faults().fsyncs;
    let doc = valid_json(&probe_with(
        fs.path(),
        DURATION,
        &["--output-format", "json"],
        Some(&sas.root),
        None,
    ));
    assert_sees_the_sas_disk(&doc);
    let e = sync_entry(&doc, DURATION);
    let iops = e["value"].as_f64().unwrap();
    eprintln!(
        "fsyncs at once on faultfs: {iops:.0} IOPS, {}",
        e["latency"]
    );
    assert!(iops > 132.0, "{iops} IOPS: not beyond 120 × 1.10: {e}");
    let (kind, reason) = verdict(&e);
    assert_eq!(kind, "faster_than_the_device", "{e}");
    assert_eq!(
        reason,
        format!("{iops:.0} synced writes a second; sda (7200 rpm) commits at most 120: {cache}")
    );
    assert!(e["reference"].is_null(), "no band for rotating disks: {e}");
    // Every timed write was followed by an fdatasync that reached the
    // filesystem (plus the one after the fill).
    let fsyncs = fs.faults().fsyncs - fsyncs_before;
    let count = e["latency"]["count"].as_u64().unwrap();
    assert_eq!(fsyncs, count + 1, "fsyncs seen by the filesystem: {e}");
    assert!(fs.leftovers().is_empty(), "{:?}", fs.leftovers());
}

/// Runs 1 s of synced writes on the faultfs whose every sync takes 20 ms;
/// returns the JSON entry after checking the figure is about 50 a second.
fn twenty_ms_syncs(mode: &str) -> Value {
    let _guard = alone();
    let fs = FaultFs::mount("faultfs", 0);
    let sas = SasDisk::new(fs.path());
    fs.faults().fsync_delay = Duration::from_millis(20);
    let duration = 1.0;
    let out = probe_with(
        fs.path(),
        duration,
        &["--output-format", "json", "--sync-mode", mode],
        Some(&sas.root),
        None,
    );
    let err = stderr(&out);
    assert!(!err.contains("SYNC WRITE 4K: flushes:"), "plausible: {err}");
    let doc = valid_json(&out);
    assert_sees_the_sas_disk(&doc);
    let e = sync_entry(&doc, duration);
    let iops = e["value"].as_f64().unwrap();
    eprintln!("{mode}, 20 ms syncs: {iops:.2} IOPS, {}", e["latency"]);
    assert!(
        (45.0..=55.0).contains(&iops),
        "{iops} IOPS, not 50 ± 10%: {e}"
    );
    let p99 = e["latency"]["p99_us"].as_f64().unwrap();
    assert!(p99 >= 20_000.0, "p99 {p99} µs with 20 ms syncs: {e}");
    let p50 = e["latency"]["p50_us"].as_f64().unwrap();
    assert!(p50 >= 20_000.0, "p50 {p50} µs with 20 ms syncs: {e}");
    assert_eq!(
        verdict(&e),
        (
            "plausible".to_string(),
            "within sda's 120 commits a second (7200 rpm)".to_string()
        ),
        "{e}"
    );
    assert_eq!(e["sync_mode"], mode, "{e}");
    assert!(fs.leftovers().is_empty(), "{:?}", fs.leftovers());
    e
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn fdatasyncs_of_20_ms_are_about_50_a_second_and_plausible_for_a_7200_rpm_disk() {
    if root_or_skip() {
        twenty_ms_syncs("fdatasync");
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn o_dsync_writes_of_20_ms_are_about_50_a_second_and_plausible_for_a_7200_rpm_disk() {
    if root_or_skip() {
        twenty_ms_syncs("dsync");
    }
}

/// A run on the faultfs (seen as the SAS disk) that `break_it` makes fail
/// once the 64 MiB fill's fdatasync has passed; checks exit 1, the message
/// (`message` after the job file's path) and that nothing is left.
fn failing_run(
    mode: &str,
    break_it: impl FnOnce(&mut crate::common::faultfs::Faults),
    message: &str,
) {
    let _guard = shared();
    let fs = FaultFs::mount("faultfs", 0);
    let sas = SasDisk::new(fs.path());
    let mut child = pveprobe()
        .args([
            "--tests",
            "syncwrite",
            "--duration",
            "20",
            "--sync-mode",
            mode,
        ])
        .arg("--sysroot")
        .arg(&sas.root)
        .arg(fs.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The fill ends with one fdatasync; the timed writes follow.
    let start = Instant::now();
    while fs.faults().fsyncs < 1 {
        assert!(start.elapsed() < Duration::from_secs(30), "no fill seen");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(50));
    break_it(&mut fs.faults());
    let status = crate::common::wait_within(&mut child, Duration::from_secs(30));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    no_panic(&err);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(!out.contains("SYNC WRITE 4K"), "{out}");
    assert!(out.starts_with("HD SIZE:"), "{out}");
    let said = err
        .lines()
        .find(|l| l.contains("SYNC WRITE 4K: not measured: "))
        .unwrap_or_else(|| panic!("no SYNC WRITE 4K message: {err}"));
    let prefix = format!(
        "SYNC WRITE 4K: not measured: {}/pveprobe.",
        fs.path().display()
    );
    assert!(
        said.contains(&prefix) && said.ends_with(&format!("/sync_0.dat: {message}")),
        "{said}"
    );
    assert!(!err.contains("SYNC WRITE 4K: flushes"), "no verdict: {err}");
    assert!(!err.contains("cannot remove"), "{err}");
    assert!(fs.leftovers().is_empty(), "{:?}", fs.leftovers());
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_failing_fdatasync_fails_the_figure_with_exit_1_and_leaves_nothing() {
    if root_or_skip() {
        failing_run(
            "fdatasync",
            |f| f.fsync_error = Some((f.fsyncs + 3, libc::EIO)),
            "fdatasync: I/O error",
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_failing_write_fails_the_figure_with_exit_1_and_leaves_nothing() {
    if root_or_skip() {
        failing_run(
            "fdatasync",
            |f| f.write_error = Some((f.writes + 3, libc::EIO)),
            "write: I/O error",
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_failing_o_dsync_write_fails_the_figure_with_exit_1_and_leaves_nothing() {
    if root_or_skip() {
        failing_run(
            "dsync",
            |f| f.fsync_error = Some((f.fsyncs + 3, libc::EIO)),
            "write: I/O error",
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sync_write_on_tmpfs_is_not_synced() {
    if !root_or_skip() {
        return;
    }
    let _guard = shared();
    let tmpfs = Mount::tmpfs(128);
    let reason = "tmpfs keeps files in memory: fsync does nothing";
    let out = probe(tmpfs.path(), DURATION, &[]);
    let line = sync_line(&out);
    assert!(line.ends_with("; flushes: not synced"), "{line}");
    assert!(
        stderr(&out).contains(&format!(
            "pveprobe: SYNC WRITE 4K: flushes: not synced: {reason}\n"
        )),
        "{}",
        stderr(&out)
    );
    let doc = valid_json(&probe(tmpfs.path(), DURATION, &["--output-format", "json"]));
    assert_eq!(doc["filesystem"]["fstype"], "tmpfs");
    let e = sync_entry(&doc, DURATION);
    assert_eq!(
        verdict(&e),
        ("not_synced".to_string(), reason.to_string()),
        "{e}"
    );
    assert!(tmpfs.leftovers().is_empty(), "{:?}", tmpfs.leftovers());
}

/// A --sysroot whose mountinfo puts ZFS dataset testpool/data on a plain
/// directory (the writes go to the filesystem below /var/tmp), the real
/// /sys, and fake `zpool`/`zfs` saying the dataset has sync=disabled.
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_zfs_dataset_with_sync_disabled_is_not_synced() {
    if !root_or_skip() {
        return;
    }
    let _guard = shared();
    let rig = ZfsRig::with_zfs(
        "#!/bin/sh\n[ \"$1 $2 $3 $4\" = \"status -P -L testpool\" ] || exit 9\ncat <<'EOF'\n  pool: testpool\n state: ONLINE\nconfig:\n\n\tNAME                                  STATE     READ WRITE CKSUM\n\ttestpool                              ONLINE       0     0     0\n\t  /dev/disk/by-id/ata-NOSUCHDISK-part3  ONLINE       0     0     0\n\nerrors: No known data errors\nEOF\n",
        &crate::common::zfs::zfs_properties("disabled"),
    );
    let (path, root, bin) = (&rig.path, &rig.sysroot, &rig.bin);
    let reason = "ZFS dataset testpool/data has sync=disabled: fsync returns at once";

    let out = probe_with(path, DURATION, &[], Some(root), Some(bin));
    let line = sync_line(&out);
    assert!(line.ends_with("; flushes: not synced"), "{line}");
    assert!(
        stderr(&out).contains(&format!(
            "pveprobe: SYNC WRITE 4K: flushes: not synced: {reason}\n"
        )),
        "{}",
        stderr(&out)
    );
    let doc = valid_json(&probe_with(
        path,
        DURATION,
        &["--output-format", "json"],
        Some(root),
        Some(bin),
    ));
    assert_eq!(doc["storage"]["zfs"]["properties"]["sync"], "disabled");
    let e = sync_entry(&doc, DURATION);
    assert_eq!(
        verdict(&e),
        ("not_synced".to_string(), reason.to_string()),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(path).unwrap().count(), 0, "left behind");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sync_jobs_1_2_4_and_dsync_on_an_ext4_loop_device() {
    if !root_or_skip() {
        return;
    }
    let _guard = shared();
    let fs = crate::common::Ext4::new(512, LoopOptions::default(), &[], "rw");
    let path = fs.mount.path();

    let out = probe(path, DURATION, &["--sync-jobs", "1,2,4"]);
    sync_line(&out);
    let text = stdout(&out);
    let jobs_line = r"^SYNC WRITE 4K JOBS:       1 job (\d+), 2 jobs (\d+), 4 jobs (\d+) IOPS$";
    let peak_line = r"^SYNC WRITE 4K PEAK:       \d+ IOPS at (1 job|2 jobs|4 jobs) \((stops scaling at (1 job|2 jobs): no later step adds 10% or more|still scaling at the last step: it added 10% or more)\)$";
    for format in [jobs_line, peak_line] {
        let re = regex::Regex::new(format).unwrap();
        assert_eq!(
            text.lines().filter(|l| re.is_match(l)).count(),
            1,
            "{format} in {text}"
        );
    }
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );

    let doc = valid_json(&probe(
        path,
        DURATION,
        &["--sync-jobs", "1,2,4", "--output-format", "json"],
    ));
    sync_entry(&doc, DURATION);
    let steps = entries(&doc, "sync_write_4k_jobs");
    let instances: Vec<&str> = steps
        .iter()
        .map(|s| s["instance"].as_str().unwrap())
        .collect();
    assert_eq!(instances, ["jobs=1", "jobs=2", "jobs=4"], "{doc}");
    let mut iops = Vec::new();
    for (step, jobs) in steps.iter().zip([1u32, 2, 4]) {
        assert_eq!(step["jobs"], jobs, "{step}");
        assert_eq!(step["sync_mode"], "fdatasync", "{step}");
        assert_eq!(step["label"], "SYNC WRITE 4K JOBS", "{step}");
        let value = step["value"].as_f64().unwrap();
        assert!(value > 0.0, "{step}");
        assert!(
            step["latency"]["count"].as_u64().unwrap() >= u64::from(jobs),
            "{step}"
        );
        iops.push((jobs, value));
    }
    let peaks = entries(&doc, "sync_write_4k_peak");
    assert_eq!(peaks.len(), 1, "{doc}");
    let peak = peaks[0];
    let best = iops
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(
        peak["peak_jobs"], best.0,
        "the step with the most IOPS: {peak} {iops:?}"
    );
    assert_eq!(peak["value"].as_f64(), Some(best.1), "{peak}");
    // Where scaling stops: the first step no later step beats by 10% or
    // more (none when that is the last step: still scaling).
    let first = iops.iter().position(|(_, v)| v * 1.10 > best.1).unwrap();
    let stops = (first + 1 < iops.len()).then(|| iops[first].0);
    assert_eq!(
        peak["stops_scaling_at"].as_u64(),
        stops.map(u64::from),
        "{peak} {iops:?}"
    );
    eprintln!("--sync-jobs 1,2,4 on ext4 on a loop device: {iops:?}, peak {peak}");
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );

    let out = probe(path, DURATION, &["--sync-mode", "dsync"]);
    let line = sync_line(&out);
    assert!(
        line.contains("; dsync, 64 MiB file, 1 job); flushes: unknown"),
        "{line}"
    );
    let doc = valid_json(&probe(
        path,
        DURATION,
        &[
            "--sync-mode",
            "dsync",
            "--sync-jobs",
            "1,2",
            "--output-format",
            "json",
        ],
    ));
    let e = sync_entry(&doc, DURATION);
    assert_eq!(e["sync_mode"], "dsync", "{e}");
    for key in ["sync_write_4k_jobs", "sync_write_4k_peak"] {
        for entry in entries(&doc, key) {
            assert_eq!(entry["sync_mode"], "dsync", "{entry}");
        }
    }
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );
}
