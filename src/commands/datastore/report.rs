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
    /// GC phase 2: every prefix directory read and every chunk stat'ed.
    pub gc_phase2_s: Option<f64>,
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
    pub fn new(result: DatastoreResult, tuning: Option<Tuning>, hostname: Option<String>) -> Self {
        let projection = result
            .existing
            .as_ref()
            .map(|e| project(&result.measured, e, tuning.as_ref().unwrap_or(&e.tuning)));
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
        e.chunks.min(e.references.max(e.chunks))
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
