//! The binary run under the name `pveperf`, through a symlink in a temporary
//! directory: pveperf's command line, lines and exit statuses. The usage
//! checks need no root; full runs need root (a loop device, dnsmasq on port
//! 53, and a private mount namespace in which the test's resolv.conf is bound
//! over /etc/resolv.conf, so the host's resolver is never asked).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{
    Dnsmasq, Ext4, LoopOptions, SilentServer, resolv_conf, root_or_skip, stderr, stdout, workdir,
};

/// A directory holding `pveperf`, a symlink to the binary under test.
fn pveperf_link() -> (tempfile::TempDir, PathBuf) {
    let dir = workdir();
    let link = dir.path().join("pveperf");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pveprobe"), &link).unwrap();
    (dir, link)
}

/// `program args` in a private mount namespace where `conf` is bound over
/// /etc/resolv.conf. Absolute paths, so the caller may set any PATH.
fn with_resolv_conf(conf: &Path, program: &Path) -> Command {
    let mut cmd = Command::new("/usr/bin/unshare");
    cmd.args([
        "--mount",
        "--propagation",
        "private",
        "/bin/sh",
        "-c",
        r#"/bin/mount --bind "$0" /etc/resolv.conf && exec "$@""#,
    ])
    .arg(conf)
    .arg(program)
    .env(crate::common::NO_LOCK.0, crate::common::NO_LOCK.1)
    .stdin(Stdio::null());
    cmd
}

#[test]
fn two_or_more_arguments_print_pveperfs_usage_and_exit_255() {
    let (dir, link) = pveperf_link();
    for args in [
        &["a", "b"][..],
        &["/", "/tmp"],
        &["--help", "x"],
        &["/", "/", "/"],
    ] {
        let out = Command::new(&link)
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(255), "{args:?}");
        assert_eq!(stderr(&out), "usage: pveperf [PATH]\n", "{args:?}");
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["pveperf"], "a usage error creates nothing");
}

#[test]
fn the_name_pveprobe_keeps_its_own_command_line() {
    let (dir, _link) = pveperf_link();
    let other = dir.path().join("pveprobe");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pveprobe"), &other).unwrap();
    let out = Command::new(&other).args(["a", "b"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("Usage: pveprobe"), "{}", stderr(&out));
}

/// A `perl` that prints a fixed count: proves which engine gave REGEX/SECOND.
fn fake_perl(dir: &Path, count: u64) -> PathBuf {
    let bin = dir.join("fake-perl");
    std::fs::create_dir(&bin).unwrap();
    let perl = bin.join("perl");
    std::fs::write(&perl, format!("#!/bin/sh\necho {count}\n")).unwrap();
    std::fs::set_permissions(&perl, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn as_pveperf_on_a_loop_device_prints_pveperfs_eight_lines_with_perls_figure() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(256, LoopOptions::default(), &[], "rw");
    let dns = Dnsmasq::start();
    let (dir, link) = pveperf_link();
    let conf = resolv_conf(
        dir.path(),
        &format!("nameserver {}\nsearch pveperf.test\n", dns.addr),
    );
    let perl_dir = fake_perl(dir.path(), 4242);
    let out = with_resolv_conf(&conf, &link)
        .arg(fs.mount.path())
        .env("PATH", &perl_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(lines.len(), 8, "{}", stdout(&out));
    assert_eq!(
        lines["REGEX/SECOND"], "4242",
        "REGEX/SECOND must come from perl when perl runs"
    );
    assert!(
        lines["HD SIZE"].ends_with(&format!(" GB ({})", fs.device.path())),
        "{lines:?}"
    );
    assert!(crate::common::figure(&lines, "BUFFERED READS") > 0.0);
    assert!(crate::common::figure(&lines, "AVERAGE SEEK TIME") > 0.0);
    assert!(crate::common::figure(&lines, "FSYNCS/SECOND") > 0.0);
    assert!(
        lines["DNS INT"].ends_with(" ms (pveperf.test)"),
        "the bound resolv.conf was not read: {lines:?}"
    );
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn as_pveperf_an_option_is_a_path_missing_lines_exit_0_and_no_perl_means_rust() {
    if !root_or_skip() {
        return;
    }
    let dns = Dnsmasq::start();
    let silent = SilentServer::start();
    let (dir, link) = pveperf_link();
    // pveperf's DNS: Net::DNS gives each of the two servers half a second,
    // and a search line with two domains gives no DNS INT line.
    let conf = resolv_conf(
        dir.path(),
        &format!(
            "nameserver {}\nnameserver {}\nsearch a.test b.test\n",
            silent.addr, dns.addr
        ),
    );
    let out = with_resolv_conf(&conf, &link)
        .arg("--help")
        .current_dir(dir.path())
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "pveperf exits 0 even when lines are missing: {}",
        stderr(&out)
    );
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(
        lines.keys().collect::<Vec<_>>(),
        ["CPU BOGOMIPS", "DNS EXT", "REGEX/SECOND"],
        "{}",
        stdout(&out)
    );
    assert!(crate::common::figure(&lines, "REGEX/SECOND") > 0.0);
    // Half of Net::DNS's second waited on the dead first server, per query.
    let ext = crate::common::figure(&lines, "DNS EXT");
    assert!((500.0..750.0).contains(&ext), "DNS EXT {ext} ms");
    let err = stderr(&out);
    assert!(
        err.contains("pveperf: HD SIZE: not measured: ") && err.contains("--help"),
        "{err}"
    );
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["pveperf", "resolv.conf"], "nothing may be created");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn as_pveperf_it_waits_for_another_probe_without_a_word() {
    if !root_or_skip() {
        return;
    }
    let dns = Dnsmasq::start();
    let (dir, link) = pveperf_link();
    let conf = resolv_conf(dir.path(), &format!("nameserver {}\n", dns.addr));
    let lock = dir.path().join("pveprobe.lock");
    let busy = dir.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    let mut first = crate::common::pveprobe()
        .args(["--tests", "fsync", "--duration", "2"])
        .arg(&busy)
        .env("PVEPROBE_LOCK", &lock)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains(&format!("pid {}", first.id())))
    {
        assert!(
            start.elapsed().as_secs() < 10,
            "the first probe never locked"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // A missing PATH: pveperf's CPU and DNS lines only.
    let out = with_resolv_conf(&conf, &link)
        .arg(dir.path().join("missing"))
        .env("PVEPROBE_LOCK", &lock)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let first_done = first.wait().unwrap();
    assert!(first_done.success());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // It measured after the first probe had finished its two seconds.
    assert!(start.elapsed().as_secs_f64() > 2.0 + 3.0, "it did not wait");
    assert!(!stderr(&out).contains("another probe"), "{}", stderr(&out));
    assert!(crate::common::pveperf_lines(&stdout(&out)).contains_key("DNS EXT"));
}
