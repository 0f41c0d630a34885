//! BUFFERED READS and AVERAGE SEEK TIME as data: what one read test on one
//! block device measured (see `probe::blockdev` for how).

use std::path::PathBuf;
use std::time::Duration;

use crate::model::latency::Latency;

#[derive(Debug, Clone, PartialEq)]
pub struct ReadFigure {
    pub device: PathBuf,
    pub bytes: u64,
    pub elapsed: Duration,
    /// The whole device was read before the window ended.
    pub reached_end: bool,
}

impl ReadFigure {
    /// MiB per second, printed as "MB/sec" like pveperf and hdparm.
    pub fn mib_per_sec(&self) -> f64 {
        super::mib_per_second(self.bytes, self.elapsed)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SeekFigure {
    pub device: PathBuf,
    /// The size of each read: the device's logical block size.
    pub block_size: u32,
    pub device_bytes: u64,
    pub reads: u64,
    pub elapsed: Duration,
    /// Per-read latency, when recorded.
    pub latency: Option<Latency>,
}

impl SeekFigure {
    /// Mean milliseconds per read (1000 / reads per second).
    pub fn mean_ms(&self) -> f64 {
        if self.reads == 0 {
            0.0
        } else {
            self.elapsed.as_secs_f64() * 1000.0 / self.reads as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_follow_pveperf_units() {
        let r = ReadFigure {
            device: "/dev/x".into(),
            bytes: 300 << 20,
            elapsed: Duration::from_secs(3),
            reached_end: false,
        };
        assert_eq!(r.mib_per_sec(), 100.0);
        let s = SeekFigure {
            device: "/dev/x".into(),
            block_size: 512,
            device_bytes: 1 << 30,
            reads: 600,
            elapsed: Duration::from_secs(3),
            latency: None,
        };
        assert_eq!(s.mean_ms(), 5.0);
    }
}
