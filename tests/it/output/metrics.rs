//! `--output-format prometheus` and `influx` through the real binary, read
//! by what reads them in production: the Prometheus text by `promtool
//! check metrics` (Prometheus' own parser and linter, from Debian's
//! `prometheus` package; a test without it skips visibly, and fails under
//! CI), the line protocol by InfluxData's parser (a dev-dependency). No
//! root needed: `cpu,fsync` in a temporary directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{in_ci, pveprobe, stderr, stdout, workdir};

/// A short probe run in `dir` in `format`, with `extra` arguments.
fn probe(dir: &Path, format: &str, extra: &[&str]) -> Output {
    pveprobe()
        .args(["--tests", "cpu,fsync", "--duration", "0.2"])
        .args(["--output-format", format])
        .args(extra)
        .arg(dir)
        .output()
        .unwrap()
}

/// promtool, or `None` after saying its check is left out (a test whose
/// other checks ran); under CI a missing promtool fails the test instead
/// (scripts/install-test-deps installs it, so CI never passes without
/// running it).
fn promtool(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("promtool"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            !in_ci(),
            "{test}: promtool not found and CI is set: scripts/install-test-deps installs it (Debian's prometheus)"
        );
        eprintln!(
            "{test}: promtool's check left out: promtool not found (apt-get install prometheus, or scripts/install-test-deps)"
        );
    }
    found
}

/// `promtool check metrics` on `text`: its exit status and everything it said.
fn check_metrics(promtool: &Path, text: &str) -> (Option<i32>, String) {
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), stdout(&out) + &stderr(&out))
}

/// The node's name as PVE writes it: the host name up to its first dot.
fn node_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    host.trim().split('.').next().unwrap().to_string()
}

#[test]
#[ignore = "needs promtool: Debian's prometheus (scripts/test runs it)"]
fn prometheus_output_passes_promtool_without_a_lint() {
    crate::common::needs_tools(&["promtool"], "prometheus");
    let promtool = PathBuf::from("promtool");
    // promtool lints: a name in milliseconds is refused (so a pass below
    // means something).
    let bad = "# HELP x_milliseconds x\n# TYPE x_milliseconds gauge\nx_milliseconds 1\n";
    let (code, said) = check_metrics(&promtool, bad);
    assert_ne!(code, Some(0), "promtool accepted {bad:?}");
    assert!(said.contains("seconds"), "{said}");

    let dir = workdir();
    let out = probe(dir.path(), "prometheus", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let (code, said) = check_metrics(&promtool, &text);
    assert_eq!(
        code,
        Some(0),
        "promtool check metrics:\n{said}\non:\n{text}"
    );
    assert_eq!(said.trim(), "", "promtool's lints on:\n{text}");
    let labels = format!(
        "{{node=\"{}\",path=\"{}\"}} ",
        node_name(),
        dir.path().display()
    );
    for name in [
        "pveprobe_cpu_bogomips",
        "pveprobe_hd_size_bytes",
        "pveprobe_fsyncs_per_second",
    ] {
        assert!(
            text.contains(&format!("# TYPE {name} gauge\n{name}{labels}")),
            "{name}{labels} in:\n{text}"
        );
    }
    assert!(!text.contains("regex"), "not requested:\n{text}");

    // Every kind of gauge (info gauges, a series per count of jobs, every
    // unit of the extended figures), as pinned from the known report.
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/snapshots/report.prom.snap");
    let pinned = snapshot_body(&std::fs::read_to_string(pinned).unwrap());
    assert!(pinned.contains("_info{") && pinned.contains(",jobs=\""));
    let (code, said) = check_metrics(&promtool, &pinned);
    assert_eq!((code, said.trim()), (Some(0), ""), "report.prom");
}

#[test]
fn influx_output_parses_as_line_protocol() {
    use influxdb_line_protocol::FieldValue;

    let dir = workdir();
    let before = jiff::Timestamp::now();
    let out = probe(dir.path(), "influx", &[]);
    let after = jiff::Timestamp::now();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<_> = influxdb_line_protocol::parse_lines(&text)
        .map(|l| l.unwrap_or_else(|e| panic!("{e} in {text}")))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    let line = &lines[0];
    assert_eq!(line.series.measurement.as_str(), "pveprobe");
    let tags: Vec<(String, String)> = line
        .series
        .tag_set
        .iter()
        .flatten()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let expected = [
        ("host", node_name()),
        ("object", "nodes".to_string()),
        ("path", dir.path().display().to_string()),
    ];
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(tags, expected);
    for field in ["cpu_bogomips", "hd_size_gib", "fsyncs_per_s"] {
        match line.field_value(field) {
            Some(FieldValue::F64(v)) => assert!(*v >= 0.0, "{field}={v}"),
            other => panic!("{field}: {other:?} in {text}"),
        }
    }
    assert_eq!(line.field_set.len(), 3, "{text}");
    // The run's start, in nanoseconds, rounded to the nearest second as
    // JSON's: at most half a second before the process started or after
    // it ended.
    let ns = i128::from(line.timestamp.unwrap());
    let second = 1_000_000_000;
    assert!(
        ns >= before.as_nanosecond() - second / 2 && ns <= after.as_nanosecond() + second / 2,
        "{ns} not within half a second of {before} .. {after}"
    );
    assert_eq!(ns % second, 0, "{ns}");
}

#[test]
fn the_textfile_is_written_to_output_for_an_atomic_rename() {
    // README's recipe: write FILE.tmp, then rename it over FILE.
    let dir = workdir();
    let target = dir.path().join("probe dir");
    std::fs::create_dir(&target).unwrap();
    let tmp = dir.path().join("pveprobe.prom.tmp");
    std::fs::write(&tmp, "stale and longer than what follows\n".repeat(100)).unwrap();
    let out = probe(&target, "prometheus", &["--output", tmp.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "the text goes to the file");
    let written = std::fs::read_to_string(&tmp).unwrap();
    assert!(
        written.starts_with("# HELP pveprobe_cpu_bogomips "),
        "{written}"
    );
    assert!(!written.contains("stale"), "replaced, not appended to");
    let file = dir.path().join("pveprobe.prom");
    std::fs::rename(&tmp, &file).unwrap();
    assert!(std::fs::read_to_string(&file).unwrap().contains("path=\""));
    // --append is for CSV rows only.
    let out = probe(
        &target,
        "prometheus",
        &["--append", "--output", file.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn commands_that_write_no_result_refuse_the_metrics_formats() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
    for format in ["influx", "prometheus"] {
        let out = pveprobe()
            .args(["compare", "--output-format", format])
            .arg(results.join("pve1.json"))
            .arg(results.join("pve2.json"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stdout(&out).is_empty());
        assert_eq!(
            stderr(&out),
            format!(
                "pveprobe: --output-format {format} writes a probe run's figures as metrics; \
                 pveprobe compare writes none: use text, json, json-pretty or csv\n"
            )
        );
        // Refused before reading storage.cfg, which this directory lacks.
        let out = pveprobe()
            .args(["storages", "--output-format", format, "--pve-config"])
            .arg(workdir().path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("pveprobe storages writes none"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn storage_all_labels_each_storage() {
    use crate::common::pve::FakePve;

    let a = workdir();
    let b = workdir();
    // A path that line protocol escapes.
    let b_dir = b.path().join("my disk,a=b");
    std::fs::create_dir(&b_dir).unwrap();
    let fake = FakePve::new(&format!(
        "dir: local\n\tpath {}\n\tcontent images\n\ndir: fast-ssd\n\tpath {}\n\tcontent images\n",
        a.path().display(),
        b_dir.display()
    ));
    fake.set_status(&[
        ("local", "dir", "active", 100 << 20, 1 << 20, 99 << 20),
        ("fast-ssd", "dir", "active", 100 << 20, 1 << 20, 99 << 20),
    ]);
    let run = |format: &str| {
        fake.command()
            .arg("--pve-config")
            .arg(fake.pve_dir())
            .args([
                "--storage",
                "all",
                "--tests",
                "cpu,fsync",
                "--duration",
                "0.2",
            ])
            .args(["--output-format", format])
            .output()
            .unwrap()
    };
    let out = run("prometheus");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fsyncs: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("pveprobe_fsyncs_per_second{"))
        .collect();
    assert_eq!(fsyncs.len(), 2, "{text}");
    let node = node_name();
    for (line, (id, dir)) in fsyncs
        .iter()
        .zip([("local", a.path()), ("fast-ssd", &b_dir)])
    {
        let labels = format!(
            "{{node=\"{node}\",path=\"{}\",storage=\"{id}\",storage_type=\"dir\"}} ",
            dir.display()
        );
        assert!(line.contains(&labels), "{labels} in {line}");
    }
    if let Some(promtool) = promtool("storage_all_labels_each_storage") {
        let (code, said) = check_metrics(&promtool, &text);
        assert_eq!((code, said.trim()), (Some(0), ""), "{text}");
    }

    let out = run("influx");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<_> = influxdb_line_protocol::parse_lines(&text)
        .map(|l| l.unwrap_or_else(|e| panic!("{e} in {text}")))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, (id, dir)) in lines
        .iter()
        .zip([("local", a.path()), ("fast-ssd", &b_dir)])
    {
        let tag = |k: &str| line.tag_value(k).map(|v| v.to_string());
        assert_eq!(tag("object").as_deref(), Some("storages"));
        assert_eq!(
            tag("host").as_deref(),
            Some(id),
            "PVE's host is the storage"
        );
        assert_eq!(tag("nodename"), Some(node.clone()));
        assert_eq!(tag("type").as_deref(), Some("dir"));
        assert_eq!(tag("path"), Some(dir.display().to_string()));
    }
    assert!(text.contains(r"/my\ disk\,a\=b,type=dir "), "{text}");
}

/// An insta snapshot's content: what follows its `---` header, with the
/// final newline insta leaves out.
fn snapshot_body(snap: &str) -> String {
    let body = snap.splitn(3, "---\n").nth(2).expect("an insta snapshot");
    format!("{}\n", body.trim_end_matches('\n'))
}

/// `top` keeps its metrics file whole: each interval replaces it at once
/// (a new file renamed over it), so node_exporter, reading it at any
/// moment, gets one interval, never an empty or cut file.
#[test]
fn top_replaces_its_metrics_file_whole_every_interval() {
    let dir = workdir();
    let (qmp, pve) = (dir.path().join("qmp"), dir.path().join("pve"));
    std::fs::create_dir(&qmp).unwrap();
    std::fs::create_dir(&pve).unwrap();
    let file = dir.path().join("pveprobe-top.prom");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (file, stop) = (file.clone(), stop.clone());
        std::thread::spawn(move || {
            let (mut reads, mut bad) = (0u32, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match std::fs::read_to_string(&file) {
                    Ok(text) => {
                        reads += 1;
                        let whole = text.ends_with('\n')
                            && text.starts_with("# HELP ")
                            && text.contains("pveprobe_top_");
                        if !whole && bad.len() < 3 {
                            bad.push(text);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => panic!("{e}"),
                }
            }
            (reads, bad)
        })
    };
    let out = pveprobe()
        .args([
            "top",
            "--interval",
            "0.1",
            "--count",
            "30",
            "--output-format",
            "prometheus",
            "--output",
        ])
        .arg(&file)
        .arg("--qmp-dir")
        .arg(&qmp)
        .arg("--pve-dir")
        .arg(&pve)
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (reads, bad) = reader.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(reads > 30, "the reader read the file {reads} times");
    assert!(
        bad.is_empty(),
        "{} reads of {reads} were no whole interval: {bad:?}",
        bad.len()
    );
    // Nothing beside it: the new files were renamed, none left.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}
