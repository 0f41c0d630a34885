//! One value over time, as a line: a long write's MiB/s second by second.

use plotters::prelude::*;

use super::*;

/// A long write's MiB/s, second by second from 0, as [`series_svg`] draws it.
pub fn seconds_svg(title: &str, mib_per_s: Vec<f64>) -> Result<String, PlotError> {
    let points: Vec<(f64, f64)> = mib_per_s
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i as f64, v))
        .collect();
    series_svg(title, "MiB/s", &points)
}

/// A value over time as a line: `points` are (seconds, value), e.g. a
/// sustained write's MiB/s for each second. `title` goes on top, with a
/// line under it that gives the count of points and their lowest, median
/// and highest value in `unit` (readable without the picture's colour);
/// x is in seconds, y in `unit` from zero. Points that are not finite are
/// left out; Err when none is left.
pub fn series_svg(title: &str, unit: &str, points: &[(f64, f64)]) -> Result<String, PlotError> {
    let points: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if points.is_empty() {
        return Err(PlotError::Empty("no point with a finite time and value"));
    }
    let (x0, x1) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 0.5, x0 + 0.5)
    };
    let mut ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    ys.sort_by(f64::total_cmp);
    let (lowest, highest) = (ys[0], ys[ys.len() - 1]);
    let median = crate::figure::Runs::Median.of(&ys).unwrap_or(lowest);
    let (low, high) = (lowest.min(0.0), highest.max(0.0));
    let top = if high > low {
        high + (high - low) * 0.12
    } else {
        1.0
    };
    let summary = format!(
        "{} points over {} s; lowest {}, median {}, highest {}{}",
        points.len(),
        axis_number(x1 - x0),
        axis_number(lowest),
        axis_number(median),
        axis_number(highest),
        if unit.is_empty() {
            String::new()
        } else {
            format!(" {unit}")
        }
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        draw_head(&root, title, &[summary])?;
        let mut chart = ChartBuilder::on(&root)
            .margin_top(HEAD_H - 16)
            .margin_left(MARGIN)
            .margin_right(24)
            .margin_bottom(MARGIN)
            .x_label_area_size(44)
            .y_label_area_size(Y_AREA)
            .build_cartesian_2d(x0..x1, low..top)?;
        let ticks = |v: &f64| axis_number(*v);
        let mut mesh = chart.configure_mesh();
        mesh.x_label_formatter(&ticks)
            .y_label_formatter(&ticks)
            .max_light_lines(0)
            .bold_line_style(GRID)
            .label_style(style(AXIS_SIZE, false, HPos::Center, VPos::Center))
            .axis_desc_style(style(AXIS_SIZE, false, HPos::Center, VPos::Center))
            .x_desc("seconds");
        if !unit.is_empty() {
            mesh.y_desc(unit);
        }
        mesh.draw()?;
        chart.draw_series(LineSeries::new(
            points.iter().copied(),
            rgb(LINE_STROKE).stroke_width(2),
        ))?;
        if points.len() <= 120 {
            chart.draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, 3, rgb(LINE_STROKE).filled())),
            )?;
        }
        root.present()?;
    }
    Ok(svg)
}
