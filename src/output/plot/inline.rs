//! Graphics inside a terminal's text: a bar of Unicode block elements
//! beside a number, and a sparkline of a series. Plain characters, so
//! they survive copy and paste and need no terminal capability.

/// The left eighths of a cell, one to eight: `▏` … `█`.
const EIGHTHS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];

/// The lower eighths of a cell, one to eight: `▁` … `█`.
const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A horizontal bar `width` cells wide (always exactly `width`
/// characters, padded with spaces, so table columns stay aligned) that
/// fills `value / max` of them, to an eighth of a cell.
///
/// A value above zero shows at least one eighth, so a small value is not
/// mistaken for none; a value above `max` fills the bar. Nothing is drawn
/// for zero, a negative or non-finite value, or a `max` that is not above
/// zero (there is no scale to draw on).
pub fn inline_bar(value: f64, max: f64, width: usize) -> String {
    let cells = width * 8;
    let eighths = if value > 0.0 && max > 0.0 && value.is_finite() && max.is_finite() {
        let share = (value / max).min(1.0);
        ((share * cells as f64).round() as usize).clamp(1, cells.max(1))
    } else {
        0
    };
    let eighths = eighths.min(cells);
    let mut out: String = std::iter::repeat_n('█', eighths / 8).collect();
    if eighths % 8 > 0 {
        out.push(EIGHTHS[eighths % 8 - 1]);
    }
    let drawn = eighths.div_ceil(8);
    out.extend(std::iter::repeat_n(' ', width - drawn));
    out
}

/// One character per value, `▁` for the lowest to `█` for the highest
/// (scaled from the lowest to the highest finite value, so a steady series
/// with one dip shows the dip); `▄` throughout when all values are equal,
/// and a space for a value that is not finite (a second without a figure).
pub fn sparkline(values: &[f64]) -> String {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let low = finite.clone().fold(f64::INFINITY, f64::min);
    let high = finite.fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .map(|&v| {
            if !v.is_finite() {
                ' '
            } else if high > low {
                let step = ((v - low) / (high - low) * 7.0).round() as usize;
                LEVELS[step.min(7)]
            } else {
                LEVELS[3]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_fills_its_share_to_an_eighth_and_keeps_its_width() {
        assert_eq!(inline_bar(10.0, 10.0, 4), "████");
        assert_eq!(inline_bar(5.0, 10.0, 4), "██  ");
        // 3/8 of 2 cells is 6 eighths of the first.
        assert_eq!(inline_bar(3.0, 8.0, 2), "▊ ");
        assert_eq!(inline_bar(1.0, 16.0, 2), "▏ ");
        assert_eq!(inline_bar(9.0, 16.0, 2), "█▏");
        // Above the scale: full; tiny but above zero: one eighth.
        assert_eq!(inline_bar(20.0, 10.0, 3), "███");
        assert_eq!(inline_bar(0.001, 1000.0, 3), "▏  ");
        // No scale or no value: blank, still as wide.
        for (v, m) in [
            (0.0, 10.0),
            (-1.0, 10.0),
            (f64::NAN, 1.0),
            (1.0, 0.0),
            (1.0, f64::INFINITY),
        ] {
            assert_eq!(inline_bar(v, m, 3), "   ", "{v} of {m}");
        }
        assert_eq!(inline_bar(5.0, 10.0, 0), "");
        for w in 0..10 {
            for v in [0.0, 0.3, 1.0, 2.5, 7.9, 8.0] {
                assert_eq!(inline_bar(v, 8.0, w).chars().count(), w, "{v} in {w}");
            }
        }
        // Every step of a one-cell bar, in order.
        let steps: String = (1..=8).map(|e| inline_bar(f64::from(e), 8.0, 1)).collect();
        assert_eq!(steps, "▏▎▍▌▋▊▉█");
    }

    #[test]
    fn a_sparkline_spans_lowest_to_highest() {
        assert_eq!(
            sparkline(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]),
            "▁▂▃▄▅▆▇█"
        );
        assert_eq!(sparkline(&[100.0, 100.0, 50.0, 100.0]), "██▁█");
        assert_eq!(sparkline(&[3.0, 3.0]), "▄▄");
        assert_eq!(sparkline(&[1.0, f64::NAN, 2.0]), "▁ █");
        assert_eq!(sparkline(&[]), "");
        assert_eq!(sparkline(&[f64::INFINITY]), " ");
    }
}
