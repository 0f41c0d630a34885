//! The cluster table as text (one row per node, one column per figure),
//! CSV (the single-run CSV's columns after four of the cluster's own) and
//! JSON; and a cluster document read back for `pveprobe compare`.

use std::fmt::Write as _;

use super::summary::{self, FigureSummary};
use super::{ClusterReport, NodeReport};
use crate::figure::Aggregate;
use crate::output::csv as single;
use crate::output::plot::{self, PlotError};
use crate::results;

/// A column's number with the list's decimals for its value.
fn number(fig: &FigureSummary, v: f64) -> String {
    summary::column(&fig.key).map_or_else(|| format!("{v:.2}"), |c| c.format(v))
}

/// A node's value of a column and, where it kept two or more runs, their
/// lowest and highest.
fn reading(node: &NodeReport, fig: &FigureSummary) -> Option<(f64, Option<(f64, f64)>)> {
    let column = summary::column(&fig.key)?;
    let readings = node.result.as_ref()?.readings(column);
    readings
        .into_iter()
        .find(|r| r.instance == fig.instance.as_deref())
        .map(|r| (r.value, results::runs_of(&r)))
}

fn value(node: &NodeReport, fig: &FigureSummary) -> Option<f64> {
    reading(node, fig).map(|(v, _)| v)
}

/// Cells of an inline bar in the text table (see [`text_with`]).
pub const BAR_CELLS: usize = 4;

/// The text table.
pub fn text(r: &ClusterReport) -> String {
    text_with(r, false)
}

/// The text table; with `bars` (the caller's choice: stdout is a
/// terminal) each node's value is followed by a bar of [`BAR_CELLS`]
/// cells relative to the largest value of its column.
pub fn text_with(r: &ClusterReport, bars: bool) -> String {
    let mut out = title(r);
    out.push_str(&table(r, bars));
    out.push('\n');
    for n in notes(r) {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

/// The table's first line: what ran where.
fn title(r: &ClusterReport) -> String {
    let mut out = String::new();
    let cluster = r
        .cluster
        .as_ref()
        .map(|c| format!(" of cluster {c}"))
        .unwrap_or_default();
    let how = if r.parallel {
        "all at once (--parallel)"
    } else {
        "one node at a time"
    };
    let _ = writeln!(
        out,
        "pveprobe cluster: {} on {} nodes{cluster}, {how}\n",
        r.path,
        r.nodes.len()
    );

    out
}

/// The table: a row per node, a column per figure value (with its bar),
/// then the median, the spread and what the nodes got at once.
fn table(r: &ClusterReport, bars: bool) -> String {
    use crate::output::table::Align::{Left, Right};
    // A value's cell ends in its mark: `!` for an outlier, else a space,
    // so the digits stay in line.
    let figs = &r.figures;
    let mut align = vec![Left, Left];
    let mut head = vec!["NODE".to_string(), "STATUS".to_string()];
    let mut units = vec![String::new(), String::new()];
    for f in figs {
        let (short, unit) = summary::column(&f.key)
            .map_or((f.label.as_str(), f.unit.as_str()), |c| {
                (c.short, c.short_unit)
            });
        head.push(match &f.instance {
            Some(key) => format!("{short} {key} "),
            None => format!("{short} "),
        });
        units.push(format!("{unit} "));
        align.push(Right);
        if bars {
            head.push(String::new());
            units.push(String::new());
            align.push(Left);
        }
    }
    // The largest value of each column, the scale of its inline bars.
    let largest: Vec<f64> = figs
        .iter()
        .map(|f| {
            r.nodes
                .iter()
                .filter_map(|n| value(n, f))
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max)
        })
        .collect();
    let mut rows = vec![head, units];
    for n in &r.nodes {
        let mut row = vec![n.name.clone(), n.status.word().to_string()];
        if !n.status.answered() {
            row.push(n.detail.clone().unwrap_or_default());
            rows.push(row);
            continue;
        }
        for (f, max) in figs.iter().zip(&largest) {
            let v = value(n, f);
            let mark = if v.is_some() && n.outliers.contains(&f.key) {
                '!'
            } else {
                ' '
            };
            row.push(format!(
                "{}{mark}",
                v.map_or_else(|| "-".into(), |v| number(f, v))
            ));
            if bars {
                row.push(v.map_or_else(
                    || " ".repeat(BAR_CELLS),
                    |v| plot::inline_bar(v, *max, BAR_CELLS),
                ));
            }
        }
        rows.push(row);
    }
    if !figs.is_empty() {
        let mut summary_row = |label: &str, cell: &dyn Fn(&FigureSummary) -> String| {
            let mut row = vec![label.to_string(), String::new()];
            for f in figs {
                row.push(format!("{} ", cell(f)));
                if bars {
                    row.push(String::new());
                }
            }
            rows.push(row);
        };
        summary_row("median", &|f| number(f, f.median));
        summary_row("spread", &|f| format!("{:.0}%", f.spread * 100.0));
        if r.parallel {
            summary_row("at once", &|f| match (f.aggregate, f.aggregate_value) {
                (Some(Aggregate::Sum), Some(v)) => format!("sum {}", number(f, v)),
                (Some(Aggregate::Max), Some(v)) => format!("max {}", number(f, v)),
                _ => "-".into(),
            });
        }
    }
    crate::output::table::render(&rows, |c| align[c])
}

/// The lines under the table: outliers, verdicts, details, hints, and
/// which nodes answered.
fn notes(r: &ClusterReport) -> Vec<String> {
    let figs = &r.figures;
    let mut notes = Vec::new();
    for f in figs {
        for o in &f.outliers {
            notes.push(format!(
                "! {}: {} {} is worse than the other nodes' median ({}) by more than a third",
                o.node,
                f.label,
                number(f, o.value),
                number(f, o.others_median)
            ));
        }
    }
    // Text values (SYNC WRITE 4K's verdict on its flushes): one line each.
    for v in crate::figure::values().filter(|v| v.field == crate::figure::Field::Verdict) {
        let each: Vec<String> = r
            .results()
            .iter()
            .map(|(node, doc)| (node, doc.cell(v)))
            .filter(|(_, cell)| !cell.is_empty())
            .map(|(node, cell)| format!("{node} {cell}"))
            .collect();
        if !each.is_empty() {
            notes.push(format!("{}: {}", v.label(), each.join(", ")));
        }
    }
    for n in r.nodes.iter().filter(|n| n.status.answered()) {
        if let Some(d) = &n.detail {
            notes.push(format!("{}: {d}", n.name));
        }
    }
    // Each node's hints (what explains its figures), under its name.
    for (node, doc) in r.results() {
        let hints = doc.storage.iter().flat_map(|s| &s.hints);
        notes.extend(hints.map(|h| format!("{node} hint {h}")));
    }
    if r.parallel && figs.iter().any(|f| f.aggregate.is_some()) {
        notes.push(format!(
            "at once: what the {} nodes that answered got together (sum of throughput and IOPS) and the worst latency",
            r.answered()
        ));
    }
    let failed: Vec<String> = r
        .nodes
        .iter()
        .filter(|n| !n.status.answered())
        .map(|n| format!("{} {}", n.name, n.status.word()))
        .collect();
    let mut last = format!("{} of {} nodes answered", r.answered(), r.nodes.len());
    if !failed.is_empty() {
        let _ = write!(last, "; not: {}", failed.join(", "));
    }
    notes.push(last);
    notes
}

/// What `--plot` marks as an outlier in the cluster's panels.
pub const PLOT_OUTLIERS: &str =
    "worse than the other nodes' median by more than a third (marked ! in the table)";

/// The cluster table as panels: one per column (figure value), a bar per
/// node that answered (in the table's order) with its runs as the
/// whisker, outliers as the summary marks them.
pub fn panels(r: &ClusterReport) -> Vec<plot::Panel> {
    let answered: Vec<&NodeReport> = r.nodes.iter().filter(|n| n.status.answered()).collect();
    r.figures
        .iter()
        .map(|f| {
            let column = summary::column(&f.key);
            let title = match &f.instance {
                Some(key) => format!("{} [{key}]", f.label),
                None => f.label.clone(),
            };
            plot::Panel {
                title,
                unit: column.map_or(f.unit.as_str(), |c| c.unit()).to_string(),
                better: column.and_then(|c| c.better),
                bars: answered
                    .iter()
                    .map(|n| {
                        let (value, runs) = reading(n, f).unzip();
                        plot::Bar {
                            name: n.name.clone(),
                            value,
                            text: value.map_or_else(|| "-".into(), |v| number(f, v)),
                            runs: runs.flatten(),
                            outlier: f.outliers.iter().any(|o| o.node == n.name),
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The cluster table as an SVG picture (see [`panels`]), titled as the
/// text table is.
pub fn plot_svg(r: &ClusterReport) -> Result<String, PlotError> {
    let cluster = r
        .cluster
        .as_ref()
        .map(|c| format!(" of cluster {c}"))
        .unwrap_or_default();
    let failed: Vec<String> = r
        .nodes
        .iter()
        .filter(|n| !n.status.answered())
        .map(|n| format!("{} ({})", n.name, n.status.word()))
        .collect();
    let title = format!(
        "pveprobe cluster: {} on {} nodes{cluster}{}, {} answered{}",
        r.path,
        r.nodes.len(),
        if r.parallel { ", all at once" } else { "" },
        r.answered(),
        if failed.is_empty() {
            String::new()
        } else {
            format!("; not: {}", failed.join(", "))
        }
    );
    plot::panels_svg(&title, PLOT_OUTLIERS, &panels(r))
}

/// The cluster's own columns, before the single-run CSV's.
pub const CSV_LEADING: [&str; 4] = ["node", "status", "detail", "outliers"];

/// The CSV header: the cluster's columns, then a single run's.
pub fn csv_header() -> Vec<&'static str> {
    CSV_LEADING
        .iter()
        .copied()
        .chain(single::header())
        .collect()
}

/// One row per node (a single run's CSV row after the node's name, status,
/// why and outlier figures; empty for a node that did not answer), then
/// rows `(median)`, `(spread)` (a fraction) and, with `--parallel`,
/// `(aggregate)` that fill only the figure columns.
pub fn csv(r: &ClusterReport, with_header: bool) -> String {
    let header = csv_header();
    let blank = vec![String::new(); single::header().len()];
    let mut records = Vec::new();
    for n in &r.nodes {
        let mut record = vec![
            n.name.clone(),
            n.status.word().to_string(),
            n.detail.clone().unwrap_or_default(),
            n.outliers.join(" "),
        ];
        match &n.result {
            Some(doc) if n.status.answered() => record.extend(single::row(doc)),
            _ => record.extend(blank.iter().cloned()),
        }
        records.push(record);
    }
    for label in ["(median)", "(spread)", "(aggregate)"] {
        if label == "(aggregate)" && !r.parallel || r.figures.is_empty() {
            continue;
        }
        let cell = |f: &FigureSummary| match label {
            "(median)" => Some(f.median),
            "(spread)" => Some(f.spread),
            _ => f.aggregate_value,
        };
        let mut record = vec![String::new(); header.len()];
        record[0] = label.to_string();
        for f in &r.figures {
            if let (Some(i), Some(v)) = (header.iter().position(|h| *h == f.key), cell(f)) {
                record[i] = v.to_string();
            }
        }
        records.push(record);
    }
    crate::output::csv::table(with_header.then_some(header), records)
}

impl crate::output::Document for ClusterReport {
    const PICTURE: bool = true;

    fn text(&self) -> String {
        text(self)
    }

    /// Inline bars only for people: text to a terminal, never in a pipe or file.
    fn text_for_person(&self) -> String {
        text_with(self, true)
    }

    fn picture(&self) -> Option<Result<String, PlotError>> {
        Some(plot_svg(self))
    }

    fn csv(&self, header: bool) -> String {
        csv(self, header)
    }

    /// Each node that answered, its result labelled with the node's name.
    fn metrics(&self, format: crate::output::Format) -> String {
        let results: Vec<_> = self
            .results()
            .into_iter()
            .map(|(node, result)| crate::output::metrics::MetricsSource::on(node, result))
            .collect();
        crate::output::metrics::render(format, &results)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::results::CompareError;
    use std::time::Duration;

    use super::*;
    use crate::commands::cluster::summary::tests::result;
    use crate::commands::cluster::{ClusterReport, Head};
    use crate::figure::Better;
    use crate::nodes::members::Node;
    use crate::nodes::remote::{NodeOutcome, Status};

    fn node(name: &str) -> Node {
        Node {
            name: name.into(),
            address: format!("192.0.2.{}", name.len()),
            online: Some(true),
            id: None,
        }
    }

    fn ok(fsyncs: f64, seek: f64) -> NodeOutcome {
        let doc = result(fsyncs, seek, 80_000.0, 3.0);
        NodeOutcome {
            status: Status::Ok,
            detail: None,
            raw: Some(serde_json::to_string(&doc).unwrap()),
            result: Some(doc),
        }
    }

    /// Four nodes: three answered (one slow on FSYNCS), one without pveprobe.
    pub(crate) fn known(parallel: bool) -> ClusterReport {
        let head = Head {
            timestamp: Some("2026-11-30T10:00:00Z".into()),
            path: "/var/tmp".into(),
            cluster: Some("prod".into()),
            parallel,
            command: "timeout -k 10 62 pveprobe --output-format json -- /var/tmp".into(),
            timeout: Duration::from_secs(62),
        };
        ClusterReport::new(
            head,
            vec![
                (node("pve1"), ok(1800.0, 0.10), Some(0), Some(1.5)),
                (node("pve2"), ok(1900.0, 0.12), Some(0), Some(1.6)),
                (node("pve3"), ok(600.0, 0.11), Some(0), Some(1.7)),
                (
                    node("pve4"),
                    NodeOutcome::failed(
                        Status::NoPveprobe,
                        "bash: line 1: pveprobe: command not found (exit status 127)",
                    ),
                    Some(127),
                    Some(0.2),
                ),
            ],
        )
    }

    /// A node's hints are listed under the table with its name and code.
    #[test]
    fn each_nodes_hints_are_listed_under_the_table() {
        use crate::model::hint::Hint;
        use crate::model::storage::Storage;
        let mut r = known(false);
        let pve3 = r.nodes.iter_mut().find(|n| n.name == "pve3").unwrap();
        pve3.result.as_mut().unwrap().storage = Some(Storage {
            hints: vec![Hint::new(
                "link-below-capability",
                "sda",
                "SATA link at 3.0 Gb/s, the disk and the port can do 6.0 Gb/s",
            )],
            ..Storage::default()
        });
        let text = text(&r);
        let hints: Vec<&str> = text.lines().filter(|l| l.contains(" hint [")).collect();
        assert_eq!(
            hints,
            [
                "pve3 hint [link-below-capability] sda: SATA link at 3.0 Gb/s, the disk and the port can do 6.0 Gb/s"
            ]
        );
        assert!(!text.contains("pve1 hint"));
    }

    #[test]
    fn the_text_table_has_a_row_per_node_and_marks_the_slow_one() {
        let text = text(&known(false));
        crate::model::testutil::assert_snapshot("cluster.txt", &text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(
            "pveprobe cluster: /var/tmp on 4 nodes of cluster prod, one node at a time"
        ));
        let row = |name: &str| lines.iter().find(|l| l.starts_with(name)).copied().unwrap();
        assert!(row("pve3").contains(" 600.00!"), "{}", row("pve3"));
        assert!(!row("pve1").contains('!'));
        assert!(row("pve4").contains("no pveprobe  bash: line 1: pveprobe: command not found"));
        assert!(text.contains(
            "! pve3: FSYNCS/SECOND 600.00 is worse than the other nodes' median (1850.00) by more than a third"
        ));
        assert!(!text.contains("at once"));
        assert!(text.ends_with("3 of 4 nodes answered; not: pve4 no pveprobe\n"));
    }

    /// U+2581..U+258F: the block elements of inline bars.
    fn blocks(text: &str) -> usize {
        text.chars()
            .filter(|c| ('\u{2581}'..='\u{258F}').contains(c))
            .count()
    }

    #[test]
    fn inline_bars_are_drawn_only_when_asked() {
        let r = known(false);
        let plain = text_with(&r, false);
        assert_eq!(plain, text(&r));
        assert_eq!(blocks(&plain), 0);
        let bars = text_with(&r, true);
        assert_eq!(bars.lines().count(), plain.lines().count());
        let row = |name: &str| bars.lines().find(|l| l.starts_with(name)).unwrap();
        // FSYNCS: 1900 is the column's largest; 600 is 10 of its 32 eighths.
        assert!(row("pve2").contains(" 1900.00   ████"), "{}", row("pve2"));
        assert!(row("pve3").contains(" 600.00!  █▎  "), "{}", row("pve3"));
        // Summary rows and a node that did not answer get none.
        for name in ["median", "spread", "pve4"] {
            assert_eq!(blocks(row(name)), 0, "{}", row(name));
        }
        // Columns stay aligned: FSYNCS's value ends where its heading does.
        let head = row("NODE");
        let end = |l: &str, what: &str| l[..l.find(what).unwrap() + what.len()].chars().count();
        assert_eq!(end(head, "FSYNCS"), end(row("pve2"), "1900.00"));
        assert_eq!(end(head, "FSYNCS"), end(row("median"), "1800.00"));
    }

    #[test]
    fn panels_have_a_bar_per_node_that_answered_and_the_summary_s_outliers() {
        let r = known(false);
        let panels = panels(&r);
        assert_eq!(panels.len(), r.figures.len());
        let panel = |title: &str| panels.iter().find(|p| p.title == title).unwrap();
        let fsyncs = panel("FSYNCS/SECOND");
        assert_eq!(
            (fsyncs.unit.as_str(), fsyncs.better),
            ("1/s", Some(Better::Higher))
        );
        let bars: Vec<(&str, Option<f64>, &str, bool)> = fsyncs
            .bars
            .iter()
            .map(|b| (b.name.as_str(), b.value, b.text.as_str(), b.outlier))
            .collect();
        assert_eq!(
            bars,
            [
                ("pve1", Some(1800.0), "1800.00", false),
                ("pve2", Some(1900.0), "1900.00", false),
                ("pve3", Some(600.0), "600.00", true),
            ],
            "pve4 did not answer: no bar"
        );
        // One run of FSYNCS each: no whisker; the fixture's three runs of
        // REGEX/SECOND: one each.
        assert!(fsyncs.bars.iter().all(|b| b.runs.is_none()));
        let regex = panel("REGEX/SECOND");
        assert!(
            regex
                .bars
                .iter()
                .all(|b| b.runs == Some((2_400_000.0, 2_420_000.0)))
        );
        let seek = panel("AVERAGE SEEK TIME");
        assert_eq!(
            (seek.unit.as_str(), seek.better),
            ("ms", Some(Better::Lower))
        );
        assert_eq!(seek.bars[0].text, "0.100", "the list's decimals");
        assert_eq!(panel("HD SIZE").better, None);

        let svg = plot_svg(&r).unwrap();
        let all = crate::output::plot::tests::shapes(&svg);
        assert!(all.iter().any(|s| s.text
            == "pveprobe cluster: /var/tmp on 4 nodes of cluster prod, 3 answered; not: pve4 (no pveprobe)"));
        let fs = crate::output::plot::tests::panel(&all, "FSYNCS/SECOND");
        let heights: Vec<f64> = fs
            .iter()
            .filter(|s| s.tag == "rect" && s.fill.starts_with('#'))
            .map(|s| s.height)
            .collect();
        assert_eq!(heights.len(), 3);
        assert!(
            (heights[2] - heights[1] * 600.0 / 1900.0).abs() <= 1.0,
            "{heights:?}"
        );
        assert!(fs.iter().any(|s| s.text == "600.00 !"));
    }

    /// The nodes of the picture in docs/: the fixture results of pve1,
    /// pve2 and pve3 (one run), and pve4 whose key ssh refused.
    fn fixture_cluster() -> ClusterReport {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
        let answered = |name: &str, file: &str| {
            let raw = std::fs::read_to_string(dir.join(file)).unwrap();
            let outcome = NodeOutcome {
                status: Status::Ok,
                detail: None,
                result: Some(serde_json::from_str(&raw).unwrap()),
                raw: Some(raw),
            };
            (node(name), outcome, Some(0), Some(14.2))
        };
        let head = Head {
            timestamp: Some("2026-11-20T10:00:00Z".into()),
            path: "/var/lib/vz".into(),
            cluster: Some("prod".into()),
            parallel: false,
            command: String::new(),
            timeout: Duration::from_secs(126),
        };
        ClusterReport::new(
            head,
            vec![
                answered("pve1", "pve1.json"),
                answered("pve2", "pve2.json"),
                answered("pve3", "pve3-single-run.json"),
                (
                    node("pve4"),
                    NodeOutcome::failed(
                        Status::SshRefused,
                        "root@192.0.2.14: Permission denied (publickey).",
                    ),
                    Some(255),
                    Some(0.3),
                ),
            ],
        )
    }

    /// docs/plot-cluster.svg is what `cluster --plot` draws for
    /// [`fixture_cluster`] (pinned as the snapshot `plot-cluster.svg`),
    /// and docs/plot-cluster.png its rendering (resvg);
    /// [`write_the_picture_in_docs`] writes both.
    #[test]
    fn the_picture_in_docs_is_current() {
        let svg = plot_svg(&fixture_cluster()).unwrap();
        let png = crate::output::plot::tests::png(&svg).unwrap();
        crate::model::testutil::assert_snapshot("plot-cluster.svg", &svg);
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        let committed = std::fs::read_to_string(docs.join("plot-cluster.svg")).unwrap_or_default();
        assert!(
            committed == svg,
            "docs/plot-cluster.svg differs: `cargo test --lib -- --ignored write_the_picture_in_docs` writes it"
        );
        // The PNG beside it is a picture of the same size.
        let committed = std::fs::read(docs.join("plot-cluster.png")).unwrap();
        let size = |png: &[u8]| (png[16..20].to_vec(), png[20..24].to_vec());
        assert_eq!(&committed[1..4], b"PNG");
        assert_eq!(size(&committed), size(&png));
        // Three nodes answered, two are slower on FSYNCS/SECOND.
        let all = crate::output::plot::tests::shapes(&svg);
        let fs = crate::output::plot::tests::panel(&all, "FSYNCS/SECOND");
        let marked: Vec<&str> = fs
            .iter()
            .filter(|s| s.text.ends_with(" !"))
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(marked, ["1010.00 !", "1010.00 !"]);
    }

    /// Writes docs/plot-cluster.svg and .png from [`fixture_cluster`].
    #[test]
    #[ignore = "writes docs/; run by hand after the picture changed"]
    fn write_the_picture_in_docs() {
        let svg = plot_svg(&fixture_cluster()).unwrap();
        let png = crate::output::plot::tests::png(&svg).unwrap();
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::write(docs.join("plot-cluster.svg"), &svg).unwrap();
        std::fs::write(docs.join("plot-cluster.png"), &png).unwrap();
    }

    #[test]
    fn cpu_figures_are_columns_without_a_sum() {
        let node_with = |name: &str, sha: f64| {
            let mut doc = crate::output::result::known::result();
            let f = doc.extended.iter_mut().find(|f| f.key == "sha256").unwrap();
            f.value = sha;
            let outcome = NodeOutcome {
                status: Status::Ok,
                detail: None,
                raw: Some(serde_json::to_string(&doc).unwrap()),
                result: Some(doc),
            };
            (node(name), outcome, Some(0), Some(1.0))
        };
        let head = Head {
            timestamp: None,
            path: "/var/tmp".into(),
            cluster: None,
            parallel: true,
            command: String::new(),
            timeout: Duration::from_secs(60),
        };
        let r = ClusterReport::new(
            head,
            vec![
                node_with("pve1", 2000.0),
                node_with("pve2", 2100.0),
                node_with("pve3", 900.0),
            ],
        );
        let text = text(&r);
        assert!(text.contains("SHA256"), "{text}");
        assert!(text.contains("MB/s xN"), "{text}");
        let row = |name: &str| text.lines().find(|l| l.starts_with(name)).unwrap();
        assert!(row("pve3").contains(" 900.00!"), "{}", row("pve3"));
        assert!(
            text.contains("! pve3: SHA256 900.00 is worse than the other nodes' median"),
            "{text}"
        );
        // CPU figures do not add up over nodes.
        let sha = r
            .figures
            .iter()
            .find(|f| f.key == "sha256_mb_per_s")
            .unwrap();
        assert_eq!((sha.aggregate, sha.aggregate_value), (None, None));
    }

    #[test]
    fn parallel_adds_the_at_once_row() {
        let text = text(&known(true));
        let at_once = text.lines().find(|l| l.starts_with("at once")).unwrap();
        assert!(at_once.contains("sum 4300"), "{at_once}");
        assert!(at_once.contains("max 0.120 "), "{at_once}");
        assert!(at_once.contains("max 3.00"), "FSYNC p99: {at_once}");
    }

    #[test]
    fn csv_is_one_table_with_the_single_run_columns() {
        let r = known(true);
        let text = csv(&r, true);
        crate::model::testutil::assert_snapshot("cluster.csv", &text);
        let mut reader = ::csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header[..4], ["node", "status", "detail", "outliers"]);
        assert_eq!(header[4..], single::header());
        let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 4 + 3, "four nodes, median, spread, aggregate");
        assert!(rows.iter().all(|r| r.len() == header.len()));
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(&rows[2][col("outliers")], "fsyncs_per_s");
        assert_eq!(&rows[2][col("fsyncs_per_s")], "600");
        assert_eq!(&rows[3][col("status")], "no pveprobe");
        assert_eq!(&rows[3][col("fsyncs_per_s")], "");
        assert_eq!(&rows[6][col("node")], "(aggregate)");
        assert_eq!(&rows[6][col("fsyncs_per_s")], "4300");
        assert_eq!(&rows[6][col("average_seek_time_ms")], "0.12");
        assert_eq!(&rows[6][col("hostname")], "");
        // Serial runs have no aggregate row.
        assert_eq!(csv(&known(false), true).lines().count(), 1 + 4 + 2);
    }

    #[test]
    fn json_round_trips_and_compare_reads_its_nodes() {
        let r = known(false);
        let text = crate::output::json(&r, true);
        let back: ClusterReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["kind"], "cluster");
        assert_eq!(v["nodes"][3]["status"], "no_pveprobe");
        assert_eq!(v["nodes"][2]["outliers"][0], "fsyncs_per_s");
        assert_eq!(
            crate::commands::cluster::run::exit_status(&r),
            crate::error::exit::Exit::NodeDidNotAnswer
        );

        let readers =
            crate::results::Readers::new(vec![crate::results::Reader::of::<ClusterReport>()]);
        let compare_inputs = |p: &Path| readers.read(p);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("monday.json");
        std::fs::write(&path, &text).unwrap();
        let inputs = compare_inputs(&path).unwrap();
        assert_eq!(
            inputs.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
            [
                "pve1 (monday.json)",
                "pve2 (monday.json)",
                "pve3 (monday.json)"
            ]
        );
        let single = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/pve2.json");
        assert_eq!(compare_inputs(&single).unwrap().len(), 1);
        std::fs::write(&path, "{\"kind\":\"cluster\"}").unwrap();
        assert!(matches!(
            compare_inputs(&path),
            Err(CompareError::Parse { .. })
        ));
    }

    /// A cluster run: pve1 and pve2 answered, pve3 did not.
    fn answered_two_of_three() -> ClusterReport {
        use crate::commands::cluster::{KIND, NodeReport, SCHEMA_VERSION};
        let node = |name: &str, status: Status, hostname: Option<&str>| {
            let result = hostname.map(|h| {
                let mut doc = crate::output::result::known::result();
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
            problems: Vec::new(),
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
        let report = answered_two_of_three();
        let prom = render(&report, Format::Prometheus, true);
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

        let influx = render(&report, Format::Influx, true);
        let hosts: Vec<&str> = influx
            .lines()
            .filter(|l| !l.contains(",instance="))
            .map(|l| l.split(',').nth(1).unwrap())
            .collect();
        assert_eq!(hosts, ["host=pve1", "host=pve2"], "{influx}");
        // Each node's lines are its whole result: the same as its own run's.
        use crate::output::metrics::{MetricsSource, influx};
        let alone = influx::render(&[MetricsSource::on(
            "pve1",
            report.nodes[0].result.as_ref().unwrap(),
        )]);
        assert!(influx.starts_with(&alone), "{influx}");
    }
}
