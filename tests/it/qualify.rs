//! `pveprobe qualify` on loop devices the tests make: every kind of
//! signature (made by its real tool, or its documented on-disk magic where
//! the kernel here has no driver for it) and every use is refused with its
//! cause named and the backing file unchanged; a clean device is written
//! with the tests' pattern and discarded; a signal stops the writes,
//! discards and exits 128+n. No test writes to a device it did not make.

use std::fs::File;
use std::hash::{DefaultHasher, Hasher};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    LoopDevice, LoopOptions, Mount, mkfs, pveprobe, root_or_skip, sh, stderr, stdout, wait_within,
    workdir,
};

/// The backing file's bytes, hashed: equal before and after means nothing was written.
fn checksum(path: &Path) -> u64 {
    let mut f = File::open(path).unwrap();
    let mut h = DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h.finish();
        }
        h.write(&buf[..n]);
    }
}

fn name(dev: &LoopDevice) -> String {
    Path::new(dev.path())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// `loop7:67108864`: what confirms a loop device.
fn identity(dev: &LoopDevice) -> String {
    let size = std::fs::metadata(dev.backing()).unwrap().len();
    format!("{}:{size}", name(dev))
}

/// A short qualify run of `dev`, confirmed, with `extra` options.
fn qualify(dev: &LoopDevice, extra: &[&str]) -> Output {
    let id = identity(dev);
    let mut args = vec![
        "qualify",
        "--seconds",
        "0.2",
        "--sustained",
        "0",
        "--destroy-data-on",
        &id,
    ];
    args.extend_from_slice(extra);
    args.push(dev.path());
    pveprobe().args(&args).output().unwrap()
}

/// Asserts `out` refused (exit 2) naming `cause`, and wrote nothing.
fn refused(out: &Output, cause: &str, before: u64, dev: &LoopDevice) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{cause}: {err}");
    assert!(err.contains("refusing to write"), "{cause}: {err}");
    assert!(err.contains(cause), "{cause} not named: {err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(
        checksum(dev.backing()),
        before,
        "{cause}: the device was written"
    );
}

/// A little-endian integer written into `buf` at `at`.
fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// Writes `bytes` at `offset` of the device (the test's own loop device).
fn write_at(dev: &LoopDevice, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dev.path())
        .unwrap();
    f.write_all_at(bytes, offset).unwrap();
    f.sync_all().unwrap();
}

/// An md 1.2 superblock (mdadm's layout, `md_p.h`): at 4 KiB, magic
/// a92b4efc, major version 1, super_offset 8 sectors, max_dev 0, and its
/// checksum (the sum of its 32-bit words folded to 32 bits).
fn md_superblock() -> Vec<u8> {
    let mut sb = vec![0u8; 256];
    put(&mut sb, 0, &0xa92b_4efcu32.to_le_bytes());
    put(&mut sb, 4, &1u32.to_le_bytes());
    put(&mut sb, 16, b"pveprobe-test-uu");
    put(&mut sb, 32, b"qualify:0");
    put(&mut sb, 72, &1u32.to_le_bytes()); // level: RAID1
    put(&mut sb, 92, &2u32.to_le_bytes()); // raid_disks
    put(&mut sb, 144, &8u64.to_le_bytes()); // super_offset
    put(&mut sb, 168, b"pveprobe-test-dv");
    let mut sum: u64 = sb
        .chunks(4)
        .map(|w| u64::from(u32::from_le_bytes(w.try_into().unwrap())))
        .sum();
    sum = (sum >> 32) + (sum & 0xffff_ffff);
    put(&mut sb, 216, &(sum as u32).to_le_bytes());
    sb
}

/// CRC-64/WE (util-linux's `ul_crc64_we`, bcache's superblock checksum).
fn crc64_we(data: &[u8]) -> u64 {
    let mut crc = u64::MAX;
    for &b in data {
        crc ^= u64::from(b) << 56;
        for _ in 0..8 {
            crc = if crc & (1 << 63) != 0 {
                (crc << 1) ^ 0x42F0_E1EB_A9EA_3693
            } else {
                crc << 1
            };
        }
    }
    !crc
}

/// A bcache backing device's superblock (`bcache_ondisk.h`): at 4 KiB,
/// offset 8 sectors, version 1, the bcache magic, no journal keys, and
/// its CRC-64 from byte 8 to the journal.
fn bcache_superblock() -> Vec<u8> {
    let mut sb = vec![0u8; 208];
    put(&mut sb, 8, &8u64.to_le_bytes());
    put(&mut sb, 16, &1u64.to_le_bytes());
    put(
        &mut sb,
        24,
        b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81",
    );
    put(&mut sb, 40, b"pveprobe-test-uu");
    let csum = crc64_we(&sb[8..]);
    put(&mut sb, 0, &csum.to_le_bytes());
    sb
}

/// The uberblocks of a ZFS label (L0, 128 KiB into the device): four
/// with the uberblock magic 0x00bab10c, as libblkid 2.38 asks to see.
fn zfs_uberblocks(dev: &LoopDevice) {
    let mut ub = vec![0u8; 1024];
    put(&mut ub, 0, &0x00ba_b10cu64.to_le_bytes());
    put(&mut ub, 8, &5000u64.to_le_bytes()); // ub_version
    for i in 0..4u64 {
        write_at(dev, 128 * 1024 + i * 1024, &ub);
    }
}

/// How each signature is made, and what `blkid -p` prints for it.
struct Case {
    kind: &'static str,
    mib: u64,
    make: fn(&LoopDevice),
    blkid: &'static str,
}

const CASES: &[Case] = &[
    Case {
        kind: "ext4",
        mib: 64,
        make: |d| mkfs("ext4", d.path(), &[]),
        blkid: "TYPE=\"ext4\"",
    },
    Case {
        kind: "xfs",
        mib: 320,
        make: |d| mkfs("xfs", d.path(), &[]),
        blkid: "TYPE=\"xfs\"",
    },
    Case {
        kind: "btrfs",
        mib: 128,
        make: |d| mkfs("btrfs", d.path(), &[]),
        blkid: "TYPE=\"btrfs\"",
    },
    Case {
        kind: "swap",
        mib: 64,
        make: |d| {
            sh("mkswap", &[d.path()]);
        },
        blkid: "TYPE=\"swap\"",
    },
    Case {
        kind: "gpt",
        mib: 64,
        make: |d| sfdisk(d, "label: gpt\n,\n"),
        blkid: "PTTYPE=\"gpt\"",
    },
    Case {
        kind: "dos",
        mib: 64,
        make: |d| sfdisk(d, "label: dos\n,\n"),
        blkid: "PTTYPE=\"dos\"",
    },
    Case {
        kind: "LVM2_member",
        mib: 64,
        make: |d| {
            sh("pvcreate", &["-qq", "-y", "-f", d.path()]);
        },
        blkid: "TYPE=\"LVM2_member\"",
    },
    Case {
        kind: "crypto_LUKS",
        mib: 64,
        make: luks,
        blkid: "TYPE=\"crypto_LUKS\"",
    },
    Case {
        kind: "linux_raid_member",
        mib: 64,
        make: |d| write_at(d, 4096, &md_superblock()),
        blkid: "TYPE=\"linux_raid_member\"",
    },
    Case {
        kind: "zfs_member",
        mib: 64,
        make: zfs_uberblocks,
        blkid: "TYPE=\"zfs_member\"",
    },
    Case {
        kind: "ceph_bluestore",
        mib: 64,
        make: |d| write_at(d, 0, b"bluestore block device\n"),
        blkid: "TYPE=\"ceph_bluestore\"",
    },
    Case {
        kind: "bcache",
        mib: 64,
        make: |d| write_at(d, 4096, &bcache_superblock()),
        blkid: "TYPE=\"bcache\"",
    },
];

fn sfdisk(dev: &LoopDevice, script: &str) {
    let mut child = Command::new("sfdisk")
        .args(["-q", "--no-reread", dev.path()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), script.as_bytes()).unwrap();
    child.wait().unwrap();
}

fn luks(dev: &LoopDevice) {
    let dir = workdir();
    let key = dir.path().join("key");
    std::fs::write(&key, b"pveprobe-test-key").unwrap();
    sh(
        "cryptsetup",
        &[
            "luksFormat",
            "--batch-mode",
            "--type",
            "luks2",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            key.to_str().unwrap(),
            dev.path(),
        ],
    );
}

fn blkid_p(dev: &str) -> String {
    let out = Command::new("blkid").args(["-p", dev]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn every_signature_is_refused_by_name_and_nothing_is_written() {
    if !root_or_skip() {
        return;
    }
    for case in CASES {
        let dev = LoopDevice::new(case.mib, LoopOptions::default());
        (case.make)(&dev);
        let seen = blkid_p(dev.path());
        assert!(
            seen.contains(case.blkid),
            "{}: blkid -p saw {seen:?}",
            case.kind
        );
        let before = checksum(dev.backing());
        let out = qualify(&dev, &[]);
        refused(
            &out,
            &format!("{} signature at offset 0x", case.kind),
            before,
            &dev,
        );
        // --dry-run checks the same and writes nothing either.
        let dry = pveprobe()
            .args(["qualify", "--dry-run", dev.path()])
            .output()
            .unwrap();
        refused(&dry, case.kind, before, &dev);
    }
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_signature_on_a_partition_and_a_mounted_partition_are_refused() {
    if !root_or_skip() {
        return;
    }
    let dev = LoopDevice::new(
        64,
        LoopOptions {
            partitions: true,
            ..LoopOptions::default()
        },
    );
    sfdisk(&dev, "label: gpt\n,16M\n,\n");
    sh("partx", &["-u", dev.path()]);
    let part = format!("{}p1", dev.path());
    mkfs("ext4", &part, &[]);
    let p1 = format!("{}p1", name(&dev));
    let before = checksum(dev.backing());
    let out = qualify(&dev, &[]);
    refused(&out, &format!("{p1}: ext4 signature"), before, &dev);
    // (Mounting writes the partition's superblock: the sum is taken after.)
    let mount = Mount::new(&part, "rw");
    let before = checksum(dev.backing());
    let out = qualify(&dev, &[]);
    let mounted = format!("{p1}: mounted on {}", mount.path().display());
    refused(&out, &mounted, before, &dev);
    drop(mount);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_device_in_use_is_refused_with_its_use_named() {
    if !root_or_skip() {
        return;
    }
    // Mounted.
    let dev = LoopDevice::new(64, LoopOptions::default());
    mkfs("ext4", dev.path(), &[]);
    let mount = Mount::new(dev.path(), "rw");
    let before = checksum(dev.backing());
    let out = qualify(&dev, &[]);
    refused(&out, "mounted on", before, &dev);
    drop(mount);
    // Swapped on.
    let swap = LoopDevice::new(64, LoopOptions::default());
    sh("mkswap", &[swap.path()]);
    sh("swapon", &[swap.path()]);
    let before = checksum(swap.backing());
    let out = qualify(&swap, &[]);
    sh("swapoff", &[swap.path()]);
    refused(&out, "used as swap (/proc/swaps)", before, &swap);
    // Held open O_EXCL by another process (this one), and nothing else.
    let clean = LoopDevice::new(64, LoopOptions::default());
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(clean.path())
        .unwrap();
    let before = checksum(clean.backing());
    let out = qualify(&clean, &[]);
    refused(&out, "held open exclusively", before, &clean);
    drop(held);
    // Part of an imported ZFS pool (a fake zpool on PATH names it) and
    // named by a PVE storage.
    let dir = workdir();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let zpool = bin.join("zpool");
    std::fs::write(
        &zpool,
        format!(
            "#!/bin/sh\nprintf '  pool: tank\\n state: ONLINE\\nconfig:\\n\\n\\tNAME  STATE\\n\\ttank  ONLINE\\n\\t  {}  ONLINE  0 0 0\\n'\n",
            clean.path()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&zpool, PermissionsExt::from_mode(0o755)).unwrap();
    let pve = dir.path().join("pve");
    std::fs::create_dir(&pve).unwrap();
    std::fs::write(
        pve.join("storage.cfg"),
        "zfspool: tank-vm\n\tpool tank/vm\n\tcontent images\n\nlvm: vmdata\n\tvgname qtestvg\n\tcontent images\n",
    )
    .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let id = identity(&clean);
    let out = pveprobe()
        .env("PATH", &path)
        .args(["qualify", "--destroy-data-on", &id, "--pve-config"])
        .arg(&pve)
        .arg(clean.path())
        .output()
        .unwrap();
    refused(
        &out,
        "part of imported ZFS pool tank (zpool status)",
        before,
        &clean,
    );
    let err = stderr(&out);
    assert!(
        err.contains("under PVE storage tank-vm (zfspool pool tank/vm)"),
        "{err}"
    );
    // A PV of a volume group that a PVE storage names.
    let pv = LoopDevice::new(64, LoopOptions::default());
    sh("pvcreate", &["-qq", "-y", pv.path()]);
    sh("vgcreate", &["-qq", "qtestvg", pv.path()]);
    let before_pv = checksum(pv.backing());
    let id = identity(&pv);
    let out = pveprobe()
        .args(["qualify", "--destroy-data-on", &id, "--pve-config"])
        .arg(&pve)
        .arg(pv.path())
        .output()
        .unwrap();
    let sum = checksum(pv.backing());
    let _ = Command::new("vgremove")
        .args(["-qq", "-f", "qtestvg"])
        .status();
    assert_eq!(sum, before_pv, "the PV was written");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a physical volume of volume group qtestvg (pvs)"),
        "{err}"
    );
    assert!(
        err.contains("under PVE storage vmdata (lvm vgname qtestvg)"),
        "{err}"
    );
    assert!(err.contains("LVM2_member signature"), "{err}");
    // A zpool that fails is no proof of freedom: refused too.
    std::fs::write(&zpool, "#!/bin/sh\necho 'internal error' >&2\nexit 1\n").unwrap();
    let out = pveprobe()
        .env("PATH", &path)
        .args(["qualify", "--dry-run", clean.path()])
        .output()
        .unwrap();
    refused(&out, "ZFS pools not checked: zpool failed", before, &clean);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn the_identity_is_asked_for_and_a_wiped_disk_is_accepted() {
    if !root_or_skip() {
        return;
    }
    let dev = LoopDevice::new(64, LoopOptions::default());
    mkfs("ext4", dev.path(), &[]);
    let before = checksum(dev.backing());
    refused(&qualify(&dev, &[]), "ext4 signature", before, &dev);
    sh("wipefs", &["-a", "-q", dev.path()]);
    let before = checksum(dev.backing());
    // A wrong identity, and none without a terminal: exit 2, nothing written.
    let wrong = pveprobe()
        .args(["qualify", "--destroy-data-on", "loop99:1", dev.path()])
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("is not /dev/"),
        "{}",
        stderr(&wrong)
    );
    let none = pveprobe().args(["qualify", dev.path()]).output().unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none).contains("without --destroy-data-on (no terminal"),
        "{}",
        stderr(&none)
    );
    // The dry run names the identity and the plan, and writes nothing.
    let dry = pveprobe()
        .args(["qualify", "--dry-run", "--seconds", "5", dev.path()])
        .output()
        .unwrap();
    let text = stdout(&dry);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert!(
        text.contains(&format!(
            "confirm with: --destroy-data-on {}",
            identity(&dev)
        )),
        "{text}"
    );
    assert!(
        text.contains("about 2 min 45 s in all"),
        "9 x 5 s + 120 s: {text}"
    );
    assert!(text.contains("dry run: nothing was written"));
    assert_eq!(checksum(dev.backing()), before);
    // --plot without a sustained write is refused before anything.
    let plot = dir_plot_refused(&dev);
    assert!(plot.contains("--sustained 0 has none"), "{plot}");
    assert_eq!(checksum(dev.backing()), before);
    // Not a block device at all.
    let dir = workdir();
    let file = dir.path().join("disk.img");
    std::fs::write(&file, b"x").unwrap();
    let out = pveprobe()
        .args(["qualify", "--dry-run"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not a block device"),
        "{}",
        stderr(&out)
    );
    // Accepted once wiped: it writes.
    let out = qualify(&dev, &["--no-discard"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_ne!(checksum(dev.backing()), before, "it wrote");
}

/// stderr of a run with --plot and --sustained 0 (exit 2).
fn dir_plot_refused(dev: &LoopDevice) -> String {
    let dir = workdir();
    let svg = dir.path().join("none.svg");
    let out = qualify(dev, &["--plot", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!svg.exists(), "no picture file made");
    stderr(&out)
}

fn set_non_rotational(dev: &LoopDevice) {
    std::fs::write(format!("/sys/block/{}/queue/rotational", name(dev)), "0").unwrap();
}

/// Bytes the backing file holds on disk.
fn allocated(dev: &LoopDevice) -> u64 {
    std::fs::metadata(dev.backing()).unwrap().blocks() * 512
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn the_tests_write_their_pattern_and_the_discard_punches_it_out() {
    if !root_or_skip() {
        return;
    }
    let dev = LoopDevice::new(64, LoopOptions::default());
    set_non_rotational(&dev);
    let dir = workdir();
    let json = dir.path().join("a.json");
    let id = identity(&dev);
    let run = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "qualify",
            "--seconds",
            "0.2",
            "--sustained",
            "1",
            "--destroy-data-on",
            &id,
        ];
        args.extend_from_slice(extra);
        let o = out.to_str().unwrap().to_string();
        args.extend(["--output-format", "json", "--output", &o, dev.path()]);
        pveprobe().args(&args).output().unwrap()
    };
    let svg = dir.path().join("sustained.svg");
    let out = run(&["--no-discard", "--plot", svg.to_str().unwrap()], &json);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains("<svg") && picture.contains("DISK SUSTAINED WRITE"),
        "{picture}"
    );
    // The last test, the sustained write, wrote its buffer at offset 0,
    // stamped with that offset.
    let mut pattern = pveprobe::measure::sustained::data();
    pveprobe::measure::sustained::stamp(pattern.as_mut_slice(), 0);
    let mut head = vec![0u8; 1 << 20];
    File::open(dev.backing())
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    assert!(
        head == pattern.as_slice()[..1 << 20],
        "offset 0 holds the pattern"
    );
    let kept = allocated(&dev);
    assert!(kept >= 32 << 20, "written: {kept} bytes allocated");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["kind"], "qualify");
    let keys: Vec<&str> = doc["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 10, "{keys:?}");
    assert_eq!(doc["figures"][0]["sync_mode"], "osync");
    assert_eq!(doc["verdicts"].as_array().unwrap().len(), 4);
    assert!(doc["written"]["bytes"].as_u64().unwrap() > 0);
    assert!(
        doc["written"]["afterwards"]
            .as_str()
            .unwrap()
            .contains("--no-discard")
    );
    let series = doc["figures"][9]["series_mib_per_s"].as_array().unwrap();
    assert_eq!(series.len(), 1);
    // Now with the discard: the backing file's blocks are punched out.
    let b = dir.path().join("b.json");
    let out = run(&[], &b);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = allocated(&dev);
    assert!(after < kept / 8, "discarded: {after} of {kept} bytes left");
    assert!(
        stderr(&out).contains("discarded all of it afterwards (BLKDISCARD)"),
        "{}",
        stderr(&out)
    );
    // compare ranks the two disks' figures.
    let cmp = pveprobe()
        .args(["compare"])
        .arg(&json)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(cmp.status.code(), Some(0), "{}", stderr(&cmp));
    assert!(
        stdout(&cmp).contains("DISK SYNC WRITE 4K 1 JOB"),
        "{}",
        stdout(&cmp)
    );
    // CSV: a row per disk, the header once.
    let csv = dir.path().join("disks.csv");
    for _ in 0..2 {
        let c = csv.to_str().unwrap();
        let out = pveprobe()
            .args([
                "qualify",
                "--seconds",
                "0.2",
                "--sustained",
                "0",
                "--destroy-data-on",
                &id,
            ])
            .args([
                "--output-format",
                "csv",
                "--output",
                c,
                "--append",
                dev.path(),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("timestamp,hostname,device,"));
    assert!(lines[1].contains(&name(&dev)) && lines[2].contains(&name(&dev)));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_signal_stops_the_writes_discards_and_exits_128_plus_n() {
    if !root_or_skip() {
        return;
    }
    let dev = LoopDevice::new(64, LoopOptions::default());
    set_non_rotational(&dev);
    let id = identity(&dev);
    for (sig, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let mut child = pveprobe()
            .args([
                "qualify",
                "--seconds",
                "30",
                "--destroy-data-on",
                &id,
                dev.path(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Writing: the backing file grows.
        let start = Instant::now();
        while allocated(&dev) < 4 << 20 {
            assert!(start.elapsed() < Duration::from_secs(20), "no writes");
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe { libc::kill(child.id() as i32, sig) };
        let sent = Instant::now();
        let status = wait_within(&mut child, Duration::from_secs(5));
        let took = sent.elapsed();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert_eq!(status.code(), Some(code), "signal {sig}: {err}");
        assert!(took < Duration::from_secs(1), "stopped in {took:?}");
        assert!(
            err.contains(&format!("interrupted by signal {sig}")),
            "{err}"
        );
        assert!(err.contains("discarded all of it afterwards"), "{err}");
        assert!(
            allocated(&dev) < 1 << 20,
            "discarded: {} bytes left",
            allocated(&dev)
        );
    }
}

/// A process that holds `path` open read-write without O_EXCL, as QEMU
/// holds a passed-through disk: `sleep`, its stdin the device. Killed when
/// dropped.
struct Holder(std::process::Child);

impl Holder {
    fn new(path: &str) -> Holder {
        let device = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        Holder(
            Command::new("sleep")
                .arg("120")
                .stdin(device)
                .spawn()
                .unwrap(),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Asserts that a confirmed run and a dry run of `dev` with `extra` both
/// refuse naming `cause` (and `also`), and write nothing.
fn refused_both(dev: &LoopDevice, extra: &[&str], cause: &str, also: &[&str]) {
    let before = checksum(dev.backing());
    let run = qualify(dev, extra);
    refused(&run, cause, before, dev);
    let mut dry = vec!["qualify", "--dry-run"];
    dry.extend_from_slice(extra);
    dry.push(dev.path());
    let out = pveprobe().args(&dry).output().unwrap();
    refused(&out, cause, before, dev);
    for also in also {
        assert!(stderr(&run).contains(also), "{also}: {}", stderr(&run));
        assert!(stderr(&out).contains(also), "{also}: {}", stderr(&out));
    }
}

/// A PVE configuration directory with `configs` (path under it, text).
fn pve_dir(configs: &[(&str, String)]) -> tempfile::TempDir {
    let dir = workdir();
    for (rel, text) in configs {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_device_another_process_holds_open_is_refused_naming_it() {
    if !root_or_skip() {
        return;
    }
    // The whole device, held O_RDWR without O_EXCL.
    let dev = LoopDevice::new(64, LoopOptions::default());
    let holder = Holder::new(dev.path());
    let cause = format!("{}: held open by sleep (pid {})", name(&dev), holder.pid());
    refused_both(&dev, &[], &cause, &[]);
    drop(holder);
    // Only one of its partitions, beside the partition table's signature.
    let parted = LoopDevice::new(
        64,
        LoopOptions {
            partitions: true,
            ..LoopOptions::default()
        },
    );
    sfdisk(&parted, "label: gpt\n,16M\n,\n");
    sh("partx", &["-u", parted.path()]);
    let holder = Holder::new(&format!("{}p1", parted.path()));
    let cause = format!(
        "{}p1: held open by sleep (pid {})",
        name(&parted),
        holder.pid()
    );
    let table = format!("{}: gpt signature", name(&parted));
    refused_both(&parted, &[], &cause, &[&table]);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_device_a_guest_config_names_is_refused_naming_the_guest() {
    if !root_or_skip() {
        return;
    }
    let dev = LoopDevice::new(64, LoopOptions::default());
    let other = LoopDevice::new(64, LoopOptions::default());
    // A VM's disk through a /dev/disk/by-id-style link the test makes.
    let links = workdir();
    let by_id = links.path().join("by-id/ata-QEMU_HARDDISK_QM00007");
    std::fs::create_dir_all(by_id.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(dev.path(), &by_id).unwrap();
    let vm = pve_dir(&[(
        "nodes/pve1/qemu-server/100.conf",
        format!(
            "boot: order=scsi0\nscsi0: local-lvm:vm-100-disk-0,size=8G\nscsi1: {},backup=0,size=64M\nscsihw: virtio-scsi-single\n",
            by_id.display()
        ),
    )]);
    let vm_dir = vm.path().to_str().unwrap();
    refused_both(
        &dev,
        &["--pve-config", vm_dir],
        "passed through to VM 100 as scsi1 (nodes/pve1/qemu-server/100.conf)",
        &[],
    );
    // A container's mount point, on another node.
    let ct = pve_dir(&[(
        "nodes/pve2/lxc/101.conf",
        format!(
            "arch: amd64\nmp0: {},mp=/data,backup=0\nrootfs: local-lvm:vm-101-disk-0,size=8G\n",
            dev.path()
        ),
    )]);
    refused_both(
        &dev,
        &["--pve-config", ct.path().to_str().unwrap()],
        "passed through to CT 101 as mp0 (nodes/pve2/lxc/101.conf)",
        &[],
    );
    // Only a snapshot section names it: the snapshot's rollback brings it back.
    let snap = pve_dir(&[(
        "nodes/pve1/qemu-server/102.conf",
        format!(
            "cores: 1\nparent: before\nscsi0: local-lvm:vm-102-disk-0\n\n[before]\ncores: 1\nsata1: {}\nsnaptime: 1731900000\n",
            dev.path()
        ),
    )]);
    refused_both(
        &dev,
        &["--pve-config", snap.path().to_str().unwrap()],
        "passed through to VM 102 as sata1 in snapshot before (nodes/pve1/qemu-server/102.conf)",
        &[],
    );
    // A disk no guest names and nobody holds is accepted: the configs
    // above name another device; the dry run lists both new checks.
    let elsewhere = pve_dir(&[(
        "nodes/pve1/qemu-server/103.conf",
        format!("scsi1: {},size=64M\n", other.path()),
    )]);
    let out = pveprobe()
        .args(["qualify", "--dry-run", "--pve-config"])
        .arg(elsewhere.path())
        .arg(dev.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}{}", text, stderr(&out));
    assert!(
        text.contains("processes holding it or a partition open"),
        "{text}"
    );
    assert!(
        text.contains("guests naming it or a partition, on every node"),
        "{text}"
    );
    assert!(text.contains("dry run: nothing was written"), "{text}");
}
