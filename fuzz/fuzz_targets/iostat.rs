//! What `top` reads: /proc/diskstats, /proc/stat, a cgroup's io.stat and
//! blkio counters, and QEMU's query-blockstats and query-block answers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::{iostat, qmp};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let disks = iostat::diskstats(&text);
    assert!(disks.len() <= text.lines().count());
    assert!(disks.iter().all(|d| !d.name.is_empty() && !d.name.contains('/')));
    if let Some(t) = iostat::cpu_times(&text) {
        assert!(t.total() >= t.idle);
    }
    assert!(iostat::io_stat(&text).len() <= text.lines().count());
    // Bytes and operations, a blank line between.
    let (a, b) = text.split_once("\n\n").unwrap_or((&text, ""));
    let _ = iostat::blkio_throttle(a, b);
    if let Ok(drives) = qmp::blockstats(&text) {
        assert!(drives.iter().all(|d| !d.drive.is_empty()));
    }
    let _ = qmp::block_files(&text);
});
