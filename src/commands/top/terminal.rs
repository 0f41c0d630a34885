//! The terminal while `top`'s live view runs: stdin without line editing
//! or echo (Ctrl-C still signals), `q` read on a thread of its own, the
//! screen cleared before each view. The terminal is given back as it was
//! on every way out: when [`Terminal`] is dropped (the view quit, the
//! run's end, SIGINT or SIGTERM, which raise the signal flag the loop
//! watches), and from a panic hook before the panic's message is printed,
//! whichever thread panicked.

use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};

use nix::sys::termios::{self, LocalFlags, SetArg, Termios};

/// The settings to give back, while the view holds the terminal.
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// What clears the screen and puts the cursor home before a view.
pub const CLEAR: &str = "\x1b[H\x1b[2J";

/// Gives the terminal its saved settings back, once.
fn restore() {
    let saved = SAVED
        .lock()
        .map(|mut s| s.take())
        .unwrap_or_else(|p| p.into_inner().take());
    if let Some(t) = saved {
        let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSANOW, &t);
    }
}

/// The terminal held by the live view; `None` when stdin is no terminal.
pub struct Terminal {
    quit: Arc<AtomicBool>,
}

impl Terminal {
    /// Takes the terminal: no echo, no line editing, a reader of `q`.
    pub fn take() -> Option<Terminal> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let saved = termios::tcgetattr(&stdin).ok()?;
        let mut raw = saved.clone();
        raw.local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO);
        *SAVED.lock().unwrap_or_else(|p| p.into_inner()) = Some(saved);
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &raw);
        let quit = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&quit);
        std::thread::spawn(move || {
            use std::io::Read as _;
            let mut byte = [0u8; 1];
            while let Ok(1) = std::io::stdin().lock().read(&mut byte) {
                if matches!(byte[0], b'q' | b'Q') {
                    flag.store(true, Ordering::Relaxed);
                    return;
                }
            }
        });
        Some(Terminal { quit })
    }

    /// Whether `q` was pressed.
    pub fn quit(&self) -> bool {
        self.quit.load(Ordering::Relaxed)
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        restore();
    }
}
