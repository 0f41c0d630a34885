//! pveperf's measurements, as pveperf makes them (see
//! `shared/pveperf-reference.md`). Each returns plain data (the types of
//! `model`, which the report holds); none of them prints.

pub mod cpu;
pub mod dns;
pub mod fsync;
pub mod hostinfo;
pub mod regex;

use crate::sys::host::{Host, PROC_DROP_CACHES};

/// Drops the page cache, dentries and inodes (`3` into drop_caches), as
/// pveperf does before each disk test. Fails when not root.
pub fn drop_caches(host: &Host) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(host.path(PROC_DROP_CACHES))?;
    file.write_all(b"3\n")
}
