//! `/etc/pve/.vmlist`: the guests of the cluster, as pmxcfs lists them.
//!
//! pmxcfs writes the file on every read from its in-memory list
//! (`cfs_create_vmlist_msg` in pve-cluster `src/pmxcfs/status.c`):
//!
//! ```text
//! {
//! "version": 42,
//! "ids": {
//! "100": { "node": "pve1", "type": "qemu", "version": 3 },
//! "101": { "node": "pve2", "type": "lxc", "version": 7 }}
//!
//! }
//! ```
//!
//! The guests come in hash order, not by ID. With no guest at all, the
//! `ids` object is left out (`{"version": N}`). `type` is `qemu`, `lxc`,
//! `openvz` (long gone) or `unknown`; the IDs are the `%u` of a 32-bit
//! VMID taken from a config file name that starts with 1-9
//! (`name_is_vm_config` in `src/pmxcfs/memdb.c`), so any ID in 1..=2^32-1
//! may appear, not only PVE's usual 100..=999999999.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

/// Larger input is refused: about 60 bytes per guest, so this holds some
/// 70,000 guests.
pub const MAX_BYTES: usize = 4 << 20;

/// One guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guest {
    pub vmid: u32,
    /// The node whose directory holds the guest's config.
    pub node: String,
    /// `qemu`, `lxc`, `openvz` or `unknown`, as pmxcfs prints it.
    pub kind: String,
    /// The config file's version in pmxcfs (changes on each write).
    pub version: u32,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vmlist {
    /// pmxcfs's counter of changes to the list.
    pub version: u32,
    /// The guests by VMID.
    pub guests: Vec<Guest>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VmlistError {
    #[error(".vmlist is {bytes} bytes, more than the {MAX_BYTES} read")]
    TooLarge { bytes: usize },
    #[error(".vmlist is not pmxcfs's JSON: {0}")]
    Json(String),
    #[error(".vmlist names a guest {0:?}, which is no VMID")]
    BadVmid(String),
}

#[derive(Deserialize)]
struct RawList {
    version: u32,
    #[serde(default)]
    ids: BTreeMap<String, RawGuest>,
}

#[derive(Deserialize)]
struct RawGuest {
    node: String,
    #[serde(rename = "type")]
    kind: String,
    version: u32,
}

/// Reads the file. A key of `ids` that is not a VMID as pmxcfs prints one
/// (decimal, no sign, no leading zero, 1..=u32::MAX) is an error: such a
/// file was not written by pmxcfs. Unknown fields are ignored.
pub fn parse(text: &str) -> Result<Vmlist, VmlistError> {
    if text.len() > MAX_BYTES {
        return Err(VmlistError::TooLarge { bytes: text.len() });
    }
    let raw: RawList = serde_json::from_str(text).map_err(|e| VmlistError::Json(e.to_string()))?;
    let mut guests = raw
        .ids
        .into_iter()
        .map(|(key, g)| {
            let vmid = parse_vmid(&key)
                .ok_or_else(|| VmlistError::BadVmid(key.chars().take(32).collect()))?;
            Ok(Guest {
                vmid,
                node: g.node,
                kind: g.kind,
                version: g.version,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    guests.sort_by_key(|g| g.vmid);
    Ok(Vmlist {
        version: raw.version,
        guests,
    })
}

/// The VMIDs of every guest in the cluster.
pub fn vmids(text: &str) -> Result<BTreeSet<u32>, VmlistError> {
    Ok(parse(text)?.guests.iter().map(|g| g.vmid).collect())
}

fn parse_vmid(key: &str) -> Option<u32> {
    let first = *key.as_bytes().first()?;
    if !(b'1'..=b'9').contains(&first) || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testutil::fixture("pve/vmlist", name)
    }

    #[test]
    fn three_node_cluster() {
        let list = parse(&fixture("cluster.json")).unwrap();
        assert_eq!(list.version, 187);
        let ids: Vec<u32> = list.guests.iter().map(|g| g.vmid).collect();
        assert_eq!(ids, [100, 101, 102, 105, 110, 200, 201, 9000, 9001]);
        assert_eq!(
            list.guests[1],
            Guest {
                vmid: 101,
                node: "pve1".into(),
                kind: "lxc".into(),
                version: 39877,
            }
        );
        let on_pve3: Vec<u32> = list
            .guests
            .iter()
            .filter(|g| g.node == "pve3")
            .map(|g| g.vmid)
            .collect();
        assert_eq!(on_pve3, [110, 9000, 9001]);
        assert_eq!(
            vmids(&fixture("cluster.json")).unwrap(),
            BTreeSet::from([100, 101, 102, 105, 110, 200, 201, 9000, 9001])
        );
    }

    #[test]
    fn no_guests_no_ids() {
        assert_eq!(
            parse(&fixture("empty.json")).unwrap(),
            Vmlist {
                version: 1,
                guests: Vec::new()
            }
        );
        assert!(vmids(&fixture("empty.json")).unwrap().is_empty());
    }

    #[test]
    fn vmids_as_pmxcfs_prints_them() {
        let one = |key: &str| {
            vmids(&format!(
                r#"{{"version": 1, "ids": {{"{key}": {{"node": "n", "type": "qemu", "version": 1}}}}}}"#
            ))
        };
        assert_eq!(one("1"), Ok(BTreeSet::from([1])));
        assert_eq!(one("4294967295"), Ok(BTreeSet::from([u32::MAX])));
        for bad in [
            "0",
            "0100",
            "+100",
            "-1",
            "4294967296",
            "",
            "10a",
            " 100",
            "１００",
        ] {
            assert_eq!(one(bad), Err(VmlistError::BadVmid(bad.into())), "{bad:?}");
        }
    }

    #[test]
    fn refuses_what_pmxcfs_does_not_write() {
        assert!(matches!(parse(""), Err(VmlistError::Json(_))));
        assert!(matches!(parse("[]"), Err(VmlistError::Json(_))));
        assert!(matches!(parse(r#"{"ids": {}}"#), Err(VmlistError::Json(_))));
        assert!(matches!(
            parse(r#"{"version": 1, "ids": {"100": {"node": "a", "type": "qemu"}}}"#),
            Err(VmlistError::Json(_))
        ));
        assert!(matches!(
            parse(r#"{"version": 1, "ids": {"100": {"node": "a", "type": "qemu", "version": 1}},"#),
            Err(VmlistError::Json(_))
        ));
        // Extra fields are tolerated.
        assert_eq!(
            vmids(
                r#"{"version": 2, "extra": [1], "ids": {"100": {"node": "a", "type": "qemu", "version": 1, "x": 0}}}"#
            ),
            Ok(BTreeSet::from([100]))
        );
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(matches!(parse(&deep), Err(VmlistError::Json(_))));
    }

    #[test]
    fn size_limit() {
        let pad = " ".repeat(MAX_BYTES);
        let text = format!("{{\"version\": 1}}{pad}");
        assert_eq!(
            parse(&text),
            Err(VmlistError::TooLarge {
                bytes: MAX_BYTES + 14
            })
        );
        assert!(parse(&text[..MAX_BYTES]).is_ok());
    }

    #[test]
    fn every_fixture_is_tested_here() {
        let names = crate::testutil::fixture_names("pve/vmlist");
        assert_eq!(names, ["cluster.json", "empty.json"]);
    }
}
