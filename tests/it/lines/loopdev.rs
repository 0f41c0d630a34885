//! Every line measured on real block devices made by the test: ext4 on a
//! loop device (512-byte and 4096-byte sectors), read-only and full
//! filesystems, an unprivileged run, and signals in the middle of a test.
//! Needs root; skips with a message otherwise.

use std::time::Duration;

use crate::common::{
    Dnsmasq, Ext4, LoopOptions, pveprobe, resolv_conf, root_or_skip, stderr, stdout, workdir,
};

fn statvfs_gib(path: &std::path::Path) -> String {
    let vfs = nix::sys::statvfs::statvfs(path).unwrap();
    let bytes = vfs.blocks() as u64 * vfs.fragment_size() as u64;
    format!(
        "{:.2}",
        (bytes / 1024) as f64 * 1024.0 / (1u64 << 30) as f64
    )
}

fn all_eight_lines(sector_size: Option<u32>) {
    let fs = Ext4::new(
        1024,
        LoopOptions {
            sector_size,
            partitions: false,
        },
        &[],
        "rw",
    );
    let dns = Dnsmasq::start();
    let dir = workdir();
    let conf = resolv_conf(
        dir.path(),
        &format!("# test\nnameserver {}\nsearch pve.test\n", dns.addr),
    );
    let out = pveprobe()
        .args(["--duration", "0.5", "--resolv-conf"])
        .arg(&conf)
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(lines.len(), 8, "{}", stdout(&out));
    assert_eq!(
        lines["HD SIZE"],
        format!("{} GB ({})", statvfs_gib(fs.mount.path()), fs.device.path())
    );
    assert!(crate::common::figure(&lines, "BUFFERED READS") > 0.0);
    assert!(crate::common::figure(&lines, "AVERAGE SEEK TIME") > 0.0);
    assert!(crate::common::figure(&lines, "FSYNCS/SECOND") > 0.0);
    assert!(crate::common::figure(&lines, "REGEX/SECOND") > 0.0);
    assert!(lines["DNS INT"].ends_with(" ms (pve.test)"), "{lines:?}");
    assert!(
        fs.mount.leftovers().is_empty(),
        "left behind: {:?}",
        fs.mount.leftovers()
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn all_eight_lines_on_ext4_loop_device() {
    if root_or_skip() {
        all_eight_lines(None);
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn all_eight_lines_on_4kn_loop_device() {
    if root_or_skip() {
        all_eight_lines(Some(4096));
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn seek_reads_use_the_logical_block_size() {
    if !root_or_skip() {
        return;
    }
    // O_DIRECT reads of 512 bytes fail on a 4Kn device: a figure proves the
    // probe read whole 4096-byte blocks at 4096-aligned offsets.
    let fs = Ext4::new(
        256,
        LoopOptions {
            sector_size: Some(4096),
            partitions: false,
        },
        &[],
        "rw",
    );
    let size = std::fs::read_to_string(format!(
        "/sys/class/block/{}/queue/logical_block_size",
        fs.device.dev.file_name().unwrap().to_str().unwrap()
    ))
    .unwrap();
    assert_eq!(size.trim(), "4096");
    let out = pveprobe()
        .args(["--tests", "seek", "--duration", "0.3"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        crate::common::figure(
            &crate::common::pveperf_lines(&stdout(&out)),
            "AVERAGE SEEK TIME"
        ) > 0.0
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn read_only_mount_skips_fsync_with_a_clear_note() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(128, LoopOptions::default(), &[], "ro");
    let out = pveprobe()
        .args(["--tests", "cpu,fsync", "--duration", "0.3"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(lines.contains_key("CPU BOGOMIPS") && !lines.contains_key("FSYNCS/SECOND"));
    assert!(
        stderr(&out).contains("FSYNCS/SECOND: not measured: "),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("is on a read-only filesystem"),
        "{}",
        stderr(&out)
    );
}

/// Fills a filesystem, leaving about `keep_kib` KiB free.
fn fill(path: &std::path::Path, keep_kib: u64) {
    use std::io::Write;
    let vfs = nix::sys::statvfs::statvfs(path).unwrap();
    let free = vfs.blocks_free() as u64 * vfs.fragment_size() as u64;
    let mut file = std::fs::File::create(path.join("filler")).unwrap();
    let chunk = vec![0x55u8; 1 << 20];
    let mut left = free.saturating_sub(keep_kib * 1024);
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        if file.write_all(&chunk[..n]).is_err() {
            break;
        }
        left -= n as u64;
    }
    let _ = file.sync_all();
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn full_filesystem_is_reported_not_measured() {
    if !root_or_skip() {
        return;
    }
    // 5% reserved for root: filled to the reserve, unprivileged space is 0.
    let fs = Ext4::new(64, LoopOptions::default(), &["-m", "5"], "rw");
    fill(fs.mount.path(), 0);
    let out = pveprobe()
        .args(["--tests", "fsync", "--duration", "0.3"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!stdout(&out).contains("FSYNCS"));
    assert!(
        stderr(&out).contains("FSYNCS/SECOND: not measured: no space available on /dev/loop"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs.mount.leftovers(), ["filler"]);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn running_out_of_space_mid_test_cleans_up() {
    if !root_or_skip() {
        return;
    }
    // No reserve and ~120 KiB left: the 300 rotating files need ~1.2 MiB,
    // so a write fails with ENOSPC part-way through the test.
    let fs = Ext4::new(64, LoopOptions::default(), &["-m", "0"], "rw");
    fill(fs.mount.path(), 120);
    let out = pveprobe()
        .args(["--tests", "fsync", "--duration", "2"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!stdout(&out).contains("FSYNCS"));
    assert!(
        stderr(&out).contains("No space left on device"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs.mount.leftovers(),
        ["filler"],
        "scratch directory left behind"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn unprivileged_run_says_what_it_could_not_do() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(128, LoopOptions::default(), &[], "rw");
    let target = fs.mount.path().join("nobody");
    std::fs::create_dir(&target).unwrap();
    nix::unistd::chown(&target, Some(65534.into()), Some(65534.into())).unwrap();
    let out = {
        use std::os::unix::process::CommandExt;
        pveprobe()
            .args(["--tests", "read,seek,fsync", "--duration", "0.3"])
            .arg(&target)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap()
    };
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(
        lines.keys().collect::<Vec<_>>(),
        ["FSYNCS/SECOND", "HD SIZE"]
    );
    assert_eq!(
        err.matches("page cache not dropped (not root)").count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("BUFFERED READS: not measured: cannot open /dev/loop"),
        "{err}"
    );
    assert!(
        err.contains("(reading a disk needs root): Permission denied"),
        "{err}"
    );
    assert!(err.contains("AVERAGE SEEK TIME: not measured"), "{err}");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

fn signal_mid_fsync(signal: nix::sys::signal::Signal) {
    let fs = Ext4::new(128, LoopOptions::default(), &[], "rw");
    let mut child = pveprobe()
        .args(["--tests", "fsync", "--duration", "60"])
        .arg(fs.mount.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the scratch directory holds files: the test is running.
    let mut running = false;
    for _ in 0..500 {
        let files = std::fs::read_dir(fs.mount.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("pveprobe."))
            .filter_map(|e| std::fs::read_dir(e.path()).ok())
            .map(|d| d.count())
            .sum::<usize>();
        if files > 10 {
            running = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(running, "the fsync test never started");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let status = crate::common::wait_within(&mut child, Duration::from_secs(10));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + signal as i32), "{err}");
    assert!(
        err.contains(&format!("interrupted by {}", signal.as_str())),
        "{err}"
    );
    assert!(
        fs.mount.leftovers().is_empty(),
        "left behind: {:?}",
        fs.mount.leftovers()
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sigint_mid_fsync_removes_the_scratch_directory() {
    if root_or_skip() {
        signal_mid_fsync(nix::sys::signal::Signal::SIGINT);
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sigterm_mid_fsync_removes_the_scratch_directory() {
    if root_or_skip() {
        signal_mid_fsync(nix::sys::signal::Signal::SIGTERM);
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn buffered_reads_stop_at_the_end_of_a_small_device() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(16, LoopOptions::default(), &[], "rw");
    let out = pveprobe()
        .args(["--tests", "read", "--duration", "30"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        crate::common::figure(
            &crate::common::pveperf_lines(&stdout(&out)),
            "BUFFERED READS"
        ) > 0.0
    );
    assert!(
        stderr(&out).contains("(16777216 bytes) was read before the window ended"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn json_from_a_4kn_loop_device_run() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(
        256,
        LoopOptions {
            sector_size: Some(4096),
            partitions: false,
        },
        &[],
        "rw",
    );
    let out = pveprobe()
        .args([
            "--tests",
            "read,seek,fsync",
            "--duration",
            "0.3",
            "--runs",
            "2",
            "--output-format",
            "json-pretty",
        ])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    crate::common::validate_schema(&doc);
    let figures = &doc["figures"];
    assert_eq!(figures["average_seek_time"]["block_size"], 4096);
    assert_eq!(figures["average_seek_time"]["device"], fs.device.path());
    assert_eq!(figures["buffered_reads"]["device"], fs.device.path());
    assert_eq!(
        figures["buffered_reads"]["samples"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let seek = &figures["average_seek_time"];
    assert!(seek["latency"]["count"].as_u64().unwrap() >= 2);
    assert!(
        seek["latency"]["p50_us"].as_f64().unwrap() <= seek["latency"]["p99_us"].as_f64().unwrap()
    );
    assert_eq!(doc["filesystem"]["source"], fs.device.path());
    assert_eq!(doc["filesystem"]["fstype"], "ext4");
    assert!(
        doc["not_measured"].as_array().unwrap().is_empty(),
        "{}",
        doc["not_measured"]
    );
    assert!(fs.mount.leftovers().is_empty());
}
