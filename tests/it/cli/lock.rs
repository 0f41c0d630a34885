//! One probe at a time: a second probe on the same host names the first
//! and waits for it (JSON records the wait), or refuses with --no-wait (as
//! pveperf it waits without a word: tests/it/lines/pveperf_mode.rs). The lock file
//! is the test's own (PVEPROBE_LOCK), so the suite's other probes are not
//! serialized.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{stderr, stdout, workdir};

/// A probe holding `lock` for about `secs` seconds (its fsync test).
fn first_probe(lock: &Path, target: &Path, secs: &str) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_pveprobe"))
        .args(["--tests", "fsync", "--duration", secs])
        .arg(target)
        .env("PVEPROBE_LOCK", lock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until it has taken the lock and said who it is.
    let start = Instant::now();
    while !std::fs::read_to_string(lock).is_ok_and(|t| t.contains(&format!("pid {}", child.id()))) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the first probe never locked"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

fn second_probe(lock: &Path, target: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pveprobe"))
        .args([
            "--tests",
            "fsync",
            "--duration",
            "0.1",
            "--output-format",
            "json",
        ])
        .args(extra)
        .arg(target)
        .env("PVEPROBE_LOCK", lock)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_second_probe_names_the_first_and_waits_for_it() {
    let dir = workdir();
    let lock = dir.path().join("pveprobe.lock");
    let mut first = first_probe(&lock, dir.path(), "1.5");
    let out = second_probe(&lock, dir.path(), &[]);
    let first_status = first.wait().unwrap();
    assert!(first_status.success());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "pveprobe: another probe is measuring on this host (pid {}, started ",
            first.id()
        )) && err.contains("waiting for it to finish (--no-wait refuses instead)"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    crate::common::validate_schema(&doc);
    let waited = &doc["waited_for_probe"];
    assert!(waited["seconds"].as_f64().unwrap() > 0.3, "{waited}");
    assert!(
        waited["holder"]
            .as_str()
            .unwrap()
            .starts_with(&format!("pid {}", first.id())),
        "{waited}"
    );
    // Alone, a probe waits for nobody and says nothing of it.
    let alone = second_probe(&lock, dir.path(), &[]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&alone)).unwrap();
    assert!(doc.get("waited_for_probe").is_none(), "{doc}");
    assert!(!stderr(&alone).contains("another probe"));
}

#[test]
fn no_wait_refuses_with_status_2_and_measures_nothing() {
    let dir = workdir();
    let lock = dir.path().join("pveprobe.lock");
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let mut first = first_probe(&lock, dir.path(), "1");
    let out = second_probe(&lock, &target, &["--no-wait"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "another probe is measuring on this host (pid {}",
            first.id()
        )) && stderr(&out).contains("not waiting (--no-wait)"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    assert!(first.wait().unwrap().success());
}
