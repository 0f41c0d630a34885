//! The ranked table written: for people (with inline bars at a
//! terminal), as CSV, and as `--plot`'s panels.

use std::fmt::Write as _;

use super::rank::{Table, Verdict};
use crate::output::plot::{self, PlotError};

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

impl crate::output::Document for Table {
    const PICTURE: bool = true;

    /// Ratios of results are no measurement to send to a dashboard.
    const FORMATS: &'static [crate::output::Format] = crate::output::TABLES;

    fn text(&self) -> String {
        render_text(self)
    }

    /// Inline bars only for people: text on a terminal, never in a pipe or file.
    fn text_for_person(&self) -> String {
        render_text_with(self, true)
    }

    fn csv(&self, _header: bool) -> String {
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
    let mut header = vec!["figure".to_string(), "unit".to_string()];
    header.extend(table.columns.iter().map(|c| format!("value: {c}")));
    for c in table.columns.iter().skip(1) {
        header.push(format!("ratio: {c}"));
        header.push(format!("verdict: {c}"));
    }
    let mut records = Vec::new();
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
        records.push(record);
    }
    crate::output::csv::table(Some(header), records)
}
