//! The I/O engine that the probe's extended tests and `qualify` share:
//! queue-depth I/O, O_DIRECT reads and writes of one
//! block size at sequential or random aligned offsets, with `depth`
//! operations in flight, for a window. io_uring where the kernel allows it;
//! otherwise `depth` threads doing pread/pwrite (fio's psync with numjobs).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, types};
use rand::{Rng, RngExt, SeedableRng};

use crate::error::ProbeError;
use crate::measure::iobuf::{AlignedBuf, fill_random};
use crate::model::choice::Choice;
use crate::model::io::{Engine, IoStats};
use crate::model::latency::Latency;
use crate::sys::interrupt::Interrupt;

/// A page: blocks up to this size lie in one page wherever they are.
const PAGE: usize = 4096;

/// One I/O job of an extended test: `depth` operations of `block` bytes in
/// flight, `read_pct` of them reads, `random_pct` at random offsets (the
/// rest sequential).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobParams {
    pub block: usize,
    pub depth: usize,
    pub read_pct: u32,
    pub random_pct: u32,
}

impl JobParams {
    /// SEQ READ DIRECT: 1 MiB reads, 8 in flight, sequential.
    pub const SEQ_READ_DIRECT: JobParams = JobParams {
        block: 1 << 20,
        depth: 8,
        read_pct: 100,
        random_pct: 0,
    };
    /// RANDOM READ 4K QD1.
    pub const RAND_READ_4K_QD1: JobParams = JobParams {
        block: 4096,
        depth: 1,
        read_pct: 100,
        random_pct: 100,
    };
    /// RANDOM READ 4K QD32.
    pub const RAND_READ_4K_QD32: JobParams = JobParams {
        block: 4096,
        depth: 32,
        read_pct: 100,
        random_pct: 100,
    };
    /// RANDOM WRITE 4K QD1.
    pub const RAND_WRITE_4K_QD1: JobParams = JobParams {
        block: 4096,
        depth: 1,
        read_pct: 0,
        random_pct: 100,
    };
    /// RANDOM WRITE 4K QD32.
    pub const RAND_WRITE_4K_QD32: JobParams = JobParams {
        block: 4096,
        depth: 32,
        read_pct: 0,
        random_pct: 100,
    };
    /// MIXED 70/30 4K QD16: IOMeter's 70% read, 80% random.
    pub const MIXED: JobParams = JobParams {
        block: 4096,
        depth: 16,
        read_pct: 70,
        random_pct: 80,
    };
}

/// Which engine runs the I/O (`--io-engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineChoice {
    /// io_uring, falling back to psync when the kernel refuses it
    Auto,
    /// io_uring only
    IoUring,
    /// one thread per outstanding I/O doing pread/pwrite
    Psync,
}

impl EngineChoice {
    pub const ALL: [EngineChoice; 3] = [
        EngineChoice::Auto,
        EngineChoice::IoUring,
        EngineChoice::Psync,
    ];

    /// The name `--io-engine` takes (and serde writes).
    pub fn name(self) -> &'static str {
        match self {
            EngineChoice::Auto => "auto",
            EngineChoice::IoUring => "io-uring",
            EngineChoice::Psync => "psync",
        }
    }
}

impl Choice for EngineChoice {
    const ALL: &'static [Self] = &EngineChoice::ALL;

    fn name(self) -> &'static str {
        EngineChoice::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            EngineChoice::Auto => "io_uring, falling back to psync when the kernel refuses it",
            EngineChoice::IoUring => "io_uring only",
            EngineChoice::Psync => "one thread per outstanding I/O doing pread/pwrite",
        }
    }
}

/// What share of operations are reads and random.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pattern {
    pub read_pct: u32,
    pub random_pct: u32,
}

/// One timed I/O job.
pub struct Job<'a> {
    pub file: &'a File,
    pub block: usize,
    /// Offsets stay below this (a multiple of `block`).
    pub span: u64,
    pub depth: usize,
    pub pattern: Pattern,
    pub window: Duration,
    /// Counts the job's completed operations as they complete, for a
    /// caller that reports each second's (`load`'s workers).
    pub progress: Option<&'a AtomicU64>,
}

impl<'a> Job<'a> {
    /// The job `params` describe (see `plan`) on `file`, below `span`.
    pub fn new(file: &'a File, params: JobParams, span: u64, window: Duration) -> Self {
        Job {
            file,
            block: params.block,
            span,
            depth: params.depth,
            pattern: Pattern {
                read_pct: params.read_pct,
                random_pct: params.random_pct,
            },
            window,
            progress: None,
        }
    }
}

/// Picks offsets: sequential with a shared cursor, or random aligned
/// through the random map.
struct Offsets<R> {
    rng: R,
    pattern: Pattern,
    block: u64,
    blocks: u64,
    cursor: Arc<AtomicU64>,
    map: Arc<RandomMap>,
}

impl<R: Rng> Offsets<R> {
    fn next(&mut self) -> (bool, u64) {
        let read = match self.pattern.read_pct {
            100.. => true,
            0 => false,
            pct => self.rng.random_range(0..100) < pct,
        };
        let random = match self.pattern.random_pct {
            100.. => true,
            0 => false,
            pct => self.rng.random_range(0..100) < pct,
        };
        let block = if random {
            self.map.next()
        } else {
            self.cursor.fetch_add(1, Ordering::Relaxed) % self.blocks
        };
        (read, block * self.block)
    }
}

/// fio's random map (its default, `norandommap=0`): random offsets that
/// visit every block of the span once before any block is visited again,
/// then start a new pass in a new order. Without it a random write job
/// writes some blocks twice within a pass, and a block's second write is
/// cheaper than its first wherever the first allocates (a preallocated
/// file's unwritten extent, a thin volume): 1.15x to 1.37x fio's figure on
/// a fresh file. Held without a bitmap: the n-th operation of a pass takes
/// block `permute(n)` of a keyed bijection on the span's blocks (rounds of
/// xor, odd multiply and xorshift on the bits that hold the block count,
/// each a bijection; values past the last block walk on, which stays a
/// bijection on the blocks), with a fresh key for every pass. One map is
/// shared by all of a job's operations, as fio's is by its I/Os.
struct RandomMap {
    blocks: u64,
    bits: u32,
    seed: u64,
    taken: AtomicU64,
}

impl RandomMap {
    fn new(blocks: u64, seed: u64) -> Self {
        let bits = (u64::BITS - blocks.saturating_sub(1).leading_zeros()).max(1);
        RandomMap {
            blocks: blocks.max(1),
            bits,
            seed,
            taken: AtomicU64::new(0),
        }
    }

    /// The next block of the current pass.
    fn next(&self) -> u64 {
        let n = self.taken.fetch_add(1, Ordering::Relaxed);
        self.block(n / self.blocks, n % self.blocks)
    }

    /// Block `index` of pass `pass`.
    fn block(&self, pass: u64, index: u64) -> u64 {
        let key = splitmix64(self.seed ^ splitmix64(pass));
        let mut x = index;
        loop {
            x = self.permute(x, key);
            if x < self.blocks {
                return x;
            }
        }
    }

    fn permute(&self, mut x: u64, key: u64) -> u64 {
        let mask = u64::MAX >> (u64::BITS - self.bits);
        let shift = self.bits.div_ceil(2);
        for round in 0..3u64 {
            let k = splitmix64(key.wrapping_add(round));
            x ^= k & mask;
            x = x.wrapping_mul(k | 1) & mask;
            x ^= x >> shift;
        }
        x
    }
}

/// SplitMix64's finaliser: a well-mixed 64-bit value from any other.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// User plus system CPU time of this process so far.
pub fn cpu_time() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF);
    usage.map_or(Duration::ZERO, |u| {
        let tv = |t: nix::sys::time::TimeVal| {
            Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000)
        };
        tv(u.user_time()) + tv(u.system_time())
    })
}

/// `count` buffers of random data, one per operation in flight; blocks
/// larger than a page in huge pages, so the kernel does not split them
/// (see [`AlignedBuf::contiguous`]).
fn buffers(job: &Job, count: usize) -> Vec<AlignedBuf> {
    (0..count)
        .map(|i| {
            let mut b = if job.block > PAGE {
                AlignedBuf::contiguous(job.block)
            } else {
                AlignedBuf::new(job.block)
            };
            fill_random(b.as_mut_slice(), 0x9e37_79b9 + i as u64);
            b
        })
        .collect()
}

fn io_error(what: &str, code: i32) -> ProbeError {
    ProbeError::io(what.to_string(), std::io::Error::from_raw_os_error(code))
}

/// Runs `job` with the chosen engine.
pub fn run(job: &Job, choice: EngineChoice, interrupt: &Interrupt) -> Result<IoStats, ProbeError> {
    if job.span < job.block as u64 || job.depth == 0 {
        return Err(ProbeError::Unavailable(
            "nothing to read: the target is smaller than one block".into(),
        ));
    }
    match choice {
        EngineChoice::Psync => run_psync(job, interrupt, None),
        EngineChoice::IoUring => run_uring(job, interrupt).map_err(|e| match e {
            Setup::Refused(err) => ProbeError::io("io_uring is not available", err),
            Setup::Failed(e) => e,
        }),
        EngineChoice::Auto => match run_uring(job, interrupt) {
            Ok(stats) => Ok(stats),
            Err(Setup::Refused(err)) => run_psync(
                job,
                interrupt,
                Some(format!(
                    "io_uring refused: {}",
                    crate::error::describe(&err)
                )),
            ),
            Err(Setup::Failed(e)) => Err(e),
        },
    }
}

/// A ring whose submission failed: operations in flight may still write
/// into the buffers, so both are leaked rather than freed.
fn abandon(ring: IoUring, bufs: Vec<AlignedBuf>, e: std::io::Error) -> Setup {
    std::mem::forget(bufs);
    std::mem::forget(ring);
    Setup::Failed(ProbeError::io("io_uring submit", e))
}

enum Setup {
    /// The kernel would not set up a ring: try another engine.
    Refused(std::io::Error),
    Failed(ProbeError),
}

/// A ring for one thread that both submits and reaps, as fio sets it up:
/// completions run when we wait for them (DEFER_TASKRUN), not by
/// interrupting us (COOP_TASKRUN). Kernels before 6.1 refuse those flags;
/// then a ring without them.
fn new_ring(entries: u32) -> std::io::Result<IoUring> {
    IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
        .or_else(|_| IoUring::new(entries))
}

fn run_uring(job: &Job, interrupt: &Interrupt) -> Result<IoStats, Setup> {
    let mut ring = new_ring(job.depth.next_power_of_two() as u32).map_err(Setup::Refused)?;
    let fd = types::Fd(job.file.as_raw_fd());
    let mut bufs = buffers(job, job.depth);
    let mut offsets = Offsets {
        rng: rand::rngs::SmallRng::from_rng(&mut rand::rng()),
        pattern: job.pattern,
        block: job.block as u64,
        blocks: job.span / job.block as u64,
        cursor: Arc::new(AtomicU64::new(0)),
        map: Arc::new(RandomMap::new(job.span / job.block as u64, rand::random())),
    };
    let mut issued = vec![(Instant::now(), true); job.depth];
    let (mut read_latency, mut write_latency) = (Latency::default(), Latency::default());
    let (mut reads, mut writes) = (0u64, 0u64);
    let cpu_start = cpu_time();
    let start = Instant::now();
    let mut inflight = 0usize;
    let mut stop = false;
    let mut failure = None;

    let mut push = |slot: usize,
                    ring: &mut IoUring,
                    bufs: &mut [AlignedBuf],
                    issued: &mut [(Instant, bool)]| {
        let (read, offset) = offsets.next();
        let ptr = bufs[slot].as_mut_ptr();
        let entry = if read {
            opcode::Read::new(fd, ptr, job.block as u32)
                .offset(offset)
                .build()
        } else {
            opcode::Write::new(fd, ptr, job.block as u32)
                .offset(offset)
                .build()
        }
        .user_data(slot as u64);
        issued[slot] = (Instant::now(), read);
        // SAFETY: the buffer outlives the operation (it lives until all
        // completions are reaped below) and the queue has room for `depth`.
        unsafe { ring.submission().push(&entry) }.is_ok()
    };
    for slot in 0..job.depth {
        if push(slot, &mut ring, &mut bufs, &mut issued) {
            inflight += 1;
        }
    }
    // Completions of one wake-up, reused so the loop allocates nothing.
    let mut done: Vec<(usize, i32)> = Vec::with_capacity(job.depth);
    while inflight > 0 {
        if let Err(e) = ring.submit_and_wait(1) {
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(abandon(ring, bufs, e));
        }
        done.clear();
        done.extend(
            ring.completion()
                .map(|c| (c.user_data() as usize, c.result())),
        );
        let now = Instant::now();
        stop = stop || start.elapsed() > job.window || interrupt.signal().is_some();
        for &(slot, result) in &done {
            inflight -= 1;
            let (at, read) = issued[slot];
            if result < 0 {
                failure.get_or_insert_with(|| {
                    io_error(if read { "read failed" } else { "write failed" }, -result)
                });
                stop = true;
            } else if read {
                reads += 1;
                read_latency.record(now - at);
            } else {
                writes += 1;
                write_latency.record(now - at);
            }
            if result >= 0
                && let Some(p) = job.progress
            {
                p.fetch_add(1, Ordering::Relaxed);
            }
            if !stop && push(slot, &mut ring, &mut bufs, &mut issued) {
                inflight += 1;
                // Submitted at once, not with the next wait, as fio does
                // (iodepth_batch_submit=1): the device gets it a wake-up
                // earlier. EINTR, EAGAIN, EBUSY leave it queued for the
                // next submit_and_wait.
                match ring.submit() {
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.raw_os_error(),
                            Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                        ) => {}
                    Err(e) => return Err(abandon(ring, bufs, e)),
                }
            }
        }
    }
    let elapsed = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_start);
    if let Some(e) = failure {
        return Err(Setup::Failed(e));
    }
    interrupt.check().map_err(Setup::Failed)?;
    Ok(IoStats {
        engine: Engine::IoUring,
        block: job.block,
        depth: job.depth,
        reads,
        writes,
        elapsed,
        read_latency,
        write_latency,
        cpu,
        fallback: None,
    })
}

fn run_psync(
    job: &Job,
    interrupt: &Interrupt,
    fallback: Option<String>,
) -> Result<IoStats, ProbeError> {
    let stop = AtomicBool::new(false);
    let cursor = Arc::new(AtomicU64::new(0));
    let map = Arc::new(RandomMap::new(job.span / job.block as u64, rand::random()));
    let cpu_start = cpu_time();
    let start = Instant::now();
    let results: Vec<Result<(u64, u64, Latency, Latency), ProbeError>> =
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..job.depth)
                .map(|i| {
                    let (stop, cursor, map) = (&stop, Arc::clone(&cursor), Arc::clone(&map));
                    scope.spawn(move || {
                        let mut buf = buffers(job, 1).pop().expect("one buffer");
                        let mut offsets = Offsets {
                            rng: rand::rngs::SmallRng::seed_from_u64(
                                rand::random::<u64>() ^ i as u64,
                            ),
                            pattern: job.pattern,
                            block: job.block as u64,
                            blocks: job.span / job.block as u64,
                            cursor,
                            map,
                        };
                        let (mut rl, mut wl) = (Latency::default(), Latency::default());
                        let (mut reads, mut writes) = (0u64, 0u64);
                        while !stop.load(Ordering::Relaxed) {
                            let (read, offset) = offsets.next();
                            let at = Instant::now();
                            let result = if read {
                                nix::sys::uio::pread(
                                    job.file,
                                    buf.as_mut_slice(),
                                    offset as libc::off_t,
                                )
                            } else {
                                nix::sys::uio::pwrite(
                                    job.file,
                                    buf.as_slice(),
                                    offset as libc::off_t,
                                )
                            };
                            if result.is_ok()
                                && let Some(p) = job.progress
                            {
                                p.fetch_add(1, Ordering::Relaxed);
                            }
                            match result {
                                Ok(_) if read => {
                                    reads += 1;
                                    rl.record(at.elapsed());
                                }
                                Ok(_) => {
                                    writes += 1;
                                    wl.record(at.elapsed());
                                }
                                Err(nix::errno::Errno::EINTR) => {}
                                Err(e) => {
                                    stop.store(true, Ordering::Relaxed);
                                    return Err(io_error(
                                        if read { "read failed" } else { "write failed" },
                                        e as i32,
                                    ));
                                }
                            }
                        }
                        Ok((reads, writes, rl, wl))
                    })
                })
                .collect();
            while !workers.iter().all(|w| w.is_finished()) {
                if start.elapsed() > job.window || interrupt.signal().is_some() {
                    stop.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            workers
                .into_iter()
                .map(|w| w.join().expect("an I/O thread panicked"))
                .collect()
        });
    let elapsed = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_start);
    interrupt.check()?;
    let mut stats = IoStats {
        engine: Engine::Psync,
        block: job.block,
        depth: job.depth,
        reads: 0,
        writes: 0,
        elapsed,
        read_latency: Latency::default(),
        write_latency: Latency::default(),
        cpu,
        fallback,
    };
    for result in results {
        let (reads, writes, rl, wl) = result?;
        stats.reads += reads;
        stats.writes += writes;
        stats.read_latency.merge(&rl);
        stats.write_latency.merge(&wl);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_file(size: u64) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("f"))
            .unwrap();
        file.set_len(size).unwrap();
        (dir, file)
    }

    fn job(file: &File, depth: usize, pattern: Pattern) -> Job<'_> {
        Job {
            file,
            block: 4096,
            span: 1 << 20,
            depth,
            pattern,
            window: Duration::from_millis(50),
            progress: None,
        }
    }

    #[test]
    fn both_engines_read_and_write_with_the_asked_mix() {
        let (_dir, file) = scratch_file(1 << 20);
        for choice in [EngineChoice::Auto, EngineChoice::Psync] {
            let s = run(
                &job(
                    &file,
                    4,
                    Pattern {
                        read_pct: 70,
                        random_pct: 80,
                    },
                ),
                choice,
                &Interrupt::default(),
            )
            .unwrap();
            assert!(s.reads > 0 && s.writes > 0, "{choice:?}: {s:?}");
            let share = s.reads as f64 / (s.reads + s.writes) as f64;
            assert!(
                (0.5..0.9).contains(&share),
                "{choice:?}: read share {share}"
            );
            assert_eq!(s.read_latency.summary().unwrap().count, s.reads);
            if choice == EngineChoice::Psync {
                assert_eq!(s.engine, Engine::Psync);
            }
        }
    }

    #[test]
    fn sequential_offsets_walk_and_wrap() {
        let mut o = Offsets {
            rng: rand::rngs::SmallRng::seed_from_u64(1),
            pattern: Pattern {
                read_pct: 100,
                random_pct: 0,
            },
            block: 4096,
            blocks: 3,
            cursor: Arc::new(AtomicU64::new(0)),
            map: Arc::new(RandomMap::new(3, 1)),
        };
        let got: Vec<u64> = (0..4).map(|_| o.next().1).collect();
        assert_eq!(got, [0, 4096, 8192, 0]);
        assert!(o.next().0, "100% reads");
    }

    #[test]
    fn a_random_pass_visits_every_block_once() {
        for blocks in [1u64, 2, 3, 7, 8, 1000, 4096, 262_145] {
            let map = RandomMap::new(blocks, 42);
            let mut seen = vec![0u8; blocks as usize];
            for _ in 0..blocks {
                seen[map.next() as usize] += 1;
            }
            assert!(seen.iter().all(|&n| n == 1), "{blocks} blocks: {seen:?}");
            // The next pass: every block once more.
            for _ in 0..blocks {
                seen[map.next() as usize] += 1;
            }
            assert!(seen.iter().all(|&n| n == 2), "{blocks} blocks, pass 2");
        }
    }

    #[test]
    fn random_passes_are_in_a_new_scattered_order() {
        let blocks = 4096u64;
        let map = RandomMap::new(blocks, 7);
        let one: Vec<u64> = (0..blocks).map(|_| map.next()).collect();
        let two: Vec<u64> = (0..blocks).map(|_| map.next()).collect();
        assert_ne!(one, two, "a new pass, a new order");
        let other = RandomMap::new(blocks, 8);
        let other: Vec<u64> = (0..16).map(|_| other.next()).collect();
        assert_ne!(one[..16], other[..], "another seed, another order");
        // Scattered, not a walk: few neighbours follow each other, and
        // the first tenth of a pass reaches across the whole span.
        let adjacent = one.windows(2).filter(|w| w[0].abs_diff(w[1]) == 1).count();
        assert!(adjacent < 40, "{adjacent} steps to a neighbour");
        let tenth = &one[..blocks as usize / 10];
        for quarter in 0..4 {
            let (lo, hi) = (quarter * blocks / 4, (quarter + 1) * blocks / 4);
            let hits = tenth.iter().filter(|&&b| (lo..hi).contains(&b)).count();
            assert!((50..160).contains(&hits), "quarter {quarter}: {hits}");
        }
    }

    #[test]
    fn threads_sharing_a_map_visit_each_block_once() {
        // As run_psync's threads share it: four threads, 64 blocks,
        // between them every block once before any twice.
        let map = Arc::new(RandomMap::new(64, 3));
        let seen: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let map = Arc::clone(&map);
                    s.spawn(move || (0..16).map(|_| map.next()).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let mut sorted = seen;
        sorted.sort_unstable();
        assert_eq!(sorted, (0..64).collect::<Vec<_>>());
    }

    #[test]
    fn an_interrupt_stops_the_job() {
        let (_dir, file) = scratch_file(1 << 20);
        let flag = Interrupt::default();
        flag.raise(libc::SIGINT);
        let mut j = job(
            &file,
            2,
            Pattern {
                read_pct: 100,
                random_pct: 100,
            },
        );
        j.window = Duration::from_secs(60);
        assert!(matches!(
            run(&j, EngineChoice::Auto, &flag),
            Err(ProbeError::Interrupted(2))
        ));
    }

    #[test]
    fn too_small_a_target_is_refused() {
        let (_dir, file) = scratch_file(100);
        let mut j = job(
            &file,
            1,
            Pattern {
                read_pct: 100,
                random_pct: 100,
            },
        );
        j.span = 0;
        assert!(matches!(
            run(&j, EngineChoice::Auto, &Interrupt::default()),
            Err(ProbeError::Unavailable(_))
        ));
    }
}
