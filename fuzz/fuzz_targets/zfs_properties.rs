//! `zfs get -H -o property,value` output: the dataset's properties.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::zfs;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let props = zfs::parse_properties(&text);
    assert!(props.len() <= zfs::PROPERTIES.len());
    for key in props.keys() {
        assert!(zfs::PROPERTIES.contains(&key.as_str()));
    }
});
