//! SEQ WRITE: what bench.sh's `dd if=/dev/zero bs=64k count=16k
//! conv=fdatasync` measures, done right: `size` bytes in 64 KiB buffered
//! writes to a file in the scratch directory, one fdatasync at the end,
//! timed from the first write to the end of the fdatasync. The data is
//! incompressible unless zeros are asked for (a compressing filesystem
//! turns zeros into a CPU test).

use std::io::Write;
use std::time::Instant;

use crate::error::{IoContext, ProbeError};
use crate::measure::iobuf::fill_random;
use crate::model::io::SeqWriteFigure;
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;

pub const CHUNK: usize = 64 * 1024;
/// The random data is cycled from a pool this large (larger than any
/// filesystem's compression record).
pub const POOL: usize = 8 << 20;

/// A pool of random data aligned for O_DIRECT.
pub fn aligned_data() -> crate::measure::iobuf::AlignedBuf {
    let mut pool = crate::measure::iobuf::AlignedBuf::new(POOL);
    fill_random(pool.as_mut_slice(), 0x5eed);
    pool
}

/// The data written: zeros, or a pool of random bytes.
pub fn data(zero: bool) -> Vec<u8> {
    let mut pool = vec![0u8; if zero { CHUNK } else { POOL }];
    if !zero {
        fill_random(&mut pool, 0x5eed);
    }
    pool
}

/// Writes `size` bytes in pieces of at most `chunk` taken in turn from
/// `pool` (from its start again when the rest is too short), each with its
/// offset; checks for a signal every 16 MiB. Gives the bytes written.
pub fn write_through(
    size: u64,
    chunk: usize,
    pool: &[u8],
    interrupt: &Interrupt,
    mut write: impl FnMut(&[u8], u64) -> Result<(), ProbeError>,
) -> Result<u64, ProbeError> {
    let mut written = 0u64;
    let mut at = 0usize;
    while written < size {
        let n = (size - written).min(chunk as u64) as usize;
        if at + n > pool.len() {
            at = 0;
        }
        write(&pool[at..at + n], written)?;
        at += n;
        written += n as u64;
        if written.is_multiple_of(16 << 20) {
            interrupt.check()?;
        }
    }
    Ok(written)
}

/// One run: writes `size` bytes to `name` in `scratch`, then fdatasync.
pub fn run(
    scratch: &mut ScratchDir,
    name: &str,
    size: u64,
    pool: &[u8],
    interrupt: &Interrupt,
) -> Result<SeqWriteFigure, ProbeError> {
    let mut file = scratch.create_file(name)?;
    let start = Instant::now();
    let written = write_through(size, CHUNK, pool, interrupt, |piece, _| {
        file.write_all(piece)
            .context(|| format!("write to {}/{name}", scratch.path().display()))
    })?;
    file.sync_data()
        .context(|| format!("fdatasync {}/{name}", scratch.path().display()))?;
    Ok(SeqWriteFigure {
        bytes: written,
        elapsed: start.elapsed(),
        zero_data: pool.iter().all(|b| *b == 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_asked_size_of_random_or_zero_data() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        let pool = data(false);
        let fig = run(
            &mut scratch,
            "w",
            3 * CHUNK as u64 + 100,
            &pool,
            &Interrupt::default(),
        )
        .unwrap();
        assert_eq!(fig.bytes, 3 * CHUNK as u64 + 100);
        assert!(!fig.zero_data);
        let written = std::fs::read(scratch.path().join("w")).unwrap();
        assert_eq!(written.len() as u64, fig.bytes);
        assert_eq!(&written[..CHUNK], &pool[..CHUNK]);
        let zeros = run(
            &mut scratch,
            "z",
            CHUNK as u64,
            &data(true),
            &Interrupt::default(),
        )
        .unwrap();
        assert!(zeros.zero_data);
        scratch.remove().unwrap();
    }
}
