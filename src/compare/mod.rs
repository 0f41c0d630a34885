//! `pveprobe compare` and `--baseline`: figures of several JSON results
//! side by side, each with its ratio to the first, and which differences
//! are smaller than the runs' own spread (noise).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::figure::{self, Better, Value};
use crate::output::plot::{self, PlotError};
use crate::probe::report::json::{JsonReport, Reading, SCHEMA_VERSION};

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("cannot read {}: {}", path.display(), crate::error::describe(source))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a pveprobe JSON result: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} has schema_version {found}; this pveprobe reads up to {max}", path.display())]
    Version { path: PathBuf, found: u32, max: u32 },
}

/// A result read from a file, named for the table.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub doc: JsonReport,
}

/// Reads a result file to a bound: a result is kilobytes; the bound keeps
/// `--baseline /dev/zero` finite.
pub fn read_result(path: &Path) -> Result<String, CompareError> {
    crate::sys::host::read_capped(path, 64 << 20).map_err(|source| CompareError::Read {
        path: path.into(),
        source,
    })
}

pub fn load(path: &Path) -> Result<Input, CompareError> {
    parse(path, &read_result(path)?)
}

/// A document of type `T` read from `path` as `text`, refused when its
/// schema version (`version`) is newer than this pveprobe reads (`max`).
pub fn parse_versioned<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    version: fn(&T) -> u32,
    max: u32,
) -> Result<T, CompareError> {
    let doc: T = serde_json::from_str(text).map_err(|source| CompareError::Parse {
        path: path.into(),
        source,
    })?;
    match version(&doc) {
        found if found > max => Err(CompareError::Version {
            path: path.into(),
            found,
            max,
        }),
        _ => Ok(doc),
    }
}

/// A column's name: `WHO (FILE)`.
pub fn named(who: Option<&str>, path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    match who {
        Some(who) => format!("{who} ({file})"),
        None => file,
    }
}

/// What kind of document a file is (a result has no `kind`).
#[derive(serde::Deserialize)]
struct Kind {
    kind: Option<String>,
}

/// A result read from `path` as `text`, by its `kind` (read once): a
/// network, qualify, guest or ceph document, else a probe result.
pub fn parse(path: &Path, text: &str) -> Result<Input, CompareError> {
    let kind = serde_json::from_str::<Kind>(text)
        .ok()
        .and_then(|k| k.kind)
        .unwrap_or_default();
    match kind.as_str() {
        // `cluster --net`, `net`: its figures per link and pair.
        crate::net::report::KIND => {
            let net: crate::net::report::NetReport = parse_versioned(
                path,
                text,
                |d: &crate::net::report::NetReport| d.schema_version,
                crate::net::report::SCHEMA_VERSION,
            )?;
            Ok(Input {
                name: named(net.cluster.as_deref(), path),
                doc: net.as_result(),
            })
        }
        // `qualify DEVICE`: its disk's figures.
        crate::qualify::report::KIND => {
            let q: crate::qualify::report::QualifyReport = parse_versioned(
                path,
                text,
                |d: &crate::qualify::report::QualifyReport| d.schema_version,
                crate::qualify::report::SCHEMA_VERSION,
            )?;
            Ok(Input {
                name: named(Some(&crate::qualify::report::device_words(&q.device)), path),
                doc: q.as_result(),
            })
        }
        // `guest VMID`: the guest side's figures per VM disk.
        crate::guest::report::KIND => {
            let g: crate::guest::report::GuestReport = parse_versioned(
                path,
                text,
                |d: &crate::guest::report::GuestReport| d.schema_version,
                crate::guest::report::SCHEMA_VERSION,
            )?;
            Ok(Input {
                name: named(Some(&format!("VM {}", g.vm.vmid)), path),
                doc: g.as_result(),
            })
        }
        // `ceph`: each OSD's benches and each pool's jobs.
        crate::ceph::report::KIND => {
            let c: crate::ceph::report::CephReport = parse_versioned(
                path,
                text,
                |d: &crate::ceph::report::CephReport| d.schema_version,
                crate::ceph::report::SCHEMA_VERSION,
            )?;
            Ok(Input {
                name: named(
                    c.fsid.as_deref().map(|f| format!("Ceph {f}")).as_deref(),
                    path,
                ),
                doc: c.as_result(),
            })
        }
        _ => {
            let doc: JsonReport = parse_versioned(
                path,
                text,
                |d: &JsonReport| d.schema_version,
                SCHEMA_VERSION,
            )?;
            Ok(Input {
                name: named(doc.host.hostname.as_deref(), path),
                doc,
            })
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Same,
    Better,
    Worse,
    /// The difference is within the runs' spread.
    Noise,
    /// Measured another way (see [`unlike`]): not ranked.
    Unlike,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Noise => "noise",
            Verdict::Unlike => "unlike",
        }
    }
}

/// How `a` and `b` measured a value differently, when they did in a way
/// that changes it (see [`figure::Spec::methods`]): such a pair is not
/// ranked. Results written before a method was recorded read as the method
/// of their time (see [`crate::probe::report::Settings`]).
pub fn unlike(value: &Value, a: &JsonReport, b: &JsonReport) -> Option<Unlike> {
    let figure = value.figure;
    let methods = figure.spec().methods.iter();
    methods.filter(|m| m.applies_to(value.field)).find_map(|m| {
        let (first, this) = (a.method(figure, *m)?, b.method(figure, *m)?);
        (first != this).then(|| Unlike {
            what: m.name(),
            first,
            this,
        })
    })
}

/// A setting in which a file measured a figure otherwise than the first file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unlike {
    /// `regex engine`, `fsync order`, `DNS schedule`, `window`, `data`, `I/O engine`.
    pub what: &'static str,
    /// The first file's.
    pub first: String,
    /// This file's.
    pub this: String,
}

/// How `b` compares with `a` (the first file). Noise needs two samples on
/// both sides: a difference no larger than the wider of the two ranges.
pub fn verdict(value: &Value, a: &Reading, b: &Reading) -> Verdict {
    if let (Some(ra), Some(rb)) = (a.range(), b.range())
        && (b.value - a.value).abs() <= ra.max(rb)
    {
        return Verdict::Noise;
    }
    match value.better_than(b.value, a.value) {
        None => Verdict::Same,
        Some(true) => Verdict::Better,
        Some(false) => Verdict::Worse,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub value: Option<f64>,
    /// value / the first file's value.
    pub ratio: Option<f64>,
    pub verdict: Option<Verdict>,
    /// With verdict `unlike`: how this file measured the figure otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlike: Option<Unlike>,
    /// The lowest and highest of this file's runs, where it kept two or
    /// more: the whisker of `--plot` (not in the JSON, which has the files).
    #[serde(skip)]
    pub runs: Option<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub unit: &'static str,
    /// Which way is better (from the list of figures), for `--plot`.
    #[serde(skip)]
    pub better: Option<Better>,
    /// The value of the list it shows: its decimals.
    #[serde(skip)]
    pub value: &'static Value,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
}

/// Every (value, key) some input has: a row each, in print order.
fn rows_of(inputs: &[&JsonReport]) -> Vec<(&'static Value, Option<String>)> {
    let mut rows: Vec<(&'static Value, Option<String>)> = Vec::new();
    for v in figure::all_values().filter(|v| v.is_number()) {
        for doc in inputs {
            for r in doc.readings(v) {
                let row = (v, r.instance.map(str::to_string));
                if !rows.contains(&row) {
                    rows.push(row);
                }
            }
        }
    }
    rows
}

/// The lowest and highest sample of a reading with two or more.
pub fn runs_of(reading: &Reading) -> Option<(f64, f64)> {
    crate::model::stats::Stats::of(reading.samples)
        .filter(|s| s.count >= 2)
        .map(|s| (s.min, s.max))
}

/// The reading of `v` (for key `instance`) in `doc`.
fn find<'a>(doc: &'a JsonReport, v: &Value, instance: Option<&str>) -> Option<Reading<'a>> {
    doc.readings(v).into_iter().find(|r| r.instance == instance)
}

pub fn table(inputs: &[Input]) -> Table {
    let docs: Vec<&JsonReport> = inputs.iter().map(|i| &i.doc).collect();
    let rows = rows_of(&docs)
        .into_iter()
        .map(|(v, instance)| {
            let inst = instance.as_deref();
            let first = docs.first().and_then(|d| find(d, v, inst));
            let cells = docs
                .iter()
                .enumerate()
                .map(|(index, doc)| {
                    let reading = find(doc, v, inst);
                    let (ratio, verdict, unlike) = match (index, &first, &reading) {
                        (1.., Some(a), Some(b)) => {
                            let unlike = unlike(v, docs[0], doc);
                            let verdict = match unlike {
                                Some(_) => Verdict::Unlike,
                                None => verdict(v, a, b),
                            };
                            (
                                Some(b.value / a.value).filter(|r| r.is_finite()),
                                Some(verdict),
                                unlike,
                            )
                        }
                        _ => (None, None, None),
                    };
                    Cell {
                        value: reading.as_ref().map(|r| r.value),
                        ratio,
                        verdict,
                        unlike,
                        runs: reading.as_ref().and_then(runs_of),
                    }
                })
                .collect();
            let (key, label) = match &instance {
                Some(i) => (format!("{}[{i}]", v.key), format!("{} [{i}]", v.label())),
                None => (v.key.to_string(), v.label()),
            };
            Row {
                key,
                label,
                unit: v.unit(),
                better: v.better,
                value: v,
                cells,
            }
        })
        .collect();
    Table {
        columns: inputs.iter().map(|i| i.name.clone()).collect(),
        rows,
    }
}

/// A table for people: values, then each later file's ratio and verdict.
pub fn render_text(table: &Table) -> String {
    render_text_with(table, false)
}

/// Cells of an inline bar in the text table (see [`render_text_with`]).
pub const BAR_CELLS: usize = 8;

/// The text table; with `bars` (the caller's choice: stdout is a
/// terminal) each value is followed by a bar of [`BAR_CELLS`] cells
/// relative to the largest value of its row.
pub fn render_text_with(table: &Table, bars: bool) -> String {
    use crate::output::table::Align::{Left, Right};
    let mut out = String::new();
    for (i, name) in table.columns.iter().enumerate() {
        let _ = writeln!(out, "[{}] {name}", i + 1);
    }
    let mut align = vec![Left, Left];
    let mut header = vec!["figure".to_string(), "unit".to_string()];
    for i in 0..table.columns.len() {
        header.push(format!("[{}]", i + 1));
        align.push(Right);
        if bars {
            header.push(String::new());
            align.push(Left);
        }
        if i > 0 {
            header.extend(["ratio".to_string(), String::new()]);
            align.extend([Right, Left]);
        }
    }
    let mut rows = vec![header];
    for row in &table.rows {
        let mut cells = vec![row.label.clone(), row.unit.to_string()];
        let largest = row
            .cells
            .iter()
            .filter_map(|c| c.value)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        for (i, cell) in row.cells.iter().enumerate() {
            cells.push(
                cell.value
                    .map_or_else(|| "-".into(), |v| row.value.format(v)),
            );
            if bars {
                cells.push(plot::inline_bar(
                    cell.value.unwrap_or(0.0),
                    largest,
                    BAR_CELLS,
                ));
            }
            if i > 0 {
                cells.push(
                    cell.ratio
                        .map(|r| format!("{r:.3}"))
                        .unwrap_or_else(|| "-".into()),
                );
                cells.push(cell.verdict.map(Verdict::word).unwrap_or("").to_string());
            }
        }
        rows.push(cells);
    }
    out.push_str(&crate::output::table::render(&rows, |c| align[c]));
    for row in &table.rows {
        for (i, cell) in row.cells.iter().enumerate() {
            if let Some(u) = &cell.unlike {
                let _ = writeln!(
                    out,
                    "unlike: {}: {} {} in [1], {} in [{}]; not ranked",
                    row.label,
                    u.what,
                    u.first,
                    u.this,
                    i + 1
                );
            }
        }
    }
    out
}

impl crate::output::Render for Table {
    /// Ratios of results are no measurement to send to a dashboard.
    const FORMATS: &'static [crate::output::Format] = crate::output::TABLES;

    fn text(&self) -> String {
        render_text(self)
    }

    /// Inline bars only for people: text on a terminal, never in a pipe or file.
    fn text_for_person(&self) -> String {
        render_text_with(self, true)
    }

    fn csv(&self) -> String {
        render_csv(self)
    }

    fn picture(&self) -> Option<Result<String, PlotError>> {
        Some(plot_svg(self))
    }
}

/// What `--plot` marks as an outlier in compare's panels.
pub const PLOT_OUTLIERS: &str = "worse than the first file ([1]), verdict worse \
     (beyond the runs' spread where both kept two or more runs)";

/// compare's table as panels: one per row (figure value), a bar per file
/// with its runs as the whisker; a cell whose verdict is `worse` (worse
/// than the first file beyond the runs' noise) is an outlier.
pub fn panels(table: &Table) -> Vec<plot::Panel> {
    table
        .rows
        .iter()
        .map(|row| plot::Panel {
            title: row.label.clone(),
            unit: row.unit.to_string(),
            better: row.better,
            bars: row
                .cells
                .iter()
                .zip(&table.columns)
                .enumerate()
                .map(|(i, (cell, name))| plot::Bar {
                    name: format!("[{}] {name}", i + 1),
                    value: cell.value,
                    text: cell
                        .value
                        .map_or_else(|| "-".into(), |v| row.value.format(v)),
                    runs: cell.runs,
                    outlier: cell.verdict == Some(Verdict::Worse),
                })
                .collect(),
        })
        .collect()
}

/// compare's table as an SVG picture (see [`panels`]).
pub fn plot_svg(table: &Table) -> Result<String, PlotError> {
    let title = format!(
        "pveprobe compare: {} result{}",
        table.columns.len(),
        if table.columns.len() == 1 { "" } else { "s" }
    );
    plot::panels_svg(&title, PLOT_OUTLIERS, &panels(table))
}

/// One row per figure: its values, then each later file's ratio and verdict.
pub fn render_csv(table: &Table) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["figure".to_string(), "unit".to_string()];
    header.extend(table.columns.iter().map(|c| format!("value: {c}")));
    for c in table.columns.iter().skip(1) {
        header.push(format!("ratio: {c}"));
        header.push(format!("verdict: {c}"));
    }
    writer.write_record(&header).expect("writing to memory");
    for row in &table.rows {
        let mut record = vec![row.key.clone(), row.unit.to_string()];
        record.extend(
            row.cells
                .iter()
                .map(|c| c.value.map(|v| v.to_string()).unwrap_or_default()),
        );
        for cell in row.cells.iter().skip(1) {
            record.push(cell.ratio.map(|r| r.to_string()).unwrap_or_default());
            record.push(
                cell.verdict
                    .map(|v| v.word().to_string())
                    .unwrap_or_default(),
            );
        }
        writer.write_record(&record).expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("writing to memory")).expect("UTF-8 fields")
}

/// A figure of the current run that is worse than the baseline's by more
/// than the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// As `compare` labels it: `SEQ WRITE`, `MIXED 70/30 4K QD16 (write)`.
    pub label: String,
    pub baseline: f64,
    pub current: f64,
    pub ratio: f64,
}

/// Every ranked value (and key) both results have, measured alike, that
/// got worse by more than `tolerance_pct`.
pub fn regressions(
    baseline: &JsonReport,
    current: &JsonReport,
    tolerance_pct: f64,
) -> Vec<Regression> {
    let tolerance = tolerance_pct / 100.0;
    rows_of(&[baseline, current])
        .into_iter()
        .filter(|(v, _)| unlike(v, baseline, current).is_none())
        .filter_map(|(v, instance)| {
            let better = v.better?;
            let inst = instance.as_deref();
            let (b, c) = (find(baseline, v, inst)?, find(current, v, inst)?);
            let ratio = c.value / b.value;
            let worse = match better {
                figure::Better::Higher => ratio < 1.0 - tolerance,
                figure::Better::Lower => ratio > 1.0 + tolerance,
            };
            let label = match inst {
                Some(i) => format!("{} [{i}]", v.label()),
                None => v.label(),
            };
            (ratio.is_finite() && worse).then_some(Regression {
                label,
                baseline: b.value,
                current: c.value,
                ratio,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::projection::Facts;
    use crate::figure::projection::io::{IoFacts, SeqWriteFacts};
    use crate::probe::report::json::XFigure;
    use crate::probe::report::json::tests::per_key;

    fn fixture() -> JsonReport {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/pve1.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// pve1.json with SEQ WRITE, RANDOM READ 4K QD32 and MIXED at known numbers.
    fn with_x(seq_write: f64, qd32: f64, mixed: (f64, f64)) -> JsonReport {
        let mut doc = fixture();
        let io = |key: &str, read: f64, write: Option<f64>| XFigure {
            key: key.into(),
            value: read,
            facts: Facts::Io(IoFacts {
                engine: "io_uring".into(),
                read_iops: read,
                write_iops: write,
                ..IoFacts::default()
            }),
            ..XFigure::default()
        };
        doc.extended = vec![
            XFigure {
                key: "seq_write".into(),
                value: seq_write,
                samples: vec![seq_write; 3],
                facts: zeros(false),
                ..XFigure::default()
            },
            io("rand_read_4k_qd32", qd32, None),
            io("mixed_70_30_4k_qd16", mixed.0, Some(mixed.1)),
        ];
        doc
    }

    /// SEQ WRITE's facts: zeros or incompressible data.
    fn zeros(zeros: bool) -> Facts {
        let data = if zeros { "zeros" } else { "incompressible" };
        Facts::SeqWrite(SeqWriteFacts { data: data.into() })
    }

    /// An I/O figure run on psync.
    fn psync(f: &mut XFigure) {
        let Facts::Io(io) = &mut f.facts else {
            panic!("{} is no I/O figure", f.key)
        };
        io.engine = "psync".into();
    }

    fn input(name: &str, doc: JsonReport) -> Input {
        Input {
            name: name.into(),
            doc,
        }
    }

    fn row<'a>(t: &'a Table, key: &str) -> &'a Row {
        t.rows
            .iter()
            .find(|r| r.key == key)
            .unwrap_or_else(|| panic!("no row {key}"))
    }

    #[test]
    fn extended_figures_are_ranked_in_compare_and_by_baseline() {
        let before = with_x(400.0, 80_000.0, (7000.0, 3000.0));
        let after = with_x(200.0, 80_000.0, (7000.0, 1500.0));
        let t = table(&[input("a", before.clone()), input("b", after.clone())]);
        let verdict = |key: &str| row(&t, key).cells[1].verdict;
        assert_eq!(verdict("seq_write"), Some(Verdict::Worse));
        assert_eq!(verdict("rand_read_4k_qd32"), Some(Verdict::Same));
        assert_eq!(verdict("mixed_70_30_4k_qd16"), Some(Verdict::Same));
        assert_eq!(verdict("mixed_70_30_4k_qd16_write"), Some(Verdict::Worse));
        assert_eq!(
            row(&t, "mixed_70_30_4k_qd16_write").label,
            "MIXED 70/30 4K QD16 (write)"
        );
        assert_eq!(row(&t, "seq_write").cells[1].ratio, Some(0.5));
        // Print order: pveperf's lines, then the extended ones.
        let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
        let pos = |k: &str| keys.iter().position(|x| *x == k).unwrap();
        assert!(
            pos("fsyncs_per_second") < pos("seq_write")
                && pos("seq_write") < pos("mixed_70_30_4k_qd16")
        );
        let text = render_text(&t);
        assert!(
            text.lines()
                .any(|l| l.starts_with("MIXED 70/30 4K QD16 (write)  IOPS")),
            "{text}"
        );

        let worse: Vec<String> = regressions(&before, &after, 20.0)
            .into_iter()
            .map(|r| r.label)
            .collect();
        assert_eq!(worse, ["SEQ WRITE", "MIXED 70/30 4K QD16 (write)"]);
        // The other way round nothing got worse.
        assert!(regressions(&after, &before, 20.0).is_empty());
        // A QD32 regression is caught as well.
        let slow = with_x(400.0, 20_000.0, (7000.0, 3000.0));
        let worse = regressions(&before, &slow, 20.0);
        assert_eq!(worse.len(), 1);
        assert_eq!(worse[0].label, "RANDOM READ 4K QD32");
        assert_eq!(worse[0].ratio, 0.25);
    }

    #[test]
    fn a_pair_measured_another_way_is_marked_and_not_ranked() {
        let a = with_x(400.0, 80_000.0, (7000.0, 3000.0));
        // Another I/O engine for QD32, zeros for SEQ WRITE, the rust regex engine.
        let mut b = with_x(100.0, 10_000.0, (7000.0, 3000.0));
        b.extended[0].facts = zeros(true);
        psync(&mut b.extended[1]);
        b.settings.regex_engine = "rust".into();
        let regex = figure::Figure::RegexPerSecond;
        let mut fig = b.figures.get(regex).unwrap().clone();
        fig.value *= 5.0;
        b.figures.set(regex, Some(fig));
        let t = table(&[input("a", a.clone()), input("b", b.clone())]);
        let cell = |key: &str| row(&t, key).cells[1].clone();
        assert_eq!(cell("seq_write").verdict, Some(Verdict::Unlike));
        assert_eq!(
            cell("seq_write").unlike,
            Some(Unlike {
                what: "data",
                first: "incompressible".into(),
                this: "zeros".into()
            })
        );
        assert_eq!(cell("rand_read_4k_qd32").unlike.unwrap().what, "I/O engine");
        assert_eq!(
            cell("regex_per_second").unlike.unwrap().what,
            "regex engine"
        );
        // MIXED ran on the same engine: still ranked.
        assert_eq!(cell("mixed_70_30_4k_qd16").verdict, Some(Verdict::Same));
        assert!(
            regressions(&a, &b, 20.0).is_empty(),
            "nothing measured alike got worse"
        );
        // A perl-engine baseline against a rust-engine run a fifth of it:
        // not a regression (it was a false exit 3).
        let mut slow = a.clone();
        slow.settings.regex_engine = "rust".into();
        let mut fig = slow.figures.get(regex).unwrap().clone();
        fig.value /= 5.0;
        slow.figures.set(regex, Some(fig));
        assert!(regressions(&a, &slow, 20.0).is_empty());
        slow.settings.regex_engine = "perl".into();
        assert_eq!(regressions(&a, &slow, 20.0)[0].label, "REGEX/SECOND");
        let text = render_text(&t);
        assert!(
            text.contains(
                "unlike: RANDOM READ 4K QD32: I/O engine io_uring in [1], psync in [2]; not ranked"
            ),
            "{text}"
        );
        // Another window: BUFFERED READS is not ranked, FSYNCS/SECOND still is.
        let mut short = fixture();
        short.settings.duration_s = 0.5;
        let t = table(&[input("a", fixture()), input("b", short)]);
        assert_eq!(
            row(&t, "buffered_reads").cells[1]
                .unlike
                .as_ref()
                .unwrap()
                .what,
            "window"
        );
        assert_ne!(
            row(&t, "fsyncs_per_second").cells[1].verdict,
            Some(Verdict::Unlike)
        );
    }

    /// RANDOM WRITE into a preallocated file (fio's way, since pveprobe
    /// preallocates) against a result that wrote over a laid-out file (no
    /// `write_blocks`: results from before): not ranked; two new results
    /// are.
    #[test]
    fn random_writes_into_unwritten_and_written_blocks_are_unlike() {
        let with_write = |iops: f64, blocks: Option<&str>| {
            let mut doc = fixture();
            doc.extended = vec![XFigure {
                key: "rand_write_4k_qd1".into(),
                value: iops,
                facts: Facts::Io(IoFacts {
                    engine: "io_uring".into(),
                    write_iops: Some(iops),
                    write_blocks: blocks.map(str::to_string),
                    ..IoFacts::default()
                }),
                ..XFigure::default()
            }];
            doc
        };
        let old = with_write(6932.0, None);
        let new = with_write(12_330.0, Some("unwritten"));
        let t = table(&[input("old", old.clone()), input("new", new.clone())]);
        let cell = row(&t, "rand_write_4k_qd1").cells[1].clone();
        assert_eq!(cell.verdict, Some(Verdict::Unlike));
        assert_eq!(
            cell.unlike,
            Some(Unlike {
                what: "blocks written into",
                first: "written".into(),
                this: "unwritten".into()
            })
        );
        let newer = with_write(6000.0, Some("unwritten"));
        let t = table(&[input("new", new), input("newer", newer)]);
        assert_eq!(
            row(&t, "rand_write_4k_qd1").cells[1].verdict,
            Some(Verdict::Worse)
        );
    }

    /// pve1, pve2 and pve3 of fixtures/results, as `compare` reads them.
    fn fixtures() -> Vec<Input> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
        ["pve1.json", "pve2.json", "pve3-single-run.json"]
            .iter()
            .map(|f| load(&dir.join(f)).unwrap())
            .collect()
    }

    fn panel<'a>(panels: &'a [plot::Panel], title: &str) -> &'a plot::Panel {
        panels
            .iter()
            .find(|p| p.title == title)
            .unwrap_or_else(|| panic!("no panel {title}"))
    }

    #[test]
    fn panels_have_a_bar_per_file_its_runs_and_worse_cells_as_outliers() {
        let t = table(&fixtures());
        let panels = panels(&t);
        assert_eq!(
            panels.iter().map(|p| p.title.as_str()).collect::<Vec<_>>(),
            t.rows.iter().map(|r| r.label.as_str()).collect::<Vec<_>>()
        );
        let fsyncs = panel(&panels, "FSYNCS/SECOND");
        assert_eq!(
            (fsyncs.unit.as_str(), fsyncs.better),
            ("1/s", Some(Better::Higher))
        );
        let names: Vec<&str> = fsyncs.bars.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "[1] pve1 (pve1.json)",
                "[2] pve2 (pve2.json)",
                "[3] pve3 (pve3-single-run.json)"
            ]
        );
        let each = |p: &plot::Panel| {
            p.bars
                .iter()
                .map(|b| (b.value, b.text.clone(), b.runs, b.outlier))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            each(fsyncs),
            [
                (
                    Some(3050.0),
                    "3050.00".into(),
                    Some((3000.0, 3100.0)),
                    false
                ),
                (Some(1010.0), "1010.00".into(), Some((1000.0, 1020.0)), true),
                // One run: no whisker.
                (Some(1010.0), "1010.00".into(), None, true),
            ]
        );
        // Less is better for the seek time; pve2's 505 MiB/s against 510 is
        // within the runs' noise, pve3's single run is not.
        let seek = panel(&panels, "AVERAGE SEEK TIME");
        assert_eq!(seek.better, Some(Better::Lower));
        let reads: Vec<bool> = panel(&panels, "BUFFERED READS")
            .bars
            .iter()
            .map(|b| b.outlier)
            .collect();
        assert_eq!(reads, [false, false, true]);
        let hd = panel(&panels, "HD SIZE");
        assert!(hd.better.is_none() && hd.bars.iter().all(|b| !b.outlier));

        let svg = plot_svg(&t).unwrap();
        let all = crate::output::plot::tests::shapes(&svg);
        assert!(all.iter().any(|s| s.text == "pveprobe compare: 3 results"));
        let hatched = all
            .iter()
            .filter(|s| s.tag == "rect" && s.fill == plot::OUTLIER_FILL)
            .count();
        let worse = t
            .rows
            .iter()
            .flat_map(|r| &r.cells)
            .filter(|c| c.verdict == Some(Verdict::Worse))
            .count();
        assert_eq!(hatched, worse);
        // The table's JSON is unchanged: runs and directions stay out.
        let json = crate::output::json(&t, false);
        assert!(!json.contains("runs") && !json.contains("better"), "{json}");
    }

    #[test]
    fn inline_bars_are_drawn_only_when_asked() {
        let t = table(&fixtures());
        let plain = render_text_with(&t, false);
        assert_eq!(plain, render_text(&t));
        // U+2581..U+258F: the lower and left eighths, the full block between.
        let blocks = |text: &str| {
            text.chars()
                .filter(|c| ('\u{2581}'..='\u{258F}').contains(c))
                .count()
        };
        assert_eq!(blocks(&plain), 0);
        let bars = render_text_with(&t, true);
        assert_eq!(bars.lines().count(), plain.lines().count());
        let line = |text: &str, label: &str| {
            text.lines()
                .find(|l| l.starts_with(label))
                .unwrap()
                .to_string()
        };
        // 3050 is the row's largest: a full bar; 1010 is 21 of its 64 eighths.
        let fsyncs = line(&bars, "FSYNCS/SECOND");
        assert!(
            fsyncs.contains("3050.00  ████████    1010.00  ██▋       0.331  worse"),
            "{fsyncs}"
        );
        assert!(fsyncs.ends_with("0.331  worse"), "{fsyncs}");
        // Columns stay aligned: [2]'s value ends where its heading does.
        let header = line(&bars, "figure");
        let end = |l: &str, what: &str| l[..l.find(what).unwrap() + what.len()].chars().count();
        assert_eq!(end(&header, "[2]"), end(&fsyncs, "1010.00"));
        assert!(blocks(&bars) > 0);
    }

    #[test]
    fn a_figure_measured_per_key_has_a_row_per_key() {
        let mut a = with_x(400.0, 80_000.0, (7000.0, 3000.0));
        let mut b = a.clone();
        let qd32 = "rand_read_4k_qd32";
        per_key(&mut a, qd32, &[("jobs=1", 100.0), ("jobs=4", 400.0)]);
        per_key(&mut b, qd32, &[("jobs=1", 100.0), ("jobs=4", 150.0)]);
        let t = table(&[input("a", a.clone()), input("b", b.clone())]);
        assert_eq!(
            row(&t, "rand_read_4k_qd32[jobs=1]").cells[1].verdict,
            Some(Verdict::Same)
        );
        assert_eq!(
            row(&t, "rand_read_4k_qd32[jobs=4]").cells[1].verdict,
            Some(Verdict::Worse)
        );
        let worse = regressions(&a, &b, 20.0);
        assert_eq!(worse.len(), 1);
        assert_eq!(worse[0].label, "RANDOM READ 4K QD32 [jobs=4]");
    }

    /// A network document's figures are ranked per link and pair.
    #[test]
    fn net_documents_are_ranked_per_link_and_pair() {
        use crate::model::net::Way;
        use crate::net::links::LinkKind;
        use crate::net::report::tests::{end, pair, report_of, rtt, tcp};
        let p = pair(
            "migration",
            LinkKind::Migration,
            end("pve1", "eth2", 1500),
            end("pve2", "eth2", 1500),
        );
        let report = |rtt_p50: f64, mbit: f64| {
            let mut q = p.clone();
            q.latency = Some(rtt(rtt_p50, 0.1, 0.01, 100));
            q.throughput = vec![tcp(Way::Forward, 1, mbit), tcp(Way::Back, 1, mbit)];
            let r = report_of(vec![q]);
            serde_json::to_string(&r).unwrap()
        };
        let before = parse(std::path::Path::new("before.json"), &report(0.05, 940.0)).unwrap();
        let after = parse(std::path::Path::new("after.json"), &report(0.5, 470.0)).unwrap();
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

    /// compare's text (with and without bars) and CSV of the fixture
    /// results, and of two results with extended figures, pinned.
    #[test]
    fn outputs_of_fixed_results_are_pinned() {
        let t = table(&fixtures());
        crate::model::testutil::assert_snapshot("compare.txt", &render_text(&t));
        crate::model::testutil::assert_snapshot("compare-bars.txt", &render_text_with(&t, true));
        crate::model::testutil::assert_snapshot("compare.csv", &render_csv(&t));
        let mut b = with_x(200.0, 10_000.0, (7000.0, 1500.0));
        psync(&mut b.extended[1]);
        let x = table(&[
            input("a", with_x(400.0, 80_000.0, (7000.0, 3000.0))),
            input("b", b),
        ]);
        crate::model::testutil::assert_snapshot("compare-x.txt", &render_text(&x));
        crate::model::testutil::assert_snapshot("compare-x.csv", &render_csv(&x));
    }
}
