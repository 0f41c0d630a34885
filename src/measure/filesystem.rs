//! HD SIZE: the filesystem that holds PATH, its size and its source, as
//! `df -P PATH` reports them, from statvfs(2) and mountinfo.

use std::path::Path;

use nix::sys::statvfs::{FsFlags, statvfs};

use crate::error::{IoContext, ProbeError};
use crate::model::filesystem::FsInfo;
use crate::sys::host::{Host, PROC_MOUNTINFO};
use pveprobe_parse::mountinfo;

pub fn filesystem(host: &Host, path: &Path) -> Result<FsInfo, ProbeError> {
    let canonical =
        std::fs::canonicalize(path).context(|| format!("cannot resolve {}", path.display()))?;
    let vfs = statvfs(&canonical).context(|| format!("statvfs {}", canonical.display()))?;
    let text = host
        .read(PROC_MOUNTINFO)
        .context(|| format!("cannot read {PROC_MOUNTINFO}"))?;
    let mounts = mountinfo::parse(&text);
    let mount = mountinfo::mount_for(&mounts, &canonical).ok_or_else(|| {
        ProbeError::Unavailable(format!(
            "no mount in {PROC_MOUNTINFO} holds {}",
            canonical.display()
        ))
    })?;
    let frsize = vfs.fragment_size() as u64;
    Ok(FsInfo {
        total_bytes: (vfs.blocks() as u64).saturating_mul(frsize),
        avail_bytes: (vfs.blocks_available() as u64).saturating_mul(frsize),
        source: mount.source.clone(),
        fstype: mount.fstype.clone(),
        mount_point: mount.mount_point.clone(),
        read_only: vfs.flags().contains(FsFlags::ST_RDONLY) || mount.is_read_only(),
        dev: (mount.major, mount.minor),
        options: [mount.options.as_str(), mount.super_options.as_str()]
            .iter()
            .filter(|o| !o.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(","),
    })
}
