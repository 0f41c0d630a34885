//! Faults injected for real: a FUSE filesystem of the test's own
//! (`crate::common::faultfs`) fails or delays reads of a loop device's backing
//! file, and writes, fsyncs and unlinks under PATH; a real ext4 is
//! remounted read-only, PATH is removed, the backing store of a device
//! vanishes, and signals arrive in every phase. Each test checks the exit
//! status, the message and that nothing was left behind. Needs root.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::faultfs::{FaultFs, FaultyExt4};
use crate::common::{Ext4, LoopOptions, no_panic, pveprobe, root_or_skip, stderr, stdout, workdir};

/// Reads what a spawned child wrote to stderr after it exited.
fn child_stderr(child: &mut Child) -> String {
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    err
}

/// Entries of `dir` named `pveprobe.*` and the number of files inside them.
fn scratch_files(dir: &Path) -> (usize, usize) {
    let dirs: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("pveprobe."))
                .collect()
        })
        .unwrap_or_default();
    let files = dirs
        .iter()
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .map(|d| d.count())
        .sum();
    (dirs.len(), files)
}

/// Waits until the probe's scratch directory in `dir` holds `n` files.
fn wait_for_files(dir: &Path, n: usize) {
    let start = Instant::now();
    while scratch_files(dir).1 < n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the probe never made {n} files in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A probe that keeps writing and fsyncing files in `path` for a minute, for
/// a test to break something under it; stderr piped.
fn long_fsync_run(path: impl AsRef<std::path::Path>, stdout: Stdio) -> std::process::Child {
    pveprobe()
        .args(["--tests", "fsync", "--duration", "60"])
        .arg(path.as_ref())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_disk_that_fails_mid_read_is_reported_and_the_rest_still_prints() {
    if !root_or_skip() {
        return;
    }
    let rig = FaultyExt4::new(64);
    // The middle MiB of the device fails: data blocks ext4 does not use.
    rig.fs.faults().read_error = Some((32 << 20, 33 << 20));
    let out = pveprobe()
        .args(["--tests", "cpu,read,seek,fsync", "--duration", "3"])
        .arg(rig.path())
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(
        lines.keys().collect::<Vec<_>>(),
        ["CPU BOGOMIPS", "FSYNCS/SECOND", "HD SIZE"],
        "{err}"
    );
    let dev = rig.dev_str();
    assert!(
        err.contains(&format!(
            "BUFFERED READS: not measured: read error on {dev} at byte "
        )) && err.contains(": I/O error\n"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "AVERAGE SEEK TIME: not measured: read error on {dev} at byte "
        )),
        "{err}"
    );
    assert!(rig.fs.faults().failed_reads >= 2);
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_slow_disk_shows_in_the_figures_and_the_run_stays_bounded() {
    if !root_or_skip() {
        return;
    }
    let rig = FaultyExt4::new(64);
    {
        let mut f = rig.fs.faults();
        f.read_delay = Duration::from_millis(200);
        f.fsync_delay = Duration::from_millis(200);
    }
    let start = Instant::now();
    let out = pveprobe()
        .args(["--tests", "read,seek,fsync", "--duration", "1"])
        .arg(rig.path())
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    // Every read of the backing file waits 200 ms: a 2 MiB read takes
    // several of them (a loop device on a healthy store reads hundreds of MB/s).
    let reads = crate::common::figure(&lines, "BUFFERED READS");
    assert!(
        reads > 0.0 && reads < 20.0,
        "{reads} MB/sec with 200 ms reads"
    );
    // Every O_DIRECT read waited 200 ms in the backing store.
    let seek = crate::common::figure(&lines, "AVERAGE SEEK TIME");
    assert!(seek >= 195.0, "seek {seek} ms with 200 ms reads");
    // Every fsync waited at least one 200 ms flush of the backing file.
    let fsyncs = crate::common::figure(&lines, "FSYNCS/SECOND");
    assert!(fsyncs > 0.0 && fsyncs <= 5.0, "{fsyncs} fsyncs/s");
    // Three 1 s windows, each plus one operation that may have started just
    // before its end (a 2 MiB read of several 200 ms requests, about 1.2 s
    // here; a 200 ms seek; an fsync of one or two 200 ms flushes), plus
    // start-up, cache drops and cleanup: about 6 s, so 15 s is room for a
    // loaded machine and far below an unbounded wait on a slow disk.
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    assert!(rig.leftovers().is_empty(), "{:?}", rig.leftovers());
}

fn failing_fsync_test(setup: impl FnOnce(&mut crate::common::faultfs::Faults), message: &str) {
    let fs = FaultFs::mount("faultfs", 0);
    setup(&mut fs.faults());
    let out = pveprobe()
        .args(["--tests", "cpu,fsync", "--duration", "10"])
        .arg(fs.path())
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(
        lines.keys().collect::<Vec<_>>(),
        ["CPU BOGOMIPS", "HD SIZE"],
        "{err}"
    );
    assert!(lines["HD SIZE"].ends_with("GB (faultfs)"), "{lines:?}");
    assert!(err.contains("FSYNCS/SECOND: not measured: "), "{err}");
    assert!(err.contains(message), "{err}");
    assert!(
        fs.leftovers().is_empty(),
        "left behind: {:?}",
        fs.leftovers()
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn fsyncs_failing_mid_test_with_eio_clean_up() {
    if root_or_skip() {
        failing_fsync_test(
            |f| f.fsync_error = Some((20, libc::EIO)),
            "/tf_20.dat: I/O error\n",
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn writes_failing_mid_test_with_eio_clean_up() {
    if root_or_skip() {
        failing_fsync_test(|f| f.write_error = Some((20, libc::EIO)), "write to ");
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn writes_failing_mid_test_with_enospc_clean_up() {
    if root_or_skip() {
        failing_fsync_test(
            |f| f.write_error = Some((20, libc::ENOSPC)),
            "/tf_20.dat: No space left on device\n",
        );
    }
}

/// Remounts `path` read-only, retrying while a file is open for writing
/// (the probe opens and closes one per iteration).
fn remount_read_only(path: &Path) {
    use nix::mount::{MsFlags, mount};
    let start = Instant::now();
    loop {
        match mount(
            None::<&str>,
            path,
            None::<&str>,
            MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY,
            None::<&str>,
        ) {
            Ok(()) => return,
            Err(nix::errno::Errno::EBUSY) if start.elapsed() < Duration::from_secs(20) => {
                std::thread::yield_now()
            }
            Err(e) => panic!("cannot remount {} read-only: {e}", path.display()),
        }
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_filesystem_remounted_read_only_mid_test_is_reported_with_what_was_left() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(128, LoopOptions::default(), &[], "rw");
    let mut child = long_fsync_run(fs.mount.path(), Stdio::piped());
    wait_for_files(fs.mount.path(), 5);
    remount_read_only(fs.mount.path());
    let status = crate::common::wait_within(&mut child, Duration::from_secs(20));
    let err = child_stderr(&mut child);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("FSYNCS/SECOND: not measured: "), "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    // The filesystem does not allow removing: the message names what is left.
    let (dirs, _) = scratch_files(fs.mount.path());
    assert_eq!(dirs, 1, "{err}");
    let left = fs.mount.leftovers();
    assert!(
        err.contains(&format!(
            "; then cannot remove {}/{}",
            fs.mount.path().display(),
            left[0]
        )),
        "{err}"
    );
    // Once writable again, it is the only thing there, and ours to delete.
    nix::mount::mount(
        None::<&str>,
        fs.mount.path(),
        None::<&str>,
        nix::mount::MsFlags::MS_REMOUNT,
        None::<&str>,
    )
    .unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    std::fs::remove_dir_all(fs.mount.path().join(&left[0])).unwrap();
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn path_removed_mid_test_is_reported_and_nothing_is_recreated() {
    if !root_or_skip() {
        return;
    }
    let dir = workdir();
    let path = dir.path().join("vz");
    std::fs::create_dir(&path).unwrap();
    let mut child = long_fsync_run(&path, Stdio::piped());
    wait_for_files(&path, 5);
    // rm -rf PATH while the probe writes into it (retried: the probe may
    // create a file between the removal of the files and of the directory).
    let start = Instant::now();
    while path.exists() {
        let _ = std::fs::remove_dir_all(&path);
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "cannot remove PATH"
        );
    }
    let status = crate::common::wait_within(&mut child, Duration::from_secs(20));
    let err = child_stderr(&mut child);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("FSYNCS/SECOND: not measured: cannot create ")
            && err.contains(": No such file or directory\n"),
        "{err}"
    );
    assert!(!err.contains("then cannot remove"), "{err}");
    assert!(!path.exists(), "PATH was made again");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Mounts fusectl (the FUSE control filesystem) on a directory of the test.
struct FuseCtl(tempfile::TempDir);

impl FuseCtl {
    fn mount() -> Self {
        let dir = workdir();
        crate::common::sh(
            "mount",
            &["-t", "fusectl", "fusectl", dir.path().to_str().unwrap()],
        );
        Self(dir)
    }

    /// Aborts a FUSE connection: every request on it fails from now on.
    fn abort(&self, connection: u64) {
        std::fs::write(self.0.path().join(format!("{connection}/abort")), "1").unwrap();
    }
}

impl Drop for FuseCtl {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_device_whose_backing_store_vanishes_mid_read_is_reported() {
    if !root_or_skip() {
        return;
    }
    let rig = FaultyExt4::new(256);
    let ctl = FuseCtl::mount();
    // Slow enough that the reads are still running when the store goes.
    rig.fs.faults().read_delay = Duration::from_millis(5);
    let start_reads = rig.fs.faults().image_reads;
    let mut child = pveprobe()
        .args(["--tests", "read,seek", "--duration", "30"])
        .arg(rig.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while rig.fs.faults().image_reads < start_reads + 20 {
        assert!(start.elapsed() < Duration::from_secs(20), "no reads seen");
        std::thread::sleep(Duration::from_millis(5));
    }
    ctl.abort(rig.fs.connection());
    let status = crate::common::wait_within(&mut child, Duration::from_secs(30));
    let err = child_stderr(&mut child);
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let dev = rig.dev_str();
    assert!(
        err.contains(&format!(
            "BUFFERED READS: not measured: read error on {dev} at byte "
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "AVERAGE SEEK TIME: not measured: read error on {dev} at byte "
        )),
        "{err}"
    );
    assert!(out.starts_with("HD SIZE:"), "{out}");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_loop_device_detached_mid_read_stays_until_the_probe_lets_go() {
    if !root_or_skip() {
        return;
    }
    // The kernel defers a detach while the device is open (autoclear): the
    // probe finishes its reads, and the device goes when the last user closes it.
    let fs = Ext4::new(256, LoopOptions::default(), &[], "rw");
    let mut child = pveprobe()
        .args(["--tests", "read", "--duration", "2"])
        .arg(fs.mount.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    crate::common::sh("losetup", &["-d", fs.device.path()]);
    let status = crate::common::wait_within(&mut child, Duration::from_secs(30));
    let err = child_stderr(&mut child);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
    let name = fs
        .device
        .dev
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let autoclear = std::fs::read_to_string(format!("/sys/block/{name}/loop/autoclear")).unwrap();
    assert_eq!(autoclear.trim(), "1", "the detach is pending");
}

/// True when process `pid` has a descriptor whose link starts with `prefix`.
fn has_fd(pid: u32, prefix: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .any(|l| l.to_string_lossy().starts_with(prefix))
        })
        .unwrap_or(false)
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Regex,
    Read,
    Seek,
    Fsync,
    Dns,
    SeqWrite,
}

fn signal_in_phase(
    fs: &Ext4,
    conf: &Path,
    phase: Phase,
    signal: nix::sys::signal::Signal,
) -> String {
    let test = match phase {
        Phase::Regex => "regex",
        Phase::Read => "read",
        Phase::Seek => "seek",
        Phase::Fsync => "fsync",
        Phase::Dns => "dns",
        Phase::SeqWrite => "seqwrite",
    };
    let mut child = pveprobe()
        .args(["--tests", test, "--duration", "60", "--dns-timeout", "60"])
        .args(["--write-size", "64M", "--resolv-conf"])
        .arg(conf)
        .arg(fs.mount.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let start = Instant::now();
    let running = || match phase {
        Phase::Regex => start.elapsed() > Duration::from_millis(300),
        Phase::Read | Phase::Seek => has_fd(pid, fs.device.path()),
        Phase::Fsync | Phase::SeqWrite => scratch_files(fs.mount.path()).1 > 0,
        Phase::Dns => has_fd(pid, "socket:"),
    };
    while !running() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{phase:?} never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    let status = crate::common::wait_within(&mut child, Duration::from_secs(20));
    let err = child_stderr(&mut child);
    assert_eq!(status.code(), Some(128 + signal as i32), "{phase:?}: {err}");
    assert!(
        err.contains(&format!(
            "interrupted by {}; stopped and removed the files it made",
            signal.as_str()
        )),
        "{phase:?}: {err}"
    );
    assert!(
        fs.mount.leftovers().is_empty(),
        "{phase:?} {signal}: left behind {:?}",
        fs.mount.leftovers()
    );
    err
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sigint_sigterm_and_sighup_in_every_phase_clean_up_and_exit_128_plus_signal() {
    use nix::sys::signal::Signal;
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(512, LoopOptions::default(), &[], "rw");
    let silent = crate::common::SilentServer::start();
    let dir = workdir();
    let conf = crate::common::resolv_conf(dir.path(), &format!("nameserver {}\n", silent.addr));
    for phase in [
        Phase::Regex,
        Phase::Read,
        Phase::Seek,
        Phase::Fsync,
        Phase::Dns,
        Phase::SeqWrite,
    ] {
        for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            signal_in_phase(&fs, &conf, phase, signal);
        }
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_second_ctrl_c_during_cleanup_does_not_cut_it_short() {
    use nix::sys::signal::{Signal, kill};
    if !root_or_skip() {
        return;
    }
    let fs = FaultFs::mount("faultfs", 0);
    let mut child = long_fsync_run(fs.path(), Stdio::null());
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    wait_for_files(fs.path(), 60);
    // From now on each unlink takes 25 ms: cleanup of 60+ files lasts > 1.5 s.
    fs.faults().unlink_delay = Duration::from_millis(25);
    kill(pid, Signal::SIGINT).unwrap();
    // Wait until cleanup has begun (files going), then interrupt it again.
    let (_, before) = scratch_files(fs.path());
    let start = Instant::now();
    while scratch_files(fs.path()).1 + 3 > before {
        assert!(start.elapsed() < Duration::from_secs(20), "no cleanup seen");
        std::thread::sleep(Duration::from_millis(5));
    }
    kill(pid, Signal::SIGINT).unwrap();
    kill(pid, Signal::SIGTERM).unwrap();
    let (dirs, files) = scratch_files(fs.path());
    assert!(
        dirs == 1 && files > 0,
        "cleanup already over: {dirs} {files}"
    );
    let status = crate::common::wait_within(&mut child, Duration::from_secs(30));
    let err = child_stderr(&mut child);
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted by SIGINT; stopped and removed the files it made"),
        "{err}"
    );
    assert!(
        fs.leftovers().is_empty(),
        "left behind: {:?}",
        fs.leftovers()
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn an_interrupted_run_whose_cleanup_fails_says_what_it_left() {
    use nix::sys::signal::{Signal, kill};
    if !root_or_skip() {
        return;
    }
    let fs = FaultFs::mount("faultfs", 0);
    let mut child = long_fsync_run(fs.path(), Stdio::null());
    wait_for_files(fs.path(), 5);
    fs.faults().unlink_error = Some(libc::EIO);
    kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        Signal::SIGTERM,
    )
    .unwrap();
    let status = crate::common::wait_within(&mut child, Duration::from_secs(20));
    let err = child_stderr(&mut child);
    assert_eq!(status.code(), Some(143), "{err}");
    let left = fs.leftovers();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        err.contains(&format!(
            "interrupted by SIGTERM; stopped, but could not remove: {}/{} (cannot remove {}/{}/tf_",
            fs.path().display(),
            left[0],
            fs.path().display(),
            left[0]
        )),
        "{err}"
    );
    assert!(!err.contains("removed the files it made"), "{err}");
    // Once the filesystem lets go, it is ours to delete.
    fs.faults().unlink_error = None;
    std::fs::remove_dir_all(fs.path().join(&left[0])).unwrap();
}
