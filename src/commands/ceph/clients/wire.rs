//! What crosses ssh in a run from several clients: the job a client is
//! given ([`ClientJob`], as `ceph-client`'s arguments), its one line of
//! JSON back ([`ClientAnswer`]), and the figure the run keeps of it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use crate::commands::ceph::network::CephLink;
use crate::commands::ceph::osd_bench::BenchFigure;

/// One client's part of a job run from several nodes at once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientFigure {
    pub node: String,
    pub figure: Option<BenchFigure>,
    /// How long after the agreed start its bench started, ms (by its clock).
    pub skew_ms: Option<f64>,
    /// Its node's link on Ceph's public network.
    pub link: Option<CephLink>,
    /// Why it has no figure.
    pub error: Option<String>,
}

/// What a client is asked to run: one job in its own namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientJob {
    pub conf: PathBuf,
    pub pool: String,
    /// Its RADOS namespace and the name of its scratch image.
    pub namespace: String,
    /// A key of [`crate::commands::ceph::scratch::RADOS_JOBS`] or
    /// [`crate::commands::ceph::scratch::RBD_JOBS`].
    pub job: String,
    pub seconds: u32,
    /// At most this many bytes written (a rados write).
    pub cap: Option<u64>,
    /// Bytes an rbd job moves.
    pub rbd_bytes: u64,
    /// When to start, ms since the epoch.
    pub start_at_ms: u64,
}

/// What `pveprobe ceph-client` prints: one line of JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientAnswer {
    pub pveprobe_version: String,
    pub node: String,
    /// When its bench started, ms since the epoch.
    pub started_ms: Option<u64>,
    pub figure: Option<BenchFigure>,
    pub error: Option<String>,
    pub link: Option<CephLink>,
    /// What it could not remove after being stopped.
    #[serde(default)]
    pub left_behind: Vec<String>,
}

impl ClientFigure {
    /// A client's answer to a job told to start at `start_at` (ms).
    pub(super) fn take(&mut self, a: ClientAnswer, start_at: u64) {
        if let Some(why) = crate::nodes::remote::other_version(&a.pveprobe_version) {
            self.error = Some(why);
            return;
        }
        self.skew_ms = a.started_ms.map(|s| s as f64 - start_at as f64);
        self.figure = a.figure;
        self.link = a.link;
        self.error = a.error;
    }
}
