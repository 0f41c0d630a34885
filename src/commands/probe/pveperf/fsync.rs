//! FSYNCS/SECOND: pveperf's loop over 300 rotating files of 4,001 bytes
//! (4,000 `A` and a newline), in pveperf's order of system calls.
//!
//! pveperf `print`s the data to a Perl file handle, which buffers it, then
//! calls fsync and close: traced, one iteration is `openat(O_WRONLY|O_CREAT|
//! O_TRUNC)`, `fsync`, `write(4001)`, `close`. The fsync therefore runs on
//! the file its open just emptied, and the data reaches the page cache only
//! at close, never synced by the loop. Between open and fsync Perl's I/O
//! layer asks whether the file is a terminal (`ioctl(TCGETS)`), where it
//! stands (`lseek`) and its block size (`fstat`); the fstat is not free on
//! ext4 (a loop without it made 1,502 iterations a second where one with
//! it made 1,274, medians of four alternating rounds on one loop device).
//! [`Order::Pveperf`] repeats exactly that, so the figure stands on
//! pveperf's scale (pve-docs: above 200).
//! [`Order::WriteThenFsync`] syncs the data it wrote: other work, the
//! order of results written before pveperf's order was recorded (and of
//! the strace checker's counter-example). Synced writes as they really are
//! made are `-x`'s SYNC WRITE 4K (`extended::syncwrite`).

use std::io::Write;
use std::time::Duration;

use crate::error::{IoContext, ProbeError};
use crate::measure::window::Window;
use crate::model::fsync::{FsyncFigure, Order};
use crate::model::latency::Latency;
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;

pub const FILES: usize = 300;
pub const PAYLOAD_LEN: usize = 4001;

fn payload() -> Vec<u8> {
    let mut data = vec![b'A'; PAYLOAD_LEN - 1];
    data.push(b'\n');
    data
}

/// The calls Perl's I/O layer makes on a file it just opened for writing:
/// is it a terminal, where does it stand, what is its block size. Their
/// answers do not matter (a file is no terminal); the calls are part of
/// the work pveperf's loop times.
fn perlio_open_calls(file: &std::fs::File) {
    let _ = nix::sys::termios::tcgetattr(file);
    let _ = nix::unistd::lseek(file, 0, nix::unistd::Whence::SeekCur);
    let _ = nix::sys::stat::fstat(file);
}

/// Runs the loop in `scratch` for the window, its system calls in `order`.
pub fn measure(
    scratch: &mut ScratchDir,
    order: Order,
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
        let write = |file: &mut std::fs::File| {
            file.write_all(&data)
                .context(|| format!("write to {}/{name}", scratch.path().display()))
        };
        let fsync = |file: &std::fs::File| {
            file.sync_all()
                .context(|| format!("fsync {}/{name}", scratch.path().display()))
        };
        match order {
            Order::Pveperf => {
                perlio_open_calls(&file);
                fsync(&file)?;
                write(&mut file)?;
            }
            Order::WriteThenFsync => {
                write(&mut file)?;
                fsync(&file)?;
            }
        }
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
            Order::Pveperf,
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
}
