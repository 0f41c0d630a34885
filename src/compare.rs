//! `pveprobe compare` and `--baseline`: figures of several JSON results
//! side by side, each with its ratio to the first, and which differences
//! are smaller than the runs' own spread (noise).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::report::json::{JsonFigure, JsonReport, SCHEMA_VERSION};
use crate::report::{Line, Settings};

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
    #[error("{} has schema_version {found}; this pveprobe reads up to {SCHEMA_VERSION}", path.display())]
    Version { path: PathBuf, found: u32 },
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
    crate::host::read_capped(path, 64 << 20).map_err(|source| CompareError::Read {
        path: path.into(),
        source,
    })
}

pub fn load(path: &Path) -> Result<Input, CompareError> {
    parse(path, &read_result(path)?)
}

/// A result read from `path` as `text`.
pub fn parse(path: &Path, text: &str) -> Result<Input, CompareError> {
    let doc: JsonReport = serde_json::from_str(text).map_err(|source| CompareError::Parse {
        path: path.into(),
        source,
    })?;
    if doc.schema_version > SCHEMA_VERSION {
        return Err(CompareError::Version {
            path: path.into(),
            found: doc.schema_version,
        });
    }
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match &doc.host.hostname {
        Some(host) => format!("{host} ({file})"),
        None => file,
    };
    Ok(Input { name, doc })
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

/// How `a` and `b` measured `line` differently, when they did in a way
/// that changes the figure: such a pair is not ranked. Results written
/// before a method was recorded read as the method of their time (see
/// [`Settings`]).
pub fn unlike(line: Line, a: &Settings, b: &Settings) -> Option<Unlike> {
    let (what, first, this) = match line {
        Line::RegexPerSecond => ("regex engine", &a.regex_engine, &b.regex_engine),
        Line::FsyncsPerSecond => ("fsync order", &a.fsync_order, &b.fsync_order),
        Line::DnsExt | Line::DnsInt => ("DNS schedule", &a.dns_schedule, &b.dns_schedule),
        _ => return None,
    };
    (first != this).then(|| Unlike {
        what,
        first: first.clone(),
        this: this.clone(),
    })
}

/// A setting in which a file measured a figure otherwise than the first file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unlike {
    /// `regex engine`, `fsync order` or `DNS schedule`.
    pub what: &'static str,
    /// The first file's.
    pub first: String,
    /// This file's.
    pub this: String,
}

/// How `b` compares with `a` (the first file). Noise needs two samples on
/// both sides: a difference no larger than the wider of the two ranges.
pub fn verdict(line: Line, a: &JsonFigure, b: &JsonFigure) -> Verdict {
    if a.samples.len() >= 2 && b.samples.len() >= 2 {
        let spread = (a.max - a.min).max(b.max - b.min);
        if (b.value - a.value).abs() <= spread {
            return Verdict::Noise;
        }
    }
    match line.higher_is_better() {
        _ if b.value == a.value => Verdict::Same,
        None => Verdict::Same,
        Some(higher) if (b.value > a.value) == higher => Verdict::Better,
        Some(_) => Verdict::Worse,
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
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
}

pub fn table(inputs: &[Input]) -> Table {
    let rows = Line::ALL
        .into_iter()
        .filter(|line| inputs.iter().any(|i| i.doc.figures.get(*line).is_some()))
        .map(|line| {
            let first = inputs.first().and_then(|i| i.doc.figures.get(line));
            let cells = inputs
                .iter()
                .enumerate()
                .map(|(index, input)| {
                    let fig = input.doc.figures.get(line);
                    let unlike = match (index, first, fig) {
                        (1.., Some(_), Some(_)) => {
                            unlike(line, &inputs[0].doc.settings, &input.doc.settings)
                        }
                        _ => None,
                    };
                    let (ratio, verdict) = match (index, first, fig) {
                        (1.., Some(a), Some(b)) => (
                            Some(b.value / a.value).filter(|r| r.is_finite()),
                            Some(if unlike.is_some() {
                                Verdict::Unlike
                            } else {
                                verdict(line, a, b)
                            }),
                        ),
                        _ => (None, None),
                    };
                    Cell {
                        value: fig.map(|f| f.value),
                        ratio,
                        verdict,
                        unlike,
                    }
                })
                .collect();
            Row {
                key: line.key(),
                label: line.label(),
                unit: line.unit(),
                cells,
            }
        })
        .collect();
    Table {
        columns: inputs.iter().map(|i| i.name.clone()).collect(),
        rows,
    }
}

fn number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.abs() >= 1000.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.4}"),
        None => "-".to_string(),
    }
}

/// A table for people: values, then each later file's ratio and verdict.
pub fn render_text(table: &Table) -> String {
    let mut out = String::new();
    for (i, name) in table.columns.iter().enumerate() {
        let _ = writeln!(out, "[{}] {name}", i + 1);
    }
    let mut header = format!("{:<18} {:<14}", "figure", "unit");
    for i in 0..table.columns.len() {
        let _ = write!(header, " {:>12}", format!("[{}]", i + 1));
        if i > 0 {
            let _ = write!(header, " {:>7} {:<7}", "ratio", "");
        }
    }
    out.push_str(header.trim_end());
    out.push('\n');
    for row in &table.rows {
        let mut line = format!("{:<18} {:<14}", row.label, row.unit);
        for (i, cell) in row.cells.iter().enumerate() {
            let _ = write!(line, " {:>12}", number(cell.value));
            if i > 0 {
                let ratio = cell
                    .ratio
                    .map(|r| format!("{r:.3}"))
                    .unwrap_or_else(|| "-".into());
                let _ = write!(
                    line,
                    " {ratio:>7} {:<7}",
                    cell.verdict.map(Verdict::word).unwrap_or("")
                );
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
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

pub fn render_json(table: &Table, pretty: bool) -> String {
    let mut text = if pretty {
        serde_json::to_string_pretty(table)
    } else {
        serde_json::to_string(table)
    }
    .expect("a table always serializes");
    text.push('\n');
    text
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
        let mut record = vec![row.key.to_string(), row.unit.to_string()];
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
    pub line: Line,
    pub baseline: f64,
    pub current: f64,
    pub ratio: f64,
}

pub fn regressions(
    baseline: &JsonReport,
    current: &JsonReport,
    tolerance_pct: f64,
) -> Vec<Regression> {
    let tolerance = tolerance_pct / 100.0;
    Line::ALL
        .into_iter()
        .filter(|line| unlike(*line, &baseline.settings, &current.settings).is_none())
        .filter_map(|line| {
            let higher = line.higher_is_better()?;
            let (b, c) = (baseline.figures.get(line)?, current.figures.get(line)?);
            let ratio = c.value / b.value;
            let worse = if higher {
                ratio < 1.0 - tolerance
            } else {
                ratio > 1.0 + tolerance
            };
            (ratio.is_finite() && worse).then_some(Regression {
                line,
                baseline: b.value,
                current: c.value,
                ratio,
            })
        })
        .collect()
}
