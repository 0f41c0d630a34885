//! SUSTAINED WRITE (`--sustained SECS`): sequential 1 MiB writes of
//! incompressible data to one file in the scratch directory, O_DIRECT
//! where the filesystem allows it, cycling within the file's size, for
//! SECS seconds, the bytes of each second counted (a write is counted in
//! the second it completes). An fdatasync ends the last second. A 3-second
//! window (SEQ WRITE) ends before an SSD's SLC cache, a RAID controller's
//! cache or ZFS's dirty data limit runs out; this does not.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use crate::error::{IoContext, ProbeError};
use crate::measure::window::Interrupt;
use crate::model::sustained::SustainedFigure;
use crate::probe::extended::seqwrite;
use crate::sys::scratch::ScratchDir;

use crate::model::sustained::CHUNK;

const NAME: &str = "sustained.dat";

/// Sequential [`CHUNK`] writes of incompressible data to `file` from
/// offset 0, cycling within `span`, for `window`: the bytes of each second
/// (a write counts in the second it completes) and when the first began.
/// `wrote(end)` hears the end offset of each write; `what` names the file
/// in an error.
pub fn write_seconds(
    file: &File,
    span: u64,
    window: Duration,
    interrupt: &Interrupt,
    what: &dyn Fn() -> String,
    mut wrote: impl FnMut(u64),
) -> Result<(Vec<u64>, Instant), ProbeError> {
    let pool = seqwrite::aligned_data();
    let data = pool.as_slice();
    let seconds = window.as_secs_f64().ceil().max(1.0) as usize;
    let mut bytes_per_second = vec![0u64; seconds];
    let start = Instant::now();
    let (mut offset, mut at) = (0u64, 0usize);
    while start.elapsed() < window {
        if at + CHUNK > data.len() {
            at = 0;
        }
        file.write_all_at(&data[at..at + CHUNK], offset)
            .context(|| format!("write to {}", what()))?;
        wrote(offset + CHUNK as u64);
        let second = (start.elapsed().as_secs() as usize).min(seconds - 1);
        bytes_per_second[second] += CHUNK as u64;
        at += CHUNK;
        offset = (offset + CHUNK as u64) % span;
        interrupt.check()?;
    }
    Ok((bytes_per_second, start))
}

/// Writes for `window`, cycling within `file_bytes` (whole MiB).
pub fn measure(
    scratch: &mut ScratchDir,
    file_bytes: u64,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<SustainedFigure, ProbeError> {
    // Created empty, then opened O_DIRECT where the filesystem allows it.
    drop(scratch.create_file(NAME)?);
    let (file, direct) = scratch.open_rw(NAME)?;
    let span = (file_bytes / CHUNK as u64).max(1) * CHUNK as u64;
    let where_ = || format!("{}/{NAME}", scratch.path().display());
    let (bytes_per_second, start) = write_seconds(&file, span, window, interrupt, &where_, |_| {})?;
    file.sync_data()
        .context(|| format!("fdatasync {}/{NAME}", scratch.path().display()))?;
    Ok(SustainedFigure {
        bytes_per_second,
        window,
        elapsed: start.elapsed(),
        file_bytes: span,
        direct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_count_per_second_within_the_file() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        let f = measure(
            &mut scratch,
            4 << 20,
            Duration::from_millis(1500),
            &Interrupt::default(),
        )
        .unwrap();
        assert_eq!(f.bytes_per_second.len(), 2, "1.5 s: two seconds");
        assert!(f.bytes_per_second[0] > 0);
        assert_eq!(f.file_bytes, 4 << 20);
        let len = std::fs::metadata(scratch.path().join(NAME)).unwrap().len();
        assert_eq!(len, 4 << 20, "the writes cycle within the file");
        scratch.remove().unwrap();
    }

    #[test]
    fn an_interrupt_ends_it() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        let interrupt = Interrupt::default();
        interrupt.raise(15);
        let err = measure(&mut scratch, 4 << 20, Duration::from_secs(60), &interrupt);
        assert!(matches!(err, Err(ProbeError::Interrupted(15))));
        scratch.remove().unwrap();
    }
}
