//! The command line and bad input: no root needed.

use crate::common::{pveprobe, stderr, stdout, workdir};

#[test]
fn missing_path_is_a_clear_error_and_creates_nothing() {
    let dir = workdir();
    let missing = dir.path().join("no such dir");
    let out = pveprobe().arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "pveprobe: {}: No such file or directory\n",
            missing.display()
        )
    );
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn file_instead_of_directory_is_refused() {
    let dir = workdir();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let out = pveprobe().arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!("pveprobe: {}: not a directory\n", file.display())
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn more_than_one_path_is_a_usage_error() {
    let out = pveprobe().args(["/", "/tmp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Usage: pveprobe"), "{}", stderr(&out));
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["--duration", "0"][..],
        &["--tests", "cpu,nope"],
        &["--regex-engine", "pcre"],
        &["--dns-timeout", "x"],
    ] {
        let out = pveprobe().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn help_explains_every_figure_and_the_regex_scale() {
    let out = pveprobe().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = stdout(&out);
    for label in [
        "CPU BOGOMIPS",
        "REGEX/SECOND",
        "HD SIZE",
        "BUFFERED READS",
        "AVERAGE SEEK TIME",
        "FSYNCS/SECOND",
        "DNS EXT",
        "DNS INT",
    ] {
        assert!(help.contains(label), "--help does not explain {label}");
    }
    for words in [
        "3 to 7 times pveperf",
        "--regex-engine",
        "hdparm -t",
        "ioping -D",
        "EXIT STATUS",
        "--dns-timeout",
    ] {
        assert!(help.contains(words), "--help lacks {words:?}");
    }
}

#[test]
fn version_names_the_crate_version() {
    let out = pveprobe().arg("--version").output().unwrap();
    assert_eq!(
        stdout(&out),
        format!("pveprobe {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn path_with_shell_characters_just_works() {
    let dir = workdir();
    let odd = dir.path().join("a b'c\"$(touch pwned);`touch pwned2`\\x");
    std::fs::create_dir(&odd).unwrap();
    let out = pveprobe()
        .args(["--tests", "cpu,fsync", "--duration", "0.2"])
        .arg(&odd)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(crate::common::figure(&lines, "FSYNCS/SECOND") > 0.0);
    assert!(lines.contains_key("HD SIZE"));
    assert_eq!(
        std::fs::read_dir(&odd).unwrap().count(),
        0,
        "scratch directory left behind"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "something else was created"
    );
}

#[test]
fn a_path_starting_with_a_dash_is_taken_after_double_dash() {
    let dir = workdir();
    std::fs::create_dir(dir.path().join("-v")).unwrap();
    let out = pveprobe()
        .args(["--tests", "cpu", "--", "-v"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("CPU BOGOMIPS:"));
}

#[test]
fn bogomips_equals_the_sum_in_proc_cpuinfo() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let re = regex::Regex::new(r"(?mi)^bogomips\s*:\s*([0-9.]+)\s*$").unwrap();
    let expected: f64 = re
        .captures_iter(&cpuinfo)
        .map(|c| c[1].parse::<f64>().unwrap())
        .sum();
    let out = pveprobe().args(["--tests", "cpu", "/"]).output().unwrap();
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(lines["CPU BOGOMIPS"], format!("{expected:.2}"));
}

#[test]
#[ignore = "needs perl: pveperf's own loop runs in it (scripts/test runs it)"]
fn perl_engine_runs_pveperfs_loop() {
    crate::common::needs_tools(&["perl"], "perl-base");
    let out = pveprobe()
        .args([
            "--tests",
            "regex",
            "--regex-engine",
            "perl",
            "--duration",
            "0.3",
            "/",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        crate::common::figure(&crate::common::pveperf_lines(&stdout(&out)), "REGEX/SECOND") > 0.0
    );
}

#[test]
fn perl_engine_without_perl_says_so() {
    let out = pveprobe()
        .args([
            "--tests",
            "regex",
            "--regex-engine",
            "perl",
            "--duration",
            "0.1",
            "/",
        ])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!stdout(&out).contains("REGEX"));
    assert!(
        stderr(&out).contains("needs the host's perl, which is not installed"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs perl: pveperf's own loop runs in it (scripts/test runs it)"]
fn by_default_regex_second_is_perls_loop_on_pveperfs_scale() {
    crate::common::needs_tools(&["perl"], "perl-base");
    let out = pveprobe()
        .args([
            "--tests",
            "regex",
            "--duration",
            "0.3",
            "--output-format",
            "json",
            "/",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["settings"]["regex_engine"], "perl", "{json}");
    assert!(
        !stderr(&out).contains("not on pveperf's scale"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_perl_the_default_is_rusts_engine_and_stderr_says_its_scale() {
    let out = pveprobe()
        .args(["--tests", "regex", "--duration", "0.1", "/"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(crate::common::figure(&lines, "REGEX/SECOND") > 0.0);
    assert!(
        stderr(&out).contains("REGEX/SECOND: from Rust's regex engine")
            && stderr(&out).contains("not on pveperf's scale"),
        "{}",
        stderr(&out)
    );
    // Asked for, Rust's engine says the same.
    let out = pveprobe()
        .args([
            "--tests",
            "regex",
            "--regex-engine",
            "rust",
            "--duration",
            "0.1",
            "/",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("not on pveperf's scale"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tmpfs_has_no_device_lines_and_that_is_no_failure() {
    let out = pveprobe()
        .args(["--tests", "read,seek", "/dev/shm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(lines.keys().collect::<Vec<_>>(), ["HD SIZE"]);
    assert!(lines["HD SIZE"].ends_with("GB (tmpfs)"), "{lines:?}");
    assert!(
        stderr(&out).contains("BUFFERED READS: skipped: tmpfs (tmpfs) is not a block device"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_reader_that_stops_early_is_no_error() {
    let mut child = pveprobe()
        .args(["--tests", "cpu", "/"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close our end of stdout at once, like `pveprobe | head -0`.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Broken pipe"), "{}", stderr(&out));
}

#[test]
fn cluster_refuses_a_forwarded_value_that_is_not_text() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"/etc/r\xffconf");
    let out = pveprobe()
        .args(["cluster", "--dry-run", "--nodes", "a", "--resolv-conf"])
        .arg(bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains("the value of --resolv-conf") && stderr(&out).contains("not UTF-8"),
        "{}",
        stderr(&out)
    );
}

/// Every command that stops early says why in one line and exits with the
/// status that line's error carries (printed once, by main).
#[test]
fn each_command_stops_with_one_line_and_its_status() {
    let dir = workdir();
    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], i32, &str); 6] = [
        (&["compare", missing], 2, "missing.json"),
        (
            &["compare", "--output-format", "influx", missing],
            2,
            "pveprobe compare",
        ),
        (&["storages", "--pve-config", missing], 2, "missing.json"),
        (
            &["cluster", "--nodes", "a", "--remote-command", " "],
            2,
            "--remote-command is empty",
        ),
        (
            &["cluster", "--nodes", "a", "--remote-command", "'unfinished"],
            2,
            "--remote-command",
        ),
        (
            &["net", "--nodes", "a,b", "--plot", "path.svg", "a", "b"],
            2,
            "--plot draws the migration path",
        ),
    ];
    for (args, status, says) in cases {
        let out = pveprobe().args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.contains(says)).count(),
            1,
            "{args:?}: {err}"
        );
        if !err.starts_with("error:") {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("pveprobe: "), "{args:?}: {err}");
        }
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
}

/// The one output group: every command that writes a report takes its
/// five options, and what the report does not have (a picture, rows to
/// add to a file) is refused by the session in the same words, before
/// any work, with nothing written.
#[test]
fn the_output_group_refuses_what_a_report_lacks_before_any_work() {
    let dir = workdir();
    let missing = dir.path().join("missing");
    let plot = dir.path().join("p.svg");
    let out_file = dir.path().join("out.csv");
    let cases: [(Vec<&std::ffi::OsStr>, &str); 2] = [
        (
            vec![
                "storages".as_ref(),
                "--plot".as_ref(),
                plot.as_os_str(),
                "--pve-config".as_ref(),
                missing.as_os_str(),
            ],
            "pveprobe: --plot: pveprobe storages draws no picture\n",
        ),
        (
            vec![
                "storages".as_ref(),
                "--output-format".as_ref(),
                "csv".as_ref(),
                "--output".as_ref(),
                out_file.as_os_str(),
                "--append".as_ref(),
                "--pve-config".as_ref(),
                missing.as_os_str(),
            ],
            "pveprobe: --append: pveprobe storages adds no rows to a file; write it whole with --output\n",
        ),
    ];
    for (args, says) in cases {
        let out = pveprobe().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), says, "{args:?}");
        assert!(stdout(&out).is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
    // The group's options are in every reporting command's help, under Output.
    for command in [
        "storages", "compare", "cluster", "net", "qualify", "guest", "ceph", "load", "top",
    ] {
        let out = pveprobe().args([command, "--help"]).output().unwrap();
        let help = stdout(&out);
        for option in [
            "--quiet",
            "--output-format",
            "--output <FILE>",
            "--append",
            "--plot",
        ] {
            assert!(help.contains(option), "{command} --help lacks {option}");
        }
    }
}
