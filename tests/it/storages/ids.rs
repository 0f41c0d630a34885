//! `--storage ID|all` and `pveprobe storages` against a fake PVE
//! (tests/it/common/pve.rs): storage.cfg fixtures, and a fake `pvesm` whose
//! volumes are real loop devices, so a scratch volume is really
//! allocated, prefilled, measured and freed. Path storages are real
//! filesystems on loop devices. Needs root (loop devices, mounts) for all
//! but the listing.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::pve::FakePve;
use crate::common::{
    Ext4, LoopDevice, LoopOptions, Mount, mkfs, read_fixture, root_or_skip, stderr, stdout,
};

/// The default install's storage.cfg with local's path at `local`, both
/// active with 100 GiB.
fn default_install(local: &Path) -> FakePve {
    let cfg = read_fixture("pve/storage-cfg/default-install.cfg")
        .replace("/var/lib/vz", &local.display().to_string());
    let fake = FakePve::new(&cfg);
    fake.set_status(&[
        ("local", "dir", "active", 100 << 20, 1 << 20, 99 << 20),
        ("local-lvm", "lvmthin", "active", 100 << 20, 0, 100 << 20),
    ]);
    fake
}

fn probe(fake: &FakePve, args: &[&str]) -> Command {
    let mut cmd = fake.command();
    cmd.arg("--pve-config").arg(fake.pve_dir()).args(args);
    cmd
}

fn run(fake: &FakePve, args: &[&str]) -> Output {
    probe(fake, args).output().unwrap()
}

/// Nothing of a scratch volume is left: no volume, loop device or file.
fn nothing_left(fake: &FakePve) {
    assert_eq!(fake.volumes(), Vec::<String>::new(), "volumes left");
    assert_eq!(
        fake.loop_devices(),
        Vec::<String>::new(),
        "loop devices left"
    );
}

fn calls(fake: &FakePve, command: &str) -> Vec<Vec<String>> {
    fake.calls()
        .into_iter()
        .filter(|c| c[0] == command)
        .collect()
}

#[test]
fn storages_lists_every_type_and_says_how_or_why_not() {
    let fake = FakePve::new(&read_fixture("pve/storage-cfg/default-install.cfg"));
    fake.set_status(&[
        ("local", "dir", "active", 100 << 20, 1 << 20, 99 << 20),
        ("local-lvm", "lvmthin", "active", 100 << 20, 0, 100 << 20),
    ]);
    let mut cmd = fake.command();
    let out = cmd
        .args(["storages", "--pve-config"])
        .arg(fake.pve_dir())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let line = |id: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no {id} in {text}"))
            .to_string()
    };
    assert!(line("local").contains("the probe in /var/lib/vz"), "{text}");
    assert!(
        line("local-lvm").contains("a scratch volume (pvesm alloc"),
        "{text}"
    );
    assert!(line("local-lvm").contains("rootdir,images"), "{text}");

    // Every type of the fixtures: measured, or skipped with its reason.
    let expect = [
        ("dir.cfg", "the probe in"),
        ("btrfs.cfg", "the probe in"),
        ("nfs.cfg", "must be a mount point"),
        ("cifs.cfg", "must be a mount point"),
        ("cephfs.cfg", "must be a mount point"),
        ("glusterfs.cfg", "must be a mount point"),
        ("lvm.cfg", "a scratch volume"),
        ("lvmthin.cfg", "a scratch volume"),
        ("zfspool.cfg", "a scratch volume"),
        ("rbd.cfg", "activated through PVE::Storage"),
        ("iscsi.cfg", "LUNs are fixed"),
        ("iscsidirect.cfg", "libiscsi"),
        ("zfs.cfg", "ZFS over iSCSI"),
        ("pbs.cfg", "Backup Server"),
        ("esxi.cfg", "ESXi"),
    ];
    for (file, words) in expect {
        std::fs::write(
            fake.pve_dir().join("storage.cfg"),
            read_fixture(&format!("pve/storage-cfg/{file}")),
        )
        .unwrap();
        let mut cmd = fake.command();
        cmd.args(["storages", "--output-format", "json", "--pve-config"])
            .arg(fake.pve_dir());
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        let list: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let plans: Vec<&str> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["plan"].as_str().unwrap())
            .collect();
        assert!(!plans.is_empty(), "{file}: no storage listed");
        assert!(
            plans.iter().any(|p| p.contains(words)),
            "{file}: {plans:?} lacks {words:?}"
        );
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_thin_volume_is_allocated_prefilled_measured_and_freed() {
    if !root_or_skip() {
        return;
    }
    let local = crate::common::workdir();
    let fake = default_install(local.path());
    let out = run(
        &fake,
        &[
            "--storage",
            "local-lvm",
            "--write-size",
            "64M",
            "--duration",
            "0.3",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    crate::common::validate_schema(&doc);
    let s = &doc["pve_storage"];
    assert_eq!(
        (s["id"].as_str(), s["type"].as_str()),
        (Some("local-lvm"), Some("lvmthin"))
    );
    assert_eq!(s["how"], "scratch_volume");
    assert_eq!(s["size_bytes"], 64 << 20);
    let volume = s["volume"].as_str().unwrap().to_string();
    assert!(
        regex::Regex::new(r"^local-lvm:vm-9\d{8}-pveprobe-[0-9a-f]{8}$")
            .unwrap()
            .is_match(&volume),
        "{volume}"
    );
    // The prefill wrote the whole volume once: SEQ WRITE.
    let x = doc["extended"].as_array().unwrap();
    let key = |k: &str| {
        x.iter()
            .find(|f| f["key"] == k)
            .unwrap_or_else(|| panic!("no {k}: {doc}"))
    };
    assert!(key("seq_write")["value"].as_f64().unwrap() > 0.0);
    for k in [
        "rand_read_4k_qd1",
        "rand_read_4k_qd32",
        "rand_write_4k_qd1",
        "rand_write_4k_qd32",
        "sync_write_4k",
    ] {
        assert!(key(k)["value"].as_f64().unwrap() > 0.0, "{k}");
    }
    assert!(doc["figures"]["buffered_reads"]["value"].as_f64().unwrap() > 0.0);
    let fsync = doc["not_measured"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["key"] == "fsyncs_per_second")
        .unwrap();
    assert!(
        fsync["reason"].as_str().unwrap().contains("no filesystem"),
        "{fsync}"
    );
    assert_eq!(fsync["failed"], false);
    // pvesm's calls, in order, with the size in MiB.
    let name = volume.split_once(':').unwrap().1.to_string();
    let vmid = name.split('-').nth(1).unwrap().to_string();
    let order: Vec<Vec<String>> = fake
        .calls()
        .into_iter()
        .filter(|c| c[0] != "status")
        .collect();
    assert_eq!(
        order,
        [
            vec![
                "alloc".to_string(),
                "local-lvm".into(),
                vmid,
                name.clone(),
                "64M".into()
            ],
            vec!["path".into(), volume.clone()],
            vec!["free".into(), volume.clone()],
        ]
    );
    nothing_left(&fake);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn the_prefill_writes_incompressible_data_over_the_whole_volume() {
    if !root_or_skip() {
        return;
    }
    let local = crate::common::workdir();
    let fake = default_install(local.path());
    // Keep the volume: freeing fails, so its file can be read afterwards.
    fake.fail("free", "kept for the test");
    let out = run(
        &fake,
        &[
            "--storage",
            "local-lvm",
            "--write-size",
            "16M",
            "--tests",
            "seqwrite",
            "--duration",
            "0.2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let volid = fake.volumes().pop().expect("kept");
    assert!(
        err.contains(&format!("could not free the scratch volume {volid}"))
            && err.contains(&format!("free it with: pvesm free {volid}")),
        "{err}"
    );
    let name = volid.split_once(':').unwrap().1;
    let file = fake
        .state_dir()
        .join("images/local-lvm")
        .join(format!("{name}.raw"));
    let data = std::fs::read(&file).unwrap();
    assert_eq!(data.len(), 16 << 20);
    // Every MiB written (no hole left), and not compressible to nothing.
    for (i, mib) in data.chunks(1 << 20).enumerate() {
        assert!(
            mib.iter().filter(|b| **b == 0).count() < mib.len() / 16,
            "MiB {i} is mostly zeros"
        );
    }
    fake.clear_fail("free");
    let mut cmd = Command::new(FakePve::script());
    fake.env(&mut cmd).args(["free", &volid]);
    assert!(cmd.output().unwrap().status.success());
    nothing_left(&fake);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_device_that_is_not_the_volume_or_in_use_is_refused_before_any_write() {
    if !root_or_skip() {
        return;
    }
    let local = crate::common::workdir();
    // Mounted: the kernel refuses the exclusive open; the filesystem on
    // it keeps its file.
    let fake = default_install(local.path());
    fake.mount_on_alloc();
    let out = run(
        &fake,
        &[
            "--storage",
            "local-lvm",
            "--write-size",
            "64M",
            "--duration",
            "0.2",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("not measured") && err.contains("nothing written"),
        "{err}"
    );
    assert!(err.contains("in use"), "{err}");
    assert_eq!(calls(&fake, "free").len(), 1, "{:?}", fake.calls());
    nothing_left(&fake);

    // pvesm names another device: refused, the volume freed.
    let other = LoopDevice::new(64, LoopOptions::default());
    let fake = default_install(local.path());
    fake.override_path(other.path());
    let out = run(
        &fake,
        &[
            "--storage",
            "local-lvm",
            "--write-size",
            "64M",
            "--duration",
            "0.2",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not its device, nothing written"),
        "{}",
        stderr(&out)
    );
    assert_eq!(calls(&fake, "free").len(), 1);
    nothing_left(&fake);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_failed_alloc_measures_nothing_and_leaves_nothing() {
    if !root_or_skip() {
        return;
    }
    let local = crate::common::workdir();
    let fake = default_install(local.path());
    fake.fail("alloc", "lvcreate: Insufficient free space");
    let out = run(&fake, &["--storage", "local-lvm", "--duration", "0.2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Insufficient free space"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
    nothing_left(&fake);

    // Too little space by pvesm status: refused before alloc.
    fake.clear_fail("alloc");
    fake.set_status(&[("local-lvm", "lvmthin", "active", 1 << 20, 0, 1 << 10)]);
    let allocs = calls(&fake, "alloc").len();
    let out = run(&fake, &["--storage", "local-lvm"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("does not fit"), "{}", stderr(&out));
    assert_eq!(calls(&fake, "alloc").len(), allocs, "no alloc");
}

/// Sends `signal` once `ready` holds, and checks the probe exits 128 +
/// signal having freed its volume.
fn signal_when(
    fake: &FakePve,
    args: &[&str],
    signal: nix::sys::signal::Signal,
    ready: &dyn Fn() -> bool,
) -> String {
    let mut child = probe(fake, args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the phase never came"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let status = crate::common::wait_within(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + signal as i32), "{signal}: {err}");
    assert!(
        err.contains(&format!("interrupted by {}", signal.as_str())),
        "{err}"
    );
    assert_eq!(calls(fake, "free").len(), 1, "{signal}: {:?}", fake.calls());
    nothing_left(fake);
    err
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn every_signal_in_every_phase_frees_the_volume() {
    use nix::sys::signal::Signal;
    if !root_or_skip() {
        return;
    }
    let local = crate::common::workdir();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // During pvesm alloc (slow): the alloc finishes, then it is freed.
        let fake = default_install(local.path());
        fake.delay_alloc(2.0);
        let allocating = || !fake.volumes().is_empty();
        signal_when(
            &fake,
            &["--storage", "local-lvm", "--write-size", "64M"],
            signal,
            &allocating,
        );

        // During the prefill of a large sparse volume.
        let fake = default_install(local.path());
        let writing = || {
            fake.volumes().first().is_some_and(|v| {
                let name = v.split_once(':').unwrap().1;
                let file = fake
                    .state_dir()
                    .join("images/local-lvm")
                    .join(format!("{name}.raw"));
                std::fs::metadata(file).is_ok_and(|m| {
                    use std::os::unix::fs::MetadataExt;
                    m.blocks() > 0
                })
            })
        };
        signal_when(
            &fake,
            &["--storage", "local-lvm", "--write-size", "8G"],
            signal,
            &writing,
        );

        // During the measurements: a long window after a 16 MiB prefill,
        // which is over within half a second of `pvesm path`.
        let fake = default_install(local.path());
        let measuring = || {
            let found = !calls(&fake, "path").is_empty();
            if found {
                std::thread::sleep(Duration::from_millis(500));
            }
            found
        };
        let err = signal_when(
            &fake,
            &[
                "--storage",
                "local-lvm",
                "--write-size",
                "16M",
                "--duration",
                "60",
            ],
            signal,
            &measuring,
        );
        assert!(err.contains("stopped"), "{err}");
    }
}

/// A dir storage on a real filesystem: the probe in its directory.
fn dir_storage(mount: &Path, fstype: &str) {
    let cfg = format!(
        "dir: data\n\tpath {}\n\tcontent images,rootdir\n",
        mount.display()
    );
    let fake = FakePve::new(&cfg);
    fake.set_status(&[("data", "dir", "active", 1 << 20, 0, 1 << 20)]);
    let out = run(&fake, &["--storage", "data", "--duration", "0.3"]);
    assert_eq!(out.status.code(), Some(0), "{fstype}: {}", stderr(&out));
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        format!("STORAGE:           data (dir): path {}", mount.display())
    );
    let lines: Vec<&str> = text.lines().skip(1).collect();
    let pveperf = crate::common::pveperf_lines(&(lines.join("\n") + "\n"));
    assert!(
        crate::common::figure(&pveperf, "FSYNCS/SECOND") > 0.0,
        "{text}"
    );
    assert!(pveperf.contains_key("BUFFERED READS"), "{text}");
    assert!(
        calls(&fake, "alloc").is_empty(),
        "a path storage needs no volume"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn dir_storages_on_ext4_and_xfs_and_a_btrfs_storage() {
    if !root_or_skip() {
        return;
    }
    let ext4 = Ext4::new(256, LoopOptions::default(), &[], "rw");
    dir_storage(ext4.mount.path(), "ext4");
    assert!(ext4.mount.leftovers().is_empty());

    let dev = LoopDevice::new(512, LoopOptions::default());
    mkfs("xfs", dev.path(), &[]);
    let xfs = Mount::new(dev.path(), "rw");
    dir_storage(xfs.path(), "xfs");
    assert!(xfs.leftovers().is_empty());
    drop(xfs);

    let dev = LoopDevice::new(512, LoopOptions::default());
    mkfs("btrfs", dev.path(), &[]);
    let btrfs = Mount::new(dev.path(), "rw");
    let cfg = format!(
        "btrfs: bt\n\tpath {}\n\tcontent images,rootdir\n",
        btrfs.path().display()
    );
    let fake = FakePve::new(&cfg);
    fake.set_status(&[("bt", "btrfs", "active", 1 << 20, 0, 1 << 20)]);
    let out = run(
        &fake,
        &[
            "--storage",
            "bt",
            "--duration",
            "0.3",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["pve_storage"]["type"], "btrfs");
    assert_eq!(doc["pve_storage"]["how"], "path");
    assert_eq!(doc["filesystem"]["fstype"], "btrfs");
    assert!(btrfs.leftovers().is_empty());
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_storage_that_must_be_a_mount_point_and_is_not_is_refused() {
    if !root_or_skip() {
        return;
    }
    let dir = crate::common::workdir();
    let unmounted = dir.path().join("usb");
    std::fs::create_dir(&unmounted).unwrap();
    let cfg = format!(
        "dir: usb\n\tpath {}\n\tis_mountpoint yes\n\tcontent backup\n",
        unmounted.display()
    );
    let fake = FakePve::new(&cfg);
    fake.set_status(&[("usb", "dir", "active", 1 << 20, 0, 1 << 20)]);
    let out = run(&fake, &["--storage", "usb", "--duration", "0.2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a mount point"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_dir(&unmounted).unwrap().count(),
        0,
        "nothing created"
    );

    // Mounted there, the same storage is measured.
    let ext4 = Ext4::new(128, LoopOptions::default(), &[], "rw");
    let cfg = format!(
        "dir: usb\n\tpath {}\n\tis_mountpoint yes\n\tcontent backup\n",
        ext4.mount.path().display()
    );
    std::fs::write(fake.pve_dir().join("storage.cfg"), cfg).unwrap();
    let out = run(
        &fake,
        &["--storage", "usb", "--tests", "fsync", "--duration", "0.2"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn all_storages_make_one_csv_row_each_and_skip_the_others() {
    if !root_or_skip() {
        return;
    }
    let ext4 = Ext4::new(256, LoopOptions::default(), &[], "rw");
    let cfg = read_fixture("pve/storage-cfg/default-install.cfg")
        .replace("/var/lib/vz", &ext4.mount.path().display().to_string())
        + "\npbs: backup\n\tserver 10.0.0.2\n\tdatastore ds\n\tusername root@pam\n\tcontent backup\n";
    let fake = FakePve::new(&cfg);
    fake.set_status(&[
        ("local", "dir", "active", 100 << 20, 1 << 20, 99 << 20),
        ("local-lvm", "lvmthin", "active", 100 << 20, 0, 100 << 20),
        ("backup", "pbs", "active", 100 << 20, 0, 100 << 20),
    ]);
    let out = run(
        &fake,
        &[
            "--storage",
            "all",
            "--write-size",
            "32M",
            "--duration",
            "0.2",
            "--output-format",
            "csv",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 2, "one row per measured storage: {text}");
    assert_eq!(&records[0][col("pve_storage")], "local");
    assert_eq!(&records[1][col("pve_storage")], "local-lvm");
    assert_eq!(&records[1][col("pve_storage_type")], "lvmthin");
    assert!(!records[1][col("rand_write_4k_qd1_iops")].is_empty());
    assert!(
        stderr(&out).contains("storage backup (pbs): skipped"),
        "{}",
        stderr(&out)
    );
    nothing_left(&fake);

    // The text ends with one table, a row per storage.
    let out = run(
        &fake,
        &[
            "--storage",
            "all",
            "--write-size",
            "32M",
            "--duration",
            "0.2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("storage "))
        .collect();
    assert_eq!(table.len(), 4, "{text}");
    assert!(
        table[2].starts_with("local (dir)") && table[3].starts_with("local-lvm (lvmthin)"),
        "{text}"
    );
    nothing_left(&fake);
}

#[test]
fn storage_and_path_together_or_an_unknown_id_are_usage_errors() {
    let fake = FakePve::new(&read_fixture("pve/storage-cfg/default-install.cfg"));
    fake.set_status(&[("local", "dir", "active", 1 << 20, 0, 1 << 20)]);
    let out = run(&fake, &["--storage", "local", "/tmp"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    let out = run(&fake, &["--storage", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no storage nope in"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn rbd_is_mapped_through_pve_storage_or_skipped_without_it() {
    let cfg = "rbd: ceph\n\tpool rbd\n\tcontent images\n\tkrbd 1\n";
    let fake = FakePve::new(cfg);
    fake.set_status(&[("ceph", "rbd", "active", 100 << 20, 0, 100 << 20)]);
    // No PVE::Storage on this machine: skipped, nothing allocated.
    let out = run(&fake, &["--storage", "ceph"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("it needs PVE's storage library")
            && stderr(&out).contains("PVE::Storage"),
        "{}",
        stderr(&out)
    );
    assert!(calls(&fake, "alloc").is_empty());

    if !root_or_skip() {
        return;
    }
    // With a stand-in library: allocated, activated and mapped, measured,
    // unmapped and deactivated, then freed, in that order.
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/perl");
    let out = probe(
        &fake,
        &[
            "--storage",
            "ceph",
            "--write-size",
            "16M",
            "--tests",
            "read",
            "--duration",
            "0.2",
        ],
    )
    .env("PERL5LIB", &lib)
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let order: Vec<String> = fake
        .calls()
        .into_iter()
        .filter(|c| c[0] != "status")
        .map(|c| {
            if c[0] == "perl" {
                c[..2].join(" ")
            } else {
                c[0].clone()
            }
        })
        .collect();
    assert_eq!(
        order,
        [
            "alloc",
            "perl activate_volumes",
            "perl map_volume",
            "path",
            "perl unmap_volume",
            "perl deactivate_volumes",
            "free",
        ],
        "{:?}",
        fake.calls()
    );
    assert!(
        stdout(&out).contains("STORAGE:           ceph (rbd, shared): scratch volume ceph:vm-")
    );
    nothing_left(&fake);
}
