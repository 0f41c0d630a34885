//! The node's PVE storages as `top` ties them to its disks: each enabled
//! storage of storage.cfg on this node, the block devices below it (an
//! LVM volume group's or thin pool's device-mapper devices and what they
//! sit on, a ZFS pool's vdevs, a directory's filesystem device) and how
//! full it is (a thin pool's data and metadata from `lvs`, a dataset's
//! from `zfs list`, a directory's from statvfs). Read-only, every
//! [`EVERY`]: fullness moves slowly, and the tools cost.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::behind::Behind;
use super::jobs::tool_opts;
use crate::pvestorage::PveStorage;
use crate::sys::child;
use crate::sys::host::Host;

/// How often the storages are read again.
pub const EVERY: Duration = Duration::from_secs(30);
/// How long a tool or a directory's statvfs may take.
const LIMIT: Duration = Duration::from_secs(5);

/// One storage: the disks below it and how full it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StorageUse {
    pub id: String,
    /// storage.cfg's type (`lvmthin`, `zfspool`, `dir`, ...).
    pub kind: String,
    /// What fills: `thin pool pve/data`, `dataset rpool/data`, a directory.
    pub what: String,
    /// Share in use, % (a thin pool's data).
    pub used_pct: Option<f64>,
    /// A thin pool's metadata in use, %.
    pub metadata_pct: Option<f64>,
    /// The block devices below it, as /proc/diskstats names them.
    pub disks: Vec<String>,
}

/// Reads the storages every [`EVERY`] on a thread of its own (a hanging
/// `lvs` or mount never holds the view).
#[derive(Debug)]
pub struct StorageReader {
    behind: Behind<(Vec<StorageUse>, Vec<String>)>,
    pub notes: Vec<String>,
}

impl Default for StorageReader {
    fn default() -> Self {
        StorageReader {
            behind: Behind::new(EVERY),
            notes: Vec::new(),
        }
    }
}

impl StorageReader {
    /// The storages as last read (read again when due).
    pub fn read(&mut self, host: &Host, pve_dir: &Path, node: &str) -> Vec<StorageUse> {
        let (host, pve_dir, node) = (host.clone(), pve_dir.to_path_buf(), node.to_string());
        let (list, notes) = self.behind.poll(move || {
            let mut notes = Vec::new();
            (read_all(&host, &pve_dir, &node, &mut notes), notes)
        });
        for n in notes {
            if !self.notes.contains(n) {
                self.notes.push(n.clone());
            }
        }
        list.clone()
    }
}

/// `ID`'s storages on this node, each with its disks and fullness.
fn read_all(host: &Host, pve_dir: &Path, node: &str, notes: &mut Vec<String>) -> Vec<StorageUse> {
    let Ok(text) = host.read(pve_dir.join("storage.cfg")) else {
        return Vec::new();
    };
    let Ok(cfg) = pveprobe_parse::storagecfg::parse(&text) else {
        return Vec::new();
    };
    let storages: Vec<PveStorage> = crate::pvestorage::storages(&cfg, &[], node)
        .into_iter()
        .filter(|s| s.enabled() && s.on_this_node())
        .collect();
    let thin = if storages.iter().any(|s| s.kind() == "lvmthin") {
        let ran = child::run("lvs", &pveprobe_parse::lvs::ARGS, &tool_opts(LIMIT));
        output("lvs", ran, notes)
            .map(|t| pveprobe_parse::lvs::thin_pools(&t))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let datasets = if storages.iter().any(|s| s.kind() == "zfspool") {
        let args = ["list", "-Hp", "-o", "name,used,avail"];
        output("zfs", child::run("zfs", &args, &tool_opts(LIMIT)), notes)
            .map(|t| datasets(&t))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    storages
        .iter()
        .filter_map(|s| {
            let get = |k: &str| s.section.get(k).map(str::to_string);
            let mut u = StorageUse {
                id: s.id().to_string(),
                kind: s.kind().to_string(),
                ..StorageUse::default()
            };
            let mut top = BTreeSet::new();
            match s.kind() {
                "lvmthin" => {
                    let (vg, pool) = (get("vgname")?, get("thinpool")?);
                    u.what = format!("thin pool {vg}/{pool}");
                    if let Some(t) = thin.iter().find(|t| t.vg == vg && t.lv == pool) {
                        u.used_pct = t.data_pct;
                        u.metadata_pct = t.metadata_pct;
                    }
                    top.extend(dm_named(host, |n| {
                        n == format!("{}-tpool", dm_name(&vg, &pool))
                    }));
                }
                "lvm" => {
                    let vg = get("vgname")?;
                    u.what = format!("volume group {vg}");
                    let prefix = format!("{}-", vg.replace('-', "--"));
                    top.extend(dm_named(host, |n| {
                        n.starts_with(&prefix) && !n[prefix.len()..].starts_with('-')
                    }));
                }
                "zfspool" => {
                    let dataset = get("pool")?;
                    u.what = format!("dataset {dataset}");
                    if let Some((used, avail)) =
                        datasets.iter().find(|d| d.0 == dataset).map(|d| (d.1, d.2))
                        && used + avail > 0
                    {
                        u.used_pct = Some(used as f64 / (used + avail) as f64 * 100.0);
                    }
                    let pool = dataset.split('/').next().unwrap_or(&dataset).to_string();
                    top.extend(zpool_devices(host, &pool));
                }
                "dir" | "btrfs" => {
                    let path = PathBuf::from(get("path")?);
                    u.what = path.display().to_string();
                    let (pct, dev) = dir_use(host, &path);
                    u.used_pct = pct;
                    top.extend(dev);
                }
                _ => return None,
            }
            let mut disks = BTreeSet::new();
            for d in &top {
                below(host, d, &mut disks, 0);
            }
            u.disks = disks.into_iter().collect();
            Some(u)
        })
        .collect()
}

/// A read-only tool's output; a failure noted once.
fn output(
    program: &str,
    ran: Result<crate::sys::child::Finished, crate::sys::child::ToolFailure>,
    notes: &mut Vec<String>,
) -> Option<String> {
    match ran {
        Ok(done) => Some(done.stdout_text()),
        Err(e) => {
            let n = format!("{program}: {e}");
            if !notes.contains(&n) {
                notes.push(n);
            }
            None
        }
    }
}

/// `zfs list -Hp -o name,used,avail`: each dataset's bytes used and available.
fn datasets(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let [name, used, avail] = f.as_slice() else {
                return None;
            };
            Some((name.to_string(), used.parse().ok()?, avail.parse().ok()?))
        })
        .collect()
}

/// LVM's device-mapper name of `vg/lv` (each `-` in a name doubled).
fn dm_name(vg: &str, lv: &str) -> String {
    format!("{}-{}", vg.replace('-', "--"), lv.replace('-', "--"))
}

/// The device-mapper devices (`dm-N`) whose name `wanted` takes.
fn dm_named(host: &Host, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    host.list("/sys/block")
        .into_iter()
        .filter(|d| d.starts_with("dm-"))
        .filter(|d| {
            host.read_value(format!("/sys/block/{d}/dm/name"))
                .is_some_and(|n| wanted(&n))
        })
        .collect()
}

/// A pool's leaf devices as block names (`/dev/sda1` → `sda1`).
fn zpool_devices(host: &Host, pool: &str) -> Vec<String> {
    if !host.exists(super::jobs::ZFS_KSTAT) {
        return Vec::new();
    }
    match crate::blockstack::zfs::pool_status(pool) {
        Ok(status) => status
            .data_devices()
            .iter()
            .filter_map(|d| {
                let real = std::fs::canonicalize(d).ok()?;
                Some(real.file_name()?.to_string_lossy().into_owned())
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// A directory's share in use and its filesystem's block device, with a
/// time limit (a hung mount must not hang `top`).
fn dir_use(host: &Host, path: &Path) -> (Option<f64>, Option<String>) {
    let real = host.path(path);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::os::unix::fs::MetadataExt;
        let vfs = nix::sys::statvfs::statvfs(&real).ok().and_then(|v| {
            let total = v.blocks() as f64;
            (total > 0.0).then(|| (total - v.blocks_free() as f64) / total * 100.0)
        });
        let dev = std::fs::metadata(&real).ok().map(|m| m.dev());
        let _ = tx.send((vfs, dev));
    });
    let Ok((pct, dev)) = rx.recv_timeout(LIMIT) else {
        return (None, None);
    };
    let name = dev.and_then(|d| {
        let (major, minor) = (nix::sys::stat::major(d), nix::sys::stat::minor(d));
        host.link_name(format!("/sys/dev/block/{major}:{minor}"))
    });
    (pct, name)
}

/// `name` and every device below it: what it sits on (`slaves/`) and, for
/// a partition, its disk.
fn below(host: &Host, name: &str, out: &mut BTreeSet<String>, depth: usize) {
    if depth > 16 || !out.insert(name.to_string()) {
        return;
    }
    for s in host.list(format!("/sys/class/block/{name}/slaves")) {
        below(host, &s, out, depth + 1);
    }
    if host.exists(format!("/sys/class/block/{name}/partition"))
        && let Some(disk) = host
            .resolve(format!("/sys/class/block/{name}"))
            .and_then(|p| {
                p.parent()?
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
    {
        below(host, &disk, out, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lvm_names_and_zfs_list_lines() {
        assert_eq!(dm_name("pve", "data"), "pve-data");
        assert_eq!(dm_name("my-vg", "thin-pool"), "my--vg-thin--pool");
        let d = datasets("rpool\t1000\t3000\nrpool/data\t900\t3000\nbad line\n");
        assert_eq!(
            d,
            [
                ("rpool".into(), 1000, 3000),
                ("rpool/data".into(), 900, 3000)
            ]
        );
    }

    #[test]
    fn a_thin_pools_disks_are_found_through_sysfs() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let mk = |p: &str| std::fs::create_dir_all(r.join(p)).unwrap();
        // dm-2 is pve-data-tpool on sda3, a partition of sda.
        mk("sys/devices/block/dm-2/dm");
        mk("sys/devices/block/dm-2/slaves/sda3");
        mk("sys/devices/pci/sda/sda3");
        std::fs::write(r.join("sys/devices/block/dm-2/dm/name"), "pve-data-tpool\n").unwrap();
        std::fs::write(r.join("sys/devices/pci/sda/sda3/partition"), "3\n").unwrap();
        mk("sys/block");
        mk("sys/class/block");
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, r.join(at)).unwrap();
        link("../devices/block/dm-2", "sys/block/dm-2");
        link("../../devices/block/dm-2", "sys/class/block/dm-2");
        link("../../devices/pci/sda/sda3", "sys/class/block/sda3");
        link("../../devices/pci/sda", "sys/class/block/sda");
        let host = Host::with_root(r);
        let found = dm_named(&host, |n| n == "pve-data-tpool");
        assert_eq!(found, ["dm-2"]);
        let mut all = BTreeSet::new();
        below(&host, "dm-2", &mut all, 0);
        assert_eq!(all.into_iter().collect::<Vec<_>>(), ["dm-2", "sda", "sda3"]);
    }
}
