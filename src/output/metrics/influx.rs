//! InfluxDB line protocol (`--output-format influx`), written the way PVE's
//! External Metric Server writes a node's and a storage's metrics
//! (`PVE/Status/InfluxDB.pm` in pve-manager), so that the figures land
//! beside PVE's own in the same database, under the tags its dashboards
//! already filter on:
//!
//! - measurement `pveprobe`, every line;
//! - tags: a run on a path is `object=nodes,host=NODE`, as PVE's
//!   `update_node_status`; a `--storage` run is
//!   `object=storages,nodename=NODE,host=STORAGE,type=TYPE`, as PVE's
//!   `update_storage_status` (there `host` is the storage's ID); both add
//!   `path=PATH`. A figure measured once per key ([`Spec::per`]) has a line
//!   per key with `instance=KEY`, as PVE gives each disk and NIC a line
//!   with `instance=`. Tags are sorted by key, as InfluxDB recommends;
//! - fields: one per value of the list of figures, named by its CSV column
//!   (`fsyncs_per_s`, `hd_size_gib`): line protocol has no place for a
//!   unit, so the name carries it, and the names are the CSV's. Numbers
//!   are written as in JSON, without the integer suffix `i`, so InfluxDB
//!   stores every one as a float, as it does PVE's; text values (DNS INT's
//!   domain, SYNC WRITE 4K's verdict) are string fields, as PVE writes
//!   every value that is not a number;
//! - timestamp: when the run started, in nanoseconds, the precision PVE
//!   writes (`$ctime *= 1000000000`) and InfluxDB's default. A result
//!   without a readable start has none: the server stamps its arrival.
//!
//! [`Spec::per`]: crate::figure::Spec::per

use std::fmt::Write as _;

use super::MetricsSource;
use crate::figure;

/// The measurement of every line.
pub const MEASUREMENT: &str = "pveprobe";

/// Characters a measurement name escapes with a backslash.
const MEASUREMENT_SPECIAL: &[char] = &[',', ' ', '\\'];
/// Characters tag keys, tag values and field keys escape.
const KEY_SPECIAL: &[char] = &[',', '=', ' ', '\\'];
/// Characters a string field's value escapes inside its double quotes.
const STRING_SPECIAL: &[char] = &['"', '\\'];

/// The lines of every result, one result after another.
pub fn render(results: &[MetricsSource]) -> String {
    let mut out = String::new();
    for m in results {
        lines(&mut out, m);
    }
    out
}

/// A field's value.
#[derive(Debug, Clone, PartialEq)]
enum FieldValue {
    Number(f64),
    Text(String),
}

/// One line's instance (`None`: the values measured once) and its fields.
type Point<'a> = (Option<&'a str>, Vec<(&'static str, FieldValue)>);

/// The lines of one result: its values measured once on one line, then a
/// line per key of the figures measured once per key.
fn lines(out: &mut String, m: &MetricsSource) {
    let mut points: Vec<Point> = vec![(None, Vec::new())];
    for v in figure::values() {
        if v.is_number() {
            for r in m.result.readings(v) {
                let at = match points.iter().position(|(i, _)| *i == r.instance) {
                    Some(at) => at,
                    None => {
                        points.push((r.instance, Vec::new()));
                        points.len() - 1
                    }
                };
                points[at].1.push((v.column, FieldValue::Number(r.value)));
            }
        } else {
            let text = m.result.cell(v);
            if !text.is_empty() {
                points[0].1.push((v.column, FieldValue::Text(text)));
            }
        }
    }
    let tags = tags(m);
    let timestamp = timestamp(m);
    for (instance, fields) in points.iter().filter(|(_, f)| !f.is_empty()) {
        let mut tags = tags.clone();
        if let Some(instance) = instance {
            tags.push(("instance", instance));
        }
        tags.sort_by_key(|(k, _)| *k);
        out.push_str(&escape(MEASUREMENT, MEASUREMENT_SPECIAL));
        for (key, value) in tags {
            let value = tag_value(value);
            if !value.is_empty() {
                let _ = write!(out, ",{}={value}", escape(key, KEY_SPECIAL));
            }
        }
        for (i, (key, value)) in fields.iter().enumerate() {
            out.push(if i == 0 { ' ' } else { ',' });
            out.push_str(&escape(key, KEY_SPECIAL));
            out.push('=');
            match value {
                FieldValue::Number(n) => {
                    let _ = write!(out, "{n}");
                }
                FieldValue::Text(t) => {
                    let _ = write!(out, "\"{}\"", escape(t, STRING_SPECIAL));
                }
            }
        }
        if let Some(ns) = timestamp {
            let _ = write!(out, " {ns}");
        }
        out.push('\n');
    }
}

/// The tags of a result's lines, as PVE tags a node or a storage.
fn tags<'a>(m: &MetricsSource<'a>) -> Vec<(&'static str, &'a str)> {
    let node = m.node.unwrap_or_default();
    let mut tags = match m.storage() {
        Some((id, kind)) => vec![
            ("object", "storages"),
            ("nodename", node),
            ("host", id),
            ("type", kind),
        ],
        None => vec![("object", "nodes"), ("host", node)],
    };
    tags.push(("path", m.result.path.as_str()));
    tags
}

/// The run's start in nanoseconds since the epoch.
fn timestamp(m: &MetricsSource) -> Option<i128> {
    let started: jiff::Timestamp = m.result.timestamp.as_deref()?.parse().ok()?;
    Some(started.as_nanosecond())
}

/// A tag's value, escaped; empty when nothing of it can be written (the
/// tag is then left out, as line protocol has no empty tag values). A
/// trailing backslash is dropped: line protocol cannot end a value with
/// one.
pub(crate) fn tag_value(value: &str) -> String {
    escape(value.trim_end_matches('\\'), KEY_SPECIAL)
}

/// `text` with each of `special` preceded by a backslash. Control
/// characters, which no part of a line may hold (a newline would end it),
/// become spaces first.
fn escape(text: &str, special: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if special.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use influxdb_line_protocol::{FieldValue as Parsed, ParsedLine, parse_lines};

    use super::*;
    use crate::model::pve::{How, PveTarget};
    use crate::model::testutil::assert_snapshot;
    use crate::output::metrics::tests::every_value;
    use crate::output::result::JsonReport;
    use crate::output::result::testing::per_key;

    fn known() -> JsonReport {
        crate::output::result::known::result()
    }

    /// Every line of `text`, parsed by InfluxData's own parser.
    fn parse(text: &str) -> Vec<ParsedLine<'_>> {
        assert!(text.ends_with('\n'), "{text:?}");
        parse_lines(text)
            .map(|l| l.unwrap_or_else(|e| panic!("{e} in {text}")))
            .collect()
    }

    fn tags(line: &ParsedLine) -> BTreeMap<String, String> {
        line.series
            .tag_set
            .iter()
            .flatten()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn escaping_follows_the_line_protocol() {
        assert_eq!(escape("a b,c=d", KEY_SPECIAL), r"a\ b\,c\=d");
        assert_eq!(escape("a b,c=d", MEASUREMENT_SPECIAL), r"a\ b\,c=d");
        assert_eq!(
            escape(r#"say "hi" \o/"#, STRING_SPECIAL),
            r#"say \"hi\" \\o/"#
        );
        assert_eq!(escape("two\nlines\t", KEY_SPECIAL), r"two\ lines\ ");
        assert_eq!(tag_value(r"C:\dir\"), r"C:\\dir");
        assert_eq!(tag_value(r"\\"), "");
    }

    #[test]
    fn a_path_that_needs_escaping_reads_back_as_it_was() {
        let mut doc = known();
        doc.path = r"/mnt/my disk,a=b\c".into();
        doc.host.hostname = Some("pve 1".into());
        let mut fig = doc
            .figures
            .get(crate::figure::Figure::DnsInt)
            .cloned()
            .unwrap();
        let crate::figure::projection::Facts::Dns(dns) = &mut fig.facts else {
            panic!("DNS INT has DNS facts")
        };
        dns.domain = Some(r#"odd "domain" \ here"#.into());
        doc.figures.set(crate::figure::Figure::DnsInt, Some(fig));
        let text = render(&[MetricsSource::of(&doc)]);
        let lines = parse(&text);
        let t = tags(&lines[0]);
        assert_eq!(t["path"], r"/mnt/my disk,a=b\c");
        assert_eq!(t["host"], "pve 1");
        assert_eq!(
            lines[0].field_value("dns_int_domain"),
            Some(&Parsed::String(r#"odd "domain" \ here"#.into()))
        );
    }

    #[test]
    fn every_value_of_the_known_report_is_a_field_and_reads_back() {
        let doc = known();
        let text = render(&[MetricsSource::of(&doc)]);
        let lines = parse(&text);
        let mut found = BTreeMap::new();
        for line in &lines {
            assert_eq!(line.series.measurement.as_str(), MEASUREMENT);
            // 2026-11-29T12:00:00Z (date -u -d 2026-11-29T12:00:00Z +%s), in ns
            assert_eq!(line.timestamp, Some(1_795_953_600_000_000_000));
            let t = tags(line);
            assert_eq!(t["object"], "nodes");
            assert_eq!(t["host"], "pve1");
            assert_eq!(t["path"], doc.path);
            assert!(!t.contains_key("nodename") && !t.contains_key("type"));
            for (key, value) in &line.field_set {
                let old =
                    found.insert((t.get("instance").cloned(), key.to_string()), value.clone());
                assert!(old.is_none(), "{key} twice");
            }
        }
        // Every value the document holds, and nothing else.
        let mut expected = 0;
        for v in crate::figure::values() {
            if v.is_number() {
                for r in doc.readings(v) {
                    expected += 1;
                    let key = (r.instance.map(str::to_string), v.column.to_string());
                    assert_eq!(found.get(&key), Some(&Parsed::F64(r.value)), "{key:?}");
                }
            } else if !doc.cell(v).is_empty() {
                expected += 1;
                let key = (None, v.column.to_string());
                assert_eq!(
                    found.get(&key),
                    Some(&Parsed::String(doc.cell(v).as_str().into())),
                    "{key:?}"
                );
            }
        }
        assert_eq!(found.len(), expected);
        assert!(found.contains_key(&(None, "fsyncs_per_s".into())));
        assert!(found.contains_key(&(None, "sync_write_4k_flushes".into())));
        assert!(
            !found.contains_key(&(None, "average_seek_time_ms".into())),
            "skipped"
        );
        // SYNC WRITE 4K JOBS: one line per count of jobs.
        let jobs: Vec<_> = lines
            .iter()
            .filter_map(|l| tags(l).get("instance").cloned())
            .collect();
        assert_eq!(jobs, ["jobs=1", "jobs=2", "jobs=4"]);
    }

    #[test]
    fn every_value_of_the_list_comes_out() {
        let doc = every_value();
        let text = render(&[MetricsSource::of(&doc)]);
        let lines = parse(&text);
        for v in crate::figure::values() {
            let instance = v.figure.spec().per.map(|per| format!("{per}=1"));
            let line = lines
                .iter()
                .find(|l| tags(l).get("instance") == instance.as_ref())
                .unwrap_or_else(|| panic!("no line for {instance:?}"));
            assert!(
                line.field_value(v.column).is_some(),
                "{} missing from {line}",
                v.column
            );
        }
    }

    #[test]
    fn a_figure_measured_per_key_has_a_line_per_key() {
        let mut doc = known();
        per_key(
            &mut doc,
            "sync_write_4k_jobs",
            &[("jobs=1", 2400.0), ("jobs=8", 9000.0)],
        );
        let text = render(&[MetricsSource::of(&doc)]);
        let lines = parse(&text);
        let per_key: Vec<_> = lines
            .iter()
            .filter_map(|l| Some((tags(l).get("instance")?.clone(), l)))
            .collect();
        assert_eq!(per_key.len(), 2, "{text}");
        assert_eq!(per_key[1].0, "jobs=8");
        assert_eq!(
            per_key[1].1.field_value("sync_write_4k_jobs_iops"),
            Some(&Parsed::F64(9000.0))
        );
        assert_eq!(per_key[1].1.field_set.len(), 1);
        assert!(text.contains(r",instance=jobs\=8,"), "{text}");
        // The values measured once are not repeated on it.
        assert!(lines[0].field_value("sync_write_4k_jobs_iops").is_none());
    }

    #[test]
    fn a_storage_run_is_tagged_as_pve_tags_a_storage() {
        let mut doc = known();
        doc.pve_storage = Some(PveTarget {
            id: "local-lvm".into(),
            kind: "lvmthin".into(),
            shared: false,
            how: How::ScratchVolume,
            path: None,
            volume: Some("local-lvm:vm-987654321-pveprobe-1".into()),
            device: Some("/dev/dm-7".into()),
            size_bytes: Some(4 << 30),
        });
        let text = render(&[MetricsSource::on("pve2.example.com", &doc)]);
        let first = parse(&text).remove(0);
        let t = tags(&first);
        assert_eq!(t["object"], "storages");
        assert_eq!(t["nodename"], "pve2");
        assert_eq!(t["host"], "local-lvm");
        assert_eq!(t["type"], "lvmthin");
        assert!(text.starts_with("pveprobe,host=local-lvm,nodename=pve2,object=storages,path="));
    }

    #[test]
    fn a_result_without_a_host_or_a_start_leaves_them_out() {
        let mut doc = known();
        doc.host.hostname = None;
        doc.timestamp = None;
        let text = render(&[MetricsSource::of(&doc)]);
        let lines = parse(&text);
        assert!(!tags(&lines[0]).contains_key("host"));
        assert!(lines.iter().all(|l| l.timestamp.is_none()));
        assert_eq!(render(&[]), "");
    }

    #[test]
    fn influx_of_known_numbers_is_pinned() {
        assert_snapshot("report.influx", &render(&[MetricsSource::of(&known())]));
    }
}
