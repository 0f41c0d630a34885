//! HD SIZE as data: the filesystem that holds PATH, as `df -P PATH` and
//! mountinfo describe it (see `probe::filesystem` for how it is read).

use std::path::{Path, PathBuf};

/// The `fstype` of a `--storage` scratch volume's device, which has none.
pub const VOLUME: &str = "volume";

/// The filesystem behind PATH.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FsInfo {
    /// Total size in bytes (f_blocks × f_frsize), what df's 1K-blocks column counts.
    pub total_bytes: u64,
    /// Space available to unprivileged users (f_bavail × f_frsize).
    pub avail_bytes: u64,
    /// df's "Filesystem" column: `/dev/mapper/pve-root`, `rpool/data`, `tmpfs`.
    pub source: String,
    pub fstype: String,
    pub mount_point: PathBuf,
    pub read_only: bool,
    /// The mount's device number (major, minor) from mountinfo; (0, n) for
    /// filesystems without a block device of their own (ZFS, btrfs, tmpfs).
    pub dev: (u32, u32),
    /// The mount's options, then its superblock's (mountinfo), comma-separated:
    /// `rw,relatime,errors=remount-ro,data=ordered`.
    pub options: String,
}

impl FsInfo {
    /// The size pveperf prints: df's 1024-byte blocks × 1024 / 2^30.
    pub fn size_gib(&self) -> f64 {
        (self.total_bytes / 1024) as f64 * 1024.0 / f64::from(1u32 << 30)
    }

    /// The block device to read, when the source is one (pveperf: starts with `/dev/`).
    pub fn block_device(&self) -> Option<&Path> {
        self.source
            .starts_with("/dev/")
            .then(|| Path::new(&self.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(total: u64, source: &str) -> FsInfo {
        FsInfo {
            total_bytes: total,
            avail_bytes: 0,
            source: source.into(),
            fstype: "ext4".into(),
            mount_point: "/".into(),
            read_only: false,
            dev: (8, 1),
            options: String::new(),
        }
    }

    #[test]
    fn size_is_df_kib_blocks_in_gib() {
        assert_eq!(info(100 << 30, "/dev/sda1").size_gib(), 100.0);
        // df counts whole KiB blocks: a trailing partial KiB does not count.
        assert_eq!(info((1 << 30) + 1023, "x").size_gib(), 1.0);
    }

    #[test]
    fn only_dev_sources_are_block_devices() {
        assert_eq!(
            info(1, "/dev/mapper/pve-root").block_device(),
            Some(Path::new("/dev/mapper/pve-root"))
        );
        assert_eq!(info(1, "rpool/ROOT/pve-1").block_device(), None);
        assert_eq!(info(1, "tmpfs").block_device(), None);
    }
}
