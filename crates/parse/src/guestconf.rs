//! The paths a Proxmox VE guest's config hands the guest: a VM's
//! (`qemu-server/VMID.conf`) and a container's (`lxc/CTID.conf`) drive and
//! mount-point keys, in the current config, every snapshot section and the
//! `[PENDING]` one.
//!
//! A drive string is read by PVE's rules (`PVE/QemuServer/Drive.pm`,
//! `PVE/LXC/Config.pm`): comma-separated parts, the first part without a
//! `=` is the default key (`file` for a VM's drive, `volume` for a
//! container's mount point), and `file=`/`volume=` name it explicitly.
//! Only absolute paths are kept: a storage's volume (`local-lvm:vm-100-...`)
//! names no device by itself.

/// Whose config it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestKind {
    Vm,
    Container,
}

/// Where in the config a key stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Section {
    /// The config the guest runs with.
    Current,
    /// A snapshot's section, `[NAME]`.
    Snapshot(String),
    /// `[PENDING]`: changes applied at the next start.
    Pending,
}

/// A path a key hands the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestPath {
    /// `scsi1`, `mp0`, `lxc.mount.entry`.
    pub key: String,
    /// The path as written: `/dev/disk/by-id/ata-...`.
    pub path: String,
    pub section: Section,
}

/// The largest config read: PVE's own limit for a guest config (pmxcfs
/// files are at most 1 MiB).
pub const MAX_BYTES: usize = 1 << 20;

/// Whether `key` hands a VM a drive: `ide0`, `sata3`, `scsi12`,
/// `virtio1`, `efidisk0`, `tpmstate0`, `unused4`.
fn vm_drive_key(key: &str) -> bool {
    [
        "ide", "sata", "scsi", "virtio", "efidisk", "tpmstate", "unused",
    ]
    .iter()
    .any(|prefix| numbered(key, prefix))
}

/// Whether `key` hands a container a volume or a device: `rootfs`, `mp0`,
/// `unused1`, `dev0` (device passthrough).
fn ct_volume_key(key: &str) -> bool {
    key == "rootfs"
        || ["mp", "unused", "dev"]
            .iter()
            .any(|prefix| numbered(key, prefix))
}

/// `prefix` followed by one or more digits.
fn numbered(key: &str, prefix: &str) -> bool {
    key.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The volume of a drive or mount-point string: the first part without a
/// `=`, or the part `default=` names.
fn volume<'a>(value: &'a str, default: &str) -> Option<&'a str> {
    let mut parts = value.split(',').map(str::trim);
    let first = parts.next()?;
    if !first.contains('=') {
        return Some(first);
    }
    std::iter::once(first)
        .chain(parts)
        .find_map(|p| p.strip_prefix(default)?.strip_prefix('='))
}

/// The `/dev/` paths among the words of a VM's `args:` (QEMU's own
/// options, such as `-drive file=/dev/sdb,if=virtio`).
fn dev_words(value: &str) -> impl Iterator<Item = &str> {
    value
        .split([' ', '\t', ',', '='])
        .filter(|w| w.starts_with("/dev/"))
}

/// Every absolute path `text` (a guest config) hands its guest.
pub fn guest_paths(text: &str, kind: GuestKind) -> Vec<GuestPath> {
    let mut out = Vec::new();
    let mut section = Section::Current;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = match name {
                "PENDING" => Section::Pending,
                name => Section::Snapshot(name.to_string()),
            };
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let push = |path: &str| {
            if path.starts_with('/') {
                out.push(GuestPath {
                    key: key.to_string(),
                    path: path.to_string(),
                    section: section.clone(),
                });
            }
        };
        match kind {
            GuestKind::Vm if vm_drive_key(key) => volume(value, "file").into_iter().for_each(push),
            GuestKind::Vm if key == "args" => dev_words(value).for_each(push),
            GuestKind::Container if ct_volume_key(key) => {
                // A device passthrough (`dev0: /dev/sdb1,gid=...`) is `path`.
                let default = if key.starts_with("dev") {
                    "path"
                } else {
                    "volume"
                };
                volume(value, default).into_iter().for_each(push)
            }
            // A raw LXC key: `lxc.mount.entry: /dev/sdc1 mnt/data none bind`.
            GuestKind::Container if key == "lxc.mount.entry" => {
                value.split_whitespace().next().into_iter().for_each(push)
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str, kind: GuestKind) -> Vec<(String, String, Section)> {
        guest_paths(text, kind)
            .into_iter()
            .map(|p| (p.key, p.path, p.section))
            .collect()
    }

    fn current(key: &str, path: &str) -> (String, String, Section) {
        (key.into(), path.into(), Section::Current)
    }

    #[test]
    fn a_vms_drives_by_path_in_every_section() {
        let text = crate::testutil::fixture("pve/guest-conf", "qemu-server-passthrough.conf");
        assert_eq!(
            paths(&text, GuestKind::Vm),
            [
                current("args", "/dev/sdd"),
                current("sata2", "/dev/sdc"),
                current("scsi1", "/dev/disk/by-id/ata-ST4000VN008-2DR166_ZDH5ABCD"),
                current("unused0", "/dev/disk/by-id/wwn-0x5000c500abcdef01"),
                (
                    "scsi2".into(),
                    "/dev/disk/by-id/nvme-Samsung_SSD_980_1TB_S64ANS0R123456".into(),
                    Section::Snapshot("before-upgrade".into())
                ),
                (
                    "virtio1".into(),
                    "/dev/disk/by-path/pci-0000:01:00.0-ata-3".into(),
                    Section::Pending
                ),
            ]
        );
    }

    #[test]
    fn a_containers_mount_points_and_devices() {
        let text = crate::testutil::fixture("pve/guest-conf", "lxc-passthrough.conf");
        assert_eq!(
            paths(&text, GuestKind::Container),
            [
                current("dev0", "/dev/sde"),
                current("lxc.mount.entry", "/dev/sdf1"),
                current("mp0", "/dev/sdb1"),
                current(
                    "mp1",
                    "/dev/disk/by-uuid/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
                ),
                (
                    "mp2".into(),
                    "/dev/disk/by-partuuid/12345678-01".into(),
                    Section::Snapshot("daily".into())
                ),
            ]
        );
    }

    #[test]
    fn every_fixture_is_read() {
        assert_eq!(
            crate::testutil::fixture_names("pve/guest-conf"),
            ["lxc-passthrough.conf", "qemu-server-passthrough.conf"]
        );
    }

    #[test]
    fn drive_strings_follow_pves_rules() {
        assert_eq!(volume("/dev/sdb,size=1G", "file"), Some("/dev/sdb"));
        assert_eq!(volume("media=disk,file=/dev/sdb", "file"), Some("/dev/sdb"));
        assert_eq!(
            volume("mp=/data,volume=/dev/sdb1", "volume"),
            Some("/dev/sdb1")
        );
        assert_eq!(volume("size=1G", "file"), None);
        assert_eq!(volume("", "file"), Some(""));
        // A storage's volume and a CD drive name no path.
        let vm = "scsi0: local-lvm:vm-100-disk-0,size=32G\nide2: none,media=cdrom\nnet0: virtio=AA:BB,bridge=vmbr0\nscsi11: /dev/sdg\nscsi: /dev/sdh\nscsix1: /dev/sdi\n";
        assert_eq!(paths(vm, GuestKind::Vm), [current("scsi11", "/dev/sdg")]);
        // A VM's keys are not a container's.
        assert!(paths("mp0: /dev/sdb1,mp=/x\n", GuestKind::Vm).is_empty());
        assert!(paths("scsi0: /dev/sdb\n", GuestKind::Container).is_empty());
    }
}
