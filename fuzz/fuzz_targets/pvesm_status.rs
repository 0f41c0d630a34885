//! `pvesm status` output: each storage's type, state and space.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::{pvesm, storagecfg};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let rows = pvesm::parse_status(&text);
    assert_eq!(pvesm::parse_status(&text), rows);
    assert!(rows.len() <= pvesm::MAX_ROWS);
    assert!(rows.len() <= text.lines().count());
    for r in &rows {
        assert!(storagecfg::is_valid_storage_id(&r.id));
        assert!(!r.kind.is_empty() && !r.status.is_empty());
        let space = [r.total_bytes, r.used_bytes, r.avail_bytes];
        if !r.is_active() {
            assert_eq!(space, [None; 3]);
        }
        for bytes in space.into_iter().flatten() {
            assert_eq!(bytes % 1024, 0);
        }
        // Printed again as pvesm prints it, the row reads the same.
        if let [Some(total), Some(used), Some(avail)] = space {
            let line = format!(
                "{:<12} {:>10} {:>10} {:>15} {:>15} {:>15} {:>7.2}%",
                r.id,
                r.kind,
                r.status,
                total / 1024,
                used / 1024,
                avail / 1024,
                0.0
            );
            assert_eq!(pvesm::parse_row(&line).as_ref(), Some(r));
        }
    }
});
