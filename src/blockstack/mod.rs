//! What stands behind PATH: the filesystem, the layers below it and the
//! leaf disks with their controllers, plus, on ZFS, the pool layout and the
//! dataset's properties; and the plain-language hints that explain figures.

pub mod hints;
pub mod links;
pub mod smart;
pub mod sysfs;
pub mod thin;
pub mod zfs;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::model::filesystem::FsInfo;
use crate::model::storage::{Layer, Storage, ZfsInfo};
use crate::sys::host::Host;

/// Where the facts sysfs lacks come from: `zpool` and `zfs` (a pool's
/// layout and ashift, a dataset's properties) and `dmsetup table` (a thin
/// pool's chunk size and zeroing), or their captured output in a fixture
/// tree.
pub trait StackTools {
    fn pool_status(&self, pool: &str) -> Result<pveprobe_parse::zfs::PoolStatus, zfs::ZfsError>;
    fn dataset_properties(&self, dataset: &str) -> Result<BTreeMap<String, String>, zfs::ZfsError>;
    /// The pool's `ashift` property; `None` when it cannot be read.
    fn pool_ashift(&self, _pool: &str) -> Option<u32> {
        None
    }
    /// `dmsetup table NAME` of a device-mapper device; `None` when it
    /// cannot be read.
    fn dm_table(&self, _name: &str) -> Option<String> {
        None
    }
}

/// The real commands, found on PATH.
pub struct Commands;

impl StackTools for Commands {
    fn pool_status(&self, pool: &str) -> Result<pveprobe_parse::zfs::PoolStatus, zfs::ZfsError> {
        zfs::pool_status(pool)
    }
    fn dataset_properties(&self, dataset: &str) -> Result<BTreeMap<String, String>, zfs::ZfsError> {
        zfs::dataset_properties(dataset)
    }
    fn pool_ashift(&self, pool: &str) -> Option<u32> {
        zfs::pool_ashift(pool)
    }
    fn dm_table(&self, name: &str) -> Option<String> {
        thin::dm_table(name)
    }
}

/// Captured output in a fixture directory: `zpool-status-<pool>.txt` and
/// `zfs-get-<dataset with / as _>.txt`; a missing file means no zpool.
pub struct Captured(pub PathBuf);

impl StackTools for Captured {
    fn pool_status(&self, pool: &str) -> Result<pveprobe_parse::zfs::PoolStatus, zfs::ZfsError> {
        let text = std::fs::read_to_string(self.0.join(format!("zpool-status-{pool}.txt")))
            .map_err(|_| zfs::ZfsError::Missing("zpool"))?;
        Ok(pveprobe_parse::zfs::parse_status(&text)?)
    }
    fn dataset_properties(&self, dataset: &str) -> Result<BTreeMap<String, String>, zfs::ZfsError> {
        let name = dataset.replace('/', "_");
        let text = std::fs::read_to_string(self.0.join(format!("zfs-get-{name}.txt")))
            .map_err(|_| zfs::ZfsError::Missing("zfs"))?;
        Ok(pveprobe_parse::zfs::parse_properties(&text))
    }
    fn pool_ashift(&self, pool: &str) -> Option<u32> {
        let text =
            std::fs::read_to_string(self.0.join(format!("zpool-get-ashift-{pool}.txt"))).ok()?;
        pveprobe_parse::zfs::parse_ashift(&text)
    }
    fn dm_table(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(format!("dmsetup-table-{name}.txt"))).ok()
    }
}

/// Resolves the mount's source down to its leaf disks.
pub fn storage(host: &Host, mount: &FsInfo) -> Storage {
    storage_with(host, mount, &Commands)
}

/// [`storage`] with ZFS facts from `tools`.
pub fn storage_with(host: &Host, mount: &FsInfo, tools: &dyn StackTools) -> Storage {
    let mut storage = Storage {
        source: mount.source.clone(),
        fstype: mount.fstype.clone(),
        ..Storage::default()
    };
    if mount.fstype == "zfs" {
        zfs_storage(host, &mut storage, tools);
    } else if mount.source.starts_with("/dev/") {
        let name = sysfs::device_name(host, &mount.source, mount.dev.0, mount.dev.1);
        if let Some(name) = &name {
            let mut tops = vec![name.clone()];
            if mount.fstype == "btrfs" {
                let members = sysfs::btrfs_members(host, name);
                if members.len() > 1 {
                    storage.layers.push(Layer {
                        name: mount.source.clone(),
                        kind: "btrfs".into(),
                        detail: Some(format!("{} devices", members.len())),
                        below: members.clone(),
                        start_bytes: None,
                        thin_pool: None,
                        discard_max_bytes: None,
                    });
                    tops = members;
                }
            }
            let stack = sysfs::resolve(host, &tops);
            storage.layers.extend(stack.layers);
            storage.disks = stack.disks;
            thin::read_pools(&mut storage.layers, tools);
        } else {
            storage
                .problems
                .push(format!("{} is not in /sys/class/block", mount.source));
        }
        storage.device = name;
    }
    storage.hints = hints::hints(&storage);
    storage
}

fn zfs_storage(host: &Host, storage: &mut Storage, tools: &dyn StackTools) {
    let dataset = storage.source.clone();
    let pool = dataset.split('/').next().unwrap_or(&dataset).to_string();
    let mut info = ZfsInfo {
        dataset: dataset.clone(),
        pool: pool.clone(),
        state: None,
        layout: None,
        vdevs: vec![],
        properties: BTreeMap::new(),
        ashift: tools.pool_ashift(&pool),
    };
    match tools.pool_status(&pool) {
        Ok(status) => {
            let data = status.data_devices();
            let names: Vec<String> = status
                .vdevs
                .iter()
                .flat_map(|v| &v.devices)
                .filter_map(|d| sysfs::name_of_dev_path(host, d))
                .collect();
            let stack = sysfs::resolve(host, &names);
            storage.layers = stack.layers;
            storage.disks = stack.disks;
            storage.read_devices = data.iter().map(PathBuf::from).collect();
            info.layout = Some(status.layout());
            info.state = status.state;
            info.vdevs = status.vdevs;
        }
        Err(e) => storage.problems.push(e.to_string()),
    }
    match tools.dataset_properties(&dataset) {
        Ok(props) => info.properties = props,
        Err(e) if !storage.problems.contains(&e.to_string()) => {
            storage.problems.push(e.to_string())
        }
        Err(_) => {}
    }
    storage.zfs = Some(info);
}
