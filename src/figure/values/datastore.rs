//! The values of `datastore`'s figures: PBS's calls replayed on a
//! datastore's storage, once each, or per sync level, per chunks in
//! flight, per verify reader count.

use super::super::Figure;
use super::super::spec::{Group, Spec, Value};
use super::others::{one_value, per_subject};
use Figure as F;

/// A `datastore` figure, per `per` (`run` where it is measured once).
pub(in crate::figure) const fn datastore(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    per: &'static str,
    values: &'static [Value],
) -> Spec {
    per_subject(key, label, unit, Group::Datastore, per, values)
}

pub(in crate::figure) const DS_CREATE: [Value; 1] = one_value(
    F::DatastoreCreate,
    "datastore_create",
    "datastore_create_dirs_per_s",
    "DS CREATE",
    "dirs/s",
);
pub(in crate::figure) const DS_INGEST: [Value; 1] = one_value(
    F::DatastoreIngest,
    "datastore_ingest",
    "datastore_ingest_mib_per_s",
    "DS INGEST",
    "MB/s",
);
pub(in crate::figure) const DS_KNOWN: [Value; 1] = one_value(
    F::DatastoreKnown,
    "datastore_known",
    "datastore_known_chunks_per_s",
    "DS KNOWN",
    "chunks/s",
);
pub(in crate::figure) const DS_RESTORE: [Value; 1] = one_value(
    F::DatastoreRestore,
    "datastore_restore",
    "datastore_restore_mib_per_s",
    "DS RESTORE",
    "MB/s",
);
pub(in crate::figure) const DS_VERIFY: [Value; 1] = one_value(
    F::DatastoreVerify,
    "datastore_verify",
    "datastore_verify_mib_per_s",
    "DS VERIFY",
    "MB/s",
);
pub(in crate::figure) const DS_MARK: [Value; 1] = one_value(
    F::DatastoreGcMark,
    "datastore_gc_mark",
    "datastore_gc_mark_chunks_per_s",
    "DS GC MARK",
    "chunks/s",
);
pub(in crate::figure) const DS_SWEEP_DIRS: [Value; 1] = one_value(
    F::DatastoreGcSweepDirs,
    "datastore_gc_sweep_dirs",
    "datastore_gc_sweep_dirs_per_s",
    "DS SWEEP DIRS",
    "dirs/s",
);
pub(in crate::figure) const DS_SWEEP: [Value; 1] = one_value(
    F::DatastoreGcSweep,
    "datastore_gc_sweep",
    "datastore_gc_sweep_chunks_per_s",
    "DS SWEEP",
    "chunks/s",
);
