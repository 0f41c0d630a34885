//! JSON, CSV, repeated runs, compare and --baseline through the real
//! binary. No root needed: the fsync test runs in a temporary directory.

use std::path::{Path, PathBuf};

use crate::common::{fixture, pveprobe, stderr, stdout, workdir};

#[test]
fn json_keeps_every_sample_and_validates() {
    let dir = workdir();
    let out = pveprobe()
        .args([
            "--tests",
            "cpu,fsync",
            "--duration",
            "0.2",
            "--runs",
            "3",
            "--output-format",
            "json",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "json is one line");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    crate::common::validate_schema(&doc);
    let fsync = &doc["figures"]["fsyncs_per_second"];
    let mut samples: Vec<f64> = fsync["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(samples.len(), 3);
    samples.sort_by(f64::total_cmp);
    assert_eq!(
        fsync["value"].as_f64().unwrap(),
        samples[1],
        "value is the median"
    );
    assert_eq!(fsync["min"].as_f64().unwrap(), samples[0]);
    assert!(fsync["latency"]["count"].as_u64().unwrap() >= 3);
    assert_eq!(doc["settings"]["runs"], 3);
    assert_eq!(doc["path"], dir.path().to_str().unwrap());
    assert!(
        doc["figures"].get("regex_per_second").is_none(),
        "not requested"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn no_latency_leaves_the_histogram_out() {
    let dir = workdir();
    let out = pveprobe()
        .args([
            "--tests",
            "fsync",
            "--duration",
            "0.1",
            "--no-latency",
            "--output-format",
            "json",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(doc["figures"]["fsyncs_per_second"].get("latency").is_none());
    assert!(
        doc["figures"]["fsyncs_per_second"]["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn csv_append_writes_the_header_once() {
    let dir = workdir();
    let target = dir.path().join("probe dir");
    std::fs::create_dir(&target).unwrap();
    let csv = dir.path().join("fleet.csv");
    for _ in 0..2 {
        let out = pveprobe()
            .args([
                "--tests",
                "cpu,fsync",
                "--duration",
                "0.1",
                "--output-format",
                "csv",
                "--append",
                "--output",
            ])
            .arg(&csv)
            .arg(&target)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).is_empty(), "rows go to the file");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    assert_eq!(header[0], "hostname");
    assert!(header.contains(&"fsyncs_per_s".to_string()));
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in &rows {
        assert!(row[col("fsyncs_per_s")].parse::<f64>().unwrap() > 0.0);
        assert_eq!(&row[col("path")], target.to_str().unwrap());
        assert_eq!(
            &row[col("buffered_reads_mib_per_s")],
            "",
            "not requested: empty cell"
        );
    }
}

#[test]
fn append_refuses_a_file_with_another_header_before_measuring() {
    let dir = workdir();
    let csv = dir.path().join("other.csv");
    std::fs::write(&csv, "name,value\nx,1\n").unwrap();
    let out = pveprobe()
        .args([
            "--tests",
            "cpu,fsync",
            "--output-format",
            "csv",
            "--append",
            "--output",
        ])
        .arg(&csv)
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().count(),
        1,
        "refused before measuring: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out)
            .contains("has another header (2 columns, starting \"name\"); not appending to it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "name,value\nx,1\n");
    let out = pveprobe()
        .args([
            "--tests",
            "cpu",
            "--output-format",
            "json",
            "--append",
            "--output",
        ])
        .arg(&csv)
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--append works with --output-format csv only"));
}

#[test]
fn verbose_text_adds_runs_latency_and_guidance_after_the_lines() {
    let dir = workdir();
    let out = pveprobe()
        .args(["--tests", "fsync", "--duration", "0.1", "--runs", "2", "-v"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    let (lines, details) = text
        .split_once("\nDetails:\n")
        .unwrap_or_else(|| panic!("no details in {text}"));
    crate::common::pveperf_lines(lines);
    assert!(
        details.contains("FSYNCS/SECOND: ") && details.contains("(median of 2 runs: min "),
        "{details}"
    );
    assert!(details.contains("latency: p50 "), "{details}");
    assert!(details.contains("pve-docs: above 200: "), "{details}");
}

#[test]
fn compare_marks_ratios_and_noise() {
    let out = pveprobe()
        .arg("compare")
        .args([
            fixture("results/pve1.json"),
            fixture("results/pve2.json"),
            fixture("results/pve3-single-run.json"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let row = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label}"))
    };
    let words = |label: &str| {
        row(label)
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // FSYNCS: 3050 -> 1010, ratio 0.331, worse for both later files.
    assert_eq!(
        &words("FSYNCS/SECOND")[2..],
        [
            "3050.00", "1010.00", "0.331", "worse", "1010.00", "0.331", "worse"
        ]
    );
    // BUFFERED READS 510 -> 505: within both files' ranges = noise; pve3 has one sample: no noise judgement.
    assert_eq!(
        &words("BUFFERED READS")[3..],
        [
            "510.00", "505.00", "0.990", "noise", "505.00", "0.990", "worse"
        ]
    );
    assert_eq!(
        &words("AVERAGE SEEK TIME")[4..],
        [
            "0.210", "0.410", "1.952", "worse", "0.410", "1.952", "worse"
        ]
    );
    assert!(!text.contains("DNS INT"));

    let out = pveprobe()
        .args(["compare", "--output-format", "csv"])
        .args([fixture("results/pve1.json"), fixture("results/pve2.json")])
        .output()
        .unwrap();
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "figure",
            "unit",
            "value: pve1 (pve1.json)",
            "value: pve2 (pve2.json)",
            "ratio: pve2 (pve2.json)",
            "verdict: pve2 (pve2.json)"
        ]
    );
    let fsync = reader
        .records()
        .map(Result::unwrap)
        .find(|r| &r[0] == "fsyncs_per_second")
        .unwrap();
    assert!((fsync[4].parse::<f64>().unwrap() - 1010.0 / 3050.0).abs() < 1e-12);
    assert_eq!(&fsync[5], "worse");
}

#[test]
fn compare_refuses_what_is_not_a_result() {
    let dir = workdir();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"x\": 1}").unwrap();
    let out = pveprobe()
        .arg("compare")
        .arg(fixture("results/pve1.json"))
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("bad.json is not a pveprobe JSON result"),
        "{}",
        stderr(&out)
    );
    let out = pveprobe()
        .arg("compare")
        .arg(dir.path().join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
}

fn baseline_with_fsyncs(dir: &Path, value: f64) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("results/pve1.json")).unwrap())
            .unwrap();
    // pve1.json predates the recorded fsync order; this baseline was measured in pveperf's.
    doc["settings"]["fsync_order"] = "pveperf".into();
    let fsync = &mut doc["figures"]["fsyncs_per_second"];
    fsync["value"] = value.into();
    fsync["samples"] = serde_json::json!([value]);
    fsync["min"] = value.into();
    fsync["max"] = value.into();
    let path = dir.join(format!("baseline-{value}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

#[test]
fn a_baseline_measured_in_another_fsync_order_is_not_ranked() {
    let dir = workdir();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    // pve1.json was written before FSYNCS/SECOND ran in pveperf's order:
    // its figure, however high, is on another scale and ranks nothing.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("results/pve1.json")).unwrap())
            .unwrap();
    assert!(doc["settings"].get("fsync_order").is_none());
    doc["figures"]["fsyncs_per_second"]["value"] = 1e9.into();
    let old = dir.path().join("old.json");
    std::fs::write(&old, doc.to_string()).unwrap();
    let out = pveprobe()
        .args(["--tests", "fsync", "--duration", "0.1", "--baseline"])
        .arg(&old)
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "unlike: FSYNCS/SECOND: fsync order write-then-fsync in [1], pveperf in [2]; not ranked"
        ),
        "{err}"
    );
    assert!(!err.contains("is worse than the baseline"), "{err}");
}

#[test]
fn baseline_exits_3_when_a_figure_is_worse() {
    let dir = workdir();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    // No disk on earth does 1e9 fsyncs a second: this run is worse.
    let out = pveprobe()
        .args(["--tests", "fsync", "--duration", "0.1", "--baseline"])
        .arg(baseline_with_fsyncs(dir.path(), 1e9))
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("FSYNCS/SECOND is worse than the baseline by more than 20%"),
        "{}",
        stderr(&out)
    );
    crate::common::pveperf_lines(&stdout(&out));
    // Against a baseline of 1 fsync a second, it is not.
    let out = pveprobe()
        .args([
            "--tests",
            "fsync",
            "--duration",
            "0.1",
            "--tolerance",
            "5",
            "--baseline",
        ])
        .arg(baseline_with_fsyncs(dir.path(), 1.0))
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("compared with the baseline"),
        "{}",
        stderr(&out)
    );
}

/// An extended figure ranks against a baseline too: SEQ WRITE of 1e9 MiB/s
/// makes any real run worse (exit 3); the same baseline written with zeros
/// (`--zero-data`) measured another way and is only marked `unlike`.
#[test]
fn baseline_ranks_an_extended_figure_and_marks_other_data() {
    let dir = workdir();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let run = |baseline: &Path| {
        pveprobe()
            .args(["--tests", "seqwrite", "--write-size", "1M", "--baseline"])
            .arg(baseline)
            .arg(&target)
            .output()
            .unwrap()
    };
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("results/pve1.json")).unwrap())
            .unwrap();
    doc["extended"] = serde_json::json!([{
        "key": "seq_write", "label": "SEQ WRITE", "unit": "MiB/s",
        "value": 1e9, "samples": [1e9, 1e9, 1e9], "data": "incompressible"
    }]);
    let fast = dir.path().join("fast.json");
    std::fs::write(&fast, doc.to_string()).unwrap();
    let out = run(&fast);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("SEQ WRITE is worse than the baseline by more than 20%"),
        "{err}"
    );

    doc["extended"][0]["data"] = "zeros".into();
    let zeros = dir.path().join("zeros.json");
    std::fs::write(&zeros, doc.to_string()).unwrap();
    let out = run(&zeros);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("unlike: SEQ WRITE: data zeros in [1], incompressible in [2]; not ranked"),
        "{err}"
    );
    assert!(!err.contains("is worse than the baseline"), "{err}");
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "SEQ WRITE left files behind"
    );
}

/// Text written to a file has the extended lines too (they used to reach
/// only a terminal), in print order after pveperf's.
#[test]
fn text_to_a_file_has_the_extended_lines() {
    let dir = workdir();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let file = dir.path().join("out.txt");
    let out = pveprobe()
        .args(["--tests", "cpu,seqwrite", "--write-size", "1M", "--output"])
        .arg(&file)
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let text = std::fs::read_to_string(&file).unwrap();
    let labels: Vec<&str> = text.lines().filter_map(|l| l.split(':').next()).collect();
    assert_eq!(labels, ["CPU BOGOMIPS", "HD SIZE", "SEQ WRITE"], "{text}");
    assert!(text.contains("MB/sec (3 runs: "), "{text}");
}

#[test]
fn no_countdown_when_stderr_is_not_a_terminal() {
    let dir = workdir();
    let out = pveprobe()
        .args(["--tests", "fsync", "--duration", "0.3"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("left"), "{}", stderr(&out));
    assert!(!stderr(&out).contains('\u{1b}'), "no terminal escapes");
}

#[test]
#[ignore = "needs script(1): util-linux gives it a terminal (scripts/test runs it)"]
fn progress_shows_on_a_terminal_but_never_in_json() {
    crate::common::needs_tools(&["script"], "util-linux");
    let dir = workdir();
    let run = |format: &str| {
        // script(1) gives the probe a pseudo-terminal; the command line is
        // ours alone (no user input), with the directory passed in the environment.
        let cmd = format!(
            "{} --tests fsync --duration 0.6 --output-format {format} \"$PVEPROBE_TEST_DIR\"",
            env!("CARGO_BIN_EXE_pveprobe")
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("PVEPROBE_TEST_DIR", dir.path())
            .env(crate::common::NO_LOCK.0, crate::common::NO_LOCK.1)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run("text");
    assert!(
        text.contains("FSYNCS/SECOND") && text.contains("s left"),
        "{text:?}"
    );
    let json = run("json");
    assert!(!json.contains("s left"), "{json:?}");
}

/// Without a terminal (a script, cron) the progress is a plain line per
/// test on stderr, the first one included, never on stdout; `--quiet`
/// silences it and keeps the document the same.
#[test]
fn progress_is_a_line_per_step_in_a_log_and_nothing_with_quiet() {
    let dir = workdir();
    let run = |quiet: bool| {
        let mut cmd = pveprobe();
        cmd.args([
            "--tests",
            "cpu,fsync",
            "--duration",
            "0.2",
            "--runs",
            "2",
            "--output-format",
            "csv",
        ]);
        if quiet {
            cmd.arg("--quiet");
        }
        let out = cmd.arg(dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        (stdout(&out), stderr(&out))
    };
    let (csv, log) = run(false);
    let steps: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("pveprobe: ") && l.ends_with(" s"))
        .collect();
    assert_eq!(
        steps,
        // BOGOMIPS is read, not timed: no step of its own.
        [
            "pveprobe: FSYNCS/SECOND (run 1/2), 1 s",
            "pveprobe: FSYNCS/SECOND (run 2/2), 1 s",
        ],
        "{log}"
    );
    assert!(!csv.contains("pveprobe:"), "{csv}");
    let (quiet_csv, quiet_log) = run(true);
    assert!(
        !quiet_log.lines().any(|l| steps.contains(&l)),
        "{quiet_log}"
    );
    assert_eq!(
        quiet_csv.lines().next(),
        csv.lines().next(),
        "the same header"
    );
}
