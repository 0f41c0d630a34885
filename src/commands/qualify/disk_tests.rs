//! The tests `qualify` runs on the device, each through its own file
//! reopened from the one held O_EXCL (`/proc/self/fd/N`: the same device,
//! never a path looked up again), O_DIRECT:
//!
//! - Proxmox's Ceph benchmark paper's test: 4 KiB sequential writes from
//!   offset 0 on the device opened O_SYNC, one job at queue depth 1,
//!   submitted asynchronously as fio's libaio does (fio
//!   `--ioengine=libaio --direct=1 --sync=1 --rw=write --bs=4K
//!   --numjobs=1 --iodepth=1`); then 5 and 10 jobs, each writing from
//!   offset 0 as fio's jobs on one file do;
//! - 4 KiB random writes and reads at queue depth 1 and 32, 1 MiB
//!   sequential reads and writes at queue depth 8 (`extended::engine`);
//! - a sustained 1 MiB sequential write, its bytes counted per second.
//!
//! Every write is counted in [`Tally`], so the run can say what it wrote
//! where; a signal stops the writes after the one in flight.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::error::{IoContext, ProbeError};
use crate::measure::engine::{self, EngineChoice, Job, Pattern};
use crate::model::io::IoStats;
use crate::model::latency::Latency;
use crate::model::qualify::{DiskTest, Written};
use crate::model::sustained::SustainedFigure;
use crate::model::sync::{SyncMode, SyncWriteFigure};
use crate::sys::interrupt::Interrupt;

/// Bytes per write of the paper's test.
pub const SYNC_BLOCK: usize = 4096;
/// Bytes per write of the sustained write.
pub const SUSTAINED_CHUNK: usize = crate::model::sustained::CHUNK;

/// What the tests wrote, counted as they write (threads share it).
#[derive(Debug, Default)]
pub struct Tally {
    bytes: AtomicU64,
    sequential_to: AtomicU64,
    random: AtomicBool,
}

impl Tally {
    fn sequential(&self, end: u64, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.sequential_to.fetch_max(end, Ordering::Relaxed);
    }

    /// What was written, for the report.
    pub fn written(&self) -> Written {
        Written {
            bytes: self.bytes.load(Ordering::Relaxed),
            sequential_to: self.sequential_to.load(Ordering::Relaxed),
            random: self.random.load(Ordering::Relaxed),
            afterwards: String::new(),
        }
    }
}

/// The device held open O_EXCL, and its size and number.
pub struct Held {
    pub file: File,
    pub name: String,
    pub size: u64,
    pub rdev: u64,
}

impl Held {
    /// Opens `/dev/NAME` read-only and O_EXCL: from here the kernel refuses
    /// mounts, md, device-mapper and other exclusive openers of it.
    /// `dev` must be its number (the device checked is the device held).
    pub fn open(name: &str, dev: (u32, u32)) -> Result<Held, String> {
        let node = format!("/dev/{name}");
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(&node)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EBUSY) => "held open exclusively by another process or the kernel (EBUSY on an O_EXCL open: mounted, a RAID or device-mapper member, or a program such as mkfs or another qualify)".to_string(),
                _ => format!("cannot open {node}: {}", crate::error::describe(&e)),
            })?;
        let meta = file
            .metadata()
            .map_err(|e| format!("stat {node}: {}", crate::error::describe(&e)))?;
        let rdev = meta.rdev();
        if (libc::major(rdev), libc::minor(rdev)) != dev {
            return Err(format!("{node} changed while it was checked"));
        }
        let size = crate::measure::blockdev::device_size(&file, std::path::Path::new(&node))
            .map_err(|e| e.to_string())?;
        Ok(Held {
            file,
            name: name.to_string(),
            size,
            rdev,
        })
    }

    /// The held device opened again with `flags` (O_DIRECT and more),
    /// through the descriptor, for reading and writing.
    pub fn reopen(&self, flags: i32) -> Result<File, ProbeError> {
        let path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags | libc::O_CLOEXEC)
            .open(&path)
            .context(|| format!("cannot open /dev/{} for writing", self.name))?;
        let same = file.metadata().is_ok_and(|m| m.rdev() == self.rdev);
        if !same {
            return Err(ProbeError::Unavailable(format!(
                "/dev/{} reopened as another device",
                self.name
            )));
        }
        Ok(file)
    }
}

/// The paper's test with `jobs` jobs, started together: each job 4 KiB
/// sequential writes from offset 0 (wrapping at the device's end) at queue
/// depth 1 on the device opened O_DIRECT|O_SYNC, submitted as fio's
/// libaio submits them (io_uring; an asynchronous write the block layer
/// makes durable with FUA, where a synchronous pwrite adds a cache flush).
pub fn sync_writes(
    held: &Held,
    jobs: u32,
    window: Duration,
    interrupt: &Interrupt,
    tally: &Tally,
) -> Result<SyncWriteFigure, ProbeError> {
    let files = (0..jobs)
        .map(|_| held.reopen(libc::O_DIRECT | libc::O_SYNC))
        .collect::<Result<Vec<_>, _>>()?;
    let span = held.size / SYNC_BLOCK as u64 * SYNC_BLOCK as u64;
    let cpu_start = engine::cpu_time();
    let runs: Vec<Job> = files
        .iter()
        .map(|file| Job {
            file,
            block: SYNC_BLOCK,
            span,
            depth: 1,
            pattern: Pattern {
                read_pct: 0,
                random_pct: 0,
            },
            window,
            progress: None,
        })
        .collect();
    let results = crate::measure::together::run_together(&runs, EngineChoice::Auto, interrupt);
    for stats in &results {
        let written = match stats {
            Ok(s) => s.writes * SYNC_BLOCK as u64,
            Err(_) => span,
        };
        tally.sequential(written.min(span), written);
    }
    let mut figure = SyncWriteFigure {
        jobs,
        mode: SyncMode::Dsync,
        file_bytes: held.size,
        writes: 0,
        elapsed: Duration::ZERO,
        latency: Latency::default(),
        cpu: engine::cpu_time().saturating_sub(cpu_start),
    };
    for r in results {
        let stats = r.map_err(|e| on_device(e, &held.name))?;
        figure.writes += stats.writes;
        figure.elapsed = figure.elapsed.max(stats.elapsed);
        figure.latency.merge(&stats.write_latency);
    }
    Ok(figure)
}

/// An I/O error named with its device.
fn on_device(e: ProbeError, name: &str) -> ProbeError {
    match e {
        ProbeError::Io { context, source } => ProbeError::Io {
            context: format!("/dev/{name}: {context}"),
            source,
        },
        other => other,
    }
}

/// One queue-depth test over the whole device.
pub fn io_test(
    held: &Held,
    test: DiskTest,
    window: Duration,
    interrupt: &Interrupt,
    tally: &Tally,
) -> Result<IoStats, ProbeError> {
    let (block, depth, reads, random) = test.shape();
    let file = held.reopen(libc::O_DIRECT)?;
    let job = Job {
        file: &file,
        block,
        span: held.size / block as u64 * block as u64,
        depth,
        pattern: Pattern {
            read_pct: if reads { 100 } else { 0 },
            random_pct: if random { 100 } else { 0 },
        },
        window,
        progress: None,
    };
    let stats = engine::run(&job, EngineChoice::Auto, interrupt);
    // Writes in flight when a signal came are written too: count what the
    // engine counted, and on failure assume the test's whole reach.
    let written = match &stats {
        Ok(s) => s.writes * block as u64,
        Err(_) if !reads => job.span,
        Err(_) => 0,
    };
    if !reads {
        if random {
            tally.random.store(true, Ordering::Relaxed);
            tally.bytes.fetch_add(written, Ordering::Relaxed);
        } else {
            tally.sequential(written.min(job.span), written);
        }
    }
    stats.map_err(|e| on_device(e, &held.name))
}

/// The sustained write: 1 MiB O_DIRECT writes from offset 0, cycling
/// over the device, for `window`, counted per second; an fdatasync ends
/// the last second.
pub fn sustained(
    held: &Held,
    window: Duration,
    interrupt: &Interrupt,
    tally: &Tally,
) -> Result<SustainedFigure, ProbeError> {
    let file = held.reopen(libc::O_DIRECT)?;
    let span = (held.size / SUSTAINED_CHUNK as u64).max(1) * SUSTAINED_CHUNK as u64;
    let (bytes_per_second, start) = crate::measure::sustained::write_seconds(
        &file,
        span,
        window,
        interrupt,
        &|| format!("/dev/{}", held.name),
        |end| tally.sequential(end, SUSTAINED_CHUNK as u64),
    )?;
    file.sync_data()
        .context(|| format!("fdatasync /dev/{}", held.name))?;
    Ok(SustainedFigure {
        bytes_per_second,
        window,
        elapsed: start.elapsed(),
        file_bytes: span,
        direct: true,
    })
}

nix::ioctl_write_ptr_bad!(blk_discard, 0x1277, [u64; 2]);

/// Discards the whole device (BLKDISCARD), so an SSD starts fresh.
pub fn discard(held: &Held) -> Result<(), ProbeError> {
    let file = held.reopen(0)?;
    let range = [0u64, held.size];
    // SAFETY: the fd is open for writing and the range is two u64s, as
    // BLKDISCARD reads them.
    unsafe { blk_discard(file.as_raw_fd(), &range) }
        .map_err(|e| ProbeError::io(format!("BLKDISCARD /dev/{}", held.name), e.into()))?;
    Ok(())
}
