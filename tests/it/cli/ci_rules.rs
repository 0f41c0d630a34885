//! CI never passes by skipping: a test that needs root, run without root,
//! skips visibly on a developer's machine and fails when `CI` is set. The
//! test binary is run again as `nobody`, once with and once
//! without `CI`, on a test that needs root.

use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::common::{root_or_skip, stderr, stdout};

/// Needs root, and does nothing else: run by the test below as `nobody`.
#[test]
#[ignore = "run as nobody by a_skip_for_lack_of_root_fails_under_ci"]
fn needs_root() {
    if !root_or_skip() {
        return;
    }
    assert!(crate::common::is_root());
}

/// This binary, as `nobody`, running only [`needs_root`].
fn as_nobody() -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        "cli::ci_rules::needs_root",
        "--nocapture",
    ])
    .env_remove("CI")
    .env_remove("PVEPROBE_TEST_UNPRIVILEGED")
    .current_dir("/")
    .uid(65534)
    .gid(65534);
    cmd
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_skip_for_lack_of_root_fails_under_ci() {
    if !root_or_skip() {
        return;
    }
    // Without root and without --include-ignored, the runner's summary
    // counts it as ignored, with its reason.
    let mut listed = Command::new(std::env::current_exe().unwrap());
    listed
        .args(["--exact", "cli::ci_rules::needs_root"])
        .env_remove("CI")
        .current_dir("/")
        .uid(65534)
        .gid(65534);
    let out = listed.output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("0 passed; 0 failed; 1 ignored"),
        "{}",
        stdout(&out)
    );
    // A developer's machine: the test skips and says so.
    let out = as_nobody().output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("SKIPPED cli::ci_rules::needs_root: needs root"),
        "{}",
        stderr(&out)
    );
    // CI: the same skip is a failure, whatever PVEPROBE_TEST_UNPRIVILEGED says.
    for unprivileged in [false, true] {
        let mut cmd = as_nobody();
        cmd.env("CI", "true");
        if unprivileged {
            cmd.env("PVEPROBE_TEST_UNPRIVILEGED", "1");
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success(), "{}{}", stdout(&out), stderr(&out));
        assert!(
            stderr(&out).contains("needs_root needs root") && stderr(&out).contains("CI is set"),
            "{}",
            stderr(&out)
        );
    }
}

/// Every test that needs root is `#[ignore = "needs root: ..."]`, so a run
/// without root shows it among the ignored in the runner's summary, not
/// only in a stderr line the runner hides.
#[test]
fn every_test_that_needs_root_is_counted_as_ignored_without_it() {
    // Spelled in two parts, so this test's own text does not call it.
    let call = concat!("root_or_skip", "()");
    let (mut unmarked, mut marked) = (Vec::new(), 0);
    for (path, text) in crate::common::rust_files("tests/it") {
        let lines: Vec<&str> = text.lines().collect();
        for f in crate::common::functions(&lines) {
            let needs_root = f.body.iter().any(|l| l.contains(call));
            if !needs_root || !f.attrs.contains(&"#[test]") {
                continue;
            }
            if f.attrs.iter().any(|a| a.starts_with("#[ignore")) {
                marked += 1;
            } else {
                unmarked.push(format!("{}: {}", path.display(), f.name));
            }
        }
    }
    assert!(marked > 100, "{marked} tests that need root");
    assert!(unmarked.is_empty(), "not #[ignore]d: {unmarked:?}");
}
