//! One-job 4 KiB synced write results published per disk model, to set a
//! SYNC WRITE 4K figure beside what others measured on the same model.
//! Each row names its source, its test and its value, as published:
//!
//! - Proxmox VE Ceph Benchmark 2018/02 (proxmox.com, "Proxmox VE Ceph
//!   Benchmark", table "4K sync write performance"): `fio
//!   --ioengine=libaio --filename=/dev/sdx --direct=1 --sync=1 --rw=write
//!   --bs=4K --numjobs=1 --iodepth=1 --runtime=60 --time_based`, on the
//!   raw disk: sequential writes, each synced (O_SYNC).
//! - ceph-diskbench (github.com/TheJJ/ceph-diskbench, README.md at
//!   b7531a9, 2021-07-05), the one-job column: `fio --numjobs=1
//!   --direct=1 --fdatasync=1 --ioengine=pvsync --iodepth=1 --rw=write
//!   --bs=4k`: sequential writes, each followed by fdatasync (the source
//!   of `bands.rs`).
//!
//! SYNC WRITE 4K writes at random offsets of a file on the filesystem and
//! fdatasyncs each write: the same flushes, but through a filesystem and
//! not in order, so a share near 100% says the stack adds little, and one
//! far below says where to look (the filesystem, a write cache setting,
//! the layers).
//!
//! Models are matched on the full model name smartctl reports where it
//! ran, else sysfs's (which cuts SATA models to 16 characters), by a part
//! that names one model family only.

use crate::model::storage::{Disk, Storage};
use crate::model::sync::Published;

const PROXMOX_2018: &str = "Proxmox VE Ceph Benchmark 2018/02, 4K sync write table";
const PROXMOX_TEST: &str =
    "fio --sync=1 --rw=write --bs=4K --numjobs=1 --iodepth=1 on the raw disk (sequential, O_SYNC)";
const DISKBENCH: &str = "ceph-diskbench README (github.com/TheJJ/ceph-diskbench @b7531a9), one job";
const DISKBENCH_TEST: &str =
    "fio --fdatasync=1 --rw=write --bs=4k --numjobs=1 --iodepth=1 (sequential, fdatasync)";

/// The paper's table in full, fastest first, as `qualify` places a disk
/// between its rows (the 7,200 rpm disk is named by its class only).
pub const PAPER: [(&str, f64); 6] = [
    ("Intel DC P3700", 75_162.0),
    ("Samsung SM863", 17_485.0),
    ("Intel DC S3510", 12_518.0),
    ("Samsung 850 EVO", 339.0),
    ("Crucial MX100", 254.0),
    ("Seagate 7,200 rpm HDD", 117.0),
];

/// Where the paper's table comes from, and its test.
pub const PAPER_SOURCE: &str = PROXMOX_2018;
pub const PAPER_TEST: &str = PROXMOX_TEST;

/// (a part of the model name, the model as published, IOPS, source, test).
const ROWS: &[(&str, &str, f64, &str, &str)] = &[
    (
        "SSDPEDMD",
        "Intel DC P3700",
        75_162.0,
        PROXMOX_2018,
        PROXMOX_TEST,
    ),
    (
        "SSDPE2MD",
        "Intel DC P3700",
        75_162.0,
        PROXMOX_2018,
        PROXMOX_TEST,
    ),
    (
        "MZ7KM",
        "Samsung SM863",
        17_485.0,
        PROXMOX_2018,
        PROXMOX_TEST,
    ),
    (
        "SSDSC2BB",
        "Intel DC S3510",
        12_518.0,
        PROXMOX_2018,
        PROXMOX_TEST,
    ),
    (
        "Samsung SSD 850 EVO",
        "Samsung 850 EVO",
        339.0,
        PROXMOX_2018,
        PROXMOX_TEST,
    ),
    ("MX100", "Crucial MX100", 254.0, PROXMOX_2018, PROXMOX_TEST),
    (
        "MZ7LH",
        "Samsung PM883",
        12_680.0,
        DISKBENCH,
        DISKBENCH_TEST,
    ),
    (
        "MZ7LM",
        "Samsung PM863a",
        17_983.0,
        DISKBENCH,
        DISKBENCH_TEST,
    ),
    (
        "SSDSC2KB",
        "Intel D3-S4510",
        1_600.0,
        DISKBENCH,
        DISKBENCH_TEST,
    ),
    (
        "Samsung SSD 860 EVO",
        "Samsung 860 EVO",
        490.0,
        DISKBENCH,
        DISKBENCH_TEST,
    ),
    (
        "Samsung SSD 860 PRO",
        "Samsung 860 PRO",
        1_033.0,
        DISKBENCH,
        DISKBENCH_TEST,
    ),
    (
        "Samsung SSD 970 PRO",
        "Samsung 970 PRO",
        456.0,
        DISKBENCH,
        DISKBENCH_TEST,
    ),
    ("MZVLB", "Samsung PM981", 384.0, DISKBENCH, DISKBENCH_TEST),
    (
        "MZQLW",
        "Samsung PM963",
        34_090.0,
        DISKBENCH,
        DISKBENCH_TEST,
    ),
    ("SSDPE2MW", "Intel 750", 64_235.0, DISKBENCH, DISKBENCH_TEST),
    ("SSDPEDMW", "Intel 750", 64_235.0, DISKBENCH, DISKBENCH_TEST),
];

/// The disk's full model: smartctl's, else sysfs's.
fn model(d: &Disk) -> Option<&str> {
    d.health
        .as_ref()
        .and_then(|h| h.model.as_deref())
        .or(d.model.as_deref())
}

/// The published row of a model: (the model as published, IOPS, source,
/// test). `model` is smartctl's, sysfs's, or the model part of Ceph's
/// `device_ids` (`Samsung_SSD_850_EVO_500GB_S21H...`: `_` for spaces).
pub fn row_for(model: &str) -> Option<(&'static str, f64, &'static str, &'static str)> {
    let m = model.replace('_', " ");
    ROWS.iter()
        .find(|(part, ..)| m.contains(part))
        .map(|&(_, name, iops, source, test)| (name, iops, source, test))
}

/// The published rows for the leaf disks below a figure of `iops`.
pub fn of(storage: Option<&Storage>, iops: f64) -> Vec<Published> {
    let Some(storage) = storage else {
        return Vec::new();
    };
    storage
        .disks
        .iter()
        .filter_map(|d| {
            let (name, published, source, test) = row_for(model(d)?)?;
            Some(Published {
                disk: d.name.clone(),
                model: name.to_string(),
                iops: published,
                source: source.to_string(),
                test: test.to_string(),
                percent: iops / published * 100.0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(name: &str, model: &str) -> Disk {
        Disk {
            name: name.into(),
            model: Some(model.into()),
            ..Disk::default()
        }
    }

    #[test]
    fn models_match_their_rows_and_the_share_is_of_the_published() {
        let storage = Storage {
            disks: vec![
                disk("sda", "SAMSUNG MZ7LH960HAJR-00005"),
                disk("sdb", "INTEL SSDSC2BB480G4"),
                disk("sdc", "WDC WD40EFRX-68N32N0"),
            ],
            ..Storage::default()
        };
        let rows = of(Some(&storage), 6340.0);
        assert_eq!(rows.len(), 2, "{rows:#?}");
        assert_eq!(rows[0].model, "Samsung PM883");
        assert_eq!(rows[0].percent, 50.0);
        assert!(rows[0].test.contains("fdatasync"));
        assert_eq!(rows[1].model, "Intel DC S3510");
        assert!(
            rows[1]
                .source
                .starts_with("Proxmox VE Ceph Benchmark 2018/02")
        );
        assert!(of(None, 1.0).is_empty());
    }

    /// smartctl's full model wins over sysfs's cut one: "Samsung SSD 860 "
    /// alone is EVO or PRO.
    #[test]
    fn smartctls_full_model_is_used() {
        let mut d = disk("sda", "Samsung SSD 860 ");
        assert!(
            of(
                Some(&Storage {
                    disks: vec![d.clone()],
                    ..Storage::default()
                }),
                100.0
            )
            .is_empty()
        );
        d.health = Some(crate::model::storage::Health {
            model: Some("Samsung SSD 860 PRO 512GB".into()),
            ..Default::default()
        });
        let rows = of(
            Some(&Storage {
                disks: vec![d],
                ..Storage::default()
            }),
            100.0,
        );
        assert_eq!(rows[0].model, "Samsung 860 PRO");
    }
}
