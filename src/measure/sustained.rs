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
use crate::measure::iobuf::{AlignedBuf, fill_random};
use crate::model::sustained::SustainedFigure;
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;

use crate::model::sustained::CHUNK;

const NAME: &str = "sustained.dat";

/// Sequential [`CHUNK`] writes of incompressible data to `file` from
/// offset 0, cycling within `span`, for `window`: the bytes of each second
/// (a write counts in the second it completes) and when the first began.
/// `wrote(end)` hears the end offset of each write; `what` names the file
/// in an error.
///
/// The data is one buffer of random bytes, written again and again with
/// its offset stamped into each 4 KiB (as fio writes its one buffer,
/// scrambled per write against dedupe): random data is incompressible in
/// any record, and no two blocks written are alike. Cycling an 8 MiB pool
/// instead read the source of every write from memory rather than the CPU
/// cache, and on a RAM-backed device made 0.76 of fio's figure (rounds
/// 0.54-1.01), 1.01 with this buffer (rounds 0.90-1.15).
pub fn write_seconds(
    file: &File,
    span: u64,
    window: Duration,
    interrupt: &Interrupt,
    what: &dyn Fn() -> String,
    mut wrote: impl FnMut(u64),
) -> Result<(Vec<u64>, Instant), ProbeError> {
    let mut buf = data();
    let seconds = window.as_secs_f64().ceil().max(1.0) as usize;
    let mut bytes_per_second = vec![0u64; seconds];
    let start = Instant::now();
    let mut offset = 0u64;
    while start.elapsed() < window {
        stamp(buf.as_mut_slice(), offset);
        file.write_all_at(buf.as_slice(), offset)
            .context(|| format!("write to {}", what()))?;
        wrote(offset + CHUNK as u64);
        let second = (start.elapsed().as_secs() as usize).min(seconds - 1);
        bytes_per_second[second] += CHUNK as u64;
        offset = (offset + CHUNK as u64) % span;
        interrupt.check()?;
    }
    Ok((bytes_per_second, start))
}

/// The random data of every write, before [`stamp`].
pub fn data() -> AlignedBuf {
    let mut buf = AlignedBuf::new(CHUNK);
    fill_random(buf.as_mut_slice(), 0x5eed);
    buf
}

/// Writes the byte offset of each 4 KiB of `buf`, were it written at
/// `offset`, into that block's first 8 bytes.
pub fn stamp(buf: &mut [u8], offset: u64) {
    for (i, block) in buf.chunks_mut(4096).enumerate() {
        let at = offset + (i * 4096) as u64;
        block[..8].copy_from_slice(&at.to_le_bytes());
    }
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
    fn every_block_written_is_unlike_the_others() {
        let mut buf = vec![0u8; CHUNK];
        fill_random(&mut buf, 1);
        stamp(&mut buf, 3 * CHUNK as u64);
        let blocks: Vec<&[u8]> = buf.chunks(4096).collect();
        assert_eq!(blocks[0][..8], (3 * CHUNK as u64).to_le_bytes());
        assert_eq!(blocks[1][..8], (3 * CHUNK as u64 + 4096).to_le_bytes());
        let mut sorted = blocks.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), blocks.len(), "no two blocks alike");
        let first = blocks[0].to_vec();
        stamp(&mut buf, 4 * CHUNK as u64);
        assert_ne!(buf[..4096], first[..], "the next write's block differs");
    }

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
