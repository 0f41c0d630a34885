//! Prometheus' text exposition format (`--output-format prometheus`), the
//! format node_exporter's textfile collector reads from its directory
//! (Debian: `/var/lib/prometheus/node-exporter/*.prom`).
//!
//! One gauge per value of the list of figures, named after its CSV column
//! with the unit in Prometheus' base units, as
//! <https://prometheus.io/docs/practices/naming/> asks: the column's unit
//! (`_mib_per_s`, `_ms`, `_pct_of`) gives way to the base unit's suffix
//! (`_bytes_per_second`, `_seconds`, `_ratio`) and the number is scaled to
//! it, by the one table [`UNITS`]: BUFFERED READS' `buffered_reads_mib_per_s`
//! is `pveprobe_buffered_reads_bytes_per_second`, its MiB/s × 2^20.
//!
//! Every gauge has `# HELP` (the figure's label, the unit and which way is
//! better) and `# TYPE ... gauge`, and labels `node` (the node's name as
//! PVE writes it) and `path`, with `--storage` also `storage` and
//! `storage_type`. A figure measured once per key ([`Spec::per`]) has a
//! series per key, labelled by what the key counts (`jobs="4"`); not by
//! `instance`, which Prometheus sets on every scraped series itself (the
//! node_exporter's address) and would rename ours to `exported_instance`.
//! No sample has a timestamp: the textfile collector refuses them.
//!
//! Text values (DNS INT's domain, SYNC WRITE 4K's verdict) are info-style
//! gauges, `pveprobe_<column>_info{...,domain="proxmox.example"} 1`, the
//! text in a label named after what it is, so an alert can match a
//! verdict of `not synced`.
//!
//! [`Spec::per`]: crate::figure::Spec::per

use std::fmt::Write as _;

use super::MetricsSource;
use crate::figure::{self, Better, Value};

/// The first part of every metric's name.
pub const PREFIX: &str = "pveprobe";

/// How a unit of the list of figures ([`Value::unit`]) is written in
/// Prometheus' base units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseUnit {
    /// The unit as the list gives it.
    pub unit: &'static str,
    /// How the CSV columns of such values spell it (`_mib_per_s`); the
    /// metric's name has `suffix` in its place. Empty: the column does not
    /// name it, the suffix is added.
    pub spelled: &'static str,
    /// Prometheus' base unit: the last part of the metric's name.
    pub suffix: &'static str,
    /// The number in the base unit is the figure's × `times` / `over`
    /// (two factors, so 0.45 ms is 0.00045 s exactly as printed, not
    /// 0.45 × 0.001).
    pub times: f64,
    pub over: f64,
    /// What the number is, for `# HELP`.
    pub words: &'static str,
}

const fn unit(
    unit: &'static str,
    spelled: &'static str,
    suffix: &'static str,
    (times, over): (f64, f64),
    words: &'static str,
) -> BaseUnit {
    BaseUnit {
        unit,
        spelled,
        suffix,
        times,
        over,
        words,
    }
}

/// 2^20 and 2^30: pveperf's "MB" and "GB" are MiB and GiB.
const MIB: f64 = (1u64 << 20) as f64;
const GIB: f64 = (1u64 << 30) as f64;

/// Every unit of the list of figures, in Prometheus' base units. A value
/// whose unit is missing here has no gauge; the tests fail on it.
pub const UNITS: &[BaseUnit] = &[
    unit("bogomips", "_bogomips", "bogomips", (1.0, 1.0), "BogoMIPS"),
    unit(
        "iterations/3s",
        "_per_3s",
        "per_second",
        (1.0, 3.0),
        "iterations per second (pveperf's count over 3 s, divided by 3)",
    ),
    unit(
        "GiB",
        "_gib",
        "bytes",
        (GIB, 1.0),
        "bytes (pveprobe's GiB × 2^30)",
    ),
    unit(
        "MiB/s",
        "_mib_per_s",
        "bytes_per_second",
        (MIB, 1.0),
        "bytes per second (pveprobe's MiB/s × 2^20)",
    ),
    unit(
        "MB/s",
        "_mb_per_s",
        "bytes_per_second",
        (1e6, 1.0),
        "bytes per second (pveprobe's MB/s × 10^6)",
    ),
    unit(
        "ms",
        "_ms",
        "seconds",
        (1.0, 1000.0),
        "seconds (pveprobe's ms / 1000)",
    ),
    unit("1/s", "_per_s", "per_second", (1.0, 1.0), "per second"),
    unit(
        "IOPS",
        "_iops",
        "per_second",
        (1.0, 1.0),
        "operations per second (IOPS)",
    ),
    unit(
        "%",
        "_pct_of",
        "ratio",
        (1.0, 100.0),
        "ratio, 1 = 100% (pveprobe's percentage / 100)",
    ),
    unit("ratio", "", "ratio", (1.0, 1.0), "ratio"),
    unit("jobs", "_jobs", "jobs", (1.0, 1.0), "count of jobs"),
];

/// The base unit of a number's unit.
pub fn base_unit(unit: &str) -> Option<&'static BaseUnit> {
    UNITS.iter().find(|u| u.unit == unit)
}

/// A number's gauge: its name and base unit. `None` for a text value, or
/// a unit [`UNITS`] lacks (or a column that does not spell it).
pub fn gauge(v: &Value) -> Option<(String, &'static BaseUnit)> {
    if !v.is_number() {
        return None;
    }
    let base = base_unit(v.unit())?;
    let stem = if base.spelled.is_empty() {
        v.column.to_string()
    } else {
        let at = v.column.rfind(base.spelled)?;
        let rest = &v.column[at + base.spelled.len()..];
        if !(rest.is_empty() || rest.starts_with('_')) {
            return None;
        }
        format!("{}{rest}", &v.column[..at])
    };
    Some((format!("{PREFIX}_{stem}_{}", base.suffix), base))
}

/// A text value's info gauge: its name and the label that holds the text
/// (the column without the figure's key: `domain`, `flushes`).
pub fn info(v: &Value) -> Option<(String, &'static str)> {
    if v.is_number() {
        return None;
    }
    let label = v
        .column
        .strip_prefix(v.figure.key())
        .and_then(|rest| rest.strip_prefix('_'))
        .filter(|l| !l.is_empty())
        .unwrap_or("value");
    Some((format!("{PREFIX}_{}_info", v.column), label))
}

/// Every result's gauges, one family per value of the list (those with no
/// sample left out), each family's samples over all results together.
pub fn render(results: &[MetricsSource]) -> String {
    let mut out = String::new();
    for v in figure::values() {
        let mut samples = String::new();
        let (name, help) = if let Some((name, base)) = gauge(v) {
            for m in results {
                for r in m.result.readings(v) {
                    let value = r.value * base.times / base.over;
                    let _ = writeln!(
                        samples,
                        "{name}{{{}}} {value}",
                        labels(m, v, r.instance, None)
                    );
                }
            }
            (name, format!("{}: {}{}", heading(v), base.words, better(v)))
        } else if let Some((name, label)) = info(v) {
            for m in results {
                let text = m.result.cell(v);
                if !text.is_empty() {
                    let _ = writeln!(
                        samples,
                        "{name}{{{}}} 1",
                        labels(m, v, None, Some((label, &text)))
                    );
                }
            }
            (
                name,
                format!("{}: the text as label {label}, value 1", heading(v)),
            )
        } else {
            continue;
        };
        if !samples.is_empty() {
            let _ = writeln!(out, "# HELP {name} {}", escape_help(&help));
            let _ = writeln!(out, "# TYPE {name} gauge");
            out.push_str(&samples);
        }
    }
    out
}

/// The value's label, and for a figure measured once per key, which label
/// tells the keys apart.
fn heading(v: &Value) -> String {
    match v.figure.spec().per {
        Some(per) => format!("{}, one series per value of label {per}", v.label()),
        None => v.label(),
    }
}

/// Which way the value is better, for `# HELP`.
fn better(v: &Value) -> &'static str {
    match v.better {
        Some(Better::Higher) => "; higher is better",
        Some(Better::Lower) => "; lower is better",
        None => "",
    }
}

/// A sample's labels, without the braces: `node`, `path`, with
/// `--storage` `storage` and `storage_type`, the key of a figure measured
/// per key, and an info gauge's text.
fn labels(
    m: &MetricsSource,
    v: &Value,
    instance: Option<&str>,
    text: Option<(&str, &str)>,
) -> String {
    let mut labels: Vec<(&str, &str)> = Vec::new();
    if let Some(node) = m.node {
        labels.push(("node", node));
    }
    labels.push(("path", &m.result.path));
    if let Some((id, kind)) = m.storage() {
        labels.push(("storage", id));
        labels.push(("storage_type", kind));
    }
    if let Some(instance) = instance {
        // Not `instance`: Prometheus sets that on every scraped series.
        let per = v.figure.spec().per.unwrap_or("key");
        let key = instance
            .strip_prefix(per)
            .and_then(|k| k.strip_prefix('='))
            .unwrap_or(instance);
        labels.push((per, key));
    }
    labels.extend(text);
    labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// A label's value: backslash, double quote and newline escaped.
pub(crate) fn escape_label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str(r"\n"),
            c => out.push(c),
        }
    }
    out
}

/// `# HELP`'s text: backslash and newline escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', r"\\").replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::model::pve::{How, PveTarget};
    use crate::model::testutil::assert_snapshot;
    use crate::output::metrics::tests::every_value;
    use crate::output::result::JsonReport;
    use crate::output::result::testing::per_key;

    /// Labels every sample has or may have; Prometheus' own target labels.
    const OURS: [&str; 4] = ["node", "path", "storage", "storage_type"];
    const PROMETHEUS_OWN: [&str; 2] = ["instance", "job"];

    /// Unit abbreviations `promtool check metrics` refuses in a name,
    /// and the list's own spellings, which the base units replace.
    const ABBREVIATIONS: [&str; 18] = [
        "s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d", "mib",
        "gib", "pct", "iops",
    ];

    fn valid_name(name: &str) -> bool {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    fn known() -> JsonReport {
        crate::output::result::known::result()
    }

    /// The samples of `text`: (name, labels, value).
    fn samples(text: &str) -> Vec<(String, String, f64)> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').unwrap();
                let (name, labels) = series.split_once('{').unwrap();
                (
                    name.to_string(),
                    labels.trim_end_matches('}').to_string(),
                    value.parse().unwrap(),
                )
            })
            .collect()
    }

    fn value_of(text: &str, name: &str) -> f64 {
        let found: Vec<_> = samples(text)
            .into_iter()
            .filter(|(n, _, _)| n == name)
            .collect();
        assert_eq!(found.len(), 1, "{name} in {text}");
        found[0].2
    }

    #[test]
    fn every_value_of_every_figure_maps_to_a_base_unit() {
        let mut names = BTreeSet::new();
        for v in figure::values() {
            let name = if v.is_number() {
                let (name, base) = gauge(v).unwrap_or_else(|| {
                    panic!(
                        "{} ({:?}): its unit {:?} has no entry in UNITS, or its column does not spell it",
                        v.column,
                        v.field,
                        v.unit()
                    )
                });
                assert!(name.ends_with(&format!("_{}", base.suffix)), "{name}");
                assert!(base.times > 0.0 && base.over > 0.0);
                name
            } else {
                let (name, label) = info(v).unwrap();
                assert!(valid_name(label) && !OURS.contains(&label), "{label}");
                assert!(!PROMETHEUS_OWN.contains(&label), "{label}");
                name
            };
            assert!(valid_name(&name), "{name}");
            assert!(name.starts_with("pveprobe_"), "{name}");
            for part in name.split('_') {
                assert!(!ABBREVIATIONS.contains(&part), "{name}: {part}");
            }
            assert!(!name.ends_with("_total"), "{name}: gauges have no _total");
            assert!(names.insert(name.clone()), "{name} twice");
        }
        for f in figure::Figure::ALL {
            if let Some(per) = f.spec().per {
                assert!(valid_name(per), "{per}");
                assert!(!OURS.contains(&per) && !PROMETHEUS_OWN.contains(&per));
            }
        }
        // Every unit of the table is used: a stale entry is a mistake.
        for u in UNITS {
            assert!(
                figure::values().any(|v| v.is_number() && v.unit() == u.unit),
                "{} is used by no value",
                u.unit
            );
        }
    }

    #[test]
    fn names_follow_prometheus_base_units() {
        let name = |column: &str| {
            let v = figure::values().find(|v| v.column == column).unwrap();
            gauge(v).map(|(n, _)| n).or_else(|| info(v).map(|(n, _)| n))
        };
        let names = [
            ("cpu_bogomips", "pveprobe_cpu_bogomips"),
            (
                "regex_iterations_per_3s",
                "pveprobe_regex_iterations_per_second",
            ),
            ("hd_size_gib", "pveprobe_hd_size_bytes"),
            (
                "buffered_reads_mib_per_s",
                "pveprobe_buffered_reads_bytes_per_second",
            ),
            ("average_seek_time_ms", "pveprobe_average_seek_time_seconds"),
            ("fsyncs_per_s", "pveprobe_fsyncs_per_second"),
            ("dns_int_domain", "pveprobe_dns_int_domain_info"),
            (
                "rand_read_4k_qd32_iops",
                "pveprobe_rand_read_4k_qd32_per_second",
            ),
            (
                "sync_write_4k_pct_of_class",
                "pveprobe_sync_write_4k_class_ratio",
            ),
            (
                "sync_write_4k_stops_at_jobs",
                "pveprobe_sync_write_4k_stops_at_jobs",
            ),
            ("sha256_mb_per_s", "pveprobe_sha256_bytes_per_second"),
            (
                "sha256_thread_scaling",
                "pveprobe_sha256_thread_scaling_ratio",
            ),
        ];
        for (column, expected) in names {
            assert_eq!(name(column).as_deref(), Some(expected), "{column}");
        }
    }

    #[test]
    fn numbers_are_scaled_to_base_units() {
        let doc = known();
        let text = render(&[MetricsSource::of(&doc)]);
        let fsyncs = doc.figures.get(figure::Figure::FsyncsPerSecond).unwrap();
        assert_eq!(value_of(&text, "pveprobe_fsyncs_per_second"), fsyncs.value);
        let hd = doc.figures.get(figure::Figure::HdSize).unwrap().value;
        assert_eq!(value_of(&text, "pveprobe_hd_size_bytes"), hd * GIB);
        let dns = doc.figures.get(figure::Figure::DnsExt).unwrap().value;
        assert_eq!(value_of(&text, "pveprobe_dns_ext_seconds"), dns / 1000.0);
        let regex = doc.figures.get(figure::Figure::RegexPerSecond).unwrap();
        assert_eq!(
            value_of(&text, "pveprobe_regex_iterations_per_second"),
            regex.value / 3.0
        );
        let x = |key: &str| doc.extended.iter().find(|f| f.key == key).unwrap();
        assert_eq!(
            value_of(&text, "pveprobe_seq_write_bytes_per_second"),
            x("seq_write").value * MIB
        );
        assert_eq!(
            value_of(&text, "pveprobe_sha256_bytes_per_second"),
            x("sha256").value * 1e6
        );
        let class = x("sync_write_4k")
            .facts
            .number(crate::figure::Field::ReferencePercent)
            .unwrap();
        assert_eq!(
            value_of(&text, "pveprobe_sync_write_4k_class_ratio"),
            class / 100.0
        );
        let p99_ms = x("sync_write_4k")
            .facts
            .number(crate::figure::Field::P99Ms)
            .unwrap();
        assert_eq!(
            value_of(&text, "pveprobe_sync_write_4k_p99_seconds"),
            p99_ms / 1000.0
        );
        // Exact as printed: 0.45 ms is 0.00045 s, not 0.00045000000000000004.
        let mut doc = known();
        let mut dns = doc.figures.get(figure::Figure::DnsExt).cloned().unwrap();
        dns.value = 0.45;
        doc.figures.set(figure::Figure::DnsExt, Some(dns));
        let text = render(&[MetricsSource::of(&doc)]);
        assert!(text.contains("} 0.00045\n"), "{text}");
    }

    #[test]
    fn every_value_has_a_family_with_help_and_type() {
        let doc = every_value();
        let text = render(&[MetricsSource::of(&doc)]);
        for v in figure::values() {
            let name = gauge(v)
                .map(|(n, _)| n)
                .or_else(|| info(v).map(|(n, _)| n))
                .unwrap();
            let help = format!("# HELP {name} {}", v.label());
            assert!(text.contains(&help), "{help} missing");
            assert!(text.contains(&format!("# TYPE {name} gauge\n")), "{name}");
            assert!(
                text.contains(&format!("\n{name}{{node=\"pve1\",")),
                "{name}"
            );
        }
        // Families are not interleaved: each name's samples follow its TYPE.
        let mut seen = BTreeSet::new();
        let mut last = String::new();
        for (name, _, _) in samples(&text) {
            if name != last {
                assert!(seen.insert(name.clone()), "{name} split");
                last = name;
            }
        }
        // No timestamps: one number after the labels, nothing else.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let after = &line[line.rfind('}').unwrap() + 1..];
            assert_eq!(after.split(' ').count(), 2, "{line}");
        }
    }

    #[test]
    fn text_values_are_info_gauges_with_the_text_as_label() {
        let text = render(&[MetricsSource::of(&known())]);
        let domain = samples(&text)
            .into_iter()
            .find(|(n, _, _)| n == "pveprobe_dns_int_domain_info")
            .unwrap();
        assert!(
            domain.1.ends_with(",domain=\"proxmox.example\""),
            "{domain:?}"
        );
        assert_eq!(domain.2, 1.0);
        assert!(text.contains("flushes=\"plausible\"} 1\n"), "{text}");
    }

    #[test]
    fn a_figure_measured_per_key_is_labelled_by_what_the_key_counts() {
        let mut doc = known();
        per_key(
            &mut doc,
            "sync_write_4k_jobs",
            &[("jobs=1", 2400.0), ("jobs=16", 9000.0)],
        );
        let text = render(&[MetricsSource::of(&doc)]);
        let jobs: Vec<_> = samples(&text)
            .into_iter()
            .filter(|(n, _, _)| n == "pveprobe_sync_write_4k_jobs_per_second")
            .collect();
        assert_eq!(jobs.len(), 2, "{text}");
        assert!(jobs[1].1.ends_with(",jobs=\"16\""), "{jobs:?}");
        assert_eq!(jobs[1].2, 9000.0);
        assert!(
            text.contains("JOBS, one series per value of label jobs: "),
            "{text}"
        );
        assert!(!text.contains("instance="), "{text}");
    }

    #[test]
    fn labels_are_escaped_and_storages_labelled() {
        let mut doc = known();
        doc.path = "/mnt/a \"b\"\\c\nd".into();
        doc.pve_storage = Some(PveTarget {
            id: "local-zfs".into(),
            kind: "zfspool".into(),
            shared: false,
            how: How::Path,
            path: Some("/rpool/data".into()),
            volume: None,
            device: None,
            size_bytes: None,
        });
        let text = render(&[MetricsSource::on("pve3.example.com", &doc)]);
        let expected = r#"pveprobe_cpu_bogomips{node="pve3",path="/mnt/a \"b\"\\c\nd",storage="local-zfs",storage_type="zfspool"} "#;
        assert!(text.contains(expected), "{text}");
        assert_eq!(escape_help("a\\b\nc"), r"a\\b\nc");
    }

    #[test]
    fn several_results_share_one_family_per_value() {
        let a = known();
        let mut b = known();
        b.host.hostname = Some("pve2".into());
        let text = render(&[MetricsSource::of(&a), MetricsSource::of(&b)]);
        let fsyncs: Vec<_> = samples(&text)
            .into_iter()
            .filter(|(n, _, _)| n == "pveprobe_fsyncs_per_second")
            .map(|(_, labels, _)| labels)
            .collect();
        assert_eq!(fsyncs.len(), 2);
        assert!(fsyncs[0].starts_with("node=\"pve1\""));
        assert!(fsyncs[1].starts_with("node=\"pve2\""));
        assert_eq!(
            text.matches("# TYPE pveprobe_fsyncs_per_second gauge")
                .count(),
            1
        );
        assert_eq!(render(&[]), "");
    }

    #[test]
    fn prometheus_of_known_numbers_is_pinned() {
        assert_snapshot("report.prom", &render(&[MetricsSource::of(&known())]));
    }
}
