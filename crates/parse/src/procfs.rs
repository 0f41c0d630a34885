//! The kernel's own `/proc` files, parsed by `procfs-core` (the parsers of
//! the `procfs` crate, which the field's Rust tools use) from the bytes
//! pveprobe read through its `Host` seam, so a captured fixture parses as
//! the live file does. This module is the thin adapter between the two,
//! and says why each guard is there:
//!
//! - procfs-core trusts the kernel: a few of its parsers slice or multiply
//!   without a check (`/proc/PID/stat` before its `(`, `/proc/pressure/*`
//!   a line of just `some`, `/proc/meminfo` a field ending in a multi-byte
//!   character or a value near 2^64 kB), which panics on a truncated or
//!   hostile capture. [`kernel_form`] passes on only lines of the form the
//!   kernel writes, so those never reach it.
//! - Its floating-point figures are `f32`; [`widen`] gives the `f64` the
//!   kernel printed (`2.1`, not `2.0999999`), so JSON reads as before.
//! - It reads a file whole or not at all: one bad line of `diskstats`
//!   fails them all, so lines are read one at a time there.

use std::io::Cursor;

use procfs_core::{FromRead, FromReadSI};

/// The lines of `text` that `ok` keeps, each with its newline: what is
/// handed to procfs-core.
pub(crate) fn kernel_form(text: &str, ok: impl Fn(&str) -> bool) -> String {
    text.lines()
        .filter(|l| ok(l))
        .flat_map(|l| [l, "\n"])
        .collect()
}

/// True when `word` is ASCII digits only, at most `max` of them (no sign,
/// no overflow once scaled).
pub(crate) fn digits(word: &str, max: usize) -> bool {
    !word.is_empty() && word.len() <= max && word.bytes().all(|b| b.is_ascii_digit())
}

/// The `f64` of an `f32` the kernel printed with two decimals: its
/// shortest decimal form, read back.
pub(crate) fn widen(v: f32) -> f64 {
    v.to_string().parse().unwrap_or(f64::from(v))
}

/// A parse of `text` by procfs-core's `T`.
pub(crate) fn read<T: FromRead>(text: &str) -> Option<T> {
    T::from_read(Cursor::new(text.as_bytes())).ok()
}

/// `/proc/stat`, read with a system's facts procfs-core asks for but
/// pveprobe does not use (the counters stay in ticks).
pub(crate) fn kernel_stats(text: &str) -> Option<procfs_core::KernelStats> {
    let info = procfs_core::ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: 100,
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    };
    procfs_core::KernelStats::from_read(Cursor::new(text.as_bytes()), &info).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_keep_the_kernels_form_only() {
        assert_eq!(kernel_form("a\nbb\nc", |l| l.len() == 1), "a\nc\n");
        assert!(digits("123", 3) && !digits("1234", 3) && !digits("", 3) && !digits("-1", 3));
        assert_eq!(widen(2.1), 2.1);
        assert_eq!(widen(0.0), 0.0);
    }
}
