//! BUFFERED READS and AVERAGE SEEK TIME, read-only on a block device.
//!
//! BUFFERED READS is `hdparm -t`: buffered sequential 2 MiB reads from
//! offset 0 for the window (stopping at the device's end), MiB/s.
//! AVERAGE SEEK TIME is `ioping -D`: O_DIRECT reads of one logical block at
//! random aligned offsets over the whole device, mean ms per read.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::Duration;

use rand::RngExt;

use crate::error::{IoContext, ProbeError};
use crate::measure::iobuf::AlignedBuf;
use crate::measure::window::Window;
use crate::model::blockdev::{ReadFigure, SeekFigure};
use crate::model::latency::Latency;
use crate::sys::interrupt::Interrupt;

/// pveperf's and hdparm's read size.
pub const READ_CHUNK: usize = 2 * 1024 * 1024;

nix::ioctl_read!(blk_getsize64, 0x12, 114, u64);
nix::ioctl_none!(blk_flsbuf, 0x12, 97);
nix::ioctl_read_bad!(blk_sszget, libc::BLKSSZGET, libc::c_int);

/// Opens `device` read-only and checks it is a block device.
pub fn open_device(device: &Path, direct: bool) -> Result<File, ProbeError> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_CLOEXEC | if direct { libc::O_DIRECT } else { 0 });
    open_block_device(device, &options, |e| {
        let not_root = !nix::unistd::geteuid().is_root();
        if not_root && e.kind() == std::io::ErrorKind::PermissionDenied {
            "reading (reading a disk needs root)"
        } else {
            "reading"
        }
    })
}

/// Opens `device` with `options` and checks it is a block device; an open
/// that fails says it could not open it for `purpose(error)`.
pub fn open_block_device(
    device: &Path,
    options: &OpenOptions,
    purpose: impl FnOnce(&std::io::Error) -> &'static str,
) -> Result<File, ProbeError> {
    let file = options.open(device).map_err(|e| {
        ProbeError::io(
            format!("cannot open {} for {}", device.display(), purpose(&e)),
            e,
        )
    })?;
    let meta = file
        .metadata()
        .context(|| format!("stat {}", device.display()))?;
    if !meta.file_type().is_block_device() {
        return Err(ProbeError::Unavailable(format!(
            "{} is not a block device",
            device.display()
        )));
    }
    Ok(file)
}

pub fn device_size(file: &File, device: &Path) -> Result<u64, ProbeError> {
    let mut size = 0u64;
    // SAFETY: BLKGETSIZE64 writes one u64 into `size`.
    unsafe { blk_getsize64(file.as_raw_fd(), &mut size) }
        .context(|| format!("BLKGETSIZE64 {}", device.display()))?;
    Ok(size)
}

pub fn logical_block_size(file: &File, device: &Path) -> Result<u32, ProbeError> {
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int into `size`.
    unsafe { blk_sszget(file.as_raw_fd(), &mut size) }
        .context(|| format!("BLKSSZGET {}", device.display()))?;
    u32::try_from(size)
        .ok()
        .filter(|s| s.is_power_of_two() && *s >= 512)
        .ok_or_else(|| {
            ProbeError::Unavailable(format!(
                "{}: odd logical block size {size}",
                device.display()
            ))
        })
}

/// Reads at most `buf.len()` bytes at `offset`, retrying on EINTR.
pub fn pread(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    loop {
        match nix::sys::uio::pread(file, buf, offset as libc::off_t) {
            Ok(n) => return Ok(n),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// `hdparm -t` / pveperf's BUFFERED READS.
pub fn buffered_reads(
    device: &Path,
    length: Duration,
    interrupt: &Interrupt,
) -> Result<ReadFigure, ProbeError> {
    let file = open_device(device, false)?;
    // Like hdparm: flush the device's buffer cache (needs root; the caller
    // has also dropped the page cache where it could).
    // SAFETY: BLKFLSBUF takes no argument.
    let _ = unsafe { blk_flsbuf(file.as_raw_fd()) };
    // As hdparm's buffer: page-aligned and touched before the clock
    // starts. A fresh heap buffer (16-byte aligned, its pages faulted in
    // by the first read) read 0.87 of `hdparm -t` on this project's VM,
    // every round below it; this one 0.97 and 1.01 (bench/README.md).
    let mut aligned = AlignedBuf::new(READ_CHUNK);
    aligned.as_mut_slice().fill(1);
    let buf = aligned.as_mut_slice();
    let mut bytes = 0u64;
    let mut reached_end = false;
    let window = Window::start(length);
    loop {
        let n = pread(&file, buf, bytes)
            .context(|| format!("read error on {} at byte {bytes}", device.display()))?;
        if n == 0 {
            reached_end = true;
            break;
        }
        bytes += n as u64;
        if window.is_over() {
            break;
        }
        interrupt.check()?;
    }
    let elapsed = window.elapsed();
    Ok(ReadFigure {
        device: device.to_path_buf(),
        bytes,
        elapsed,
        reached_end,
    })
}

/// `ioping -D` over the whole device: AVERAGE SEEK TIME.
pub fn seek_time(
    device: &Path,
    length: Duration,
    record_latency: bool,
    interrupt: &Interrupt,
) -> Result<SeekFigure, ProbeError> {
    let file = open_device(device, true)?;
    let device_bytes = device_size(&file, device)?;
    let block_size = logical_block_size(&file, device)?;
    let blocks = device_bytes / u64::from(block_size);
    if blocks == 0 {
        return Err(ProbeError::Unavailable(format!(
            "{} is empty",
            device.display()
        )));
    }
    let mut buf = AlignedBuf::new(block_size as usize);
    let mut rng = rand::rng();
    let mut latency = record_latency.then(Latency::default);
    let mut reads = 0u64;
    let window = Window::start(length);
    let mut last = Duration::ZERO;
    loop {
        let offset = rng.random_range(0..blocks) * u64::from(block_size);
        let n = pread(&file, buf.as_mut_slice(), offset)
            .context(|| format!("read error on {} at byte {offset}", device.display()))?;
        if n == 0 {
            return Err(ProbeError::Unavailable(format!(
                "{} ended before byte {offset}",
                device.display()
            )));
        }
        let now = window.elapsed();
        if let Some(l) = latency.as_mut() {
            l.record(now - last);
        }
        last = now;
        reads += 1;
        if window.ends_before(now) {
            break;
        }
        interrupt.check()?;
    }
    Ok(SeekFigure {
        device: device.to_path_buf(),
        block_size,
        device_bytes,
        reads,
        elapsed: last,
        latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_block_device() {
        let err = buffered_reads(
            Path::new("/proc/self/status"),
            Duration::from_millis(1),
            &Interrupt::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("not a block device"), "{err}");
    }
}
