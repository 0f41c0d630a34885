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
    keys: Mutex<std::sync::mpsc::Receiver<Key>>,
}

/// A key the replayed view acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Left,
    Right,
    PageUp,
    PageDown,
    /// `w`: the next bad moment.
    Worst,
    Quit,
}

/// The keys in `bytes` as a terminal sends them (arrows and pages as
/// escape sequences); what is no key is passed over.
pub fn keys_of(bytes: &[u8]) -> Vec<Key> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let (key, len) = match rest {
            [b'q' | b'Q', ..] => (Some(Key::Quit), 1),
            [b'w' | b'W', ..] => (Some(Key::Worst), 1),
            [0x1b, b'[', b'C', ..] | [0x1b, b'O', b'C', ..] => (Some(Key::Right), 3),
            [0x1b, b'[', b'D', ..] | [0x1b, b'O', b'D', ..] => (Some(Key::Left), 3),
            [0x1b, b'[', b'5', b'~', ..] => (Some(Key::PageUp), 4),
            [0x1b, b'[', b'6', b'~', ..] => (Some(Key::PageDown), 4),
            _ => (None, 1),
        };
        out.extend(key);
        i += len;
    }
    out
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
        let (send, keys) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Read as _;
            // A key's escape sequence arrives in one read.
            let mut buf = [0u8; 64];
            while let Ok(n @ 1..) = std::io::stdin().lock().read(&mut buf) {
                for key in keys_of(&buf[..n]) {
                    if key == Key::Quit {
                        flag.store(true, Ordering::Relaxed);
                    }
                    if send.send(key).is_err() || key == Key::Quit {
                        return;
                    }
                }
            }
        });
        Some(Terminal {
            quit,
            keys: Mutex::new(keys),
        })
    }

    /// The next key pressed, waiting at most `wait`.
    pub fn key(&self, wait: std::time::Duration) -> Option<Key> {
        let keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        keys.recv_timeout(wait).ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_as_a_terminal_sends_them() {
        assert_eq!(
            keys_of(b"\x1b[D\x1b[Cx\x1b[5~\x1b[6~\x1bOCwq"),
            [
                Key::Left,
                Key::Right,
                Key::PageUp,
                Key::PageDown,
                Key::Right,
                Key::Worst,
                Key::Quit
            ]
        );
        assert!(keys_of(b"\x1b[").is_empty());
    }
}
