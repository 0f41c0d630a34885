//! What the whole guest is read from: a process's cgroups, a cgroup's
//! `cpu.stat` and `oom_kill` count, a task's `schedstat`, `/dev/kmsg`'s
//! OOM records, `/proc/net/dev` with PVE's tap and veth names, a
//! process's memory (`status`), the ZFS ARC, `/proc/vmstat`'s OOM kills, a
//! sysfs number, and QEMU's vCPU, balloon and memory answers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::{cgroup, memory, netdev, oom, procpid, qmp};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = cgroup::memberships(&text);
    assert!(lines.len() <= text.lines().count());
    for c in ["cpu", "memory", "io"] {
        if let Some(path) = cgroup::path_of(&lines, c) {
            assert!(path.starts_with('/'));
            let _ = cgroup::guest_of(path);
        }
    }
    if let Some(t) = cgroup::throttling(&text) {
        let _ = t.throttled.saturating_sub(t.periods);
    }
    let _ = cgroup::oom_kills(&text);
    let _ = procpid::schedstat(&text);
    if let Some(m) = procpid::memory(&text) {
        let _ = m.rss_kib.saturating_add(m.swap_kib);
    }
    if let Some(a) = memory::arcstats(&text) {
        let _ = a.size.saturating_sub(a.max);
    }
    let _ = memory::oom_kills(&text);
    let _ = memory::number(&text);
    if let Ok(cpus) = qmp::vcpu_threads(&text) {
        assert!(cpus.windows(2).all(|w| w[0] <= w[1]));
    }
    let _ = qmp::balloon_actual(&text);
    let _ = qmp::memory_size(&text);
    if let Ok(s) = qmp::guest_stats(&text) {
        assert_ne!(s.available, Some(u64::MAX));
    }
    for line in text.lines() {
        if let Some(r) = oom::record(line) {
            assert!(r.priority <= 7);
            if let Some(s) = oom::summary(r.message) {
                assert!(!s.constraint.is_empty());
            }
            let _ = oom::killed(r.message);
        }
    }
    for i in netdev::interfaces(&text) {
        assert!(!i.name.is_empty());
        if let Some((_, n)) = netdev::guest_interface(&i.name) {
            let _ = n;
        }
    }
});
