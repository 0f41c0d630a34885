//! `--latency-target p99=5ms`, HCIBench's "easy run": outstanding I/O
//! per worker raised step by step, each step a short window on every
//! worker at once, until the cluster's percentile (of all its I/Os,
//! merged) crosses the target; the highest total IOPS within it is the
//! answer, and every step is a point of the curve (IOPS against latency).

use serde::{Deserialize, Serialize};

/// The depths tried, in order: outstanding I/Os per worker.
pub const DEPTHS: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// A latency target: a percentile of all the cluster's I/Os, and its limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    /// 99 for p99, 99.9 for p99.9.
    pub percentile: f64,
    pub limit_us: f64,
}

impl LatencyTarget {
    /// `p99=5ms`, `p99.9=20ms`, `p50=800us`, `p95=0.5s`.
    pub fn parse(text: &str) -> Result<LatencyTarget, String> {
        let bad = || format!("{text}: a percentile and a time, as p99=5ms (us, ms or s)");
        let (p, limit) = text.trim().split_once('=').ok_or_else(bad)?;
        let percentile: f64 = p
            .trim()
            .strip_prefix('p')
            .ok_or_else(bad)?
            .parse()
            .map_err(|_| bad())?;
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err(format!("{text}: the percentile is above 0 and below 100"));
        }
        let limit = limit.trim();
        let (number, scale) = if let Some(n) = limit.strip_suffix("us") {
            (n, 1.0)
        } else if let Some(n) = limit.strip_suffix("ms") {
            (n, 1000.0)
        } else if let Some(n) = limit.strip_suffix('s') {
            (n, 1_000_000.0)
        } else {
            return Err(bad());
        };
        let value: f64 = number.trim().parse().map_err(|_| bad())?;
        if !value.is_finite() || value <= 0.0 || value * scale > 3.6e9 {
            return Err(bad());
        }
        Ok(LatencyTarget {
            percentile,
            limit_us: value * scale,
        })
    }

    /// `p99 <= 5 ms`.
    pub fn text(&self) -> String {
        let limit = if self.limit_us >= 1000.0 {
            format!("{} ms", self.limit_us / 1000.0)
        } else {
            format!("{} us", self.limit_us)
        };
        format!("p{} <= {limit}", self.percentile)
    }
}

/// One step: a depth, the cluster's total IOPS and its percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TargetStep {
    pub depth: usize,
    pub iops: f64,
    pub latency_us: f64,
    pub within: bool,
}

/// The search's outcome: every step, and the best within the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    pub target: LatencyTarget,
    pub steps: Vec<TargetStep>,
    /// The step with the highest IOPS within the target; `None` when even
    /// depth 1 was beyond it.
    pub best: Option<TargetStep>,
    /// Why the search stopped: the target crossed, the depths ended, or
    /// a step without figures.
    pub ended: String,
}

/// Raises the depth through `depths` while the percentile stays within
/// the target; `step(depth)` runs one step and gives (IOPS, percentile in
/// µs), `None` when it could not (the run stops there). A step beyond the
/// target ends the search, as does IOPS that fell two steps running (the
/// storage is saturated: more depth adds only latency).
pub fn search(
    target: LatencyTarget,
    depths: &[usize],
    mut step: impl FnMut(usize) -> Option<(f64, f64)>,
) -> TargetResult {
    let mut steps: Vec<TargetStep> = Vec::new();
    let mut ended = "every depth tried stayed within the target".to_string();
    for &depth in depths {
        let Some((iops, latency_us)) = step(depth) else {
            ended = format!("depth {depth} gave no figures");
            break;
        };
        let within = latency_us <= target.limit_us;
        steps.push(TargetStep {
            depth,
            iops,
            latency_us,
            within,
        });
        if !within {
            ended = format!("depth {depth} crossed the target");
            break;
        }
        let n = steps.len();
        if n >= 3 && steps[n - 1].iops < steps[n - 2].iops && steps[n - 2].iops < steps[n - 3].iops
        {
            ended = format!("IOPS fell two steps running by depth {depth}: saturated");
            break;
        }
    }
    // Of steps with equal IOPS, the first: the same for less latency.
    let best = steps
        .iter()
        .filter(|s| s.within)
        .fold(None::<TargetStep>, |best, s| match best {
            Some(b) if b.iops >= s.iops => Some(b),
            _ => Some(*s),
        });
    TargetResult {
        target,
        steps,
        best,
        ended,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A storage whose latency grows with the depth (Little's law over a
    /// device that serves `cap` IOPS with `base_us` of its own): IOPS
    /// rise with depth until `cap`, then only latency grows.
    fn storage(base_us: f64, cap: f64) -> impl FnMut(usize) -> Option<(f64, f64)> {
        move |depth: usize| {
            let d = depth as f64 * 8.0; // 8 workers
            let iops = (d * 1e6 / base_us).min(cap);
            let latency = d * 1e6 / iops;
            Some((iops, latency * 1.5))
        }
    }

    #[test]
    fn the_highest_iops_within_the_target_is_found_and_the_crossing_ends_it() {
        let target = LatencyTarget::parse("p99=5ms").unwrap();
        assert_eq!(target.limit_us, 5000.0);
        let mut asked = Vec::new();
        let mut run = storage(200.0, 100_000.0);
        let r = search(target, &DEPTHS, |d| {
            asked.push(d);
            run(d)
        });
        // Depth 1..32 are within (p99 of 8*d workers at 100k IOPS max:
        // depth 32 = 256 in flight, 2.56 ms x 1.5 = 3.84 ms), 64 crosses
        // (7.68 ms); the search stops there.
        assert_eq!(asked, [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(r.steps.len(), 7);
        assert!(!r.steps[6].within && r.steps[..6].iter().all(|s| s.within));
        let best = r.best.unwrap();
        assert_eq!(best.iops, 100_000.0);
        // Of the steps at the cap (depth 4 on: 32 in flight at 200 us is
        // 160k), the first is kept: the same IOPS for the least latency.
        assert_eq!(best.depth, 4, "{best:?}");
        assert!((best.latency_us - 480.0).abs() < 1e-6, "{best:?}");
        assert!(r.ended.contains("depth 64 crossed"), "{}", r.ended);
    }

    #[test]
    fn beyond_the_target_at_once_a_failed_step_and_saturation() {
        let target = LatencyTarget::parse("p99=100us").unwrap();
        let r = search(target, &DEPTHS, storage(200.0, 1e9));
        assert_eq!(r.steps.len(), 1);
        assert_eq!(r.best, None);
        let r = search(target, &DEPTHS, |_| None);
        assert!(r.steps.is_empty() && r.ended.contains("no figures"));
        // IOPS falling two steps running stops it before the target.
        let falling = [1000.0, 900.0, 800.0, 700.0];
        let r = search(LatencyTarget::parse("p99=1s").unwrap(), &DEPTHS, |d| {
            Some((falling[(d.trailing_zeros() as usize).min(3)], 100.0))
        });
        assert_eq!(r.steps.len(), 3);
        assert_eq!(r.best.unwrap().depth, 1);
        assert!(r.ended.contains("saturated"), "{}", r.ended);
    }

    #[test]
    fn targets_read_as_written() {
        let t = LatencyTarget::parse("p99.9=800us").unwrap();
        assert_eq!((t.percentile, t.limit_us), (99.9, 800.0));
        assert_eq!(
            LatencyTarget::parse("p50=0.5s").unwrap().limit_us,
            500_000.0
        );
        assert_eq!(
            LatencyTarget::parse("p99=5ms").unwrap().text(),
            "p99 <= 5 ms"
        );
        for bad in [
            "99=5ms",
            "p99",
            "p99=5",
            "p100=5ms",
            "p0=5ms",
            "p99=-1ms",
            "p99=xms",
            "p99=1e30s",
        ] {
            assert!(LatencyTarget::parse(bad).is_err(), "{bad}");
        }
    }
}
