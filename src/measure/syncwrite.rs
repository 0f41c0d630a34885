//! SYNC WRITE 4K: what a database, ZFS's ZIL or Ceph's WAL asks of the
//! storage, measured as fio does with `--rw=randwrite --bs=4k
//! --ioengine=psync --fdatasync=1 --overwrite=1 --iodepth=1`: each job
//! first writes its own file in full (so the timed writes overwrite
//! allocated blocks and measure no allocation), then writes 4 KiB of
//! incompressible data at random aligned offsets, each write followed by
//! fdatasync (or with the file opened O_DSYNC), until the window ends.
//! Several jobs run on threads, started together.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Barrier;
use std::time::Duration;

use rand::{Rng, RngExt, SeedableRng};

use crate::error::{IoContext, ProbeError};
use crate::measure::seqwrite;
use crate::measure::window::Window;
use crate::model::latency::Latency;
use crate::model::sync::{SyncMode, SyncWriteFigure};
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;

/// Bytes per write.
pub const BLOCK: usize = crate::model::sync::SYNC_BLOCK;

/// What one job counted.
struct JobResult {
    writes: u64,
    elapsed: Duration,
    latency: Latency,
}

/// Writes each of `jobs` files in full, then runs the jobs for `window`.
pub fn measure(
    scratch: &mut ScratchDir,
    jobs: u32,
    file_bytes: u64,
    mode: SyncMode,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<SyncWriteFigure, ProbeError> {
    let pool = seqwrite::aligned_data();
    let blocks = (file_bytes / BLOCK as u64).max(1);
    let mut files = Vec::with_capacity(jobs as usize);
    for job in 0..jobs {
        let name = format!("sync_{job}.dat");
        seqwrite::run(
            scratch,
            &name,
            blocks * BLOCK as u64,
            pool.as_slice(),
            interrupt,
        )?;
        files.push((scratch.open_write(&name, mode == SyncMode::Dsync)?, name));
    }
    run_jobs(&files, blocks, pool.as_slice(), mode, window, interrupt).map_err(|e| match e {
        ProbeError::Io { context, source } => ProbeError::Io {
            context: format!("{}/{context}", scratch.path().display()),
            source,
        },
        other => other,
    })
}

/// One job on a scratch volume's device, opened O_DIRECT (and O_DSYNC for
/// `dsync`): synced 4 KiB writes at random blocks of its first `bytes`,
/// which the prefill wrote.
pub fn measure_device(
    device: &File,
    name: &str,
    bytes: u64,
    mode: SyncMode,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<SyncWriteFigure, ProbeError> {
    let pool = seqwrite::aligned_data();
    let blocks = (bytes / BLOCK as u64).max(1);
    let files = [(
        device.try_clone().context(|| format!("{name}: dup"))?,
        name.to_string(),
    )];
    run_jobs(&files, blocks, pool.as_slice(), mode, window, interrupt)
}

/// The jobs, one thread each, started together.
fn run_jobs(
    files: &[(File, String)],
    blocks: u64,
    pool: &[u8],
    mode: SyncMode,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<SyncWriteFigure, ProbeError> {
    let jobs = files.len() as u32;
    let start = Barrier::new(files.len());
    let cpu_start = crate::measure::engine::cpu_time();
    let results: Vec<Result<JobResult, ProbeError>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(seed, (file, name))| {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    job(
                        file,
                        name,
                        blocks,
                        pool,
                        mode,
                        window,
                        interrupt,
                        seed as u64,
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a sync job does not panic"))
            .collect()
    });
    let cpu = crate::measure::engine::cpu_time().saturating_sub(cpu_start);
    let mut figure = SyncWriteFigure {
        jobs,
        mode,
        file_bytes: blocks * BLOCK as u64,
        writes: 0,
        elapsed: Duration::ZERO,
        latency: Latency::default(),
        cpu,
    };
    for result in results {
        let r = result?;
        figure.writes += r.writes;
        figure.elapsed = figure.elapsed.max(r.elapsed);
        figure.latency.merge(&r.latency);
    }
    Ok(figure)
}

/// One job: synced 4 KiB writes at random blocks of `file` until the
/// window ends. Each write takes its data from another place in the pool,
/// so no two neighbouring writes are alike (deduplication finds nothing).
#[allow(clippy::too_many_arguments)]
fn job(
    file: &File,
    name: &str,
    blocks: u64,
    pool: &[u8],
    mode: SyncMode,
    length: Duration,
    interrupt: &Interrupt,
    seed: u64,
) -> Result<JobResult, ProbeError> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(rand::rng().next_u64() ^ seed);
    let slots = (pool.len() / BLOCK) as u64;
    let mut latency = Latency::default();
    let window = Window::start(length);
    let mut last = Duration::ZERO;
    let mut writes = 0u64;
    loop {
        let block = rng.random_range(0..blocks);
        let at = (writes % slots) as usize * BLOCK;
        file.write_all_at(&pool[at..at + BLOCK], block * BLOCK as u64)
            .context(|| format!("{name}: write"))?;
        if mode == SyncMode::Fdatasync {
            file.sync_data().context(|| format!("{name}: fdatasync"))?;
        }
        writes += 1;
        let now = window.elapsed();
        latency.record(now - last);
        last = now;
        interrupt.check()?;
        if window.ends_before(now) {
            return Ok(JobResult {
                writes,
                elapsed: now,
                latency,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_overwrite_their_full_files_and_count_every_write() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        let figure = measure(
            &mut scratch,
            2,
            64 * BLOCK as u64 + 100,
            SyncMode::Fdatasync,
            Duration::from_millis(30),
            &Interrupt::default(),
        )
        .unwrap();
        assert_eq!(figure.jobs, 2);
        assert_eq!(figure.file_bytes, 64 * BLOCK as u64, "whole blocks");
        assert!(figure.writes >= 2);
        assert_eq!(figure.latency.summary().unwrap().count, figure.writes);
        for job in 0..2 {
            let path = scratch.path().join(format!("sync_{job}.dat"));
            let data = std::fs::read(&path).unwrap();
            assert_eq!(
                data.len() as u64,
                figure.file_bytes,
                "no write beyond the file"
            );
            assert!(data.iter().any(|b| *b != 0), "incompressible, not zeros");
        }
        scratch.remove().unwrap();
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_interrupt_ends_the_jobs() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        let interrupt = Interrupt::default();
        interrupt.raise(15);
        let err = measure(
            &mut scratch,
            1,
            BLOCK as u64,
            SyncMode::Dsync,
            Duration::from_secs(60),
            &interrupt,
        )
        .unwrap_err();
        assert!(matches!(err, ProbeError::Interrupted(15)), "{err}");
        scratch.remove().unwrap();
    }
}
