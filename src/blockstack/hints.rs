//! Plain-language hints: what in the storage stack explains a figure.

use crate::model::hint::Hint;
use crate::model::storage::Storage;
use crate::model::storage::{Disk, Health, ZfsInfo};

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

/// LVM's `VG/LV` from a device-mapper name (`pve-data-tpool` ->
/// `pve/data`): LVM doubles the dashes inside names and joins VG and LV
/// with one; a pool's hidden device ends in `-tpool`.
fn lvm_name(dm: &str) -> String {
    let dm = dm.strip_suffix("-tpool").unwrap_or(dm);
    let bytes = dm.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'-' {
            if bytes.get(i + 1) == Some(&b'-') {
                i += 2;
                continue;
            }
            return format!("{}/{}", &dm[..i], &dm[i + 1..]).replace("--", "-");
        }
        i += 1;
    }
    dm.to_string()
}

/// PVE's default zvol block size since 8.1 (`blocksize` in storage.cfg).
const ZVOL_BLOCK_DEFAULT: u32 = 16 * 1024;

/// Wear at or above this share of rated endurance is worth a hint.
const WORN_PCT: u64 = 90;

/// NVMe critical warning bits (NVMe Base Specification, SMART / Health
/// Information log, byte 0).
const CRITICAL_BITS: [&str; 6] = [
    "available spare below its threshold",
    "temperature beyond a threshold",
    "reliability degraded by media or internal errors",
    "media placed in read-only mode",
    "volatile memory backup failed",
    "persistent memory region read-only",
];

/// The disks a layer stands on, following `below` down to the leaves.
/// `seen` keeps a tree that names a layer below itself (a hostile or
/// broken sysfs) from looping.
fn leaves_below<'a>(
    storage: &'a Storage,
    name: &str,
    seen: &mut Vec<String>,
    out: &mut Vec<&'a crate::model::storage::Disk>,
) {
    if seen.iter().any(|s| s == name) {
        return;
    }
    seen.push(name.to_string());
    if let Some(d) = storage.disks.iter().find(|d| d.name == name) {
        out.push(d);
        return;
    }
    if let Some(l) = storage.layers.iter().find(|l| l.name == name) {
        for b in &l.below {
            leaves_below(storage, b, seen, out);
        }
    }
}

/// Layouts that cost on every write: ZFS's ashift below the disks'
/// physical sectors, a partition off the sector (or an SSD's 4 KiB)
/// boundary, a layer that drops discards above an SSD that takes them.
fn layout_hints(storage: &Storage, hints: &mut Vec<Hint>) {
    ashift_hint(storage, hints);
    volblocksize_hint(storage, hints);
    thin_pool_hints(storage, hints);
    misaligned_hint(storage, hints);
    discard_dropped_hint(storage, hints);
}

/// ZFS's ashift below the disks' physical sectors.
fn ashift_hint(storage: &Storage, hints: &mut Vec<Hint>) {
    if let Some(zfs) = &storage.zfs
        && let Some(ashift) = zfs.ashift.filter(|&a| a > 0)
    {
        let block = 1u64 << ashift;
        let bigger: Vec<&crate::model::storage::Disk> = storage
            .disks
            .iter()
            .filter(|d| d.physical_block_size.is_some_and(|p| u64::from(p) > block))
            .collect();
        if let Some(sector) = bigger.iter().filter_map(|d| d.physical_block_size).max() {
            let names: Vec<&str> = bigger.iter().map(|d| d.name.as_str()).collect();
            let want = 63 - u64::from(sector).leading_zeros();
            hints.push(Hint::new(
                "ashift-below-sector",
                &zfs.pool,
                format!(
                    "ashift {ashift} ({block}-byte blocks) on disks with {sector}-byte physical sectors ({}): \
                     every write smaller than {sector} bytes is a read-modify-write inside the disk; ashift is \
                     fixed when a vdev is made: recreate the pool (or replace its vdevs) with -o ashift={want}",
                    names.join(", ")
                ),
            ));
        }
    }
}

/// A zvol's volblocksize above PVE's default.
fn volblocksize_hint(storage: &Storage, hints: &mut Vec<Hint>) {
    // A zvol's physical block size is its volblocksize (OpenZFS sets the
    // queue's physical block size and optimal I/O size to it).
    for d in storage.disks.iter().filter(|d| {
        d.name
            .strip_prefix("zd")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }) {
        let Some(block) = d.physical_block_size.filter(|&b| b > ZVOL_BLOCK_DEFAULT) else {
            continue;
        };
        hints.push(Hint::new(
            "volblocksize-large",
            &d.name,
            format!(
                "a zvol with volblocksize {}K: each 4 KiB write of a guest rewrites a whole {}K block (read, \
                 modify, write: {}x the data), which RANDOM WRITE 4K and SYNC WRITE 4K show; PVE's default is \
                 16k (the storage's blocksize option applies to new disks)",
                block / 1024,
                block / 1024,
                block / 4096
            ),
        ));
    }
}

/// A thin pool that zeroes new chunks, or keeps discards from its disks.
fn thin_pool_hints(storage: &Storage, hints: &mut Vec<Hint>) {
    for l in storage.layers.iter() {
        let Some(pool) = l.thin_pool.as_ref().filter(|p| p.zeroing) else {
            continue;
        };
        let chunk_k = pool.chunk_bytes / 1024;
        let name = lvm_name(l.detail.as_deref().unwrap_or(&l.name));
        hints.push(Hint::new(
            "thin-zeroing",
            &name,
            format!(
                "thin pool with {chunk_k} KiB chunks, zeroed before their first write: a guest's first 4 KiB \
                 write into a chunk writes all {chunk_k} KiB ({}x), so new thin volumes are slow until written \
                 once (pveprobe's scratch volume is written in full before it is measured); `lvchange --zero n \
                 {name}` turns it off for new chunks",
                pool.chunk_bytes / 4096
            ),
        ));
        if pool.discards != "passed down" {
            hints.push(Hint::new(
                "discard-not-passed",
                &name,
                format!(
                    "thin pool with discards {}: blocks the guests free are {}; `lvchange --discards passdown {name}`",
                    pool.discards,
                    if pool.discards == "ignored" {
                        "never returned to the pool nor trimmed on the disks"
                    } else {
                        "returned to the pool but never trimmed on the disks"
                    }
                ),
            ));
        }
    }
}

/// A partition off the sector (or an SSD's 4 KiB) boundary.
fn misaligned_hint(storage: &Storage, hints: &mut Vec<Hint>) {
    for l in storage.layers.iter().filter(|l| l.kind == "partition") {
        let (Some(start), Some(disk)) = (
            l.start_bytes,
            l.below
                .first()
                .and_then(|b| storage.disks.iter().find(|d| &d.name == b)),
        ) else {
            continue;
        };
        let physical = u64::from(disk.physical_block_size.unwrap_or(512));
        // SSDs write flash pages of 4 KiB or more whatever sector size
        // they report.
        let boundary = if disk.rotational == Some(false) {
            physical.max(4096)
        } else {
            physical
        };
        if start % boundary != 0 {
            hints.push(Hint::new(
                "misaligned",
                &l.name,
                format!(
                    "starts at byte {start}, not on a {boundary}-byte boundary of {}: each {boundary}-byte write \
                     straddles two of the disk's blocks (read-modify-write); recreate it starting on a 1 MiB \
                     boundary (sector 2048), as fdisk and the PVE installer do",
                    disk.name
                ),
            ));
        }
    }
}

/// A layer that drops discards above an SSD that takes them.
fn discard_dropped_hint(storage: &Storage, hints: &mut Vec<Hint>) {
    for l in storage
        .layers
        .iter()
        .filter(|l| l.discard_max_bytes == Some(0))
    {
        let (mut seen, mut leaves) = (vec![l.name.clone()], Vec::new());
        for b in &l.below {
            leaves_below(storage, b, &mut seen, &mut leaves);
        }
        let ssds: Vec<&str> = leaves
            .iter()
            .filter(|d| d.rotational == Some(false) && d.discard_max_bytes.is_some_and(|m| m > 0))
            .map(|d| d.name.as_str())
            .collect();
        if ssds.is_empty() {
            continue;
        }
        let fix = match l.kind.as_str() {
            "luks" => {
                "open it with discards allowed (crypttab option discard, cryptsetup --allow-discards)"
            }
            "lvm" => "check the LV's segment type (a thin pool with discards=ignore drops them)",
            "md" => "check the md level (some RAID levels pass no discard)",
            _ => "let the layer pass discards down",
        };
        let what = l
            .detail
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        hints.push(Hint::new(
            "discard-not-passed",
            &l.name,
            format!(
                "{}{what} passes no discard down to the SSD{} {}: blocks freed above are never trimmed, and the \
                 SSD's writes slow as it fills; {fix}",
                l.kind,
                if ssds.len() > 1 { "s" } else { "" },
                ssds.join(", ")
            ),
        ));
    }
}

/// What the disk's health (smartctl) says explains a figure or a risk.
fn health_hints(about: &str, h: &Health, hints: &mut Vec<Hint>) {
    let mut add = |code: &str, text: String| hints.push(Hint::new(code, about, text));
    if h.passed == Some(false) {
        add(
            "smart-failed",
            "SMART's overall assessment is FAILED: the disk expects to fail; replace it".into(),
        );
    }
    if let Some(n) = h.pending_sectors.filter(|&n| n > 0) {
        add(
            "pending-sectors",
            format!(
                "{n} sectors pending reallocation: reads of them are retried for seconds each, so reads are slow, \
                 and the disk is failing; back up and replace it"
            ),
        );
    }
    if let Some(n) = h.offline_uncorrectable.filter(|&n| n > 0) {
        add(
            "uncorrectable-sectors",
            format!(
                "{n} sectors the disk could not read in its offline scan: data on them is lost; replace it"
            ),
        );
    }
    if let Some(n) = h.reallocated_sectors.filter(|&n| n > 0) {
        add(
            "reallocated-sectors",
            format!(
                "{n} sectors reallocated to spares: reads there seek to the spare area; a count that grows means \
                 the disk is failing"
            ),
        );
    }
    if let Some(n) = h.crc_errors.filter(|&n| n > 0) {
        add(
            "crc-errors",
            format!(
                "{n} interface CRC errors: data was corrupted between the disk and the controller and sent again; \
                 reseat or replace the cable or backplane slot (the count never resets: watch whether it grows)"
            ),
        );
    }
    if let Some(w) = h.wear_used_pct.filter(|&w| w >= WORN_PCT) {
        add(
            "worn",
            format!(
                "{w}% of its rated endurance used ({}): plan its replacement; worn flash writes slower and fails",
                h.wear_source.as_deref().unwrap_or("SMART")
            ),
        );
    }
    if let (Some(spare), Some(threshold)) = (h.available_spare_pct, h.available_spare_threshold_pct)
        && spare < threshold
    {
        add(
            "spare-low",
            format!(
                "available spare {spare}% is below its threshold {threshold}%: replace the drive"
            ),
        );
    }
    if let Some(bits) = h.critical_warning.filter(|&b| b != 0) {
        let named: Vec<&str> = CRITICAL_BITS
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect();
        add(
            "critical-warning",
            format!(
                "NVMe critical warning {bits:#04x} ({}): the drive reports a fault",
                named.join(", ")
            ),
        );
    }
    if let Some(n) = h.media_errors.filter(|&n| n > 0) {
        add(
            "media-errors",
            format!("{n} media errors (unrecovered data): the drive lost data; replace it"),
        );
    }
    if let Some(n) = h.grown_defects.filter(|&n| n > 0) {
        add(
            "grown-defects",
            format!(
                "{n} grown defects (sectors remapped since it left the factory): a growing list means it is failing"
            ),
        );
    }
    if let Some(n) = h.uncorrected_errors.filter(|&n| n > 0) {
        add(
            "uncorrected-errors",
            format!("{n} uncorrected read or write errors in its error counter log: replace it"),
        );
    }
}

pub fn hints(storage: &Storage) -> Vec<Hint> {
    let mut hints = Vec::new();
    for d in &storage.disks {
        disk_health_hints(d, &mut hints);
        link_hints(d, &mut hints);
        cache_and_medium_hints(d, &mut hints);
        controller_hint(d, &mut hints);
        consumer_ssd_hint(storage, d, &mut hints);
    }
    layout_hints(storage, &mut hints);
    if let Some(zfs) = &storage.zfs {
        dataset_hints(zfs, &mut hints);
    }
    hints
}

/// A disk's health, and that of the physical disks behind a RAID volume.
fn disk_health_hints(d: &Disk, hints: &mut Vec<Hint>) {
    let name = d.name.as_str();
    if let Some(h) = &d.health {
        health_hints(name, h, hints);
    }
    for h in &d.behind {
        let slot = h
            .source
            .split(" -d ")
            .nth(1)
            .and_then(|r| r.split(' ').next());
        let about = format!("{name} ({})", slot.unwrap_or("a physical disk"));
        health_hints(&about, h, hints);
    }
}

/// A link that runs below what both its ends can do.
fn link_hints(d: &Disk, hints: &mut Vec<Hint>) {
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
}

/// A write cache that is off; a rotational medium.
fn cache_and_medium_hints(d: &Disk, hints: &mut Vec<Hint>) {
    let name = d.name.as_str();
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
}

/// A controller driver known to cost.
fn controller_hint(d: &Disk, hints: &mut Vec<Hint>) {
    let name = d.name.as_str();
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
}

/// A consumer SSD under ZFS.
fn consumer_ssd_hint(storage: &Storage, d: &Disk, hints: &mut Vec<Hint>) {
    let name = d.name.as_str();
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

/// The ZFS dataset's properties that change what the figures mean.
fn dataset_hints(zfs: &ZfsInfo, hints: &mut Vec<Hint>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::storage::Disk;
    use crate::model::storage::ZfsInfo;

    fn disk(name: &str) -> Disk {
        Disk {
            name: name.into(),
            ..Disk::default()
        }
    }

    /// A layer that names itself (or a loop of layers) below it, as a
    /// broken sysfs could: the discard check ends.
    #[test]
    fn a_layer_loop_ends() {
        use crate::model::storage::Layer;
        let layer = |name: &str, below: &str| Layer {
            name: name.into(),
            kind: "lvm".into(),
            detail: None,
            below: vec![below.into()],
            start_bytes: None,
            thin_pool: None,
            discard_max_bytes: Some(0),
        };
        let s = Storage {
            layers: vec![
                layer("dm-0", "dm-1"),
                layer("dm-1", "dm-0"),
                layer("dm-2", "dm-2"),
            ],
            ..Storage::default()
        };
        assert!(hints(&s).is_empty());
    }

    #[test]
    fn lvm_names_from_device_mapper_names() {
        assert_eq!(lvm_name("pve-data-tpool"), "pve/data");
        assert_eq!(lvm_name("pve-vm--100--disk--0"), "pve/vm-100-disk-0");
        assert_eq!(lvm_name("my--vg-thin--pool-tpool"), "my-vg/thin-pool");
        assert_eq!(lvm_name("plain"), "plain");
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
        assert!(h[0].sentence().starts_with("sda: write cache is off"));
        assert!(h[1].sentence().starts_with("sda: rotational disk"));
        assert!(h[2].sentence().contains("under VMware: PVSCSI"));
        assert!(h[3].sentence().starts_with("sdb: behind HP's hpvsa driver"));
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
            ashift: None,
        });
        let h = hints(&s);
        assert_eq!(h.len(), 3, "{h:#?}");
        assert!(
            h[0].sentence()
                .contains("consumer SSD (Samsung SSD 870 ) under ZFS")
        );
        assert!(
            h[1].sentence()
                .starts_with("rpool/data: sync=disabled makes fsync a no-op")
        );
        assert!(h[2].sentence().starts_with("rpool/data: compression=lz4"));
    }
}
