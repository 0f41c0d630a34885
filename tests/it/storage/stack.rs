//! The storage stack on real devices made by the tests: a partitioned loop
//! device, btrfs RAID1 over two loop devices, and a ZFS dataset whose
//! mountinfo (a --sysroot tree) and fake `zpool`/`zfs` place it on real loop
//! devices, so BUFFERED READS and AVERAGE SEEK TIME read its leaf disks.
//! Needs root; skips with a message otherwise.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::zfs::ZfsRig;
use crate::common::{
    LoopDevice, LoopOptions, Mount, mkfs, pveprobe, root_or_skip, sh, stderr, stdout, workdir,
};

fn json_storage(path: &Path) -> serde_json::Value {
    let out = pveprobe()
        .args(["--tests", "cpu", "--output-format", "json"])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    crate::common::validate_schema(&doc);
    doc["storage"].clone()
}

fn name(dev: &Path) -> String {
    dev.file_name().unwrap().to_string_lossy().into_owned()
}

/// A 64 MiB image file of our own partitioned by `sfdisk` with `script`
/// (never a device), mapped with `losetup -P`: the directory, the disk,
/// its first partition, and the guard that detaches it.
fn partitioned(script: &[u8]) -> (tempfile::TempDir, PathBuf, PathBuf, Detach) {
    let dir = workdir();
    let image = dir.path().join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let mut sfdisk = std::process::Command::new("sfdisk")
        .args(["--quiet", image.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("sfdisk (scripts/install-test-deps)");
    std::io::Write::write_all(sfdisk.stdin.as_mut().unwrap(), script).unwrap();
    drop(sfdisk.stdin.take());
    assert!(sfdisk.wait().unwrap().success());
    let disk = PathBuf::from(sh(
        "losetup",
        &["--find", "--show", "-P", image.to_str().unwrap()],
    ));
    let detach = Detach(disk.clone());
    let part = PathBuf::from(format!("{}p1", disk.display()));
    // Some kernels do not scan at attach time; ask for the partition table.
    if !part.exists() {
        sh("partx", &["-a", disk.to_str().unwrap()]);
    }
    for _ in 0..100 {
        if part.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (dir, disk, part, detach)
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_partition_resolves_to_its_disk() {
    if !root_or_skip() {
        return;
    }
    let (_dir, disk, part, _detach) = partitioned(b"label: gpt\n,,L\n");
    mkfs("ext4", part.to_str().unwrap(), &[]);
    let mount = Mount::new(part.to_str().unwrap(), "rw");
    let storage = json_storage(mount.path());
    assert_eq!(storage["device"], name(&part));
    assert_eq!(storage["layers"][0]["kind"], "partition");
    assert_eq!(storage["layers"][0]["detail"], "1");
    assert_eq!(
        storage["layers"][0]["below"],
        serde_json::json!([name(&disk)])
    );
    assert_eq!(storage["disks"].as_array().unwrap().len(), 1);
    assert_eq!(storage["disks"][0]["name"], name(&disk));
    assert_eq!(storage["disks"][0]["transport"], "virtual");

    let out = pveprobe()
        .args(["--tests", "cpu", "-v"])
        .arg(mount.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "    {}: partition 1 on {}\n",
            name(&part),
            name(&disk)
        )),
        "{text}"
    );
    drop(mount);
}

struct Detach(PathBuf);

impl Drop for Detach {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .arg("-d")
            .arg(&self.0)
            .status();
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn btrfs_raid1_resolves_to_both_devices() {
    if !root_or_skip() {
        return;
    }
    let a = LoopDevice::new(300, LoopOptions::default());
    let b = LoopDevice::new(300, LoopOptions::default());
    sh(
        "mkfs.btrfs",
        &["-q", "-f", "-d", "raid1", "-m", "raid1", a.path(), b.path()],
    );
    let _ = std::process::Command::new("btrfs")
        .args(["device", "scan"])
        .status();
    let mount = Mount::new(a.path(), "rw");
    let storage = json_storage(mount.path());
    let mut members = vec![name(&a.dev), name(&b.dev)];
    members.sort();
    assert_eq!(storage["layers"][0]["kind"], "btrfs");
    assert_eq!(storage["layers"][0]["detail"], "2 devices");
    assert_eq!(storage["layers"][0]["below"], serde_json::json!(members));
    let disks: Vec<&str> = storage["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(disks, members);
    drop(mount);
}

/// Two 64 MiB loop devices: 512-byte sectors, and 4096-byte (4Kn).
fn a_512_and_a_4kn_disk() -> (LoopDevice, LoopDevice) {
    let four_k = LoopOptions {
        sector_size: Some(4096),
        partitions: false,
    };
    (
        LoopDevice::new(64, LoopOptions::default()),
        LoopDevice::new(64, four_k),
    )
}

fn zpool_status(a: &Path, b: &Path) -> String {
    format!(
        "#!/bin/sh\n[ \"$1 $2 $3 $4\" = \"status -P -L testpool\" ] || exit 9\ncat <<'EOF'\n  pool: testpool\n state: ONLINE\nconfig:\n\n\tNAME            STATE     READ WRITE CKSUM\n\ttestpool        ONLINE       0     0     0\n\t  mirror-0      ONLINE       0     0     0\n\t    {}  ONLINE       0     0     0\n\t    {}  ONLINE       0     0     0\n\nerrors: No known data errors\nEOF\n",
        a.display(),
        b.display()
    )
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn zfs_dataset_reads_its_pools_leaf_disks() {
    if !root_or_skip() {
        return;
    }
    let (a, b) = a_512_and_a_4kn_disk();
    let rig = ZfsRig::new(&zpool_status(&a.dev, &b.dev));
    let out = rig.probe(&["--tests", "read,seek", "--duration", "0.4", "-v"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let (lines, details) = text.split_once("\nDetails:\n").unwrap();
    let names = format!("({}, {})", name(&a.dev), name(&b.dev));
    let parsed = crate::common::pveperf_lines(
        &lines
            .lines()
            .map(|l| l.strip_suffix(&format!(" {names}")).unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    assert!(
        lines.contains("BUFFERED READS:    ") && lines.contains(&format!("MB/sec {names}")),
        "{lines}"
    );
    assert!(lines.contains(&format!(" ms {names}")), "{lines}");
    assert!(parsed.contains_key("AVERAGE SEEK TIME"));
    assert_eq!(parsed["HD SIZE"].split('(').nth(1), Some("testpool/data)"));
    assert!(
        details.contains("per device (mean of these is the figure): "),
        "{details}"
    );
    assert!(
        details.contains(&format!("ZFS pool testpool (ONLINE): mirror {names}")),
        "{details}"
    );
    assert!(
        details.contains("ZFS dataset testpool/data: compression=lz4"),
        "{details}"
    );
    assert!(
        details.contains("hint: [compression] testpool/data: compression=lz4"),
        "{details}"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn zfs_without_zpool_says_so() {
    if !root_or_skip() {
        return;
    }
    let rig = ZfsRig::new("#!/bin/sh\nexit 0\n");
    std::fs::remove_file(rig.bin.join("zpool")).unwrap();
    let out = rig.probe(&["--tests", "read", "--duration", "0.2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!stdout(&out).contains("BUFFERED READS"));
    assert!(
        stderr(&out).contains("BUFFERED READS: not measured: testpool/data (zfs) is not a block device, and its pool's disks are unknown: zpool is not installed (package zfsutils-linux)"),
        "{}",
        stderr(&out)
    );
}

/// Real md RAID1 where the kernel has md (this project's CI kernel has not).
#[test]
#[ignore = "needs root and md in the kernel: scripts/test runs it where the kernel has md (elsewhere fixtures/storage/md-raid1 covers it)"]
fn md_raid1_where_the_kernel_has_md() {
    if !root_or_skip() {
        return;
    }
    assert!(
        crate::common::kernel_has_md(),
        "no md in this kernel: scripts/test leaves this test out here (fixtures/storage/md-raid1 covers it)"
    );
    crate::common::needs_tools(&["mdadm"], "mdadm");
    let a = LoopDevice::new(64, LoopOptions::default());
    let b = LoopDevice::new(64, LoopOptions::default());
    let md = "/dev/md/pveprobe-test";
    sh(
        "mdadm",
        &[
            "--create",
            md,
            "--run",
            "--level=1",
            "--raid-devices=2",
            "--metadata=1.2",
            a.path(),
            b.path(),
        ],
    );
    struct Stop(&'static str);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = std::process::Command::new("mdadm")
                .args(["--stop", self.0])
                .status();
        }
    }
    let _stop = Stop(md);
    mkfs("ext4", md, &[]);
    let mount = Mount::new(md, "rw");
    let storage = json_storage(mount.path());
    assert_eq!(storage["layers"][0]["kind"], "md");
    let disks: Vec<&str> = storage["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(disks.len(), 2, "{storage}");
    drop(mount);
}

#[test]
fn device_mapper_is_read_from_the_kernel() {
    use crate::common::{lists_device_mapper, reports_dm_driver};
    assert!(lists_device_mapper(
        "237 loop-control\n236 device-mapper\n229 fuse\n"
    ));
    assert!(!lists_device_mapper("237 loop-control\n229 fuse\n"));
    assert!(!lists_device_mapper("236 device-mapper-extra\n"));
    // `dmsetup version` with the driver, and without it (the node
    // dmsetup made is there all the same).
    assert!(reports_dm_driver(
        "Library version:   1.02.185 (2022-05-18)\nDriver version:    4.48.0\n"
    ));
    assert!(!reports_dm_driver(
        "Library version:   1.02.185 (2022-05-18)\n/dev/mapper/control: open failed: No such device\n"
    ));
    // This machine: the answer does not depend on /dev/mapper/control.
    let misc = std::fs::read_to_string("/proc/misc").unwrap();
    if !lists_device_mapper(&misc) {
        let _ = std::process::Command::new("dmsetup")
            .arg("version")
            .output();
        assert!(!crate::common::kernel_has_device_mapper());
    }
}

/// Real LVM where the kernel has device-mapper (this project's CI kernel has not).
#[test]
#[ignore = "needs root and device-mapper in the kernel: scripts/test runs it where the kernel has it (elsewhere fixtures/storage/lvm-sata-ahci covers it)"]
fn lvm_where_the_kernel_has_device_mapper() {
    if !root_or_skip() {
        return;
    }
    // The kernel decides, never a device node: libdevmapper makes
    // /dev/mapper/control by itself wherever `dmsetup` ran once.
    assert!(
        crate::common::kernel_has_device_mapper(),
        "no device-mapper in this kernel: scripts/test leaves this test out here (fixtures/storage/lvm-sata-ahci covers it)"
    );
    crate::common::needs_tools(&["lvcreate"], "lvm2");
    let pv = LoopDevice::new(128, LoopOptions::default());
    let vg = format!("pveprobetest{}", std::process::id());
    sh("vgcreate", &["-q", &vg, pv.path()]);
    struct Remove(String);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::process::Command::new("vgremove")
                .args(["-q", "-f", &self.0])
                .status();
        }
    }
    let _remove = Remove(vg.clone());
    sh("lvcreate", &["-q", "-y", "-n", "data", "-L", "64M", &vg]);
    let lv = format!("/dev/mapper/{vg}-data");
    mkfs("ext4", &lv, &[]);
    let mount = Mount::new(&lv, "rw");
    let storage = json_storage(mount.path());
    assert_eq!(storage["layers"][0]["kind"], "lvm");
    assert_eq!(storage["layers"][0]["detail"], format!("{vg}-data"));
    assert_eq!(storage["disks"][0]["name"], name(&pv.dev));
    drop(mount);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn zfs_dataset_extended_device_tests_read_the_leaf_disks() {
    if !root_or_skip() {
        return;
    }
    let a = LoopDevice::new(64, LoopOptions::default());
    let b = LoopDevice::new(64, LoopOptions::default());
    let rig = ZfsRig::new(&zpool_status(&a.dev, &b.dev));
    let out = rig.probe(&["--tests", "seqread,randread", "--duration", "0.4"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let on = format!(" on {}, {})", name(&a.dev), name(&b.dev));
    for label in [
        "SEQ READ DIRECT:",
        "RANDOM READ 4K QD1:",
        "RANDOM READ 4K QD32:",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {text}"));
        assert!(line.ends_with(&on), "{line}");
    }
}

/// A pool made with ashift 9 over a 4Kn disk (a loop device with 4096-byte
/// sectors) and a 512-byte one: the hint names the 4Kn disk and the
/// ashift to use; with ashift 12 there is none. The fake `zpool` answers
/// `get ashift` as OpenZFS prints it (`-Hp -o value`).
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn zfs_ashift_below_a_4kn_disks_sector() {
    if !root_or_skip() {
        return;
    }
    let (a, b) = a_512_and_a_4kn_disk();
    let with_ashift = |ashift: u32| {
        let status = zpool_status(&a.dev, &b.dev);
        let script = status.replacen(
            "#!/bin/sh\n",
            &format!(
                "#!/bin/sh\n[ \"$*\" = \"get -Hp -o value ashift testpool\" ] && {{ echo {ashift}; exit 0; }}\n"
            ),
            1,
        );
        let rig = ZfsRig::new(&script);
        let out = rig.probe(&[
            "--tests",
            "regex",
            "--duration",
            "0.1",
            "--output-format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        crate::common::validate_schema(&doc);
        doc["storage"].clone()
    };
    let nine = with_ashift(9);
    assert_eq!(nine["zfs"]["ashift"], 9);
    let hints: Vec<&serde_json::Value> = nine["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["code"] == "ashift-below-sector")
        .collect();
    assert_eq!(hints.len(), 1, "{nine:#}");
    assert_eq!(hints[0]["subject"], "testpool");
    let text = hints[0]["message"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "ashift 9 (512-byte blocks) on disks with 4096-byte physical sectors ({}):",
            name(&b.dev)
        )),
        "{text}"
    );
    assert!(text.ends_with("with -o ashift=12"), "{text}");
    let twelve = with_ashift(12);
    assert!(
        !twelve["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["code"] == "ashift-below-sector"),
        "{twelve:#}"
    );
}

/// A partition at sector 63 (an old DOS layout) on a loop device marked
/// non-rotational: 32,256 bytes is off the SSD's 4 KiB boundary, so the
/// hint says misaligned; the default layout (sector 2048) gets none. The
/// disk's discard limit is what the kernel reports.
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_partition_at_sector_63_on_an_ssd_is_misaligned() {
    if !root_or_skip() {
        return;
    }
    for (start, misaligned) in [(63u64, true), (2048, false)] {
        let script = format!("label: dos\nstart={start}, type=83\n");
        let (_dir, disk, part, _detach) = partitioned(script.as_bytes());
        // Our own loop device: say it is an SSD, as the kernel lets root.
        std::fs::write(format!("/sys/block/{}/queue/rotational", name(&disk)), "0").unwrap();
        mkfs("ext4", part.to_str().unwrap(), &[]);
        let mount = Mount::new(part.to_str().unwrap(), "rw");
        let storage = json_storage(mount.path());
        assert_eq!(storage["layers"][0]["start_bytes"], start * 512);
        let kernel: u64 = std::fs::read_to_string(format!(
            "/sys/block/{}/queue/discard_max_bytes",
            name(&disk)
        ))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
        assert_eq!(storage["disks"][0]["discard_max_bytes"], kernel);
        let codes = crate::common::hint_codes(&storage["hints"]);
        assert_eq!(
            codes.contains(&"misaligned"),
            misaligned,
            "start {start}: {storage:#}"
        );
        drop(mount);
    }
}
