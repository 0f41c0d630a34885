//! `pveprobe datastore PATH` on real filesystems on loop devices: every
//! figure, nothing left after success, SIGINT, SIGTERM and a filesystem
//! that fills up; `noatime` said; a datastore laid out in PBS's formats
//! read without a byte, mtime or atime changing; bad input refused with
//! the reason and nothing written.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{
    Ext4, LoopDevice, LoopOptions, Mount, json, mkfs, needs_tools, no_panic, pveprobe,
    root_or_skip, stderr, stdout, wait_within,
};

/// Every figure's label in the text, in print order.
const LABELS: [&str; 16] = [
    "DATASTORE CREATE:",
    "DATASTORE INGEST NONE:",
    "DATASTORE INGEST FILESYSTEM:",
    "DATASTORE INGEST FILE:",
    "DATASTORE KNOWN CHUNK:",
    "DATASTORE RESTORE 1:",
    "DATASTORE RESTORE 4:",
    "DATASTORE RESTORE 8:",
    "DATASTORE RESTORE 16:",
    "DATASTORE VERIFY 1:",
    "DATASTORE VERIFY 2:",
    "DATASTORE VERIFY 4:",
    "DATASTORE GC MARK:",
    "DATASTORE GC SWEEP DIRS:",
    "DATASTORE GC SWEEP:",
    "DATASTORE ATIME:",
];

/// ext4's options here: no reserve, and inodes for two chunk stores'
/// 65,536 directories (the laid-out datastore's and the run's own).
const EXT4: [&str; 4] = ["-m", "0", "-N", "200000"];

/// An ext4 of `size_mib` on a fresh loop device, mounted with `options`.
fn ext4(size_mib: u64, options: &str) -> Ext4 {
    Ext4::new(size_mib, LoopOptions::default(), &EXT4, options)
}

/// A filesystem of `fstype` on a fresh loop device, mounted with `options`.
fn filesystem(fstype: &str, size_mib: u64, options: &str) -> (Mount, LoopDevice) {
    let device = LoopDevice::new(size_mib, LoopOptions::default());
    let extra: &[&str] = if fstype == "ext4" { &EXT4 } else { &[] };
    mkfs(fstype, device.path(), extra);
    (Mount::new(device.path(), options), device)
}

/// Every measured figure in a JSON document, present and above zero.
fn every_figure(doc: &serde_json::Value) {
    let m = &doc["measured"];
    for key in [
        "create_s",
        "known_per_s",
        "mark_per_s",
        "sweep_dirs_per_s",
        "sweep_per_s",
    ] {
        assert!(m[key].as_f64().is_some_and(|v| v > 0.0), "{key}: {m}");
    }
    let levels: Vec<&str> = m["ingest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            assert!(i["mib_s"].as_f64().unwrap() > 0.0);
            i["sync_level"].as_str().unwrap()
        })
        .collect();
    assert_eq!(levels, ["none", "filesystem", "file"]);
    let depths: Vec<u64> = m["restore"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["mib_s"].as_f64().unwrap() > 0.0);
            r["in_flight"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(depths, [1, 4, 8, 16]);
    let readers: Vec<u64> = m["verify"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            assert!(v["mib_s"].as_f64().unwrap() > 0.0);
            assert_eq!(v["bad"], 0, "{v}");
            assert!(["disk", "cpu"].contains(&v["capped_by"].as_str().unwrap()));
            v["readers"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(readers, [1, 2, 4]);
    assert_eq!(m["atime"]["updates"], true, "{m}");
    assert_eq!(m["cold"], true, "caches dropped as root");
    assert_eq!(m["chunks"], 3 * 4, "4 chunks at each of 3 levels");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn with_no_flags_and_no_terminal_every_line_is_printed_and_nothing_is_left() {
    if !root_or_skip() {
        return;
    }
    // A default run: 96 chunks at each level, 65,536 directories.
    let fs = ext4(1400, "rw");
    let out = pveprobe()
        .arg("datastore")
        .arg(fs.mount.path())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let (text, said) = (stdout(&out), stderr(&out));
    no_panic(&said);
    assert_eq!(out.status.code(), Some(0), "{said}\n{text}");
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("DATASTORE PATH: "), "{first}");
    assert!(first.contains("ext4"), "{first}");
    let mut at = 0;
    for label in LABELS {
        let found = text[at..]
            .find(label)
            .unwrap_or_else(|| panic!("{label} missing or out of order:\n{text}"));
        at += found + label.len();
    }
    // Each line's figure is a number above zero, in its unit.
    for line in text
        .lines()
        .filter(|l| l.starts_with("DATASTORE ") && !l.contains("PATH") && !l.contains("ATIME"))
    {
        let value: f64 = line[31..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{line}"));
        assert!(value > 0.0, "{line}");
    }
    assert!(text.contains("(96 chunks"), "{text}");
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn on_ext4_xfs_and_btrfs_every_figure_is_measured_and_nothing_is_left() {
    if !root_or_skip() {
        return;
    }
    needs_tools(&["mkfs.xfs", "mkfs.btrfs"], "xfsprogs, btrfs-progs");
    let files = tempfile::tempdir().unwrap();
    let saved = |name: &str| files.path().join(name);
    for fstype in ["ext4", "xfs", "btrfs"] {
        let (mount, _dev) = filesystem(fstype, 600, "rw");
        let mut cmd = pveprobe();
        cmd.args(["datastore", "--chunks", "4", "--output-format", "json"]);
        match fstype {
            // Beside a baseline a thousand times faster: every figure worse.
            "xfs" => cmd.arg("--baseline").arg(saved("fast.json")),
            "btrfs" => cmd.arg("--plot").arg(saved("btrfs.svg")),
            _ => &mut cmd,
        };
        let out = cmd.arg(mount.path()).output().unwrap();
        let want = if fstype == "xfs" { 3 } else { 0 };
        assert_eq!(out.status.code(), Some(want), "{fstype}: {}", stderr(&out));
        if fstype == "xfs" {
            let said = stderr(&out);
            assert!(said.contains("compared with the baseline"), "{said}");
            assert!(
                said.contains("DATASTORE RESTORE")
                    && said.contains("is worse than the baseline by more than 20%"),
                "{said}"
            );
        }
        std::fs::write(saved(&format!("{fstype}.json")), &out.stdout).unwrap();
        let doc = json(&out);
        assert_eq!(doc["kind"], "datastore");
        assert_eq!(doc["filesystem"]["fstype"], fstype);
        every_figure(&doc);
        // The hints are the run's: a spinning disk in the stack the run
        // recorded (a loop device says it spins) gives the metadata hint.
        let spins = doc["storage"]["disks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["rotational"] == true);
        let codes = crate::common::hint_codes(&doc["hints"]);
        assert_eq!(
            codes.contains(&"datastore-metadata-on-hdd"),
            spins,
            "{codes:?}"
        );
        assert_eq!(doc["left_behind"], serde_json::json!([]));
        assert!(doc["existing"].is_null(), "no datastore there");
        assert!(
            mount.leftovers().is_empty(),
            "{fstype}: {:?}",
            mount.leftovers()
        );
        if fstype == "ext4" {
            let mut fast = doc.clone();
            for list in ["ingest", "restore", "verify"] {
                for f in fast["measured"][list].as_array_mut().unwrap() {
                    f["mib_s"] = (f["mib_s"].as_f64().unwrap() * 1000.0).into();
                }
            }
            for key in [
                "known_per_s",
                "mark_per_s",
                "sweep_dirs_per_s",
                "sweep_per_s",
            ] {
                fast["measured"][key] = (fast["measured"][key].as_f64().unwrap() * 1000.0).into();
            }
            std::fs::write(saved("fast.json"), fast.to_string()).unwrap();
        }
    }
    // The picture, and compare ranking two runs' figures.
    let svg = std::fs::read_to_string(saved("btrfs.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("RESTORE"), "{svg}");
    let out = pveprobe()
        .arg("compare")
        .args([saved("ext4.json"), saved("btrfs.json")])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for label in [
        "DATASTORE INGEST",
        "DATASTORE RESTORE",
        "DATASTORE VERIFY",
        "DATASTORE GC MARK",
    ] {
        assert!(text.contains(label), "{label}: {text}");
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn sigint_and_sigterm_stop_the_run_and_leave_nothing() {
    if !root_or_skip() {
        return;
    }
    let fs = ext4(800, "rw");
    for (signal, code, after) in [
        (
            nix::sys::signal::Signal::SIGINT,
            130,
            "INGEST: sync-level filesystem",
        ),
        (
            nix::sys::signal::Signal::SIGTERM,
            143,
            "RESTORE: 4 in flight",
        ),
        (nix::sys::signal::Signal::SIGINT, 130, "CREATE"),
    ] {
        let log = fs.device.backing().with_extension("log");
        let mut child = pveprobe()
            .args(["datastore", "--chunks", "48"])
            .arg(fs.mount.path())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !std::fs::read_to_string(&log).unwrap().contains(after) {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "never reached {after}"
            );
            assert!(child.try_wait().unwrap().is_none(), "ended before {after}");
            std::thread::sleep(Duration::from_millis(20));
        }
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let status = wait_within(&mut child, Duration::from_secs(60));
        let said = std::fs::read_to_string(&log).unwrap();
        let _ = std::fs::remove_file(&log);
        assert_eq!(status.code(), Some(code), "{signal} after {after}: {said}");
        assert!(
            fs.mount.leftovers().is_empty(),
            "{signal}: {:?}",
            fs.mount.leftovers()
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_filesystem_that_fills_up_mid_run_is_said_and_nothing_is_left() {
    if !root_or_skip() {
        return;
    }
    let fs = ext4(420, "rw");
    let root = fs.mount.path().to_path_buf();
    let child = pveprobe()
        .args(["datastore", "--chunks", "4"])
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Something else fills the filesystem once the run has begun (after
    // its room check passed).
    let start = Instant::now();
    while !std::fs::read_dir(&root).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("pveprobe.")
    }) {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(5));
    }
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(root.join("filler")).unwrap();
        let block = vec![0x55u8; 1 << 20];
        while filler.write_all(&block).is_ok() {}
        let _ = filler.sync_all();
    }
    let out = child.wait_with_output().unwrap();
    let said = stderr(&out);
    no_panic(&said);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("No space left on device"), "{said}");
    assert!(stdout(&out).contains("NOT MEASURED"), "{}", stdout(&out));
    assert_eq!(fs.mount.leftovers(), ["filler"]);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn noatime_is_said_with_what_pbs_check_finds() {
    if !root_or_skip() {
        return;
    }
    let fs = ext4(600, "rw,noatime");
    let out = pveprobe()
        .args(["datastore", "--chunks", "4"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let line = text
        .lines()
        .find(|l| l.starts_with("DATASTORE ATIME:"))
        .unwrap();
    assert!(line.contains("mount: noatime"), "{line}");
    // Linux sets an atime asked for with utimensat(2) on a noatime mount
    // too (noatime stops only the atime a read would set): PBS's check
    // passes, and no hint says GC cannot work.
    assert!(line.contains("updates"), "{line}");
    assert!(!text.contains("datastore-atime-off"), "{text}");
}

/// A blob as PBS writes one: magic, CRC32 of the data, the data.
fn blob(data: &[u8]) -> Vec<u8> {
    let packed = zstd::bulk::compress(data, 1).unwrap();
    let mut out = pveprobe_parse::pbs::COMPRESSED_BLOB_MAGIC.to_vec();
    out.extend(crc32fast::hash(&packed).to_le_bytes());
    out.extend(packed);
    out
}

fn hex(d: &[u8; 32]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A chunk of `seed`'s image stored under `root/.chunks`: its digest.
fn chunk(root: &Path, seed: u8) -> [u8; 32] {
    let data: Vec<u8> = (0..4u32 << 20)
        .map(|i| (i as u8).wrapping_mul(seed) ^ seed)
        .collect();
    let digest = openssl::sha::sha256(&data);
    let h = hex(&digest);
    std::fs::write(root.join(".chunks").join(&h[..4]).join(&h), blob(&data)).unwrap();
    digest
}

/// A `.fidx` (kind true) or `.didx` in PBS's format, its checksum right.
fn index(fixed: bool, digests: &[[u8; 32]]) -> Vec<u8> {
    use pveprobe_parse::pbs;
    let mut out = vec![0u8; pbs::INDEX_HEADER];
    let magic = if fixed {
        pbs::FIXED_INDEX_MAGIC
    } else {
        pbs::DYNAMIC_INDEX_MAGIC
    };
    out[..8].copy_from_slice(&magic);
    out[24..32].copy_from_slice(&1_764_547_200i64.to_le_bytes());
    let mut sha = openssl::sha::Sha256::new();
    let mut body = Vec::new();
    for (i, d) in digests.iter().enumerate() {
        if !fixed {
            let end = (i as u64 + 1) * 3_000_000;
            body.extend(end.to_le_bytes());
            sha.update(&end.to_le_bytes());
        }
        body.extend(d);
        sha.update(d);
    }
    out[32..64].copy_from_slice(&sha.finish());
    if fixed {
        let size = digests.len() as u64 * (4 << 20);
        out[64..72].copy_from_slice(&size.to_le_bytes());
        out[72..80].copy_from_slice(&(4u64 << 20).to_le_bytes());
    }
    out.extend(body);
    out
}

/// A datastore as PBS lays one out: `.chunks/0000`-`ffff`, a VM snapshot
/// (a `.fidx` of 4 chunks), a container's (a `.didx` of 3, one shared).
fn lay_out_datastore(root: &Path) {
    std::fs::create_dir(root.join(".chunks")).unwrap();
    for i in 0..65536u32 {
        std::fs::create_dir(root.join(format!(".chunks/{i:04x}"))).unwrap();
    }
    let digests: Vec<[u8; 32]> = (1..=6).map(|s| chunk(root, s)).collect();
    let vm = root.join("vm/100/2026-12-01T00:00:00Z");
    let ct = root.join("ct/200/2026-12-02T00:00:00Z");
    for dir in [&vm, &ct] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("index.json.blob"), blob(b"{\"files\":[]}")).unwrap();
    }
    std::fs::write(vm.join("drive-scsi0.img.fidx"), index(true, &digests[..4])).unwrap();
    std::fs::write(ct.join("root.pxar.didx"), index(false, &digests[3..])).unwrap();
}

/// What a file was: its bytes' digest (a file), mtime and atime (s, ns).
type Seen = (Option<[u8; 32]>, i64, i64, i64, i64);

/// Every file and directory under `root` (but `root` itself): its bytes'
/// digest for a file, its mtime and atime to the nanosecond. Read with
/// O_NOATIME, so reading it moves no atime.
fn state(root: &Path) -> BTreeMap<PathBuf, Seen> {
    use nix::fcntl::OFlag;
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOATIME;
        let mut listing = nix::dir::Dir::open(&dir, flags, nix::sys::stat::Mode::empty()).unwrap();
        let names: Vec<String> = listing
            .iter()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "." && n != "..")
            .collect();
        for name in names {
            let p = dir.join(name);
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            let bytes = m.is_file().then(|| {
                let mut data = Vec::new();
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOATIME)
                    .open(&p)
                    .unwrap()
                    .read_to_end(&mut data)
                    .unwrap();
                openssl::sha::sha256(&data)
            });
            out.insert(
                p,
                (bytes, m.mtime(), m.mtime_nsec(), m.atime(), m.atime_nsec()),
            );
        }
    }
    out
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_datastore_in_pbs_formats_is_counted_and_projected_and_nothing_of_it_changes() {
    if !root_or_skip() {
        return;
    }
    // strictatime: any read of the datastore would move an atime.
    let fs = ext4(700, "rw,strictatime");
    let root = fs.mount.path();
    lay_out_datastore(root);
    let before = state(root);
    assert_eq!(before, state(root), "reading the state moves nothing");
    let out = pveprobe()
        .args(["datastore", "--chunks", "4", "--output-format", "json"])
        .arg(root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = state(root);
    let changed: Vec<&PathBuf> = before
        .iter()
        .filter(|(p, s)| after.get(*p) != Some(s))
        .map(|(p, _)| p)
        .collect();
    assert!(changed.is_empty(), "changed by the run: {changed:?}");
    assert_eq!(before.len(), after.len(), "files came or went");
    let doc = json(&out);
    let e = &doc["existing"];
    assert_eq!(e["chunks"], 6, "{e}");
    assert_eq!(e["dirs_read"], 65536);
    assert!(e["chunks_error"].is_null());
    assert_eq!((e["fidx"].as_u64(), e["didx"].as_u64()), (Some(1), Some(1)));
    assert_eq!(e["snapshots"], 2);
    assert_eq!(e["references"], 7);
    assert_eq!(e["damaged"], serde_json::json!([]));
    let largest = &e["largest"];
    assert_eq!(largest["snapshot"], "vm/100/2026-12-01T00:00:00Z");
    assert_eq!(largest["image_bytes"], 4 * (4 << 20));
    assert_eq!(largest["chunks"], 4);
    let p = &doc["projection"];
    for key in [
        "gc_phase1_s",
        "gc_phase2_s",
        "verify_all_s",
        "restore_1_s",
        "restore_16_s",
    ] {
        assert!(p[key].as_f64().is_some_and(|v| v > 0.0), "{key}: {p}");
    }
    assert_eq!(
        p["gc_touches"], 6,
        "every chunk once: the digest cache holds them"
    );
    assert_eq!(p["backup_s"].as_array().unwrap().len(), 3);
    // The text says it in hours and minutes.
    let text = stdout(
        &pveprobe()
            .args(["datastore", "--chunks", "4"])
            .arg(root)
            .output()
            .unwrap(),
    );
    assert!(text.contains("GC PHASE 1 (mark):"), "{text}");
    assert!(
        text.contains("RESTORE vm/100/2026-12-01T00:00:00Z (0.0 GiB)"),
        "{text}"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn bad_input_is_refused_with_the_reason_and_nothing_is_written() {
    if !root_or_skip() {
        return;
    }
    let fs = ext4(700, "rw");
    let root = fs.mount.path().to_path_buf();
    let refused = |args: &[&str], path: Option<&Path>, why: &str| {
        let mut cmd = pveprobe();
        cmd.arg("datastore").args(args);
        if let Some(p) = path {
            cmd.arg(p);
        }
        let out = cmd.output().unwrap();
        let said = stderr(&out);
        no_panic(&said);
        assert_eq!(out.status.code(), Some(2), "{args:?} {path:?}: {said}");
        assert!(said.contains(why), "{args:?}: {said}");
        assert!(stdout(&out).is_empty());
    };
    refused(
        &[],
        Some(&root.join("missing")),
        "No such file or directory",
    );
    std::fs::write(root.join("a-file"), b"x").unwrap();
    refused(&[], Some(&root.join("a-file")), "not a directory");
    // A damaged index in a datastore: the projection would be wrong.
    let store = root.join("store");
    std::fs::create_dir(&store).unwrap();
    lay_out_datastore(&store);
    let fidx = store.join("vm/100/2026-12-01T00:00:00Z/drive-scsi0.img.fidx");
    let bytes = std::fs::read(&fidx).unwrap();
    std::fs::write(&fidx, &bytes[..bytes.len() - 1]).unwrap();
    // (--chunks 4: room for a run, the room check comes first.)
    refused(
        &["--chunks", "4"],
        Some(&store),
        "damaged index vm/100/2026-12-01T00:00:00Z/drive-scsi0.img.fidx",
    );
    // datastore.cfg with garbage, and a name it lacks.
    let cfg = root.join("etc");
    std::fs::create_dir(&cfg).unwrap();
    std::fs::write(
        cfg.join("datastore.cfg"),
        "datastore: a\n\tpath /x\n\u{1}garbage\n",
    )
    .unwrap();
    let config = cfg.to_str().unwrap();
    refused(
        &["--datastore", "a", "--pbs-config", config],
        None,
        "line 3",
    );
    std::fs::write(cfg.join("datastore.cfg"), "datastore: a\n\tpath /x\n").unwrap();
    refused(
        &["--datastore", "b", "--pbs-config", config],
        None,
        "no datastore \"b\"",
    );
    // Too little room: refused before anything is written.
    let small = Ext4::new(64, LoopOptions::default(), &["-m", "0"], "rw");
    refused(&[], Some(small.mount.path()), "needed");
    assert!(small.mount.leftovers().is_empty());
    // Nothing was written by any of them.
    let mut names: Vec<String> = fs.mount.leftovers();
    names.sort();
    assert_eq!(names, ["a-file", "etc", "store"]);
    // A read-only filesystem.
    crate::common::sh("mount", &["-o", "remount,ro", root.to_str().unwrap()]);
    refused(&[], Some(&root), "read-only filesystem");
}

#[test]
#[ignore = "needs root: simulated nodes in network namespaces (scripts/test runs it)"]
fn across_the_cluster_each_node_measures_its_path_and_one_that_cannot_is_named() {
    use crate::common::netns::{Behaviour, TestCluster};
    if !root_or_skip() {
        return;
    }
    let c = TestCluster::new(&[
        ("pve1", Behaviour::Good),
        ("pve2", Behaviour::Good),
        ("pve3", Behaviour::NoPveprobe),
    ]);
    let fs = ext4(700, "rw");
    let out = c
        .pveprobe_on(0, "datastore")
        .args(["--cluster", "--chunks", "4", "--output-format", "json"])
        .arg(fs.mount.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["kind"], "datastore-cluster");
    let nodes = doc["nodes"].as_array().unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n["node"].as_str().unwrap()).collect();
    assert_eq!(names, ["pve1", "pve2", "pve3"]);
    for n in &nodes[..2] {
        assert_eq!(n["status"], "ok", "{n}");
        every_figure(&n["report"]);
    }
    assert_eq!(nodes[2]["status"], "no pveprobe", "{}", nodes[2]);
    assert!(nodes[2]["report"].is_null());
    assert!(
        fs.mount.leftovers().is_empty(),
        "{:?}",
        fs.mount.leftovers()
    );
    // compare reads the cluster's file as a result per node.
    let file = fs.device.backing().with_extension("json");
    std::fs::write(&file, &out.stdout).unwrap();
    let cmp = pveprobe().arg("compare").arg(&file).output().unwrap();
    let _ = std::fs::remove_file(&file);
    let text = stdout(&cmp);
    assert!(text.contains("pve1") && text.contains("pve2"), "{text}");
    assert!(text.contains("DATASTORE RESTORE"), "{text}");
}
