//! `datastore`'s hints (docs/hints.md): each reads the figures, the
//! storage under PATH and the datastore found there.

use super::report::{DatastoreReport, fmt_rate, fmt_time, per, restore_fetches, sweep_seconds};
use crate::model::hint::Hint;
use pveprobe_parse::pbs::SyncLevel;

/// Filesystems over the network.
const NETWORK_FS: [&str; 7] = ["nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "9p", "ceph"];

type Found = Option<Hint>;

fn hint(code: &str, r: &DatastoreReport, message: String) -> Hint {
    Hint::new(code, r.result.path.clone(), message)
}

/// Every hint the run gives.
pub fn hints(r: &DatastoreReport) -> Vec<Hint> {
    [
        atime_off,
        metadata_on_hdd,
        on_network_fs,
        restore_serial,
        sync_file_costly,
    ]
    .iter()
    .filter_map(|f| f(r))
    .collect()
}

fn atime_off(r: &DatastoreReport) -> Found {
    let a = r.result.measured.atime.as_ref().filter(|a| !a.updates)?;
    Some(hint(
        "datastore-atime-off",
        r,
        format!(
            "a chunk's atime did not rise when touched: PBS's GC refuses to run here \
             (its atime safety check fails), and without it would remove chunks still in use; \
             the mount says {}: mount with relatime (or strictatime), on a filesystem that keeps atimes",
            a.mount_option.as_deref().unwrap_or("no atime option")
        ),
    ))
}

fn metadata_on_hdd(r: &DatastoreReport) -> Found {
    let storage = r.result.storage.as_ref()?;
    let spinning = storage.disks.iter().any(|d| d.rotational == Some(true));
    let special = storage
        .zfs
        .as_ref()
        .and_then(|z| z.layout.as_deref())
        .is_some_and(|l| l.contains("special"));
    let m = &r.result.measured;
    (spinning && !special).then(|| {
        hint(
            "datastore-metadata-on-hdd",
            r,
            format!(
                "the datastore's disks spin, with no SSD for metadata: GC's sweep is seek-bound \
                 ({} prefix directories a second, {} chunks a second here). PBS's docs recommend SSDs \
                 for datastores, or on ZFS a special device (mirrored SSDs) for the metadata",
                fmt_rate(m.sweep_dirs_per_s),
                fmt_rate(m.sweep_per_s)
            ),
        )
    })
}

fn on_network_fs(r: &DatastoreReport) -> Found {
    let fstype = r.result.filesystem.as_ref()?.fstype.as_str();
    if !NETWORK_FS.contains(&fstype) {
        return None;
    }
    let gc = match &r.projection {
        Some(p) => format!(
            "GC here would take {} (phase 1) and {} (phase 2)",
            fmt_time(p.gc_phase1_s),
            fmt_time(p.gc_phase2_s)
        ),
        None => format!(
            "a million chunks (about 1.6 TiB) would take {} to mark and {} to sweep",
            fmt_time(per(1e6, r.result.measured.mark_per_s)),
            fmt_time(sweep_seconds(&r.result.measured, 1e6))
        ),
    };
    Some(hint(
        "datastore-on-network-fs",
        r,
        format!(
            "the datastore is on {fstype}: every atime touch and stat of GC is a round trip; {gc}. \
             PBS recommends local storage for datastores"
        ),
    ))
}

fn restore_serial(r: &DatastoreReport) -> Found {
    let (one, sixteen) = (r.restore_at(1)?, r.restore_at(16)?);
    let package = r.result.pbs_qemu.as_deref()?;
    let old = restore_fetches(package)? == 1;
    (one < 0.5 * sixteen && old).then(|| {
        hint(
            "datastore-restore-serial",
            r,
            format!(
                "restores read {one:.0} MiB/s one chunk at a time and {sixteen:.0} MiB/s at 16; \
                 {package} on this node restores one at a time: 2.0.1 or later reads 16 at once \
                 (PBS_RESTORE_FETCH_CONCURRENCY)"
            ),
        )
    })
}

fn sync_file_costly(r: &DatastoreReport) -> Found {
    let file = r.ingest_at(SyncLevel::File)?;
    let fs = r.ingest_at(SyncLevel::Filesystem)?;
    let uses = r
        .result
        .existing
        .as_ref()
        .is_some_and(|e| e.tuning.sync_level == SyncLevel::File);
    (file < 0.5 * fs).then(|| {
        hint(
            "datastore-sync-file-costly",
            r,
            format!(
                "sync-level file ingests {file:.0} MiB/s against {fs:.0} at filesystem (PBS's default), \
                 a fsync per chunk and its directory{}",
                if uses { "; this datastore is set to file" } else { "" }
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::report::sample;
    use super::*;

    fn codes(r: &DatastoreReport) -> Vec<String> {
        hints(r).into_iter().map(|h| h.code).collect()
    }

    #[test]
    fn a_sound_fast_local_datastore_gets_no_hint_but_the_costly_file_level() {
        // The sample's file level is a quarter of filesystem's.
        assert_eq!(codes(&sample()), ["datastore-sync-file-costly"]);
        let mut r = sample();
        r.result.measured.ingest[2].mib_s = 300.0;
        assert!(codes(&r).is_empty());
    }

    #[test]
    fn atime_off_only_where_the_check_fails_and_it_names_the_option() {
        let mut r = sample();
        let a = r.result.measured.atime.as_mut().unwrap();
        a.updates = false;
        a.mount_option = Some("noatime".into());
        let h = hints(&r);
        let h = h.iter().find(|h| h.code == "datastore-atime-off").unwrap();
        assert!(h.message.contains("noatime"), "{}", h.message);
        assert_eq!(h.subject, "/mnt/datastore/store1");
    }

    #[test]
    fn spinning_disks_without_a_special_device_and_network_filesystems() {
        use crate::model::storage::{Disk, Storage, ZfsInfo};
        let mut r = sample();
        let disk = Disk {
            name: "sda".into(),
            rotational: Some(true),
            ..Disk::default()
        };
        r.result.storage = Some(Storage {
            disks: vec![disk.clone()],
            ..Storage::default()
        });
        assert!(codes(&r).contains(&"datastore-metadata-on-hdd".to_string()));
        r.result.storage = Some(Storage {
            disks: vec![disk],
            zfs: Some(ZfsInfo {
                dataset: "rpool/pbs".into(),
                pool: "rpool".into(),
                state: Some("ONLINE".into()),
                layout: Some("raidz1 (sda, sdb, sdc); special: mirror (nvme0n1, nvme1n1)".into()),
                vdevs: Vec::new(),
                properties: Default::default(),
                ashift: None,
            }),
            ..Storage::default()
        });
        assert!(!codes(&r).contains(&"datastore-metadata-on-hdd".to_string()));
        r.result.filesystem = Some(crate::model::filesystem::FsInfo {
            total_bytes: 1 << 40,
            avail_bytes: 1 << 39,
            source: "nas:/export/pbs".into(),
            fstype: "nfs4".into(),
            mount_point: "/mnt/nfs".into(),
            read_only: false,
            dev: (0, 55),
            options: "rw,relatime,vers=4.2".into(),
        });
        let h = hints(&r);
        let h = h
            .iter()
            .find(|h| h.code == "datastore-on-network-fs")
            .unwrap();
        // No datastore there: a million chunks' GC, 500 s marking.
        assert!(h.message.contains("8 min 20 s to mark"), "{}", h.message);
    }

    #[test]
    fn restore_serial_only_with_an_old_proxmox_backup_qemu() {
        let mut r = sample();
        // 80 MiB/s at 1, 320 at 16: under half.
        r.result.pbs_qemu = Some("libproxmox-backup-qemu0 1.5.1".into());
        assert!(codes(&r).contains(&"datastore-restore-serial".to_string()));
        r.result.pbs_qemu = Some("libproxmox-backup-qemu0 2.0.1".into());
        assert!(!codes(&r).contains(&"datastore-restore-serial".to_string()));
        r.result.pbs_qemu = None;
        assert!(!codes(&r).contains(&"datastore-restore-serial".to_string()));
    }
}
