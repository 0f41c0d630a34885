//! Per-operation latency of the seek and fsync loops, in an HDR histogram.
//!
//! The loops already read the clock after every operation to check their
//! window; the latency of an operation is the time since the previous
//! reading, so recording adds one histogram update and no clock read.

use std::time::Duration;

use hdrhistogram::Histogram;

/// Nanoseconds, 3 significant digits, from 1 ns up to one hour.
const HIGHEST_NS: u64 = 3_600_000_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Latency(Histogram<u64>);

impl Default for Latency {
    fn default() -> Self {
        Self(Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("valid histogram bounds"))
    }
}

/// The quantiles reports show, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    /// Added within schema version 1: absent (0) in older results.
    #[serde(default)]
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    /// Only with at least [`P99_9_MIN_COUNT`] operations: with fewer, the
    /// 99.9th percentile is the maximum under another name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_9_us: Option<f64>,
    pub max_us: f64,
}

/// Operations a 99.9th percentile needs to mean something.
pub const P99_9_MIN_COUNT: u64 = 1000;

impl Latency {
    pub fn record(&mut self, op: Duration) {
        let ns = u64::try_from(op.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.0.saturating_record(ns);
    }

    /// Adds another run's operations.
    pub fn merge(&mut self, other: &Latency) {
        // Both have the same bounds, so adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    /// The `pct`th percentile, in microseconds (`None` when empty).
    pub fn percentile_us(&self, pct: f64) -> Option<f64> {
        (!self.0.is_empty()).then(|| self.0.value_at_quantile(pct / 100.0) as f64 / 1000.0)
    }

    pub fn summary(&self) -> Option<LatencySummary> {
        if self.0.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Some(LatencySummary {
            count: self.0.len(),
            mean_us: self.0.mean() / 1000.0,
            p50_us: us(self.0.value_at_quantile(0.50)),
            p90_us: us(self.0.value_at_quantile(0.90)),
            p99_us: us(self.0.value_at_quantile(0.99)),
            p99_9_us: (self.0.len() >= P99_9_MIN_COUNT)
                .then(|| us(self.0.value_at_quantile(0.999))),
            max_us: us(self.0.max()),
        })
    }
}

/// A histogram as text: HdrHistogram's V2 compressed form in base64,
/// as other HdrHistogram tools read it. A worker sends its operations
/// this way, so the node merges histograms, never percentiles.
impl Latency {
    pub fn encode(&self) -> String {
        use base64::Engine as _;
        use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
        let mut bytes = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = V2DeflateSerializer::new().serialize(&self.0, &mut bytes);
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// The histogram `encode` wrote; `Err` says why the text is none.
    pub fn decode(text: &str) -> Result<Latency, String> {
        use base64::Engine as _;
        use hdrhistogram::serialization::Deserializer;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("not base64: {e}"))?;
        let read: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("not an HdrHistogram: {e:?}"))?;
        let mut latency = Latency::default();
        latency
            .0
            .add(&read)
            .map_err(|e| format!("a histogram beyond an hour: {e:?}"))?;
        Ok(latency)
    }
}

/// [`Latency`] in JSON as [`Latency::encode`]'s text.
impl serde::Serialize for Latency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> serde::Deserialize<'de> for Latency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Latency::decode(&text).map_err(serde::de::Error::custom)
    }
}

/// Merges the latencies of several runs (`None` when none recorded any).
pub fn merged<'a>(runs: impl IntoIterator<Item = Option<&'a Latency>>) -> Option<Latency> {
    runs.into_iter()
        .flatten()
        .fold(None, |acc: Option<Latency>, l| {
            let mut acc = acc.unwrap_or_default();
            acc.merge(l);
            Some(acc)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_known_operations() {
        let mut l = Latency::default();
        for ms in 1..=1000u64 {
            l.record(Duration::from_micros(ms * 10));
        }
        let s = l.summary().unwrap();
        assert_eq!(s.count, 1000);
        // 3 significant digits: values within 0.1%.
        assert!((s.p50_us - 5000.0).abs() <= 5.0, "{s:?}");
        assert!((s.p90_us - 9000.0).abs() <= 9.0, "{s:?}");
        assert!((s.p99_us - 9900.0).abs() <= 10.0, "{s:?}");
        assert!((s.max_us - 10000.0).abs() <= 10.0, "{s:?}");
        assert!((s.p99_9_us.unwrap() - 9990.0).abs() <= 10.0, "{s:?}");
        assert!(Latency::default().summary().is_none());
        // Below 1,000 operations there is no p99.9.
        let mut few = Latency::default();
        few.record(Duration::from_millis(1));
        assert_eq!(few.summary().unwrap().p99_9_us, None);
    }

    /// Merged percentiles are the percentiles of all operations together,
    /// exactly as one histogram of them all gives them, after the trip
    /// through text; an average of the parts' percentiles is not.
    #[test]
    fn merged_histograms_give_the_percentiles_of_all_operations() {
        // A fast worker (1,000 ops at 100-199 us) and a slow one (100 ops
        // at 10-10.99 ms).
        let (mut fast, mut slow, mut all) =
            (Latency::default(), Latency::default(), Latency::default());
        for i in 0..1000u64 {
            let d = Duration::from_micros(100 + i % 100);
            fast.record(d);
            all.record(d);
        }
        for i in 0..100u64 {
            let d = Duration::from_micros(10_000 + i * 10);
            slow.record(d);
            all.record(d);
        }
        let sent: Vec<String> = [&fast, &slow].iter().map(|l| l.encode()).collect();
        let received: Vec<Latency> = sent.iter().map(|t| Latency::decode(t).unwrap()).collect();
        assert_eq!(received[0], fast);
        let m = merged(received.iter().map(Some)).unwrap();
        assert_eq!(m.summary(), all.summary());
        let s = m.summary().unwrap();
        assert_eq!(s.count, 1100);
        // 1,100 operations: the 99th percentile is the slow worker's 89th
        // of 100 (the 1,089th): 10.88 ms, within the histogram's 0.1%.
        assert!((s.p99_us - 10_880.0).abs() <= 11.0, "{s:?}");
        // The median is the 550th: the fast worker's value 154 us, ten times each.
        assert!((s.p50_us - 154.0).abs() <= 0.2, "{s:?}");
        // The average of the two p99s would be nowhere near it.
        let avg = (fast.summary().unwrap().p99_us + slow.summary().unwrap().p99_us) / 2.0;
        assert!((avg - s.p99_us).abs() > 5000.0, "{avg} vs {s:?}");
        // JSON carries the same histogram.
        let json = serde_json::to_string(&slow).unwrap();
        assert_eq!(serde_json::from_str::<Latency>(&json).unwrap(), slow);
        assert!(Latency::decode("not a histogram").is_err());
        assert!(Latency::decode("aGVsbG8=").is_err());
    }

    #[test]
    fn merging_runs_adds_counts() {
        let mut a = Latency::default();
        a.record(Duration::from_millis(1));
        let mut b = Latency::default();
        b.record(Duration::from_millis(3));
        b.record(Duration::from_millis(5));
        let m = merged([Some(&a), None, Some(&b)]).unwrap();
        assert_eq!(m.summary().unwrap().count, 3);
        assert!((m.summary().unwrap().max_us - 5000.0).abs() < 5.0);
        assert!(merged([None, None]).is_none());
    }
}
