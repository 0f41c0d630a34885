//! A probe run's figures as metrics, for the dashboards PVE already feeds:
//! InfluxDB's line protocol as PVE's External Metric Server writes it
//! ([`influx`], `--output-format influx`) and Prometheus' text format for
//! node_exporter's textfile collector ([`prometheus`], `--output-format
//! prometheus`). See `docs/output.md`.
//!
//! Both walk the list of figures ([`crate::figure::values`]) over one or
//! more results, each with the node that measured it: one for a probe run,
//! one per storage for `--storage all`, one per node for `pveprobe
//! cluster`. Neither names a figure: a figure added to the list comes out
//! in both, and a value with a unit the Prometheus table lacks fails its
//! test.

pub mod influx;
pub mod prometheus;

use crate::report::json::JsonReport;

/// One probe result and the node it was measured on.
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    /// The node's name as PVE writes it (`host=NODE` in PVE's own
    /// metrics): the host name up to its first dot. `None` when the result
    /// names no host.
    pub node: Option<&'a str>,
    pub result: &'a JsonReport,
}

impl<'a> Measured<'a> {
    /// A result named by the host it records (`host.hostname`).
    pub fn of(result: &'a JsonReport) -> Self {
        Measured {
            node: result
                .host
                .hostname
                .as_deref()
                .map(node_name)
                .filter(|n| !n.is_empty()),
            result,
        }
    }

    /// A result measured on `node`: a cluster member, or this node for
    /// `--storage all`.
    pub fn on(node: &'a str, result: &'a JsonReport) -> Self {
        Measured {
            node: Some(node_name(node)).filter(|n| !n.is_empty()),
            result,
        }
    }

    /// `--storage`: the PVE storage's ID and type.
    pub fn storage(&self) -> Option<(&'a str, &'a str)> {
        self.result
            .pve_storage
            .as_ref()
            .map(|s| (s.id.as_str(), s.kind.as_str()))
    }
}

/// A host name as PVE names its node: up to the first dot
/// (`PVE::INotify::nodename` strips the domain the same way).
pub fn node_name(hostname: &str) -> &str {
    hostname.split('.').next().unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::figure::{self, Field, Group};
    use crate::report::json::tests::known_report;
    use crate::report::json::{JsonFigure, SlowestSecond, XFigure};

    /// The known report with a number (or a text) for every value of the
    /// list: what it lacks is added. A value it cannot fill fails here; a
    /// new kind of field needs its line below.
    pub(crate) fn every_value() -> JsonReport {
        let mut doc = JsonReport::from_report(&known_report());
        for (i, v) in figure::values().enumerate() {
            if !doc.readings(v).is_empty() || !doc.cell(v).is_empty() {
                continue;
            }
            let spec = v.figure.spec();
            let n = 1000.0 + i as f64;
            if spec.group == Group::Pveperf {
                doc.figures.set(
                    v.figure,
                    Some(JsonFigure {
                        label: spec.label.into(),
                        unit: spec.unit.into(),
                        value: n,
                        samples: vec![n],
                        min: n,
                        max: n,
                        ..JsonFigure::default()
                    }),
                );
                continue;
            }
            if !doc.extended.iter().any(|f| f.key == spec.key) {
                doc.extended.push(XFigure {
                    key: spec.key.into(),
                    instance: spec.per.map(|per| format!("{per}=1")),
                    label: spec.label.into(),
                    unit: spec.unit.into(),
                    value: n,
                    ..XFigure::default()
                });
            }
            for f in doc.extended.iter_mut().filter(|f| f.key == spec.key) {
                match v.field {
                    Field::WriteIops => f.write_iops = Some(n),
                    Field::First10s => f.first_10s_mib_per_s = Some(n),
                    Field::Last10s => f.last_10s_mib_per_s = Some(n),
                    Field::SlowestSecond => {
                        f.slowest_second = Some(SlowestSecond {
                            second: 7,
                            mib_per_s: n,
                        })
                    }
                    _ => {}
                }
            }
        }
        for v in figure::values() {
            assert!(
                !doc.readings(v).is_empty() || !doc.cell(v).is_empty(),
                "every_value() cannot fill {} ({:?}): add its field",
                v.column,
                v.field
            );
        }
        doc
    }

    /// A cluster run: pve1 and pve2 answered, pve3 did not.
    fn cluster() -> crate::cluster::ClusterReport {
        use crate::cluster::remote::Status;
        use crate::cluster::{ClusterReport, KIND, NodeReport, SCHEMA_VERSION};
        let node = |name: &str, status: Status, hostname: Option<&str>| {
            let result = hostname.map(|h| {
                let mut doc = JsonReport::from_report(&known_report());
                doc.host.hostname = Some(h.into());
                doc
            });
            NodeReport {
                name: name.into(),
                address: "192.0.2.1".into(),
                status,
                detail: None,
                exit_status: Some(0),
                seconds: Some(1.0),
                outliers: Vec::new(),
                result,
            }
        };
        ClusterReport {
            kind: KIND.into(),
            schema_version: SCHEMA_VERSION,
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: Some("2026-11-29T12:00:00Z".into()),
            path: "/var/lib/vz".into(),
            cluster: Some("prod".into()),
            parallel: false,
            command: "pveprobe --output-format json -- /var/lib/vz".into(),
            timeout_s: 60.0,
            nodes: vec![
                node("pve1", Status::Ok, Some("pve1.example.com")),
                // The member's name, not the host name its result records.
                node("pve2", Status::Ok, Some("other-name")),
                node("pve3", Status::Unreachable, None),
            ],
            figures: Vec::new(),
        }
    }

    #[test]
    fn a_cluster_writes_each_node_that_answered_under_its_own_name() {
        use crate::output::{Format, render};
        let report = cluster();
        let prom = render(&report, Format::Prometheus);
        let fsyncs: Vec<&str> = prom
            .lines()
            .filter(|l| l.starts_with("pveprobe_fsyncs_per_second{"))
            .collect();
        assert_eq!(fsyncs.len(), 2, "{prom}");
        assert!(fsyncs[0].starts_with(r#"pveprobe_fsyncs_per_second{node="pve1","#));
        assert!(fsyncs[1].starts_with(r#"pveprobe_fsyncs_per_second{node="pve2","#));
        assert_eq!(
            prom.matches("# TYPE pveprobe_fsyncs_per_second ").count(),
            1
        );
        assert!(!prom.contains("pve3") && !prom.contains("other-name"));

        let influx = render(&report, Format::Influx);
        let hosts: Vec<&str> = influx
            .lines()
            .filter(|l| !l.contains(",instance="))
            .map(|l| l.split(',').nth(1).unwrap())
            .collect();
        assert_eq!(hosts, ["host=pve1", "host=pve2"], "{influx}");
        // Each node's lines are its whole result: the same as its own run's.
        let alone = influx::render(&[Measured::on(
            "pve1",
            report.nodes[0].result.as_ref().unwrap(),
        )]);
        assert!(influx.starts_with(&alone), "{influx}");
    }

    #[test]
    fn nodes_are_named_as_pve_names_them() {
        assert_eq!(node_name("pve1.example.com"), "pve1");
        assert_eq!(node_name("pve1"), "pve1");
        let mut doc = JsonReport::from_report(&known_report());
        assert_eq!(Measured::of(&doc).node, Some("pve1"));
        assert_eq!(Measured::on("pve7.lan", &doc).node, Some("pve7"));
        assert_eq!(Measured::on("", &doc).node, None);
        doc.host.hostname = Some("node-b.corp.example".into());
        assert_eq!(Measured::of(&doc).node, Some("node-b"));
        doc.host.hostname = None;
        assert_eq!(Measured::of(&doc).node, None);
        assert_eq!(Measured::of(&doc).storage(), None);
    }
}
