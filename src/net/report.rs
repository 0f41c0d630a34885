//! What a network run found: a row per link and pair of nodes, each
//! node's interfaces and knet statistics, and hints against the Proxmox
//! VE documentation's figures. Written as JSON (`kind: "net"`); the text
//! matrix and the CSV are made from it, and `compare` reads its figures.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::iface::Iface;
use super::links::{LinkDef, LinkKind};
use super::serve::ServeStats;
use crate::model::net::{PathMtu, Rtt, Throughput, Way};
use crate::parse::knet::KnetStats;

/// The network document's version.
pub const SCHEMA_VERSION: u32 = 1;
pub const KIND: &str = "net";

/// The PVE docs: corosync links need latencies below 5 ms.
pub const COROSYNC_LATENCY_MS: f64 = 5.0;
/// Above about 10 ms a cluster of more than three nodes is unlikely to stay stable.
pub const COROSYNC_UNSTABLE_MS: f64 = 10.0;
/// Jitter worth naming on a corosync link (corosync is sensitive to it).
pub const JITTER_MS: f64 = 1.0;
/// One way slower than this share of the other: asymmetric.
pub const ASYMMETRY: f64 = 0.8;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetSettings {
    pub count: u32,
    pub rate_pps: u32,
    pub throughput: bool,
    pub seconds: u32,
    pub streams: u32,
    pub parallel: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

/// A node as the run found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetNode {
    pub name: String,
    pub address: String,
    /// `ok`, or why its interfaces are unknown.
    pub status: crate::cluster::remote::Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<Iface>,
    /// knet's own statistics (`corosync-cmapctl -m stats`), where it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knet: Option<KnetStats>,
}

/// What became of one link between two nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairStatus {
    /// Measured, all of it.
    Ok,
    /// Measured, but a part failed (see `detail`).
    Partial,
    /// A node has no address on the link: nothing to measure.
    NotOnLink,
    /// A node did not answer over ssh, or its interfaces are unknown.
    NodeDown,
    /// The responder did not start.
    NoResponder,
    /// The measuring end failed or gave no result.
    Failed,
    /// The responder answered nothing at all.
    NoAnswer,
}

impl PairStatus {
    pub fn word(self) -> &'static str {
        match self {
            PairStatus::Ok => "ok",
            PairStatus::Partial => "partial",
            PairStatus::NotOnLink => "not on link",
            PairStatus::NodeDown => "node down",
            PairStatus::NoResponder => "no responder",
            PairStatus::Failed => "failed",
            PairStatus::NoAnswer => "no answer",
        }
    }

    /// Measured, at least in part.
    pub fn measured(self) -> bool {
        matches!(self, PairStatus::Ok | PairStatus::Partial)
    }
}

/// One end of a pair.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub node: String,
    /// How ssh reaches the node (its members-list address).
    #[serde(skip)]
    pub node_address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<IpAddr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

/// One link between two nodes, measured from `a` (the responder on `b`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    pub link: String,
    pub kind: LinkKind,
    pub a: End,
    pub b: End,
    pub status: PairStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Rtt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_mtu: Option<PathMtu>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throughput: Vec<Throughput>,
    /// Why no throughput was measured on this link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_skipped: Option<String>,
    /// What the responder counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responder: Option<ServeStats>,
    pub seconds: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
}

impl PairResult {
    /// `corosync0 pve1-pve2`: the figures' instance.
    pub fn instance(&self) -> String {
        format!("{} {}-{}", self.link, self.a.node, self.b.node)
    }

    /// The throughput over `streams` streams one way.
    pub fn tcp(&self, way: Way, one: bool) -> Option<&Throughput> {
        self.throughput
            .iter()
            .find(|t| t.way == way && (t.streams == 1) == one)
    }

    /// This pair's hints, from its figures.
    pub fn hints_of(&self) -> Vec<String> {
        let mut hints = Vec::new();
        if let Some(l) = &self.latency {
            if self.kind == LinkKind::Corosync && l.received > 0 {
                if l.p99_ms > COROSYNC_UNSTABLE_MS {
                    hints.push(format!(
                        "corosync latency p99 {:.3} ms: above about {COROSYNC_UNSTABLE_MS} ms a cluster of more than three nodes is unlikely to stay stable (PVE docs)",
                        l.p99_ms
                    ));
                } else if l.p99_ms > COROSYNC_LATENCY_MS {
                    hints.push(format!(
                        "corosync latency p99 {:.3} ms: the PVE docs require corosync links below {COROSYNC_LATENCY_MS} ms",
                        l.p99_ms
                    ));
                }
                if l.jitter_ms > JITTER_MS {
                    hints.push(format!(
                        "jitter {:.3} ms: corosync is sensitive to jitter",
                        l.jitter_ms
                    ));
                }
            }
            if l.received < l.sent {
                hints.push(format!(
                    "{} of {} probes lost ({:.1}%)",
                    l.sent - l.received,
                    l.sent,
                    l.loss_percent()
                ));
            }
        }
        if let (Some(am), Some(bm)) = (self.a.mtu, self.b.mtu)
            && am != bm
        {
            hints.push(format!(
                "MTU mismatch: {} {} has {am}, {} {} has {bm}; packets larger than the smaller MTU are dropped on the way",
                self.a.node,
                self.a.dev.as_deref().unwrap_or("?"),
                self.b.node,
                self.b.dev.as_deref().unwrap_or("?"),
            ));
        }
        if let Some(p) = &self.path_mtu {
            let low = |got: Option<u32>, from: &End, to: &End| -> Option<String> {
                let mtu = from.mtu?.min(to.mtu.unwrap_or(u32::MAX)).min(p.tried_up_to);
                match got {
                    Some(g) if g < mtu => Some(format!(
                        "path MTU {}->{} is {g}, below the interfaces' {mtu}: a device on the path drops larger packets",
                        from.node, to.node
                    )),
                    None => Some(format!(
                        "no probe of even the smallest size crossed {}->{} with Don't Fragment set",
                        from.node, to.node
                    )),
                    _ => None,
                }
            };
            hints.extend(low(p.forward, &self.a, &self.b));
            hints.extend(low(p.back, &self.b, &self.a));
        }
        for one in [true, false] {
            if let (Some(f), Some(b)) = (self.tcp(Way::Forward, one), self.tcp(Way::Back, one)) {
                let (lo, hi) = (
                    f.mbit_per_s.min(b.mbit_per_s),
                    f.mbit_per_s.max(b.mbit_per_s),
                );
                if hi > 0.0 && lo < ASYMMETRY * hi {
                    hints.push(format!(
                        "asymmetric throughput ({} stream{}): {}->{} {:.0}, {}->{} {:.0} Mbit/s",
                        f.streams,
                        if f.streams == 1 { "" } else { "s" },
                        self.a.node,
                        self.b.node,
                        f.mbit_per_s,
                        self.b.node,
                        self.a.node,
                        b.mbit_per_s
                    ));
                }
            }
        }
        hints
    }
}

/// What `cluster --net` and `net` write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetReport {
    pub kind: String,
    pub schema_version: u32,
    pub pveprobe_version: String,
    pub timestamp: Option<String>,
    pub cluster: Option<String>,
    pub settings: NetSettings,
    pub links: Vec<LinkDef>,
    pub nodes: Vec<NetNode>,
    pub pairs: Vec<PairResult>,
    /// Cluster-wide hints (corosync sharing a network with bulk traffic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
    /// What was not measured and why (a link with no pair, a missing file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl NetReport {
    /// 0: every pair of every link measured; 1: some not; 4: a node did
    /// not answer.
    pub fn exit_status(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        if self.nodes.iter().any(|n| !n.status.answered()) {
            Exit::NodeDidNotAnswer
        } else if self
            .pairs
            .iter()
            .any(|p| p.status != PairStatus::Ok && p.status != PairStatus::NotOnLink)
        {
            Exit::NotMeasured
        } else {
            Exit::Ok
        }
    }
}
