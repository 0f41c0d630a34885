//! One table from the nodes' results: a column per figure, each figure's
//! median and spread over the nodes, the outliers, and with `--parallel`
//! the aggregate (what all nodes got at once). Plain arithmetic on the
//! nodes' JSON results, tested with known numbers.

use serde::{Deserialize, Serialize};

use crate::report::json::{JsonReport, XFigure};
use crate::report::{Line, Stats};

/// How a figure adds up over nodes measured at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    /// Throughput and IOPS: what all nodes got together.
    Sum,
    /// Latency: the worst node's.
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Line(Line),
    /// An extended figure's value, read IOPS or write IOPS, by its key.
    X(&'static str, XField),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XField {
    Value,
    ReadIops,
    WriteIops,
}

/// A figure column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Its column in the single-run CSV (`fsyncs_per_s`), also its key here.
    pub key: &'static str,
    /// As the probe prints it (`FSYNCS/SECOND`).
    pub label: &'static str,
    /// The table's narrow heading and unit.
    pub short: &'static str,
    pub unit: &'static str,
    /// Which way is better; `None` for HD SIZE.
    pub higher_is_better: Option<bool>,
    /// `None`: no meaning summed over nodes (CPU, HD SIZE).
    pub aggregate: Option<Aggregate>,
    source: Source,
}

const fn line(
    key: &'static str,
    l: Line,
    (short, unit): (&'static str, &'static str),
    higher_is_better: Option<bool>,
    aggregate: Option<Aggregate>,
) -> Column {
    Column {
        key,
        label: "",
        short,
        unit,
        higher_is_better,
        aggregate,
        source: Source::Line(l),
    }
}

const fn x(
    key: &'static str,
    label: &'static str,
    x_key: &'static str,
    field: XField,
    (short, unit): (&'static str, &'static str),
    higher_is_better: bool,
    aggregate: Aggregate,
) -> Column {
    Column {
        key,
        label,
        short,
        unit,
        higher_is_better: Some(higher_is_better),
        aggregate: Some(aggregate),
        source: Source::X(x_key, field),
    }
}

use Aggregate::{Max, Sum};

/// Every figure a node's result can have, in the probe's print order.
pub const COLUMNS: [Column; 15] = [
    line(
        "cpu_bogomips",
        Line::CpuBogomips,
        ("BOGOMIPS", ""),
        Some(true),
        None,
    ),
    line(
        "regex_iterations_per_3s",
        Line::RegexPerSecond,
        ("REGEX", "per 3 s"),
        Some(true),
        None,
    ),
    line("hd_size_gib", Line::HdSize, ("HD SIZE", "GiB"), None, None),
    line(
        "buffered_reads_mib_per_s",
        Line::BufferedReads,
        ("READS", "MB/s"),
        Some(true),
        Some(Sum),
    ),
    line(
        "average_seek_time_ms",
        Line::AverageSeekTime,
        ("SEEK", "ms"),
        Some(false),
        Some(Max),
    ),
    line(
        "fsyncs_per_s",
        Line::FsyncsPerSecond,
        ("FSYNCS", "per s"),
        Some(true),
        Some(Sum),
    ),
    line(
        "dns_ext_ms",
        Line::DnsExt,
        ("DNS EXT", "ms"),
        Some(false),
        Some(Max),
    ),
    line(
        "dns_int_ms",
        Line::DnsInt,
        ("DNS INT", "ms"),
        Some(false),
        Some(Max),
    ),
    x(
        "seq_write_mib_per_s",
        "SEQ WRITE",
        "seq_write",
        XField::Value,
        ("SEQ WRITE", "MB/s"),
        true,
        Sum,
    ),
    x(
        "seq_read_direct_mib_per_s",
        "SEQ READ DIRECT",
        "seq_read_direct",
        XField::Value,
        ("SEQ READ", "MB/s"),
        true,
        Sum,
    ),
    x(
        "rand_read_4k_qd1_iops",
        "RANDOM READ 4K QD1",
        "rand_read_4k_qd1",
        XField::Value,
        ("4K QD1", "IOPS"),
        true,
        Sum,
    ),
    x(
        "rand_read_4k_qd32_iops",
        "RANDOM READ 4K QD32",
        "rand_read_4k_qd32",
        XField::Value,
        ("4K QD32", "IOPS"),
        true,
        Sum,
    ),
    x(
        "mixed_read_iops",
        "MIXED 70/30 4K QD16 (read)",
        "mixed_70_30_4k_qd16",
        XField::ReadIops,
        ("MIX READ", "IOPS"),
        true,
        Sum,
    ),
    x(
        "mixed_write_iops",
        "MIXED 70/30 4K QD16 (write)",
        "mixed_70_30_4k_qd16",
        XField::WriteIops,
        ("MIX WRITE", "IOPS"),
        true,
        Sum,
    ),
    x(
        "fsync_p99_ms",
        "FSYNC LATENCY (p99)",
        "fsync_latency",
        XField::Value,
        ("FSYNC p99", "ms"),
        false,
        Max,
    ),
];

impl Column {
    /// The figure's label as the probe prints it.
    pub fn label(&self) -> &'static str {
        match self.source {
            Source::Line(l) => l.label(),
            Source::X(..) => self.label,
        }
    }

    /// The figure in a node's result.
    pub fn value(&self, doc: &JsonReport) -> Option<f64> {
        match self.source {
            Source::Line(l) => doc.figures.get(l).map(|f| f.value),
            Source::X(key, field) => {
                let fig: &XFigure = doc.extended.iter().find(|f| f.key == key)?;
                match field {
                    XField::Value => Some(fig.value),
                    XField::ReadIops => fig.read_iops,
                    XField::WriteIops => fig.write_iops,
                }
            }
        }
        .filter(|v| v.is_finite())
    }

    /// True when `value` is worse than `others` (the median of the other
    /// nodes) by more than a third: below 2/3 of it where more is better,
    /// above 3/2 of it where less is better.
    pub fn is_outlier(&self, value: f64, others: f64) -> bool {
        if others <= 0.0 {
            return false;
        }
        match self.higher_is_better {
            Some(true) => value < others * 2.0 / 3.0,
            Some(false) => value > others * 3.0 / 2.0,
            None => false,
        }
    }
}

/// A node worse than the others on a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    pub node: String,
    pub value: f64,
    /// The median of the other nodes' values.
    pub others_median: f64,
}

/// A figure over all nodes that answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureSummary {
    pub key: String,
    pub label: String,
    pub unit: String,
    /// How many nodes have the figure.
    pub nodes: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// (max - min) / median.
    pub spread: f64,
    pub outliers: Vec<Outlier>,
    /// `sum` or `max` (with `--parallel` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<Aggregate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_value: Option<f64>,
}

fn median(values: &[f64]) -> Option<f64> {
    Stats::of(values).map(|s| s.median)
}

/// Summarises one column over `(node, result)` pairs of the nodes that
/// answered; `None` when no node has the figure.
pub fn summarise(
    column: &Column,
    results: &[(&str, &JsonReport)],
    parallel: bool,
) -> Option<FigureSummary> {
    let values: Vec<(&str, f64)> = results
        .iter()
        .filter_map(|(node, doc)| Some((*node, column.value(doc)?)))
        .collect();
    let all: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
    let stats = Stats::of(&all)?;
    let outliers = values
        .iter()
        .enumerate()
        .filter_map(|(i, (node, value))| {
            let others: Vec<f64> = all
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, v)| *v)
                .collect();
            let others_median = median(&others)?;
            column.is_outlier(*value, others_median).then(|| Outlier {
                node: node.to_string(),
                value: *value,
                others_median,
            })
        })
        .collect();
    let aggregate = column.aggregate.filter(|_| parallel);
    Some(FigureSummary {
        key: column.key.to_string(),
        label: column.label().to_string(),
        unit: column.unit.to_string(),
        nodes: all.len(),
        median: stats.median,
        min: stats.min,
        max: stats.max,
        spread: stats.spread(),
        outliers,
        aggregate,
        aggregate_value: aggregate.map(|a| match a {
            Sum => all.iter().sum(),
            Max => stats.max,
        }),
    })
}

/// Every column some node has, summarised.
pub fn summarise_all(results: &[(&str, &JsonReport)], parallel: bool) -> Vec<FigureSummary> {
    COLUMNS
        .iter()
        .filter_map(|c| summarise(c, results, parallel))
        .collect()
}

/// The column of a summary's key.
pub fn column(key: &str) -> Option<&'static Column> {
    COLUMNS.iter().find(|c| c.key == key)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::json::JsonFigure;

    /// The fixture result with FSYNCS/SECOND, AVERAGE SEEK TIME and the
    /// extended figures set to known numbers.
    pub(crate) fn result(fsyncs: f64, seek_ms: f64, qd32_iops: f64, p99_ms: f64) -> JsonReport {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/pve1.json");
        let mut doc: JsonReport =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let fig = |label: &str, unit: &str, v: f64| JsonFigure {
            label: label.into(),
            unit: unit.into(),
            value: v,
            samples: vec![v],
            min: v,
            max: v,
            spread: 0.0,
            ..JsonFigure::default()
        };
        doc.figures.fsyncs_per_second = Some(fig("FSYNCS/SECOND", "1/s", fsyncs));
        doc.figures.average_seek_time = Some(fig("AVERAGE SEEK TIME", "ms", seek_ms));
        doc.extended = vec![
            XFigure {
                key: "rand_read_4k_qd32".into(),
                label: "RANDOM READ 4K QD32".into(),
                unit: "IOPS".into(),
                value: qd32_iops,
                read_iops: Some(qd32_iops),
                ..XFigure::default()
            },
            XFigure {
                key: "mixed_70_30_4k_qd16".into(),
                label: "MIXED 70/30 4K QD16".into(),
                unit: "IOPS".into(),
                value: 700.0,
                read_iops: Some(700.0),
                write_iops: Some(300.0),
                ..XFigure::default()
            },
            XFigure {
                key: "fsync_latency".into(),
                label: "FSYNC LATENCY".into(),
                unit: "ms".into(),
                value: p99_ms,
                ..XFigure::default()
            },
        ];
        doc
    }

    fn get<'a>(all: &'a [FigureSummary], key: &str) -> &'a FigureSummary {
        all.iter()
            .find(|s| s.key == key)
            .unwrap_or_else(|| panic!("no {key}"))
    }

    #[test]
    fn the_slow_node_is_marked_and_the_spread_measured() {
        let docs = [
            ("pve1", result(1800.0, 0.10, 80_000.0, 3.0)),
            ("pve2", result(1900.0, 0.12, 82_000.0, 2.5)),
            ("pve3", result(600.0, 0.11, 79_000.0, 9.0)),
            ("pve4", result(1850.0, 0.30, 81_000.0, 3.2)),
        ];
        let results: Vec<(&str, &JsonReport)> = docs.iter().map(|(n, d)| (*n, d)).collect();
        let all = summarise_all(&results, false);
        let fsyncs = get(&all, "fsyncs_per_s");
        assert_eq!(fsyncs.nodes, 4);
        assert_eq!(fsyncs.median, (1800.0 + 1850.0) / 2.0);
        assert_eq!((fsyncs.min, fsyncs.max), (600.0, 1900.0));
        assert!((fsyncs.spread - 1300.0 / 1825.0).abs() < 1e-12);
        assert_eq!(
            fsyncs.outliers,
            [Outlier {
                node: "pve3".into(),
                value: 600.0,
                others_median: 1850.0
            }],
            "a third of the others' FSYNCS"
        );
        // Less is better: 0.30 ms against the others' 0.11 is > 3/2.
        let seek = get(&all, "average_seek_time_ms");
        assert_eq!(seek.outliers.len(), 1);
        assert_eq!(seek.outliers[0].node, "pve4");
        let p99 = get(&all, "fsync_p99_ms");
        assert_eq!(
            p99.outliers
                .iter()
                .map(|o| o.node.as_str())
                .collect::<Vec<_>>(),
            ["pve3"]
        );
        assert!(get(&all, "rand_read_4k_qd32_iops").outliers.is_empty());
        // Serial runs: no aggregate.
        assert!(
            all.iter()
                .all(|s| s.aggregate.is_none() && s.aggregate_value.is_none())
        );
        // Figures nobody measured have no column.
        assert!(all.iter().all(|s| s.key != "seq_write_mib_per_s"));
    }

    #[test]
    fn parallel_aggregates_are_sums_and_the_worst_latency() {
        let docs = [
            ("a", result(100.0, 0.25, 1000.0, 4.0)),
            ("b", result(250.5, 0.75, 2500.0, 12.5)),
            ("c", result(49.5, 0.5, 500.0, 1.0)),
        ];
        let results: Vec<(&str, &JsonReport)> = docs.iter().map(|(n, d)| (*n, d)).collect();
        let all = summarise_all(&results, true);
        let agg = |key: &str| {
            let s = get(&all, key);
            (s.aggregate, s.aggregate_value)
        };
        assert_eq!(agg("fsyncs_per_s"), (Some(Sum), Some(400.0)));
        assert_eq!(agg("average_seek_time_ms"), (Some(Max), Some(0.75)));
        assert_eq!(agg("rand_read_4k_qd32_iops"), (Some(Sum), Some(4000.0)));
        assert_eq!(agg("mixed_read_iops"), (Some(Sum), Some(2100.0)));
        assert_eq!(agg("mixed_write_iops"), (Some(Sum), Some(900.0)));
        assert_eq!(agg("fsync_p99_ms"), (Some(Max), Some(12.5)));
        // No meaning summed: CPU and size.
        assert_eq!(agg("cpu_bogomips"), (None, None));
        assert_eq!(agg("hd_size_gib"), (None, None));
    }

    #[test]
    fn two_nodes_one_node_and_zeros() {
        let docs = [
            ("a", result(300.0, 0.1, 1.0, 1.0)),
            ("b", result(100.0, 0.1, 1.0, 1.0)),
        ];
        let results: Vec<(&str, &JsonReport)> = docs.iter().map(|(n, d)| (*n, d)).collect();
        let fsyncs = summarise(column("fsyncs_per_s").unwrap(), &results, false).unwrap();
        // With two nodes each is compared with the other: only the slow one is worse.
        assert_eq!(fsyncs.outliers.len(), 1);
        assert_eq!(fsyncs.outliers[0].node, "b");
        let one = summarise(column("fsyncs_per_s").unwrap(), &results[..1], true).unwrap();
        assert!(one.outliers.is_empty());
        assert_eq!((one.spread, one.aggregate_value), (0.0, Some(300.0)));
        assert!(summarise(column("fsyncs_per_s").unwrap(), &[], true).is_none());
        let c = column("cpu_bogomips").unwrap();
        assert!(
            !c.is_outlier(0.0, 0.0),
            "0.00 BogoMIPS everywhere (s390x) is no outlier"
        );
        assert!(!column("hd_size_gib").unwrap().is_outlier(1.0, 100.0));
        // The boundary: exactly 2/3 is not an outlier.
        assert!(!c.is_outlier(200.0, 300.0) && c.is_outlier(199.9, 300.0));
        let seek = column("average_seek_time_ms").unwrap();
        assert!(!seek.is_outlier(1.5, 1.0) && seek.is_outlier(1.51, 1.0));
    }

    #[test]
    fn columns_are_the_single_run_csv_columns() {
        let header = crate::report::csv::header();
        for c in &COLUMNS {
            assert!(header.contains(&c.key), "{} is no CSV column", c.key);
        }
        let keys: std::collections::BTreeSet<_> = COLUMNS.iter().map(|c| c.key).collect();
        assert_eq!(keys.len(), COLUMNS.len());
        for l in Line::ALL {
            assert!(
                COLUMNS
                    .iter()
                    .any(|c| c.source == Source::Line(l) && c.label() == l.label())
            );
        }
    }
}
