//! PVE's own tool for its storages, `pvesm`: `status`, `alloc`, `path`
//! and `free`, run without a shell (each word one argument), in a process
//! group of its own so the Ctrl-C meant for the probe does not cut an
//! allocation or a free short: the probe sees the signal, lets the call
//! finish (within a time limit), and then cleans up.

use std::path::PathBuf;
use std::time::Duration;

use crate::sys::child::{self, ChildOptions};
use pveprobe_parse::pvesm::{StatusRow, parse_status};

/// The program, found on PATH as PVE installs it (/usr/sbin/pvesm).
pub const PVESM: &str = "pvesm";

/// `status` and `path` answer at once; a busy cluster file system can
/// take seconds.
const QUICK: Duration = Duration::from_secs(60);
/// `alloc` and `free`: LVM's `saferemove` zeroes a volume on free, and
/// RBD and iSCSI-backed storages can be slow.
const SLOW: Duration = Duration::from_secs(900);

/// Why a pvesm call did not do its work (PVE's tools' error, mapped at
/// each call).
pub type PvesmError = child::PveToolError;

/// What a host without pvesm lacks.
const NEEDS: &str = "--storage needs Proxmox VE's pvesm";

/// `pvesm status`: every storage of this node with its state and space.
pub fn status() -> Result<Vec<StatusRow>, PvesmError> {
    let args = ["status"];
    let done = child::run(PVESM, &args, &ChildOptions::limit(QUICK).own_group())
        .map_err(|f| PvesmError::of(PVESM, &args, QUICK, NEEDS, f))?;
    Ok(parse_status(&String::from_utf8_lossy(&done.stdout)))
}

/// `pvesm alloc STORAGE VMID NAME SIZE`, the size in MiB with its unit
/// (pvesm takes `\d+[MG]?`; a bare number would be KiB).
pub fn alloc(storage: &str, vmid: u32, name: &str, bytes: u64) -> Result<(), PvesmError> {
    let (vmid, size) = (vmid.to_string(), size_arg(bytes));
    let args = ["alloc", storage, &vmid, name, &size];
    child::run(PVESM, &args, &ChildOptions::limit(SLOW).own_group())
        .map_err(|f| PvesmError::of(PVESM, &args, SLOW, NEEDS, f))
        .map(drop)
}

/// A size as `pvesm alloc` takes it: MiB, rounded up, with the unit.
fn size_arg(bytes: u64) -> String {
    format!("{}M", bytes.div_ceil(1 << 20))
}

/// `pvesm path VOLID`: where the volume is (a device for block storages).
pub fn path(volid: &str) -> Result<PathBuf, PvesmError> {
    let args = ["path", volid];
    let done = child::run(PVESM, &args, &ChildOptions::limit(QUICK).own_group())
        .map_err(|f| PvesmError::of(PVESM, &args, QUICK, NEEDS, f))?;
    let text = String::from_utf8_lossy(&done.stdout);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    line.map(PathBuf::from).ok_or_else(|| PvesmError::Failed {
        command: format!("{PVESM} path {volid}"),
        status: done.status_words(),
        message: "it printed no path".into(),
    })
}

/// `pvesm free VOLID`.
pub fn free(volid: &str) -> Result<(), PvesmError> {
    let args = ["free", volid];
    child::run(PVESM, &args, &ChildOptions::limit(SLOW).own_group())
        .map_err(|f| PvesmError::of(PVESM, &args, SLOW, NEEDS, f))
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_go_in_kib_with_their_unit() {
        assert_eq!(size_arg(4 << 30), "4096M");
        assert_eq!(size_arg((1 << 20) + 1), "2M", "rounded up, never short");
    }
}
