//! The network figures' facts (`cluster --net`, `net`): a round trip's
//! latency, or the other way of a figure measured each way. The network
//! report makes their entries, one per link and pair of nodes.

use serde::{Deserialize, Serialize};

use super::{Facet, ms};
use crate::figure::Field;
use crate::model::latency::LatencySummary;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NetFacts {
    /// NET RTT: the round trips' percentiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    /// A figure measured each way: the way back (from the responder to
    /// the measuring node).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub back: Option<f64>,
}

impl Facet for NetFacts {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::P99Ms => self.latency.map(|l| ms(l.p99_us)),
            Field::MaxMs => self.latency.map(|l| ms(l.max_us)),
            Field::Back => self.back,
            _ => None,
        }
    }
}
