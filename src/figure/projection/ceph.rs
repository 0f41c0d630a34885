//! `ceph`'s facts: the nodes a pool job ran from. The ceph report makes
//! their entries, one per OSD or pool.

use serde::{Deserialize, Serialize};

use super::Facet;
use crate::figure::Method;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CephFacts {
    /// A pool job run from several nodes at once (`--clients`): their
    /// names; empty: from the node the run was on alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<String>,
}

impl Facet for CephFacts {
    fn method(&self, method: Method) -> Option<String> {
        (method == Method::Clients).then(|| {
            if self.clients.is_empty() {
                "one client".into()
            } else {
                format!(
                    "{} clients: {}",
                    self.clients.len(),
                    self.clients.join(", ")
                )
            }
        })
    }
}
