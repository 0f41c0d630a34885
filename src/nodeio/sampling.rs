//! The loop that samples the node every interval, which `top` (live) and
//! `record` both stand on: the first reading at once, then an interval
//! each `interval`, each handed on as it ends, until a count, a time, a
//! signal or the caller's own stop (`top`'s q).

use std::time::{Duration, Instant};

use super::Sampler;
use super::read::Sources;
use super::sample::TopSample;
use crate::sys::interrupt::Interrupt;

/// What a run reads and for how long.
#[derive(Debug, Clone)]
pub struct Sampling {
    pub sources: Sources,
    pub node: String,
    pub interval: Duration,
    /// Stop after this many intervals.
    pub count: Option<u64>,
    /// Stop after this long.
    pub seconds: Option<Duration>,
}

impl Sampling {
    /// Samples until `count` intervals, `seconds`, a signal or `quit()`
    /// (asked every 50 ms while it waits for the next interval: a view's
    /// keys; without it the wait is one sleep that a signal ends, so a
    /// recorder at 10 s wakes once an interval); each interval given
    /// to `each` as it ends, one at a time, and the first error `each`
    /// returns ends the run. The intervals made.
    pub fn run<E>(
        &self,
        interrupt: &Interrupt,
        mut quit: Option<&mut dyn FnMut() -> bool>,
        each: &mut dyn FnMut(&TopSample) -> Result<(), E>,
    ) -> Result<u64, E> {
        let mut sampler = Sampler::new(&self.sources, &self.node);
        let started = Instant::now();
        let mut prev = sampler.read();
        let mut made = 0;
        loop {
            let due = prev.at + self.interval;
            match quit.as_deref_mut() {
                None => {
                    if interrupt.wait(due).is_some() {
                        return Ok(made);
                    }
                }
                Some(quit) => {
                    while Instant::now() < due {
                        if interrupt.signal().is_some() || quit() {
                            return Ok(made);
                        }
                        interrupt.wait(due.min(Instant::now() + Duration::from_millis(50)));
                    }
                }
            }
            let now = sampler.read();
            each(&sampler.sample(&prev, &now))?;
            made += 1;
            prev = now;
            if self.count.is_some_and(|c| made >= c)
                || self
                    .seconds
                    .is_some_and(|d| started.elapsed() + self.interval / 2 >= d)
            {
                return Ok(made);
            }
        }
    }
}
