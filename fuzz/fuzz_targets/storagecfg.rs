//! /etc/pve/storage.cfg: PVE's section config, read as PVE reads it.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::storagecfg::{self, Section, StorageCfgError};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let result = storagecfg::parse(&text);
    // Deterministic, errors included.
    assert_eq!(storagecfg::parse(&text), result);
    let cfg = match result {
        Ok(cfg) => cfg,
        Err(StorageCfgError::TooLarge { bytes }) => {
            assert!(bytes > storagecfg::MAX_BYTES);
            return;
        }
        Err(StorageCfgError::TooManySections { .. }) => return,
        Err(StorageCfgError::Nul { line } | StorageCfgError::ControlChar { line, .. }) => {
            assert!(line >= 1 && line <= text.split('\n').count());
            return;
        }
    };
    assert!(cfg.sections.len() <= storagecfg::MAX_SECTIONS);
    assert!(cfg.warnings.len() <= storagecfg::MAX_WARNINGS);
    assert!(cfg.warnings_omitted == 0 || cfg.warnings.len() == storagecfg::MAX_WARNINGS);
    assert!(cfg.warnings.iter().all(|w| w.starts_with("line ")));
    let mut ids = HashSet::new();
    let mut last_line = 0;
    for s in &cfg.sections {
        assert!(storagecfg::known_types().any(|k| k == s.kind), "{}", s.kind);
        assert!(storagecfg::is_valid_storage_id(&s.id), "{}", s.id);
        assert!(ids.insert(s.id.as_str()), "duplicate ID {}", s.id);
        // Kept sections are in file order, each header on its own line.
        assert!(s.line > last_line);
        last_line = s.line;
        check_options(s, true);
        for item in s.list("content").iter().chain(&s.list("nodes")) {
            assert!(!item.is_empty() && !item.contains([',', ';', ' ', '\t']));
        }
        let content = s.content();
        assert!(!content.iter().any(|c| c == "none"));
        let _ = (s.flag("disable"), s.is_shared(), s.enabled_on("pve1"));
        if s.flag("disable") {
            assert!(!s.enabled_on("pve1"));
        }
    }
    for s in &cfg.unsupported {
        assert!(!s.kind.is_empty() && storagecfg::is_valid_storage_id(&s.id));
        assert!(!storagecfg::known_types().any(|k| k == s.kind));
        check_options(s, false);
    }
    let _ = cfg.builtin_local();
    // Written back as PVE writes it, the sections read the same.
    let written = storagecfg::write(&cfg.sections);
    if written.len() <= storagecfg::MAX_BYTES {
        let again = storagecfg::parse(&written).expect("written sections parse");
        let strip = |sections: &[Section]| -> Vec<Section> {
            sections
                .iter()
                .map(|s| Section {
                    line: 0,
                    ..s.clone()
                })
                .collect()
        };
        assert_eq!(strip(&again.sections), strip(&cfg.sections));
        assert!(again.unsupported.is_empty());
        // Only the content types a type does not support are warned about
        // again (their value is kept as written).
        assert!(
            again
                .warnings
                .iter()
                .all(|w| w.contains("storage does not support content type")),
            "{:?}",
            again.warnings
        );
    }
});

fn check_options(s: &Section, unique: bool) {
    let mut keys = HashSet::new();
    for (key, value) in &s.options {
        assert!(!key.is_empty() && !key.starts_with('#'));
        assert!(!key.contains([' ', '\t', '\n', '\r', '\x0b', '\x0c']));
        assert!(!unique || keys.insert(key.as_str()), "repeated {key}");
        if let Some(v) = value {
            assert!(!v.is_empty() && !v.contains('\n'));
            assert_eq!(v.trim_matches([' ', '\t', '\r', '\x0b', '\x0c']), v);
            if unique {
                assert_eq!(s.get(key), Some(v.as_str()));
            }
        }
        assert!(s.has(key));
    }
}
