//! What a move costs: each node's largest running VMs (their memory and
//! local disks, from their configs in /etc/pve) and the time each would
//! take to migrate over the migration link, each way that was measured:
//! at the secure figure, at the insecure one, and at the link's own TCP
//! figure. The memory counts once: a busy VM's memory changes while it
//! moves and is sent again, and that rate is not guessed. Local disks
//! (storage migration, `--with-local-disks`) always go through ssh, so
//! they count at the secure figure in both.

use std::path::Path;

use super::report::PairResult;
use crate::model::net::{Move, Way, mib_per_s};
use pveprobe_parse::storagecfg::StorageCfg;
use pveprobe_parse::vmconf::{self, VmConfig};

/// The largest VMs of each node that are estimated.
pub const PER_NODE: usize = 3;

/// A running VM's size as its config gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct VmSize {
    pub vmid: u32,
    pub name: Option<String>,
    pub memory_mib: u64,
    pub local_disk_bytes: u64,
}

/// `vm`'s memory (qemu-server's default when unset) and the size of its
/// disks on storages that `storage` does not mark shared (a disk on a
/// storage it does not know counts as local: a storage migration would
/// have to move it).
pub fn size_of(vmid: u32, vm: &VmConfig, storage: Option<&StorageCfg>) -> VmSize {
    let local = |store: &str| {
        storage
            .and_then(|s| s.sections.iter().find(|x| x.id == store))
            .is_none_or(|x| !x.is_shared())
    };
    let local_disk_bytes = vm
        .disks()
        .filter(|d| d.storage().is_none_or(local))
        .filter_map(|d| d.size_bytes())
        .sum();
    VmSize {
        vmid,
        name: vm.name.clone(),
        memory_mib: vm.memory_mib.unwrap_or(vmconf::DEFAULT_MEMORY_MIB),
        local_disk_bytes,
    }
}

/// A node's running VMs with a config under `pve/nodes/NODE/qemu-server`,
/// largest first (memory and local disks), [`PER_NODE`] of them.
pub fn largest(
    pve: &Path,
    node: &str,
    running: &[u32],
    storage: Option<&StorageCfg>,
) -> Vec<VmSize> {
    let dir = pve.join("nodes").join(node).join("qemu-server");
    let mut sizes: Vec<VmSize> = running
        .iter()
        .filter_map(|&vmid| {
            let path = dir.join(format!("{vmid}.conf"));
            let text =
                crate::sys::host::read_capped(&path, crate::sys::host::MAX_HOST_FILE).ok()?;
            Some(size_of(vmid, &vmconf::parse(&text), storage))
        })
        .collect();
    sizes.sort_by_key(|s| std::cmp::Reverse(s.memory_mib * (1 << 20) + s.local_disk_bytes));
    sizes.truncate(PER_NODE);
    sizes
}

/// Each VM of `vms` (node, its largest) moving over each measured pair
/// of the migration link, from its node to the other.
pub fn estimate(vms: &[(String, Vec<VmSize>)], pairs: &[PairResult]) -> Vec<Move> {
    let mut out = Vec::new();
    for p in pairs.iter().filter(|p| !p.secure.is_empty()) {
        for way in [Way::Forward, Way::Back] {
            let (from, to) = p.ends(way);
            let Some((_, sizes)) = vms.iter().find(|(n, _)| n == from) else {
                continue;
            };
            let secure = p.secure_way(way).map(|s| s.mib_per_s);
            let insecure = p.insecure_mib(way);
            let link = p
                .tcp(way, false)
                .or_else(|| p.tcp(way, true))
                .map(|t| mib_per_s(t.mbit_per_s));
            for vm in sizes {
                let memory = vm.memory_mib as f64;
                let disks = vm.local_disk_bytes as f64 / f64::from(1u32 << 20);
                let at = |ram: Option<f64>, disk: Option<f64>| -> Option<f64> {
                    let ram = ram.filter(|r| *r > 0.0)?;
                    let disk_s = if disks > 0.0 {
                        disks / disk.filter(|d| *d > 0.0)?
                    } else {
                        0.0
                    };
                    Some(memory / ram + disk_s)
                };
                out.push(Move {
                    vmid: vm.vmid,
                    name: vm.name.clone(),
                    from: from.to_string(),
                    to: to.to_string(),
                    link: p.link.clone(),
                    memory_mib: vm.memory_mib,
                    local_disk_bytes: vm.local_disk_bytes,
                    secure_seconds: at(secure, secure),
                    insecure_seconds: at(insecure, secure),
                    link_seconds: at(link, link),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::commands::net::report::tests::{migration_pair, one_stream, secure_stream};

    #[test]
    fn memory_and_local_disks_come_from_the_config_and_storage_cfg() {
        let storage = pveprobe_parse::storagecfg::parse(
            "dir: local\n\tpath /var/lib/vz\n\tcontent images\n\nrbd: ceph\n\tpool vms\n\tcontent images\n",
        )
        .unwrap();
        let vm = vmconf::parse(
            "name: db1\nmemory: 16384\nscsi0: local:100/vm-100-disk-0.qcow2,size=64G\nscsi1: ceph:vm-100-disk-1,size=100G\nide2: none,media=cdrom\n",
        );
        let size = size_of(100, &vm, Some(&storage));
        assert_eq!(size.memory_mib, 16384);
        assert_eq!(size.local_disk_bytes, 64 << 30);
        // No memory line: qemu-server's 512 MiB.
        assert_eq!(
            size_of(101, &vmconf::parse("cores: 2\n"), None).memory_mib,
            512
        );
    }

    #[test]
    fn memory_counts_once_and_local_disks_always_at_the_secure_figure() {
        let mut p = migration_pair();
        // Insecure 8,388.608 Mbit/s = 1,000 MiB/s; secure 250 MiB/s.
        p.throughput.push(one_stream(Way::Forward, 8388.608));
        p.secure.push(secure_stream(Way::Forward, 250.0));
        let vms = vec![(
            "pve1".to_string(),
            vec![VmSize {
                vmid: 100,
                name: Some("db1".into()),
                memory_mib: 16000,
                local_disk_bytes: 10000 << 20,
            }],
        )];
        let moves = estimate(&vms, &[p]);
        // Only pve1's VM, only pve1->pve2 (the way measured from it).
        assert_eq!(moves.len(), 1, "{moves:?}");
        let m = &moves[0];
        assert_eq!((m.from.as_str(), m.to.as_str()), ("pve1", "pve2"));
        // Secure: (16,000 + 10,000) / 250; insecure: 16,000 / 1,000 + 10,000 / 250.
        assert_eq!(m.secure_seconds, Some(104.0));
        assert!((m.insecure_seconds.unwrap() - 56.0).abs() < 1e-6);
        // The link's figure: one stream, all of it.
        assert!((m.link_seconds.unwrap() - 26.0).abs() < 1e-6);
    }
}
