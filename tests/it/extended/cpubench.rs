//! The CPU figures of Proxmox Backup's benchmark through the real binary,
//! with short windows (`--duration 0.3`: PBS's 1 s and 3 s become 0.1 s
//! and 0.3 s). No root needed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::{pveprobe, stderr, stdout, workdir};

const LABELS: [&str; 5] = [
    "SHA256",
    "ZSTD COMPRESS",
    "ZSTD DECOMPRESS",
    "AES-256-GCM",
    "VERIFY",
];
const KEYS: [&str; 5] = [
    "sha256",
    "zstd_compress",
    "zstd_decompress",
    "aes_256_gcm",
    "verify",
];
/// PBS's reference, MB/s.
const REFERENCE: [f64; 5] = [2022.0, 752.0, 1198.0, 3645.0, 758.0];

fn run(args: &[&str]) -> std::process::Output {
    let dir = workdir();
    let out = pveprobe()
        .args(["--tests", "cpu-bench", "--duration", "0.3"])
        .args(args)
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

/// The JSON result of `pveprobe --tests cpu-bench --duration 0.3 ARGS`,
/// written to DIR/NAME.
fn save(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let out = pveprobe()
        .args(["--tests", "cpu-bench", "--duration", "0.3"])
        .args(["--output-format", "json"])
        .args(args)
        .arg("--output")
        .arg(&path)
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    path
}

#[test]
fn five_lines_as_pbs_prints_them() {
    let out = run(&[]);
    let text = stdout(&out);
    let line = regex::Regex::new(r"^([A-Z0-9 -]+): +(\d+\.\d\d) MB/s \((\d+)%\)$").unwrap();
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 5, "{text}");
    for ((l, label), reference) in lines.iter().zip(LABELS).zip(REFERENCE) {
        let c = line.captures(l).unwrap_or_else(|| panic!("{l:?}"));
        assert_eq!(&c[1], label);
        let mb: f64 = c[2].parse().unwrap();
        assert!(mb > 0.0, "{l}");
        let pct: f64 = c[3].parse().unwrap();
        // The rounded percentage of the printed (rounded) MB/s.
        assert!((pct - mb * 100.0 / reference).abs() <= 0.51, "{l}");
    }
    assert!(text.starts_with("HD SIZE:"), "{text}");
}

#[test]
fn json_has_the_figures_the_windows_and_the_threads() {
    let out = run(&["--cpu-threads", "2", "--output-format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    crate::common::validate_schema(&doc);
    let x = doc["extended"].as_array().unwrap();
    assert_eq!(x.len(), 5);
    for ((f, key), reference) in x.iter().zip(KEYS).zip(REFERENCE) {
        assert_eq!(f["key"], key);
        assert_eq!(f["unit"], "MB/s");
        let value = f["value"].as_f64().unwrap();
        assert!(value > 0.0, "{f}");
        let r = &f["pbs_reference"];
        assert_eq!(r["mb_per_s"], reference);
        let pct = r["percent"].as_f64().unwrap();
        assert!((pct - value * 100.0 / reference).abs() < 1e-9, "{f}");
        let window = if key == "zstd_compress" { 0.3 } else { 0.1 };
        assert!(
            (f["window_s"].as_f64().unwrap() - window).abs() < 1e-9,
            "{f}"
        );
        let t = &f["threads"];
        assert_eq!(t["count"], 2);
        let each: Vec<f64> = t["each_mb_per_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(each.len(), 2);
        assert!(each.iter().all(|v| *v > 0.0));
        let total = t["mb_per_s"].as_f64().unwrap();
        assert!((total - each.iter().sum::<f64>()).abs() < 1e-6);
        let scaling = t["scaling"].as_f64().unwrap();
        assert!((scaling - total / (2.0 * value)).abs() < 1e-9);
    }
    // The governor and flags travel with the host.
    assert!(
        doc["host"]
            .get("cpu_crypto_flags")
            .is_none_or(|f| f.is_array())
    );
}

#[test]
fn threads_print_and_verbose_names_the_cpu() {
    let out = run(&["--cpu-threads", "all", "-v"]);
    let text = stdout(&out);
    let n = std::thread::available_parallelism().unwrap().get();
    let threads = if n == 1 { "thread" } else { "threads" };
    let sha = text.lines().find(|l| l.starts_with("SHA256:")).unwrap();
    assert!(
        sha.contains(&format!("; {n} {threads} at once: "))
            && sha.ends_with(&format!(" of {n} x 1 thread")),
        "{sha}"
    );
    assert!(text.contains("\n  CPU: "), "{text}");
    assert!(text.contains("AES/SHA instructions"), "{text}");
    assert!(text.contains("frequency governor: "), "{text}");
    assert!(
        text.contains("windows: 0.1 s each, ZSTD COMPRESS 0.3 s"),
        "{text}"
    );
    assert!(text.contains("100% is AMD Ryzen 7 2700X"), "{text}");
}

#[test]
fn cpu_threads_is_checked_and_implies_the_cpu_figures() {
    let out = pveprobe()
        .args(["--cpu-threads", "0", "/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("neither all nor a count of threads from 1 to 1024"));
    let dir = workdir();
    let out = pveprobe()
        .args(["--tests", "cpu", "--cpu-threads", "1", "--duration", "0.3"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("CPU BOGOMIPS:"), "{text}");
    assert!(text.contains("\nVERIFY: "), "{text}");
    assert!(text.contains("; 1 thread at once: "), "{text}");
}

#[test]
fn compare_ranks_the_cpu_figures_and_marks_other_thread_counts() {
    let dir = workdir();
    let one = save(dir.path(), "one.json", &["--cpu-threads", "1"]);
    let two = save(dir.path(), "two.json", &["--cpu-threads", "2"]);
    let out = pveprobe()
        .arg("compare")
        .args([&one, &two])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("SHA256"), "{text}");
    assert!(text.contains("AES-256-GCM (threads)"), "{text}");
    // The threads' values of 1 and 2 threads are unlike; one thread's are ranked.
    let row = |label: &str| {
        text.lines()
            .find(|l| l.split("  ").next() == Some(label))
            .unwrap_or_else(|| panic!("no {label} in {text}"))
    };
    for label in ["SHA256", "VERIFY"] {
        assert!(!row(label).ends_with("unlike"), "{}", row(label));
    }
    assert!(row("SHA256 (threads)").ends_with("unlike"), "{text}");
    assert!(row("SHA256 (thread scaling)").contains(" ratio "), "{text}");
    assert!(
        text.contains("unlike: SHA256 (threads): CPU threads 1 in [1], 2 in [2]"),
        "{text}"
    );
}

#[test]
fn sigterm_during_the_cpu_figures_stops_it() {
    let dir = workdir();
    let mut child = pveprobe()
        .args(["--tests", "cpu-bench", "--duration", "600"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    // SHA256's window is 200 s: only the signal ends it this soon.
    let status = crate::common::wait_within(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(128 + 15));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
}

#[test]
fn baseline_catches_a_slower_cpu_figure() {
    let dir = workdir();
    let base = save(dir.path(), "base.json", &[]);
    let baseline = |aes: f64| {
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
        for f in doc["extended"].as_array_mut().unwrap() {
            if f["key"] == "aes_256_gcm" {
                f["value"] = aes.into();
            }
        }
        std::fs::write(&base, doc.to_string()).unwrap();
        pveprobe()
            // This VM's CPU figures vary by a third from run to run.
            .args([
                "--tests",
                "cpu-bench",
                "--duration",
                "0.3",
                "--tolerance",
                "90",
            ])
            .arg("--baseline")
            .arg(&base)
            .arg(dir.path())
            .output()
            .unwrap()
    };
    // A baseline no CPU reaches: AES-256-GCM is worse by far.
    let out = baseline(1e12);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("AES-256-GCM"), "{}", stderr(&out));
    // One every CPU beats: no regression.
    let out = baseline(1e-3);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
