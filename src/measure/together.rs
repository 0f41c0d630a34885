//! Several I/O jobs at once, started together: a worker VM's jobs on its
//! disks (`load`), `qualify`'s synced-write jobs.

use super::engine::{EngineChoice, Job, run};
use crate::error::ProbeError;
use crate::model::io::IoStats;
use crate::sys::interrupt::Interrupt;

/// Runs `jobs` at once, one thread each, started together (a barrier
/// between set-up and the first operation); their results in order.
pub fn run_together(
    jobs: &[Job<'_>],
    choice: EngineChoice,
    interrupt: &Interrupt,
) -> Vec<Result<IoStats, ProbeError>> {
    let start = std::sync::Barrier::new(jobs.len());
    std::thread::scope(|s| {
        let running: Vec<_> = jobs
            .iter()
            .map(|job| {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    run(job, choice, interrupt)
                })
            })
            .collect();
        running
            .into_iter()
            .map(|h| h.join().expect("an I/O job does not panic"))
            .collect()
    })
}
