//! LVM's thin pools from `lvs` as PVE's LVM plugins ask it
//! (`--separator : --noheadings --units b --nosuffix`, pve-storage's
//! `LVMPlugin::lvm_list_volumes`): each line `VG:LV:ATTR:DATA%:META%`
//! with leading blanks. A thin pool's attributes start with `t`; an
//! inactive pool prints no percentages.

use serde::{Deserialize, Serialize};

/// The arguments that make the lines [`thin_pools`] reads.
pub const ARGS: [&str; 8] = [
    "--separator",
    ":",
    "--noheadings",
    "--units",
    "b",
    "--nosuffix",
    "--options",
    "vg_name,lv_name,lv_attr,data_percent,metadata_percent",
];

/// How full one thin pool is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinUse {
    pub vg: String,
    pub lv: String,
    /// Share of its data space in use, %; none while it is inactive.
    pub data_pct: Option<f64>,
    /// Share of its metadata space in use, %.
    pub metadata_pct: Option<f64>,
}

/// The thin pools of `lvs`'s lines.
pub fn thin_pools(text: &str) -> Vec<ThinUse> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.trim().split(':').collect();
            let [vg, lv, attr, data, meta] = f.as_slice() else {
                return None;
            };
            if !attr.starts_with('t') || vg.is_empty() || lv.is_empty() {
                return None;
            }
            let pct = |s: &str| {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && (0.0..=100.0).contains(v))
            };
            Some(ThinUse {
                vg: vg.to_string(),
                lv: lv.to_string(),
                data_pct: pct(data),
                metadata_pct: pct(meta),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nearly_full_pve_data_pool_and_its_thin_volumes() {
        let pools = thin_pools(&crate::testutil::fixture("lvm", "lvs-pve-data-97.txt"));
        assert_eq!(pools.len(), 1, "{pools:?}");
        assert_eq!(
            (pools[0].vg.as_str(), pools[0].lv.as_str()),
            ("pve", "data")
        );
        assert_eq!(pools[0].data_pct, Some(97.33));
        assert_eq!(pools[0].metadata_pct, Some(3.75));
        // An inactive pool prints no percentages.
        let idle = thin_pools("  scratch:thin:twi---tz--::\n");
        assert_eq!(idle[0].data_pct, None);
        assert!(thin_pools("pve:root:-wi-ao----::\nnot lvs\n").is_empty());
    }
}
