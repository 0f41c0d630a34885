//! How every long command says where it is, in one look on stderr: on a
//! terminal a line that counts down (indicatif), with each step said
//! above it; otherwise plain lines, `pveprobe: STEP`, one per step, for a
//! log; nothing with `--quiet`, nor when a machine-readable document is
//! written to the same terminal. Never on stdout, so never in a document.
//! What is not progress (a note, a diagnostic, a warning) goes through
//! [`Progress::say`]: always said, with `--quiet` too, without tearing
//! the line. A [`Progress`] is a handle: clones, and the threads of
//! `net` and `cluster`, share its one line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The name every line pveprobe says to a person starts with: the one
/// place the prefix is written.
pub const PVEPROBE: &str = "pveprobe";

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// stderr is a terminal: a line that counts down, steps above it.
    Bar,
    /// stderr is a file or a pipe: a plain line per step.
    Lines,
    /// `--quiet`: no progress at all.
    Quiet,
}

impl Look {
    /// `--quiet`'s, else the terminal's or a log's. `machine_on_screen`:
    /// the document is machine-readable and goes to the terminal stderr
    /// shares (JSON on a screen a program reads); then the screen carries
    /// the document alone.
    pub fn of(quiet: bool, machine_on_screen: bool) -> Look {
        use std::io::IsTerminal as _;
        match quiet || machine_on_screen {
            true => Look::Quiet,
            false if std::io::stderr().is_terminal() => Look::Bar,
            false => Look::Lines,
        }
    }
}

/// The countdown on a terminal, and the thread that moves it.
struct Running {
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    ticker: JoinHandle<()>,
}

/// A long command's progress on stderr.
#[derive(Clone)]
pub struct Progress {
    look: Look,
    /// Who speaks: `pveprobe`, or `pveprobe record` for the recorder.
    name: &'static str,
    running: Arc<Mutex<Option<Running>>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("look", &self.look)
            .finish()
    }
}

impl Default for Progress {
    /// Silent: for a part of pveprobe that runs without a person (a
    /// node's agent, a unit test).
    fn default() -> Self {
        Progress::new(Look::Quiet)
    }
}

impl Progress {
    pub fn new(look: Look) -> Self {
        Progress {
            look,
            name: PVEPROBE,
            running: Arc::new(Mutex::new(None)),
        }
    }

    /// The same progress, its lines said as `name` (`pveprobe record`).
    pub fn named(self, name: &'static str) -> Self {
        Progress { name, ..self }
    }

    /// A command's progress: nothing with `--quiet`, nor when its
    /// machine-readable `format` goes to stdout on a terminal; else a
    /// countdown on a terminal, lines in a log.
    pub fn for_command(
        quiet: bool,
        format: super::Format,
        output: Option<&std::path::Path>,
    ) -> Self {
        use std::io::IsTerminal as _;
        let machine_on_screen =
            format != super::Format::Text && output.is_none() && std::io::stdout().is_terminal();
        Progress::new(Look::of(quiet, machine_on_screen))
    }

    pub fn look(&self) -> Look {
        self.look
    }

    /// A step begins: `pveprobe: WHAT`, above the countdown on a terminal.
    pub fn step(&self, what: &str) {
        match self.look {
            Look::Quiet => {}
            Look::Lines => eprintln!("{}: {what}", self.name),
            Look::Bar => self.above(&format!("{}: {what}", self.name)),
        }
    }

    /// A step that takes `window`: counted down on a terminal; a line
    /// `pveprobe: WHAT, N s` in a log.
    pub fn timed(&self, what: &str, window: Duration) {
        self.done();
        match self.look {
            Look::Quiet => {}
            Look::Lines => eprintln!("{}: {what}, {} s", self.name, seconds(window)),
            Look::Bar => self.count_down(what, window),
        }
    }

    /// The step ended: the countdown is taken off the terminal.
    pub fn done(&self) {
        let running = self.lock().take();
        if let Some(Running { bar, stop, ticker }) = running {
            stop.store(true, Ordering::Relaxed);
            let _ = ticker.join();
            bar.finish_and_clear();
        }
    }

    /// Says `text` on stderr, after the name (`pveprobe: TEXT`), whatever
    /// the look (a note, a diagnostic, a warning): not progress, so
    /// `--quiet` keeps it.
    pub fn say(&self, text: &str) {
        let line = format!("{}: {text}", self.name);
        match self.look {
            Look::Bar => self.above(&line),
            Look::Lines | Look::Quiet => eprintln!("{line}"),
        }
    }

    /// Says a note: `pveprobe: note: TEXT`.
    pub fn note(&self, text: &str) {
        self.say(&format!("note: {text}"));
    }

    /// Says `text` as it is, lines of its own (a plan, a comparison: each
    /// line its own words, no name before it), whatever the look.
    pub fn block(&self, text: &str) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        if text.is_empty() {
            return;
        }
        match self.look {
            Look::Bar => self.above(text),
            Look::Lines | Look::Quiet => eprintln!("{text}"),
        }
    }

    /// The one prompt: `text` (what is about to happen) and `question` on
    /// the terminal, and the line typed; `None` without a terminal to ask
    /// on (stdin and stderr both), where nobody can answer.
    pub fn ask(&self, text: &str, question: &str) -> Option<String> {
        use std::io::{BufRead as _, IsTerminal as _, Write as _};
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return None;
        }
        eprint!("{text}{question} ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        Some(line)
    }

    /// A line above the countdown, without tearing it.
    fn above(&self, text: &str) {
        match self.lock().as_ref() {
            Some(r) => r.bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn count_down(&self, what: &str, window: Duration) {
        let total_ms = window.as_millis().max(1) as u64;
        let bar = ProgressBar::with_draw_target(Some(total_ms), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix:<24} [{bar:24}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (bar, stop) = (bar.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let start = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let elapsed = start.elapsed();
                    bar.set_position((elapsed.as_millis() as u64).min(total_ms));
                    let left = window.saturating_sub(elapsed).as_secs_f64().ceil();
                    bar.set_message(if left > 0.0 {
                        format!("{left:.0} s left")
                    } else {
                        "finishing".into()
                    });
                    bar.tick();
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        *self.lock() = Some(Running { bar, stop, ticker });
    }
}

/// A window in whole seconds, as a step's line says it (at least 1).
fn seconds(window: Duration) -> u64 {
    window.as_secs_f64().ceil().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_says_no_step_and_no_countdown_runs() {
        let p = Progress::new(Look::Quiet);
        p.step("a step");
        p.timed("a timed step", Duration::from_secs(3));
        assert!(p.lock().is_none());
        let lines = Progress::new(Look::Lines);
        lines.timed("FSYNCS/SECOND", Duration::from_millis(2500));
        assert!(lines.lock().is_none(), "a log gets a line, no countdown");
        assert_eq!(seconds(Duration::from_millis(2500)), 3);
        assert_eq!(seconds(Duration::ZERO), 1);
    }

    #[test]
    fn clones_share_one_line() {
        let p = Progress::new(Look::Bar);
        let q = p.clone();
        p.count_down("x", Duration::from_secs(60));
        assert!(q.lock().is_some());
        q.done();
        assert!(p.lock().is_none());
    }
}
