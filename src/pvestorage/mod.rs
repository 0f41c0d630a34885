//! Proxmox VE storages by ID (`--storage ID`, `pveprobe storages`): what
//! `/etc/pve/storage.cfg` declares, what `pvesm status` says of it on this
//! node, and how the probe measures it: in its directory as for a path,
//! through a scratch volume PVE allocates for it, or not at all (and why).
//!
//! The rules follow PVE's storage plugins (pve-storage): a path storage's
//! directory is `path`, or `/mnt/pve/ID` for the network filesystems PVE
//! mounts; `is_mountpoint` makes PVE treat a storage whose directory is
//! not a mount point as inactive; a storage is available on the nodes its
//! `nodes` list names (all when absent) unless `disable` is set.

mod node;
pub mod pvesm;
pub mod volume;

pub use node::{Pve, check_path};

use std::path::{Path, PathBuf};

use pveprobe_parse::pvesm::StatusRow;
use pveprobe_parse::storagecfg::{Section, StorageCfg};

/// Where PVE keeps its cluster-wide configuration (pmxcfs).
pub const ETC_PVE: &str = "/etc/pve";

/// The directory PVE mounts network storages under.
pub const MNT_PVE: &str = "/mnt/pve";

/// How the probe measures a storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approach {
    /// The probe in this directory; `mount_point`: PVE requires it to be
    /// a mount point (`is_mountpoint`, network storages).
    Path {
        path: PathBuf,
        mount_point: Option<PathBuf>,
    },
    /// A scratch volume from `pvesm alloc`; `activate`: the storage needs
    /// PVE's storage library to activate or map it (RBD, shared LVM).
    Volume { activate: bool },
    /// Not measured, and why.
    Skip(String),
}

/// One storage of storage.cfg as this node sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PveStorage {
    pub section: Section,
    /// `pvesm status`'s row, where pvesm ran and listed it.
    pub status: Option<StatusRow>,
    /// This node's name, for the `nodes` list.
    pub node: String,
}

impl PveStorage {
    pub fn id(&self) -> &str {
        &self.section.id
    }

    pub fn kind(&self) -> &str {
        &self.section.kind
    }

    pub fn enabled(&self) -> bool {
        !self.section.flag("disable")
    }

    /// Whether PVE uses it on this node (`nodes`, as PVE reads it).
    pub fn on_this_node(&self) -> bool {
        !self.enabled() || self.section.enabled_on(&self.node)
    }

    pub fn shared(&self) -> bool {
        self.section.is_shared()
    }

    /// Its content types, the type's default where storage.cfg gives none.
    pub fn content(&self) -> Vec<String> {
        self.section.content()
    }

    /// `pvesm status`: active. `None` where pvesm did not list it.
    pub fn active(&self) -> Option<bool> {
        Some(self.status.as_ref()?.status == "active")
    }

    /// Free bytes, from `pvesm status`.
    pub fn available_bytes(&self) -> Option<u64> {
        self.status.as_ref()?.avail_bytes
    }

    /// How the probe would measure it, from its type and options alone.
    pub fn approach(&self) -> Approach {
        let s = &self.section;
        let dir = |default_under_mnt: bool| -> Option<PathBuf> {
            match s.get("path") {
                Some(p) => Some(PathBuf::from(p)),
                None if default_under_mnt => Some(Path::new(MNT_PVE).join(self.id())),
                None => None,
            }
        };
        let path_approach = |path: Option<PathBuf>, always_mounted: bool| match path {
            None => Approach::Skip("storage.cfg gives it no path".into()),
            Some(path) => {
                let mount_point = if always_mounted {
                    Some(path.clone())
                } else {
                    is_mountpoint(s, &path)
                };
                Approach::Path { path, mount_point }
            }
        };
        let images = self.content().iter().any(|c| c == "images");
        let volume = |activate: bool| {
            if images {
                Approach::Volume { activate }
            } else {
                Approach::Skip(
                    "its content has no images: pvesm alloc refuses VM disks there".into(),
                )
            }
        };
        match self.kind() {
            "dir" | "btrfs" => path_approach(dir(false), false),
            "nfs" | "cifs" | "glusterfs" | "cephfs" => path_approach(dir(true), true),
            "lvmthin" => volume(false),
            // Shared LVM (on iSCSI or FC) is activated on one node at a time.
            "lvm" => volume(s.flag("shared")),
            "rbd" => volume(true),
            "zfspool" if images || !self.content().iter().any(|c| c == "rootdir") => volume(false),
            // Containers only: their subvolumes are datasets under the pool.
            "zfspool" => {
                let path = match s.get("mountpoint") {
                    Some(m) => PathBuf::from(m),
                    None => Path::new("/").join(s.get("pool").unwrap_or(self.id())),
                };
                Approach::Path {
                    path,
                    mount_point: None,
                }
            }
            "iscsi" => Approach::Skip(
                "iSCSI LUNs are fixed: pvesm alloc refuses to allocate on it".into(),
            ),
            "iscsidirect" => Approach::Skip(
                "QEMU reaches it through libiscsi: there is no kernel device to measure".into(),
            ),
            "zfs" => Approach::Skip(
                "ZFS over iSCSI: the zvols live on the target's host and QEMU reaches them through libiscsi".into(),
            ),
            "pbs" => Approach::Skip(
                "a Proxmox Backup Server datastore holds backups, not VM disks".into(),
            ),
            "esxi" => Approach::Skip("an ESXi import source, read-only".into()),
            other => Approach::Skip(format!("pveprobe does not know storage type {other}")),
        }
    }

    /// Why it is not measured on this node now, before its approach: off,
    /// on other nodes, inactive.
    pub fn unavailable(&self) -> Option<String> {
        if !self.enabled() {
            return Some("disabled in storage.cfg".into());
        }
        if !self.on_this_node() {
            return Some(format!(
                "not on this node ({}): storage.cfg's nodes are {}",
                self.node,
                self.section.list("nodes").join(",")
            ));
        }
        match self.active() {
            Some(false) => Some(format!(
                "pvesm status says {}",
                self.status
                    .as_ref()
                    .map_or("inactive", |s| s.status.as_str())
            )),
            _ => None,
        }
    }
}

/// PVE's `is_mountpoint`: `yes`/`1`/`on`/`true` (the path itself must be a
/// mount point), or a path that must be one; `None` without it.
fn is_mountpoint(s: &Section, path: &Path) -> Option<PathBuf> {
    let value = s.get("is_mountpoint")?;
    match value.to_ascii_lowercase().as_str() {
        "yes" | "1" | "on" | "true" => Some(path.to_path_buf()),
        "no" | "0" | "off" | "false" => None,
        _ => Some(PathBuf::from(value)),
    }
}

/// This node's name as PVE uses it: the host name up to its first dot.
pub fn node_name() -> String {
    nix::sys::utsname::uname()
        .map(|u| u.nodename().to_string_lossy().into_owned())
        .unwrap_or_default()
        .split('.')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The storages of `cfg` as `node` sees them, with `pvesm status`'s rows:
/// PVE's own types, then those of plugins PVE does not ship.
pub fn storages(cfg: &StorageCfg, status: &[StatusRow], node: &str) -> Vec<PveStorage> {
    cfg.sections
        .iter()
        .chain(&cfg.unsupported)
        .map(|section| PveStorage {
            status: status.iter().find(|r| r.id == section.id).cloned(),
            section: section.clone(),
            node: node.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pveprobe_parse::storagecfg;

    fn one(cfg: &str, status: Option<&str>) -> PveStorage {
        let parsed = storagecfg::parse(cfg).unwrap();
        let first = parsed
            .sections
            .iter()
            .chain(&parsed.unsupported)
            .next()
            .unwrap_or_else(|| panic!("{cfg}: {:?}", parsed.warnings));
        let rows: Vec<StatusRow> = status
            .map(|st| {
                vec![StatusRow {
                    id: first.id.clone(),
                    kind: first.kind.clone(),
                    status: st.into(),
                    total_bytes: Some(100 << 30),
                    used_bytes: Some(0),
                    avail_bytes: Some(100 << 30),
                }]
            })
            .unwrap_or_default();
        storages(&parsed, &rows, "pve1").remove(0)
    }

    #[test]
    fn a_default_install_measures_local_in_place_and_local_lvm_through_a_volume() {
        let local = one(
            "dir: local\n\tpath /var/lib/vz\n\tcontent iso,vztmpl,backup\n",
            Some("active"),
        );
        assert_eq!(
            local.approach(),
            Approach::Path {
                path: "/var/lib/vz".into(),
                mount_point: None
            }
        );
        assert!(!local.shared() && local.unavailable().is_none());
        let thin = one(
            "lvmthin: local-lvm\n\tthinpool data\n\tvgname pve\n\tcontent rootdir,images\n",
            Some("active"),
        );
        assert_eq!(thin.approach(), Approach::Volume { activate: false });
    }

    #[test]
    fn mount_points_paths_and_network_storages() {
        let nfs = one(
            "nfs: nas\n\texport /export\n\tpath /mnt/pve/nas\n\tserver 10.0.0.1\n\tcontent images\n",
            Some("active"),
        );
        assert_eq!(
            nfs.approach(),
            Approach::Path {
                path: "/mnt/pve/nas".into(),
                mount_point: Some("/mnt/pve/nas".into())
            }
        );
        assert!(nfs.shared());
        let yes = one(
            "dir: usb\n\tpath /mnt/usb\n\tis_mountpoint yes\n\tcontent backup\n",
            None,
        );
        assert_eq!(
            yes.approach(),
            Approach::Path {
                path: "/mnt/usb".into(),
                mount_point: Some("/mnt/usb".into())
            }
        );
        let other = one(
            "dir: sub\n\tpath /mnt/data/pve\n\tis_mountpoint /mnt/data\n",
            None,
        );
        assert!(matches!(
            other.approach(),
            Approach::Path { mount_point: Some(m), .. } if m == Path::new("/mnt/data")
        ));
    }

    #[test]
    fn volumes_need_images_and_rbd_and_shared_lvm_need_activation() {
        let rbd = one("rbd: ceph\n\tpool rbd\n\tcontent images\n\tkrbd 1\n", None);
        assert_eq!(rbd.approach(), Approach::Volume { activate: true });
        let shared = one(
            "lvm: san\n\tvgname san\n\tshared 1\n\tcontent images\n",
            None,
        );
        assert_eq!(shared.approach(), Approach::Volume { activate: true });
        assert!(shared.shared());
        let ct_only = one(
            "lvmthin: ct\n\tthinpool tp\n\tvgname vg\n\tcontent rootdir\n",
            None,
        );
        assert!(matches!(ct_only.approach(), Approach::Skip(why) if why.contains("no images")));
        let zfs_ct = one("zfspool: ctzfs\n\tpool rpool/ct\n\tcontent rootdir\n", None);
        assert_eq!(
            zfs_ct.approach(),
            Approach::Path {
                path: "/rpool/ct".into(),
                mount_point: None
            }
        );
        let zfs = one(
            "zfspool: local-zfs\n\tpool rpool/data\n\tcontent images,rootdir\n",
            None,
        );
        assert_eq!(zfs.approach(), Approach::Volume { activate: false });
    }

    #[test]
    fn storages_that_take_no_scratch_volume_say_why() {
        for (cfg, words) in [
            (
                "iscsi: san\n\tportal 10.0.0.1\n\ttarget iqn.x\n",
                "LUNs are fixed",
            ),
            (
                "iscsidirect: di\n\tportal 10.0.0.1\n\ttarget iqn.x\n",
                "libiscsi",
            ),
            (
                "zfs: zi\n\tpool tank\n\tblocksize 4k\n\tiscsiprovider lio\n\tportal 10.0.0.1\n\ttarget iqn.x\n",
                "ZFS over iSCSI",
            ),
            (
                "pbs: backup\n\tserver 10.0.0.2\n\tdatastore ds\n",
                "Backup Server",
            ),
            ("esxi: esx\n\tserver 10.0.0.3\n\tusername root\n", "ESXi"),
            ("weird: ww\n\tpath /x\n", "does not know storage type weird"),
        ] {
            match one(cfg, None).approach() {
                Approach::Skip(why) => assert!(why.contains(words), "{why}"),
                other => panic!("{cfg}: {other:?}"),
            }
        }
    }

    #[test]
    fn disabled_other_nodes_and_inactive_storages_are_unavailable() {
        let off = one("dir: dd\n\tpath /x\n\tdisable\n", Some("disabled"));
        assert_eq!(off.unavailable().unwrap(), "disabled in storage.cfg");
        let elsewhere = one("dir: dd\n\tpath /x\n\tnodes pve2,pve3\n", Some("active"));
        assert!(
            elsewhere
                .unavailable()
                .unwrap()
                .contains("not on this node (pve1)")
        );
        let here = one("dir: dd\n\tpath /x\n\tnodes pve2,pve1\n", Some("active"));
        assert_eq!(here.unavailable(), None);
        let inactive = one(
            "nfs: nn\n\tserver s\n\texport /e\n\tpath /mnt/pve/nn\n",
            Some("inactive"),
        );
        assert_eq!(
            inactive.unavailable().unwrap(),
            "pvesm status says inactive"
        );
        assert_eq!(one("dir: dd\n\tpath /x\n", None).active(), None);
    }
}
