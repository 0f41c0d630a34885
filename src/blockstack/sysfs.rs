//! From a block device down to its leaf disks through sysfs: partitions,
//! device-mapper (LVM, LUKS, multipath) and md RAID (`slaves/`), and what
//! sysfs tells about each disk and its controller.
//!
//! Files read, all through the [`Host`] seam (fixture trees stand in):
//! `/sys/class/block/<name>` (a symlink into `/sys/devices`), its
//! `partition`, `slaves/`, `dm/name`, `dm/uuid`, `md/level`,
//! `md/raid_disks`, `size`, `serial`, `queue/{rotational,logical_block_size,
//! physical_block_size,scheduler,write_cache}`, `device/{model,vendor,rev,
//! firmware_rev,serial,vpd_pg80,driver}`, the nearest PCI device's `driver`
//! and `vendor`, `/sys/module/<driver>/version`, `/sys/dev/block/<maj:min>`
//! and `/sys/fs/btrfs/<uuid>/devices/`.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::storage::{Disk, Layer};
use crate::sys::host::Host;
use pveprobe_parse::sysfs::{active_scheduler, vpd_rotation_rpm, vpd_serial};

pub const SYS_CLASS_BLOCK: &str = "/sys/class/block";
pub const SYS_DEV_BLOCK: &str = "/sys/dev/block";
pub const SYS_FS_BTRFS: &str = "/sys/fs/btrfs";
pub const SYS_MODULE: &str = "/sys/module";

/// The layers and leaf disks below one block device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    pub layers: Vec<Layer>,
    pub disks: Vec<Disk>,
}

fn class(name: &str) -> String {
    format!("{SYS_CLASS_BLOCK}/{name}")
}

/// The kernel name of the block device behind a mount: from its
/// major:minor (`/sys/dev/block`), else from the source path.
pub fn device_name(host: &Host, source: &str, major: u32, minor: u32) -> Option<String> {
    if major != 0
        && let Some(path) = host.resolve(format!("{SYS_DEV_BLOCK}/{major}:{minor}"))
    {
        return path.file_name().map(|n| n.to_string_lossy().into_owned());
    }
    name_of_dev_path(host, source)
}

/// `/dev/sda1` -> `sda1`; `/dev/mapper/pve-root` -> the dm device of that name.
pub fn name_of_dev_path(host: &Host, path: &str) -> Option<String> {
    if let Some(dm_name) = path.strip_prefix("/dev/mapper/") {
        return host.list(SYS_CLASS_BLOCK).into_iter().find(|n| {
            host.read_value(format!("{}/dm/name", class(n))).as_deref() == Some(dm_name)
        });
    }
    // A /dev symlink (by-id, by-uuid, LVM's /dev/vg/lv) resolves to its node.
    let resolved = host
        .resolve(path)
        .unwrap_or_else(|| Path::new(path).to_path_buf());
    let name = resolved.file_name()?.to_string_lossy().into_owned();
    host.exists(class(&name)).then_some(name)
}

/// The btrfs member devices of the filesystem that has `name` among them.
pub fn btrfs_members(host: &Host, name: &str) -> Vec<String> {
    host.list(SYS_FS_BTRFS)
        .into_iter()
        .map(|uuid| host.list(format!("{SYS_FS_BTRFS}/{uuid}/devices")))
        .find(|members| members.iter().any(|m| m == name))
        .unwrap_or_default()
}

/// Walks from `names` down to the leaf disks.
pub fn resolve(host: &Host, names: &[String]) -> Stack {
    let mut stack = Stack::default();
    let mut seen = BTreeSet::new();
    for name in names {
        walk(host, name, &mut stack, &mut seen);
    }
    stack
}

fn walk(host: &Host, name: &str, stack: &mut Stack, seen: &mut BTreeSet<String>) {
    if !seen.insert(name.to_string()) || !host.exists(class(name)) {
        return;
    }
    let base = class(name);
    if host.exists(format!("{base}/partition")) {
        let parent = host.resolve(&base).and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        });
        stack.layers.push(Layer {
            name: name.to_string(),
            kind: "partition".into(),
            detail: host.read_value(format!("{base}/partition")),
            below: parent.iter().cloned().collect(),
            thin_pool: None,
            start_bytes: host
                .read_value(format!("{base}/start"))
                .and_then(|v| v.parse::<u64>().ok())
                .map(|sectors| sectors * 512),
            discard_max_bytes: None,
        });
        if let Some(parent) = parent {
            walk(host, &parent, stack, seen);
        }
        return;
    }
    let slaves = host.list(format!("{base}/slaves"));
    if slaves.is_empty() {
        stack.disks.push(disk(host, name));
        return;
    }
    let (kind, detail) = if let Some(uuid) = host.read_value(format!("{base}/dm/uuid")) {
        let kind = match uuid.split('-').next().unwrap_or("") {
            "LVM" => "lvm",
            "CRYPT" => "luks",
            "mpath" => "multipath",
            _ if uuid.contains("mpath-") => "multipath",
            _ => "device-mapper",
        };
        (kind.to_string(), host.read_value(format!("{base}/dm/name")))
    } else if let Some(level) = host.read_value(format!("{base}/md/level")) {
        let disks = host.read_value(format!("{base}/md/raid_disks"));
        (
            "md".to_string(),
            Some(disks.map_or(level.clone(), |d| format!("{level}, {d} devices"))),
        )
    } else {
        ("stacked".to_string(), None)
    };
    stack.layers.push(Layer {
        name: name.to_string(),
        kind,
        detail,
        below: slaves.clone(),
        start_bytes: None,
        thin_pool: None,
        discard_max_bytes: host
            .read_value(format!("{base}/queue/discard_max_bytes"))
            .and_then(|v| v.parse().ok()),
    });
    for slave in &slaves {
        walk(host, slave, stack, seen);
    }
}

fn is_pci_address(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && name
            .chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

fn transport(path: &str, name: &str, controller: Option<&str>) -> Option<String> {
    let by_controller = match controller {
        Some("megaraid_sas" | "hpsa" | "smartpqi" | "aacraid" | "hpvsa" | "arcmsr" | "3w-sas") => {
            Some("RAID volume")
        }
        Some("nvme") => Some("NVMe"),
        Some("vmw_pvscsi") => Some("SCSI (VMware PVSCSI)"),
        Some("virtio-pci") if path.contains("/virtio") && !path.contains("/host") => Some("virtio"),
        _ => None,
    };
    let by_path = if name.starts_with("nvme") || path.contains("/nvme/") {
        "NVMe"
    } else if path.contains("/usb") {
        "USB"
    } else if path.contains("/ata") {
        "SATA"
    } else if path.contains("/end_device-") || path.contains("/sas_") || path.contains("/port-") {
        "SAS"
    } else if path.starts_with("/sys/devices/virtual/") {
        "virtual"
    } else if path.contains("/virtio") && !path.contains("/host") {
        "virtio"
    } else if path.contains("/host") {
        "SCSI"
    } else {
        return by_controller.map(str::to_string);
    };
    Some(by_controller.unwrap_or(by_path).to_string())
}

/// What sysfs tells about the leaf disk `name`.
pub fn disk(host: &Host, name: &str) -> Disk {
    let base = class(name);
    let value = |rel: &str| host.read_value(format!("{base}/{rel}"));
    let number = |rel: &str| value(rel).and_then(|v| v.parse::<u64>().ok());
    let device_path = host
        .resolve(format!("{base}/device"))
        .map(|p| p.display().to_string());
    let own_path = host
        .resolve(&base)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let pci = device_path.as_deref().and_then(|p| {
        Path::new(p)
            .ancestors()
            .find(|a| {
                a.file_name()
                    .is_some_and(|n| is_pci_address(&n.to_string_lossy()))
            })
            .map(Path::to_path_buf)
    });
    let controller_driver = pci.as_ref().and_then(|p| host.link_name(p.join("driver")));
    let driver = host.link_name(format!("{base}/device/driver"));
    let module_version = [driver.as_deref(), controller_driver.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|d| host.read_value(format!("{SYS_MODULE}/{}/version", d.replace('-', "_"))));
    let serial = value("serial")
        .or_else(|| value("device/serial"))
        .or_else(|| {
            host.read_bytes(format!("{base}/device/vpd_pg80"))
                .and_then(|p| vpd_serial(&p))
        });
    let links = super::links::links(host, device_path.as_deref().map(Path::new), pci.as_deref());
    Disk {
        name: name.to_string(),
        model: value("device/model"),
        // virtio puts a PCI vendor id there, not a name.
        vendor: value("device/vendor").filter(|v| !v.starts_with("0x")),
        serial,
        firmware: value("device/rev").or_else(|| value("device/firmware_rev")),
        size_bytes: number("size").map(|sectors| sectors * 512),
        rotational: number("queue/rotational").map(|r| r == 1),
        rotation_rpm: host
            .read_bytes(format!("{base}/device/vpd_pgb1"))
            .and_then(|p| vpd_rotation_rpm(&p)),
        logical_block_size: number("queue/logical_block_size").and_then(|v| u32::try_from(v).ok()),
        physical_block_size: number("queue/physical_block_size")
            .and_then(|v| u32::try_from(v).ok()),
        scheduler: host
            .read(format!("{base}/queue/scheduler"))
            .ok()
            .and_then(|s| active_scheduler(&s)),
        write_cache: value("queue/write_cache"),
        discard_max_bytes: number("queue/discard_max_bytes"),
        transport: transport(&own_path, name, controller_driver.as_deref()),
        driver,
        controller_pci: pci
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned()),
        controller_vendor: pci.as_ref().and_then(|p| host.read_value(p.join("vendor"))),
        controller_driver,
        module_version,
        links,
        ..Disk::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses() {
        assert!(is_pci_address("0000:00:17.0"));
        assert!(is_pci_address("0000:3d:00.1"));
        assert!(!is_pci_address("pci0000:00"));
        assert!(!is_pci_address("ata1"));
        assert!(!is_pci_address("0000:00:17x0"));
    }

    #[test]
    fn transports() {
        let t = |path, name, ctl| transport(path, name, ctl);
        assert_eq!(
            t(
                "/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda",
                "sda",
                Some("ahci")
            )
            .as_deref(),
            Some("SATA")
        );
        assert_eq!(t("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/host0/target0:2:0/0:2:0:0/block/sda", "sda", Some("megaraid_sas")).as_deref(), Some("RAID volume"));
        assert_eq!(
            t(
                "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1",
                "nvme0n1",
                Some("nvme")
            )
            .as_deref(),
            Some("NVMe")
        );
        assert_eq!(
            t(
                "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda",
                "vda",
                Some("virtio-pci")
            )
            .as_deref(),
            Some("virtio")
        );
        assert_eq!(
            t("/sys/devices/virtual/block/loop0", "loop0", None).as_deref(),
            Some("virtual")
        );
        assert_eq!(t("/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdc", "sdc", Some("xhci_hcd")).as_deref(), Some("USB"));
        assert_eq!(t("/sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0/host1/port-1:0/end_device-1:0/target1:0:0/1:0:0:0/block/sdb", "sdb", Some("mpt3sas")).as_deref(), Some("SAS"));
    }
}
