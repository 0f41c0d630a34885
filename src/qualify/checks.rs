//! Whether a device is in use, checked before `qualify` writes a byte:
//! signatures on it or its partitions (libblkid's low-level probe, through
//! `wipefs --no-act --json`), mounts, swap, holders (device-mapper, md,
//! bcache), imported ZFS pools, LVM physical volumes, PVE storages that
//! name it, and the disks below `/`, `/boot` and the EFI partition. Every
//! check runs; each finding names its device and what showed it. A check
//! that cannot run is a finding too: what was not seen is not known free.

use std::path::{Path, PathBuf};

use super::target::Target;
use crate::blockstack::sysfs;
use crate::blockstack::zfs::{ZfsError, run_tool};
use crate::model::qualify::Finding;
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

/// The real tools, found on PATH, through the child helper (fixed
/// arguments, a time limit, an output cap).
pub struct RealTools;

fn optional(result: Result<String, ZfsError>) -> Result<Option<String>, String> {
    match result {
        Ok(text) => Ok(Some(text)),
        Err(ZfsError::Missing(_)) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

impl Tools for RealTools {
    fn signatures(&self, node: &Path) -> Result<Vec<Signature>, String> {
        let node = node.to_str().ok_or("a device name that is not UTF-8")?;
        let text = run_tool("wipefs", &["--no-act", "--json", node]).map_err(|e| match e {
            ZfsError::Missing(_) => {
                "wipefs is not installed (package util-linux); cannot look for signatures"
                    .to_string()
            }
            e => e.to_string(),
        })?;
        inuse::wipefs_signatures(&text).map_err(|e| format!("wipefs printed what is not JSON: {e}"))
    }

    fn zpool_status(&self) -> Result<Option<String>, String> {
        optional(run_tool("zpool", &["status", "-P", "-L"]))
    }

    fn pvs(&self) -> Result<Option<String>, String> {
        optional(run_tool(
            "pvs",
            &["--noheadings", "--separator", "|", "-o", "pv_name,vg_name"],
        ))
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
    c
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
