//! What shows a device in use, as the tools and files `qualify` reads
//! print it: the signatures `wipefs --no-act --json` finds (util-linux's
//! libblkid, low-level probe: partition tables, filesystems, swap, RAID
//! and volume manager members), the devices of imported ZFS pools
//! (`zpool status -P -L`), LVM's physical volumes (`pvs --noheadings
//! --separator '|' -o pv_name,vg_name`), the swap areas of `/proc/swaps`,
//! and udev's properties of a device (`/run/udev/data/bMAJ:MIN`).

use serde::Deserialize;

/// One signature libblkid found on a device.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Signature {
    /// The device wipefs probed (`loop7`).
    #[serde(default)]
    pub device: String,
    /// Where it sits: `0x438`.
    #[serde(default)]
    pub offset: String,
    /// `ext4`, `gpt`, `dos`, `swap`, `LVM2_member`, `crypto_LUKS`,
    /// `linux_raid_member`, `zfs_member`, `ceph_bluestore`, `bcache`...
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub uuid: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
}

#[derive(Deserialize)]
struct Wipefs {
    #[serde(default)]
    signatures: Vec<Signature>,
}

/// The signatures of `wipefs --no-act --json DEVICE`'s output. wipefs
/// prints nothing at all when it finds none.
pub fn wipefs_signatures(text: &str) -> Result<Vec<Signature>, serde_json::Error> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    Ok(serde_json::from_str::<Wipefs>(text)?.signatures)
}

/// `(pool, device path)` for every device path in `zpool status -P -L`
/// output: the lines after a `pool:` line whose first word is an absolute
/// path under `/dev/`.
pub fn zpool_devices(text: &str) -> Vec<(String, String)> {
    let mut pool = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_prefix("pool:") {
            pool = name.trim().to_string();
            continue;
        }
        if let Some(first) = trimmed.split_whitespace().next()
            && first.starts_with("/dev/")
            && !pool.is_empty()
        {
            out.push((pool.clone(), first.to_string()));
        }
    }
    out
}

/// `(physical volume, volume group)` from `pvs --noheadings --separator
/// '|' -o pv_name,vg_name`; the group is empty for a PV in none.
pub fn pvs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (pv, vg) = line.split_once('|')?;
            let pv = pv.trim();
            pv.starts_with('/')
                .then(|| (pv.to_string(), vg.trim().to_string()))
        })
        .collect()
}

/// The swap areas of `/proc/swaps`: the first field of each line after
/// the header, with the kernel's octal escapes (`\040`) undone.
pub fn swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .map(crate::mountinfo::unescape)
        .collect()
}

/// udev's `E:KEY=VALUE` properties of a device's database file.
pub fn udev_properties(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| line.strip_prefix("E:")?.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/../../fixtures/qualify/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn wipefs_lists_every_signature_it_found() {
        let sigs = wipefs_signatures(&fixture("wipefs-gpt-ext4.json")).unwrap();
        let kinds: Vec<&str> = sigs.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(kinds, ["gpt", "gpt", "PMBR"], "{sigs:?}");
        assert!(sigs.iter().all(|s| s.offset.starts_with("0x")));
        let ext4 = wipefs_signatures(&fixture("wipefs-ext4.json")).unwrap();
        assert_eq!(ext4.len(), 1);
        assert_eq!(ext4[0].kind, "ext4");
        assert_eq!(ext4[0].offset, "0x438");
        assert_eq!(wipefs_signatures("").unwrap(), vec![]);
        assert!(wipefs_signatures("{\"signatures\": 3}").is_err());
    }

    #[test]
    fn zpool_status_names_each_pools_devices() {
        let text = "  pool: rpool\n state: ONLINE\nconfig:\n\n\tNAME           STATE     READ WRITE CKSUM\n\trpool          ONLINE       0     0     0\n\t  mirror-0     ONLINE       0     0     0\n\t    /dev/sda3  ONLINE       0     0     0\n\t    /dev/sdb3  ONLINE       0     0     0\n\nerrors: No known data errors\n\n  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME          STATE     READ WRITE CKSUM\n\ttank          ONLINE       0     0     0\n\t  /dev/nvme0n1  ONLINE       0     0     0\n\tlogs\n\t  /dev/sdc1   ONLINE       0     0     0\n";
        assert_eq!(
            zpool_devices(text),
            [
                ("rpool", "/dev/sda3"),
                ("rpool", "/dev/sdb3"),
                ("tank", "/dev/nvme0n1"),
                ("tank", "/dev/sdc1"),
            ]
            .map(|(p, d)| (p.to_string(), d.to_string()))
        );
        assert!(zpool_devices("no pools available\n").is_empty());
    }

    #[test]
    fn pvs_swaps_and_udev() {
        assert_eq!(
            pvs("  /dev/sda3|pve\n  /dev/loop7|\n  WARNING: x\n"),
            [("/dev/sda3", "pve"), ("/dev/loop7", "")].map(|(p, v)| (p.to_string(), v.to_string()))
        );
        assert_eq!(
            swaps(
                "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/loop3                              partition\t65532\t\t0\t\t-2\n/swap\\040file                              file\t65532\t\t0\t\t-3\n"
            ),
            ["/dev/loop3", "/swap file"]
        );
        let props = udev_properties(
            "S:disk/by-id/ata-X\nE:ID_SERIAL_SHORT=S3F3NX0K123456\nE:ID_WWN=0x5002538c40a1b2c3\nG:systemd\n",
        );
        assert_eq!(
            props,
            [
                ("ID_SERIAL_SHORT", "S3F3NX0K123456"),
                ("ID_WWN", "0x5002538c40a1b2c3")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
    }
}
