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
    if !root_or_skip("needs_root") {
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
fn a_skip_for_lack_of_root_fails_under_ci() {
    if !root_or_skip("a_skip_for_lack_of_root_fails_under_ci") {
        return;
    }
    // A developer's machine: the test skips and says so.
    let out = as_nobody().output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("SKIPPED needs_root: needs root"),
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
