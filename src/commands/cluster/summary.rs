//! One table from the nodes' results: a column per figure, each figure's
//! median and spread over the nodes, the outliers, and with `--parallel`
//! the aggregate (what all nodes got at once). Plain arithmetic on the
//! nodes' JSON results, tested with known numbers.

use serde::{Deserialize, Serialize};

use crate::figure::Aggregate;
use crate::figure::{self, Better, Value};
use crate::model::stats::Stats;
use crate::model::stats::median;
use crate::output::result::JsonReport;

/// Every number a node's result can have, in the probe's print order:
/// the table's columns, from the list of figures.
pub fn columns() -> impl Iterator<Item = &'static Value> {
    figure::values().filter(|v| v.is_number())
}

/// True when `value` is worse than `others` (the median of the other
/// nodes) by more than a third: below 2/3 of it where more is better,
/// above 3/2 of it where less is better.
pub fn is_outlier(column: &Value, value: f64, others: f64) -> bool {
    if others <= 0.0 {
        return false;
    }
    match column.better {
        Some(Better::Higher) => value < others * 2.0 / 3.0,
        Some(Better::Lower) => value > others * 3.0 / 2.0,
        None => false,
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
    /// The value's column in the single-run CSV (`fsyncs_per_s`).
    pub key: String,
    /// The key of a figure measured once per key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
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

/// Summarises one column (for one key of a figure measured per key) over
/// `(node, result)` pairs of the nodes that answered; `None` when no node
/// has the figure.
pub fn summarise(
    column: &Value,
    instance: Option<&str>,
    results: &[(&str, &JsonReport)],
    parallel: bool,
) -> Option<FigureSummary> {
    let values: Vec<(&str, f64)> = results
        .iter()
        .filter_map(|(node, doc)| {
            let reading = doc
                .readings(column)
                .into_iter()
                .find(|r| r.instance == instance)?;
            Some((*node, reading.value))
        })
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
            is_outlier(column, *value, others_median).then(|| Outlier {
                node: node.to_string(),
                value: *value,
                others_median,
            })
        })
        .collect();
    let aggregate = column.aggregate.filter(|_| parallel);
    Some(FigureSummary {
        key: column.column.to_string(),
        instance: instance.map(str::to_string),
        label: column.label(),
        unit: column.short_unit.to_string(),
        nodes: all.len(),
        median: stats.median,
        min: stats.min,
        max: stats.max,
        spread: stats.spread(),
        outliers,
        aggregate,
        aggregate_value: aggregate.map(|a| match a {
            Aggregate::Sum => all.iter().sum(),
            Aggregate::Max => stats.max,
        }),
    })
}

/// Every column some node has, summarised; a figure measured per key
/// once for each key some node has, in the order first found.
pub fn summarise_all(results: &[(&str, &JsonReport)], parallel: bool) -> Vec<FigureSummary> {
    columns()
        .flat_map(|c| {
            let mut instances: Vec<Option<&str>> = Vec::new();
            for (_, doc) in results {
                for r in doc.readings(c) {
                    if !instances.contains(&r.instance) {
                        instances.push(r.instance);
                    }
                }
            }
            instances
                .into_iter()
                .filter_map(|i| summarise(c, i, results, parallel))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The column of a summary's key.
pub fn column(key: &str) -> Option<&'static Value> {
    columns().find(|c| c.column == key)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::figure::Aggregate::{Max, Sum};
    use crate::figure::Figure;
    use crate::figure::projection::Facts;
    use crate::figure::projection::io::IoFacts;
    use crate::figure::projection::sync::SyncFacts;
    use crate::output::result::testing::per_key;
    use crate::output::result::{JsonFigure, XFigure};

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
        doc.figures.set(
            Figure::FsyncsPerSecond,
            Some(fig("FSYNCS/SECOND", "1/s", fsyncs)),
        );
        doc.figures.set(
            Figure::AverageSeekTime,
            Some(fig("AVERAGE SEEK TIME", "ms", seek_ms)),
        );
        doc.extended = vec![
            XFigure {
                key: "rand_read_4k_qd32".into(),
                label: "RANDOM READ 4K QD32".into(),
                unit: "IOPS".into(),
                value: qd32_iops,
                facts: Facts::Io(IoFacts {
                    read_iops: qd32_iops,
                    ..IoFacts::default()
                }),
                ..XFigure::default()
            },
            XFigure {
                key: "mixed_70_30_4k_qd16".into(),
                label: "MIXED 70/30 4K QD16".into(),
                unit: "IOPS".into(),
                value: 700.0,
                facts: Facts::Io(IoFacts {
                    read_iops: 700.0,
                    write_iops: Some(300.0),
                    ..IoFacts::default()
                }),
                ..XFigure::default()
            },
            XFigure {
                key: "sync_write_4k".into(),
                label: "SYNC WRITE 4K".into(),
                unit: "IOPS".into(),
                value: 1000.0,
                facts: Facts::Sync(SyncFacts {
                    latency: Some(crate::model::latency::LatencySummary {
                        count: 3000,
                        mean_us: p99_ms * 500.0,
                        p50_us: p99_ms * 400.0,
                        p90_us: p99_ms * 800.0,
                        p99_us: p99_ms * 1000.0,
                        p99_9_us: Some(p99_ms * 1500.0),
                        max_us: p99_ms * 2000.0,
                    }),
                    ..SyncFacts::default()
                }),
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
        let p99 = get(&all, "sync_write_4k_p99_ms");
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
        assert_eq!(agg("sync_write_4k_p99_ms"), (Some(Max), Some(12.5)));
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
        let fsyncs = summarise(column("fsyncs_per_s").unwrap(), None, &results, false).unwrap();
        // With two nodes each is compared with the other: only the slow one is worse.
        assert_eq!(fsyncs.outliers.len(), 1);
        assert_eq!(fsyncs.outliers[0].node, "b");
        let one = summarise(column("fsyncs_per_s").unwrap(), None, &results[..1], true).unwrap();
        assert!(one.outliers.is_empty());
        assert_eq!((one.spread, one.aggregate_value), (0.0, Some(300.0)));
        assert!(summarise(column("fsyncs_per_s").unwrap(), None, &[], true).is_none());
        let c = column("cpu_bogomips").unwrap();
        assert!(
            !is_outlier(c, 0.0, 0.0),
            "0.00 BogoMIPS everywhere (s390x) is no outlier"
        );
        assert!(!is_outlier(column("hd_size_gib").unwrap(), 1.0, 100.0));
        // The boundary: exactly 2/3 is not an outlier.
        assert!(!is_outlier(c, 200.0, 300.0) && is_outlier(c, 199.9, 300.0));
        let seek = column("average_seek_time_ms").unwrap();
        assert!(!is_outlier(seek, 1.5, 1.0) && is_outlier(seek, 1.51, 1.0));
    }

    #[test]
    fn columns_are_the_single_run_csv_columns() {
        let header = crate::output::csv::header();
        // Every number measured once has a CSV column; one measured per key
        // (SYNC WRITE 4K JOBS) has a column per key here and none there.
        for c in columns().filter(|c| c.figure.spec().per.is_none()) {
            assert!(header.contains(&c.column), "{} is no CSV column", c.column);
        }
        // 21, the 2 random writes, SUSTAINED WRITE's 4 and each of the 5
        // CPU figures' 4.
        assert_eq!(columns().count(), 47, "every number (not the texts)");
        for f in Figure::PVEPERF {
            assert!(columns().any(|c| c.figure == f && c.label() == f.label()));
        }
    }

    #[test]
    fn a_figure_measured_per_key_has_a_column_per_key() {
        let mut a = result(100.0, 0.1, 1000.0, 1.0);
        let mut b = result(100.0, 0.1, 1000.0, 1.0);
        let qd32 = "rand_read_4k_qd32";
        per_key(&mut a, qd32, &[("jobs=1", 10.0), ("jobs=4", 40.0)]);
        per_key(&mut b, qd32, &[("jobs=1", 20.0), ("jobs=4", 10.0)]);
        let results = [("a", &a), ("b", &b)];
        let all = summarise_all(&results, true);
        let qd32: Vec<_> = all
            .iter()
            .filter(|s| s.key == "rand_read_4k_qd32_iops")
            .map(|s| (s.instance.as_deref(), s.aggregate_value))
            .collect();
        assert_eq!(
            qd32,
            [(Some("jobs=1"), Some(30.0)), (Some("jobs=4"), Some(50.0))]
        );
        let four = all
            .iter()
            .find(|s| s.instance.as_deref() == Some("jobs=4"))
            .unwrap();
        assert_eq!(four.outliers.len(), 1, "b's 10 is a quarter of a's 40");
        assert_eq!(four.outliers[0].node, "b");
    }
}
