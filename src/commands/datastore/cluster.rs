//! `datastore PATH --cluster`: every node's datastore path measured by
//! its own pveprobe over ssh, as `cluster` reaches the nodes (`timeout ...
//! pveprobe datastore --output-format json -- PATH` on each, one node at a
//! time, or all at once with `--parallel`), and the figures set side by
//! side, a column a node, a node a third below the others' median marked.
//! A node that does not answer is named with why; the others' stand.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::render::FigureRow;
use super::report::DatastoreReport;
use crate::commands::common::work::Work;
use crate::nodes::remote;
use crate::nodes::{NodesError, Reach, load_nodes};
use crate::output::progress::Progress;
use crate::sys::interrupt::Interrupt;

/// How long a node may take: a default run takes at most 3 minutes.
pub const NODE_LIMIT: Duration = Duration::from_secs(600);
/// The document's `kind`.
pub const KIND: &str = "datastore-cluster";

/// What the cluster run is asked.
#[derive(Debug)]
pub struct ClusterDatastoreRequest {
    pub reach: Reach,
    /// Each node's datastore directory, as given.
    pub path: String,
    pub chunks: u32,
    pub parallel: bool,
    pub progress: Progress,
}

/// A node's run: its report, or its status word and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRun {
    pub node: String,
    /// `ok`, or the word `cluster` uses (`offline`, `unreachable`, `error`...).
    pub status: String,
    pub detail: Option<String>,
    pub report: Option<DatastoreReport>,
}

/// Every node's datastore figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatastoreClusterReport {
    pub schema_version: u32,
    /// Always `datastore-cluster`.
    pub kind: String,
    pub pveprobe_version: String,
    pub timestamp: String,
    pub path: String,
    pub parallel: bool,
    pub nodes: Vec<NodeRun>,
}

impl DatastoreClusterReport {
    /// The nodes that answered, with their figures.
    pub fn answered(&self) -> impl Iterator<Item = (&str, &DatastoreReport)> {
        self.nodes
            .iter()
            .filter_map(|n| Some((n.node.as_str(), n.report.as_ref()?)))
    }

    /// Each figure (and instance) some node has, in print order, with every
    /// node's value in the nodes' order.
    pub fn rows(&self) -> Vec<(FigureRow, Vec<Option<f64>>)> {
        let mut out: Vec<(FigureRow, Vec<Option<f64>>)> = Vec::new();
        let answered: Vec<Vec<FigureRow>> = self.answered().map(|(_, r)| r.figures()).collect();
        for figures in &answered {
            for f in figures {
                let same = |o: &&(FigureRow, Vec<Option<f64>>)| {
                    o.0.figure == f.figure && o.0.instance == f.instance
                };
                if !out.iter().any(|o| same(&o)) {
                    let values = answered
                        .iter()
                        .map(|node| {
                            node.iter()
                                .find(|g| g.figure == f.figure && g.instance == f.instance)
                                .map(|g| g.value)
                        })
                        .collect();
                    out.push((f.clone(), values));
                }
            }
        }
        out.sort_by_key(|(f, _)| f.figure as usize);
        out
    }
}

/// Whether `value` is a third below the median of `others` (every
/// datastore figure is better higher).
pub fn is_outlier(value: f64, others: &[f64]) -> bool {
    crate::model::stats::median(others).is_some_and(|m| m > 0.0 && value < m * 2.0 / 3.0)
}

impl ClusterDatastoreRequest {
    fn line(&self) -> String {
        let args = [
            "datastore",
            "--chunks",
            &self.chunks.to_string(),
            "--output-format",
            "json",
            "--quiet",
            "--",
            &self.path,
        ]
        .map(String::from);
        remote::timed_line(&self.reach.remote_command, &args, NODE_LIMIT)
    }
}

impl Work for ClusterDatastoreRequest {
    type Report = DatastoreClusterReport;
    type Error = NodesError;

    fn run(&self, _: &Interrupt) -> Result<DatastoreClusterReport, NodesError> {
        let (members, _) = load_nodes(&self.reach)?;
        let ssh = self.reach.ssh(&[]);
        let line = self.line();
        let one = |node: &crate::nodes::members::Node| -> NodeRun {
            let failed = |status: &str, detail: String| NodeRun {
                node: node.name.clone(),
                status: status.into(),
                detail: Some(detail),
                report: None,
            };
            if !node.contacted() {
                return failed(
                    "offline",
                    "offline in pmxcfs's members list: not contacted".into(),
                );
            }
            self.progress.step(&format!("{}: running", node.name));
            let run = crate::sys::child::run(
                remote::SSH,
                &ssh.args(node, &line, false),
                &remote::ssh_opts(NODE_LIMIT + Duration::from_secs(10)),
            );
            match remote::answer::<DatastoreReport>(&run, NODE_LIMIT, "datastore") {
                Ok(report) => NodeRun {
                    node: node.name.clone(),
                    status: "ok".into(),
                    detail: report.result.errors.first().cloned(),
                    report: Some(report),
                },
                Err((status, detail)) => failed(status.word(), detail.unwrap_or_default()),
            }
        };
        let nodes: Vec<NodeRun> = if self.parallel {
            std::thread::scope(|s| {
                let asked: Vec<_> = members
                    .nodes
                    .iter()
                    .map(|n| s.spawn(move || one(n)))
                    .collect();
                asked
                    .into_iter()
                    .map(|h| h.join().expect("a node's thread"))
                    .collect()
            })
        } else {
            members.nodes.iter().map(one).collect()
        };
        Ok(DatastoreClusterReport {
            schema_version: 1,
            kind: KIND.into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: jiff::Timestamp::now().to_string(),
            path: self.path.clone(),
            parallel: self.parallel,
            nodes,
        })
    }
}

/// The CSV's columns: a row per node and figure.
pub const CSV_HEADER: [&str; 8] = [
    "timestamp",
    "node",
    "path",
    "figure",
    "instance",
    "value",
    "unit",
    "note",
];

impl DatastoreClusterReport {
    fn text(&self) -> String {
        let nodes: Vec<&str> = self.answered().map(|(n, _)| n).collect();
        let mut out = format!(
            "DATASTORE {} on {} of {} nodes{}\n",
            self.path,
            nodes.len(),
            self.nodes.len(),
            if self.parallel {
                ", all at once"
            } else {
                ", one at a time"
            }
        );
        out += &format!("{:<32}", "FIGURE");
        for n in &nodes {
            out += &format!("{n:>12}");
        }
        out += "\n";
        for (f, values) in self.rows() {
            let label = match &f.instance {
                Some(i) => format!("{} {}", f.figure.label(), i.to_uppercase()),
                None => f.figure.label().to_string(),
            };
            out += &format!("{:<32}", format!("{label} ({})", f.figure.unit()));
            for (i, v) in values.iter().enumerate() {
                let others: Vec<f64> = values
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .filter_map(|(_, v)| *v)
                    .collect();
                let cell = match v {
                    Some(v) => {
                        let mark = if is_outlier(*v, &others) { "!" } else { "" };
                        format!("{}{mark}", f.figure.spec().format(*v))
                    }
                    None => "-".into(),
                };
                out += &format!("{cell:>12}");
            }
            out += "\n";
        }
        out += "\n";
        for n in &self.nodes {
            out += &format!("node {}: {}", n.node, n.status);
            if let Some(d) = &n.detail {
                out += &format!(" ({d})");
            }
            out += "\n";
            for h in n.report.iter().flat_map(|r| &r.hints) {
                out += &format!("  {h}\n");
            }
        }
        out
    }
}

impl crate::output::Document for DatastoreClusterReport {
    const PICTURE: bool = true;

    fn text(&self) -> String {
        DatastoreClusterReport::text(self)
    }

    fn csv(&self, header: bool) -> String {
        let rows: Vec<Vec<String>> = self
            .answered()
            .flat_map(|(node, r)| {
                r.figures().into_iter().map(move |f| {
                    [self.timestamp.clone(), node.to_string(), self.path.clone()]
                        .into_iter()
                        .chain(f.cells())
                        .collect::<Vec<String>>()
                })
            })
            .collect();
        crate::output::csv::table(header.then(|| CSV_HEADER.to_vec()), rows)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(CSV_HEADER.to_vec())
    }

    /// Each node's figures, labelled `node` too.
    fn metrics(&self, format: crate::output::Format) -> String {
        use crate::output::metrics::gauges;
        let subjects: Vec<gauges::Subject> = self
            .answered()
            .flat_map(|(node, r)| {
                r.subjects().into_iter().map(move |mut s| {
                    s.labels.insert(0, ("node", node.to_string()));
                    s
                })
            })
            .collect();
        match format {
            crate::output::Format::Influx => {
                gauges::influx("pveprobe_datastore", &subjects, &self.timestamp)
            }
            _ => gauges::prometheus("pveprobe_datastore", &subjects),
        }
    }

    /// Restore against chunks in flight, a line a node.
    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        use crate::output::plot::{Chart, Line, charts_svg};
        let lines = self
            .answered()
            .map(|(node, r)| Line {
                name: node.to_string(),
                tags: Vec::new(),
                points: r
                    .result
                    .measured
                    .restore
                    .iter()
                    .map(|x| (f64::from(x.in_flight), x.mib_s))
                    .collect(),
            })
            .collect();
        let chart = Chart {
            title: "RESTORE: chunk files read in random order, per node".into(),
            x_desc: "chunks in flight".into(),
            unit: "MiB/s".into(),
            lines,
            mark_x: None,
        };
        Some(charts_svg(
            &format!("pveprobe datastore {} --cluster", self.path),
            &[],
            &[chart],
        ))
    }
}

/// `compare` reads a cluster's file as a result per node.
impl crate::results::Stored for DatastoreClusterReport {
    const KIND: Option<&'static str> = Some(KIND);
    const SCHEMA_VERSION: u32 = 1;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    fn results(self) -> Vec<crate::results::Named> {
        self.nodes
            .into_iter()
            .filter_map(|n| {
                let r = n.report?;
                Some(crate::results::Named::new(Some(n.node), r.as_result()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Document as _;

    fn report() -> DatastoreClusterReport {
        let mut slow = super::super::report::sample();
        for r in &mut slow.result.measured.restore {
            r.mib_s /= 2.0;
        }
        let run = |node: &str, report: Option<DatastoreReport>| NodeRun {
            node: node.into(),
            status: if report.is_some() {
                "ok"
            } else {
                "no pveprobe"
            }
            .into(),
            detail: report
                .is_none()
                .then(|| "command not found (exit status 127)".into()),
            report,
        };
        DatastoreClusterReport {
            schema_version: 1,
            kind: KIND.into(),
            pveprobe_version: "0.1.0".into(),
            timestamp: "2026-12-07T03:00:00Z".into(),
            path: "/mnt/datastore/store1".into(),
            parallel: false,
            nodes: vec![
                run("pve1", Some(super::super::report::sample())),
                run("pve2", Some(super::super::report::sample())),
                run("pve3", Some(slow)),
                run("pve4", None),
            ],
        }
    }

    #[test]
    fn a_column_a_node_and_the_slow_one_marked() {
        let text = report().text();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("DATASTORE /mnt/datastore/store1 on 3 of 4 nodes, one at a time")
        );
        assert!(
            lines
                .next()
                .unwrap()
                .ends_with("pve1        pve2        pve3")
        );
        let restore = text
            .lines()
            .find(|l| l.starts_with("DATASTORE RESTORE 16 (MiB/s)"))
            .unwrap();
        assert!(
            restore.ends_with("320         320        160!"),
            "{restore}"
        );
        let mark = text
            .lines()
            .find(|l| l.starts_with("DATASTORE GC MARK"))
            .unwrap();
        assert!(!mark.contains('!'), "{mark}");
        assert!(
            text.contains("node pve4: no pveprobe (command not found (exit status 127))"),
            "{text}"
        );
    }

    #[test]
    fn csv_and_metrics_have_every_node_s_figures_and_compare_a_result_each() {
        let r = report();
        let rows = r.csv(false).lines().count();
        assert_eq!(rows, 3 * super::super::report::sample().figures().len());
        assert!(r.csv(true).starts_with("timestamp,node,path,figure,"));
        let prom = r.metrics(crate::output::Format::Prometheus);
        assert!(
            prom.contains("{node=\"pve3\",figure=\"datastore_restore\",instance=\"16\""),
            "{prom}"
        );
        use crate::results::Stored as _;
        let named: Vec<Option<String>> = r.results().into_iter().map(|n| n.who).collect();
        assert_eq!(
            named,
            [
                Some("pve1".into()),
                Some("pve2".into()),
                Some("pve3".into())
            ]
        );
        let svg = report().picture().unwrap().unwrap();
        assert!(roxmltree::Document::parse(&svg).is_ok());
    }
}
