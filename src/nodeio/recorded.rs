//! An interval as `record` keeps it: the sample's JSON with every
//! fractional figure kept to 4 significant digits (a relative error under
//! 0.05%, finer than any view shows; the rest of the bytes would be noise
//! that no compression removes: bench/README.md), and the summary
//! `top --worst` ranks by without opening a frame.

use pveprobe_parse::recordframe::Summary;
use serde_json::Value;

use super::sample::TopSample;

/// Significant digits a fractional figure keeps.
pub const DIGITS: usize = 4;

/// The sample's payload and summary.
pub fn encode(s: &TopSample) -> (Summary, Vec<u8>) {
    let mut v = serde_json::to_value(s).expect("a sample is plain data");
    round(&mut v);
    (
        summary(s),
        serde_json::to_vec(&v).expect("a value serializes"),
    )
}

/// `s` kept in the store as its interval, at the wall time it ended.
pub fn keep(
    writer: &mut crate::store::Writer,
    s: &TopSample,
) -> Result<crate::store::Appended, crate::store::StoreError> {
    let (summary, payload) = encode(s);
    let wall = s
        .timestamp
        .parse::<jiff::Timestamp>()
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .as_microsecond();
    writer.append(wall, summary, &payload)
}

/// A payload read back.
pub fn decode(payload: &[u8]) -> Result<TopSample, String> {
    serde_json::from_slice(payload)
        .map_err(|e| format!("a recorded interval that is no sample: {e}"))
}

/// What `--worst` ranks by: the IO delay, PSI I/O full, the slowest
/// guest drive's mean latency (of a read or a write), the worst vCPU's
/// ready share, PSI memory full and the OOM killer's kills in the
/// interval.
pub fn summary(s: &TopSample) -> Summary {
    let f = |x: Option<f64>| x.map_or(f32::NAN, |x| x as f32);
    let guest = s
        .guests
        .iter()
        .flat_map(|g| [g.read_ms, g.write_ms])
        .flatten()
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let ready = s
        .guest_use
        .iter()
        .filter_map(|g| g.cpu.ready_pct)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let kills = s.node_use.oom_kills.max(s.node_use.kills.len() as u64);
    Summary {
        iowait_pct: f(s.pressure.iowait_pct),
        io_full_pct: f(s.pressure.io_full_pct),
        guest_ms: f(guest),
        ready_pct: f(ready),
        memory_full_pct: f(s.node_use.memory_full_pct),
        oom_kills: kills as f32,
    }
}

fn round(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            let r: f64 = format!("{x:.*e}", DIGITS - 1).parse().unwrap_or(x);
            if let Some(m) = serde_json::Number::from_f64(r) {
                *n = m;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(round),
        Value::Object(o) => o.values_mut().for_each(round),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodeio::sample::{GuestIo, NodePressure};

    #[test]
    fn a_sample_reads_back_to_four_significant_digits_and_its_summary_is_its_worst() {
        let s = TopSample {
            kind: "top".into(),
            timestamp: "2026-12-06T03:00:00Z".into(),
            pressure: NodePressure {
                iowait_pct: Some(61.23456),
                io_full_pct: None,
                ..NodePressure::default()
            },
            guests: vec![
                GuestIo {
                    id: 101,
                    read_ms: Some(3.0),
                    write_ms: Some(250.987654),
                    write_iops: 1234.5678,
                    ..GuestIo::default()
                },
                GuestIo {
                    id: 102,
                    read_ms: Some(12.0),
                    ..GuestIo::default()
                },
            ],
            ..TopSample::default()
        };
        let (sum, bytes) = encode(&s);
        assert_eq!(sum.iowait_pct, 61.23456_f32);
        assert!(sum.io_full_pct.is_nan());
        assert_eq!(sum.guest_ms, 250.987_65_f32);
        let back = decode(&bytes).unwrap();
        assert_eq!(back.pressure.iowait_pct, Some(61.23));
        assert_eq!(back.guests[0].write_ms, Some(251.0));
        assert_eq!(back.guests[0].write_iops, 1235.0);
        assert_eq!(back.guests[1].id, 102);
        assert_eq!(back.timestamp, s.timestamp);
        assert!(decode(b"{").is_err());
    }
}
