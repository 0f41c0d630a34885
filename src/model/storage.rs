//! What stands behind PATH, as data: the layers between the filesystem and
//! its leaf disks, the disks with their controllers and, on ZFS, the pool's
//! vdevs and the dataset's properties. Finding them (sysfs, `zpool`,
//! `zfs`) and the hints that explain figures stay in `storage`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A layer between the filesystem and the disks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// The kernel's name: `dm-0`, `md0`, `sda1`.
    pub name: String,
    /// `partition`, `lvm`, `luks`, `multipath`, `device-mapper`, `md` or `btrfs`.
    pub kind: String,
    /// `pve-root` (dm name), `raid1, 2 devices` (md), ...
    pub detail: Option<String>,
    /// The devices this layer is built on.
    pub below: Vec<String>,
    /// A partition's first byte on its disk (`start`, in 512-byte sectors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_bytes: Option<u64>,
    /// The largest discard the layer passes down (`queue/discard_max_bytes`;
    /// 0: none). Partitions share their disk's queue and have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_max_bytes: Option<u64>,
    /// An LVM thin pool's table (`dmsetup table`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thin_pool: Option<ThinPool>,
}

/// An LVM thin pool as device-mapper runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinPool {
    /// Its data block size (LVM's chunk size), in bytes.
    pub chunk_bytes: u64,
    /// A chunk is zeroed before its first write (LVM's `--zero y`).
    pub zeroing: bool,
    /// `passed down`, `not passed down` or `ignored`.
    pub discards: String,
}

/// A leaf disk and what stands behind it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Disk {
    pub name: String,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub size_bytes: Option<u64>,
    pub rotational: Option<bool>,
    /// The nominal rotation rate in rpm, where the disk reports one (SCSI
    /// VPD page B1h, which libata fills from ATA IDENTIFY word 217).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation_rpm: Option<u32>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub scheduler: Option<String>,
    /// `write back` or `write through`, from `queue/write_cache`.
    pub write_cache: Option<String>,
    /// The largest discard the disk takes (`queue/discard_max_bytes`; 0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_max_bytes: Option<u64>,
    /// SATA, SAS, NVMe, virtio, USB, RAID volume, SCSI, virtual.
    pub transport: Option<String>,
    /// The disk's own driver (`sd`, `virtio_blk`).
    pub driver: Option<String>,
    /// The host controller's driver (`ahci`, `megaraid_sas`, `nvme`, `virtio-pci`).
    pub controller_driver: Option<String>,
    /// The controller's PCI address.
    pub controller_pci: Option<String>,
    /// The controller's PCI vendor id (`0x15ad` is VMware).
    pub controller_vendor: Option<String>,
    /// `/sys/module/<driver>/version`, where the kernel exposes one.
    pub module_version: Option<String>,
    /// The links between the disk and the CPU, nearest first (its SATA
    /// link, SAS phy or USB port, then its controller's PCIe link).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
    /// What smartctl reports, read before the first timed test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// A RAID volume's physical disks, where smartctl reaches them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behind: Vec<Health>,
    /// Its temperature and thermal counters before the first timed test
    /// and after the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heat: Option<Heat>,
}

impl Disk {
    /// The link that carries the least: what no read of this disk passes.
    pub fn narrowest(&self) -> Option<&Link> {
        self.links
            .iter()
            .min_by(|a, b| a.ceiling_mb_s.total_cmp(&b.ceiling_mb_s))
    }
}

/// A disk's health as `smartctl --json` reports it (the counters that
/// explain slow reads or a risk; `pveprobe_parse::smart`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Health {
    /// How it was read: `smartctl /dev/sda`, `smartctl -d megaraid,1 /dev/bus/0`.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// SMART's overall assessment: false is FAILED.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_on_hours: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reallocated_sectors: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_sectors: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline_uncorrectable: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crc_errors: Option<u64>,
    /// Percent of rated endurance used (NVMe's percentage used, ATA's
    /// device statistics or the vendor's wear attribute).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wear_used_pct: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wear_source: Option<String>,
    /// The SATA link as the disk reports it: now, and its own maximum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_current: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_max: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_warning: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_spare_pct: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_spare_threshold_pct: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_errors: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsafe_shutdowns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_written_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grown_defects: Option<u64>,
    /// SCSI: uncorrected read and write errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncorrected_errors: Option<u64>,
    /// Its thermal counters at the time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thermal: Option<Thermal>,
}

/// A disk's temperature and thermal counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Thermal {
    /// `hwmon` or `smartctl`.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    /// NVMe: minutes above the warning and the critical temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning_minutes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_minutes: Option<u64>,
    /// NVMe thermal management: transitions to the light and heavy
    /// throttle states, and seconds spent in them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_transitions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_seconds: Option<u64>,
}

/// A disk's heat before the first timed test and after the last.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Heat {
    pub before: Thermal,
    pub after: Thermal,
}

impl Heat {
    /// What moved that means the disk slowed itself: `warning
    /// temperature time +2 min`, `thermal throttling +3`.
    pub fn throttling(&self) -> Vec<String> {
        let up = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) if b > a => Some(b - a),
            _ => None,
        };
        let b = &self.before;
        let a = &self.after;
        let mut moved = Vec::new();
        if let Some(d) = up(b.warning_minutes, a.warning_minutes) {
            moved.push(format!("warning temperature time +{d} min"));
        }
        if let Some(d) = up(b.critical_minutes, a.critical_minutes) {
            moved.push(format!("critical temperature time +{d} min"));
        }
        if let Some(d) = up(b.throttle_transitions, a.throttle_transitions) {
            moved.push(format!("thermal throttling +{d}"));
        }
        moved
    }
}

/// A link on a disk's path, at the rate it runs and the rate both its
/// ends can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// `SATA`, `SAS`, `PCIe` or `USB`.
    pub kind: String,
    /// Its sysfs name: `ata1`, `phy-1:0`, `0000:3d:00.0`, `2-1`.
    pub at: String,
    /// `3.0 Gb/s`, `8.0 GT/s x2`.
    pub current: String,
    /// The most payload it carries at that rate, in MB/s (10^6 bytes),
    /// after line encoding (`pveprobe_parse::link`).
    pub ceiling_mb_s: f64,
    /// What both ends can do, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capable_mb_s: Option<f64>,
    /// Whose limits `capable` is: `the port`, `the disk and the port`,
    /// `the device and its slot`, `the HBA's phy`, `the disk and the controller`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capable_by: Option<String>,
}

impl Link {
    /// Runs below what both ends can do.
    pub fn degraded(&self) -> bool {
        self.capable_mb_s
            .is_some_and(|c| c > self.ceiling_mb_s * 1.01)
    }
}

use pveprobe_parse::zfs::Vdev;

/// ZFS facts for a dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZfsInfo {
    pub dataset: String,
    pub pool: String,
    pub state: Option<String>,
    /// `mirror (sda3, sdb3); logs: nvme0n1p1`.
    pub layout: Option<String>,
    pub vdevs: Vec<Vdev>,
    /// `sync`, `compression`, `recordsize`, `primarycache`.
    pub properties: BTreeMap<String, String>,
    /// The pool's `ashift` property (`zpool get ashift`): 2^ashift-byte
    /// blocks; 0 (or none) when ZFS chose it from the disks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ashift: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Storage {
    pub source: String,
    pub fstype: String,
    /// The block device of the source, when it is one (`dm-0`, `sda1`, `loop0`).
    pub device: Option<String>,
    pub layers: Vec<Layer>,
    pub disks: Vec<Disk>,
    pub zfs: Option<ZfsInfo>,
    /// Devices the read tests use when the source is not a block device
    /// itself: a ZFS pool's data disks.
    pub read_devices: Vec<PathBuf>,
    /// What could not be learned, and why.
    pub problems: Vec<String>,
    pub hints: Vec<crate::model::hint::Hint>,
}
