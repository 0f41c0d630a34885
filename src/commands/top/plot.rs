//! `--plot`: a run's intervals (or a window of a store, `--between`) on one
//! time axis: each of the busiest guests' operations a second, their
//! mean latency as the guest waited, and the node's pressure.

use std::collections::BTreeMap;

use crate::nodeio::sample::TopSample;
use crate::output::plot::{Chart, Line, PlotError, charts_svg};

/// The guests drawn: the busiest over the whole span.
const GUESTS_DRAWN: usize = 4;

/// Seconds of each sample since the first's end.
fn times(samples: &[TopSample]) -> Vec<f64> {
    let at = |s: &TopSample| s.timestamp.parse::<jiff::Timestamp>().ok();
    let first = samples.first().and_then(at);
    samples
        .iter()
        .enumerate()
        .map(|(i, s)| match (first, at(s)) {
            (Some(a), Some(b)) => (b.as_millisecond() - a.as_millisecond()) as f64 / 1000.0,
            _ => i as f64 * s.seconds,
        })
        .collect()
}

/// The picture of `samples`.
pub fn picture(samples: &[TopSample]) -> Result<String, PlotError> {
    let t = times(samples);
    // Each guest drive's operations summed over the span: the busiest drawn.
    let mut total: BTreeMap<String, f64> = BTreeMap::new();
    for s in samples {
        for g in &s.guests {
            *total.entry(g.label()).or_default() += g.iops() * s.seconds;
        }
    }
    let mut busiest: Vec<(String, f64)> = total.into_iter().filter(|(_, v)| *v > 0.0).collect();
    busiest.sort_by(|a, b| b.1.total_cmp(&a.1));
    busiest.truncate(GUESTS_DRAWN);
    let line = |name: &str, f: &dyn Fn(&TopSample) -> Option<f64>| Line {
        name: name.to_string(),
        points: samples
            .iter()
            .zip(&t)
            .filter_map(|(s, x)| f(s).map(|y| (*x, y)))
            .collect(),
        tags: Vec::new(),
    };
    let guest = |label: &str| {
        let label = label.to_string();
        move |s: &TopSample| s.guests.iter().find(|g| g.label() == label).cloned()
    };
    let iops: Vec<Line> = busiest
        .iter()
        .map(|(l, _)| line(l, &|s| guest(l)(s).map(|g| g.iops())))
        .collect();
    let latency: Vec<Line> = busiest
        .iter()
        .map(|(l, _)| {
            line(l, &|s| {
                let g = guest(l)(s)?;
                let ops = g.iops();
                (ops > 0.0 && (g.read_ms.is_some() || g.write_ms.is_some())).then(|| {
                    (g.read_ms.unwrap_or(0.0) * g.read_iops
                        + g.write_ms.unwrap_or(0.0) * g.write_iops)
                        / ops
                })
            })
        })
        .collect();
    let pressure = vec![
        line("IO some", &|s| s.pressure.io_some_pct),
        line("IO full", &|s| s.pressure.io_full_pct),
        line("IO delay", &|s| s.pressure.iowait_pct),
    ];
    let chart = |title: &str, unit: &str, lines: Vec<Line>| Chart {
        title: title.into(),
        x_desc: "seconds".into(),
        unit: unit.into(),
        lines,
        mark_x: None,
    };
    let node = samples.first().map(|s| s.node.as_str()).unwrap_or("?");
    charts_svg(
        &format!("pveprobe top on {node}: {} intervals", samples.len()),
        &[format!(
            "the busiest guest drives over the span: {}",
            busiest
                .iter()
                .map(|(l, _)| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )],
        &[
            chart("operations a second, each guest drive", "IOPS", iops),
            chart("mean latency as the guest waited", "ms", latency),
            chart(
                "the node waiting for I/O: IO some, IO full (PSI), IO delay (iowait)",
                "%",
                pressure,
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodeio::sample::{GuestIo, NodePressure};

    fn at(secs: u64, iops: f64) -> TopSample {
        TopSample {
            kind: "top".into(),
            node: "pve1".into(),
            timestamp: format!("2026-12-05T09:00:{secs:02}Z"),
            seconds: 1.0,
            pressure: NodePressure {
                io_some_pct: Some(iops / 100.0),
                ..NodePressure::default()
            },
            guests: vec![GuestIo {
                kind: "vm".into(),
                id: 101,
                drive: Some("scsi0".into()),
                write_iops: iops,
                write_ms: Some(2.0),
                ..GuestIo::default()
            }],
            ..TopSample::default()
        }
    }

    #[test]
    fn intervals_are_drawn_on_one_time_axis() {
        let samples = [at(0, 100.0), at(1, 2000.0), at(3, 50.0)];
        assert_eq!(times(&samples), [0.0, 1.0, 3.0]);
        let svg = picture(&samples).unwrap();
        assert!(
            svg.contains("VM 101 scsi0") && svg.contains("IO some"),
            "{svg}"
        );
    }
}
