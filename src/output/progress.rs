//! The live progress line on stderr: which test runs and how long it has
//! left. Only for a person: never when stderr is not a terminal, never with
//! machine-readable output, never on stdout.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::figure::Figure;

pub struct Progress {
    enabled: bool,
    running: Option<(ProgressBar, Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Progress {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            running: None,
        }
    }

    /// Shows `line`'s `run`th window of `runs` counting down.
    pub fn begin(&mut self, line: Figure, run: u32, runs: u32, window: Duration) {
        self.finish();
        if !self.enabled {
            return;
        }
        let total_ms = window.as_millis().max(1) as u64;
        let bar = ProgressBar::with_draw_target(Some(total_ms), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix:<24} [{bar:24}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        let runs_text = if runs > 1 {
            format!(" (run {run}/{runs})")
        } else {
            String::new()
        };
        bar.set_prefix(format!("{}{runs_text}", line.label()));
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
        self.running = Some((bar, stop, ticker));
    }

    /// Removes the progress line.
    pub fn finish(&mut self) {
        if let Some((bar, stop, ticker)) = self.running.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = ticker.join();
            bar.finish_and_clear();
        }
    }

    /// Prints a line on stderr without tearing the progress line.
    pub fn eprintln(&self, text: &str) {
        match &self.running {
            Some((bar, _, _)) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
