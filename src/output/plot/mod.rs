//! Pictures of runs and nodes: SVG charts drawn with plotters, and the
//! small Unicode bars and sparklines of a terminal table.
//!
//! Plain data in, text out: the drawing knows nothing of results or
//! clusters. `compare` and `cluster` turn their tables into [`Panel`]s
//! (one per figure value, a [`Bar`] per file or node) and
//! [`panels_svg`] draws them side by side; [`series_svg`] (in `series`)
//! draws one value over time (a sustained write's throughput, second by
//! second). The one file a picture is written to is [`SvgFile`]'s
//! (`file`): opened before the work, so a path that cannot be written
//! costs no measurement.
//!
//! Every picture reads without colour: bars carry their values as text,
//! names stand under them, each panel's title says which way is better,
//! and an outlier is hatched, outlined and marked `!` besides its fill.
//! Each panel is drawn whole, its title first, so a reader of the SVG
//! finds a panel's elements after its title and before the next one.

mod file;
mod inline;
mod series;

pub use file::{SaveError, SvgFile, SvgFileError};
pub use inline::{inline_bar, sparkline};
pub use series::{Chart, LINE_COLOURS, Line, charts_svg, seconds_svg, series_svg};

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontFamily, FontStyle};

use crate::figure::Better;

/// A bar's fill, as the SVG writes it (`fill="#4C72B0"`).
pub const BAR_FILL: &str = "#4C72B0";
/// An outlier's fill; never the only mark (see [`HATCH_STROKE`]).
pub const OUTLIER_FILL: &str = "#DD8452";
/// The stroke of a whisker (one polyline per bar: both caps and the stem).
pub const WHISKER_STROKE: &str = "#111111";
/// The stroke of the diagonal lines that hatch an outlier's bar.
pub const HATCH_STROKE: &str = "#333333";
/// The stroke of the line a series draws.
pub const LINE_STROKE: &str = BAR_FILL;

/// A colour of `#RRGGBB`, at compile time.
const fn rgb(hex: &str) -> RGBColor {
    const fn digit(b: u8) -> u8 {
        match b {
            b'0'..=b'9' => b - b'0',
            b'A'..=b'F' => b - b'A' + 10,
            b'a'..=b'f' => b - b'a' + 10,
            _ => panic!("not a hex digit"),
        }
    }
    let b = hex.as_bytes();
    assert!(b.len() == 7 && b[0] == b'#', "a colour is #RRGGBB");
    RGBColor(
        digit(b[1]) * 16 + digit(b[2]),
        digit(b[3]) * 16 + digit(b[4]),
        digit(b[5]) * 16 + digit(b[6]),
    )
}

const BAR: RGBColor = rgb(BAR_FILL);
const OUTLIER: RGBColor = rgb(OUTLIER_FILL);
const WHISKER: RGBColor = rgb(WHISKER_STROKE);
const HATCH: RGBColor = rgb(HATCH_STROKE);
const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);

// Text sizes as plotters counts them (the SVG's font-size is 1/1.24 of it).
const HEAD_SIZE: f64 = 24.0;
const KEY_SIZE: f64 = 16.0;
const TITLE_SIZE: f64 = 19.0;
const LABEL_SIZE: f64 = 15.0;
const AXIS_SIZE: f64 = 14.0;
/// About one character's width at a size (DejaVu Sans averages 0.6 em).
fn char_px(size: f64) -> f64 {
    size / 1.24 * 0.6
}

/// Outer margin of a picture, in pixels.
const MARGIN: u32 = 16;
/// The picture's title and the two lines of its key.
const HEAD_H: u32 = 86;
const PANEL_H: u32 = 330;
/// A panel's title and the line of its unit and direction.
const TITLE_H: u32 = 50;
/// Two lines of names under the bars.
const NAMES_H: u32 = 40;
const Y_AREA: u32 = 70;
const MIN_PANEL_W: u32 = 340;
const MAX_WIDTH: u32 = 1500;
const MAX_COLUMNS: u32 = 3;
const MAX_NAME_CHARS: usize = 26;
/// Half a bar's width and half a whisker's cap, in slots.
const BAR_HALF: f64 = 0.32;
const CAP_HALF: f64 = 0.12;
/// Pixels between two hatch lines.
const HATCH_STEP: i32 = 7;

/// Why a picture could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// No panel, no bar with a value, no point: an empty picture says nothing.
    #[error("nothing to plot: {0}")]
    Empty(&'static str),
    /// plotters failed; its SVG backend draws into memory, so this is a bug.
    #[error("cannot draw the plot: {0}")]
    Draw(String),
}

impl From<DrawingAreaErrorKind<std::io::Error>> for PlotError {
    fn from(err: DrawingAreaErrorKind<std::io::Error>) -> Self {
        PlotError::Draw(err.to_string())
    }
}

/// One bar of a panel: a node or a result file.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Written under the bar; `NODE (FILE)` goes on two lines, at `(`.
    pub name: String,
    /// Its height; `None` (or not finite) where it has no value: the slot
    /// stays, so every panel has its bars in the same order, and says `none`.
    pub value: Option<f64>,
    /// The value as the caller's table prints it, written above the bar.
    pub text: String,
    /// The lowest and highest of its runs, where there were two or more:
    /// the whisker.
    pub runs: Option<(f64, f64)>,
    /// Hatched, outlined, marked `!` and filled with [`OUTLIER_FILL`].
    pub outlier: bool,
}

/// One figure value: a bar per node or file.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// `FSYNCS/SECOND`, `SYNC WRITE 4K (p99)`.
    pub title: String,
    /// The values' unit, beside the title and along the axis.
    pub unit: String,
    /// Which way is better, written under the title; `None`: not ranked.
    pub better: Option<Better>,
    pub bars: Vec<Bar>,
}

/// What a panel's title says of its direction.
pub fn direction(better: Option<Better>) -> &'static str {
    match better {
        Some(Better::Higher) => "↑ higher is better",
        Some(Better::Lower) => "↓ lower is better",
        None => "not ranked",
    }
}

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite())
}

fn runs(bar: &Bar) -> Option<(f64, f64)> {
    bar.runs.filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
}

fn style(size: f64, bold: bool, h: HPos, v: VPos) -> TextStyle<'static> {
    let weight = if bold {
        FontStyle::Bold
    } else {
        FontStyle::Normal
    };
    TextStyle::from(FontDesc::new(FontFamily::SansSerif, size, weight))
        .color(&BLACK)
        .pos(Pos::new(h, v))
}

/// `text` cut to `max` characters, the last one `…`.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// A name's lines under its bar: `pve1 (pve1.json)` as `pve1` and
/// `(pve1.json)`, each at most [`MAX_NAME_CHARS`].
fn name_lines(name: &str) -> Vec<String> {
    let parts = match name.find(" (") {
        Some(at) => vec![&name[..at], &name[at + 1..]],
        None => vec![name],
    };
    parts
        .into_iter()
        .map(|p| shorten(p, MAX_NAME_CHARS))
        .collect()
}

/// An axis tick: three significant digits, thousands as `k`, millions as `M`.
fn axis_number(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if scaled == 0.0 {
        return "0".into();
    }
    let digits = (2 - scaled.abs().log10().floor() as i32).clamp(0, 4) as usize;
    let text = format!("{scaled:.digits$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}{suffix}")
}

/// Where the panels go: all the same size, in a grid.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Layout {
    panel_w: u32,
    columns: u32,
    width: u32,
    height: u32,
}

fn layout(title: &str, key: &[String], panels: &[Panel]) -> Layout {
    let label_px = char_px(LABEL_SIZE);
    let widest_bar = panels
        .iter()
        .flat_map(|p| &p.bars)
        .map(|b| {
            let name = name_lines(&b.name)
                .iter()
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0);
            name.max(b.text.chars().count() + 2)
        })
        .max()
        .unwrap_or(0);
    let slot = (widest_bar as f64 * label_px + 16.0).clamp(64.0, 220.0);
    let bars = panels
        .iter()
        .map(|p| p.bars.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let longest_title = panels
        .iter()
        .map(|p| p.title.chars().count())
        .max()
        .unwrap_or(0);
    let panel_w = [
        MIN_PANEL_W,
        Y_AREA + 16 + (bars as f64 * slot).ceil() as u32,
        (longest_title as f64 * char_px(TITLE_SIZE)).ceil() as u32 + 24,
    ]
    .into_iter()
    .max()
    .unwrap_or(MIN_PANEL_W);
    let columns = ((MAX_WIDTH - 2 * MARGIN) / panel_w)
        .clamp(1, MAX_COLUMNS)
        .min(panels.len().max(1) as u32);
    let rows = (panels.len() as u32).div_ceil(columns);
    let head_w = key
        .iter()
        .map(|l| l.chars().count() as f64 * char_px(KEY_SIZE))
        .chain([title.chars().count() as f64 * char_px(HEAD_SIZE)])
        .fold(0.0, f64::max)
        .ceil() as u32;
    Layout {
        panel_w,
        columns,
        width: (columns * panel_w).max(head_w) + 2 * MARGIN,
        height: HEAD_H + rows * PANEL_H + MARGIN,
    }
}

/// The picture's title and, under it, its key.
fn draw_head(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    key: &[String],
) -> Result<(), PlotError> {
    let m = MARGIN as i32;
    root.draw(&Text::new(
        title.to_string(),
        (m, m),
        style(HEAD_SIZE, true, HPos::Left, VPos::Top),
    ))?;
    for (i, line) in key.iter().enumerate() {
        root.draw(&Text::new(
            line.clone(),
            (m, m + 30 + 19 * i as i32),
            style(KEY_SIZE, false, HPos::Left, VPos::Top),
        ))?;
    }
    Ok(())
}

/// Diagonal lines (`/`) across a `w` × `h` box, relative to its top left
/// corner, [`HATCH_STEP`] apart.
fn hatch_lines(w: i32, h: i32) -> Vec<[(i32, i32); 2]> {
    let mut lines = Vec::new();
    let mut k = -h + HATCH_STEP / 2;
    while k < w {
        // The line through (k, h) and (k + h, 0), cut to 0..=w.
        let (xs, xe) = (k.max(0), (k + h).min(w));
        if xe > xs {
            lines.push([(xs, h - (xs - k)), (xe, h - (xe - k))]);
        }
        k += HATCH_STEP;
    }
    lines
}

/// One panel in `area`: its title, the unit and direction, the axis, then
/// each bar with its hatching, outline, whisker, value and name.
fn draw_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, panel: &Panel) -> Result<(), PlotError> {
    draw_titles(area, panel)?;
    let (bottom, top) = y_range(panel);
    let n = panel.bars.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .margin_top(TITLE_H)
        .margin_left(4)
        .margin_right(12)
        .margin_bottom(4)
        .x_label_area_size(NAMES_H)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(-0.5..n - 0.5, bottom..top)?;
    let ticks = |v: &f64| axis_number(*v);
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_labels(0)
        .y_labels(6)
        .y_label_formatter(&ticks)
        .max_light_lines(0)
        .bold_line_style(GRID)
        .label_style(style(AXIS_SIZE, false, HPos::Right, VPos::Center))
        .axis_desc_style(style(AXIS_SIZE, false, HPos::Center, VPos::Center));
    if !panel.unit.is_empty() {
        mesh.y_desc(panel.unit.as_str());
    }
    mesh.draw()?;

    let base = area.get_base_pixel();
    let names_y = chart.plotting_area().get_pixel_range().1.end - base.1 + 6;
    for (i, bar) in panel.bars.iter().enumerate() {
        let x = i as f64;
        draw_bar(&mut chart, area, bar, x, bottom, names_y)?;
    }
    Ok(())
}

/// The panel's title, and its unit and direction under it.
fn draw_titles(area: &DrawingArea<SVGBackend<'_>, Shift>, panel: &Panel) -> Result<(), PlotError> {
    let (w, _) = area.dim_in_pixel();
    let centre = w as i32 / 2;
    area.draw(&Text::new(
        panel.title.clone(),
        (centre, 6),
        style(TITLE_SIZE, true, HPos::Center, VPos::Top),
    ))?;
    let how = direction(panel.better);
    let sub = if panel.unit.is_empty() {
        how.to_string()
    } else {
        format!("{} · {how}", panel.unit)
    };
    area.draw(&Text::new(
        sub,
        (centre, 28),
        style(LABEL_SIZE, false, HPos::Center, VPos::Top),
    ))?;

    Ok(())
}

/// The y axis' range: from zero (or a little below the lowest negative)
/// to a little above the highest bar or whisker.
fn y_range(panel: &Panel) -> (f64, f64) {
    let heights: Vec<f64> = panel
        .bars
        .iter()
        .flat_map(|b| {
            let (lo, hi) = runs(b).unzip();
            [finite(b.value), lo, hi]
        })
        .flatten()
        .collect();
    let high = heights.iter().copied().fold(0.0, f64::max);
    let low = heights.iter().copied().fold(0.0, f64::min);
    let span = high - low;
    if span > 0.0 {
        (
            low - span * 0.04 * f64::from(u8::from(low < 0.0)),
            high + span * 0.18,
        )
    } else {
        (0.0, 1.0)
    }
}

/// One bar at `x`: hatched and outlined when an outlier, its whisker, its
/// value above it and its name under the axis (`names_y` pixels down).
fn draw_bar(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    bar: &Bar,
    x: f64,
    bottom: f64,
    names_y: i32,
) -> Result<(), PlotError> {
    let base = area.get_base_pixel();
    let value = finite(bar.value);
    if let Some(v) = value {
        let fill = if bar.outlier { OUTLIER } else { BAR };
        let corners = [(x - BAR_HALF, v.max(0.0)), (x + BAR_HALF, v.min(0.0))];
        chart.draw_series([Rectangle::new(corners, fill.filled())])?;
        if bar.outlier {
            let (left, upper) = chart.backend_coord(&corners[0]);
            let (right, lower) = chart.backend_coord(&corners[1]);
            let anchor = corners[0];
            chart.draw_series(hatch_lines(right - left, lower - upper).into_iter().map(
                |[a, b]| {
                    EmptyElement::at(anchor) + PathElement::new(vec![a, b], HATCH.stroke_width(1))
                },
            ))?;
            let (l, r, t, b) = (corners[0].0, corners[1].0, corners[0].1, corners[1].1);
            chart.draw_series([PathElement::new(
                vec![(l, b), (l, t), (r, t), (r, b), (l, b)],
                BLACK.stroke_width(2),
            )])?;
        }
    }
    let whisker = runs(bar);
    if let Some((lo, hi)) = whisker {
        chart.draw_series([PathElement::new(
            vec![
                (x - CAP_HALF, hi),
                (x + CAP_HALF, hi),
                (x, hi),
                (x, lo),
                (x - CAP_HALF, lo),
                (x + CAP_HALF, lo),
            ],
            WHISKER.stroke_width(2),
        )])?;
    }
    let (text, bold) = match value {
        Some(_) if bar.outlier => (format!("{} !", bar.text), true),
        Some(_) => (bar.text.clone(), false),
        None => ("none".to_string(), false),
    };
    let above = value
        .into_iter()
        .chain(whisker.map(|w| w.1))
        .fold(0.0, f64::max);
    chart.draw_series([EmptyElement::at((x, above))
        + Text::new(
            text,
            (0, -5),
            style(LABEL_SIZE, bold, HPos::Center, VPos::Bottom),
        )])?;
    let px = chart.backend_coord(&(x, bottom)).0 - base.0;
    for (k, line) in name_lines(&bar.name).into_iter().enumerate() {
        area.draw(&Text::new(
            line,
            (px, names_y + 17 * k as i32),
            style(LABEL_SIZE, false, HPos::Center, VPos::Top),
        ))?;
    }
    Ok(())
}

/// Panels side by side (up to three a row), under `title` and a key that
/// says what bars, whiskers and outliers are; `outliers` completes the
/// sentence "Hatched, outlined in black and marked !: …".
///
/// Every panel's y axis starts at zero, so bar heights are proportional
/// to the values. Err when there is no panel or no bar with a value.
pub fn panels_svg(title: &str, outliers: &str, panels: &[Panel]) -> Result<String, PlotError> {
    if panels.is_empty() {
        return Err(PlotError::Empty("no figure to draw"));
    }
    if !panels
        .iter()
        .flat_map(|p| &p.bars)
        .any(|b| finite(b.value).is_some())
    {
        return Err(PlotError::Empty("no figure has a value"));
    }
    let key = [
        "Bars: each figure, its value written above it; whiskers: its runs, lowest to highest (where there were two or more).".to_string(),
        format!("Hatched, outlined in black and marked !: {outliers}."),
    ];
    let at = layout(title, &key, panels);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (at.width, at.height)).into_drawing_area();
        root.fill(&WHITE)?;
        draw_head(&root, title, &key)?;
        for (i, panel) in panels.iter().enumerate() {
            let (column, row) = (i as u32 % at.columns, i as u32 / at.columns);
            let area = root.clone().shrink(
                (MARGIN + column * at.panel_w, HEAD_H + row * PANEL_H),
                (at.panel_w, PANEL_H),
            );
            draw_panel(&area, panel)?;
        }
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `svg` rendered to PNG with resvg (fonts from the system, DejaVu
    /// Sans for sans-serif), as a viewer would: Err when it cannot parse.
    pub(crate) fn png(svg: &str) -> Result<Vec<u8>, String> {
        let mut opt = resvg::usvg::Options::default();
        opt.fontdb_mut().load_system_fonts();
        opt.fontdb_mut().set_sans_serif_family("DejaVu Sans");
        let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| e.to_string())?;
        let size = tree.size().to_int_size();
        let mut pixmap =
            resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("an empty picture")?;
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::default(),
            &mut pixmap.as_mut(),
        );
        pixmap.encode_png().map_err(|e| e.to_string())
    }

    /// A rect, polyline or text of the SVG, with what tests look at.
    #[derive(Debug, Clone)]
    pub(crate) struct Shape {
        pub tag: String,
        pub fill: String,
        pub stroke: String,
        pub x: f64,
        pub y: f64,
        pub width: f64,
        pub height: f64,
        pub points: Vec<(f64, f64)>,
        pub text: String,
        pub weight: String,
    }

    /// Every element of `svg` in document order, parsed as XML.
    pub(crate) fn shapes(svg: &str) -> Vec<Shape> {
        let doc = roxmltree::Document::parse(svg).expect("the SVG is XML");
        let num = |n: &roxmltree::Node, a: &str| {
            n.attribute(a)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        doc.descendants()
            .filter(|n| n.is_element())
            .map(|n| Shape {
                tag: n.tag_name().name().to_string(),
                fill: n.attribute("fill").unwrap_or("").to_string(),
                stroke: n.attribute("stroke").unwrap_or("").to_string(),
                x: num(&n, "x"),
                y: num(&n, "y"),
                width: num(&n, "width"),
                height: num(&n, "height"),
                points: n
                    .attribute("points")
                    .unwrap_or("")
                    .split_whitespace()
                    .filter_map(|p| {
                        let (x, y) = p.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect(),
                text: n.text().unwrap_or("").trim().to_string(),
                weight: n.attribute("font-weight").unwrap_or("").to_string(),
            })
            .collect()
    }

    /// The elements of the panel titled `title`: from its title to the next
    /// panel's (whose title is bold like it).
    pub(crate) fn panel(all: &[Shape], title: &str) -> Vec<Shape> {
        let start = all
            .iter()
            .position(|s| s.tag == "text" && s.text == title)
            .unwrap_or_else(|| panic!("no panel {title}"));
        let end = all[start + 1..]
            .iter()
            .position(|s| s.tag == "text" && s.weight == "bold" && !s.text.ends_with('!'))
            .map_or(all.len(), |i| start + 1 + i);
        all[start..end].to_vec()
    }

    fn bar(name: &str, value: f64, runs: Option<(f64, f64)>, outlier: bool) -> Bar {
        Bar {
            name: name.into(),
            value: Some(value),
            text: format!("{value}"),
            runs,
            outlier,
        }
    }

    fn fsyncs() -> Panel {
        Panel {
            title: "FSYNCS/SECOND".into(),
            unit: "1/s".into(),
            better: Some(Better::Higher),
            bars: vec![
                bar("pve1 (pve1.json)", 3000.0, Some((2900.0, 3100.0)), false),
                bar("pve2 (pve2.json)", 1000.0, Some((950.0, 1020.0)), true),
                bar("pve3", 1500.0, None, false),
            ],
        }
    }

    fn seek() -> Panel {
        Panel {
            title: "AVERAGE SEEK TIME".into(),
            unit: "ms".into(),
            better: Some(Better::Lower),
            bars: vec![
                bar("pve1 (pve1.json)", 0.2, Some((0.18, 0.22)), false),
                Bar {
                    value: None,
                    ..bar("pve2 (pve2.json)", 0.0, None, false)
                },
                bar("pve3", 0.8, None, true),
            ],
        }
    }

    fn bars_of(panel: &[Shape]) -> Vec<Shape> {
        panel
            .iter()
            .filter(|s| s.tag == "rect" && (s.fill == BAR_FILL || s.fill == OUTLIER_FILL))
            .cloned()
            .collect()
    }

    #[test]
    fn bar_heights_are_proportional_to_the_values() {
        let svg = panels_svg("test", "worse", &[fsyncs(), seek()]).unwrap();
        let all = shapes(&svg);
        let bars = bars_of(&panel(&all, "FSYNCS/SECOND"));
        assert_eq!(bars.len(), 3);
        let h: Vec<f64> = bars.iter().map(|b| b.height).collect();
        // Integer pixels: within one pixel of the exact ratio.
        assert!((h[1] - h[0] / 3.0).abs() <= 1.0, "{h:?}");
        assert!((h[2] - h[0] / 2.0).abs() <= 1.0, "{h:?}");
        assert!(h[0] > 150.0, "a tall bar: {h:?}");
        // Bars stand on one baseline, left to right in the given order.
        assert!(
            bars.windows(2)
                .all(|w| w[0].y + w[0].height == w[1].y + w[1].height)
        );
        assert!(bars.windows(2).all(|w| w[0].x < w[1].x));
        assert_eq!(
            bars.iter().map(|b| b.fill.as_str()).collect::<Vec<_>>(),
            [BAR_FILL, OUTLIER_FILL, BAR_FILL]
        );
        // The second panel: a slot without a value has no bar and says so.
        let seek = panel(&all, "AVERAGE SEEK TIME");
        let bars = bars_of(&seek);
        assert_eq!(bars.len(), 2);
        assert!(
            (bars[0].height * 4.0 - bars[1].height).abs() <= 4.0,
            "{bars:?}"
        );
        assert!(seek.iter().any(|s| s.tag == "text" && s.text == "none"));
    }

    #[test]
    fn whiskers_directions_names_and_values_are_written() {
        let svg = panels_svg("test", "worse", &[fsyncs(), seek()]).unwrap();
        let all = shapes(&svg);
        let fs = panel(&all, "FSYNCS/SECOND");
        let texts: Vec<&str> = fs
            .iter()
            .filter(|s| s.tag == "text")
            .map(|s| s.text.as_str())
            .collect();
        assert!(texts.contains(&"1/s · ↑ higher is better"), "{texts:?}");
        for t in ["3000", "1000 !", "1500", "pve1", "(pve1.json)", "pve3"] {
            assert!(texts.contains(&t), "{t} in {texts:?}");
        }
        let seek = panel(&all, "AVERAGE SEEK TIME");
        assert!(seek.iter().any(|s| s.text == "ms · ↓ lower is better"));
        // A whisker where there were runs: from the lowest to the highest.
        let whiskers: Vec<&Shape> = fs
            .iter()
            .filter(|s| s.tag == "polyline" && s.stroke == WHISKER_STROKE)
            .collect();
        assert_eq!(whiskers.len(), 2, "pve1 and pve2 had runs, pve3 one");
        let bars = bars_of(&fs);
        for (w, b) in whiskers.iter().zip(&bars) {
            let xs: Vec<f64> = w.points.iter().map(|p| p.0).collect();
            let centre = b.x + b.width / 2.0;
            assert!(
                xs.iter().all(|x| (x - centre).abs() <= 12.0),
                "{xs:?} at {centre}"
            );
            let (top, bottom) = (w.points[0].1, w.points[5].1);
            // pve1: 2900..3100 around 3000: the bar's top inside the whisker.
            assert!(top < b.y && b.y < bottom, "{top} < {} < {bottom}", b.y);
        }
        let text_in_panel = |p: &[Shape], t: &str| p.iter().any(|s| s.text == t);
        assert!(text_in_panel(
            &all,
            "Hatched, outlined in black and marked !: worse."
        ));
    }

    #[test]
    fn an_outlier_is_marked_without_colour() {
        let svg = panels_svg("test", "worse", &[fsyncs()]).unwrap();
        let all = shapes(&svg);
        let bars = bars_of(&all);
        let outlier = &bars[1];
        let inside = |s: &&Shape| {
            s.points.iter().all(|&(x, y)| {
                x >= outlier.x - 0.5
                    && x <= outlier.x + outlier.width + 0.5
                    && y >= outlier.y - 0.5
                    && y <= outlier.y + outlier.height + 0.5
            })
        };
        let hatch: Vec<&Shape> = all
            .iter()
            .filter(|s| s.tag == "polyline" && s.stroke == HATCH_STROKE)
            .collect();
        assert!(hatch.len() >= 5, "{} hatch lines", hatch.len());
        assert!(hatch.iter().all(inside), "hatching stays inside the bar");
        assert!(hatch.iter().all(|s| s.points.len() == 2));
        // Diagonal: each line rises as much as it runs.
        for s in &hatch {
            let (a, b) = (s.points[0], s.points[1]);
            assert_eq!((b.0 - a.0).abs(), (b.1 - a.1).abs(), "{:?}", s.points);
        }
        // Only the outlier is hatched and outlined; its value says `!`, in bold.
        for plain in [&bars[0], &bars[2]] {
            assert!(!hatch.iter().any(|s| {
                s.points
                    .iter()
                    .any(|&(x, _)| x > plain.x && x < plain.x + plain.width)
            }));
        }
        let outline = all
            .iter()
            .filter(|s| s.tag == "polyline" && s.stroke == "#000000" && s.points.len() == 5)
            .count();
        assert_eq!(outline, 1);
        let marked: Vec<&Shape> = all.iter().filter(|s| s.text.ends_with(" !")).collect();
        assert_eq!(marked.len(), 1);
        assert_eq!(
            (marked[0].text.as_str(), marked[0].weight.as_str()),
            ("1000 !", "bold")
        );
    }

    #[test]
    fn a_picture_renders_to_png() {
        let svg = panels_svg("pveprobe compare: 3 results", "worse", &[fsyncs(), seek()]).unwrap();
        let image = png(&svg).unwrap();
        assert_eq!(&image[1..4], b"PNG");
        let series = series_svg(
            "SEQ WRITE, sustained",
            "MiB/s",
            &[(0.0, 900.0), (1.0, 880.0), (2.0, 300.0), (3.0, 310.0)],
        )
        .unwrap();
        assert_eq!(&png(&series).unwrap()[1..4], b"PNG");
    }

    #[test]
    fn a_series_is_a_line_through_its_points() {
        let points: Vec<(f64, f64)> = (0..10)
            .map(|s| (f64::from(s), if s < 5 { 1000.0 } else { 250.0 }))
            .chain([(10.0, f64::NAN)])
            .collect();
        let svg = series_svg("SEQ WRITE, sustained", "MiB/s", &points).unwrap();
        let all = shapes(&svg);
        let line: Vec<&Shape> = all
            .iter()
            .filter(|s| s.tag == "polyline" && s.stroke == LINE_STROKE)
            .collect();
        assert_eq!(line.len(), 1);
        let pts = &line[0].points;
        assert_eq!(pts.len(), 10, "the NaN is left out");
        // Left to right, and the drop after 5 s is a drop to a quarter
        // (y grows downwards; the axis starts at zero).
        assert!(pts.windows(2).all(|w| w[0].0 < w[1].0));
        let base = all
            .iter()
            .filter(|s| s.tag == "text" && s.text == "0")
            .count();
        assert!(base >= 1, "the y axis starts at 0");
        let circles = all.iter().filter(|s| s.tag == "circle").count();
        assert_eq!(circles, 10);
        assert!(all.iter().any(|s| s.text
            == "10 points over 9 s; lowest 250, median 625, highest 1000 MiB/s"));
        assert!(all.iter().any(|s| s.text == "seconds"));
        assert!(matches!(
            series_svg("x", "", &[(f64::NAN, 1.0)]),
            Err(PlotError::Empty(_))
        ));
        // One point draws too (a window of a second around it).
        assert!(series_svg("x", "", &[(3.0, 1.0)]).is_ok());
    }

    #[test]
    fn nothing_to_draw_is_an_error_and_numbers_are_short() {
        assert!(matches!(
            panels_svg("t", "w", &[]),
            Err(PlotError::Empty("no figure to draw"))
        ));
        let mut empty = fsyncs();
        empty.bars.iter_mut().for_each(|b| b.value = None);
        let err = panels_svg("t", "w", &[empty]).unwrap_err();
        assert_eq!(err.to_string(), "nothing to plot: no figure has a value");
        let ticks: Vec<String> = [
            0.0,
            0.05,
            0.25,
            2.5,
            150.0,
            3000.0,
            25_000.0,
            307_200.0,
            2_410_000.0,
        ]
        .into_iter()
        .map(axis_number)
        .collect();
        assert_eq!(
            ticks,
            [
                "0", "0.05", "0.25", "2.5", "150", "3000", "25k", "307k", "2.41M"
            ]
        );
        assert_eq!(name_lines("pve1 (pve1.json)"), ["pve1", "(pve1.json)"]);
        assert_eq!(
            name_lines("a-very-long-node-name-that-goes-on"),
            ["a-very-long-node-name-tha…"]
        );
        assert_eq!(direction(None), "not ranked");
        assert_eq!(rgb("#4C72B0"), RGBColor(0x4C, 0x72, 0xB0));
    }

    #[test]
    fn hatch_lines_stay_in_their_box() {
        for (w, h) in [(40, 200), (40, 3), (1, 1), (60, 60)] {
            let lines = hatch_lines(w, h);
            assert!(!lines.is_empty() || w * h < 4, "{w}x{h}");
            for [a, b] in lines {
                for (x, y) in [a, b] {
                    assert!(
                        (0..=w).contains(&x) && (0..=h).contains(&y),
                        "{w}x{h}: {x},{y}"
                    );
                }
                assert_eq!(b.0 - a.0, a.1 - b.1, "45 degrees, rising");
            }
        }
        assert!(hatch_lines(0, 0).is_empty());
    }
}
