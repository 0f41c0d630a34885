//! `pveprobe load-worker`: pveprobe as a worker VM's `/init` (PID 1; it
//! refuses to run as anything else, so it never mounts or powers off a
//! node). It mounts `/proc`, `/sys` and `/dev`, loads the modules of its
//! disks in `/modules.order`, finds its raw virtual disks, says hello on
//! its first serial port, runs each job it is sent on all its disks at
//! once, and powers the VM off when told, when the port closes, or on an
//! error it cannot report.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::initramfs::{MODULE_DIR, ORDER_FILE};
use super::wire::{self, FromWorker, ToWorker, WorkerDisk, WorkerJob, WorkerResult};
use crate::measure::engine::{EngineChoice, Job, Pattern};
use crate::measure::iobuf::{AlignedBuf, fill_random};
use crate::model::latency::Latency;
use crate::output::progress::Progress;
use crate::sys::interrupt::Interrupt;

/// How long the disks may take to appear after their modules load.
const DISKS_WITHIN: Duration = Duration::from_secs(20);

/// Why the worker stops.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("pveprobe load-worker runs only as a worker VM's /init (PID 1); this is PID {0}")]
    NotInit(u32),
    #[error("{what}: {source}")]
    Setup {
        what: String,
        source: std::io::Error,
    },
}

fn setup(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> WorkerError {
    let what = what.into();
    move |source| WorkerError::Setup { what, source }
}

/// The worker's life: set up, serve the node on `port`, power off. Only
/// returns (with why) before the VM is set up.
pub fn main(port: &Path) -> Result<(), WorkerError> {
    let pid = std::process::id();
    if pid != 1 {
        return Err(WorkerError::NotInit(pid));
    }
    let served = mount_all()
        .map(|()| open_stdio())
        .and_then(|()| load_modules(Path::new("/")))
        .and_then(|()| serve(port));
    if let Err(e) = served {
        // Said on the console; the node sees the port close.
        Progress::default()
            .named("pveprobe load-worker")
            .say(&e.to_string());
    }
    power_off()
}

fn mount_all() -> Result<(), WorkerError> {
    use nix::mount::{MsFlags, mount};
    for (fs, at) in [("proc", "/proc"), ("sysfs", "/sys"), ("devtmpfs", "/dev")] {
        mount(Some(fs), at, Some(fs), MsFlags::empty(), None::<&str>)
            .map_err(|e| setup(format!("mount {fs} on {at}"))(e.into()))?;
    }
    Ok(())
}

/// Standard input, output and error open on the console, or /dev/null:
/// in a VM without the console the command line names (PVE's worker has
/// no second serial port), the kernel starts /init with none of them, and
/// the next file opened (the port, a disk) would become fd 0, 1 or 2 and
/// take what is printed.
fn open_stdio() {
    use std::os::fd::{AsRawFd, IntoRawFd};
    for fd in 0..=2 {
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
            continue;
        }
        let opened = ["/dev/console", "/dev/null"].iter().find_map(|p| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(p)
                .ok()
        });
        if let Some(file) = opened {
            if file.as_raw_fd() == fd {
                // It took the free slot itself: keep it there.
                let _ = file.into_raw_fd();
            } else {
                // SAFETY: dup2 onto a descriptor we checked is closed.
                unsafe { libc::dup2(file.as_raw_fd(), fd) };
            }
        }
    }
}

/// Loads the modules `/modules.order` names, in its order; one the
/// kernel already has is no error.
fn load_modules(root: &Path) -> Result<(), WorkerError> {
    use nix::kmod::{ModuleInitFlags, finit_module};
    let order = std::fs::read_to_string(root.join(ORDER_FILE)).map_err(setup(ORDER_FILE))?;
    for name in order.lines().filter(|l| !l.is_empty()) {
        let path = root.join(MODULE_DIR).join(name);
        let file = File::open(&path).map_err(setup(format!("open {}", path.display())))?;
        match finit_module(&file, c"", ModuleInitFlags::empty()) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(e) => return Err(setup(format!("load {name}"))(e.into())),
        }
    }
    Ok(())
}

/// The SCSI disks the kernel found (`sda`...), waiting for them to appear.
fn disks() -> Vec<WorkerDisk> {
    let start = std::time::Instant::now();
    loop {
        let mut found: Vec<WorkerDisk> = std::fs::read_dir("/sys/block")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if !name.starts_with("sd") {
                    return None;
                }
                let read = |f: &str| -> Option<u64> {
                    std::fs::read_to_string(e.path().join(f))
                        .ok()?
                        .trim()
                        .parse()
                        .ok()
                };
                Some(WorkerDisk {
                    bytes: read("size")? * 512,
                    logical_block: read("queue/logical_block_size").unwrap_or(512),
                    name,
                })
            })
            .collect();
        if !found.is_empty() || start.elapsed() > DISKS_WITHIN {
            found.sort_by(|a, b| (a.name.len(), &a.name).cmp(&(b.name.len(), &b.name)));
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The serial port in raw mode (bytes as sent, no echo) at 115200 baud,
/// which QEMU's UART paces its bytes by. The speed is set in the flags
/// themselves: the static glibc the package links has no
/// `cfsetspeed@GLIBC_2.2.5`, the version the libc crate asks for.
fn open_port(port: &Path) -> Result<File, WorkerError> {
    use nix::sys::termios::{self, SetArg, Termios};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(port)
        .map_err(setup(format!("open {}", port.display())))?;
    let mut t = termios::tcgetattr(&file).map_err(|e| setup("tcgetattr")(e.into()))?;
    termios::cfmakeraw(&mut t);
    let mut raw: libc::termios = t.into();
    raw.c_cflag = (raw.c_cflag & !libc::CBAUD) | libc::B115200;
    let t = Termios::from(raw);
    termios::tcsetattr(&file, SetArg::TCSANOW, &t).map_err(|e| setup("tcsetattr")(e.into()))?;
    Ok(file)
}

fn say(port: &mut File, message: &FromWorker) -> Result<(), WorkerError> {
    port.write_all(wire::line(message).as_bytes())
        .and_then(|()| port.flush())
        .map_err(setup("write to the node"))
}

/// Hello, then each job to its result, until the node says bye or goes.
fn serve(port_path: &Path) -> Result<(), WorkerError> {
    let disks = disks();
    let mut port = open_port(port_path)?;
    let reader = port.try_clone().map_err(setup("dup the port"))?;
    say(
        &mut port,
        &FromWorker::Hello {
            version: env!("CARGO_PKG_VERSION").into(),
            disks: disks.clone(),
        },
    )?;
    let mut lines = BufReader::new(reader);
    let mut line = String::new();
    loop {
        line.clear();
        let n = std::io::Read::take(&mut lines, wire::MAX_LINE as u64)
            .read_line(&mut line)
            .map_err(setup("read from the node"))?;
        if n == 0 {
            return Ok(());
        }
        let mut failed = None;
        let mut tell = |m: &FromWorker| {
            if failed.is_none() {
                failed = say(&mut port, m).err();
            }
        };
        let answer = match wire::read::<ToWorker>(&line) {
            None => continue,
            Some(Ok(ToWorker::Bye)) => return Ok(()),
            Some(Ok(ToWorker::Fill { zero })) => fill(&disks, zero),
            Some(Ok(ToWorker::Job(job))) => {
                run_job(&disks, &job, false, &mut tell).map(FromWorker::Result)
            }
            Some(Err(why)) => Err(format!("not a message: {why}")),
        };
        if let Some(e) = failed {
            return Err(e);
        }
        say(
            &mut port,
            &answer.unwrap_or_else(|message| FromWorker::Error { message }),
        )?;
    }
}

/// A disk's path: `/dev/NAME` for a worker VM's disk, or the file a
/// probe in an existing VM measures, by its path.
fn disk_path(d: &WorkerDisk) -> std::path::PathBuf {
    if d.name.starts_with('/') {
        d.name.clone().into()
    } else {
        Path::new("/dev").join(&d.name)
    }
}

/// Now, by this machine's clock: nanoseconds since the epoch.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The disks opened for direct I/O, writable unless `read_only`, each
/// write on stable storage before it returns with `sync`.
pub fn open_disks(disks: &[WorkerDisk], read_only: bool, sync: bool) -> Result<Vec<File>, String> {
    if disks.is_empty() {
        return Err("no disk found (sd*)".into());
    }
    disks
        .iter()
        .map(|d| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(!read_only)
                .custom_flags(
                    libc::O_DIRECT | libc::O_CLOEXEC | if sync { libc::O_DSYNC } else { 0 },
                )
                .open(disk_path(d))
                .map_err(|e| {
                    format!(
                        "open {}: {}",
                        disk_path(d).display(),
                        crate::error::describe(&e)
                    )
                })
        })
        .collect()
}

/// Every disk written once, all at once, 1 MiB at a time: thin storage
/// allocates on the first write, and reading a block never written
/// measures nothing.
pub fn fill(disks: &[WorkerDisk], zero: bool) -> Result<FromWorker, String> {
    const CHUNK: usize = 1 << 20;
    let files = open_disks(disks, false, false)?;
    let start = std::time::Instant::now();
    let written: Vec<Result<u64, String>> = std::thread::scope(|s| {
        let running: Vec<_> = disks
            .iter()
            .zip(&files)
            .map(|(disk, file)| {
                s.spawn(move || {
                    let mut buf = AlignedBuf::new(CHUNK);
                    let mut at = 0u64;
                    while at < disk.bytes {
                        let len = (disk.bytes - at).min(CHUNK as u64) as usize;
                        if !zero {
                            fill_random(buf.as_mut_slice(), at ^ 0x5eed);
                        }
                        nix::sys::uio::pwrite(file, &buf.as_slice()[..len], at as libc::off_t)
                            .map_err(|e| {
                                format!("write {} at {at}: {e}", disk_path(disk).display())
                            })?;
                        at += len as u64;
                    }
                    file.sync_all()
                        .map_err(|e| format!("flush {}: {e}", disk_path(disk).display()))?;
                    Ok(at)
                })
            })
            .collect();
        running
            .into_iter()
            .map(|h| h.join().expect("a fill does not panic"))
            .collect()
    });
    let bytes = written.into_iter().sum::<Result<u64, String>>()?;
    Ok(FromWorker::Filled {
        bytes,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// `job` on every disk at once: its workers dealt to the disks in turn,
/// each an engine job over the whole disk, O_DIRECT; the warm-up first,
/// then the window, whose start and each second's operations are told
/// as they happen.
pub fn run_job(
    disks: &[WorkerDisk],
    job: &WorkerJob,
    stamp: bool,
    tell: &mut dyn FnMut(&FromWorker),
) -> Result<WorkerResult, String> {
    if job.workers == 0
        || job.iodepth == 0
        || job.block == 0
        || !job.seconds.is_finite()
        || job.seconds <= 0.0
        || !job.warmup.is_finite()
        || job.warmup < 0.0
    {
        return Err("a job needs workers, an iodepth, a block size and seconds".into());
    }
    let files = open_disks(disks, job.read_pct >= 100, job.sync)?;
    let counters: Vec<AtomicU64> = (0..job.workers).map(|_| AtomicU64::new(0)).collect();
    let runs = |window: f64, progress: bool| -> Vec<Job> {
        (0..job.workers)
            .map(|w| {
                let (disk, file) = (&disks[w % disks.len()], &files[w % files.len()]);
                let block = job.block as u64;
                Job {
                    file,
                    block: job.block,
                    span: disk.bytes / block * block,
                    depth: job.iodepth,
                    pattern: Pattern {
                        read_pct: job.read_pct,
                        random_pct: job.random_pct,
                    },
                    window: Duration::from_secs_f64(window),
                    progress: progress.then(|| &counters[w]),
                }
            })
            .collect()
    };
    let interrupt = Interrupt::default();
    if job.warmup > 0.0 {
        for r in crate::measure::together::run_together(
            &runs(job.warmup, false),
            EngineChoice::Auto,
            &interrupt,
        ) {
            r.map_err(|e| format!("warm-up: {e}"))?;
        }
    }
    tell(&FromWorker::Started {
        at_ns: stamp.then(now_ns),
    });
    let window = runs(job.seconds, true);
    let stats = std::thread::scope(|s| {
        let running = s.spawn(|| {
            crate::measure::together::run_together(&window, EngineChoice::Auto, &interrupt)
        });
        count_seconds(|| running.is_finished(), &counters, tell);
        running.join().expect("the jobs do not panic")
    });
    let mut result = WorkerResult {
        workers: job.workers,
        reads: 0,
        writes: 0,
        seconds: 0.0,
        read_latency: Latency::default(),
        write_latency: Latency::default(),
        engine: String::new(),
    };
    for s in stats {
        let s = s.map_err(|e| e.to_string())?;
        result.reads += s.reads;
        result.writes += s.writes;
        result.seconds = result.seconds.max(s.elapsed.as_secs_f64());
        result.read_latency.merge(&s.read_latency);
        result.write_latency.merge(&s.write_latency);
        result.engine = s.engine.name().to_string();
    }
    Ok(result)
}

/// Each whole second's operations of the jobs `counters` count, told as
/// each second ends, until `finished`: the window's last part second is
/// in the totals, not in a second of its own.
fn count_seconds(
    finished: impl Fn() -> bool,
    counters: &[AtomicU64],
    tell: &mut dyn FnMut(&FromWorker),
) {
    let (mut second, mut counted) = (0u32, 0u64);
    let begun = std::time::Instant::now();
    loop {
        let next = Duration::from_secs(u64::from(second) + 1);
        let done = finished();
        if begun.elapsed() >= next {
            let total: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
            tell(&FromWorker::Second {
                n: second,
                ops: total - counted,
            });
            (second, counted) = (second + 1, total);
        } else if done {
            return;
        } else {
            std::thread::sleep(
                next.saturating_sub(begun.elapsed())
                    .min(Duration::from_millis(20)),
            );
        }
    }
}

/// The VM powered off: the disks' caches written out first.
fn power_off() -> ! {
    nix::unistd::sync();
    let _ = nix::sys::reboot::reboot(nix::sys::reboot::RebootMode::RB_POWER_OFF);
    // Only a kernel that refused leaves PID 1 here; PID 1 may not exit.
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
