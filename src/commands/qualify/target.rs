//! The device `qualify` was given: that it is a block device, its kernel
//! name and node, the whole disk it is on, its partitions, and who it is
//! (serial, WWN, model, size) from sysfs and udev's database.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::blockstack::sysfs;
use crate::model::qualify::Device;
use crate::model::storage::Disk;
use crate::sys::host::Host;

/// Why a path cannot be qualified at all.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("cannot read {}: {}", path.display(), crate::error::describe(source))]
    Missing {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a block device; qualify writes to a whole disk or a partition", path.display())]
    NotBlock { path: PathBuf },
    #[error("{} ({dev}) is not in /sys/dev/block", path.display())]
    NotInSysfs { path: PathBuf, dev: String },
    #[error("{} is block device {dev}, but /dev/{name} is not that device", path.display())]
    OtherNode {
        path: PathBuf,
        dev: String,
        name: String,
    },
}

/// A block device and what sysfs says of it.
#[derive(Debug, Clone)]
pub struct Target {
    pub device: Device,
    /// `/dev/NAME`: the node every check and write goes through.
    pub node: PathBuf,
    pub dev: (u32, u32),
    /// The whole disk (the device itself, or the disk a partition is on).
    pub disk: String,
    /// The whole disk's partitions, when the device is a whole disk.
    pub partitions: Vec<String>,
    /// What sysfs says of the whole disk.
    pub info: Disk,
}

impl Target {
    /// The device's name and its partitions' (what the checks look for).
    pub fn names(&self) -> Vec<String> {
        std::iter::once(self.device.name.clone())
            .chain(self.partitions.iter().cloned())
            .collect()
    }
}

/// A kernel name as the checks pass it to tools: letters, digits and `-_.:!` only.
fn plain(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:!".contains(c))
}

/// The `(major, minor)` of the block device at `path` (symlinks followed).
pub fn block_dev(path: &Path) -> Result<(u32, u32), TargetError> {
    let meta = std::fs::metadata(path).map_err(|source| TargetError::Missing {
        path: path.into(),
        source,
    })?;
    if !meta.file_type().is_block_device() {
        return Err(TargetError::NotBlock { path: path.into() });
    }
    let rdev = meta.rdev();
    Ok((libc::major(rdev), libc::minor(rdev)))
}

/// Resolves `path` to its device, checks `/dev/NAME` is the same device,
/// and reads who it is.
pub fn resolve(host: &Host, path: &Path) -> Result<Target, TargetError> {
    let dev = block_dev(path)?;
    let dev_text = format!("{}:{}", dev.0, dev.1);
    let class = host
        .resolve(format!("{}/{dev_text}", sysfs::SYS_DEV_BLOCK))
        .ok_or_else(|| TargetError::NotInSysfs {
            path: path.into(),
            dev: dev_text.clone(),
        })?;
    let name = class
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| plain(n))
        .ok_or_else(|| TargetError::NotInSysfs {
            path: path.into(),
            dev: dev_text.clone(),
        })?;
    let node = PathBuf::from("/dev").join(&name);
    if host.is_real() && block_dev(&node).ok() != Some(dev) {
        return Err(TargetError::OtherNode {
            path: path.into(),
            dev: dev_text,
            name,
        });
    }
    let base = format!("{}/{name}", sysfs::SYS_CLASS_BLOCK);
    let is_partition = host.exists(format!("{base}/partition"));
    let disk = if is_partition {
        class
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| plain(n))
            .unwrap_or_else(|| name.clone())
    } else {
        name.clone()
    };
    let partitions = if is_partition {
        Vec::new()
    } else {
        partitions_of(host, &name)
    };
    let info = sysfs::disk(host, &disk);
    let udev = udev_properties(host, host_dev(host, &disk).unwrap_or(dev));
    let serial = info
        .serial
        .clone()
        .or_else(|| udev_get(&udev, "ID_SERIAL_SHORT"))
        .filter(|s| !s.trim().is_empty());
    let wwn = ["wwid", "device/wwid"]
        .iter()
        .find_map(|rel| host.read_value(format!("{}/{disk}/{rel}", sysfs::SYS_CLASS_BLOCK)))
        .or_else(|| udev_get(&udev, "ID_WWN"))
        .filter(|w| !w.trim().is_empty());
    let size_bytes = host
        .read_value(format!("{base}/size"))
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(0, |sectors| sectors * 512);
    let device = Device {
        path: path.display().to_string(),
        name: name.clone(),
        dev: format!("{}:{}", dev.0, dev.1),
        partition_of: is_partition.then(|| disk.clone()),
        size_bytes,
        model: info.model.clone(),
        // A partition has no identity of its own: NAME:SIZE confirms it.
        serial: serial.filter(|_| !is_partition),
        wwn: wwn.filter(|_| !is_partition),
        firmware: info.firmware.clone(),
        transport: info.transport.clone(),
        rotational: info.rotational,
        logical_block_size: info.logical_block_size,
        physical_block_size: info.physical_block_size,
        write_cache: info.write_cache.clone(),
        // A partition has no queue of its own: its disk's.
        discard_max_bytes: info.discard_max_bytes,
    };
    Ok(Target {
        device,
        node,
        dev,
        disk,
        partitions,
        info,
    })
}

/// The partitions of disk `name` (entries of its sysfs directory that
/// have a `partition` file).
pub fn partitions_of(host: &Host, name: &str) -> Vec<String> {
    let base = format!("{}/{name}", sysfs::SYS_CLASS_BLOCK);
    host.list(&base)
        .into_iter()
        .filter(|p| plain(p) && host.exists(format!("{base}/{p}/partition")))
        .collect()
}

/// The `(major, minor)` sysfs gives disk `name`.
fn host_dev(host: &Host, name: &str) -> Option<(u32, u32)> {
    let text = host.read_value(format!("{}/{name}/dev", sysfs::SYS_CLASS_BLOCK))?;
    let (a, b) = text.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// udev's properties of a block device (`E:KEY=VALUE` lines of
/// `/run/udev/data/bMAJOR:MINOR`); empty where udev keeps none.
fn udev_properties(host: &Host, dev: (u32, u32)) -> Vec<(String, String)> {
    host.read(format!("/run/udev/data/b{}:{}", dev.0, dev.1))
        .map(|text| pveprobe_parse::inuse::udev_properties(&text))
        .unwrap_or_default()
}

fn udev_get(props: &[(String, String)], key: &str) -> Option<String> {
    props.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_passed_to_tools_are_plain() {
        for ok in ["sda", "nvme0n1p2", "loop7", "dm-3", "cciss!c0d0", "md127"] {
            assert!(plain(ok), "{ok}");
        }
        for bad in ["", "..", ".x", "a b", "sd/a", "x;y", "é"] {
            assert!(!plain(bad), "{bad}");
        }
    }

    #[test]
    fn a_regular_file_is_no_block_device() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("disk.img");
        std::fs::write(&f, b"x").unwrap();
        assert!(matches!(block_dev(&f), Err(TargetError::NotBlock { .. })));
        assert!(matches!(
            block_dev(&dir.path().join("nope")),
            Err(TargetError::Missing { .. })
        ));
    }
}
