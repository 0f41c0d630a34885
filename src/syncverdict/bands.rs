//! The reference bands of single-job 4 KiB synced writes a second per
//! class of device, and which SSD models have power-loss protection (PLP).
//! Linux exposes no PLP flag: it comes from `--plp`, or from the models
//! below whose vendor documents say it.
//!
//! The bands are the one-job figures of the drives in ceph-diskbench's
//! table (TheJJ/ceph-diskbench, README.md at b7531a9, 2021-07-05: `fio
//! --numjobs=1 --direct=1 --fdatasync=1 --ioengine=pvsync --iodepth=1
//! --rw=write --bs=4k`, 4 KiB writes each followed by fdatasync, as SYNC
//! WRITE 4K makes them, though sequential), grouped by interface and PLP,
//! plus one NVMe figure measured exactly as SYNC WRITE 4K (randwrite,
//! fsync, QD1). The table has no rotating disks: they get no band; the
//! verdict bounds them instead (one commit a revolution). The bands are
//! wide and the PLP drives few (an Intel D3-S4510, which has PLP, made
//! 1,600): a percentage places a figure, it does not prove PLP.

use crate::model::storage::Disk;

use super::Band;

const CEPH_DISKBENCH: &str =
    "ceph-diskbench README (github.com/TheJJ/ceph-diskbench @b7531a9), one job";

/// SATA SSDs without PLP: WD Blue 1751, Intel 545 1500, Samsung 860 PRO
/// 1033, SanDisk Extreme Pro 860, SanDisk Ultra II 600, Samsung 860 EVO 490.
pub const SATA_SSD: Band = Band {
    class: "SATA SSD without PLP",
    min: 490.0,
    median: 946.5,
    max: 1751.0,
    source: CEPH_DISKBENCH,
};

/// SATA and SAS SSDs with PLP: Intel S4510 1600, Pliant LB206S 5028,
/// Samsung PM883 12680 (its write cache off), PM863a 17983, PM1643a 18545.
pub const SATA_SSD_PLP: Band = Band {
    class: "SATA/SAS SSD with PLP",
    min: 1600.0,
    median: 12680.0,
    max: 18545.0,
    source: CEPH_DISKBENCH,
};

/// NVMe without PLP: Samsung PM981 384, 970 PRO 456, Lenovo OEM 1150,
/// Transcend 220S 1420, Samsung PM961 1480; and a Samsung 980 at 574
/// (cdn.igene.tw/en/choosing-ceph-ssd: `fio -rw=randwrite -fsync=1
/// -bs=4k -iodepth=1`).
pub const NVME: Band = Band {
    class: "NVMe without PLP",
    min: 384.0,
    median: 862.0,
    max: 1480.0,
    source: "ceph-diskbench README (github.com/TheJJ/ceph-diskbench @b7531a9), one job; cdn.igene.tw/en/choosing-ceph-ssd",
};

/// NVMe with PLP: Samsung 983 DCT 4000, PM963 34090, Intel 750 64235.
pub const NVME_PLP: Band = Band {
    class: "NVMe with PLP",
    min: 4000.0,
    median: 34090.0,
    max: 64235.0,
    source: CEPH_DISKBENCH,
};

/// Models whose vendor documents say whether they protect data in flight
/// on power loss: (what `device/model` contains, PLP, the source).
pub const PLP_MODELS: &[(&str, bool, &str)] = &[
    (
        "SSDSC2KB",
        true,
        "Intel DC S4500/D3-S4510 product specification: \"Enhanced power-loss data protection\"",
    ),
    (
        "SSDSC2KG",
        true,
        "Intel DC S4600/D3-S4610 product specification: \"Enhanced power-loss data protection\"",
    ),
    (
        "SSDPE2MX",
        true,
        "Intel DC P3500 product specification: \"Enhanced power-loss data protection\"",
    ),
    (
        "SSDPE2ME",
        true,
        "Intel DC P3600 product specification: \"Enhanced power-loss data protection\"",
    ),
    (
        "MX500SSD",
        false,
        "Crucial MX500 (techpowerup.com review): \"power loss immunity\" protects data at rest only",
    ),
    (
        "MX300SSD",
        false,
        "Crucial MX300 datasheet: \"Power loss protection for data-at-rest\"",
    ),
    (
        "Micron_M550",
        false,
        "Micron M550 datasheet: \"Power loss protection for data-at-rest\"",
    ),
];

/// Whether `disk` has PLP: `plp` (the admin's word) or the model table.
pub fn plp_of(disk: &Disk, plp: Option<bool>) -> Option<bool> {
    plp.or_else(|| model_entry(disk).map(|(_, plp, _)| *plp))
}

/// The entry of [`PLP_MODELS`] that `disk`'s model matches.
pub fn model_entry(disk: &Disk) -> Option<&'static (&'static str, bool, &'static str)> {
    let model = disk.model.as_deref()?;
    PLP_MODELS
        .iter()
        .find(|(pattern, ..)| model.contains(pattern))
}

/// The band of `disk`'s class, where it is known: a solid-state disk on
/// SATA, SAS or NVMe whose PLP is known.
pub fn class_of(disk: &Disk, plp: Option<bool>) -> Option<&'static Band> {
    if disk.rotational != Some(false) {
        return None;
    }
    let plp = plp_of(disk, plp)?;
    match (disk.transport.as_deref()?, plp) {
        ("NVMe", true) => Some(&NVME_PLP),
        ("NVMe", false) => Some(&NVME),
        ("SATA" | "SAS", true) => Some(&SATA_SSD_PLP),
        ("SATA", false) => Some(&SATA_SSD),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssd(model: &str, transport: &str) -> Disk {
        Disk {
            name: "sda".into(),
            model: Some(model.into()),
            rotational: Some(false),
            transport: Some(transport.into()),
            ..Disk::default()
        }
    }

    #[test]
    fn each_band_is_ordered_and_its_median_inside() {
        for b in [SATA_SSD, SATA_SSD_PLP, NVME, NVME_PLP] {
            assert!(b.min <= b.median && b.median <= b.max, "{}", b.class);
        }
    }

    #[test]
    fn the_class_needs_a_known_plp() {
        let mx500 = ssd("CT1000MX500SSD1", "SATA");
        assert_eq!(
            class_of(&mx500, None).unwrap().class,
            "SATA SSD without PLP"
        );
        let s4510 = ssd("INTEL SSDSC2KB480G8", "SATA");
        assert_eq!(
            class_of(&s4510, None).unwrap().class,
            "SATA/SAS SSD with PLP"
        );
        let unknown = ssd("Samsung SSD 870 EVO 1TB", "SATA");
        assert_eq!(class_of(&unknown, None), None);
        assert_eq!(class_of(&unknown, Some(false)).unwrap().median, 946.5);
        assert_eq!(
            class_of(&ssd("x", "NVMe"), Some(true)).unwrap().class,
            "NVMe with PLP"
        );
        // The admin's word wins over the table.
        assert_eq!(
            class_of(&mx500, Some(true)).unwrap().class,
            "SATA/SAS SSD with PLP"
        );
        let hdd = Disk {
            rotational: Some(true),
            ..ssd("ST4000NM0035", "SATA")
        };
        assert_eq!(
            class_of(&hdd, Some(false)),
            None,
            "no band for rotating disks"
        );
        assert_eq!(class_of(&ssd("x", "virtio"), Some(true)), None);
    }
}
