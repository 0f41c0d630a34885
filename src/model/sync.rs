//! SYNC WRITE 4K as data: how each write was made durable ([`SyncMode`]),
//! what one count of jobs measured ([`SyncWriteFigure`]), the scaling over
//! several counts, and the verdict on whether the flushes reach a disk
//! ([`FlushVerdict`]) with the reference band of the device class
//! ([`Reference`]). How they are measured and judged is elsewhere.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::latency::Latency;

/// How each 4 KiB write is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// `pwrite`, then `fdatasync` (fio's `--fdatasync=1`).
    Fdatasync,
    /// The file opened with `O_DSYNC`: each `pwrite` returns once durable
    /// (fio's `--sync=dsync`).
    Dsync,
}

impl SyncMode {
    pub const ALL: [SyncMode; 2] = [SyncMode::Fdatasync, SyncMode::Dsync];

    pub fn name(self) -> &'static str {
        match self {
            SyncMode::Fdatasync => "fdatasync",
            SyncMode::Dsync => "dsync",
        }
    }
}

impl crate::model::choice::Choice for SyncMode {
    const ALL: &'static [Self] = &SyncMode::ALL;

    fn name(self) -> &'static str {
        SyncMode::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            SyncMode::Fdatasync => "write, then fdatasync (as fio --fdatasync=1)",
            SyncMode::Dsync => "O_DSYNC: each write returns once durable (as fio --sync=dsync)",
        }
    }
}

/// One count of jobs writing at once, each over its own file.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncWriteFigure {
    pub jobs: u32,
    pub mode: SyncMode,
    /// Each job's file (written in full before the timed writes).
    pub file_bytes: u64,
    /// Synced writes of all jobs.
    pub writes: u64,
    /// From the jobs' common start to the last job's end.
    pub elapsed: Duration,
    /// Per write (write and its sync), over all jobs.
    pub latency: Latency,
    /// User plus system CPU time of the process during the writes.
    pub cpu: Duration,
}

impl SyncWriteFigure {
    /// Synced writes per second, all jobs together.
    pub fn iops(&self) -> f64 {
        super::per_second(self.writes as f64, self.elapsed)
    }

    /// CPU microseconds per write.
    pub fn cpu_us_per_write(&self) -> f64 {
        if self.writes == 0 {
            0.0
        } else {
            self.cpu.as_secs_f64() * 1e6 / self.writes as f64
        }
    }
}

/// `1 job`, `4 jobs`.
pub fn jobs_words(n: u32) -> String {
    if n == 1 {
        "1 job".into()
    } else {
        format!("{n} jobs")
    }
}

/// The scaling over `--sync-jobs`: one figure per count of jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncScaling {
    pub steps: Vec<SyncWriteFigure>,
}

impl SyncScaling {
    /// The step with the most IOPS.
    pub fn peak(&self) -> Option<&SyncWriteFigure> {
        self.steps
            .iter()
            .max_by(|a, b| a.iops().total_cmp(&b.iops()))
    }

    /// Where scaling stops: the first step that no later step beats by
    /// `min_gain` or more (0.10: ten per cent), so a noisy dip in between
    /// does not end it early. `None` while the last step still gained that
    /// much (or with fewer than two steps): it had not stopped.
    pub fn stops_at(&self, min_gain: f64) -> Option<u32> {
        let peak = self.peak()?.iops();
        let last = self.steps.len().checked_sub(1)?;
        let (at, step) = self
            .steps
            .iter()
            .enumerate()
            .find(|(_, s)| s.iops() * (1.0 + min_gain) > peak)?;
        (at < last).then_some(step.jobs)
    }
}

/// Whether the synced writes can have reached a disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// Nothing known contradicts the figure.
    Plausible,
    /// More commits a second than the disk can make: a cache absorbs them.
    FasterThanTheDevice,
    /// The flushes go nowhere (tmpfs, ZFS sync=disabled, no barriers).
    NotSynced,
    /// What stands behind PATH says nothing about a disk.
    Unknown,
}

impl VerdictKind {
    pub fn words(self) -> &'static str {
        match self {
            VerdictKind::Plausible => "plausible",
            VerdictKind::FasterThanTheDevice => "faster than the device can commit",
            VerdictKind::NotSynced => "not synced",
            VerdictKind::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlushVerdict {
    pub kind: VerdictKind,
    /// Why, naming what was seen.
    pub reason: String,
}

/// SYNC WRITE 4K with one job, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncResult {
    pub figure: SyncWriteFigure,
    pub verdict: FlushVerdict,
    /// Against the device class's band, where the class is known.
    pub reference: Option<Reference>,
    /// What others published for the leaf disks' models.
    pub published: Vec<Published>,
}

/// A one-job 4 KiB synced write result published for a leaf disk's model
/// (`flushes::published`), and this run's share of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Published {
    pub disk: String,
    /// The model as the source names it.
    pub model: String,
    pub iops: f64,
    pub source: String,
    pub test: String,
    /// This run's IOPS over the published, in percent.
    pub percent: f64,
}

/// A sync figure against its device class's band of single-job figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// `HDD 7,200 rpm`, `SATA SSD with PLP`, ...
    pub class: String,
    pub band_min_iops: f64,
    pub band_median_iops: f64,
    pub band_max_iops: f64,
    /// The figure as a percentage of the band's median.
    pub percent: f64,
    /// Where the band comes from, and where PLP was learned.
    pub source: String,
}

/// SYNC WRITE 4K: bytes per write.
pub const SYNC_BLOCK: usize = 4096;

/// `--sync-jobs`: scaling stops at the first step that no later step beats
/// by this much (ten per cent).
pub const SYNC_MIN_GAIN: f64 = 0.10;

#[cfg(test)]
mod tests {
    use super::*;

    fn step(jobs: u32, writes: u64) -> SyncWriteFigure {
        SyncWriteFigure {
            jobs,
            mode: SyncMode::Fdatasync,
            file_bytes: 1 << 20,
            writes,
            elapsed: Duration::from_secs(1),
            latency: Latency::default(),
            cpu: Duration::from_millis(writes / 100),
        }
    }

    #[test]
    fn iops_peak_and_where_scaling_stops() {
        let s = SyncScaling {
            steps: vec![
                step(1, 1000),
                step(2, 1900),
                step(4, 3500),
                step(8, 3700),
                step(16, 3600),
            ],
        };
        assert_eq!(s.peak().unwrap().jobs, 8);
        // 4 -> 8 gains 5.7%: it stops at 4 jobs.
        assert_eq!(s.stops_at(0.10), Some(4));
        // A noisy dip at 2 jobs does not end the scaling there.
        let dip = SyncScaling {
            steps: vec![step(1, 1000), step(2, 60), step(4, 4400), step(8, 4500)],
        };
        assert_eq!(dip.stops_at(0.10), Some(4));
        assert_eq!(
            SyncScaling {
                steps: vec![step(1, 1000)]
            }
            .stops_at(0.10),
            None,
            "one step has no scaling"
        );
        let always = SyncScaling {
            steps: vec![step(1, 1000), step(2, 2000)],
        };
        assert_eq!(
            always.stops_at(0.10),
            None,
            "still scaling at the last step"
        );
        assert_eq!(SyncScaling { steps: vec![] }.stops_at(0.10), None);
        assert_eq!(step(1, 500).iops(), 500.0);
        assert_eq!(step(1, 500).cpu_us_per_write(), 10.0);
    }
}
