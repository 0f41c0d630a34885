//! sysfs attribute values: a queue's scheduler list and a SCSI VPD page 0x80.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::sysfs;

fuzz_target!(|data: &[u8]| {
    if let Some(serial) = sysfs::vpd_serial(data) {
        assert!(!serial.is_empty() && serial.len() <= data.len());
        assert!(serial.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
    }
    let text = String::from_utf8_lossy(data);
    if let Some(active) = sysfs::active_scheduler(&text) {
        assert!(!active.is_empty());
    }
});
