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

/// Every test that needs root or a tool is `#[ignore = "needs ...: ..."]`,
/// so a run without them shows it among the ignored in the runner's
/// summary, not only in a stderr line the runner hides.
#[test]
fn every_test_that_needs_root_or_a_tool_is_counted_as_ignored_without_it() {
    // Spelled in parts, so this test's own text does not call them.
    let calls = [
        concat!("root_or_skip", "()"),
        concat!("needs_tools", "("),
        concat!("needs_qga", "()"),
        concat!("needs_ceph", "()"),
        concat!("needs_qemu", "()"),
    ];
    let (mut unmarked, mut marked) = (Vec::new(), 0);
    for (path, text) in crate::common::rust_files("tests/it") {
        let lines: Vec<&str> = text.lines().collect();
        for f in crate::common::functions(&lines) {
            let needs_root = f.body.iter().any(|l| calls.iter().any(|c| l.contains(c)));
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

/// A test that needs a tool the machine lacks is counted as ignored, and
/// fails when it is asked to run (under CI or not): never passed. The
/// tools are hidden from this binary, run again, by a PATH that holds
/// none of them; a guest test (qemu-ga) and a ceph test (Ceph's daemons
/// and tools) are asked for.
#[test]
fn a_test_whose_tool_is_missing_is_ignored_and_never_passes() {
    let empty = tempfile::tempdir().unwrap();
    let run = |name: &str, ignored: bool, ci: bool| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        if ignored {
            cmd.arg("--ignored");
        }
        cmd.args(["--exact", name, "--nocapture"])
            .env("PATH", empty.path())
            .env_remove("CI");
        if ci {
            cmd.env("CI", "true");
        }
        cmd.output().unwrap()
    };
    for (name, tool) in [
        (
            "guest::the_text_table_gives_guest_host_and_share",
            "qemu-ga",
        ),
        (
            "ceph::without_yes_or_a_terminal_nothing_is_written_and_dry_run_says_the_plan",
            "ceph-mon",
        ),
    ] {
        let out = run(name, false, false);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        assert!(
            stdout(&out).contains("0 passed; 0 failed; 1 ignored"),
            "{name}: {}",
            stdout(&out)
        );
        for ci in [false, true] {
            let out = run(name, true, ci);
            assert!(
                !out.status.success(),
                "{name} passed without {tool}: {}",
                stdout(&out)
            );
            assert!(
                stdout(&out).contains("0 passed; 1 failed"),
                "{}",
                stdout(&out)
            );
            assert!(
                stderr(&out).contains(&format!("needs {tool}")),
                "{}",
                stderr(&out)
            );
        }
    }
}
