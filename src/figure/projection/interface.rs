//! How much of its interface's ceiling a read figure reached: BUFFERED
//! READS and SEQ READ DIRECT against the narrowest link between the disk
//! read and the CPU (`model::storage::Link`).

use serde::{Deserialize, Serialize};

use crate::model::storage::Storage;

/// Above this share of the ceiling the interface, not the disk, set the
/// figure: line encoding is counted in the ceiling, but command and
/// packet overhead (FIS, TLP headers) take a further 5-15%.
pub const BOUND_SHARE: f64 = 0.85;

/// A read figure against its link's ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterfaceShare {
    /// The leaf disk read.
    pub disk: String,
    /// `SATA 3.0 Gb/s at ata1`.
    pub link: String,
    /// MB/s (10^6 bytes).
    pub ceiling_mb_s: f64,
    /// The figure (MiB/s, as pveperf counts) over the ceiling, 0 to 1+.
    pub share: f64,
}

impl InterfaceShare {
    pub fn bound(&self) -> bool {
        self.share >= BOUND_SHARE
    }

    /// `-v`'s detail line.
    pub fn detail(&self) -> String {
        let verdict = if self.bound() {
            ": the interface, not the disk, set this figure"
        } else {
            ""
        };
        format!(
            "      interface: {}'s {} carries at most {:.0} MB/s; this is {:.0}% of it{verdict}\n",
            self.disk,
            self.link,
            self.ceiling_mb_s,
            self.share * 100.0
        )
    }
}

/// The share of `mib_per_s` in the ceiling of the one leaf disk below
/// the source, where the stack has one disk and its links are known.
/// Stacks of several disks (RAID, a pool read disk by disk) get none:
/// which link a read crossed is not one answer.
pub fn share(storage: Option<&Storage>, mib_per_s: f64) -> Option<InterfaceShare> {
    let storage = storage?;
    let [disk] = storage.disks.as_slice() else {
        return None;
    };
    let link = disk.narrowest()?;
    (link.ceiling_mb_s > 0.0 && mib_per_s > 0.0).then(|| InterfaceShare {
        disk: disk.name.clone(),
        link: format!("{} {} link at {}", link.kind, link.current, link.at),
        ceiling_mb_s: link.ceiling_mb_s,
        share: mib_per_s * 1.048_576 / link.ceiling_mb_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::storage::{Disk, Link};

    fn sata(current: f64) -> Link {
        Link {
            kind: "SATA".into(),
            at: "ata1".into(),
            current: format!("{current:.1} Gb/s"),
            ceiling_mb_s: current * 100.0,
            capable: None,
            capable_mb_s: None,
            capable_by: None,
        }
    }

    #[test]
    fn one_disk_with_a_link_gets_a_share() {
        let mut disk = Disk {
            name: "sda".into(),
            ..Disk::default()
        };
        disk.links = vec![sata(3.0)];
        let storage = Storage {
            disks: vec![disk.clone()],
            ..Storage::default()
        };
        // 270 MiB/s is 283.1 MB/s: 94% of SATA 3.0's 300 MB/s.
        let s = share(Some(&storage), 270.0).unwrap();
        assert_eq!(s.disk, "sda");
        assert!((s.share - 0.9437).abs() < 1e-3, "{}", s.share);
        assert!(s.bound());
        assert!(s.detail().contains("the interface, not the disk"));
        let slow = share(Some(&storage), 100.0).unwrap();
        assert!(!slow.bound() && !slow.detail().contains("not the disk"));
        // Two disks: no single link to hold the figure to.
        let two = Storage {
            disks: vec![disk.clone(), disk],
            ..Storage::default()
        };
        assert_eq!(share(Some(&two), 270.0), None);
        assert_eq!(share(None, 270.0), None);
    }
}
