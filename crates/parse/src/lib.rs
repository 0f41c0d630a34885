//! Pure parsers for the host files, tool output and packets pveprobe
//! reads. Each takes text or bytes and returns plain data, never touching
//! the file system: the fuzz targets (`fuzz/`) build this crate alone.

pub mod cephconf;
pub mod cidr;
pub mod corosync;
pub mod cpuinfo;
pub mod datacenter;
pub mod dns;
pub mod hostfacts;
pub mod knet;
pub mod mountinfo;
pub mod pvesm;
pub mod resolv;
pub mod storagecfg;
pub mod sysfs;
pub mod vmlist;
pub mod zfs;

/// How much of a bad input an error quotes, in characters.
pub(crate) const QUOTED_CHARS: usize = 64;

/// What an error message quotes of a bad input: its first [`QUOTED_CHARS`]
/// characters.
pub(crate) fn quote(s: &str) -> String {
    s.chars().take(QUOTED_CHARS).collect()
}

/// White space inside a line (Perl's `\s` but the newline): what the
/// config files' own readers skip around keys and values.
pub(crate) fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\x0b' | '\x0c')
}
