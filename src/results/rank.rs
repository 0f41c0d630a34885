//! Results ranked: one row per figure (and key) any of them has, each
//! later result's ratio to the first and its verdict, a difference within
//! the runs' spread marked noise and a figure measured another way
//! `unlike`; and `--baseline`'s regressions.

use serde::Serialize;

use super::read::Input;
use crate::figure::{self, Better, Value};
use crate::output::result::{JsonReport, Reading};

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
/// ranked; a figure measured per key is compared key by key (`instance`).
/// Results written before a method was recorded read as the method
/// of their time (see [`crate::output::result::Settings`]).
pub fn unlike(
    value: &Value,
    instance: Option<&str>,
    a: &JsonReport,
    b: &JsonReport,
) -> Option<Unlike> {
    let figure = value.figure;
    let methods = figure.spec().methods.iter();
    methods.filter(|m| m.applies_to(value.field)).find_map(|m| {
        let (first, this) = (
            a.method(figure, instance, *m)?,
            b.method(figure, instance, *m)?,
        );
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
                            let unlike = unlike(v, inst, docs[0], doc);
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
        .filter(|(v, instance)| unlike(v, instance.as_deref(), baseline, current).is_none())
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
