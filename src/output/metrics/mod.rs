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

pub mod gauges;
pub mod influx;
pub mod prometheus;
pub mod servers;

use crate::output::Format;
use crate::output::result::JsonReport;

/// `results` in the metrics `format`; nothing in another format.
pub fn render(format: Format, results: &[MetricsSource]) -> String {
    match format {
        Format::Influx => influx::render(results),
        Format::Prometheus => prometheus::render(results),
        _ => String::new(),
    }
}

/// One probe result and the node it was measured on.
#[derive(Debug, Clone, Copy)]
pub struct MetricsSource<'a> {
    /// The node's name as PVE writes it (`host=NODE` in PVE's own
    /// metrics): the host name up to its first dot. `None` when the result
    /// names no host.
    pub node: Option<&'a str>,
    pub result: &'a JsonReport,
}

impl<'a> MetricsSource<'a> {
    /// A result named by the host it records (`host.hostname`).
    pub fn of(result: &'a JsonReport) -> Self {
        MetricsSource {
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
        MetricsSource {
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
    use crate::figure::projection::Facts;
    use crate::figure::{self, Field, Group};
    use crate::output::result::{JsonFigure, XFigure};

    /// The known report with a number (or a text) for every value of the
    /// list: what it lacks is added. A value it cannot fill fails here; a
    /// new kind of field needs its line below.
    pub(crate) fn every_value() -> JsonReport {
        let mut doc = crate::output::result::known::result();
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
            // Every number a kind of facts may hold, at `n`: each kind
            // takes the ones it has.
            let numbers = serde_json::json!({
                "write_iops": n,
                "first_10s_mib_per_s": n,
                "last_10s_mib_per_s": n,
                "slowest_second": { "second": 7, "mib_per_s": n },
            });
            let facts = || {
                let serde_json::Value::Object(map) = numbers.clone() else {
                    unreachable!()
                };
                Facts::read(spec.facts, map).unwrap()
            };
            if !doc.extended.iter().any(|f| f.key == spec.key) {
                doc.extended.push(XFigure {
                    key: spec.key.into(),
                    instance: spec.per.map(|per| format!("{per}=1")),
                    label: spec.label.into(),
                    unit: spec.unit.into(),
                    value: n,
                    samples: Vec::new(),
                    facts: facts(),
                });
            }
            for f in doc.extended.iter_mut().filter(|f| f.key == spec.key) {
                if f.facts.number(v.field).is_none() && v.field != Field::Value {
                    f.facts = facts();
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

    #[test]
    fn nodes_are_named_as_pve_names_them() {
        assert_eq!(node_name("pve1.example.com"), "pve1");
        assert_eq!(node_name("pve1"), "pve1");
        let mut doc = crate::output::result::known::result();
        assert_eq!(MetricsSource::of(&doc).node, Some("pve1"));
        assert_eq!(MetricsSource::on("pve7.lan", &doc).node, Some("pve7"));
        assert_eq!(MetricsSource::on("", &doc).node, None);
        doc.host.hostname = Some("node-b.corp.example".into());
        assert_eq!(MetricsSource::of(&doc).node, Some("node-b"));
        doc.host.hostname = None;
        assert_eq!(MetricsSource::of(&doc).node, None);
        assert_eq!(MetricsSource::of(&doc).storage(), None);
    }
}
