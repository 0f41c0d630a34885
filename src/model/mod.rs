//! The data model: what the measurements produce and the report holds, as
//! plain types with their small pure methods (rates, means, sizes, names),
//! the statistics every figure uses ([`stats`]) and the latency histogram
//! ([`latency`], plain data too).
//!
//! The model depends on nothing but std, serde, jiff, hdrhistogram, the
//! parsers' crate (a ZFS vdev's shape) and its own submodules. The
//! measurements (`measure`, the commands), the block stack (`blockstack`),
//! the documents and the renderers all import it; it imports none of them,
//! so the model has no cycle through the code that measures. Each type has
//! this one path; the one hint every command gives is [`hint::Hint`].

pub mod blockdev;
pub mod choice;
pub mod cpubench;
pub mod dns;
pub mod filesystem;
pub mod fsync;
pub mod hint;
pub mod host;
pub mod human;
pub mod io;
pub mod latency;
pub mod net;
pub mod pve;
pub mod qualify;
pub mod regex;
pub mod stats;
pub mod storage;
pub mod sustained;
pub mod sync;
#[cfg(test)]
pub(crate) mod testutil;

use std::time::Duration;

/// One run of a device test over one or more devices (a ZFS pool's data
/// disks are read in turn); the run's figure is the mean over the devices.
#[derive(Debug, Clone, PartialEq)]
pub struct Devices<T> {
    pub each: Vec<T>,
    /// True when the devices are not the filesystem's source itself, so the
    /// line names them: `BUFFERED READS:    512.34 MB/sec (sda, sdb)`.
    pub named: bool,
}

/// pveperf's window, to which REGEX/SECOND is scaled.
pub const PVEPERF_WINDOW: Duration = Duration::from_secs(3);

/// `amount` per second of `elapsed` (0 for no time at all).
pub fn per_second(amount: f64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 { 0.0 } else { amount / secs }
}

/// Bytes per `elapsed` in MiB/s (what pveperf and hdparm print as "MB/sec").
pub fn mib_per_second(bytes: u64, elapsed: Duration) -> f64 {
    per_second(bytes as f64, elapsed) / f64::from(1u32 << 20)
}

/// Scales a count made in `window` to the 3-second window pveperf counts in.
pub fn per_pveperf_window(count: u64, window: Duration) -> u64 {
    let secs = window.as_secs_f64();
    if secs <= 0.0 {
        return 0;
    }
    (count as f64 * PVEPERF_WINDOW.as_secs_f64() / secs).round() as u64
}

/// Makes text printable on one line (control characters as `\ooo`): a
/// df source, a path, a reason that names either.
pub fn printable(source: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(source.len());
    for c in source.chars() {
        if c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "\\{b:03o}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_counts_to_three_seconds() {
        assert_eq!(per_pveperf_window(1000, Duration::from_secs(3)), 1000);
        assert_eq!(per_pveperf_window(1000, Duration::from_secs(1)), 3000);
        assert_eq!(per_pveperf_window(1000, Duration::from_secs(6)), 500);
        assert_eq!(per_pveperf_window(1000, Duration::ZERO), 0);
    }
}
