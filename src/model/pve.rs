//! A Proxmox VE storage as the report names it (`--storage ID`): which
//! storage, of which type, and what the probe measured on it: its path,
//! or a scratch volume it allocated and freed.

use serde::{Deserialize, Serialize};

/// How a storage is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// The probe as for a path, in the storage's directory.
    Path,
    /// A scratch volume allocated with `pvesm alloc`, measured on its
    /// device, freed afterwards.
    ScratchVolume,
}

/// The storage a result was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PveTarget {
    /// The storage ID (`local`, `local-lvm`).
    pub id: String,
    /// Its type in storage.cfg (`dir`, `lvmthin`, `zfspool`, `rbd`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    pub shared: bool,
    pub how: How,
    /// `Path`: the directory measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `ScratchVolume`: its volume ID (`local-lvm:vm-987654321-pveprobe-1a2b3c4d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    /// `ScratchVolume`: the device `pvesm path` gave, and what it resolves to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
}

impl PveTarget {
    /// One line for a person: `local-lvm (lvmthin): scratch volume
    /// vm-987654321-pveprobe-1a2b3c4d, 4.00 GiB, /dev/dm-7`.
    pub fn describe(&self) -> String {
        let what = match self.how {
            How::Path => format!("path {}", self.path.as_deref().unwrap_or("?")),
            How::ScratchVolume => {
                let mut text = format!("scratch volume {}", self.volume.as_deref().unwrap_or("?"));
                if let Some(bytes) = self.size_bytes {
                    text.push_str(&format!(
                        ", {:.2} GiB",
                        bytes as f64 / f64::from(1u32 << 30)
                    ));
                }
                if let Some(dev) = &self.device {
                    text.push_str(&format!(", {dev}"));
                }
                text
            }
        };
        let shared = if self.shared { ", shared" } else { "" };
        format!("{} ({}{shared}): {what}", self.id, self.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_says_what_was_measured() {
        let mut t = PveTarget {
            id: "local-lvm".into(),
            kind: "lvmthin".into(),
            shared: false,
            how: How::ScratchVolume,
            path: None,
            volume: Some("local-lvm:vm-987654321-pveprobe-1a2b3c4d".into()),
            device: Some("/dev/dm-7".into()),
            size_bytes: Some(4 << 30),
        };
        assert_eq!(
            t.describe(),
            "local-lvm (lvmthin): scratch volume local-lvm:vm-987654321-pveprobe-1a2b3c4d, 4.00 GiB, /dev/dm-7"
        );
        t = PveTarget {
            id: "nfs1".into(),
            kind: "nfs".into(),
            shared: true,
            how: How::Path,
            path: Some("/mnt/pve/nfs1".into()),
            volume: None,
            device: None,
            size_bytes: None,
        };
        assert_eq!(t.describe(), "nfs1 (nfs, shared): path /mnt/pve/nfs1");
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["type"], "nfs");
        assert_eq!(json["how"], "path");
    }
}
