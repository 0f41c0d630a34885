//! The signal flag: SIGINT, SIGTERM and SIGHUP only raise it; the loops
//! check it after each operation and unwind, so cleanup runs on the
//! normal path.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::ProbeError;

/// Set to the number of the first terminating signal received, 0 before.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<AtomicUsize>);

impl Interrupt {
    /// Routes SIGINT, SIGTERM and SIGHUP to this flag for the rest of the process.
    pub fn install() -> std::io::Result<Self> {
        let flag = Self::default();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            signal_hook::flag::register_usize(sig, Arc::clone(&flag.0), sig as usize)?;
        }
        Ok(flag)
    }

    /// The signal received, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            sig => Some(sig as i32),
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
        self.0.store(sig as usize, Ordering::Relaxed);
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
}
