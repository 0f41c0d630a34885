//! Timed windows. The signal flag they stop at is
//! [`crate::sys::interrupt::Interrupt`].
//!
//! Every timed test runs "until more than the window has passed", reading a
//! monotonic clock after each operation, as pveperf does with gettimeofday.
//! SIGINT, SIGTERM and SIGHUP only raise a flag; the loops check it after
//! each operation and unwind, so cleanup runs on the normal path.

use std::time::{Duration, Instant};

/// A running test window.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    start: Instant,
    length: Duration,
}

impl Window {
    pub fn start(length: Duration) -> Self {
        Self {
            start: Instant::now(),
            length,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// True once more than the window's length has passed.
    pub fn is_over(&self) -> bool {
        self.ends_before(self.elapsed())
    }

    /// True when `elapsed` (a reading of [`Window::elapsed`]) is past the window.
    pub fn ends_before(&self, elapsed: Duration) -> bool {
        elapsed > self.length
    }

    /// When the window ends.
    pub fn end(&self) -> Instant {
        self.start + self.length
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_over_only_after_its_length() {
        let w = Window::start(Duration::from_millis(20));
        assert!(!w.is_over());
        std::thread::sleep(Duration::from_millis(30));
        assert!(w.is_over());
    }
}
