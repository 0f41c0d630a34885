//! /proc/meminfo, /etc/os-release and dpkg's status file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::hostfacts;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = hostfacts::mem_total_bytes(&text);
    let _ = hostfacts::os_pretty_name(&text);
    let _ = hostfacts::installed_version(&text, "pve-manager");
});
