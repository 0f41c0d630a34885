//! Whether a guest of the cluster names the device: every VM's and
//! container's config on every node (`nodes/*/qemu-server/*.conf`,
//! `nodes/*/lxc/*.conf` under PVE's configuration directory), with their
//! snapshot sections and pending changes. A disk handed to a guest is
//! named in no storage and mounted nowhere on the host; a VM that is
//! stopped tonight starts on it tomorrow. A path names the device when it
//! resolves to it or to one of its partitions (`/dev/disk/by-id/...`,
//! `by-path`, `by-uuid`, `by-partuuid`, `/dev/sdX`).

use std::path::Path;

use crate::blockstack::sysfs;
use crate::sys::host::{Host, read_capped};
use pveprobe_parse::guestconf::{self, GuestKind, GuestPath, Section};

/// A guest's config that names one of the device's `names`: `(name, what)`.
fn named_in(
    host: &Host,
    names: &[String],
    kind: GuestKind,
    id: &str,
    file: &str,
    text: &str,
) -> Vec<(String, String)> {
    let who = match kind {
        GuestKind::Vm => "VM",
        GuestKind::Container => "CT",
    };
    guestconf::guest_paths(text, kind)
        .into_iter()
        .filter_map(|GuestPath { key, path, section }| {
            let name = sysfs::name_of_dev_path(host, &path).filter(|n| names.contains(n))?;
            let when = match section {
                Section::Current => String::new(),
                Section::Snapshot(snap) => format!(" in snapshot {snap}"),
                Section::Pending => " in its pending changes".to_string(),
            };
            Some((
                name,
                format!("passed through to {who} {id} as {key}{when} ({file}), named {path}"),
            ))
        })
        .collect()
}

/// Every guest config under `pve_config` that names one of `names`:
/// `(name, what)`, and what could not be read.
pub fn named_by_guests(
    host: &Host,
    names: &[String],
    pve_config: &Path,
) -> (Vec<(String, String)>, Vec<String>) {
    let (mut found, mut unread) = (Vec::new(), Vec::new());
    let nodes = pve_config.join("nodes");
    let mut node_names: Vec<String> = match std::fs::read_dir(&nodes) {
        Ok(dir) => dir
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        // Not a PVE node, or a cluster file system not mounted: no guests.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (found, unread),
        Err(e) => {
            unread.push(format!(
                "{}: {}",
                nodes.display(),
                crate::error::describe(&e)
            ));
            return (found, unread);
        }
    };
    node_names.sort();
    for node in node_names {
        for (dir, kind) in [
            ("qemu-server", GuestKind::Vm),
            ("lxc", GuestKind::Container),
        ] {
            let configs = nodes.join(&node).join(dir);
            let mut files: Vec<String> = match std::fs::read_dir(&configs) {
                Ok(d) => d
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".conf"))
                    .collect(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    unread.push(format!(
                        "{}: {}",
                        configs.display(),
                        crate::error::describe(&e)
                    ));
                    continue;
                }
            };
            files.sort();
            for file in files {
                let path = configs.join(&file);
                let rel = format!("nodes/{node}/{dir}/{file}");
                let id = file.trim_end_matches(".conf");
                match read_capped(&path, guestconf::MAX_BYTES as u64 + 1) {
                    Ok(text) => found.extend(named_in(host, names, kind, id, &rel, &text)),
                    Err(e) => unread.push(format!("{rel}: {}", crate::error::describe(&e))),
                }
            }
        }
    }
    (found, unread)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host with `sdb` and `sdb1`, and a PVE config directory.
    fn rig() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        for name in ["sda", "sdb", "sdb1"] {
            std::fs::create_dir_all(root.path().join(format!("sys/class/block/{name}"))).unwrap();
        }
        (root, tempfile::tempdir().unwrap())
    }

    fn conf(pve: &Path, rel: &str, text: &str) {
        let path = pve.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn vms_and_containers_on_every_node_in_every_section() {
        let (root, pve) = rig();
        let host = Host::with_root(root.path());
        // A by-id link (made in the fixture tree) to the disk.
        let by_id = root.path().join("dev/disk/by-id");
        std::fs::create_dir_all(&by_id).unwrap();
        std::fs::create_dir_all(root.path().join("dev")).unwrap();
        std::fs::write(root.path().join("dev/sdb"), "").unwrap();
        std::os::unix::fs::symlink("../../sdb", by_id.join("ata-DISK_1")).unwrap();
        conf(
            pve.path(),
            "nodes/pve1/qemu-server/100.conf",
            "scsi0: local-lvm:vm-100-disk-0,size=8G\nscsi1: /dev/disk/by-id/ata-DISK_1,size=1G\n",
        );
        conf(
            pve.path(),
            "nodes/pve1/qemu-server/103.conf",
            "scsi1: /dev/sda\n",
        );
        conf(
            pve.path(),
            "nodes/pve2/lxc/101.conf",
            "rootfs: local-lvm:vm-101-disk-0\nmp0: /dev/sdb1,mp=/data\n",
        );
        conf(
            pve.path(),
            "nodes/pve2/qemu-server/102.conf",
            "cores: 1\n\n[before]\nsata0: /dev/sdb\n\n[PENDING]\nvirtio2: /dev/sdb1\n",
        );
        let names = vec!["sdb".to_string(), "sdb1".to_string()];
        let (found, unread) = named_by_guests(&host, &names, pve.path());
        assert!(unread.is_empty(), "{unread:?}");
        assert_eq!(
            found,
            [
                (
                    "sdb".to_string(),
                    "passed through to VM 100 as scsi1 (nodes/pve1/qemu-server/100.conf), named /dev/disk/by-id/ata-DISK_1".to_string()
                ),
                (
                    "sdb".to_string(),
                    "passed through to VM 102 as sata0 in snapshot before (nodes/pve2/qemu-server/102.conf), named /dev/sdb".to_string()
                ),
                (
                    "sdb1".to_string(),
                    "passed through to VM 102 as virtio2 in its pending changes (nodes/pve2/qemu-server/102.conf), named /dev/sdb1".to_string()
                ),
                (
                    "sdb1".to_string(),
                    "passed through to CT 101 as mp0 (nodes/pve2/lxc/101.conf), named /dev/sdb1".to_string()
                ),
            ]
        );
    }

    #[test]
    fn no_cluster_directory_is_no_guest_and_an_unreadable_config_is_said() {
        let (root, pve) = rig();
        let host = Host::with_root(root.path());
        let names = vec!["sdb".to_string()];
        assert_eq!(
            named_by_guests(&host, &names, pve.path()),
            (Vec::new(), Vec::new())
        );
        std::fs::create_dir_all(pve.path().join("nodes/pve1/qemu-server/100.conf")).unwrap();
        let (found, unread) = named_by_guests(&host, &names, pve.path());
        assert!(found.is_empty());
        assert_eq!(unread.len(), 1, "{unread:?}");
        assert!(
            unread[0].starts_with("nodes/pve1/qemu-server/100.conf: "),
            "{unread:?}"
        );
    }
}
