//! sysfs attribute values: a queue's scheduler list, a SCSI VPD page 0x80
//! the link rates (SATA, SAS, PCIe, USB), and `dmsetup table` lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::{dmtable, link, sysfs};

fuzz_target!(|data: &[u8]| {
    if let Some(serial) = sysfs::vpd_serial(data) {
        assert!(!serial.is_empty() && serial.len() <= data.len());
        assert!(serial.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
    }
    let text = String::from_utf8_lossy(data);
    if let Some(active) = sysfs::active_scheduler(&text) {
        assert!(!active.is_empty());
    }
    for (kind, rate) in [
        (link::Kind::Sata, link::sata_gbps(&text)),
        (link::Kind::Sas, link::sas_gbps(&text)),
        (link::Kind::Pcie, link::pcie_gts(&text)),
        (link::Kind::Usb, link::usb_mbps(&text)),
        (link::Kind::Usb, link::usb_version_mbps(&text)),
    ] {
        if let Some(rate) = rate {
            let lanes = link::pcie_width(&text).unwrap_or(1);
            let ceiling = link::ceiling_mb_s(kind, rate, lanes);
            assert!(ceiling.is_finite() || rate.is_infinite(), "{rate} {ceiling}");
            assert!(ceiling >= 0.0);
        }
    }
    if let Some(pool) = dmtable::thin_pool(&text) {
        assert!(pool.chunk_bytes >= 65536 && pool.chunk_bytes % 65536 == 0);
    }
});
