//! SUSTAINED WRITE (`--sustained SECS`) on an ext4 loop device and on the
//! tests' FUSE filesystem made to slow down after some MiB (a write cache
//! that fills up): a point per second, the drop visible in the series,
//! nothing left behind after success or a signal. Needs root.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::faultfs::FaultFs;
use crate::common::{Ext4, LoopOptions, pveprobe, root_or_skip, stderr, stdout};

fn series(doc: &serde_json::Value) -> Vec<f64> {
    let x = doc["extended"].as_array().unwrap();
    let f = x.iter().find(|f| f["key"] == "sustained_write").unwrap();
    f["series_mib_per_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_point_per_second_and_nothing_left() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(256, LoopOptions::default(), &[], "rw");
    let out = pveprobe()
        .args([
            "--sustained",
            "3",
            "--write-size",
            "64M",
            "--tests",
            "sustained",
        ])
        .args(["--output-format", "json"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    crate::common::validate_schema(&doc);
    let s = series(&doc);
    assert_eq!(s.len(), 3, "{s:?}");
    assert!(s.iter().all(|v| *v > 0.0), "{s:?}");
    let f = doc["extended"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "sustained_write")
        .unwrap();
    assert_eq!(f["file_bytes"], 64 << 20);

    // --plot draws the seconds: one line with a point per second.
    let picture = fs.mount.path().parent().unwrap().join("sustained-plot.svg");
    let out = pveprobe()
        .args([
            "--sustained",
            "3",
            "--write-size",
            "64M",
            "--tests",
            "sustained",
            "--plot",
        ])
        .arg(&picture)
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let svg = std::fs::read_to_string(&picture).unwrap();
    std::fs::remove_file(&picture).unwrap();
    let xml = roxmltree::Document::parse(&svg).unwrap();
    let line = xml
        .descendants()
        .find(|n| {
            n.has_tag_name("polyline")
                && n.attribute("stroke") == Some(pveprobe::output::plot::LINE_STROKE)
        })
        .expect("the series' line");
    assert_eq!(
        line.attribute("points").unwrap().split_whitespace().count(),
        3
    );
    // Without --sustained, --plot has nothing to draw: refused before measuring.
    let out = pveprobe()
        .args(["--tests", "fsync", "--plot"])
        .arg(&picture)
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("add --sustained SECS"),
        "{}",
        stderr(&out)
    );
    assert!(!picture.exists());
    assert_eq!(f["window_s"], 3.0);
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );

    // The text line, and a refusal when the file does not fit.
    let out = pveprobe()
        .args([
            "--sustained",
            "2",
            "--write-size",
            "32M",
            "--tests",
            "sustained",
        ])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let re = regex::Regex::new(
        r"(?m)^SUSTAINED WRITE:          \d+\.\d\d MB/sec over 2 s \(first 2 s \d+\.\d\d, last 2 s \d+\.\d\d, slowest second \d+\.\d\d at [01] s; 1 MiB O_DIRECT writes cycling over a 32 MiB file\)$",
    )
    .unwrap();
    assert!(re.is_match(&stdout(&out)), "{}", stdout(&out));
    let out = pveprobe()
        .args(["--sustained", "2", "--tests", "sustained"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("SUSTAINED WRITE needs")
            && stderr(&out).contains("a smaller --write-size fits"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn signals_during_a_sustained_write_remove_its_file() {
    use nix::sys::signal::Signal;
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(256, LoopOptions::default(), &[], "rw");
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        let mut child = pveprobe()
            .args([
                "--sustained",
                "60",
                "--write-size",
                "64M",
                "--tests",
                "sustained",
            ])
            .arg(fs.mount.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while fs.mount.leftovers().is_empty() {
            assert!(start.elapsed() < Duration::from_secs(20), "no file made");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(300));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let status = crate::common::wait_within(&mut child, Duration::from_secs(30));
        assert_eq!(status.code(), Some(128 + signal as i32), "{signal}");
        assert!(
            fs.mount.leftovers().is_empty(),
            "{signal}: {:?}",
            fs.mount.leftovers()
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_cache_that_fills_up_shows_in_the_series() {
    if !root_or_skip() {
        return;
    }
    let fs = FaultFs::mount("faultfs", 0);
    // The first 16 MiB as fast as FUSE goes, then each write waits.
    fs.faults().slow_writes_after = Some((16 << 20, Duration::from_millis(1000)));
    let out = pveprobe()
        .args([
            "--sustained",
            "4",
            "--write-size",
            "64M",
            "--tests",
            "sustained",
        ])
        .args(["--output-format", "json"])
        .arg(fs.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let s = series(&doc);
    assert_eq!(s.len(), 4, "{s:?}");
    assert!(s[0] >= 12.0, "the cache took the first MiB at once: {s:?}");
    assert!(
        s[3] < s[0] / 4.0,
        "the last second, past the cache, is far slower: {s:?}"
    );
    let f = doc["extended"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "sustained_write")
        .unwrap();
    assert!(f["slowest_second"]["second"].as_u64().unwrap() >= 1, "{f}");
    assert!(
        std::fs::read_dir(fs.path()).unwrap().next().is_none(),
        "nothing left on the faultfs"
    );
}
