//! /etc/pve/status.cfg: PVE's metric servers, read as PVE reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::statuscfg::{self, Kind, StatusCfgError};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let result = statuscfg::parse(&text);
    // Deterministic, errors included.
    assert_eq!(statuscfg::parse(&text), result);
    let cfg = match result {
        Ok(cfg) => cfg,
        Err(StatusCfgError::TooLarge { bytes }) => {
            assert!(bytes > statuscfg::MAX_BYTES);
            return;
        }
        Err(StatusCfgError::TooManySections { line }) => {
            assert!(line >= 1 && line <= text.split('\n').count());
            return;
        }
    };
    assert!(cfg.servers.len() <= statuscfg::MAX_SECTIONS);
    assert!(cfg.warnings.len() <= statuscfg::MAX_WARNINGS);
    assert!(cfg.warnings.iter().all(|w| w.starts_with("line ")));
    for s in &cfg.servers {
        // Every server PVE would send to has its address and port.
        if !matches!(s.kind, Kind::Other(_)) {
            assert!(s.server.as_deref().is_some_and(|v| !v.is_empty()));
            assert!(matches!(s.kind, Kind::Graphite { .. }) || s.port.is_some());
            assert!(s.mtu >= 512);
        }
        assert!(s.id.len() >= 2 && s.id.as_bytes()[0].is_ascii_alphabetic());
        assert!(s.line >= 1 && s.line <= text.split('\n').count());
    }
});
