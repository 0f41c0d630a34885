//! QEMU's QMP answers `top` reads: `query-blockstats` (each drive's
//! operations, bytes and the nanoseconds they took, counted by QEMU since
//! the VM started: what the guest waited for) and `query-block` (the file
//! or device behind each drive). Each takes the `return` value of one
//! answer, as text.

use serde::Deserialize;

/// One drive's counters (`BlockDeviceStats`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriveStats {
    /// PVE's drive id (`drive-scsi0`), or the device's qdev id where QEMU
    /// gives no drive name (`-blockdev`).
    pub drive: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub read_ns: u64,
    pub write_ns: u64,
    pub flush_ns: u64,
}

#[derive(Deserialize)]
struct RawEntry {
    #[serde(default)]
    device: String,
    #[serde(default)]
    qdev: String,
    stats: RawStats,
}

#[derive(Deserialize)]
struct RawStats {
    rd_bytes: u64,
    wr_bytes: u64,
    rd_operations: u64,
    wr_operations: u64,
    #[serde(default)]
    flush_operations: u64,
    #[serde(default)]
    rd_total_time_ns: u64,
    #[serde(default)]
    wr_total_time_ns: u64,
    #[serde(default)]
    flush_total_time_ns: u64,
}

/// Why an answer is not what QMP answers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("not a QMP {what} answer: {why}")]
pub struct QmpError {
    pub what: &'static str,
    pub why: String,
}

/// The drive name of an entry: `device`, else the last part of `qdev`
/// (`/machine/peripheral/scsi0/virtio-backend` gives `scsi0`).
fn drive_name(device: &str, qdev: &str) -> String {
    if !device.is_empty() {
        return device.to_string();
    }
    qdev.trim_end_matches("/virtio-backend")
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `query-blockstats`'s return: one entry per drive with a name.
pub fn blockstats(text: &str) -> Result<Vec<DriveStats>, QmpError> {
    let raw: Vec<RawEntry> = serde_json::from_str(text).map_err(|e| QmpError {
        what: "query-blockstats",
        why: e.to_string(),
    })?;
    Ok(raw
        .into_iter()
        .map(|e| DriveStats {
            drive: drive_name(&e.device, &e.qdev),
            read_bytes: e.stats.rd_bytes,
            write_bytes: e.stats.wr_bytes,
            reads: e.stats.rd_operations,
            writes: e.stats.wr_operations,
            flushes: e.stats.flush_operations,
            read_ns: e.stats.rd_total_time_ns,
            write_ns: e.stats.wr_total_time_ns,
            flush_ns: e.stats.flush_total_time_ns,
        })
        .filter(|d| !d.drive.is_empty())
        .collect())
}

#[derive(Deserialize)]
struct RawBlock {
    #[serde(default)]
    device: String,
    #[serde(default)]
    qdev: String,
    inserted: Option<RawInserted>,
}

#[derive(Deserialize)]
struct RawInserted {
    file: String,
}

/// `query-block`'s return: each drive with a medium and the file or
/// device QEMU opened for it (`/dev/zvol/...`, `rbd:pool/vm-100-disk-0...`,
/// `/mnt/pve/nfs/images/100/vm-100-disk-0.qcow2`).
pub fn block_files(text: &str) -> Result<Vec<(String, String)>, QmpError> {
    let raw: Vec<RawBlock> = serde_json::from_str(text).map_err(|e| QmpError {
        what: "query-block",
        why: e.to_string(),
    })?;
    Ok(raw
        .into_iter()
        .filter_map(|b| Some((drive_name(&b.device, &b.qdev), b.inserted?.file)))
        .filter(|(d, _)| !d.is_empty())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::fixture;

    #[test]
    fn blockstats_of_a_vm_give_each_drives_counters() {
        let all = blockstats(&fixture("qemu/7.2", "query-blockstats.json")).unwrap();
        let names: Vec<&str> = all.iter().map(|d| d.drive.as_str()).collect();
        assert_eq!(names, ["drive-scsi0", "drive-virtio0"]);
        // SeaBIOS read the boot sector of the SCSI disk, and nothing else.
        let d = &all[0];
        assert_eq!((d.reads, d.read_bytes, d.writes), (1, 512, 0));
        assert!(d.read_ns > 0);
        assert_eq!(all[1].reads, 0);
        assert!(blockstats("{\"return\": 1}").is_err());
    }

    #[test]
    fn block_files_give_each_drives_file() {
        let all = block_files(&fixture("qemu/7.2", "query-block.json")).unwrap();
        assert_eq!(
            all,
            [
                (
                    "drive-scsi0".into(),
                    "/var/lib/vz/images/100/disk.raw".into()
                ),
                (
                    "drive-virtio0".into(),
                    "/var/lib/vz/images/100/disk2.raw".into()
                )
            ]
        );
    }

    #[test]
    fn a_blockdev_drive_is_named_by_its_qdev() {
        assert_eq!(
            drive_name("", "/machine/peripheral/scsi0/virtio-backend"),
            "scsi0"
        );
        assert_eq!(drive_name("", "scsi1"), "scsi1");
        assert_eq!(drive_name("drive-scsi0", "x"), "drive-scsi0");
    }
}
