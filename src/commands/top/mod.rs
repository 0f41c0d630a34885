//! `pveprobe top`: which guest and which job make the node's IO delay,
//! read-only and live. Each interval it reads the node's disks, CPU time
//! and pressure, every running VM's drives through its QMP socket (one
//! short visit each, the socket left at once: `pvestatd` and `qm` need
//! it) and every container's cgroup; ties each guest drive to the host
//! disk behind it; and names the guest behind a busy disk, a guest that
//! waits far above its disk, a disk at its ceiling, the node's pressure.
//! Nothing is written but its output.

pub mod args;
pub mod cluster;
pub mod plot;
pub mod record;
pub mod render;
pub mod replay;
pub mod run;
pub mod tui;
pub mod when;
pub mod worst;

use std::time::{Duration, Instant};

use crate::commands::common::work::Work;
use crate::nodeio::Sampler;
use crate::nodeio::read::Sources;
use crate::nodeio::sample::TopSample;
use crate::sys::interrupt::Interrupt;

/// What the run reads and for how long.
#[derive(Debug, Clone)]
pub struct TopRequest {
    pub sources: Sources,
    pub node: String,
    pub interval: Duration,
    /// Stop after this many intervals.
    pub count: Option<u64>,
    /// Stop after this long.
    pub seconds: Option<Duration>,
}

/// A live view's run: the request, when the viewer quits, and where each
/// interval goes as it ends (written, kept for `--plot`).
pub struct TopRun<'a> {
    pub req: &'a TopRequest,
    pub quit: &'a dyn Fn() -> bool,
    pub each: &'a dyn Fn(&TopSample) -> Result<(), TopError>,
}

/// An interval that could not be written (or recorded).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TopError(pub String);

/// Samples until `count` intervals, `seconds`, a signal or `quit()`;
/// each interval given to `each` as it ends, one at a time. The
/// intervals made.
impl Work for TopRun<'_> {
    type Report = u64;
    type Error = TopError;

    fn run(&self, interrupt: &Interrupt) -> Result<u64, TopError> {
        let (req, stop, emit) = (self.req, self.quit, self.each);
        let mut sampler = Sampler::new(&req.sources, &req.node);
        let started = Instant::now();
        let mut prev = sampler.read();
        let mut made = 0;
        loop {
            let due = prev.at + req.interval;
            while Instant::now() < due {
                if interrupt.signal().is_some() || stop() {
                    return Ok(made);
                }
                std::thread::sleep((due - Instant::now()).min(Duration::from_millis(50)));
            }
            let now = sampler.read();
            let s = sampler.sample(&prev, &now);
            emit(&s)?;
            made += 1;
            prev = now;
            if req.count.is_some_and(|c| made >= c)
                || req
                    .seconds
                    .is_some_and(|d| started.elapsed() + req.interval / 2 >= d)
            {
                return Ok(made);
            }
        }
    }
}
