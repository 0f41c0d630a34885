//! /etc/pve/.vmlist: pmxcfs's JSON list of the cluster's guests.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::vmlist;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let result = vmlist::parse(&text);
    assert_eq!(vmlist::parse(&text), result);
    let list = match result {
        Ok(list) => list,
        Err(e) => {
            assert_eq!(vmlist::vmids(&text), Err(e));
            return;
        }
    };
    // Sorted, unique VMIDs, none 0; vmids() gives the same set.
    assert!(list.guests.windows(2).all(|w| w[0].vmid < w[1].vmid));
    assert!(list.guests.iter().all(|g| g.vmid >= 1));
    let ids: BTreeSet<u32> = list.guests.iter().map(|g| g.vmid).collect();
    assert_eq!(vmlist::vmids(&text), Ok(ids));
    // Printed again as pmxcfs prints it, the list reads the same (for
    // names that need no JSON escapes).
    let plain = |s: &str| !s.chars().any(|c| c == '"' || c == '\\' || c.is_control());
    if list.guests.iter().all(|g| plain(&g.node) && plain(&g.kind)) {
        let mut out = format!("{{\n\"version\": {}", list.version);
        if list.guests.is_empty() {
            out.push('\n');
        } else {
            out.push_str(",\n\"ids\": {\n");
            let entries: Vec<String> = list
                .guests
                .iter()
                .map(|g| {
                    format!(
                        "\"{}\": {{ \"node\": \"{}\", \"type\": \"{}\", \"version\": {} }}",
                        g.vmid, g.node, g.kind, g.version
                    )
                })
                .collect();
            out.push_str(&entries.join(",\n"));
            out.push_str("}\n");
        }
        out.push_str("\n}\n");
        assert_eq!(vmlist::parse(&out), Ok(list));
    }
});
