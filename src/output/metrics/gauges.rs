//! Metrics of things that are not a probe run's figures: each OSD of
//! `ceph`, each phase, node and VM of `load`. A command lists its
//! [`Subject`]s (labels and gauges) and both formats come from that one
//! list: InfluxDB lines (a line per subject, its gauges as fields, the
//! run's time) and Prometheus gauges in base units (grouped by name, a
//! sample per subject, no timestamp: the textfile collector refuses them).

use std::fmt::Write as _;

use super::influx::tag_value;
use super::prometheus::escape_label;

/// One number of a subject, as each format writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gauge {
    /// After the command's prefix: `bench_4m_bytes_per_second`.
    pub name: &'static str,
    /// Prometheus' `# HELP`: what it is, its unit, which way is better.
    pub help: &'static str,
    /// In Prometheus' base unit (bytes, seconds, a ratio).
    pub base: f64,
    /// The InfluxDB field, in the unit the table prints: `bench_4m_mib_per_s`.
    pub field: &'static str,
    pub value: f64,
}

impl Gauge {
    pub fn new(
        (name, help): (&'static str, &'static str),
        base: f64,
        (field, value): (&'static str, f64),
    ) -> Gauge {
        Gauge {
            name,
            help,
            base,
            field,
            value,
        }
    }
}

/// A thing measured: its labels (InfluxDB tags) and its gauges.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Subject {
    /// In Prometheus' order; empty values are left out.
    pub labels: Vec<(&'static str, String)>,
    pub gauges: Vec<Gauge>,
}

/// In InfluxDB line protocol: a line per subject with a finite gauge,
/// `measurement` and the subject's tags (sorted), at the run's `timestamp`
/// (RFC 3339; none when it reads as no time).
pub fn influx(measurement: &str, subjects: &[Subject], timestamp: &str) -> String {
    let ns = timestamp
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_nanosecond());
    let mut out = String::new();
    for s in subjects {
        let fields: Vec<String> = s
            .gauges
            .iter()
            .filter(|g| g.value.is_finite())
            .map(|g| format!("{}={}", g.field, g.value))
            .collect();
        if fields.is_empty() {
            continue;
        }
        let mut tags: Vec<(&str, String)> = s
            .labels
            .iter()
            .map(|(k, v)| (*k, tag_value(v)))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        tags.sort();
        out += measurement;
        for (k, v) in tags {
            let _ = write!(out, ",{k}={v}");
        }
        let _ = write!(out, " {}", fields.join(","));
        if let Some(ns) = ns {
            let _ = write!(out, " {ns}");
        }
        out.push('\n');
    }
    out
}

/// A gauge's name, `# HELP` and samples (labels, value).
type Samples<'a> = (&'a str, &'a str, Vec<(String, f64)>);

/// In Prometheus' text format: `PREFIX_NAME` gauges in the order first
/// seen, each with its `# HELP` and a sample per subject that has it.
pub fn prometheus(prefix: &str, subjects: &[Subject]) -> String {
    let mut by_name: Vec<Samples> = Vec::new();
    for s in subjects {
        let labels: Vec<String> = s
            .labels
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
            .collect();
        for g in s.gauges.iter().filter(|g| g.base.is_finite()) {
            let sample = (format!("{{{}}}", labels.join(",")), g.base);
            match by_name.iter_mut().find(|(n, ..)| *n == g.name) {
                Some((.., samples)) => samples.push(sample),
                None => by_name.push((g.name, g.help, vec![sample])),
            }
        }
    }
    let mut out = String::new();
    for (name, help, samples) in by_name {
        let metric = format!("{prefix}_{name}");
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} gauge");
        for (labels, v) in samples {
            let _ = writeln!(out, "{metric}{labels} {v}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subjects() -> Vec<Subject> {
        let gauge = |v: f64| Gauge::new(("x_seconds", "x, seconds"), v / 1000.0, ("x_ms", v));
        vec![
            Subject {
                labels: vec![("node", "pve 1".into()), ("object", "load".into())],
                gauges: vec![gauge(2.0)],
            },
            Subject {
                labels: vec![("node", String::new()), ("object", "load".into())],
                gauges: vec![gauge(3.0), gauge(f64::NAN)],
            },
            Subject {
                labels: vec![("node", "pve3".into())],
                gauges: vec![gauge(f64::INFINITY)],
            },
        ]
    }

    #[test]
    fn both_formats_come_from_one_list() {
        assert_eq!(
            influx("m", &subjects(), "1970-01-01T00:00:00.000000007Z"),
            "m,node=pve\\ 1,object=load x_ms=2 7\nm,object=load x_ms=3 7\n"
        );
        assert_eq!(
            prometheus("p", &subjects()),
            "# HELP p_x_seconds x, seconds\n# TYPE p_x_seconds gauge\n\
             p_x_seconds{node=\"pve 1\",object=\"load\"} 0.002\n\
             p_x_seconds{object=\"load\"} 0.003\n"
        );
    }
}
