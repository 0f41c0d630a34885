//! Values over time or against each other, as lines: a long write's MiB/s
//! second by second ([`series_svg`]), or several charts of several lines
//! each ([`charts_svg`]: `load`'s IOPS per node each second, its latency
//! target's curve). Readable without colour: each line has its own
//! marker and, among several, its name at its last point.

use plotters::prelude::*;

use super::*;

/// One line of a chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line {
    /// Said at its last point when the chart has more than one line.
    pub name: String,
    /// (x, y); points that are not finite are left out.
    pub points: Vec<(f64, f64)>,
    /// Text beside each point (`QD 4`), where given.
    pub tags: Vec<String>,
}

/// One chart: its lines on shared axes, and a vertical mark (a limit).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chart {
    /// Above the chart; empty: none.
    pub title: String,
    pub x_desc: String,
    /// The y axis's unit.
    pub unit: String,
    pub lines: Vec<Line>,
    /// A vertical line at x, with its text (`p99 target 5 ms`).
    pub mark_x: Option<(f64, String)>,
}

/// The colours of a chart's lines, in turn; each line also has its own marker.
pub const LINE_COLOURS: [&str; 4] = [LINE_STROKE, OUTLIER_FILL, "#55A868", "#8172B3"];
/// A chart's height.
const CHART_H: u32 = 360;
/// At most this many points get markers.
const MARKED_POINTS: usize = 120;

/// A long write's MiB/s, second by second from 0, as [`series_svg`] draws it.
pub fn seconds_svg(title: &str, mib_per_s: Vec<f64>) -> Result<String, PlotError> {
    let points: Vec<(f64, f64)> = mib_per_s
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i as f64, v))
        .collect();
    series_svg(title, "MiB/s", &points)
}

fn finite_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect()
}

/// A value over time as a line: `points` are (seconds, value), e.g. a
/// sustained write's MiB/s for each second. `title` goes on top, with a
/// line under it that gives the count of points and their lowest, median
/// and highest value in `unit` (readable without the picture's colour);
/// x is in seconds, y in `unit` from zero. Points that are not finite are
/// left out; Err when none is left.
pub fn series_svg(title: &str, unit: &str, points: &[(f64, f64)]) -> Result<String, PlotError> {
    let points = finite_points(points);
    if points.is_empty() {
        return Err(PlotError::Empty("no point with a finite time and value"));
    }
    let (x0, x1) = x_range(&[&points]);
    let mut ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    ys.sort_by(f64::total_cmp);
    let (lowest, highest) = (ys[0], ys[ys.len() - 1]);
    let median = crate::figure::Runs::Median.of(&ys).unwrap_or(lowest);
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
    let chart = Chart {
        x_desc: "seconds".into(),
        unit: unit.into(),
        lines: vec![Line {
            points,
            ..Line::default()
        }],
        ..Chart::default()
    };
    charts_svg(title, &[summary], &[chart])
}

/// The x range of `lines`, a unit wide around a single x.
fn x_range(lines: &[&[(f64, f64)]]) -> (f64, f64) {
    let (x0, x1) = lines
        .iter()
        .flat_map(|l| l.iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 0.5, x0 + 0.5)
    }
}

/// `charts` one under the other under `title` and its `key` lines.
/// Err when no chart has a finite point.
pub fn charts_svg(title: &str, key: &[String], charts: &[Chart]) -> Result<String, PlotError> {
    let charts: Vec<Chart> = charts
        .iter()
        .map(|c| Chart {
            lines: c
                .lines
                .iter()
                .map(|l| Line {
                    points: finite_points(&l.points),
                    ..l.clone()
                })
                .filter(|l| !l.points.is_empty())
                .collect(),
            ..c.clone()
        })
        .filter(|c| !c.lines.is_empty())
        .collect();
    if charts.is_empty() {
        return Err(PlotError::Empty("no point with a finite time and value"));
    }
    let height = HEAD_H - 16 + CHART_H * charts.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE)?;
        draw_head(&root, title, key)?;
        let (_, body) = root.split_vertically(HEAD_H - 16);
        for (area, chart) in body.split_evenly((charts.len(), 1)).iter().zip(&charts) {
            draw_chart(area, chart)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// One chart in `area`: its title, axes from zero, each line with its
/// marker, tags and (among several) name, and the mark.
fn draw_chart(area: &DrawingArea<SVGBackend<'_>, Shift>, c: &Chart) -> Result<(), PlotError> {
    let all: Vec<&[(f64, f64)]> = c.lines.iter().map(|l| l.points.as_slice()).collect();
    let (x0, x1) = x_range(&all);
    let (x0, x1) = match &c.mark_x {
        Some((x, _)) if x.is_finite() => (x0.min(*x), x1.max(*x)),
        _ => (x0, x1),
    };
    let ys = all.iter().flat_map(|l| l.iter().map(|p| p.1));
    let (lowest, highest) = ys.fold((0.0f64, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
    let top = if highest > lowest {
        highest + (highest - lowest) * 0.12
    } else {
        1.0
    };
    let named = c.lines.len() > 1;
    let mut builder = ChartBuilder::on(area);
    builder
        .margin_left(MARGIN)
        .margin_right(if named { 90 } else { 24 })
        .margin_bottom(MARGIN)
        .x_label_area_size(44)
        .y_label_area_size(Y_AREA);
    if !c.title.is_empty() {
        builder.caption(&c.title, style(TITLE_SIZE, true, HPos::Left, VPos::Top));
    }
    let mut chart = builder.build_cartesian_2d(x0..x1, lowest..top)?;
    let ticks = |v: &f64| axis_number(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_label_formatter(&ticks)
        .y_label_formatter(&ticks)
        .max_light_lines(0)
        .bold_line_style(GRID)
        .label_style(style(AXIS_SIZE, false, HPos::Center, VPos::Center))
        .axis_desc_style(style(AXIS_SIZE, false, HPos::Center, VPos::Center))
        .x_desc(c.x_desc.as_str());
    if !c.unit.is_empty() {
        mesh.y_desc(c.unit.as_str());
    }
    mesh.draw()?;
    if let Some((x, text)) = &c.mark_x {
        chart.draw_series(LineSeries::new(
            [(*x, lowest), (*x, top)],
            WHISKER.stroke_width(1),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            text.clone(),
            (*x, top),
            style(LABEL_SIZE, false, HPos::Left, VPos::Top),
        )))?;
    }
    for (i, line) in c.lines.iter().enumerate() {
        let colour = rgb(LINE_COLOURS[i % LINE_COLOURS.len()]);
        let pts = line.points.iter().copied();
        chart.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?;
        if line.points.len() <= MARKED_POINTS {
            let fill = colour.filled();
            match i % 4 {
                0 => chart.draw_series(pts.clone().map(|p| Circle::new(p, 3, fill)))?,
                1 => chart.draw_series(pts.clone().map(|p| TriangleMarker::new(p, 5, fill)))?,
                2 => chart.draw_series(
                    pts.clone()
                        .map(|p| EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], fill)),
                )?,
                _ => chart.draw_series(
                    pts.clone()
                        .map(|p| Cross::new(p, 4, colour.stroke_width(2))),
                )?,
            };
        }
        let text = |t: String, p: (f64, f64)| {
            Text::new(t, p, style(LABEL_SIZE, false, HPos::Left, VPos::Bottom))
        };
        chart.draw_series(
            line.tags
                .iter()
                .zip(pts.clone())
                .map(|(t, p)| text(t.clone(), p)),
        )?;
        if named && let Some(last) = line.points.last() {
            chart.draw_series(std::iter::once(text(line.name.clone(), *last)))?;
        }
    }
    Ok(())
}
