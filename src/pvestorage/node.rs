//! This node's PVE storage configuration, read once: storage.cfg, `pvesm
//! status` and the node's name ([`Pve`]), and PVE's own checks of a path
//! storage before anything is measured there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{PveStorage, pvesm};
use pveprobe_parse::pvesm::StatusRow;
use pveprobe_parse::storagecfg::{self, StorageCfg};

/// storage.cfg, `pvesm status` and this node's name, read once.
pub struct Pve {
    pub dir: PathBuf,
    cfg: StorageCfg,
    /// `Err`: why pvesm gave no status.
    pub status: Result<Vec<StatusRow>, String>,
    pub node: String,
    /// What storage.cfg holds that PVE would warn of, for the command to say.
    pub warnings: Vec<String>,
}

impl Pve {
    pub fn load(dir: &Path) -> Result<Pve, String> {
        let file = dir.join("storage.cfg");
        let text = crate::sys::host::read_capped(&file, storagecfg::MAX_BYTES as u64 + 1).map_err(
            |e| {
                format!(
                    "cannot read {}: {}",
                    file.display(),
                    crate::error::describe(&e)
                )
            },
        )?;
        let cfg = storagecfg::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let warnings = cfg
            .warnings
            .iter()
            .map(|w| format!("{}: {w}", file.display()))
            .collect();
        Ok(Pve {
            warnings,
            dir: dir.to_path_buf(),
            cfg,
            status: pvesm::status().map_err(|e| e.to_string()),
            node: super::node_name(),
        })
    }

    pub fn storages(&self) -> Vec<PveStorage> {
        let status = self.status.as_deref().unwrap_or_default();
        super::storages(&self.cfg, status, &self.node)
    }

    /// The VMIDs of the cluster's guests (none where there is no .vmlist).
    pub fn vmids(&self) -> Result<BTreeSet<u32>, String> {
        let file = self.dir.join(".vmlist");
        match crate::sys::host::read_capped(&file, pveprobe_parse::vmlist::MAX_BYTES as u64 + 1) {
            Ok(text) => {
                pveprobe_parse::vmlist::vmids(&text).map_err(|e| format!("{}: {e}", file.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
            Err(e) => Err(format!(
                "cannot read {}: {}",
                file.display(),
                crate::error::describe(&e)
            )),
        }
    }
}

/// PVE's own checks of a directory storage before anything is written
/// there: nothing is created, and an unmounted mount point is an inactive
/// storage (its directory would be the root filesystem's).
pub fn check_path(path: &Path, mount_point: Option<&Path>) -> Result<(), String> {
    if !path.is_dir() {
        return Err(format!(
            "its directory {} does not exist (pveprobe creates nothing there)",
            path.display()
        ));
    }
    if let Some(m) = mount_point
        && !is_mount_point(m)
    {
        return Err(format!(
            "{} is not a mount point, and this storage must be mounted there (a network storage, or is_mountpoint): PVE treats it as inactive",
            m.display()
        ));
    }
    Ok(())
}

/// Whether `path` is a mount point (a mountinfo entry mounted there).
fn is_mount_point(path: &Path) -> bool {
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    let text = crate::sys::host::Host::real()
        .read("/proc/self/mountinfo")
        .unwrap_or_default();
    pveprobe_parse::mountinfo::parse(&text)
        .iter()
        .any(|m| m.mount_point == real)
}
