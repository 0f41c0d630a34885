//! LVM thin pools: their chunk size and whether new chunks are zeroed,
//! from `dmsetup table` (device-mapper's tables are not in sysfs). Run
//! through the child helper without a shell, the device-mapper name from
//! sysfs (`dm/name`) as one checked argument; `dmsetup table` only reads.

use super::StackTools;
use crate::model::storage::{Layer, ThinPool};

/// `dmsetup table NAME`, run as the storage tools are (`zfs::tool_opts`).
pub fn dm_table(name: &str) -> Option<String> {
    let plain = !name.is_empty()
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+' | b'.'));
    if !plain {
        return None;
    }
    crate::sys::child::run("dmsetup", &["table", name], &super::zfs::tool_opts())
        .ok()
        .map(|done| done.stdout_text())
}

/// Fills in each thin pool layer's table (LVM names a pool's hidden
/// device `VG-POOL-tpool`).
pub fn read_pools(layers: &mut [Layer], tools: &dyn StackTools) {
    for layer in layers.iter_mut().filter(|l| l.kind == "lvm") {
        let Some(name) = layer.detail.clone().filter(|d| d.ends_with("-tpool")) else {
            continue;
        };
        let Some(table) = tools.dm_table(&name) else {
            continue;
        };
        if let Some(p) = pveprobe_parse::dmtable::thin_pool(&table) {
            layer.thin_pool = Some(ThinPool {
                chunk_bytes: p.chunk_bytes,
                zeroing: p.zeroing,
                discards: if p.ignore_discard {
                    "ignored"
                } else if p.no_discard_passdown {
                    "not passed down"
                } else {
                    "passed down"
                }
                .into(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only plain device-mapper names reach dmsetup's command line.
    #[test]
    fn odd_names_are_not_asked_for() {
        for name in ["", "-x", "--help", "a b", "pve/data", "a;b", "a\nb"] {
            assert_eq!(dm_table(name), None, "{name:?}");
        }
    }
}
