//! Whether a device is in use, checked before `qualify` writes a byte:
//! signatures on it or its partitions (libblkid's low-level probe, through
//! `wipefs --no-act --json`), mounts, swap, holders (device-mapper, md,
//! bcache), imported ZFS pools, LVM physical volumes, PVE storages that
//! name it, the disks below `/`, `/boot` and the EFI partition, any process
//! that holds it open ([`super::openers`]) and any guest whose config names
//! it ([`super::guests`]). Every
//! check runs; each finding names its device and what showed it. A check
//! that cannot run is a finding too: what was not seen is not known free.

use std::path::{Path, PathBuf};

use super::guests;
use super::openers::{self, HostProcs, Procs};
use super::target::Target;
use crate::blockstack::sysfs;
use crate::model::qualify::Finding;
use crate::sys::child::{self, ChildOptions, Finished, ToolFailure};
use crate::sys::host::Host;
use pveprobe_parse::inuse::{self, Signature};
use pveprobe_parse::mountinfo::{self, MountEntry};
use pveprobe_parse::storagecfg;

/// The tools the checks ask: libblkid's probe, zpool and LVM.
pub trait Tools {
    /// The signatures on `node` (`/dev/NAME`).
    fn signatures(&self, node: &Path) -> Result<Vec<Signature>, String>;
    /// `zpool status -P -L`; `Ok(None)` when ZFS is not installed.
    fn zpool_status(&self) -> Result<Option<String>, String>;
    /// `pvs`'s PVs and groups; `Ok(None)` when LVM is not installed.
    fn pvs(&self) -> Result<Option<String>, String>;
}

/// The real tools, found on PATH, run through `sys::child` (fixed
/// arguments, the C locale, a time limit, an output cap).
pub struct RealTools;

/// How each tool is run: the C locale, ten seconds at most.
fn opts() -> ChildOptions<'static> {
    ChildOptions::limit(std::time::Duration::from_secs(10)).env(&[("LC_ALL", "C")])
}

/// A tool's output; `Ok(None)` when it is not installed.
fn optional(tool: &str, ran: Result<Finished, ToolFailure>) -> Result<Option<String>, String> {
    match ran {
        Ok(done) => Ok(Some(done.stdout_text())),
        Err(ToolFailure::NotStarted { missing: true, .. }) => Ok(None),
        Err(e) => Err(format!("{tool} failed: {e}")),
    }
}

impl Tools for RealTools {
    fn signatures(&self, node: &Path) -> Result<Vec<Signature>, String> {
        let node = node.to_str().ok_or("a device name that is not UTF-8")?;
        let ran = child::run("wipefs", &["--no-act", "--json", node], &opts());
        let text = optional("wipefs", ran)?
            .ok_or("wipefs is not installed (package util-linux); cannot look for signatures")?;
        inuse::wipefs_signatures(&text).map_err(|e| format!("wipefs printed what is not JSON: {e}"))
    }

    fn zpool_status(&self) -> Result<Option<String>, String> {
        optional(
            "zpool",
            child::run("zpool", &["status", "-P", "-L"], &opts()),
        )
    }

    fn pvs(&self) -> Result<Option<String>, String> {
        let args = ["--noheadings", "--separator", "|", "-o", "pv_name,vg_name"];
        optional("pvs", child::run("pvs", &args, &opts()))
    }
}

/// What the checks found, and what they looked at (shown before the
/// confirmation and by `--dry-run`).
#[derive(Debug, Clone, Default)]
pub struct Checked {
    pub findings: Vec<Finding>,
    pub looked_at: Vec<String>,
}

impl Checked {
    fn found(&mut self, device: &str, what: impl Into<String>) {
        self.findings.push(Finding {
            device: device.to_string(),
            what: what.into(),
        });
    }
}

/// Mount points whose disks are never written.
pub const SYSTEM_MOUNTS: [&str; 4] = ["/", "/boot", "/boot/efi", "/efi"];

/// Every check of `target`, with `/etc/pve` at `pve_config`.
pub fn check(host: &Host, target: &Target, tools: &dyn Tools, pve_config: &Path) -> Checked {
    let mut c = Checked::default();
    let names = target.names();
    signatures(target, tools, &mut c);
    let mounts = host
        .read("/proc/self/mountinfo")
        .map(|t| mountinfo::parse(&t))
        .unwrap_or_default();
    mounted(host, target, &names, &mounts, &mut c);
    swap(host, &names, &mut c);
    holders(host, &names, &mut c);
    let pools = zfs(host, &names, tools, &mut c);
    let groups = lvm(host, &names, tools, &mut c);
    pve_storages(host, &names, &pools, &groups, pve_config, &mut c);
    system_disks(host, target, &mounts, &mut c);
    held_open(host, &names, &HostProcs(host), &mut c);
    guests(host, &names, pve_config, &mut c);
    c
}

/// How many processes whose open files were not seen a finding names.
const UNSEEN_NAMED: usize = 3;

/// Any process (but qualify and its children) that has the device or a
/// partition open: a VM's QEMU opens a passed-through disk without O_EXCL.
fn held_open(host: &Host, names: &[String], procs: &dyn Procs, c: &mut Checked) {
    c.looked_at.push(
        "processes holding it or a partition open (every /proc/PID/fd, by device number, as fuser, looked at again 0.2 s later while held, up to 5 times, so a scanner's moment such as pvs's is not taken for a holder): a VM's QEMU, a container, any program".into(),
    );
    let devices: Vec<(String, u64)> = names
        .iter()
        .filter_map(|n| {
            let dev = host.read_value(format!("{}/{n}/dev", sysfs::SYS_CLASS_BLOCK))?;
            let (major, minor) = dev.split_once(':')?;
            Some((
                n.clone(),
                libc::makedev(major.parse().ok()?, minor.parse().ok()?),
            ))
        })
        .collect();
    let found = openers::scan_settled(
        procs,
        &devices,
        std::process::id(),
        openers::LOOKS,
        openers::LOOK_PAUSE,
    );
    for (name, what) in found.held {
        c.found(&name, what);
    }
    if !found.unseen.is_empty() {
        let mut named = found.unseen[..found.unseen.len().min(UNSEEN_NAMED)].join("; ");
        if found.unseen.len() > UNSEEN_NAMED {
            named.push_str(&format!("; {} more", found.unseen.len() - UNSEEN_NAMED));
        }
        c.found(
            &names[0],
            format!("open files not seen ({named}): what was not seen is not known to be free"),
        );
    }
}

/// Any VM or container of the cluster whose config names it.
fn guests(host: &Host, names: &[String], pve_config: &Path, c: &mut Checked) {
    c.looked_at.push(format!(
        "guests naming it or a partition, on every node ({}/nodes/*/qemu-server/*.conf, nodes/*/lxc/*.conf, snapshots and pending changes too)",
        pve_config.display()
    ));
    let (found, unread) = guests::named_by_guests(host, names, pve_config);
    for (name, what) in found {
        c.found(&name, what);
    }
    for why in unread {
        c.found(&names[0], format!("guest config not read: {why}"));
    }
}

fn signatures(target: &Target, tools: &dyn Tools, c: &mut Checked) {
    c.looked_at.push(format!(
        "signatures (wipefs --no-act: libblkid's partition tables, filesystems, swap, LVM, LUKS, RAID, ZFS, Ceph, bcache) on {}",
        target.names().join(", ")
    ));
    for name in target.names() {
        let node = PathBuf::from("/dev").join(&name);
        match tools.signatures(&node) {
            Ok(sigs) => {
                for s in sigs {
                    let label = s
                        .label
                        .as_deref()
                        .filter(|l| !l.is_empty())
                        .map(|l| format!(", label {l:?}"))
                        .unwrap_or_default();
                    c.found(
                        &name,
                        format!(
                            "{} signature at offset {}{label} (wipefs)",
                            s.kind, s.offset
                        ),
                    );
                }
            }
            Err(why) => c.found(&name, format!("signatures not checked: {why}")),
        }
    }
}

/// The kernel name of a device path (a /dev node, a by-id link).
fn name_of(host: &Host, path: &str) -> Option<String> {
    sysfs::name_of_dev_path(host, path)
}

fn mounted(host: &Host, target: &Target, names: &[String], mounts: &[MountEntry], c: &mut Checked) {
    c.looked_at
        .push("mounts (/proc/self/mountinfo), by device number and source".into());
    let devs: Vec<String> = names
        .iter()
        .filter_map(|n| host.read_value(format!("{}/{n}/dev", sysfs::SYS_CLASS_BLOCK)))
        .chain(std::iter::once(target.device.dev.clone()))
        .collect();
    for m in mounts {
        let by_number = devs.contains(&format!("{}:{}", m.major, m.minor));
        let by_source = m.source.starts_with("/dev/")
            && name_of(host, &m.source).is_some_and(|n| names.contains(&n));
        if by_number || by_source {
            let which = name_of(host, &m.source)
                .filter(|n| names.contains(n))
                .unwrap_or_else(|| target.device.name.clone());
            c.found(
                &which,
                format!("mounted on {} ({})", m.mount_point.display(), m.fstype),
            );
        }
    }
}

fn swap(host: &Host, names: &[String], c: &mut Checked) {
    c.looked_at.push("swap (/proc/swaps)".into());
    let text = host.read("/proc/swaps").unwrap_or_default();
    for area in inuse::swaps(&text) {
        if let Some(n) = name_of(host, &area).filter(|n| names.contains(n)) {
            c.found(&n, "used as swap (/proc/swaps)");
        }
    }
}

fn holders(host: &Host, names: &[String], c: &mut Checked) {
    c.looked_at
        .push("holders (/sys/class/block/*/holders: device-mapper, md, bcache)".into());
    for n in names {
        for h in host.list(format!("{}/{n}/holders", sysfs::SYS_CLASS_BLOCK)) {
            let dm = host.read_value(format!("{}/{h}/dm/name", sysfs::SYS_CLASS_BLOCK));
            let what = match dm {
                Some(dm) => format!("held by {h} (device-mapper {dm})"),
                None if h.starts_with("md") => format!("held by {h} (md RAID)"),
                None if h.starts_with("bcache") => format!("held by {h} (bcache)"),
                None => format!("held by {h}"),
            };
            c.found(n, what);
        }
    }
}

/// The imported pools with a device among `names`.
fn zfs(host: &Host, names: &[String], tools: &dyn Tools, c: &mut Checked) -> Vec<String> {
    c.looked_at
        .push("imported ZFS pools (zpool status -P -L)".into());
    let mut pools = Vec::new();
    match tools.zpool_status() {
        Ok(None) => {}
        Ok(Some(text)) => {
            for (pool, path) in inuse::zpool_devices(&text) {
                if let Some(n) = name_of(host, &path).filter(|n| names.contains(n)) {
                    c.found(
                        &n,
                        format!("part of imported ZFS pool {pool} (zpool status)"),
                    );
                    pools.push(pool);
                }
            }
        }
        Err(why) => c.found(names[0].as_str(), format!("ZFS pools not checked: {why}")),
    }
    pools
}

/// The volume groups with a PV among `names`.
fn lvm(host: &Host, names: &[String], tools: &dyn Tools, c: &mut Checked) -> Vec<String> {
    c.looked_at.push("LVM physical volumes (pvs)".into());
    let mut groups = Vec::new();
    match tools.pvs() {
        Ok(None) => {}
        Ok(Some(text)) => {
            for (pv, vg) in inuse::pvs(&text) {
                if let Some(n) = name_of(host, &pv).filter(|n| names.contains(n)) {
                    if vg.is_empty() {
                        c.found(&n, "an LVM physical volume (pvs)");
                    } else {
                        c.found(&n, format!("a physical volume of volume group {vg} (pvs)"));
                        groups.push(vg);
                    }
                }
            }
        }
        Err(why) => c.found(names[0].as_str(), format!("LVM not checked: {why}")),
    }
    groups
}

fn pve_storages(
    host: &Host,
    names: &[String],
    pools: &[String],
    groups: &[String],
    pve_config: &Path,
    c: &mut Checked,
) {
    let file = pve_config.join("storage.cfg");
    c.looked_at
        .push(format!("PVE storages naming it ({})", file.display()));
    let text = match crate::sys::host::read_capped(&file, storagecfg::MAX_BYTES as u64 + 1) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            let why = crate::error::describe(&e);
            return c.found(&names[0], format!("{} not read: {why}", file.display()));
        }
    };
    let cfg = match storagecfg::parse(&text) {
        Ok(cfg) => cfg,
        Err(e) => return c.found(&names[0], format!("{}: {e}", file.display())),
    };
    for s in &cfg.sections {
        for (key, value) in &s.options {
            let Some(value) = value else { continue };
            let named = value
                .split([',', ' ', ';'])
                .filter(|t| t.starts_with("/dev/"))
                .find_map(|t| name_of(host, t).filter(|n| names.contains(n)));
            let by_group = matches!(key.as_str(), "vgname") && groups.contains(value);
            let by_pool = key == "pool"
                && s.kind == "zfspool"
                && pools.iter().any(|p| value.split('/').next() == Some(p));
            if let Some(n) = named {
                c.found(&n, format!("named by PVE storage {} ({key} {value})", s.id));
            } else if by_group || by_pool {
                c.found(
                    &names[0],
                    format!("under PVE storage {} ({} {key} {value})", s.id, s.kind),
                );
            }
        }
    }
}

fn system_disks(host: &Host, target: &Target, mounts: &[MountEntry], c: &mut Checked) {
    c.looked_at
        .push("the disks below /, /boot and the EFI partition".into());
    for point in SYSTEM_MOUNTS {
        let Some(m) = mounts
            .iter()
            .rev()
            .find(|m| m.mount_point == Path::new(point))
        else {
            continue;
        };
        let Some(top) = sysfs::device_name(host, &m.source, m.major, m.minor) else {
            continue;
        };
        let mut tops = vec![top.clone()];
        if m.fstype == "btrfs" {
            let members = sysfs::btrfs_members(host, &top);
            if !members.is_empty() {
                tops = members;
            }
        }
        let stack = sysfs::resolve(host, &tops);
        let below: Vec<String> = stack
            .disks
            .iter()
            .map(|d| d.name.clone())
            .chain(tops)
            .collect();
        if below.contains(&target.disk) {
            c.found(
                &target.device.name,
                format!("{} is the disk below {point} ({})", target.disk, m.source),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each kind of finding through the [`Tools`] seam and a stand-in host
    //! (a fixture tree of `/sys` and `/proc`), without root. The same
    //! refusals on real devices are `tests/it/qualify.rs`'.

    use std::collections::BTreeMap;

    use super::*;
    use crate::model::qualify::Device;

    /// What the tools answer: signatures per node, `zpool status`, `pvs`.
    #[derive(Default)]
    struct Stand {
        signatures: BTreeMap<String, Result<Vec<Signature>, String>>,
        zpool: Option<Result<String, String>>,
        pvs: Option<Result<String, String>>,
    }

    impl Tools for Stand {
        fn signatures(&self, node: &Path) -> Result<Vec<Signature>, String> {
            let name = node.file_name().unwrap().to_string_lossy().into_owned();
            self.signatures
                .get(&name)
                .cloned()
                .unwrap_or(Ok(Vec::new()))
        }
        fn zpool_status(&self) -> Result<Option<String>, String> {
            self.zpool.clone().transpose()
        }
        fn pvs(&self) -> Result<Option<String>, String> {
            self.pvs.clone().transpose()
        }
    }

    /// A host with disk `sdb` (8:16) and its partition `sdb1` (8:17), the
    /// root filesystem on `sda` (8:0), and `extra` files below the root.
    struct Rig {
        root: tempfile::TempDir,
        pve: tempfile::TempDir,
    }

    impl Rig {
        fn new() -> Rig {
            let rig = Rig {
                root: tempfile::tempdir().unwrap(),
                pve: tempfile::tempdir().unwrap(),
            };
            for (name, dev) in [("sda", "8:0"), ("sdb", "8:16"), ("sdb1", "8:17")] {
                rig.write(&format!("sys/class/block/{name}/dev"), &format!("{dev}\n"));
            }
            rig.mounts("");
            rig.write("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
            rig
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.root.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }

        /// The root on /dev/sda, and `more` mountinfo lines.
        fn mounts(&self, more: &str) {
            self.write(
                "proc/self/mountinfo",
                &format!("22 1 8:0 / / rw,relatime shared:1 - ext4 /dev/sda rw\n{more}"),
            );
        }

        fn storage_cfg(&self, text: &str) {
            std::fs::write(self.pve.path().join("storage.cfg"), text).unwrap();
        }

        fn target() -> Target {
            Target {
                device: Device {
                    name: "sdb".into(),
                    dev: "8:16".into(),
                    ..Device::default()
                },
                node: "/dev/sdb".into(),
                dev: (8, 16),
                disk: "sdb".into(),
                partitions: vec!["sdb1".into()],
                info: Default::default(),
            }
        }

        fn check(&self, tools: &Stand) -> Checked {
            let host = Host::with_root(self.root.path());
            check(&host, &Rig::target(), tools, self.pve.path())
        }

        /// `device: what` of each finding.
        fn findings(&self, tools: &Stand) -> Vec<String> {
            self.check(tools)
                .findings
                .iter()
                .map(|f| format!("{}: {}", f.device, f.what))
                .collect()
        }
    }

    fn signature(kind: &str, offset: &str) -> Signature {
        Signature {
            device: String::new(),
            offset: offset.into(),
            kind: kind.into(),
            uuid: None,
            label: Some("data".into()),
        }
    }

    #[test]
    fn a_disk_nobody_uses_has_no_finding_and_every_check_is_listed() {
        let rig = Rig::new();
        let checked = rig.check(&Stand::default());
        assert!(checked.findings.is_empty(), "{:?}", checked.findings);
        assert_eq!(checked.looked_at.len(), 10, "{:?}", checked.looked_at);
        assert!(checked.looked_at[0].ends_with("on sdb, sdb1"));
    }

    #[test]
    fn a_signature_on_the_disk_or_a_partition_is_named_with_its_offset() {
        let rig = Rig::new();
        let mut tools = Stand::default();
        tools
            .signatures
            .insert("sdb".into(), Ok(vec![signature("gpt", "0x200")]));
        tools
            .signatures
            .insert("sdb1".into(), Ok(vec![signature("ext4", "0x438")]));
        assert_eq!(
            rig.findings(&tools),
            [
                "sdb: gpt signature at offset 0x200, label \"data\" (wipefs)",
                "sdb1: ext4 signature at offset 0x438, label \"data\" (wipefs)",
            ]
        );
    }

    #[test]
    fn a_probe_that_cannot_run_is_a_finding() {
        let rig = Rig::new();
        let mut tools = Stand::default();
        tools
            .signatures
            .insert("sdb1".into(), Err("wipefs is not installed".into()));
        tools.zpool = Some(Err("zpool timed out".into()));
        tools.pvs = Some(Err("pvs failed".into()));
        assert_eq!(
            rig.findings(&tools),
            [
                "sdb1: signatures not checked: wipefs is not installed",
                "sdb: ZFS pools not checked: zpool timed out",
                "sdb: LVM not checked: pvs failed",
            ]
        );
    }

    #[test]
    fn a_mount_by_device_number_or_by_source_is_found() {
        let rig = Rig::new();
        rig.mounts(
            "40 22 8:17 / /srv rw - xfs /dev/sdb1 rw\n41 22 0:50 / /mnt/b rw - btrfs /dev/sdb rw\n",
        );
        assert_eq!(
            rig.findings(&Stand::default()),
            [
                "sdb1: mounted on /srv (xfs)",
                "sdb: mounted on /mnt/b (btrfs)"
            ]
        );
    }

    #[test]
    fn a_swap_area_is_found() {
        let rig = Rig::new();
        rig.write(
            "proc/swaps",
            "Filename\tType\tSize\tUsed\tPriority\n/dev/sdb1 partition 1048572 0 -2\n",
        );
        assert_eq!(
            rig.findings(&Stand::default()),
            ["sdb1: used as swap (/proc/swaps)"]
        );
    }

    #[test]
    fn holders_are_named_by_kind() {
        let rig = Rig::new();
        for h in ["dm-3", "md127", "bcache0", "zram0"] {
            std::fs::create_dir_all(
                rig.root
                    .path()
                    .join(format!("sys/class/block/sdb1/holders/{h}")),
            )
            .unwrap();
        }
        rig.write("sys/class/block/dm-3/dm/name", "pve-data\n");
        let mut found = rig.findings(&Stand::default());
        found.sort();
        assert_eq!(
            found,
            [
                "sdb1: held by bcache0 (bcache)",
                "sdb1: held by dm-3 (device-mapper pve-data)",
                "sdb1: held by md127 (md RAID)",
                "sdb1: held by zram0",
            ]
        );
    }

    #[test]
    fn a_member_of_an_imported_pool_is_found() {
        let rig = Rig::new();
        let tools = Stand {
            zpool: Some(Ok("  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME         STATE\n\ttank         ONLINE\n\t  /dev/sdb1  ONLINE\n".into())),
            ..Stand::default()
        };
        assert_eq!(
            rig.findings(&tools),
            ["sdb1: part of imported ZFS pool tank (zpool status)"]
        );
    }

    #[test]
    fn a_physical_volume_with_or_without_a_group_is_found() {
        let rig = Rig::new();
        let tools = Stand {
            pvs: Some(Ok("  /dev/sdb1|pve\n  /dev/sdb|\n  /dev/sda|other\n".into())),
            ..Stand::default()
        };
        assert_eq!(
            rig.findings(&tools),
            [
                "sdb1: a physical volume of volume group pve (pvs)",
                "sdb: an LVM physical volume (pvs)",
            ]
        );
    }

    #[test]
    fn a_pve_storage_naming_it_by_path_group_or_pool_is_found() {
        let rig = Rig::new();
        rig.storage_cfg(
            "dir: local\n\tpath /var/lib/vz\n\nlvm: big\n\tvgname pve\n\nzfspool: tank\n\tpool tank/data\n\niscsi: raw\n\tportal 127.0.0.1\n\ttarget /dev/sdb1\n",
        );
        let tools = Stand {
            zpool: Some(Ok("  pool: tank\nconfig:\n\t  /dev/sdb  ONLINE\n".into())),
            pvs: Some(Ok("  /dev/sdb1|pve\n".into())),
            ..Stand::default()
        };
        let found = rig.findings(&tools);
        for want in [
            "sdb: under PVE storage big (lvm vgname pve)",
            "sdb: under PVE storage tank (zfspool pool tank/data)",
            "sdb1: named by PVE storage raw (target /dev/sdb1)",
        ] {
            assert!(found.iter().any(|f| f == want), "{want} not in {found:?}");
        }
    }

    #[test]
    fn a_storage_cfg_that_cannot_be_read_is_a_finding() {
        let rig = Rig::new();
        std::fs::create_dir(rig.pve.path().join("storage.cfg")).unwrap();
        let found = rig.findings(&Stand::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("sdb: ") && found[0].contains("storage.cfg not read"));
    }

    #[test]
    fn the_disk_below_a_system_mount_is_found() {
        let rig = Rig::new();
        rig.mounts("30 22 8:16 / /boot rw - ext4 /dev/sdb rw\n");
        assert_eq!(
            rig.findings(&Stand::default()),
            [
                "sdb: mounted on /boot (ext4)",
                "sdb: sdb is the disk below /boot (/dev/sdb)"
            ]
        );
    }
}
