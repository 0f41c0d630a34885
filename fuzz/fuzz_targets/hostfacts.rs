//! /proc/meminfo, /etc/os-release, dpkg's status file, /proc/loadavg and
//! /proc/pressure/*.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::{hostfacts, pressure};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = pveprobe_parse::memory::meminfo(&text);
    let _ = pveprobe_parse::memory::swapped_pages(&text);
    let _ = pveprobe_parse::procpid::resident_pages(&text);
    let _ = hostfacts::os_pretty_name(&text);
    let _ = hostfacts::installed_version(&text, "pve-manager");
    if let Some(p) = pressure::pressure(&text) {
        for s in [Some(p.some), p.full].into_iter().flatten() {
            assert!((0.0..=100.0).contains(&s.avg10) && (0.0..=100.0).contains(&s.avg300));
        }
    }
    if let Some(l) = pressure::loadavg(&text) {
        assert!(l.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
});
