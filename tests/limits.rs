//! Limits: the peak memory of a default run stays small (pveperf's Perl
//! uses about 15 MiB), whatever the device size or the window. Needs root.

mod common;

use std::process::Stdio;

use common::{Answer, Ext4, LoopOptions, Responder, pveprobe, resolv_conf, root_or_skip, workdir};

/// The most a default run may hold in memory.
const MAX_RSS_KIB: i64 = 20 * 1024;

/// Runs the probe with `args` and returns (exit status, peak RSS in KiB),
/// read with wait4(2) from the kernel's accounting of that child.
fn peak_rss(args: &[&str], path: &std::path::Path, conf: &std::path::Path) -> (i32, i64) {
    let child = pveprobe()
        .args(args)
        .arg("--resolv-conf")
        .arg(conf)
        .arg(path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it and `status`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    std::mem::forget(child);
    assert!(libc::WIFEXITED(status), "status {status:#x}");
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn a_default_run_stays_under_20_mib_whatever_the_device_size_or_window() {
    if !root_or_skip("a_default_run_stays_under_20_mib_whatever_the_device_size_or_window") {
        return;
    }
    let dns = Responder::start(Answer::Proper);
    let dir = workdir();
    let conf = resolv_conf(
        dir.path(),
        &format!("nameserver {}\nsearch pve.test\n", dns.addr),
    );
    let mut seen = Vec::new();
    for (size_mib, duration) in [(512, "3"), (8192, "4")] {
        let fs = Ext4::new(size_mib, LoopOptions::default(), &[], "rw");
        let (code, rss) = peak_rss(&["--duration", duration], fs.mount.path(), &conf);
        assert_eq!(code, 0, "{size_mib} MiB, {duration} s");
        assert!(
            rss < MAX_RSS_KIB,
            "{size_mib} MiB device, {duration} s windows: peak RSS {rss} KiB"
        );
        assert!(fs.mount.leftovers().is_empty());
        seen.push(rss);
    }
    eprintln!("peak RSS of default runs (KiB): {seen:?}");
}
