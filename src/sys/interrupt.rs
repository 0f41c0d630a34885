//! The signal flag: SIGINT, SIGTERM and SIGHUP only raise it; the loops
//! check it after each operation and unwind, so cleanup runs on the
//! normal path. A loop with nothing to do until a time (`record` between
//! intervals) sleeps in `wait`, which the signal ends at once: no polling.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::error::ProbeError;

/// Set to the number of the first terminating signal received, 0 before.
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    sig: Arc<AtomicUsize>,
    /// Written to by the signal (and by `raise`), read by `wait`: the
    /// read end, and the write end `raise` uses. None when not installed.
    wake: Option<Arc<(UnixStream, UnixStream)>>,
}

impl Interrupt {
    /// Routes SIGINT, SIGTERM and SIGHUP to this flag for the rest of the process.
    pub fn install() -> std::io::Result<Self> {
        let flag = Self::waking()?;
        let (_, write) = flag.wake.as_deref().expect("made with its pipe");
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // The flag first: a signal's actions run in the order registered,
            // so `wait` woken by the pipe finds the flag raised.
            signal_hook::flag::register_usize(sig, Arc::clone(&flag.sig), sig as usize)?;
            signal_hook::low_level::pipe::register(sig, write.try_clone()?)?;
        }
        Ok(flag)
    }

    /// A flag with the pipe that wakes `wait`, no signal routed to it yet.
    fn waking() -> std::io::Result<Self> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        Ok(Self {
            sig: Arc::default(),
            wake: Some(Arc::new((read, write))),
        })
    }

    /// The signal received, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.sig.load(Ordering::Relaxed) {
            0 => None,
            sig => Some(sig as i32),
        }
    }

    /// Sleeps until `until` or a signal, whichever comes first; the signal
    /// received, if any. Without `install` it sleeps in short steps.
    pub fn wait(&self, until: Instant) -> Option<i32> {
        loop {
            if let Some(sig) = self.signal() {
                return Some(sig);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            match self.wake.as_deref() {
                Some((read, _)) => {
                    // Rounded up to the next millisecond: never woken early.
                    let ms = left.as_micros().div_ceil(1000).min(u16::MAX as u128) as u16;
                    let mut fds = [PollFd::new(read.as_fd(), PollFlags::POLLIN)];
                    // EINTR is a signal: the loop reads the flag.
                    let _ = poll(&mut fds, PollTimeout::from(ms));
                }
                None => std::thread::sleep(left.min(Duration::from_millis(50))),
            }
        }
    }

    /// `Err(Interrupted)` once a signal has arrived.
    pub fn check(&self) -> Result<(), ProbeError> {
        match self.signal() {
            Some(sig) => Err(ProbeError::Interrupted(sig)),
            None => Ok(()),
        }
    }

    /// Raises the flag as signal `sig` would: for a part of the probe
    /// that stops another (`load`'s node agent, a guest's run).
    pub fn raise(&self, sig: i32) {
        self.sig.store(sig as usize, Ordering::Relaxed);
        if let Some((_, write)) = self.wake.as_deref() {
            let _ = (&*write).write(&[0]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupt_reports_first_signal() {
        let flag = Interrupt::default();
        assert!(flag.check().is_ok());
        flag.raise(libc::SIGTERM);
        assert_eq!(flag.signal(), Some(libc::SIGTERM));
        assert!(matches!(flag.check(), Err(ProbeError::Interrupted(15))));
    }

    #[test]
    fn wait_sleeps_until_its_time_without_a_signal() {
        for flag in [Interrupt::default(), Interrupt::waking().unwrap()] {
            let until = Instant::now() + Duration::from_millis(120);
            assert_eq!(flag.wait(until), None);
            assert!(Instant::now() >= until, "woken early");
        }
    }

    #[test]
    fn raise_ends_a_wait_at_once() {
        // Raised by another thread while this one waits a minute: the wait
        // returns with the signal long before its minute is out.
        let flag = Interrupt::waking().unwrap();
        let other = flag.clone();
        let raiser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            other.raise(libc::SIGTERM);
        });
        let until = Instant::now() + Duration::from_secs(60);
        assert_eq!(flag.wait(until), Some(libc::SIGTERM));
        assert!(Instant::now() < until);
        raiser.join().unwrap();
        // Once raised, every later wait returns at once.
        assert_eq!(flag.wait(until), Some(libc::SIGTERM));
    }
}
