//! `-x`: the extended figures on ext4 and xfs loop devices, space refusal,
//! the io_uring fallback (forced with the kernel's own switch), and cleanup.
//! Needs root; skips with a message otherwise.

use crate::common::{
    Ext4, LoopDevice, LoopOptions, Mount, mkfs, pveprobe, root_or_skip, stderr, stdout,
};

const FORMATS: [(&str, &str); 11] = [
    (
        "SEQ WRITE",
        r"^SEQ WRITE:                \d+\.\d\d MB/sec \(3 runs: \d+\.\d\d, \d+\.\d\d, \d+\.\d\d; incompressible data\)$",
    ),
    (
        "SEQ READ DIRECT",
        r"^SEQ READ DIRECT:          \d+\.\d\d MB/sec \(1 MiB O_DIRECT reads, QD8, (io_uring|psync)\)$",
    ),
    (
        "RANDOM READ 4K QD1",
        r"^RANDOM READ 4K QD1:       \d+ IOPS \(mean \d+\.\d{3} ms, p99 \d+\.\d{3} ms, (io_uring|psync)\)$",
    ),
    (
        "RANDOM READ 4K QD32",
        r"^RANDOM READ 4K QD32:      \d+ IOPS \(mean \d+\.\d{3} ms, p99 \d+\.\d{3} ms, (io_uring|psync)\)$",
    ),
    (
        "MIXED 70/30 4K QD16",
        r"^MIXED 70/30 4K QD16:      \d+ read IOPS, \d+ write IOPS \(80% random, O_DIRECT file, (io_uring|psync)\)$",
    ),
    (
        "SYNC WRITE 4K",
        r"^SYNC WRITE 4K:            \d+ IOPS \(mean \d+\.\d{3} ms, p50 \d+\.\d{3} ms, p99 \d+\.\d{3} ms(, p99\.9 \d+\.\d{3} ms)?, max \d+\.\d{3} ms; fdatasync, 64 MiB file, 1 job\); flushes: unknown$",
    ),
    (
        "SHA256",
        r"^SHA256:                   \d+\.\d\d MB/s \(\d+%\)$",
    ),
    (
        "ZSTD COMPRESS",
        r"^ZSTD COMPRESS:            \d+\.\d\d MB/s \(\d+%\)$",
    ),
    (
        "ZSTD DECOMPRESS",
        r"^ZSTD DECOMPRESS:          \d+\.\d\d MB/s \(\d+%\)$",
    ),
    (
        "AES-256-GCM",
        r"^AES-256-GCM:              \d+\.\d\d MB/s \(\d+%\)$",
    ),
    (
        "VERIFY",
        r"^VERIFY:                   \d+\.\d\d MB/s \(\d+%\)$",
    ),
];

fn check_extended(text: &str) {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            FORMATS
                .iter()
                .any(|(label, _)| l.starts_with(&format!("{label}:")))
        })
        .collect();
    assert_eq!(lines.len(), FORMATS.len(), "{text}");
    for (line, (label, format)) in lines.iter().zip(FORMATS) {
        assert!(line.starts_with(label), "order: {line}");
        assert!(
            regex::Regex::new(format).unwrap().is_match(line),
            "{line:?} does not match {format}"
        );
    }
    let pveperf: String = text
        .lines()
        .filter(|l| !lines.contains(l))
        .map(|l| format!("{l}\n"))
        .collect();
    crate::common::pveperf_lines(&pveperf);
}

fn all_extended(mount: &Mount) {
    let out = pveprobe()
        .args([
            "-x",
            "--tests",
            "fsync",
            "--duration",
            "0.3",
            "--write-size",
            "16M",
        ])
        .arg(mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    check_extended(&stdout(&out));
    assert!(
        mount.leftovers().is_empty(),
        "left behind: {:?}",
        mount.leftovers()
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn extended_figures_on_ext4() {
    if root_or_skip() {
        let fs = Ext4::new(512, LoopOptions::default(), &[], "rw");
        all_extended(&fs.mount);
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn extended_figures_on_xfs() {
    if !root_or_skip() {
        return;
    }
    let dev = LoopDevice::new(512, LoopOptions::default());
    mkfs("xfs", dev.path(), &[]);
    let mount = Mount::new(dev.path(), "rw");
    all_extended(&mount);
    drop(mount);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn seq_write_refuses_when_space_is_short() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(64, LoopOptions::default(), &[], "rw");
    let out = pveprobe()
        .args(["--tests", "seqwrite,mixed", "--write-size", "1G"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("SEQ WRITE: not measured: SEQ WRITE needs 1126 MiB free"),
        "{err}"
    );
    assert!(
        err.contains("MIXED 70/30 4K QD16: not measured: MIXED 70/30 needs"),
        "{err}"
    );
    assert!(err.contains("a smaller --write-size fits"), "{err}");
    assert!(fs.mount.leftovers().is_empty());
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn json_carries_the_extended_figures() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(256, LoopOptions::default(), &[], "rw");
    let out = pveprobe()
        .args([
            "--tests",
            "randread,seqwrite",
            "--duration",
            "0.2",
            "--write-size",
            "8M",
            "--output-format",
            "json",
        ])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    crate::common::validate_schema(&doc);
    let x = doc["extended"].as_array().unwrap();
    let keys: Vec<&str> = x.iter().map(|f| f["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["seq_write", "rand_read_4k_qd1", "rand_read_4k_qd32"]);
    assert_eq!(x[0]["samples"].as_array().unwrap().len(), 3);
    assert_eq!(x[2]["queue_depth"], 32);
    assert_eq!(x[1]["block_size"], 4096);
    assert!(
        x[1]["latency"]["p99_us"].as_f64().unwrap() >= x[1]["latency"]["p50_us"].as_f64().unwrap()
    );
    assert!(x[1]["cpu_us_per_op"].as_f64().unwrap() > 0.0);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn io_uring_refused_falls_back_to_psync_and_says_so() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(128, LoopOptions::default(), &[], "rw");
    // Forced psync works anywhere.
    let out = pveprobe()
        .args([
            "--tests",
            "randread",
            "--duration",
            "0.2",
            "--io-engine",
            "psync",
        ])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(" ms, psync)\n"), "{}", stdout(&out));
    // io_uring refused to this process alone, as a seccomp profile does.
    let out = crate::common::refuse_io_uring(&mut pveprobe())
        .args(["--tests", "randread", "--duration", "0.2"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("psync (io_uring refused))"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("RANDOM READ 4K QD1: io_uring refused: "),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("; ran psync instead"),
        "{}",
        stderr(&out)
    );
    let out = crate::common::refuse_io_uring(&mut pveprobe())
        .args([
            "--tests",
            "randread",
            "--duration",
            "0.2",
            "--io-engine",
            "io-uring",
        ])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("RANDOM READ 4K QD1: not measured: io_uring is not available"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn random_writes_on_a_file_in_path() {
    if !root_or_skip() {
        return;
    }
    let fs = Ext4::new(256, LoopOptions::default(), &[], "rw");
    let out = pveprobe()
        .args([
            "--tests",
            "randwrite",
            "--duration",
            "0.3",
            "--write-size",
            "16M",
        ])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for depth in ["QD1: ", "QD32:"] {
        let re = regex::Regex::new(&format!(
            r"(?m)^RANDOM WRITE 4K {depth} +\d+ IOPS \(mean \d+\.\d{{3}} ms, p99 \d+\.\d{{3}} ms, O_DIRECT, (io_uring|psync) on a file in PATH\)$"
        ))
        .unwrap();
        assert!(re.is_match(&text), "{text}");
    }
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );
}
