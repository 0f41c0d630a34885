//! `pveprobe net-sink`: the target's end of the secure migration stream.
//! `net-migrate` on the source node starts it over ssh as qemu-server
//! starts `qm mtunnel`: the ssh that runs it forwards a UNIX socket of the
//! source to one of this node (`-L`), where the target's QEMU would listen.
//! It makes that socket in a private directory of `/run` whose name the
//! source chose, takes one stream, answers with what it counted (the
//! stream wire of `net-serve`), says how busy the session's `sshd` was,
//! and removes the directory on every way out. It ends when its stdin ends
//! (the ssh that started it closed), when told to stop, or after its
//! lifetime.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::wire::{self, Direction};
use crate::error::ProbeError;
use crate::sys::scratch::ScratchDir;

/// Where the private directory of each end is made (as qemu-server's
/// migration sockets are in `/run/qemu-server`).
pub const RUN_DIR: &str = "/run";
/// How old a directory of RUN_DIR must be before a helper sweeps it as
/// one a SIGKILL left ([`crate::sys::scratch::sweep_stale`]): longer than
/// any helper lives (net-sink's `--lifetime` is an hour at most, and
/// net-migrate ends before its sink).
pub const STALE_AFTER: Duration = Duration::from_secs(2 * 3600);
/// The socket's name in that directory.
pub const SOCKET: &str = "migrate.sock";

pub const READY_PREFIX: &str = "pveprobe-net-sink ready";
pub const DONE_PREFIX: &str = "pveprobe-net-sink done";

/// What it counted, on its last line of stdout (`done` and JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SinkStats {
    pub bytes: u64,
    /// From the first byte to the end of the stream.
    pub seconds: f64,
    /// The session's `sshd` (the process that decrypts): its name, and its
    /// share of one core over the stream, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_cpu_percent: Option<f64>,
    /// Its share of the stream's time waiting for a CPU (its threads'
    /// run-queue wait: the node's cores busy, or a CPU limit holding it), %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_wait_percent: Option<f64>,
    /// Why it stopped: `stream ended`, `stdin closed`, `lifetime`, `stopped`.
    pub ended: String,
}

/// `/proc/PID/stat` of a process of this host, read through the Host seam.
fn proc_stat(pid: u32) -> Option<pveprobe_parse::procpid::ProcStat> {
    let text = crate::sys::host::Host::real()
        .read(format!("/proc/{pid}/stat"))
        .ok()?;
    pveprobe_parse::procpid::stat(&text)
}

/// A process's CPU time so far, in seconds, and its name.
pub fn cpu_seconds(pid: u32) -> Option<(f64, String)> {
    let stat = proc_stat(pid)?;
    let hz = crate::sys::cpus::ticks_per_second();
    Some((stat.cpu_ticks as f64 / hz as f64, stat.comm))
}

/// How long process `pid`'s threads have waited on a run queue, s (the
/// second field of each `/proc/PID/task/TID/schedstat`, summed).
pub fn run_queue_wait(pid: u32) -> Option<f64> {
    let host = crate::sys::host::Host::real();
    let tasks = host.list(format!("/proc/{pid}/task"));
    let waits: Vec<u64> = tasks
        .iter()
        .filter_map(|tid| {
            let text = host
                .read(format!("/proc/{pid}/task/{tid}/schedstat"))
                .ok()?;
            Some(pveprobe_parse::procpid::schedstat(&text)?.wait_ns)
        })
        .collect();
    (!waits.is_empty()).then(|| waits.iter().sum::<u64>() as f64 / 1e9)
}

/// The share of `wall` seconds between two readings, %.
pub fn share(before: Option<f64>, after: Option<f64>, wall: f64) -> Option<f64> {
    match (before, after) {
        (Some(b), Some(a)) if wall > 0.0 => Some(100.0 * (a - b).max(0.0) / wall),
        _ => None,
    }
}

/// The ssh daemon's process serving this session: the nearest ancestor
/// named `sshd` (OpenSSH before 9.8) or `sshd-session` (after), found by
/// the parents' `/proc/PID/stat`.
fn sshd_ancestor() -> Option<u32> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..8 {
        let stat = proc_stat(pid)?;
        if stat.comm.starts_with("sshd") {
            return Some(pid);
        }
        if stat.ppid <= 1 {
            return None;
        }
        pid = stat.ppid;
    }
    None
}

/// Serves one stream on the socket of directory `name` in `parent`
/// ([`RUN_DIR`]): says `ready`, then its counts. The directory is gone
/// when it returns.
pub fn sink(
    parent: &Path,
    name: &str,
    lifetime: Duration,
    stop: &AtomicBool,
    ready: impl FnOnce(),
) -> Result<SinkStats, ProbeError> {
    crate::sys::scratch::sweep_stale(parent, STALE_AFTER);
    let mut dir = ScratchDir::create_named(parent, name)?;
    dir.adopt(SOCKET);
    let path = dir.path().join(SOCKET);
    let served = UnixListener::bind(&path)
        .map_err(|e| ProbeError::io(format!("cannot listen on {}", path.display()), e))
        .and_then(|listener| {
            ready();
            take_one(&listener, lifetime, stop)
        });
    let (result, _) = dir.finish(served);
    result
}

/// Waits for the one stream and reads it.
fn take_one(
    listener: &UnixListener,
    lifetime: Duration,
    stop: &AtomicBool,
) -> Result<SinkStats, ProbeError> {
    let deadline = Instant::now() + lifetime;
    let going = || !stop.load(Ordering::SeqCst) && Instant::now() < deadline;
    let ended = |why: &str| SinkStats {
        ended: why.into(),
        ..SinkStats::default()
    };
    listener
        .set_nonblocking(true)
        .map_err(|e| ProbeError::io("socket", e))?;
    let conn = loop {
        if !going() {
            return Ok(ended(why_not_going(stop)));
        }
        match listener.accept() {
            Ok((conn, _)) => break conn,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(ProbeError::io("accept", e)),
        }
    };
    let stats = read_stream(conn, &going).map_err(|e| ProbeError::io("the stream", e))?;
    Ok(stats.unwrap_or_else(|| ended(why_not_going(stop))))
}

fn why_not_going(stop: &AtomicBool) -> &'static str {
    if stop.load(Ordering::SeqCst) {
        "stopped"
    } else {
        "lifetime"
    }
}

/// One upload: its header, the bytes to their end, the count sent back.
fn read_stream(
    mut conn: UnixStream,
    going: &impl Fn() -> bool,
) -> std::io::Result<Option<SinkStats>> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    conn.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut header = [0u8; wire::STREAM_HEADER];
    conn.read_exact(&mut header)?;
    if !matches!(
        wire::parse_stream_header(&header),
        Some((Direction::Upload, _))
    ) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not pveprobe's stream",
        ));
    }
    let sshd = sshd_ancestor();
    let before = sshd.and_then(cpu_seconds);
    let waited = sshd.and_then(run_queue_wait);
    let started = Instant::now();
    let mut buf = vec![0u8; 128 << 10];
    let Some((bytes, took)) = wire::drain(&mut conn, &mut buf, going)? else {
        return Ok(None);
    };
    let wall = started.elapsed().as_secs_f64();
    let after = sshd.and_then(cpu_seconds);
    let wait = share(waited, sshd.and_then(run_queue_wait), wall);
    let mut reply = [0u8; wire::UPLOAD_REPLY];
    reply[..8].copy_from_slice(&bytes.to_be_bytes());
    reply[8..].copy_from_slice(&(took.as_nanos() as u64).to_be_bytes());
    conn.write_all(&reply)?;
    let (name, cpu) = match (before, after) {
        (Some((b, name)), Some((a, _))) if wall > 0.0 => (Some(name), Some(100.0 * (a - b) / wall)),
        _ => (None, None),
    };
    Ok(Some(SinkStats {
        bytes,
        seconds: took.as_secs_f64(),
        sshd: name,
        sshd_cpu_percent: cpu,
        sshd_wait_percent: wait,
        ended: "stream ended".into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::scratch::random_name;

    #[test]
    fn one_stream_is_counted_answered_and_the_directory_removed() {
        let run = tempfile::tempdir().unwrap();
        let name = random_name();
        let dir = run.path().join(&name);
        let stop = AtomicBool::new(false);
        let (tx, rx) = std::sync::mpsc::channel();
        let stats = std::thread::scope(|s| {
            let server = s.spawn(|| {
                sink(run.path(), &name, Duration::from_secs(20), &stop, || {
                    tx.send(()).unwrap()
                })
            });
            rx.recv().unwrap();
            let mut conn = UnixStream::connect(dir.join(SOCKET)).unwrap();
            conn.write_all(&wire::stream_header(Direction::Upload, 100))
                .unwrap();
            conn.write_all(&vec![7u8; 3 << 20]).unwrap();
            conn.shutdown(std::net::Shutdown::Write).unwrap();
            let mut reply = [0u8; wire::UPLOAD_REPLY];
            conn.read_exact(&mut reply).unwrap();
            assert_eq!(u64::from_be_bytes(reply[..8].try_into().unwrap()), 3 << 20);
            server.join().unwrap().unwrap()
        });
        assert_eq!(
            (stats.bytes, stats.ended.as_str()),
            (3 << 20, "stream ended")
        );
        assert!(!dir.exists(), "{} left", dir.display());
        // A name taken already, or not ours, is refused and nothing made.
        std::fs::create_dir(&dir).unwrap();
        assert!(sink(run.path(), &name, Duration::from_secs(1), &stop, || {}).is_err());
        std::fs::remove_dir(&dir).unwrap();
        assert!(sink(run.path(), "../etc", Duration::from_secs(1), &stop, || {}).is_err());
    }

    #[test]
    fn stopped_before_a_stream_it_says_so() {
        let run = tempfile::tempdir().unwrap();
        let name = random_name();
        let stop = AtomicBool::new(true);
        let stats = sink(run.path(), &name, Duration::from_secs(5), &stop, || {}).unwrap();
        assert_eq!(stats.ended, "stopped");
        assert!(!run.path().join(&name).exists());
    }
}
