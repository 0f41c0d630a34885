//! One probe at a time per host. Two probes on one host at once halve each
//! other's figures without a word (on one ext4 loop device: 1,226 and
//! 1,466 FSYNCS/SECOND alone, 904 each for two at once, both exit 0). So
//! the measuring phase holds an advisory lock, `flock(2)` on
//! [`DEFAULT_PATH`]; a second probe names the one that holds it and waits,
//! or refuses (`--no-wait`).
//!
//! The lock file stays, as lock files under /run do (/run is a tmpfs, gone
//! at reboot); removing it would let a third probe lock a new file while
//! the second still waits on the old one. The holder writes who it is into
//! the file, for the others to name.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::error::describe;
use crate::model::host::Waited;
use crate::sys::interrupt::Interrupt;

/// The host-wide lock file.
pub const DEFAULT_PATH: &str = "/run/pveprobe.lock";
/// Names another lock file, or `off` for none (test rigs that run many
/// probes on one machine on purpose, or several simulated nodes).
pub const ENV: &str = "PVEPROBE_LOCK";
/// How often a waiting probe tries again (and checks for Ctrl-C).
const RETRY: Duration = Duration::from_millis(100);
/// The most of the holder's description that is read.
const HOLDER_MAX: u64 = 512;

/// What to do when another probe holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Busy {
    /// Say which probe holds it, then wait (the default).
    Wait,
    /// Wait without a word (under the name pveperf).
    WaitQuietly,
    /// Give up at once (`--no-wait`).
    Refuse,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another probe is measuring on this host ({holder}); not waiting (--no-wait)")]
    Refused { holder: String },
    #[error("interrupted by signal {0} while waiting for another probe")]
    Interrupted(i32),
}

/// The held lock; dropping it releases it. `None` inside when no lock was
/// taken (switched off, or the file could not be opened: see `note`).
#[derive(Debug)]
pub struct HostLock {
    held: Option<Flock<File>>,
    /// Why the probe runs without the lock, when it does.
    pub note: Option<String>,
    pub waited: Option<Waited>,
}

/// The lock file to use: [`ENV`]'s, or [`DEFAULT_PATH`]; `None` for `off`.
pub fn path_from_env() -> Option<PathBuf> {
    match std::env::var_os(ENV) {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => Some(PathBuf::from(DEFAULT_PATH)),
    }
}

/// Opens the lock file: for writing (it names its holder) where allowed,
/// else read-only (flock works on any open file), never through a link.
fn open(path: &Path) -> std::io::Result<(File, bool)> {
    let flags = libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let rw = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(flags)
        .open(path);
    match rw {
        Ok(f) => Ok((f, true)),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem
            ) =>
        {
            // Not ours to create or write: lock it read-only if it exists,
            // else say why not (this error, not the read-only open's ENOENT).
            let ro = OpenOptions::new().read(true).custom_flags(flags).open(path);
            ro.map(|f| (f, false)).map_err(|_| e)
        }
        Err(e) => Err(e),
    }
}

fn holder_of(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.rewind();
    let _ = Read::by_ref(file)
        .take(HOLDER_MAX)
        .read_to_string(&mut text);
    let text = text.trim();
    if text.is_empty() {
        "a probe that has not said who it is".into()
    } else {
        crate::model::printable(text)
    }
}

/// Takes the host-wide lock at `path` (`None`: no lock), describing this
/// probe as `me`; with another probe holding it, waits or refuses as
/// `busy` says, telling `say` once.
pub fn acquire(
    path: Option<&Path>,
    me: &str,
    busy: Busy,
    interrupt: &Interrupt,
    say: &mut dyn FnMut(&str),
) -> Result<HostLock, LockError> {
    let unlocked = |note: Option<String>| HostLock {
        held: None,
        note,
        waited: None,
    };
    let Some(path) = path else {
        return Ok(unlocked(None));
    };
    let (mut file, writable) = match open(path) {
        Ok(f) => f,
        Err(e) => {
            return Ok(unlocked(Some(format!(
                "not serialized with other probes: cannot open {}: {}",
                path.display(),
                describe(&e)
            ))));
        }
    };
    let start = Instant::now();
    let mut holder: Option<String> = None;
    let mut lock = loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => break lock,
            Err((f, Errno::EWOULDBLOCK)) => file = f,
            Err((_, e)) => {
                return Ok(unlocked(Some(format!(
                    "not serialized with other probes: cannot lock {}: {}",
                    path.display(),
                    e.desc()
                ))));
            }
        }
        if holder.is_none() {
            let who = holder_of(&mut file);
            match busy {
                Busy::Refuse => return Err(LockError::Refused { holder: who }),
                Busy::Wait => say(&format!(
                    "another probe is measuring on this host ({who}); waiting for it to finish (--no-wait refuses instead)"
                )),
                Busy::WaitQuietly => {}
            }
            holder = Some(who);
        }
        if let Some(sig) = interrupt.signal() {
            return Err(LockError::Interrupted(sig));
        }
        std::thread::sleep(RETRY);
    };
    if writable {
        let _ = lock.set_len(0);
        let _ = lock.rewind();
        let _ = lock.write_all(format!("{me}\n").as_bytes());
        let _ = lock.flush();
    }
    Ok(HostLock {
        held: Some(lock),
        note: None,
        waited: holder.map(|holder| Waited {
            seconds: start.elapsed().as_secs_f64(),
            holder,
        }),
    })
}

impl HostLock {
    /// True when the lock is held (not switched off or unavailable).
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }
}

/// How a probe describes itself in the lock file.
pub fn describe_me(path: &Path) -> String {
    let started = jiff::Timestamp::now().round(jiff::Unit::Second);
    let started = started.map_or_else(|_| String::new(), |t| t.to_string());
    format!(
        "pid {}, started {started}, on {}",
        std::process::id(),
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(path: &Path, busy: Busy, said: &mut Vec<String>) -> Result<HostLock, LockError> {
        acquire(
            Some(path),
            "pid 1, started now, on /x",
            busy,
            &Interrupt::default(),
            &mut |s| said.push(s.to_string()),
        )
    }

    #[test]
    fn a_second_probe_is_refused_or_waits_and_names_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let mut said = Vec::new();
        let first = take(&path, Busy::Wait, &mut said).unwrap();
        assert!(first.is_held() && first.waited.is_none() && said.is_empty());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "pid 1, started now, on /x\n"
        );
        match take(&path, Busy::Refuse, &mut said) {
            Err(LockError::Refused { holder }) => assert_eq!(holder, "pid 1, started now, on /x"),
            other => panic!("{other:?}"),
        }
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(first);
        });
        let second = take(&path, Busy::Wait, &mut said).unwrap();
        release.join().unwrap();
        let waited = second.waited.as_ref().unwrap();
        assert!(waited.seconds >= 0.2, "{waited:?}");
        assert_eq!(waited.holder, "pid 1, started now, on /x");
        assert_eq!(said.len(), 1, "said once: {said:?}");
        assert!(said[0].starts_with("another probe is measuring on this host (pid 1,"));
    }

    #[test]
    fn quiet_waits_say_nothing_and_a_signal_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let mut said = Vec::new();
        let _first = take(&path, Busy::Wait, &mut said).unwrap();
        let interrupt = Interrupt::default();
        interrupt.raise(15);
        let result = acquire(Some(&path), "me", Busy::WaitQuietly, &interrupt, &mut |s| {
            said.push(s.to_string())
        });
        assert!(matches!(result, Err(LockError::Interrupted(15))));
        assert!(said.is_empty());
    }

    #[test]
    fn no_lock_when_off_or_unopenable_with_a_note() {
        let mut said = Vec::new();
        let off = acquire(None, "me", Busy::Wait, &Interrupt::default(), &mut |s| {
            said.push(s.to_string())
        })
        .unwrap();
        assert!(!off.is_held() && off.note.is_none());
        let missing = Path::new("/nonexistent/dir/lock");
        let none = take(missing, Busy::Wait, &mut said).unwrap();
        assert!(!none.is_held());
        assert!(
            none.note
                .unwrap()
                .contains("cannot open /nonexistent/dir/lock")
        );
        // Never through a symbolic link.
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("lock");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        let linked = take(&link, Busy::Wait, &mut said).unwrap();
        assert!(!linked.is_held());
        assert!(!dir.path().join("elsewhere").exists());
    }
}
