//! `smartctl --json` output and `smartctl --scan-open --json`: whatever a
//! smartctl (or something on PATH calling itself that) prints.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::smart;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = smart::parse(&text) {
        if let Some(a) = &s.ata {
            assert!(a.wear_used_pct.is_none_or(|w| w <= 100 || a.wear_source.as_deref() == Some("device statistics")));
        }
    }
    if let Ok(devices) = smart::parse_scan(&text) {
        assert!(devices.len() <= text.len());
    }
});
