//! The storage stack of every fixture host (fixtures/storage/<host>/):
//! `root/` is the host's /proc and /sys (captured, or reconstructed after the
//! kernel's sysfs layout; see fixtures/README.md), `path` the PATH to resolve,
//! `zfs/` the captured `zpool status -P -L` and `zfs get` output, and
//! `expected.txt` the pinned `-v` storage section (UPDATE_SNAPSHOTS=1 rewrites it).

use std::path::{Path, PathBuf};

use pveprobe::host::{Host, PROC_MOUNTINFO};
use pveprobe::parse::mountinfo;
use pveprobe::probe::filesystem::FsInfo;
use pveprobe::report::verbose::storage_section;
use pveprobe::storage::{Captured, Storage, storage_with};

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
        let expected_path = dir.join("expected.txt");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&expected_path, &text).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if text != expected {
            failures.push(format!(
                "{}:\n--- expected\n{expected}--- got\n{text}",
                dir.display()
            ));
        }
        assert!(
            !storage.disks.is_empty() || storage.zfs.is_some(),
            "{}: no disks",
            dir.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
