//! A reading made on a thread of its own, at most every so often, so a
//! slow or hanging tool (`ceph status` with its monitors gone, `zpool
//! status` on a suspended pool) never holds `top`'s interval: each
//! interval takes the last reading that finished.

use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// How long the first reading is waited for, so the first interval has it.
pub const FIRST_WAIT: Duration = Duration::from_secs(2);

/// The last finished reading of one kind, and the one under way.
#[derive(Debug)]
pub struct Behind<T> {
    every: Duration,
    started: Option<Instant>,
    pending: Option<Receiver<T>>,
    last: T,
}

impl<T: Default + Send + 'static> Behind<T> {
    pub fn new(every: Duration) -> Self {
        Behind {
            every,
            started: None,
            pending: None,
            last: T::default(),
        }
    }

    /// The last finished reading; `read` started on a thread when one is
    /// due and none is under way (the first waited for up to
    /// [`FIRST_WAIT`]).
    pub fn poll(&mut self, read: impl FnOnce() -> T + Send + 'static) -> &T {
        let first = self.started.is_none();
        if self.pending.is_none() && self.started.is_none_or(|t| t.elapsed() >= self.every) {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(read());
            });
            self.pending = Some(rx);
            self.started = Some(Instant::now());
        }
        if let Some(rx) = &self.pending {
            let got = if first {
                rx.recv_timeout(FIRST_WAIT).map_err(|e| match e {
                    mpsc::RecvTimeoutError::Timeout => TryRecvError::Empty,
                    mpsc::RecvTimeoutError::Disconnected => TryRecvError::Disconnected,
                })
            } else {
                rx.try_recv()
            };
            match got {
                Ok(v) => {
                    self.last = v;
                    self.pending = None;
                }
                Err(TryRecvError::Disconnected) => self.pending = None,
                Err(TryRecvError::Empty) => {}
            }
        }
        &self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_reading_never_holds_the_caller() {
        let mut b: Behind<u32> = Behind::new(Duration::ZERO);
        // The first is waited for (up to its limit).
        assert_eq!(*b.poll(|| 1), 1);
        // A hanging one: the caller goes on with the last at once.
        let at = Instant::now();
        assert_eq!(
            *b.poll(|| {
                std::thread::sleep(Duration::from_millis(400));
                2
            }),
            1
        );
        assert!(at.elapsed() < Duration::from_millis(200));
        // No second one starts while it runs; once done, it is taken.
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(*b.poll(|| 3), 2);
    }
}
