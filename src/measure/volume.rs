//! Writes to a scratch volume's device (`--storage` on LVM-thin, a zvol,
//! RBD): the device is opened for writing only here, only for a volume
//! the probe allocated itself, and exclusively (O_EXCL: the kernel refuses
//! it while the device is mounted or held by device-mapper, md or another
//! exclusive opener).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

use crate::error::{IoContext, ProbeError};
use crate::measure::iobuf::AlignedBuf;
use crate::model::io::SeqWriteFigure;
use crate::sys::interrupt::Interrupt;

/// Bytes per write of the prefill: large sequential O_DIRECT writes.
pub const PREFILL_CHUNK: usize = 1 << 20;

/// Opens a scratch volume's device for O_DIRECT reads and writes,
/// exclusively.
pub fn open_exclusive(device: &Path, dsync: bool) -> Result<File, ProbeError> {
    let mut flags = libc::O_CLOEXEC | libc::O_DIRECT | libc::O_EXCL;
    if dsync {
        flags |= libc::O_DSYNC;
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).custom_flags(flags);
    crate::measure::blockdev::open_block_device(device, &options, |e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            "writing (it is in use: mounted, or held by another device or program)"
        } else {
            "writing"
        }
    })
}

/// Writes the whole device once, sequentially, with incompressible data
/// (or zeros), then fdatasync: thin volumes, sparse zvols and fresh RBD
/// images return zeros for blocks never written without touching a disk,
/// and a first write measures allocation. Timed, it is SEQ WRITE.
pub fn prefill(
    device: &File,
    name: &Path,
    size: u64,
    pool: &AlignedBuf,
    zero_data: bool,
    interrupt: &Interrupt,
) -> Result<SeqWriteFigure, ProbeError> {
    use std::os::unix::fs::FileExt;
    let zeros = zero_data.then(|| AlignedBuf::new(PREFILL_CHUNK));
    let data = zeros.as_ref().unwrap_or(pool).as_slice();
    let start = Instant::now();
    // The last piece: a whole number of 4 KiB blocks (volumes are).
    let written =
        super::seqwrite::write_through(size, PREFILL_CHUNK, data, interrupt, |piece, at| {
            device
                .write_all_at(piece, at)
                .context(|| format!("write to {}", name.display()))
        })?;
    device
        .sync_data()
        .context(|| format!("fdatasync {}", name.display()))?;
    Ok(SeqWriteFigure {
        bytes: written,
        elapsed: start.elapsed(),
        zero_data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_no_volume() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        // tmpfs refuses O_DIRECT; either way it is refused before any write.
        let err = open_exclusive(&path, false).unwrap_err().to_string();
        assert!(
            err.contains("is not a block device") || err.contains("cannot open"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
    }
}
