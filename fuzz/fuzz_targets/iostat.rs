//! What `top` reads: /proc/diskstats, /proc/stat, a cgroup's io.stat and
//! blkio counters, QEMU's query-blockstats and query-block answers, PVE's
//! active task list and replication state, `zpool status`'s scans, `ceph
//! status`, `lvs`'s thin pools and /proc/PID/stat's start.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::{ceph, iostat, lvs, procpid, pvetasks, qmp, zfs};

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
    if let Ok(qmp::Message::Answer(r)) = qmp::message(&text) {
        let _ = qmp::blockstats(&r);
    }
    for t in pvetasks::active(&text) {
        assert!(t.upid.starts_with("UPID:") && !t.kind.is_empty());
    }
    let _ = pvetasks::replications(&text);
    let _ = procpid::start_ticks(&text);
    for s in zfs::scans(&text) {
        assert!(s.kind == "scrub" || s.kind == "resilver");
        assert!(s.done_pct.is_none_or(f64::is_finite));
    }
    if let Ok(a) = ceph::cluster_activity(&text) {
        assert!(a.deep_scrubbing_pgs <= a.scrubbing_pgs || a.scrubbing_pgs == u64::MAX);
    }
    for p in lvs::thin_pools(&text) {
        assert!(p.data_pct.is_none_or(|v| (0.0..=100.0).contains(&v)));
    }
});
