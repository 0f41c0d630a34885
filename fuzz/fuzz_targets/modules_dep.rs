//! /lib/modules/RELEASE/modules.dep: a module's load order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::kmod;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(dep) = kmod::parse(&text) else {
        return;
    };
    // Every name a line holds: its order ends with its own file, each file
    // once, and nothing is missing.
    for line in text.lines().filter(|l| l.contains(':') && !l.starts_with('#')) {
        let path = line.split(':').next().unwrap().trim();
        let name = kmod::module_name(path);
        let (order, missing) = dep.load_order(&[&name]);
        assert!(missing.is_empty(), "{name}");
        let mut seen = std::collections::BTreeSet::new();
        assert!(order.iter().all(|f| seen.insert(f.clone())));
        assert_eq!(order.last().map(|p| kmod::module_name(p)), Some(name));
    }
});
