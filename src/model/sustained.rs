//! SUSTAINED WRITE as data (`--sustained SECS`): the bytes a sequential
//! write got through in each second of a long window, and what a person
//! reads off them: the first and last ten seconds, the slowest second. A
//! drop after the first seconds is an SSD's SLC cache running out, a
//! controller's cache filling up, or ZFS's transaction groups stalling.

use std::time::Duration;

use crate::model::stats::mean;

/// How many seconds the first and last stretches span.
pub const STRETCH: usize = 10;

/// One sustained write.
#[derive(Debug, Clone, PartialEq)]
pub struct SustainedFigure {
    /// Bytes written in each second of the window, from its start.
    pub bytes_per_second: Vec<u64>,
    /// The window asked for.
    pub window: Duration,
    /// From the first write to the end of the final fdatasync.
    pub elapsed: Duration,
    /// The file's size, within which the writes cycle.
    pub file_bytes: u64,
    /// Whether the file was written with O_DIRECT (the filesystem allows it).
    pub direct: bool,
}

impl SustainedFigure {
    /// Each second's MiB/s.
    pub fn series(&self) -> Vec<f64> {
        self.bytes_per_second
            .iter()
            .map(|b| *b as f64 / f64::from(1u32 << 20))
            .collect()
    }

    /// Every byte over the whole time, in MiB/s.
    pub fn mean(&self) -> f64 {
        let total: u64 = self.bytes_per_second.iter().sum();
        super::mib_per_second(total, self.elapsed)
    }

    /// The mean of the first [`STRETCH`] seconds (all, if fewer).
    pub fn first(&self) -> Option<f64> {
        let s = self.series();
        mean(&s[..s.len().min(STRETCH)])
    }

    /// The mean of the last [`STRETCH`] seconds (all, if fewer).
    pub fn last(&self) -> Option<f64> {
        let s = self.series();
        mean(&s[s.len().saturating_sub(STRETCH)..])
    }

    /// The slowest second: (its index from 0, its MiB/s).
    pub fn slowest(&self) -> Option<(usize, f64)> {
        self.series()
            .into_iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// SUSTAINED WRITE: bytes per write.
pub const CHUNK: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(mib: &[u64]) -> SustainedFigure {
        SustainedFigure {
            bytes_per_second: mib.iter().map(|m| m << 20).collect(),
            window: Duration::from_secs(mib.len() as u64),
            elapsed: Duration::from_secs(mib.len() as u64),
            file_bytes: 1 << 30,
            direct: true,
        }
    }

    #[test]
    fn first_last_and_slowest_of_a_cache_running_out() {
        // 12 fast seconds, then the cache is full.
        let mut mib = vec![800; 12];
        mib.extend([200, 150, 90, 160, 150, 140, 150, 150, 150, 150, 150, 150]);
        let f = figure(&mib);
        assert_eq!(f.series().len(), 24);
        assert_eq!(f.first(), Some(800.0));
        assert_eq!(f.last(), Some((90.0 + 160.0 + 140.0 + 150.0 * 7.0) / 10.0));
        assert_eq!(f.slowest(), Some((14, 90.0)));
        let total: u64 = mib.iter().sum();
        assert_eq!(f.mean(), total as f64 / 24.0);
    }

    #[test]
    fn short_windows_use_what_there_is() {
        let f = figure(&[100, 300]);
        assert_eq!((f.first(), f.last()), (Some(200.0), Some(200.0)));
        let none = figure(&[]);
        assert_eq!((none.first(), none.slowest()), (None, None));
        assert_eq!(none.mean(), 0.0);
    }
}
