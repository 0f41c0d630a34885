//! Proxmox Backup Server's files: index files (`.fidx`, `.didx`), a
//! blob's header and CRC, and datastore.cfg.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::pbs::{self, IndexKind};

fuzz_target!(|data: &[u8]| {
    if let Ok(i) = pbs::index(data) {
        assert_eq!(pbs::index(data).as_ref(), Ok(&i));
        match i.kind {
            IndexKind::Fixed { size, chunk_size } => {
                assert!(chunk_size > 0);
                assert_eq!(i.digests.len() as u64, size.div_ceil(chunk_size));
                assert_eq!(data.len(), pbs::INDEX_HEADER + 32 * i.digests.len());
            }
            IndexKind::Dynamic => {
                assert_eq!(i.ends.len(), i.digests.len());
                assert!(i.ends.windows(2).all(|w| w[0] <= w[1]));
            }
        }
    }
    if let Ok(h) = pbs::blob_header(data) {
        assert!(h.data_at <= data.len());
        assert!(pbs::blob_crc_ok(data).is_ok());
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(cfg) = pbs::datastore_cfg(&text) {
        assert_eq!(pbs::datastore_cfg(&text).as_ref(), Ok(&cfg));
        assert!(cfg.warnings.len() <= pbs::MAX_WARNINGS);
        for s in &cfg.stores {
            assert!(!s.path.is_empty() && !s.name.is_empty());
            assert!((1..=2880).contains(&s.tuning.gc_atime_cutoff_min));
            assert!(s.tuning.verify_readers >= 1 && s.tuning.verify_workers >= 1);
        }
    }
});
