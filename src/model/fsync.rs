//! FSYNCS/SECOND as data: the loop's order of system calls and what one
//! run of it counted (see `probe::fsync` for the loop).

use std::time::Duration;

use crate::model::latency::Latency;

/// The order of one iteration's system calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// pveperf's: open (create, truncate), Perl's ioctl, lseek and fstat,
    /// fsync, write, close.
    Pveperf,
    /// open (create, truncate), write, fsync, close: the data is synced.
    WriteThenFsync,
}

impl Order {
    /// The name JSON and CSV record (`settings.fsync_order`).
    pub fn name(self) -> &'static str {
        match self {
            Order::Pveperf => "pveperf",
            Order::WriteThenFsync => "write-then-fsync",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct FsyncFigure {
    pub iterations: u64,
    pub elapsed: Duration,
    /// Per-iteration (open, fsync and write in `order`, close) latency, when recorded.
    pub latency: Option<Latency>,
}

impl FsyncFigure {
    pub fn per_sec(&self) -> f64 {
        super::per_second(self.iterations as f64, self.elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_sec_is_iterations_over_seconds() {
        let f = FsyncFigure {
            iterations: 600,
            elapsed: Duration::from_secs(3),
            latency: None,
        };
        assert_eq!(f.per_sec(), 200.0);
    }
}
