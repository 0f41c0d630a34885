//! FSYNCS/SECOND: pveperf's loop over 300 rotating files of 4,001 bytes
//! (4,000 `A` and a newline): create/truncate, write, fsync, close.

use std::io::Write;
use std::time::Duration;

use crate::error::{IoContext, ProbeError};
use crate::latency::Latency;
use crate::scratch::ScratchDir;
use crate::window::{Interrupt, Window};

pub const FILES: usize = 300;
pub const PAYLOAD_LEN: usize = 4001;

#[derive(Debug, Clone, PartialEq)]
pub struct FsyncFigure {
    pub iterations: u64,
    pub elapsed: Duration,
    /// Per-iteration (create, write, fsync, close) latency, when recorded.
    pub latency: Option<Latency>,
}

impl FsyncFigure {
    pub fn per_sec(&self) -> f64 {
        crate::window::per_second(self.iterations as f64, self.elapsed)
    }
}

fn payload() -> Vec<u8> {
    let mut data = vec![b'A'; PAYLOAD_LEN - 1];
    data.push(b'\n');
    data
}

/// Runs the loop in `scratch` for the window.
pub fn measure(
    scratch: &mut ScratchDir,
    length: Duration,
    record_latency: bool,
    interrupt: &Interrupt,
) -> Result<FsyncFigure, ProbeError> {
    let data = payload();
    let names: Vec<String> = (0..FILES).map(|i| format!("tf_{i}.dat")).collect();
    let mut latency = record_latency.then(Latency::default);
    let window = Window::start(length);
    let mut last = Duration::ZERO;
    let mut iterations = 0u64;
    loop {
        let name = &names[iterations as usize % FILES];
        let mut file = scratch.create_file(name)?;
        file.write_all(&data)
            .context(|| format!("write to {}/{name}", scratch.path().display()))?;
        file.sync_all()
            .context(|| format!("fsync {}/{name}", scratch.path().display()))?;
        drop(file);
        let now = window.elapsed();
        if let Some(l) = latency.as_mut() {
            l.record(now - last);
        }
        last = now;
        iterations += 1;
        if window.ends_before(now) {
            break;
        }
        interrupt.check()?;
    }
    Ok(FsyncFigure {
        iterations,
        elapsed: last,
        latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_pveperf_files_and_counts() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        let figure = measure(
            &mut scratch,
            Duration::from_millis(30),
            true,
            &Interrupt::default(),
        )
        .unwrap();
        assert!(figure.iterations > 0);
        assert_eq!(
            figure.latency.as_ref().unwrap().summary().unwrap().count,
            figure.iterations
        );
        let first = std::fs::read(scratch.path().join("tf_0.dat")).unwrap();
        assert_eq!(first.len(), PAYLOAD_LEN);
        assert!(first[..4000].iter().all(|b| *b == b'A') && first[4000] == b'\n');
        let files = std::fs::read_dir(scratch.path()).unwrap().count() as u64;
        assert_eq!(files, figure.iterations.min(FILES as u64));
        scratch.remove().unwrap();
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn per_sec_is_iterations_over_seconds() {
        let f = FsyncFigure {
            iterations: 600,
            elapsed: Duration::from_secs(3),
            latency: None,
        };
        assert_eq!(f.per_sec(), 200.0);
    }
}
