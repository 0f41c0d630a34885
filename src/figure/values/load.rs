//! The values of `load`'s figures: the cluster's totals under many guests
//! at once, one entry per phase of the run (`read`, `70-30`, a latency
//! target's steps), and the highest IOPS within a latency target.

use super::super::Figure;
use super::super::spec::{Aggregate, Better, Field, Group, Kind, Method, Spec, Value};
use super::others::spec;
use super::probe::{main, more};
use Aggregate::{Max, Sum};
use Better::{Higher, Lower};
use Figure as F;

/// A `load` figure: once per phase (or per target), its facts the
/// workload every worker ran, which changes what it means.
pub(in crate::figure) const fn load(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    per: &'static str,
    values: &'static [Value],
    decimals: usize,
) -> Spec {
    Spec {
        per: Some(per),
        decimals,
        facts: Kind::Load,
        ..spec(key, label, unit, Group::Load, values, &[Method::Workload])
    }
}

pub(in crate::figure) const LOAD_IOPS: [Value; 2] = [
    main(
        F::LoadIops,
        "load_iops",
        "load_iops",
        ("LOAD", "IOPS"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::LoadIops,
        ("load_read_p99", "load_read_p99_ms", " (read p99)"),
        Field::P99Ms,
        ("LOAD R p99", "ms"),
        Some(Lower),
        Some(Max),
    ),
];
pub(in crate::figure) const LOAD_MIB_S: [Value; 1] = [main(
    F::LoadThroughput,
    "load_throughput",
    "load_mib_per_s",
    ("LOAD", "MB/s"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const LOAD_WRITE_P99: [Value; 1] = [main(
    F::LoadWriteP99,
    "load_write_p99",
    "load_write_p99_ms",
    ("LOAD W p99", "ms"),
    Some(Lower),
    Some(Max),
)];
pub(in crate::figure) const LOAD_FAIRNESS: [Value; 1] = [main(
    F::LoadVmFairness,
    "load_vm_fairness",
    "load_vm_fairness",
    ("FAIRNESS", "share"),
    Some(Higher),
    None,
)];
pub(in crate::figure) const LOAD_TARGET: [Value; 1] = [main(
    F::LoadTargetIops,
    "load_target_iops",
    "load_target_iops",
    ("LOAD IN TARGET", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
