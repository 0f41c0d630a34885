//! The storage stack of every fixture host (fixtures/storage/<host>/):
//! `root/` is the host's /proc and /sys (captured, or reconstructed after the
//! kernel's sysfs layout; see fixtures/README.md), `path` the PATH to resolve,
//! `zfs/` the captured `zpool status -P -L` and `zfs get` output, and
//! `expected.snap` the pinned `-v` storage section (an insta snapshot).

use std::path::{Path, PathBuf};

use pveprobe::blockstack::{Captured, storage_with};
use pveprobe::commands::probe::report::verbose::storage_section;
use pveprobe::model::filesystem::FsInfo;
use pveprobe::model::storage::Storage;
use pveprobe::sys::host::{Host, PROC_MOUNTINFO};
use pveprobe_parse::mountinfo;

fn hosts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/storage");
    let mut hosts: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("root").is_dir())
        .collect();
    hosts.sort();
    hosts
}

/// Resolves a fixture host's PATH as the probe does, without statvfs.
pub fn resolve(dir: &Path) -> (String, Storage) {
    let host = Host::with_root(dir.join("root"));
    let path = std::fs::read_to_string(dir.join("path"))
        .unwrap()
        .trim()
        .to_string();
    let mounts = mountinfo::parse(&host.read(PROC_MOUNTINFO).unwrap());
    let mount = mountinfo::mount_for(&mounts, Path::new(&path))
        .unwrap_or_else(|| panic!("no mount for {path}"));
    let fs = FsInfo {
        total_bytes: 0,
        avail_bytes: 0,
        source: mount.source.clone(),
        fstype: mount.fstype.clone(),
        mount_point: mount.mount_point.clone(),
        read_only: mount.is_read_only(),
        dev: (mount.major, mount.minor),
        options: String::new(),
    };
    (path, storage_with(&host, &fs, &Captured(dir.join("zfs"))))
}

#[test]
fn every_fixture_host_resolves_to_its_pinned_stack() {
    let hosts = hosts();
    assert!(!hosts.is_empty());
    let mut failures = Vec::new();
    for dir in &hosts {
        let (path, storage) = resolve(dir);
        let text = storage_section(&path, &storage);
        let name = dir.file_name().unwrap().to_string_lossy();
        let settings = snapshot_settings(dir);
        let matched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_snapshot!("expected", &text));
        }));
        if matched.is_err() {
            failures.push(name.to_string());
        }
        assert!(
            !storage.disks.is_empty() || storage.zfs.is_some(),
            "{}: no disks",
            dir.display()
        );
    }
    assert!(
        failures.is_empty(),
        "storage sections differ from their snapshots: {}",
        failures.join(", ")
    );
}

fn host(name: &str) -> Storage {
    resolve(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/storage")
            .join(name),
    )
    .1
}

#[test]
fn virtio_disk_of_this_development_machine() {
    let s = host("virtio-vda");
    assert_eq!(s.device.as_deref(), Some("vda"));
    assert!(s.layers.is_empty());
    let d = &s.disks[0];
    assert_eq!(d.name, "vda");
    assert_eq!(d.transport.as_deref(), Some("virtio"));
    assert_eq!(d.driver.as_deref(), Some("virtio_blk"));
    assert_eq!(d.controller_driver.as_deref(), Some("virtio-pci"));
    assert_eq!(d.controller_pci.as_deref(), Some("0000:00:02.0"));
    assert_eq!(d.write_cache.as_deref(), Some("write back"));
    assert_eq!(d.scheduler.as_deref(), Some("mq-deadline"));
}

// --- Reconstructed hosts (fixtures/README.md, "Storage hosts") ------------

use pveprobe::model::storage::Disk;
use pveprobe::model::storage::Layer;

fn layer(name: &str, kind: &str, detail: &str, below: &[&str]) -> Layer {
    Layer {
        name: name.into(),
        kind: kind.into(),
        detail: Some(detail.into()),
        below: below.iter().map(|b| b.to_string()).collect(),
        start_bytes: None,
        thin_pool: None,
        discard_max_bytes: None,
    }
}

/// The layers' names, kinds and order, without what sysfs says of their
/// queues and starts (tested on their own).
fn shapes(layers: &[Layer]) -> Vec<Layer> {
    layers
        .iter()
        .map(|l| Layer {
            start_bytes: None,
            thin_pool: None,
            discard_max_bytes: None,
            ..l.clone()
        })
        .collect()
}

fn disk<'a>(s: &'a Storage, name: &str) -> &'a Disk {
    s.disks
        .iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no disk {name} in {:?}", s.disks))
}

fn disk_names(s: &Storage) -> Vec<&str> {
    s.disks.iter().map(|d| d.name.as_str()).collect()
}

fn hints_about(s: &Storage, what: &str) -> Vec<String> {
    s.hints
        .iter()
        .map(|h| h.sentence())
        .filter(|h| h.contains(what))
        .collect()
}

/// dm-crypt opened without allow_discards drops the discards of the LVM
/// and the SSD below it; the partition's start is read and on a 1 MiB
/// boundary where the installer put it.
#[test]
fn luks_without_discards_above_an_ssd() {
    let s = host("luks-lvm");
    let crypt = s.layers.iter().find(|l| l.name == "dm-2").unwrap();
    assert_eq!(crypt.discard_max_bytes, Some(0));
    assert_eq!(disk(&s, "sda").discard_max_bytes, Some(2_147_450_880));
    let h: Vec<&pveprobe::model::hint::Hint> = s
        .hints
        .iter()
        .filter(|h| h.code == "discard-not-passed")
        .collect();
    assert_eq!(h.len(), 1, "{:#?}", s.hints);
    assert_eq!(h[0].subject, "dm-2");
    assert!(
        h[0].sentence()
            .starts_with("dm-2: luks (cryptdata) passes no discard down to the SSD sda:"),
        "{}",
        h[0].sentence()
    );
    let lvm = host("lvm-sata-ahci");
    let sda3 = lvm.layers.iter().find(|l| l.name == "sda3").unwrap();
    assert_eq!(sda3.start_bytes, Some(2_099_200 * 512));
    assert!(
        !lvm.hints.iter().any(|h| h.code == "misaligned"),
        "{:#?}",
        lvm.hints
    );
}

#[test]
fn lvm_on_a_sata_ssd_behind_ahci() {
    let s = host("lvm-sata-ahci");
    assert_eq!(s.source, "/dev/mapper/pve-root");
    assert_eq!(s.device.as_deref(), Some("dm-1"));
    assert_eq!(
        shapes(&s.layers),
        [
            layer("dm-1", "lvm", "pve-root", &["sda3"]),
            layer("sda3", "partition", "3", &["sda"]),
        ]
    );
    assert_eq!(disk_names(&s), ["sda"]);
    let d = disk(&s, "sda");
    // sysfs shows the 16-byte SCSI INQUIRY product field libata fills in.
    assert_eq!(d.model.as_deref(), Some("Samsung SSD 870"));
    assert_eq!(d.vendor.as_deref(), Some("ATA"));
    assert_eq!(d.serial.as_deref(), Some("S625NJ0R304875K"));
    assert_eq!(d.firmware.as_deref(), Some("2B6Q"));
    assert_eq!(d.size_bytes, Some(1_953_525_168 * 512));
    assert_eq!(d.rotational, Some(false));
    assert_eq!(d.transport.as_deref(), Some("SATA"));
    assert_eq!(d.driver.as_deref(), Some("sd"));
    assert_eq!(d.controller_driver.as_deref(), Some("ahci"));
    assert_eq!(d.controller_pci.as_deref(), Some("0000:00:17.0"));
    assert_eq!(d.controller_vendor.as_deref(), Some("0x8086"));
    assert_eq!(d.module_version.as_deref(), Some("3.0"));
    assert_eq!(d.write_cache.as_deref(), Some("write back"));
    assert!(s.zfs.is_none());
    assert!(s.read_devices.is_empty());
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert!(s.hints.is_empty(), "{:#?}", s.hints);
}

#[test]
fn md_raid1_of_two_sata_hdds() {
    let s = host("md-raid1");
    assert_eq!(s.source, "/dev/md0");
    assert_eq!(s.device.as_deref(), Some("md0"));
    assert_eq!(
        shapes(&s.layers),
        [
            layer("md0", "md", "raid1, 2 devices", &["sda2", "sdb2"]),
            layer("sda2", "partition", "2", &["sda"]),
            layer("sdb2", "partition", "2", &["sdb"]),
        ]
    );
    assert_eq!(disk_names(&s), ["sda", "sdb"]);
    for d in &s.disks {
        assert_eq!(d.model.as_deref(), Some("WDC WD4003FFBX-6"), "{}", d.name);
        assert_eq!(d.rotational, Some(true), "{}", d.name);
        assert_eq!(d.transport.as_deref(), Some("SATA"), "{}", d.name);
        assert_eq!(d.controller_driver.as_deref(), Some("ahci"), "{}", d.name);
        assert_eq!(d.physical_block_size, Some(4096), "{}", d.name);
    }
    assert_eq!(disk(&s, "sdb").serial.as_deref(), Some("VBGT7K2R"));
    let rotational = hints_about(&s, "rotational disk (HDD)");
    assert_eq!(rotational.len(), 2, "{:#?}", s.hints);
    assert!(rotational[0].starts_with("sda: "));
    assert!(rotational[1].starts_with("sdb: "));
    assert_eq!(s.hints.len(), 2, "{:#?}", s.hints);
}

#[test]
fn lvm_on_an_nvme_partition() {
    let s = host("nvme");
    assert_eq!(s.device.as_deref(), Some("dm-1"));
    assert_eq!(
        shapes(&s.layers),
        [
            layer("dm-1", "lvm", "pve-root", &["nvme0n1p3"]),
            layer("nvme0n1p3", "partition", "3", &["nvme0n1"]),
        ]
    );
    assert_eq!(disk_names(&s), ["nvme0n1"]);
    let d = disk(&s, "nvme0n1");
    // Model, serial and firmware come from the controller (device -> nvme0).
    assert_eq!(d.model.as_deref(), Some("SAMSUNG MZQL21T9HCJR-00A07"));
    assert_eq!(d.serial.as_deref(), Some("S64GNE0R812345"));
    assert_eq!(d.firmware.as_deref(), Some("GDC5302Q"));
    assert_eq!(d.vendor, None);
    assert_eq!(d.transport.as_deref(), Some("NVMe"));
    // A namespace's device is the controller, which has no driver link.
    assert_eq!(d.driver, None);
    assert_eq!(d.controller_driver.as_deref(), Some("nvme"));
    assert_eq!(d.controller_pci.as_deref(), Some("0000:3d:00.0"));
    assert_eq!(d.controller_vendor.as_deref(), Some("0x144d"));
    assert_eq!(d.module_version.as_deref(), Some("1.0"));
    assert_eq!(d.scheduler.as_deref(), Some("none"));
    assert!(s.hints.is_empty(), "{:#?}", s.hints);
}

#[test]
fn perc_virtual_drive_behind_megaraid_sas() {
    let s = host("hwraid-megaraid");
    assert_eq!(s.device.as_deref(), Some("dm-1"));
    assert_eq!(
        shapes(&s.layers),
        [
            layer("dm-1", "lvm", "pve-root", &["sda3"]),
            layer("sda3", "partition", "3", &["sda"]),
        ]
    );
    assert_eq!(disk_names(&s), ["sda"]);
    let d = disk(&s, "sda");
    assert_eq!(d.vendor.as_deref(), Some("DELL"));
    assert_eq!(d.model.as_deref(), Some("PERC H730P Mini"));
    assert_eq!(d.transport.as_deref(), Some("RAID volume"));
    assert_eq!(d.driver.as_deref(), Some("sd"));
    // The nearest PCI device (not the root port above it, driven by pcieport).
    assert_eq!(d.controller_driver.as_deref(), Some("megaraid_sas"));
    assert_eq!(d.controller_pci.as_deref(), Some("0000:02:00.0"));
    assert_eq!(d.controller_vendor.as_deref(), Some("0x1000"));
    assert_eq!(d.module_version.as_deref(), Some("07.727.03.00-rc1"));
    assert_eq!(d.write_cache.as_deref(), Some("write back"));
    assert_eq!(d.rotational, Some(true));
    assert_eq!(
        d.serial.as_deref(),
        Some("0067a3e82c1f4b7e2a00d1b5c5e0a804")
    );
    assert!(hints_about(&s, "write cache is off").is_empty());
}

#[test]
fn smart_array_logical_volume_behind_smartpqi() {
    let s = host("hwraid-smartpqi");
    assert_eq!(s.source, "/dev/sda1");
    assert_eq!(s.fstype, "ext4");
    assert_eq!(s.device.as_deref(), Some("sda1"));
    assert_eq!(
        shapes(&s.layers),
        [layer("sda1", "partition", "1", &["sda"])]
    );
    assert_eq!(disk_names(&s), ["sda"]);
    let d = disk(&s, "sda");
    assert_eq!(d.vendor.as_deref(), Some("HPE"));
    assert_eq!(d.model.as_deref(), Some("LOGICAL VOLUME"));
    assert_eq!(d.firmware.as_deref(), Some("3.00"));
    assert_eq!(d.serial.as_deref(), Some("PEYHN0ARHBW1BN"));
    assert_eq!(d.transport.as_deref(), Some("RAID volume"));
    assert_eq!(d.controller_driver.as_deref(), Some("smartpqi"));
    assert_eq!(d.controller_pci.as_deref(), Some("0000:43:00.0"));
    assert_eq!(d.controller_vendor.as_deref(), Some("0x9005"));
    assert_eq!(d.module_version.as_deref(), Some("2.1.26-030"));
    assert_eq!(d.rotational, Some(false));
    assert!(hints_about(&s, "rotational").is_empty(), "{:#?}", s.hints);
}

#[test]
fn zfs_mirror_of_consumer_ssd_partitions() {
    let s = host("zfs-mirror-partitions");
    assert_eq!(s.fstype, "zfs");
    assert_eq!(s.device, None);
    let z = s.zfs.as_ref().expect("zfs facts");
    assert_eq!(z.pool, "rpool");
    assert_eq!(z.dataset, "rpool/ROOT/pve-1");
    assert_eq!(z.state.as_deref(), Some("ONLINE"));
    assert_eq!(z.layout.as_deref(), Some("mirror (sda3, sdb3)"));
    assert_eq!(z.vdevs.len(), 1);
    assert_eq!(z.vdevs[0].kind(), "mirror");
    assert_eq!(z.properties["sync"], "standard");
    assert_eq!(z.properties["compression"], "on");
    assert_eq!(z.properties["recordsize"], "128K");
    assert_eq!(z.properties["primarycache"], "all");
    assert_eq!(
        s.read_devices,
        [PathBuf::from("/dev/sda3"), PathBuf::from("/dev/sdb3")]
    );
    assert_eq!(
        shapes(&s.layers),
        [
            layer("sda3", "partition", "3", &["sda"]),
            layer("sdb3", "partition", "3", &["sdb"]),
        ]
    );
    assert_eq!(disk_names(&s), ["sda", "sdb"]);
    for d in &s.disks {
        assert_eq!(d.model.as_deref(), Some("CT1000MX500SSD1"), "{}", d.name);
        assert_eq!(d.controller_driver.as_deref(), Some("ahci"), "{}", d.name);
        assert_eq!(d.controller_vendor.as_deref(), Some("0x8086"), "{}", d.name);
    }
    let consumer = hints_about(&s, "a consumer SSD (CT1000MX500SSD1) under ZFS");
    assert_eq!(consumer.len(), 2, "{:#?}", s.hints);
    assert!(consumer[0].starts_with("sda: ") && consumer[1].starts_with("sdb: "));
    assert_eq!(
        hints_about(&s, "rpool/ROOT/pve-1: compression=on").len(),
        1,
        "{:#?}",
        s.hints
    );
    assert!(hints_about(&s, "sync=").is_empty(), "{:#?}", s.hints);
    assert!(s.problems.is_empty(), "{:?}", s.problems);
}

#[test]
fn zfs_raidz2_on_sas_hba_with_optane_log_and_cache() {
    let s = host("zfs-raidz2-log-cache");
    let z = s.zfs.as_ref().expect("zfs facts");
    assert_eq!(z.pool, "tank");
    assert_eq!(z.dataset, "tank/vmdata");
    assert_eq!(
        z.layout.as_deref(),
        Some("raidz2 (sda1, sdb1, sdc1, sdd1, sde1, sdf1); logs: nvme0n1p1; cache: nvme0n1p2")
    );
    let classes: Vec<&str> = z.vdevs.iter().map(|v| v.class.as_str()).collect();
    assert_eq!(classes, ["data", "logs", "cache"]);
    assert_eq!(z.vdevs[0].kind(), "raidz2");
    // The read tests use the data disks only, not the log or cache device.
    let data: Vec<PathBuf> = "abcdef"
        .chars()
        .map(|c| PathBuf::from(format!("/dev/sd{c}1")))
        .collect();
    assert_eq!(s.read_devices, data);
    assert_eq!(z.properties["sync"], "disabled");
    assert_eq!(z.properties["compression"], "lz4");
    assert_eq!(
        disk_names(&s),
        ["sda", "sdb", "sdc", "sdd", "sde", "sdf", "nvme0n1"]
    );
    assert_eq!(s.layers.len(), 8);
    assert_eq!(
        shapes(&s.layers)[7],
        layer("nvme0n1p2", "partition", "2", &["nvme0n1"])
    );
    for d in &s.disks[..6] {
        assert_eq!(d.vendor.as_deref(), Some("HGST"), "{}", d.name);
        assert_eq!(d.model.as_deref(), Some("HUH721212AL5200"), "{}", d.name);
        assert_eq!(d.transport.as_deref(), Some("SAS"), "{}", d.name);
        assert_eq!(
            d.controller_driver.as_deref(),
            Some("mpt3sas"),
            "{}",
            d.name
        );
        assert_eq!(
            d.controller_pci.as_deref(),
            Some("0000:03:00.0"),
            "{}",
            d.name
        );
        assert_eq!(
            d.module_version.as_deref(),
            Some("43.100.00.00"),
            "{}",
            d.name
        );
        assert_eq!(d.rotational, Some(true), "{}", d.name);
    }
    let optane = disk(&s, "nvme0n1");
    assert_eq!(optane.model.as_deref(), Some("INTEL SSDPED1K375GA"));
    assert_eq!(optane.transport.as_deref(), Some("NVMe"));
    assert_eq!(optane.controller_pci.as_deref(), Some("0000:01:00.0"));
    assert_eq!(
        hints_about(&s, "tank/vmdata: sync=disabled makes fsync a no-op").len(),
        1,
        "{:#?}",
        s.hints
    );
    assert_eq!(
        hints_about(&s, "tank/vmdata: compression=lz4").len(),
        1,
        "{:#?}",
        s.hints
    );
    let rotational = hints_about(&s, "rotational disk (HDD)");
    assert_eq!(rotational.len(), 6, "{:#?}", s.hints);
    assert!(!rotational.iter().any(|h| h.starts_with("nvme0n1")));
    assert!(hints_about(&s, "consumer SSD").is_empty(), "{:#?}", s.hints);
}

#[test]
fn luks_on_lvm_on_a_write_through_sata_ssd() {
    let s = host("luks-lvm");
    assert_eq!(s.source, "/dev/mapper/cryptdata");
    assert_eq!(s.device.as_deref(), Some("dm-2"));
    assert_eq!(
        shapes(&s.layers),
        [
            layer("dm-2", "luks", "cryptdata", &["dm-1"]),
            layer("dm-1", "lvm", "vg0-data", &["sda2"]),
            layer("sda2", "partition", "2", &["sda"]),
        ]
    );
    assert_eq!(disk_names(&s), ["sda"]);
    let d = disk(&s, "sda");
    assert_eq!(d.write_cache.as_deref(), Some("write through"));
    assert_eq!(d.transport.as_deref(), Some("SATA"));
    // And discard-not-passed (luks_without_discards_above_an_ssd).
    assert_eq!(s.hints.len(), 2, "{:#?}", s.hints);
    assert!(
        s.hints[0]
            .sentence()
            .starts_with("sda: write cache is off (write through)"),
        "{}",
        s.hints[0]
    );
}

#[test]
fn pve_in_a_vm_on_virtio_blk() {
    let s = host("virtio-guest-lvm");
    assert_eq!(s.device.as_deref(), Some("dm-1"));
    assert_eq!(
        shapes(&s.layers),
        [
            layer("dm-1", "lvm", "pve-root", &["vda3"]),
            layer("vda3", "partition", "3", &["vda"]),
        ]
    );
    assert_eq!(disk_names(&s), ["vda"]);
    let d = disk(&s, "vda");
    assert_eq!(d.transport.as_deref(), Some("virtio"));
    assert_eq!(d.driver.as_deref(), Some("virtio_blk"));
    assert_eq!(d.controller_driver.as_deref(), Some("virtio-pci"));
    assert_eq!(d.controller_pci.as_deref(), Some("0000:00:0a.0"));
    assert_eq!(d.controller_vendor.as_deref(), Some("0x1af4"));
    // virtio's device/vendor is a PCI id, not a vendor name.
    assert_eq!(d.vendor, None);
    assert_eq!(d.serial.as_deref(), Some("vm100disk0"));
    assert_eq!(d.module_version.as_deref(), Some("1"));
    // virtio-blk reports rotational whatever backs it: no HDD hint.
    assert_eq!(d.rotational, Some(true));
    assert!(s.hints.is_empty(), "{:#?}", s.hints);
}

#[test]
fn a_zfs_host_without_zpool_output_says_zpool_is_not_installed() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/storage/zfs-mirror-partitions");
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fixture.join("root"), tmp.path().join("root")).unwrap();
    std::fs::copy(fixture.join("path"), tmp.path().join("path")).unwrap();
    let (_, s) = resolve(tmp.path());
    assert_eq!(s.fstype, "zfs");
    assert_eq!(
        s.problems.first().map(String::as_str),
        Some("zpool is not installed (package zfsutils-linux); cannot see the pool's disks")
    );
    let z = s.zfs.as_ref().expect("the dataset is still named");
    assert_eq!(z.dataset, "rpool/ROOT/pve-1");
    assert_eq!(z.layout, None);
    assert!(z.properties.is_empty());
    assert!(s.disks.is_empty() && s.layers.is_empty() && s.read_devices.is_empty());
}

#[test]
fn consumer_ssd_hint_for_a_samsung_870_evo_under_zfs() {
    let mut s = host("lvm-sata-ahci");
    s.zfs = Some(pveprobe::model::storage::ZfsInfo {
        dataset: "rpool/ROOT/pve-1".into(),
        pool: "rpool".into(),
        state: None,
        layout: None,
        vdevs: vec![],
        properties: Default::default(),
        ashift: None,
    });
    let hints = pveprobe::blockstack::hints::hints(&s);
    assert!(
        hints
            .iter()
            .any(|h| h.sentence().starts_with("sda: a consumer SSD")),
        "{hints:#?}"
    );
}

#[test]
fn no_write_cache_hint_for_an_nvme_without_volatile_cache() {
    let s = host("zfs-raidz2-log-cache");
    assert_eq!(
        disk(&s, "nvme0n1").write_cache.as_deref(),
        Some("write through")
    );
    assert!(
        hints_about(&s, "nvme0n1: write cache is off").is_empty(),
        "{:#?}",
        s.hints
    );
}

/// insta's settings for a fixture host's snapshot, `<host>/expected.snap`.
fn snapshot_settings(dir: &Path) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}
