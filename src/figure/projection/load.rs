//! `load`'s facts: the workload every worker ran and, for LOAD IOPS,
//! the percentiles of all the cluster's reads. The load report makes
//! their entries, one per phase.

use serde::{Deserialize, Serialize};

use super::{Facet, ms};
use crate::figure::{Field, Method};
use crate::model::latency::LatencySummary;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadFacts {
    /// The job every worker ran: `4K 70% read 80% random 8x16`.
    pub workload: String,
    /// Worker VMs with a result.
    pub vms: usize,
    /// LOAD IOPS: all the cluster's reads, merged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_latency: Option<LatencySummary>,
}

impl Facet for LoadFacts {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::P99Ms => self.read_latency.map(|l| ms(l.p99_us)),
            _ => None,
        }
    }

    fn method(&self, method: Method) -> Option<String> {
        (method == Method::Workload).then(|| self.workload.clone())
    }
}
