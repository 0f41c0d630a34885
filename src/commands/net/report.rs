//! What a network run found: a row per link and pair of nodes, each
//! node's interfaces and knet statistics, and hints against the Proxmox
//! VE documentation's figures. Written as JSON (`kind: "net"`); the text
//! matrix and the CSV are made from it, and `compare` reads its figures.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::links::{LinkDef, LinkKind};
use super::serve::ServeStats;
use crate::figure::Figure;
use crate::figure::projection::Facts;
use crate::figure::projection::net::NetFacts;
use crate::figure::projection::{Context, Entry, Project, Projection};
use crate::model::hint::Hint;
use crate::model::latency::LatencySummary;
use crate::model::net::{PathMtu, Rtt, SecureStream, Throughput, Way};
use crate::nodes::iface::Iface;
use crate::output::result::{JsonReport, XFigure};
use pveprobe_parse::knet::KnetStats;

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
    pub status: crate::nodes::remote::Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its nodeid in corosync.conf (knet's statistics name nodes by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corosync_nodeid: Option<u32>,
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

impl End {
    /// How ssh reaches this end's node.
    pub fn node(&self) -> crate::nodes::members::Node {
        crate::nodes::members::Node {
            name: self.node.clone(),
            address: self.node_address.clone(),
            id: None,
            online: Some(true),
        }
    }
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
    /// The secure migration channel each way (the migration link, with
    /// throughput): one stream through ssh as qemu-server opens it. Its
    /// insecure beside is `throughput`'s one stream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secure: Vec<SecureStream>,
    /// What the responder counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responder: Option<ServeStats>,
    pub seconds: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<Hint>,
}

impl PairResult {
    /// A pair of a link with its status and nothing measured yet.
    pub fn new(link: &str, kind: LinkKind, a: End, b: End, status: PairStatus) -> Self {
        PairResult {
            link: link.to_string(),
            kind,
            a,
            b,
            status,
            detail: None,
            latency: None,
            path_mtu: None,
            throughput: Vec::new(),
            throughput_skipped: None,
            secure: Vec::new(),
            responder: None,
            seconds: 0.0,
            hints: Vec::new(),
        }
    }

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

    /// This pair's hints, from its figures: each about the pair
    /// ([`PairResult::instance`]).
    pub fn hints_of(&self) -> Vec<Hint> {
        let mut hints = Vec::new();
        let subject = self.instance();
        let mut hint = |code: &str, message: String| {
            hints.push(Hint::new(code, subject.clone(), message));
        };
        self.latency_hints(&mut hint);
        self.mtu_hints(&mut hint);
        self.throughput_hints(&mut hint);
        for s in &self.secure {
            if let Some(message) = self.secure_cpu_bound(s) {
                hint("migration-secure-cpu-bound", message);
            }
        }
        hints
    }

    /// Corosync's latency and jitter against the PVE docs, and lost probes.
    fn latency_hints(&self, hint: &mut impl FnMut(&str, String)) {
        if let Some(l) = &self.latency {
            if self.kind == LinkKind::Corosync && l.received > 0 {
                if l.p99_ms > COROSYNC_UNSTABLE_MS {
                    hint(
                        "corosync-latency-unstable",
                        format!(
                            "corosync latency p99 {:.3} ms: above about {COROSYNC_UNSTABLE_MS} ms a cluster of more than three nodes is unlikely to stay stable (PVE docs)",
                            l.p99_ms
                        ),
                    );
                } else if l.p99_ms > COROSYNC_LATENCY_MS {
                    hint(
                        "corosync-latency-high",
                        format!(
                            "corosync latency p99 {:.3} ms: the PVE docs require corosync links below {COROSYNC_LATENCY_MS} ms",
                            l.p99_ms
                        ),
                    );
                }
                if l.jitter_ms > JITTER_MS {
                    hint(
                        "corosync-jitter",
                        format!(
                            "jitter {:.3} ms: corosync is sensitive to jitter",
                            l.jitter_ms
                        ),
                    );
                }
            }
            if l.received < l.sent {
                hint(
                    "net-loss",
                    format!(
                        "{} of {} probes lost ({:.1}%)",
                        l.sent - l.received,
                        l.sent,
                        l.loss_percent()
                    ),
                );
            }
        }
    }

    /// The two ends' MTUs, and the path's each way.
    fn mtu_hints(&self, hint: &mut impl FnMut(&str, String)) {
        if let (Some(am), Some(bm)) = (self.a.mtu, self.b.mtu)
            && am != bm
        {
            hint(
                "mtu-mismatch",
                format!(
                    "MTU mismatch: {} {} has {am}, {} {} has {bm}; packets larger than the smaller MTU are dropped on the way",
                    self.a.node,
                    self.a.dev.as_deref().unwrap_or("?"),
                    self.b.node,
                    self.b.dev.as_deref().unwrap_or("?"),
                ),
            );
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
            for message in [
                low(p.forward, &self.a, &self.b),
                low(p.back, &self.b, &self.a),
            ]
            .into_iter()
            .flatten()
            {
                hint("path-mtu-low", message);
            }
        }
    }

    /// One way's TCP throughput well below the other's.
    fn throughput_hints(&self, hint: &mut impl FnMut(&str, String)) {
        for one in [true, false] {
            if let (Some(f), Some(b)) = (self.tcp(Way::Forward, one), self.tcp(Way::Back, one)) {
                let (lo, hi) = (
                    f.mbit_per_s.min(b.mbit_per_s),
                    f.mbit_per_s.max(b.mbit_per_s),
                );
                if hi > 0.0 && lo < ASYMMETRY * hi {
                    hint(
                        "throughput-asymmetric",
                        format!(
                            "asymmetric throughput ({} stream{}): {}->{} {:.0}, {}->{} {:.0} Mbit/s",
                            f.streams,
                            if f.streams == 1 { "" } else { "s" },
                            self.a.node,
                            self.b.node,
                            f.mbit_per_s,
                            self.b.node,
                            self.a.node,
                            b.mbit_per_s
                        ),
                    );
                }
            }
        }
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
    /// How this cluster migrates: datacenter.cfg's `migration: type=`
    /// (`secure`, PVE's default, or `insecure`), when the file says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_type: Option<String>,
    pub links: Vec<LinkDef>,
    pub nodes: Vec<NetNode>,
    pub pairs: Vec<PairResult>,
    /// Each node's largest running VMs moving over the migration link,
    /// each way measured: how long at the secure, insecure and link figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<crate::model::net::Move>,
    /// Cluster-wide hints (corosync sharing a network with bulk traffic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<Hint>,
    /// What was not measured and why (a link with no pair, a missing file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Every figure of every measured pair, as results carry them
    /// (`instance`: `LINK A-B`), for `compare`.
    pub figures: Vec<XFigure>,
}

impl crate::results::Stored for NetReport {
    const KIND: Option<&'static str> = Some(KIND);
    const SCHEMA_VERSION: u32 = SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    fn results(self) -> Vec<crate::results::Named> {
        let who = self.cluster.clone();
        vec![crate::results::Named::new(who, self.as_result())]
    }
}

/// A pair's network figures, each an entry for its link and pair
/// (`instance` = `LINK A-B`): none where the pair was not measured.
impl Project for PairResult {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        if !self.status.measured() {
            return Projection::default();
        }
        let net = |latency, back| Facts::Net(NetFacts { latency, back });
        let entry = match figure {
            Figure::NetRtt => self.latency.as_ref().filter(|l| l.received > 0).map(|l| {
                let summary = LatencySummary {
                    count: u64::from(l.received),
                    mean_us: l.mean_ms * 1000.0,
                    p50_us: l.p50_ms * 1000.0,
                    p90_us: l.p90_ms * 1000.0,
                    p99_us: l.p99_ms * 1000.0,
                    p99_9_us: None,
                    max_us: l.max_ms * 1000.0,
                };
                Entry::once(l.p50_ms, net(Some(summary), None))
            }),
            Figure::NetJitter => self
                .latency
                .as_ref()
                .filter(|l| l.received > 1)
                .map(|l| Entry::once(l.jitter_ms, net(None, None))),
            Figure::NetLoss => self
                .latency
                .as_ref()
                .filter(|l| l.sent > 0)
                .map(|l| Entry::once(l.loss_percent(), net(None, None))),
            Figure::NetPathMtu => self.path_mtu.as_ref().and_then(|m| {
                let back = m.back.map(f64::from);
                Some(Entry::once(f64::from(m.forward?), net(None, back)))
            }),
            Figure::NetMigrationSecure => self.secure_way(Way::Forward).map(|f| {
                let back = self.secure_way(Way::Back).map(|b| b.mib_per_s);
                Entry::once(f.mib_per_s, net(None, back))
            }),
            Figure::NetTcp | Figure::NetTcpStreams => {
                let one = figure == Figure::NetTcp;
                self.tcp(Way::Forward, one).map(|f| {
                    let back = self.tcp(Way::Back, one).map(|b| b.mbit_per_s);
                    Entry::once(f.mbit_per_s, net(None, back))
                })
            }
            _ => None,
        };
        Projection {
            entries: entry
                .into_iter()
                .map(|e| Entry {
                    instance: Some(self.instance()),
                    ..e
                })
                .collect(),
            ..Projection::default()
        }
    }
}

/// The figures of the pairs that were measured, as every result carries
/// them (`key`, `instance` = `LINK A-B`, `value`, `back`): what `compare`
/// ranks.
pub fn figures(pairs: &[PairResult]) -> Vec<XFigure> {
    let context = Context::default();
    Figure::NETWORK
        .into_iter()
        .flat_map(|figure| {
            pairs
                .iter()
                .flat_map(move |p| p.project(figure, &context).entries)
                .map(move |e| XFigure::of(figure, e))
        })
        .collect()
}

impl NetReport {
    /// As a result `compare` reads: the network's figures, named after
    /// the cluster.
    pub fn as_result(&self) -> JsonReport {
        JsonReport {
            schema_version: crate::output::result::SCHEMA_VERSION,
            pveprobe_version: self.pveprobe_version.clone(),
            timestamp: self.timestamp.clone(),
            path: format!(
                "network of {}",
                self.cluster.as_deref().unwrap_or("the nodes")
            ),
            host: crate::model::host::HostInfo {
                hostname: self.cluster.clone(),
                ..Default::default()
            },
            extended: self.figures.clone(),
            notes: self.notes.clone(),
            ..JsonReport::default()
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::figure::Field;
    use crate::model::net::Rtt;

    pub(crate) fn end(node: &str, dev: &str, mtu: u32) -> End {
        End {
            node: node.into(),
            node_address: String::new(),
            address: Some("10.0.0.1".parse().unwrap()),
            dev: Some(dev.into()),
            mtu: Some(mtu),
        }
    }

    pub(crate) fn rtt(p50: f64, p99: f64, jitter: f64, received: u32) -> Rtt {
        Rtt {
            sent: 100,
            received,
            rate_pps: 50,
            min_ms: p50 / 2.0,
            mean_ms: p50,
            p50_ms: p50,
            p90_ms: p99,
            p99_ms: p99,
            max_ms: p99 * 2.0,
            jitter_ms: jitter,
        }
    }

    /// A report of `pairs`, as a run with default options writes it.
    pub(crate) fn report_of(pairs: Vec<PairResult>) -> NetReport {
        NetReport {
            kind: KIND.into(),
            schema_version: SCHEMA_VERSION,
            pveprobe_version: "0.1.0".into(),
            timestamp: None,
            cluster: Some("testc".into()),
            settings: NetSettings {
                count: 100,
                rate_pps: 50,
                throughput: true,
                seconds: 5,
                streams: 4,
                parallel: false,
                port: None,
            },
            migration_type: None,
            links: Vec::new(),
            nodes: Vec::new(),
            figures: figures(&pairs),
            pairs,
            moves: Vec::new(),
            hints: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A secure stream `way` at `mib` MiB/s, nothing else known.
    pub(crate) fn secure_stream(way: Way, mib: f64) -> SecureStream {
        SecureStream {
            way,
            mib_per_s: mib,
            bytes: 1,
            seconds: 1.0,
            cipher: None,
            mac: None,
            ssh_cpu_percent: None,
            sshd_cpu_percent: None,
            ssh_wait_percent: None,
            sshd_wait_percent: None,
            cipher_mib_per_s: None,
            aes_ni: None,
            command: Vec::new(),
        }
    }

    /// A pair on the migration link, pve1 to pve2, both on eth2.
    pub(crate) fn migration_pair() -> PairResult {
        pair(
            "migration",
            LinkKind::Migration,
            end("pve1", "eth2", 1500),
            end("pve2", "eth2", 1500),
        )
    }

    /// One TCP stream's figure, `way`, at `mbit_per_s`.
    pub(crate) fn one_stream(way: Way, mbit_per_s: f64) -> Throughput {
        Throughput {
            way,
            streams: 1,
            mbit_per_s,
            bytes: 1,
            seconds: 1.0,
        }
    }

    pub(crate) fn pair(link: &str, kind: LinkKind, a: End, b: End) -> PairResult {
        PairResult {
            link: link.into(),
            kind,
            a,
            b,
            status: PairStatus::Ok,
            detail: None,
            latency: Some(rtt(0.05, 0.1, 0.01, 100)),
            path_mtu: Some(PathMtu {
                forward: Some(1500),
                back: Some(1500),
                tried_up_to: 1500,
            }),
            throughput: Vec::new(),
            throughput_skipped: None,
            secure: Vec::new(),
            responder: None,
            seconds: 1.0,
            hints: Vec::new(),
        }
    }

    pub(crate) fn tcp(way: Way, streams: u32, mbit: f64) -> Throughput {
        Throughput {
            way,
            streams,
            mbit_per_s: mbit,
            bytes: 1,
            seconds: 1.0,
        }
    }

    /// The schema names the network's figures, and a report passes it.
    #[test]
    fn the_schema_knows_the_figures_and_takes_a_report() {
        let schema = crate::model::testutil::schema("net");
        let names = crate::model::testutil::enum_names;
        let f = &schema["$defs"]["netfigure"]["properties"];
        let keys: Vec<String> = Figure::NETWORK
            .iter()
            .map(|f| f.key().to_string())
            .collect();
        let labels: Vec<String> = Figure::NETWORK
            .iter()
            .map(|f| f.label().to_string())
            .collect();
        assert_eq!((names(&f["key"]), names(&f["label"])), (keys, labels));
        let mut p = migration_pair();
        p.throughput = vec![tcp(Way::Forward, 4, 940.0), tcp(Way::Back, 4, 930.0)];
        p.hints = vec![crate::model::hint::Hint::new("net-loss", "x", "y")];
        let mut report = report_of(vec![p.clone()]);
        report.timestamp = Some("2026-12-01T10:00:00Z".into());
        report.cluster = None;
        report.settings.port = Some(9765);
        report.links = crate::commands::net::links::plan(
            None,
            None,
            None,
            &["migration=10.2.0.0/24".into()],
            &[],
        )
        .unwrap();
        report.nodes = vec![NetNode {
            name: "pve1".into(),
            address: "10.0.0.1".into(),
            status: crate::nodes::remote::Status::Ok,
            detail: None,
            corosync_nodeid: Some(1),
            interfaces: crate::nodes::iface::interfaces().unwrap(),
            knet: Some(
                pveprobe_parse::knet::parse("stats.knet.node2.link0.connected (u8) = 1\n").unwrap(),
            ),
        }];
        let doc = serde_json::to_value(&report).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        let mut bad = doc.clone();
        bad["pairs"][0]["status"] = "fine".into();
        assert!(!validator.is_valid(&bad));
        // And it reads back as written.
        let back: NetReport = serde_json::from_value(doc).unwrap();
        assert_eq!(
            back.pairs[0].a.node_address, "",
            "how ssh reached a node is not written"
        );
        assert_eq!(back.figures, report.figures);
    }

    #[test]
    fn hints_follow_the_pve_docs_figures() {
        let ok = pair(
            "corosync0",
            LinkKind::Corosync,
            end("a", "eth1", 1500),
            end("b", "eth1", 1500),
        );
        assert!(ok.hints_of().is_empty(), "{:?}", ok.hints_of());
        let mut slow = ok.clone();
        slow.latency = Some(rtt(4.0, 6.0, 1.5, 97));
        let h = slow.hints_of();
        assert!(
            h[0].message.contains("p99 6.000 ms") && h[0].message.contains("below 5 ms"),
            "{h:?}"
        );
        assert!(h[1].message.contains("jitter 1.500 ms"), "{h:?}");
        assert!(h[2].message.contains("3 of 100 probes lost"), "{h:?}");
        slow.latency = Some(rtt(9.0, 12.0, 0.5, 100));
        assert!(slow.hints_of()[0].message.contains("more than three nodes"));
        // The same figures on a migration link: only the loss would count.
        let mut migration = slow.clone();
        migration.kind = LinkKind::Migration;
        assert!(
            migration.hints_of().is_empty(),
            "{:?}",
            migration.hints_of()
        );

        let mut mtu = pair(
            "corosync0",
            LinkKind::Corosync,
            end("a", "eth1", 1500),
            end("b", "eth1", 1400),
        );
        mtu.path_mtu = Some(PathMtu {
            forward: Some(1404),
            back: Some(1400),
            tried_up_to: 1500,
        });
        let h = mtu.hints_of();
        assert!(
            h[0].message
                .starts_with("MTU mismatch: a eth1 has 1500, b eth1 has 1400"),
            "{h:?}"
        );
        assert_eq!(h.len(), 1, "both paths carry the smaller MTU: {h:?}");
        let mut middle = pair(
            "x",
            LinkKind::Named,
            end("a", "eth1", 9000),
            end("b", "eth1", 9000),
        );
        middle.path_mtu = Some(PathMtu {
            forward: Some(1500),
            back: None,
            tried_up_to: 9000,
        });
        let h = middle.hints_of();
        assert!(
            h[0].message
                .contains("path MTU a->b is 1500, below the interfaces' 9000"),
            "{h:?}"
        );
        assert!(h[1].message.contains("b->a"), "{h:?}");

        let mut asym = pair(
            "migration",
            LinkKind::Migration,
            end("a", "e", 1500),
            end("b", "e", 1500),
        );
        asym.throughput = vec![
            tcp(Way::Forward, 1, 940.0),
            tcp(Way::Back, 1, 500.0),
            tcp(Way::Forward, 4, 941.0),
            tcp(Way::Back, 4, 900.0),
        ];
        let h = asym.hints_of();
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(
            h[0].message.contains("1 stream): a->b 940, b->a 500"),
            "{h:?}"
        );
    }

    #[test]
    fn figures_carry_each_pair_as_an_instance() {
        let mut p = migration_pair();
        p.throughput = vec![tcp(Way::Forward, 1, 940.0), tcp(Way::Back, 1, 930.0)];
        let mut down = p.clone();
        down.b.node = "pve3".into();
        down.status = PairStatus::NodeDown;
        let figs = figures(&[p.clone(), down]);
        let keys: Vec<_> = figs
            .iter()
            .map(|f| (f.key.as_str(), f.instance.as_deref().unwrap()))
            .collect();
        assert_eq!(
            keys,
            [
                ("net_rtt", "migration pve1-pve2"),
                ("net_jitter", "migration pve1-pve2"),
                ("net_loss", "migration pve1-pve2"),
                ("net_path_mtu", "migration pve1-pve2"),
                ("net_tcp", "migration pve1-pve2"),
            ],
            "no figure of a pair not measured, no N-stream figure without its run"
        );
        assert_eq!(figs[4].facts.number(Field::Back), Some(930.0));
        assert_eq!(figs[0].facts.number(Field::P99Ms), Some(0.1));
    }

    /// A network document's figures are ranked per link and pair.
    #[test]
    fn net_documents_are_ranked_per_link_and_pair() {
        use crate::model::net::Way;
        use crate::results::{Reader, Readers, render_text, table};
        let readers = Readers::new(vec![Reader::of::<NetReport>()]);
        let parse = |path: &str, text: &str| {
            readers
                .parse(std::path::Path::new(path), text)
                .unwrap()
                .remove(0)
        };
        let p = migration_pair();
        let report = |rtt_p50: f64, mbit: f64| {
            let mut q = p.clone();
            q.latency = Some(rtt(rtt_p50, 0.1, 0.01, 100));
            q.throughput = vec![tcp(Way::Forward, 1, mbit), tcp(Way::Back, 1, mbit)];
            let r = report_of(vec![q]);
            serde_json::to_string(&r).unwrap()
        };
        let before = parse("before.json", &report(0.05, 940.0));
        let after = parse("after.json", &report(0.5, 470.0));
        assert_eq!(before.name, "testc (before.json)");
        let table = table(&[before, after]);
        let text = render_text(&table);
        for label in ["NET RTT", "NET TCP 1 STREAM", "NET TCP 1 STREAM (back)"] {
            let row = text
                .lines()
                .find(|l| {
                    l.starts_with(label)
                        && l.contains("migration pve1-pve2")
                        && !l.starts_with(&format!("{label} ("))
                })
                .unwrap_or_else(|| panic!("no {label} row in\n{text}"));
            assert!(row.contains("worse"), "{row}");
        }
    }
}
