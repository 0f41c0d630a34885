//! The datastore command's document: the figures measured, the datastore
//! found and its projection into hours, and the hints that read them.

use serde::{Deserialize, Serialize};

use super::{DatastoreResult, FoundDatastore, Measured};
use crate::model::hint::Hint;
use pveprobe_parse::pbs::{SyncLevel, Tuning};

/// The document's `kind`.
pub const KIND: &str = "datastore";
/// Its schema's version: a change that breaks a reader counts it up.
pub const SCHEMA_VERSION: u32 = 1;
const MIB: f64 = 1048576.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatastoreReport {
    pub schema_version: u32,
    /// Always `datastore`: how `compare` knows the document.
    pub kind: String,
    pub pveprobe_version: String,
    /// When the run started (RFC 3339).
    pub timestamp: String,
    pub hostname: Option<String>,
    #[serde(flatten)]
    pub result: DatastoreResult,
    pub projection: Option<Hours>,
    pub hints: Vec<Hint>,
}

/// The datastore's hours, from the figures and its own settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hours {
    /// GC phase 1: the chunks touched (each once while the digest cache
    /// holds them all, else every reference), seconds.
    pub gc_phase1_s: Option<f64>,
    pub gc_touches: u64,
    /// GC phase 2: every prefix directory read and every chunk stat'ed
    /// (those untouched for longer than the cutoff are then removed).
    pub gc_phase2_s: Option<f64>,
    /// The datastore's `gc-atime-cutoff`, minutes.
    pub gc_atime_cutoff_min: u64,
    /// A verify of every snapshot: each chunk read and checked once, at
    /// the datastore's reader count (the nearest measured at or below).
    pub verify_all_s: Option<f64>,
    pub verify_readers: u32,
    /// The largest snapshot restored at 1 and at 16 chunks in flight.
    pub restore_1_s: Option<f64>,
    pub restore_16_s: Option<f64>,
    /// A first backup of that snapshot's image at each sync level.
    pub backup_s: Vec<LevelTime>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelTime {
    pub sync_level: SyncLevel,
    pub seconds: f64,
}

impl DatastoreReport {
    pub fn new(result: DatastoreResult, hostname: Option<String>) -> Self {
        let projection = result
            .existing
            .as_ref()
            .map(|e| project(&result.measured, e, &e.tuning));
        DatastoreReport {
            schema_version: SCHEMA_VERSION,
            kind: KIND.into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: jiff::Timestamp::now().to_string(),
            hostname,
            result,
            projection,
            hints: Vec::new(),
        }
    }

    /// The figure measured at `depth` chunks in flight.
    pub fn restore_at(&self, depth: u32) -> Option<f64> {
        let m = &self.result.measured;
        m.restore
            .iter()
            .find(|r| r.in_flight == depth)
            .map(|r| r.mib_s)
    }

    pub fn ingest_at(&self, level: SyncLevel) -> Option<f64> {
        let m = &self.result.measured;
        m.ingest
            .iter()
            .find(|i| i.sync_level == level)
            .map(|i| i.mib_s)
    }
}

/// proxmox-backup-qemu's first release that restores 16 chunks at once.
const PARALLEL_RESTORE: [u64; 3] = [2, 0, 1];

/// The chunks a restore by `package` (`libproxmox-backup-qemu0 VERSION`)
/// fetches at once: 1 before 2.0.1, 16 (its default) since.
pub fn restore_fetches(package: &str) -> Option<u32> {
    let version = package.rsplit(' ').next()?;
    let numbers = pveprobe_parse::pbs::version_numbers(version);
    (!numbers.is_empty()).then_some(if numbers.as_slice() < PARALLEL_RESTORE.as_slice() {
        1
    } else {
        16
    })
}

/// GC's phase 2 over `chunks` chunks: every prefix directory read, every chunk stat'ed.
pub fn sweep_seconds(m: &Measured, chunks: f64) -> Option<f64> {
    match (m.sweep_dirs_per_s, m.sweep_per_s) {
        (Some(d), Some(c)) if d > 0.0 && c > 0.0 => {
            Some(f64::from(super::PREFIX_DIRS) / d + chunks / c)
        }
        _ => None,
    }
}

pub fn per(count: f64, rate: Option<f64>) -> Option<f64> {
    rate.filter(|r| *r > 0.0).map(|r| count / r)
}

/// The measured figures made into the datastore's hours.
pub fn project(m: &Measured, e: &FoundDatastore, tuning: &Tuning) -> Hours {
    let chunks = e.chunks as f64;
    let touches = if e.chunks <= tuning.gc_cache_capacity {
        e.chunks
    } else {
        e.references
    };
    let phase2 = sweep_seconds(m, chunks);
    let bytes = chunks * e.mean_chunk_bytes.unwrap_or(0.0) / MIB;
    let verify = m
        .verify
        .iter()
        .filter(|v| u64::from(v.readers) <= tuning.verify_readers)
        .max_by_key(|v| v.readers);
    let largest = e.largest.as_ref().map(|l| l.stored_bytes as f64 / MIB);
    let restore = |depth: u32| {
        let rate = m
            .restore
            .iter()
            .find(|r| r.in_flight == depth)
            .map(|r| r.mib_s);
        per(largest?, rate)
    };
    Hours {
        gc_phase1_s: per(touches as f64, m.mark_per_s),
        gc_touches: touches,
        gc_phase2_s: phase2,
        gc_atime_cutoff_min: tuning.gc_atime_cutoff_min,
        verify_all_s: per(bytes, verify.map(|v| v.mib_s)),
        verify_readers: verify.map_or(1, |v| v.readers),
        restore_1_s: restore(1),
        restore_16_s: restore(16),
        backup_s: m
            .ingest
            .iter()
            .filter_map(|i| {
                Some(LevelTime {
                    sync_level: i.sync_level,
                    seconds: per(largest?, Some(i.mib_s))?,
                })
            })
            .collect(),
    }
}

pub fn fmt_rate(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    }
}

/// Seconds as a person reads a duration ([`human::duration`]), `-` for none.
pub fn fmt_time(s: Option<f64>) -> String {
    s.map_or_else(|| "-".into(), crate::model::human::duration)
}

/// A report as a run on a disk gives one, for the unit tests.
#[cfg(test)]
pub(super) fn sample() -> DatastoreReport {
    use super::{Atime, Ingest, Restore, Verify};
    let measured = Measured {
        create_s: Some(2.0),
        ingest: [
            (SyncLevel::None, 900.0),
            (SyncLevel::Filesystem, 400.0),
            (SyncLevel::File, 100.0),
        ]
        .into_iter()
        .map(|(sync_level, mib_s)| Ingest {
            sync_level,
            chunks: 96,
            stored_bytes: 96 * 1_677_722,
            seconds: 96.0 * 1.6 / mib_s,
            mib_s,
        })
        .collect(),
        known_per_s: Some(5000.0),
        restore: super::RESTORE_DEPTHS
            .iter()
            .map(|&d| Restore {
                in_flight: d,
                mib_s: 80.0 * f64::from(d).sqrt(),
                image_mib_s: 200.0 * f64::from(d).sqrt(),
            })
            .collect(),
        verify: super::VERIFY_READERS
            .iter()
            .map(|&r| Verify {
                readers: r,
                workers: 4,
                mib_s: 100.0 * f64::from(r),
                decoders_busy: 0.2 * f64::from(r),
                capped_by: if r == 4 { "cpu" } else { "disk" }.into(),
                bad: 0,
            })
            .collect(),
        mark_per_s: Some(2000.0),
        sweep_dirs_per_s: Some(6553.6),
        sweep_per_s: Some(10000.0),
        atime: Some(Atime {
            updates: true,
            mount_option: Some("relatime".into()),
        }),
        cold: true,
        chunks: 288,
        stored_bytes: 288 * 1_677_722,
    };
    let result = DatastoreResult {
        path: "/mnt/datastore/store1".into(),
        filesystem: None,
        storage: None,
        measured,
        existing: None,
        pbs_qemu: None,
        left_behind: Vec::new(),
        interrupted_by: None,
        errors: Vec::new(),
    };
    DatastoreReport {
        timestamp: "2026-12-07T03:00:00Z".into(),
        ..DatastoreReport::new(result, Some("pve1".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FoundDatastore, Largest};
    use super::*;

    #[test]
    fn a_datastore_s_hours_are_its_counts_over_the_figures() {
        let r = sample();
        let found = FoundDatastore {
            chunks: 1_000_000,
            references: 3_000_000,
            mean_chunk_bytes: Some(1_677_721.6),
            largest: Some(Largest {
                snapshot: "vm/100/2026-12-01T00:00:00Z".into(),
                image_bytes: 500 << 30,
                chunks: 128_000,
                stored_bytes: 200 << 30,
            }),
            ..FoundDatastore::default()
        };
        let p = project(&r.result.measured, &found, &Tuning::default());
        // Phase 1: the digest cache (1 Mi) holds every chunk, each touched once.
        assert_eq!(p.gc_touches, 1_000_000);
        assert_eq!(p.gc_phase1_s, Some(500.0));
        // Phase 2: 65,536 directories at 6,553.6 a second, then a stat each.
        assert_eq!(p.gc_phase2_s, Some(10.0 + 100.0));
        // Verify: 1.6 MiB a chunk at one reader's 100 MiB/s.
        assert!((p.verify_all_s.unwrap() - 16_000.0).abs() < 1.0);
        assert_eq!(p.verify_readers, 1);
        // Restore: 200 GiB at 80 MiB/s, and at 16 in flight at 320.
        assert_eq!(p.restore_1_s, Some(200.0 * 1024.0 / 80.0));
        assert_eq!(p.restore_16_s, Some(200.0 * 1024.0 / 320.0));
        let file = p
            .backup_s
            .iter()
            .find(|b| b.sync_level == SyncLevel::File)
            .unwrap();
        assert_eq!(file.seconds, 200.0 * 1024.0 / 100.0);
        // A cache smaller than the chunks: every reference is touched.
        let small = Tuning {
            gc_cache_capacity: 1000,
            verify_readers: 4,
            ..Tuning::default()
        };
        let p = project(&r.result.measured, &found, &small);
        assert_eq!(p.gc_touches, 3_000_000);
        assert_eq!(p.verify_readers, 4);
        assert!((p.verify_all_s.unwrap() - 4_000.0).abs() < 1.0);
        assert_eq!(fmt_time(p.gc_phase1_s), "25 min 0 s");
        assert_eq!(fmt_time(Some(16_000.0)), "4 h 26 min");
        assert_eq!(fmt_time(None), "-");
    }
}
