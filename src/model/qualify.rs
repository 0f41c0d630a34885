//! `qualify DEVICE` as data: the device and how it was identified, what
//! the checks found in use, what each test on it measured, where the cache
//! of a long write ran out, and the verdict per use. How the device is
//! checked, written and judged is in `qualify`.

use serde::{Deserialize, Serialize};

use super::io::IoStats;
use super::sustained::SustainedFigure;
use super::sync::{SyncResult, SyncWriteFigure};

/// The device `qualify` was given, as sysfs and udev describe it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Device {
    /// As given on the command line.
    pub path: String,
    /// The kernel's name: `sdb`, `nvme1n1`, `loop7`, `sdb2`.
    pub name: String,
    /// `major:minor`.
    pub dev: String,
    /// The whole disk a partition is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_of: Option<String>,
    pub size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wwn: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logical_block_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_block_size: Option<u32>,
    /// `write back` or `write through`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<String>,
    /// 0: the device takes no discard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discard_max_bytes: Option<u64>,
}

impl Device {
    /// What `--destroy-data-on` must be: the serial, else the WWN, else
    /// `NAME:SIZE` (a loop device, a partition, some virtual disks).
    pub fn confirmation(&self) -> String {
        self.serial
            .clone()
            .or_else(|| self.wwn.clone())
            .unwrap_or_else(|| format!("{}:{}", self.name, self.size_bytes))
    }

    /// Whether `typed` names this device: its serial or WWN (a WWN with or
    /// without its `naa.`, `eui.` or `0x` prefix), or `NAME:SIZE` when it
    /// has neither. Letters match in any case; spaces around are ignored.
    pub fn confirmed_by(&self, typed: &str) -> bool {
        let typed = typed.trim();
        if typed.is_empty() {
            return false;
        }
        let same = |a: &str| a.trim().eq_ignore_ascii_case(typed);
        let bare = |w: &str| {
            let w = w.trim().to_ascii_lowercase();
            ["naa.", "eui.", "t10.", "0x"]
                .iter()
                .find_map(|p| w.strip_prefix(p).map(str::to_string))
                .unwrap_or(w)
        };
        match (&self.serial, &self.wwn) {
            (None, None) => typed == format!("{}:{}", self.name, self.size_bytes),
            (serial, wwn) => {
                serial.as_deref().is_some_and(same)
                    || wwn.as_deref().is_some_and(|w| bare(w) == bare(typed))
            }
        }
    }
}

/// Something that shows the device in use: `qualify` refuses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The device or partition it was found on.
    pub device: String,
    /// What was found, with the tool or file that showed it.
    pub what: String,
}

/// The tests `qualify` runs, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiskTest {
    /// 4 KiB random writes, O_DIRECT, queue depth 1.
    RandWrite4kQd1,
    RandWrite4kQd32,
    RandRead4kQd1,
    RandRead4kQd32,
    /// 1 MiB sequential reads, queue depth 8.
    SeqRead1mQd8,
    SeqWrite1mQd8,
}

impl DiskTest {
    pub const ALL: [DiskTest; 6] = [
        DiskTest::RandWrite4kQd1,
        DiskTest::RandWrite4kQd32,
        DiskTest::RandRead4kQd1,
        DiskTest::RandRead4kQd32,
        DiskTest::SeqRead1mQd8,
        DiskTest::SeqWrite1mQd8,
    ];

    /// (bytes per I/O, queue depth, reads, random).
    pub fn shape(self) -> (usize, usize, bool, bool) {
        match self {
            DiskTest::RandWrite4kQd1 => (4096, 1, false, true),
            DiskTest::RandWrite4kQd32 => (4096, 32, false, true),
            DiskTest::RandRead4kQd1 => (4096, 1, true, true),
            DiskTest::RandRead4kQd32 => (4096, 32, true, true),
            DiskTest::SeqRead1mQd8 => (1 << 20, 8, true, false),
            DiskTest::SeqWrite1mQd8 => (1 << 20, 8, false, false),
        }
    }
}

/// The counts of jobs of the paper's test: Proxmox's one, then the
/// community's journal test's five and ten.
pub const SYNC_JOBS: [u32; 3] = [1, 5, 10];

/// What the tests measured; a test interrupted or not run has nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QualifyMeasured {
    /// The paper's test with one job, its flushes judged.
    pub sync_one: Option<SyncResult>,
    /// The same with five and ten jobs.
    pub sync_more: Vec<SyncWriteFigure>,
    pub io: Vec<(DiskTest, IoStats)>,
    pub sustained: Option<SustainedFigure>,
}

/// Where a long write's cache ran out: the first second after which the
/// write never again reached [`CLIFF_SHARE`] of its first seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// Seconds from the start.
    pub second: usize,
    /// The mean MiB/s before it (its first ten seconds at most).
    pub before_mib_per_s: f64,
    /// The mean MiB/s from it to the end.
    pub after_mib_per_s: f64,
    /// What was written before it, in MiB: about the cache's size.
    pub written_before_mib: f64,
}

/// The share of the first seconds' rate below which a write has fallen
/// off its cliff.
pub const CLIFF_SHARE: f64 = 0.6;

/// The cliff in a series of MiB/s per second; `None` when the write held.
/// A second is past the cliff when it and the mean of every later second
/// are below [`CLIFF_SHARE`] of the mean of the seconds before it (the
/// first ten at most), and no later second climbs back above it.
pub fn cliff(series: &[f64]) -> Option<Cliff> {
    let first = |end: usize| {
        let head = &series[..end.min(super::sustained::STRETCH)];
        head.iter().sum::<f64>() / head.len() as f64
    };
    (1..series.len()).find_map(|s| {
        let before = first(s);
        let bar = before * CLIFF_SHARE;
        let rest = &series[s..];
        let after = rest.iter().sum::<f64>() / rest.len() as f64;
        (before > 0.0 && rest.iter().all(|v| *v < bar) && after < bar).then(|| Cliff {
            second: s,
            before_mib_per_s: before,
            after_mib_per_s: after,
            written_before_mib: series[..s].iter().sum(),
        })
    })
}

/// A use a disk is judged for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Use {
    /// A Ceph OSD with its BlueStore WAL and DB (on it or on this disk for others).
    CephOsdWalDb,
    /// A ZFS SLOG or special vdev.
    ZfsSlogSpecial,
    /// A ZFS data vdev.
    ZfsData,
    /// VM disks on LVM-thin.
    LvmThin,
}

impl Use {
    pub const ALL: [Use; 4] = [
        Use::CephOsdWalDb,
        Use::ZfsSlogSpecial,
        Use::ZfsData,
        Use::LvmThin,
    ];

    /// As the verdict names it.
    pub fn words(self) -> &'static str {
        match self {
            Use::CephOsdWalDb => "Ceph OSD, WAL/DB",
            Use::ZfsSlogSpecial => "ZFS SLOG/special",
            Use::ZfsData => "ZFS data vdev",
            Use::LvmThin => "VM disks on LVM-thin",
        }
    }

    /// Its CSV column.
    pub fn column(self) -> &'static str {
        match self {
            Use::CephOsdWalDb => "use_ceph_osd_wal_db",
            Use::ZfsSlogSpecial => "use_zfs_slog_special",
            Use::ZfsData => "use_zfs_data",
            Use::LvmThin => "use_lvm_thin",
        }
    }
}

/// How a disk sits for a use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fit {
    /// At or above the rule's upper mark.
    Suits,
    /// Between the marks: it works, and limits what the use gets.
    Limits,
    /// Below the lower mark.
    Poor,
    /// The figure the rule needs was not measured.
    NotJudged,
}

impl Fit {
    pub fn words(self) -> &'static str {
        match self {
            Fit::Suits => "suits",
            Fit::Limits => "limits",
            Fit::Poor => "poor",
            Fit::NotJudged => "not judged",
        }
    }
}

/// The verdict for one use, with the rule and the figure it used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UseVerdict {
    #[serde(rename = "use")]
    pub for_use: Use,
    pub fit: Fit,
    /// The figure's key and its value (none when not measured).
    pub figure: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    pub rule: String,
    pub source: String,
}

/// What the run wrote to the device, and whether it was discarded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Written {
    /// Bytes written in all.
    pub bytes: u64,
    /// The sequential tests wrote from offset 0 up to here.
    pub sequential_to: u64,
    /// The random tests wrote 4 KiB blocks anywhere on the device.
    pub random: bool,
    /// `discarded`, `not discarded: WHY`, or `nothing written`.
    pub afterwards: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(serial: Option<&str>, wwn: Option<&str>) -> Device {
        Device {
            name: "sdb".into(),
            size_bytes: 480_103_981_056,
            serial: serial.map(str::to_string),
            wwn: wwn.map(str::to_string),
            ..Device::default()
        }
    }

    #[test]
    fn a_disk_is_confirmed_by_its_serial_or_wwn_and_nothing_else() {
        let d = device(Some("S3F3NX0K123456"), Some("naa.5002538c40a1b2c3"));
        assert!(d.confirmed_by("S3F3NX0K123456"));
        assert!(d.confirmed_by(" s3f3nx0k123456\n"));
        assert!(d.confirmed_by("naa.5002538c40a1b2c3"));
        assert!(d.confirmed_by("0x5002538c40a1b2c3"));
        assert!(d.confirmed_by("5002538C40A1B2C3"));
        for wrong in [
            "",
            "S3F3NX0K12345",
            "sdb:480103981056",
            "sdb",
            "5002538c40a1b2c4",
        ] {
            assert!(!d.confirmed_by(wrong), "{wrong:?}");
        }
        assert_eq!(d.confirmation(), "S3F3NX0K123456");
    }

    #[test]
    fn a_device_without_identity_is_confirmed_by_name_and_size() {
        let d = device(None, None);
        assert_eq!(d.confirmation(), "sdb:480103981056");
        assert!(d.confirmed_by("sdb:480103981056"));
        assert!(!d.confirmed_by("sdb:480103981057"));
        assert!(!d.confirmed_by("sdc:480103981056"));
        assert!(
            !d.confirmed_by("SDB:480103981056"),
            "the kernel's name, exactly"
        );
    }

    #[test]
    fn a_cache_running_out_is_a_cliff_and_a_steady_write_is_none() {
        let mut s = vec![900.0; 20];
        s.extend([300.0, 120.0, 110.0, 115.0, 100.0, 105.0]);
        let c = cliff(&s).unwrap();
        assert_eq!(c.second, 20);
        assert_eq!(c.before_mib_per_s, 900.0);
        assert!((c.after_mib_per_s - 850.0 / 6.0).abs() < 1e-9);
        assert_eq!(c.written_before_mib, 18_000.0);
        let steady = [500.0, 480.0, 520.0, 470.0, 505.0, 490.0];
        assert_eq!(cliff(&steady), None);
        // One slow second that recovers is no cliff.
        let blip = [500.0, 500.0, 100.0, 500.0, 500.0];
        assert_eq!(cliff(&blip), None);
        assert_eq!(cliff(&[]), None);
        assert_eq!(cliff(&[0.0, 0.0]), None);
    }
}
