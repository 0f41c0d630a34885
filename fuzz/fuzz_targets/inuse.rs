//! What `qualify` reads to find a device in use: wipefs's JSON, `zpool
//! status -P -L`, `pvs`, /proc/swaps and udev's database.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::inuse;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(&data);
    let _ = inuse::wipefs_signatures(&text);
    let devices = inuse::zpool_devices(&text);
    assert!(devices.iter().all(|(_, d)| d.starts_with("/dev/")));
    assert!(inuse::pvs(&text).len() <= text.lines().count());
    assert!(inuse::swaps(&text).len() <= text.lines().count());
    assert!(inuse::udev_properties(&text).len() <= text.lines().count());
});
