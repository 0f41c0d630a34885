//! /proc/self/mountinfo: the parser and the search for PATH's mount.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::mountinfo;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let entries = mountinfo::parse(&text);
    for e in &entries {
        assert!(e.mount_point.is_absolute());
    }
    for path in ["/", "/var/lib/vz", "/x/y"] {
        if let Some(m) = mountinfo::mount_for(&entries, Path::new(path)) {
            assert!(Path::new(path).starts_with(&m.mount_point));
        }
    }
    let _ = mountinfo::unescape(&text);
});
