//! Plain-language hints: what in the storage stack explains a figure.

use super::{Hint, Storage};

/// PCI vendor id of VMware's virtual hardware.
const VMWARE_VENDOR: &str = "0x15ad";

/// Consumer SSD model prefixes, as sysfs shows them (SATA models are cut
/// to 16 characters: `Samsung SSD 870 ` for an 870 EVO): no power-loss
/// protection, so sync writes (ZFS's ZIL, fsync) are slow on them.
const CONSUMER_SSDS: [&str; 12] = [
    "Samsung SSD 8",
    "Samsung SSD 9",
    "CT250MX",
    "CT500MX",
    "CT1000MX",
    "CT2000MX",
    "CT4000MX",
    "CT500BX",
    "CT1000BX",
    "WDS",
    "KINGSTON SA400",
    "SanDisk SSD PLUS",
];

/// Disks on which "write through" means the drive's own cache is off (on
/// NVMe it means the drive has no volatile cache, often because it has
/// power-loss protection; RAID volumes hide the controller's cache).
fn cache_hint_applies(transport: Option<&str>) -> bool {
    matches!(transport, Some("SATA" | "SAS" | "SCSI" | "USB"))
}

/// What usually holds a link below its ends' rate.
fn link_causes(kind: &str) -> &'static str {
    match kind {
        "SATA" => "a cable, a backplane or the port's setting",
        "SAS" => "a cable, a backplane or expander, or a disk that cannot go faster",
        "PCIe" => {
            "a slot wired for fewer lanes, a riser, lanes shared with another slot, or power saving (ASPM)"
        }
        _ => "a USB 2 cable, hub or port on the way",
    }
}

pub fn hints(storage: &Storage) -> Vec<Hint> {
    let mut hints = Vec::new();
    for d in &storage.disks {
        let name = d.name.as_str();
        for l in d.links.iter().filter(|l| l.degraded()) {
            hints.push(Hint::new(
                "link-below-capability",
                name,
                format!(
                    "{} link at {}, {} can do {}: {}; reads cannot pass about {:.0} MB/s",
                    l.kind,
                    l.current,
                    l.capable_by.as_deref().unwrap_or("both ends"),
                    l.capable.as_deref().unwrap_or_default(),
                    link_causes(&l.kind),
                    l.ceiling_mb_s
                ),
            ));
        }
        if d.write_cache.as_deref() == Some("write through")
            && cache_hint_applies(d.transport.as_deref())
        {
            hints.push(Hint::new(
                "write-cache-off",
                name,
                "write cache is off (write through): every fsync waits for the medium; a controller cache with \
                 battery (BBWC) or enabling the disk's cache (with power-loss protection) raises FSYNCS/SECOND",
            ));
        }
        // Virtual disks (loop, virtio) report "rotational" whatever backs them,
        // and a RAID volume's cache hides its disks' seeks.
        if d.rotational == Some(true)
            && !matches!(
                d.transport.as_deref(),
                Some("virtual" | "virtio" | "RAID volume")
            )
        {
            hints.push(Hint::new(
                "rotational",
                name,
                "rotational disk (HDD): expect seeks of several ms and fsyncs in the tens to hundreds per second",
            ));
        }
        match d.controller_driver.as_deref() {
            Some("hpvsa") => hints.push(Hint::new(
                "slow-driver",
                name,
                "behind HP's hpvsa driver, known to be slow; switch the controller to AHCI or use hpsa/smartpqi",
            )),
            Some("ata_piix") => hints.push(Hint::new(
                "ide-mode",
                name,
                "behind ata_piix (legacy IDE mode): set the controller to AHCI in the firmware",
            )),
            Some("ahci") if d.controller_vendor.as_deref() == Some(VMWARE_VENDOR) => {
                hints.push(Hint::new(
                    "emulated-controller",
                    name,
                    "an emulated SATA (AHCI) controller under VMware: PVSCSI (vmw_pvscsi) is several times faster",
                ))
            }
            _ => {}
        }
        if storage.zfs.is_some()
            && d.rotational == Some(false)
            && d.model
                .as_deref()
                .is_some_and(|m| CONSUMER_SSDS.iter().any(|c| m.starts_with(c)))
        {
            hints.push(Hint::new(
                "consumer-ssd",
                name,
                format!(
                    "a consumer SSD ({}) under ZFS: without power-loss protection its sync writes are slow \
                     and it wears fast; datacenter SSDs do far better",
                    d.model.as_deref().unwrap_or_default()
                ),
            ));
        }
    }
    if let Some(zfs) = &storage.zfs {
        let dataset = zfs.dataset.as_str();
        match zfs.properties.get("sync").map(String::as_str) {
            Some("disabled") => hints.push(Hint::new(
                "sync-disabled",
                dataset,
                "sync=disabled makes fsync a no-op: FSYNCS/SECOND is meaningless here, and a power loss can lose \
                 seconds of acknowledged writes",
            )),
            Some("always") => hints.push(Hint::new(
                "sync-always",
                dataset,
                "sync=always: every write is synchronous",
            )),
            _ => {}
        }
        if let Some(c) = zfs
            .properties
            .get("compression")
            .filter(|c| !matches!(c.as_str(), "off" | "-"))
        {
            hints.push(Hint::new(
                "compression",
                dataset,
                format!(
                    "compression={c}: the fsync test's repeated 'A' compresses to almost nothing, flattering \
                     FSYNCS/SECOND against uncompressed storage"
                ),
            ));
        }
        if let Some(p) = zfs
            .properties
            .get("primarycache")
            .filter(|p| p.as_str() != "all")
        {
            hints.push(Hint::new(
                "primarycache",
                dataset,
                format!("primarycache={p}: reads of data are not cached in the ARC"),
            ));
        }
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Disk, ZfsInfo};

    fn disk(name: &str) -> Disk {
        Disk {
            name: name.into(),
            ..Disk::default()
        }
    }

    #[test]
    fn hints_name_the_cause() {
        let mut s = Storage::default();
        let mut a = disk("sda");
        a.transport = Some("SATA".into());
        a.write_cache = Some("write through".into());
        a.rotational = Some(true);
        a.controller_driver = Some("ahci".into());
        a.controller_vendor = Some("0x15ad".into());
        let mut b = disk("sdb");
        b.controller_driver = Some("hpvsa".into());
        b.write_cache = Some("write back".into());
        let mut loop0 = disk("loop0");
        loop0.transport = Some("virtual".into());
        loop0.rotational = Some(true);
        loop0.write_cache = Some("write through".into());
        s.disks = vec![a, b, loop0];
        let h = hints(&s);
        assert_eq!(h.len(), 4, "{h:#?}");
        assert!(h[0].text.starts_with("sda: write cache is off"));
        assert!(h[1].text.starts_with("sda: rotational disk"));
        assert!(h[2].text.contains("under VMware: PVSCSI"));
        assert!(h[3].text.starts_with("sdb: behind HP's hpvsa driver"));
    }

    #[test]
    fn zfs_properties_and_consumer_ssds() {
        let mut s = Storage::default();
        let mut ssd = disk("sda");
        ssd.rotational = Some(false);
        ssd.model = Some("Samsung SSD 870 ".into());
        s.disks = vec![ssd];
        let mut props = std::collections::BTreeMap::new();
        props.insert("sync".to_string(), "disabled".to_string());
        props.insert("compression".to_string(), "lz4".to_string());
        props.insert("primarycache".to_string(), "all".to_string());
        s.zfs = Some(ZfsInfo {
            dataset: "rpool/data".into(),
            pool: "rpool".into(),
            state: None,
            layout: None,
            vdevs: vec![],
            properties: props,
        });
        let h = hints(&s);
        assert_eq!(h.len(), 3, "{h:#?}");
        assert!(
            h[0].text
                .contains("consumer SSD (Samsung SSD 870 ) under ZFS")
        );
        assert!(
            h[1].text
                .starts_with("rpool/data: sync=disabled makes fsync a no-op")
        );
        assert!(h[2].text.starts_with("rpool/data: compression=lz4"));
    }
}
