//! Limits: the peak memory of a default run stays small (pveperf's Perl
//! uses about 15 MiB), whatever the device size or the window. Needs root.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{
    Answer, Ext4, LoopOptions, Responder, pveprobe, resolv_conf, root_or_skip, stderr, stdout,
    workdir,
};

/// The most a default run may hold in memory.
const MAX_RSS_KIB: i64 = 20 * 1024;

/// Runs the probe with `args` and returns (exit status, peak RSS in KiB),
/// read with wait4(2) from the kernel's accounting of that child. The
/// child is forked from a fresh process of this test binary
/// ([`one_run_of_the_probe`]): a child's peak counts the pages of the
/// process it was forked from until its exec, and this process holds
/// every other test's memory.
fn peak_rss(args: &[&str], path: &Path, conf: &Path) -> (i32, i64) {
    let mut argv: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    argv.extend([
        "--resolv-conf".into(),
        conf.display().to_string(),
        path.display().to_string(),
    ]);
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "lines::limits::one_run_of_the_probe",
            "--nocapture",
        ])
        .env(ARGS, serde_json::to_string(&argv).unwrap())
        .output()
        .unwrap();
    let text = stdout(&out);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("peak_rss "))
        .unwrap_or_else(|| panic!("{text}{}", stderr(&out)));
    let (code, rss) = line.split_once(' ').unwrap();
    (code.parse().unwrap(), rss.parse().unwrap())
}

/// The probe's arguments, as JSON, for [`one_run_of_the_probe`].
const ARGS: &str = "PVEPROBE_TEST_RSS_ARGS";

/// Run by [`peak_rss`] in a fresh process: one probe with the arguments
/// in `PVEPROBE_TEST_RSS_ARGS`; prints `peak_rss STATUS KIB`.
#[test]
#[ignore = "run by peak_rss in a fresh process of the test binary"]
fn one_run_of_the_probe() {
    let Some(json) = std::env::var_os(ARGS) else {
        return;
    };
    let args: Vec<String> = serde_json::from_str(json.to_str().unwrap()).unwrap();
    let child = pveprobe()
        .args(&args)
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
    println!("peak_rss {} {}", libc::WEXITSTATUS(status), usage.ru_maxrss);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_default_run_stays_under_20_mib_whatever_the_device_size_or_window() {
    if !root_or_skip() {
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
