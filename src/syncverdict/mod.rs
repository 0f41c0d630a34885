//! Whether SYNC WRITE 4K's flushes can have reached a disk, and how the
//! figure stands against what its class of device does: judged from what
//! the run saw (the filesystem and its mount options, ZFS's `sync`, the
//! leaf disks' rotation, transport and write cache) and the tables below,
//! each number with its source. Pure: facts in, a verdict out.

use crate::model::filesystem::FsInfo;
use crate::model::storage::{Disk, Storage};
use crate::model::sync::{FlushVerdict, Reference, VerdictKind};

/// A rotating disk commits a synced write at most once per revolution: the
/// sector comes under the head once a turn (7,200 rpm: 120 a second).
pub fn commits_per_second(rpm: u32) -> f64 {
    f64::from(rpm) / 60.0
}

/// The bound where a rotating disk does not report its rate: the fastest
/// rotating disks made turn at 15,000 rpm (250 commits a second).
pub const FASTEST_RPM: u32 = 15_000;

/// A figure above the bound by more than this is too fast: room for the
/// clock and for writes that land in the same revolution's track.
pub const MARGIN: f64 = 1.10;

/// What the facts say before the figure is looked at: a verdict that no
/// figure can change (`not synced`, `unknown`), or the rotating disks
/// whose commit rate bounds the figure.
enum Facts<'a> {
    Decided(FlushVerdict),
    Rotating(Vec<&'a Disk>),
    /// Solid state: any figure is physically possible.
    SolidState(Vec<&'a Disk>),
}

fn verdict(kind: VerdictKind, reason: impl Into<String>) -> FlushVerdict {
    FlushVerdict {
        kind,
        reason: reason.into(),
    }
}

/// A virtual device whose flags say nothing about a disk, described.
fn virtual_device(d: &Disk) -> Option<String> {
    let name = d.name.as_str();
    let prefix = ["loop", "zram", "ram", "nbd", "rbd", "vd", "xvd"]
        .into_iter()
        .find(|p| {
            name.starts_with(p) && name[p.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        });
    if let Some(p) = prefix {
        let what = match p {
            "loop" => "a loop device",
            "zram" | "ram" => "a RAM disk",
            "nbd" => "a network block device",
            "rbd" => "a Ceph RBD image",
            _ => "a virtual disk",
        };
        return Some(format!("{name} is {what}"));
    }
    match d.transport.as_deref() {
        Some(t @ ("virtio" | "virtual")) => Some(format!("{name} is a {t} disk")),
        Some(t) if t.contains("VMware") => Some(format!("{name} is a virtual disk ({t})")),
        _ => None,
    }
}

/// The mount options that turn flushes off (ext4, xfs before 4.19: `nobarrier`).
fn no_barriers(options: &str) -> Option<&str> {
    options
        .split(',')
        .find(|o| matches!(*o, "nobarrier" | "barrier=0"))
}

fn facts<'a>(fs: &FsInfo, storage: Option<&'a Storage>) -> Facts<'a> {
    if matches!(fs.fstype.as_str(), "tmpfs" | "ramfs") {
        return Facts::Decided(verdict(
            VerdictKind::NotSynced,
            format!("{} keeps files in memory: fsync does nothing", fs.fstype),
        ));
    }
    if let Some(o) = no_barriers(&fs.options) {
        return Facts::Decided(verdict(
            VerdictKind::NotSynced,
            format!(
                "{} is mounted with {o}: the disks' caches are never flushed",
                fs.mount_point.display()
            ),
        ));
    }
    let Some(storage) = storage else {
        return Facts::Decided(verdict(
            VerdictKind::Unknown,
            "the storage behind PATH is unknown",
        ));
    };
    if let Some(zfs) = &storage.zfs {
        if zfs.properties.get("sync").map(String::as_str) == Some("disabled") {
            return Facts::Decided(verdict(
                VerdictKind::NotSynced,
                format!(
                    "ZFS dataset {} has sync=disabled: fsync returns at once",
                    zfs.dataset
                ),
            ));
        }
        // Synced writes go to a separate log device where the pool has one.
        let logs: Vec<&str> = zfs
            .vdevs
            .iter()
            .filter(|v| v.class == "logs")
            .flat_map(|v| &v.devices)
            .map(|d| d.trim_start_matches("/dev/"))
            .collect();
        if !logs.is_empty() {
            let log_disks: Vec<&Disk> = storage
                .disks
                .iter()
                .filter(|d| logs.iter().any(|l| l.starts_with(d.name.as_str())))
                .collect();
            if log_disks.is_empty() {
                return Facts::Decided(verdict(
                    VerdictKind::Unknown,
                    format!(
                        "pool {}'s log devices ({}) are unknown",
                        zfs.pool,
                        logs.join(", ")
                    ),
                ));
            }
            return by_disks(log_disks);
        }
    }
    if storage.disks.is_empty() {
        return Facts::Decided(verdict(
            VerdictKind::Unknown,
            format!("no disk found behind {}", storage.source),
        ));
    }
    by_disks(storage.disks.iter().collect())
}

fn by_disks(disks: Vec<&Disk>) -> Facts<'_> {
    if let Some(why) = disks.iter().find_map(|d| virtual_device(d)) {
        return Facts::Decided(verdict(
            VerdictKind::Unknown,
            format!("{why}: its flags say nothing about a disk"),
        ));
    }
    if disks.iter().any(|d| d.rotational == Some(true)) {
        Facts::Rotating(
            disks
                .into_iter()
                .filter(|d| d.rotational == Some(true))
                .collect(),
        )
    } else if disks.iter().all(|d| d.rotational == Some(false)) {
        Facts::SolidState(disks)
    } else {
        Facts::Decided(verdict(
            VerdictKind::Unknown,
            "the disks do not say whether they rotate",
        ))
    }
}

/// What absorbs flushes a rotating disk cannot make, as far as the run sees.
fn cache_behind(d: &Disk) -> String {
    let mut seen = Vec::new();
    if d.transport.as_deref() == Some("RAID volume") {
        let driver = d
            .controller_driver
            .as_deref()
            .unwrap_or("a RAID controller");
        seen.push(format!(
            "{} is a RAID volume: {driver}'s cache (battery-backed or not)",
            d.name
        ));
    }
    if d.write_cache.as_deref() == Some("write back") {
        seen.push(format!(
            "{}'s write cache is on (write back) and may ignore flushes",
            d.name
        ));
    }
    if seen.is_empty() {
        "a write-back cache below the disk (a controller, or a hypervisor that ignores flushes)"
            .into()
    } else {
        seen.join("; ")
    }
}

/// The verdict on a single job's synced writes a second (`iops`).
pub fn judge(fs: &FsInfo, storage: Option<&Storage>, iops: f64) -> FlushVerdict {
    match facts(fs, storage) {
        Facts::Decided(v) => v,
        Facts::SolidState(disks) => {
            let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
            verdict(
                VerdictKind::Plausible,
                format!(
                    "{} solid state: no bound on commits a second",
                    names.join(", ")
                ),
            )
        }
        Facts::Rotating(disks) => {
            // The slowest disk bounds a mirror or an array: each write waits for all.
            let (disk, rpm, reported) = disks
                .iter()
                .map(|d| {
                    (
                        *d,
                        d.rotation_rpm.unwrap_or(FASTEST_RPM),
                        d.rotation_rpm.is_some(),
                    )
                })
                .min_by_key(|(_, rpm, _)| *rpm)
                .expect("a rotating disk");
            let bound = commits_per_second(rpm);
            let rate = if reported {
                format!("{rpm} rpm")
            } else {
                format!("rate not reported, at most {rpm} rpm")
            };
            if iops > bound * MARGIN {
                verdict(
                    VerdictKind::FasterThanTheDevice,
                    format!(
                        "{iops:.0} synced writes a second; {} ({rate}) commits at most {bound:.0}: {}",
                        disk.name,
                        cache_behind(disk)
                    ),
                )
            } else {
                verdict(
                    VerdictKind::Plausible,
                    format!(
                        "within {}'s {bound:.0} commits a second ({rate})",
                        disk.name
                    ),
                )
            }
        }
    }
}

/// A class of device and its band of single-job 4 KiB synced writes a
/// second, with the source of the numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub class: &'static str,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub source: &'static str,
}

/// The figure against its class's band, where the class is known: all leaf
/// disks of one class, and for SSDs whether they have power-loss
/// protection (from `plp`, the admin's word, or the model table).
pub fn reference(storage: Option<&Storage>, plp: Option<bool>, iops: f64) -> Option<Reference> {
    let disks = &storage?.disks;
    let first = disks.first()?;
    let band = bands::class_of(first, plp)?;
    if disks
        .iter()
        .any(|d| bands::class_of(d, plp).map(|b| b.class) != Some(band.class))
    {
        return None;
    }
    let plp_from = match plp {
        Some(_) => "PLP from --plp".to_string(),
        None => bands::model_entry(first)
            .map_or_else(String::new, |(.., source)| format!("PLP from {source}")),
    };
    Some(Reference {
        class: band.class.to_string(),
        band_min_iops: band.min,
        band_median_iops: band.median,
        band_max_iops: band.max,
        percent: iops / band.median * 100.0,
        source: format!("{}; {plp_from}", band.source),
    })
}

pub mod bands;
pub mod published;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::storage::ZfsInfo;
    use pveprobe_parse::zfs::Vdev;

    fn fs(fstype: &str, options: &str) -> FsInfo {
        FsInfo {
            total_bytes: 1 << 30,
            avail_bytes: 1 << 29,
            source: "/dev/sda1".into(),
            fstype: fstype.into(),
            mount_point: "/var/lib/vz".into(),
            read_only: false,
            dev: (8, 1),
            options: options.into(),
        }
    }

    fn disk(name: &str, rotational: bool, rpm: Option<u32>, transport: &str) -> Disk {
        Disk {
            name: name.into(),
            rotational: Some(rotational),
            rotation_rpm: rpm,
            transport: Some(transport.into()),
            write_cache: Some("write back".into()),
            ..Disk::default()
        }
    }

    fn storage(disks: Vec<Disk>) -> Storage {
        Storage {
            source: "/dev/sda1".into(),
            disks,
            ..Storage::default()
        }
    }

    #[test]
    fn a_7200_rpm_disk_commits_at_most_120_a_second() {
        let s = storage(vec![disk("sda", true, Some(7200), "SAS")]);
        let ext4 = fs("ext4", "rw,relatime");
        let v = judge(&ext4, Some(&s), 50.0);
        assert_eq!(v.kind, VerdictKind::Plausible, "{v:?}");
        assert_eq!(v.reason, "within sda's 120 commits a second (7200 rpm)");
        assert_eq!(
            judge(&ext4, Some(&s), 132.0).kind,
            VerdictKind::Plausible,
            "within the margin"
        );
        let v = judge(&ext4, Some(&s), 1800.0);
        assert_eq!(v.kind, VerdictKind::FasterThanTheDevice);
        assert!(v.reason.starts_with("1800 synced writes a second; sda (7200 rpm) commits at most 120: sda's write cache is on"), "{}", v.reason);
        // Not reported: bounded by the fastest disks made.
        let s = storage(vec![disk("sdb", true, None, "RAID volume")]);
        let v = judge(&ext4, Some(&s), 1000.0);
        assert_eq!(v.kind, VerdictKind::FasterThanTheDevice);
        assert!(
            v.reason
                .contains("(rate not reported, at most 15000 rpm) commits at most 250"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("sdb is a RAID volume"), "{}", v.reason);
        assert_eq!(judge(&ext4, Some(&s), 200.0).kind, VerdictKind::Plausible);
    }

    #[test]
    fn what_decides_without_the_figure() {
        let ssd = storage(vec![disk("sda", false, None, "SATA")]);
        assert_eq!(
            judge(&fs("tmpfs", "rw"), None, 1e6).kind,
            VerdictKind::NotSynced
        );
        let v = judge(&fs("ext4", "rw,nobarrier"), Some(&ssd), 10.0);
        assert_eq!(
            (v.kind, v.reason.as_str()),
            (
                VerdictKind::NotSynced,
                "/var/lib/vz is mounted with nobarrier: the disks' caches are never flushed"
            )
        );
        assert_eq!(
            judge(&fs("ext4", "rw,barrier=0"), Some(&ssd), 1.0).kind,
            VerdictKind::NotSynced
        );
        let v = judge(&fs("ext4", "rw"), Some(&ssd), 1e5);
        assert_eq!(v.kind, VerdictKind::Plausible);
        let lo = storage(vec![disk("loop0", true, None, "virtual")]);
        let v = judge(&fs("ext4", "rw"), Some(&lo), 1e5);
        assert_eq!(
            (v.kind, v.reason.as_str()),
            (
                VerdictKind::Unknown,
                "loop0 is a loop device: its flags say nothing about a disk"
            )
        );
        let vd = storage(vec![disk("vda", true, None, "virtio")]);
        assert_eq!(
            judge(&fs("ext4", "rw"), Some(&vd), 1e5).kind,
            VerdictKind::Unknown
        );
        // tmpfs decides even on a loop device; so do missing barriers.
        assert_eq!(
            judge(&fs("ext4", "nobarrier"), Some(&lo), 1.0).kind,
            VerdictKind::NotSynced
        );
        assert_eq!(
            judge(&fs("ext4", "rw"), Some(&storage(vec![])), 1.0).kind,
            VerdictKind::Unknown
        );
        assert_eq!(
            judge(&fs("ext4", "rw"), None, 1.0).kind,
            VerdictKind::Unknown
        );
    }

    #[test]
    fn zfs_sync_disabled_and_log_devices() {
        let zfs = |sync: &str, logs: Vec<&str>| ZfsInfo {
            dataset: "rpool/data".into(),
            pool: "rpool".into(),
            state: None,
            layout: None,
            vdevs: [Vdev {
                class: "data".into(),
                name: "mirror-0".into(),
                devices: vec!["/dev/sda3".into(), "/dev/sdb3".into()],
            }]
            .into_iter()
            .chain((!logs.is_empty()).then(|| Vdev {
                class: "logs".into(),
                name: logs[0].into(),
                devices: logs.iter().map(|l| l.to_string()).collect(),
            }))
            .collect(),
            properties: BTreeMap::from([("sync".to_string(), sync.to_string())]),
            ashift: None,
        };
        let hdds = vec![
            disk("sda", true, Some(7200), "SATA"),
            disk("sdb", true, Some(7200), "SATA"),
        ];
        let zfs_fs = fs("zfs", "rw,xattr");
        let s = Storage {
            zfs: Some(zfs("disabled", vec![])),
            ..storage(hdds.clone())
        };
        let v = judge(&zfs_fs, Some(&s), 9000.0);
        assert_eq!(
            (v.kind, v.reason.as_str()),
            (
                VerdictKind::NotSynced,
                "ZFS dataset rpool/data has sync=disabled: fsync returns at once"
            )
        );
        let s = Storage {
            zfs: Some(zfs("standard", vec![])),
            ..storage(hdds.clone())
        };
        assert_eq!(
            judge(&zfs_fs, Some(&s), 9000.0).kind,
            VerdictKind::FasterThanTheDevice
        );
        // A log device on an SSD takes the synced writes: no rotation bound.
        let mut with_log = hdds.clone();
        with_log.push(disk("nvme0n1", false, None, "NVMe"));
        let s = Storage {
            zfs: Some(zfs("standard", vec!["/dev/nvme0n1p1"])),
            ..storage(with_log)
        };
        assert_eq!(
            judge(&zfs_fs, Some(&s), 9000.0).kind,
            VerdictKind::Plausible
        );
        let s = Storage {
            zfs: Some(zfs("standard", vec!["/dev/sdz1"])),
            ..storage(hdds)
        };
        assert_eq!(judge(&zfs_fs, Some(&s), 9000.0).kind, VerdictKind::Unknown);
    }
}
