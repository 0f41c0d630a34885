//! `zpool status -P -L POOL` output: the pool's layout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::zfs;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(status) = zfs::parse_status(&text) {
        let _ = status.layout();
        let data = status.data_devices();
        for v in &status.vdevs {
            let _ = v.kind();
        }
        assert!(data.len() <= text.lines().count());
    }
});
