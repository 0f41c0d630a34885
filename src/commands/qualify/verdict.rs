//! Where a qualified disk sits: between which rows of Proxmox's Ceph
//! benchmark paper and in which of the flushes' bands its one-job figure
//! falls, and the verdict per use. The rules are the project's, each with
//! the figure it reads and its marks' sources (README, "qualify"): they
//! place a disk, they do not certify it.

use serde::{Deserialize, Serialize};

use crate::figure::Figure;
use crate::model::qualify::{Fit, Use, UseVerdict};
use crate::syncverdict::{Band, bands, published};

/// The one-job figure against the paper's table and the bands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// The paper's row just above the figure (none above the fastest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub above: Option<PublishedRow>,
    /// The row just below (none below the slowest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub below: Option<PublishedRow>,
    pub source: String,
    /// The flushes' bands whose range holds the figure.
    pub bands: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedRow {
    pub model: String,
    pub iops: f64,
}

const BANDS: [Band; 4] = [
    bands::SATA_SSD,
    bands::SATA_SSD_PLP,
    bands::NVME,
    bands::NVME_PLP,
];

/// Places a one-job figure of `iops`.
pub fn place(iops: f64) -> Placement {
    let row = |&(model, iops): &(&str, f64)| PublishedRow {
        model: model.to_string(),
        iops,
    };
    let paper = &published::PAPER;
    Placement {
        above: paper.iter().rev().find(|(_, v)| *v > iops).map(row),
        below: paper.iter().find(|(_, v)| *v <= iops).map(row),
        source: published::PAPER_SOURCE.to_string(),
        bands: BANDS
            .iter()
            .filter(|b| (b.min..=b.max).contains(&iops))
            .map(|b| format!("{} ({:.0}-{:.0} IOPS)", b.class, b.min, b.max))
            .collect(),
    }
}

impl Placement {
    /// `between Samsung SM863 (17485) and Intel DC S3510 (12518) of the
    /// paper's table; in the band of SATA/SAS SSD with PLP (1600-18545 IOPS)`.
    pub fn words(&self) -> String {
        let r = |r: &PublishedRow| format!("{} ({:.0})", r.model, r.iops);
        let table = match (&self.above, &self.below) {
            (Some(a), Some(b)) => format!("between {} and {}", r(a), r(b)),
            (None, Some(b)) => format!("above {}, the fastest", r(b)),
            (Some(a), None) => format!("below {}, the slowest", r(a)),
            (None, None) => "unplaced".into(),
        };
        let bands = if self.bands.is_empty() {
            "in none of the flushes' bands".into()
        } else {
            format!("in the band of {}", self.bands.join(" and of "))
        };
        format!("{table} of the paper's table; {bands}")
    }
}

/// A rule: the figure it reads, and the marks between suits, limits and poor.
pub struct Rule {
    pub for_use: Use,
    pub figure: Figure,
    /// Which of the figure's values it reads (0: its value).
    pub value: usize,
    /// At or above: suits.
    pub suits: f64,
    /// At or above (and below `suits`): limits; below: poor.
    pub limits: f64,
    pub why: &'static str,
    pub source: &'static str,
}

const PAPER_SOURCE: &str = "Proxmox VE Ceph Benchmark 2018/02 (its 4K sync write table: datacenter SSDs 12,518-75,162 IOPS, consumer SSDs 254-339, a 7,200 rpm HDD 117)";

/// The rules, a use each.
pub const RULES: [Rule; 4] = [
    Rule {
        for_use: Use::CephOsdWalDb,
        figure: Figure::DiskSync1,
        value: 0,
        suits: 10_000.0,
        limits: 1_000.0,
        why: "BlueStore's WAL and RocksDB commit with synced writes one at a time",
        source: PAPER_SOURCE,
    },
    Rule {
        for_use: Use::ZfsSlogSpecial,
        figure: Figure::DiskSync1,
        value: 0,
        suits: 10_000.0,
        limits: 1_000.0,
        why: "a SLOG takes every synced write of the pool at queue depth 1; a special vdev the metadata of every block",
        source: "OpenZFS docs, Hardware: SLOG (power-loss protection, sync write latency); marks from Proxmox VE Ceph Benchmark 2018/02",
    },
    Rule {
        for_use: Use::ZfsData,
        figure: Figure::DiskSustained,
        // Its last ten seconds: the write past its cache.
        value: 2,
        suits: 150.0,
        limits: 50.0,
        why: "a pool's data disks take long writes (resilver, scrub, backups) past any cache; below a 7,200 rpm disk's 150 MB/s a disk slows the vdev",
        source: "the project's rule; a 7,200 rpm disk streams 150-250 MB/s (vendor datasheets); QLC SSDs past their SLC cache fall below 100 MB/s",
    },
    Rule {
        for_use: Use::LvmThin,
        figure: Figure::DiskRandWrite4kQd32,
        value: 0,
        suits: 10_000.0,
        limits: 500.0,
        why: "guests write small blocks at random, many at once",
        source: "the project's rule; a 7,200 rpm disk gives 150-400 4K random IOPS at queue depth 32, a SATA SSD tens of thousands (vendor datasheets)",
    },
];

/// The verdict of `rule` on `value` (none: not measured).
pub fn judge(rule: &Rule, value: Option<f64>) -> UseVerdict {
    let fit = match value {
        None => Fit::NotJudged,
        Some(v) if v >= rule.suits => Fit::Suits,
        Some(v) if v >= rule.limits => Fit::Limits,
        Some(_) => Fit::Poor,
    };
    let v = &rule.figure.spec().values[rule.value];
    UseVerdict {
        for_use: rule.for_use,
        fit,
        figure: v.key.to_string(),
        value,
        rule: format!(
            "{}: suits from {:.0} {}, limits from {:.0}, poor below; {}",
            v.label(),
            rule.suits,
            v.unit(),
            rule.limits,
            rule.why
        ),
        source: rule.source.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_sits_between_the_papers_rows_and_in_its_bands() {
        let p = place(13_000.0);
        assert_eq!(p.above.as_ref().unwrap().model, "Samsung SM863");
        assert_eq!(p.below.as_ref().unwrap().model, "Intel DC S3510");
        assert_eq!(p.bands.len(), 2, "{:?}", p.bands);
        assert!(p.bands[0].starts_with("SATA/SAS SSD with PLP"));
        assert!(p.bands[1].starts_with("NVMe with PLP"));
        assert!(
            p.words()
                .starts_with("between Samsung SM863 (17485) and Intel DC S3510 (12518)")
        );
        assert!(
            place(80_000.0)
                .words()
                .starts_with("above Intel DC P3700 (75162), the fastest")
        );
        assert!(
            place(50.0)
                .words()
                .starts_with("below Seagate 7,200 rpm HDD (117), the slowest")
        );
        // A row's own figure sits on it: at or above it.
        assert_eq!(place(339.0).below.unwrap().model, "Samsung 850 EVO");
        assert!(place(100_000.0).bands.is_empty());
    }

    #[test]
    fn each_use_is_judged_by_its_rule_and_marks() {
        let ceph = &RULES[0];
        assert_eq!(judge(ceph, Some(12_518.0)).fit, Fit::Suits);
        assert_eq!(judge(ceph, Some(9_999.0)).fit, Fit::Limits);
        assert_eq!(judge(ceph, Some(339.0)).fit, Fit::Poor);
        assert_eq!(judge(ceph, None).fit, Fit::NotJudged);
        let v = judge(&RULES[3], Some(200.0));
        assert_eq!(
            (v.fit, v.figure.as_str()),
            (Fit::Poor, "disk_rand_write_4k_qd32")
        );
        assert!(
            v.rule
                .starts_with("DISK RANDOM WRITE 4K QD32: suits from 10000 IOPS")
        );
        let zfs = judge(&RULES[2], Some(100.0));
        assert_eq!(zfs.figure, "disk_sustained_write_last_10s");
        assert!(
            zfs.rule
                .starts_with("DISK SUSTAINED WRITE (last 10 s): suits from 150 MiB/s")
        );
        assert!(
            RULES
                .iter()
                .all(|r| r.suits > r.limits && !r.source.is_empty())
        );
        let uses: Vec<Use> = RULES.iter().map(|r| r.for_use).collect();
        assert_eq!(uses, Use::ALL);
    }
}
