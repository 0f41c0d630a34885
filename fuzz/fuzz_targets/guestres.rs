//! What the whole guest is read from: a process's cgroups, a cgroup's
//! `cpu.stat` and `oom_kill` count, a task's `schedstat`, `/dev/kmsg`'s
//! OOM records and `/proc/net/dev` with PVE's tap and veth names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::{cgroup, netdev, oom, procpid};

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
