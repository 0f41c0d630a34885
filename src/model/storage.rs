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
}

pub use pveprobe_parse::zfs::Vdev;

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
    pub hints: Vec<String>,
}
