//! The projections of SYNC WRITE 4K (one job, its flushes judged) and of
//! `--sync-jobs`'s scaling (JOBS, one entry per count of jobs, and PEAK).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Context, Entry, Facet, Facts, Project, Projection, Seen, latency_ms, ms};
use crate::figure::{Field, Figure, Method};
use crate::model::latency::LatencySummary;
use crate::model::printable;
use crate::model::sync::{
    FlushVerdict, Reference, SyncResult, SyncScaling, SyncWriteFigure, VerdictKind,
    jobs_words as jobs,
};

/// The facts of one count of jobs writing synced 4 KiB blocks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SyncFacts {
    pub block_size: usize,
    pub queue_depth: usize,
    pub write_iops: f64,
    /// Per write and its sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    pub cpu_us_per_op: f64,
    /// `fdatasync` or `dsync`.
    pub sync_mode: String,
    /// How many jobs wrote at once.
    pub jobs: u32,
    /// Each job's file.
    pub file_bytes: u64,
    /// SYNC WRITE 4K: whether the flushes can have reached a disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<FlushVerdict>,
    /// SYNC WRITE 4K: against its device class's band.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// SYNC WRITE 4K: what others published for the disks' models.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<crate::model::sync::Published>,
}

impl SyncFacts {
    pub(crate) fn of(f: &SyncWriteFigure) -> SyncFacts {
        SyncFacts {
            block_size: crate::model::sync::SYNC_BLOCK,
            queue_depth: 1,
            write_iops: f.iops(),
            latency: f.latency.summary(),
            cpu_us_per_op: f.cpu_us_per_write(),
            sync_mode: f.mode.name().into(),
            jobs: f.jobs,
            file_bytes: f.file_bytes,
            verdict: None,
            reference: None,
            published: Vec::new(),
        }
    }
}

impl Facet for SyncFacts {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::WriteIops => Some(self.write_iops),
            Field::P99Ms => self.latency.map(|l| ms(l.p99_us)),
            Field::MaxMs => self.latency.map(|l| ms(l.max_us)),
            Field::ReferencePercent => self.reference.as_ref().map(|r| r.percent),
            _ => None,
        }
    }

    fn text(&self, field: Field) -> Option<String> {
        match field {
            Field::Verdict => self.verdict.as_ref().map(|v| v.kind.words().to_string()),
            _ => None,
        }
    }

    fn method(&self, method: Method) -> Option<String> {
        (method == Method::SyncMode).then(|| self.sync_mode.clone())
    }

    /// SYNC WRITE 4K's details (one job; a count of `--sync-jobs` has
    /// none): its latency, CPU, the verdict on its flushes and its
    /// class's band.
    fn details(&self, seen: &Seen) -> String {
        if seen.instance.is_some() {
            return String::new();
        }
        let mut out = format!(
            "  {}: {} IOPS ({}, {} job, {} MiB file)\n",
            seen.figure.label(),
            seen.figure.spec().format(seen.value),
            self.sync_mode,
            self.jobs,
            self.file_bytes >> 20
        );
        // Reasons name paths and disks: one line each, whatever they hold.
        let mut detail = |text: String| {
            let _ = writeln!(out, "      {}", printable(&text));
        };
        if let Some(l) = &self.latency {
            detail(format!("latency: {}", latency_ms(l)));
        }
        detail(format!("CPU per write: {:.1} us", self.cpu_us_per_op));
        if let Some(v) = &self.verdict {
            detail(format!("flushes: {}: {}", v.kind.words(), v.reason));
        }
        match &self.reference {
            Some(r) => detail(format!(
                "reference: {:.0}% of the median of {} ({:.0}; band {:.0} to {:.0}): {}",
                r.percent, r.class, r.band_median_iops, r.band_min_iops, r.band_max_iops, r.source
            )),
            None => detail(
                "reference: none (the class is unknown: rotating or virtual disks, or PLP not known; --plp yes|no tells it)"
                    .into(),
            ),
        }
        for p in &self.published {
            detail(format!(
                "published: {} ({}) made {:.0} IOPS in {}: {}; this run is {:.0}% of it",
                p.model, p.disk, p.iops, p.source, p.test, p.percent
            ));
        }
        out
    }
}

impl Project for SyncResult {
    fn project(&self, figure: Figure, context: &Context) -> Projection {
        let f = &self.figure;
        let facts = SyncFacts {
            verdict: Some(self.verdict.clone()),
            reference: self.reference.clone(),
            published: self.published.clone(),
            ..SyncFacts::of(f)
        };
        let line = f.latency.summary().map(|l| {
            let p99_9 = l
                .p99_9_us
                .map(|p| format!(", p99.9 {:.3} ms", ms(p)))
                .unwrap_or_default();
            let reference = self
                .reference
                .as_ref()
                .map(|r| format!("; {:.0}% of {}'s median", r.percent, r.class))
                .unwrap_or_default();
            let space = if context.on_volume {
                "of the volume, O_DIRECT"
            } else {
                "file"
            };
            format!(
                "{:.0} IOPS (mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms{p99_9}, max {:.3} ms; {}, {} MiB {space}, 1 job); flushes: {}{reference}",
                f.iops(),
                ms(l.mean_us),
                ms(l.p50_us),
                ms(l.p99_us),
                ms(l.max_us),
                f.mode.name(),
                f.file_bytes >> 20,
                self.verdict.kind.words()
            )
        });
        let v = &self.verdict;
        Projection {
            entries: vec![Entry::once(f.iops(), Facts::Sync(facts))],
            line,
            diagnostic: (v.kind != VerdictKind::Plausible).then(|| {
                format!(
                    "{}: flushes: {}: {}",
                    figure.label(),
                    v.kind.words(),
                    v.reason
                )
            }),
            failed: None,
        }
    }
}

/// SYNC WRITE 4K PEAK's facts: where the scaling peaked and stopped.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PeakFacts {
    pub sync_mode: String,
    /// The count of jobs at the peak.
    pub peak_jobs: u32,
    /// The last count of jobs that still gained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stops_scaling_at: Option<u32>,
}

impl Facet for PeakFacts {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::PeakJobs => Some(f64::from(self.peak_jobs)),
            Field::StopsAt => self.stops_scaling_at.map(f64::from),
            _ => None,
        }
    }

    fn method(&self, method: Method) -> Option<String> {
        (method == Method::SyncMode).then(|| self.sync_mode.clone())
    }
}

/// SYNC WRITE 4K JOBS (an entry per count of jobs) and SYNC WRITE 4K PEAK.
impl Project for SyncScaling {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        if figure == Figure::SyncWritePeak {
            let Some(peak) = self.peak() else {
                return Projection::default();
            };
            let stops_at = self.stops_at(crate::model::sync::SYNC_MIN_GAIN);
            let gain = crate::model::sync::SYNC_MIN_GAIN * 100.0;
            let stops = match stops_at {
                Some(n) => format!(
                    "stops scaling at {}: no later step adds {gain:.0}% or more",
                    jobs(n)
                ),
                None => format!("still scaling at the last step: it added {gain:.0}% or more"),
            };
            let facts = PeakFacts {
                sync_mode: peak.mode.name().into(),
                peak_jobs: peak.jobs,
                stops_scaling_at: stops_at,
            };
            return Projection {
                entries: vec![Entry::once(peak.iops(), Facts::Peak(facts))],
                line: Some(format!(
                    "{:.0} IOPS at {} ({stops})",
                    peak.iops(),
                    jobs(peak.jobs)
                )),
                ..Projection::default()
            };
        }
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|s| format!("{} {:.0}", jobs(s.jobs), s.iops()))
            .collect();
        Projection {
            entries: self
                .steps
                .iter()
                .map(|step| Entry {
                    instance: Some(format!("jobs={}", step.jobs)),
                    ..Entry::once(step.iops(), Facts::Sync(SyncFacts::of(step)))
                })
                .collect(),
            line: Some(format!("{} IOPS", steps.join(", "))),
            ..Projection::default()
        }
    }
}
