//! Results read back and ranked: what `pveprobe compare`, the probe's
//! `--baseline` and `cluster` share. [`read`] reads a file as the probe
//! results it holds, by its `kind`; [`rank`] puts several side by side,
//! each figure's ratio to the first, and which differences are smaller
//! than the runs' own spread (noise); [`render`] writes the table. A
//! command's report that files hold implements [`Stored`].

mod rank;
mod read;
mod render;
mod stored;

pub use rank::{
    Cell, Regression, Row, Table, Unlike, Verdict, regressions, runs_of, table, unlike, verdict,
};
pub use read::{CompareError, Input, Reader, Readers, named, parse_versioned, read_result};
pub use render::{BAR_CELLS, panels, plot_svg, render_csv, render_text, render_text_with};
pub use stored::{Named, Stored};

/// A run set beside its baseline, as `--baseline` says it: the table, and
/// each figure worse by more than `tolerance` percent in words (none: no
/// regression). The probe and `net` say it alike.
pub fn against_baseline(base: Input, current: Input, tolerance: f64) -> (String, Vec<String>) {
    let worse = regressions(&base.doc, &current.doc, tolerance);
    let text = render_text(&table(&[base, current]));
    let said = worse
        .iter()
        .map(|r| {
            format!(
                "{} is worse than the baseline by more than {tolerance}%: {:.2} against {:.2} (ratio {:.3})",
                r.label, r.current, r.baseline, r.ratio
            )
        })
        .collect();
    (text, said)
}

#[cfg(test)]
mod tests;
