//! What `top` names in an interval: the guest that makes most of a busy
//! disk's operations, a guest drive that waits far longer than its disk
//! answers, a disk at its ceiling, the node's I/O pressure and who is
//! behind it.

use super::sample::{DiskIo, GuestIo, TopSample};
use crate::model::hint::Hint;

/// A disk is busy from this share of the interval with a request in flight, %...
pub const BUSY_UTIL_PCT: f64 = 80.0;
/// ... or this mean wait per request, ms.
pub const BUSY_AWAIT_MS: f64 = 20.0;
/// A guest drives a disk when it makes this share of its operations.
pub const DRIVES_SHARE: f64 = 0.5;
/// The node waits on I/O from this PSI `some` share, %.
pub const PRESSURE_PCT: f64 = 20.0;
/// A disk is at its ceiling from this utilisation, %.
pub const CEILING_PCT: f64 = 95.0;
/// A guest waits above its disk from this many times the disk's wait...
pub const ABOVE_FACTOR: f64 = 3.0;
/// ... and this many ms beyond it, over at least [`MIN_IOPS`] operations a second.
pub const ABOVE_MS: f64 = 5.0;
pub const MIN_IOPS: f64 = 10.0;
/// Guests wait when a drive's operations take this long on average, ms.
pub const GUEST_WAITS_MS: f64 = 20.0;
/// A storage is near full from this share in use, %.
pub const NEAR_FULL_PCT: f64 = 90.0;

fn disk_await(d: &DiskIo) -> Option<f64> {
    let ops = d.iops();
    (ops > 0.0).then(|| {
        (d.read_await_ms.unwrap_or(0.0) * d.read_iops
            + d.write_await_ms.unwrap_or(0.0) * d.write_iops)
            / ops
    })
}

fn busy(d: &DiskIo) -> bool {
    d.util_pct >= BUSY_UTIL_PCT || disk_await(d).is_some_and(|w| w >= BUSY_AWAIT_MS)
}

/// The hints of one interval.
pub fn hints(s: &TopSample) -> Vec<Hint> {
    let mut out = Vec::new();
    let pressed = s.pressure.io_some_pct.is_some_and(|p| p >= PRESSURE_PCT);
    for g in &s.guests {
        let Some(d) = g
            .disk
            .as_ref()
            .and_then(|n| s.disks.iter().find(|d| &d.name == n))
        else {
            continue;
        };
        if let Some(h) = drives_disk(g, d, pressed, s) {
            out.push(h);
        }
        if let Some(h) = waits_above_disk(g, d) {
            out.push(h);
        }
    }
    for d in s
        .disks
        .iter()
        .filter(|d| d.util_pct >= CEILING_PCT && d.queue >= 1.0)
    {
        out.push(Hint::new(
            "top-disk-saturated",
            d.name.clone(),
            format!(
                "a request in flight {:.0}% of the interval, {:.1} on average: {} is at its ceiling, and what queues above it waits{}",
                d.util_pct,
                d.queue,
                d.name,
                if d.guests.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", d.guests.join(", "))
                }
            ),
        ));
    }
    out.extend(job_while_waiting(s, pressed));
    out.extend(near_full(s));
    out.extend(super::guest_hints::hints(s));
    if pressed {
        let top = s
            .guests
            .iter()
            .filter(|g| g.iops() > 0.0)
            .max_by(|a, b| a.iops().total_cmp(&b.iops()));
        out.push(Hint::new(
            "top-io-pressure",
            "node".to_string(),
            format!(
                "tasks waited for I/O {:.0}% of the interval{}{}{}",
                s.pressure.io_some_pct.unwrap_or(0.0),
                s.pressure
                    .io_full_pct
                    .map(|f| format!(" (all of them at once {f:.0}%)"))
                    .unwrap_or_default(),
                s.pressure
                    .iowait_pct
                    .map(|w| format!("; PVE's IO delay (iowait) {w:.1}%"))
                    .unwrap_or_default(),
                top.map(|g| format!(
                    "; the busiest guest: {} ({:.0} operations a second{})",
                    g.label(),
                    g.iops(),
                    g.disk
                        .as_deref()
                        .map(|d| format!(" on {d}"))
                        .unwrap_or_default()
                ))
                .unwrap_or_default()
            ),
        ));
    }
    out
}

/// A backup, scrub, recovery... runs while the node or its guests wait.
fn job_while_waiting(s: &TopSample, pressed: bool) -> Option<Hint> {
    if s.jobs.is_empty() {
        return None;
    }
    let slowest = s
        .guests
        .iter()
        .filter(|g| g.iops() >= MIN_IOPS)
        .filter_map(|g| {
            let worst = g.read_ms.unwrap_or(0.0).max(g.write_ms.unwrap_or(0.0));
            (worst >= GUEST_WAITS_MS).then_some((g, worst))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if !pressed && slowest.is_none() {
        return None;
    }
    let mut why = Vec::new();
    if pressed {
        why.push(format!(
            "the node's tasks waited for I/O {:.0}% of the interval",
            s.pressure.io_some_pct.unwrap_or(0.0)
        ));
    }
    if let Some((g, ms)) = slowest {
        why.push(format!("{}'s operations took {ms:.0} ms", g.label()));
    }
    let jobs: Vec<String> = s
        .jobs
        .iter()
        .map(|j| {
            format!(
                "{} of {}{}",
                j.kind,
                j.what,
                j.detail
                    .as_deref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            )
        })
        .collect();
    Some(Hint::new(
        "top-job-while-guests-wait",
        s.jobs[0].kind.clone(),
        format!(
            "{} runs while {}: its reads and writes share the disks with the guests'; a bandwidth limit (vzdump's bwlimit, a migration's or Ceph's recovery and scrub limits, zfs_scrub_delay) or another hour frees them",
            jobs.join("; "),
            why.join(" and ")
        ),
    ))
}

/// A thin pool or dataset near full.
fn near_full(s: &TopSample) -> Vec<Hint> {
    s.storages
        .iter()
        .filter_map(|st| {
            let (what, pct) = [("", st.used_pct), ("metadata of the ", st.metadata_pct)]
                .into_iter()
                .filter_map(|(w, p)| Some((w, p?)))
                .filter(|(_, p)| *p >= NEAR_FULL_PCT)
                .max_by(|a, b| a.1.total_cmp(&b.1))?;
            let then = if st.kind == "lvmthin" {
                "when it is full, every guest writing to it gets I/O errors or is paused; extend it (lvextend) or free space (fstrim in the guests, discard=on on their drives)"
            } else if st.kind == "zfspool" {
                "ZFS slows down as its pool fills and stops writing when it is full; free space or add to the pool"
            } else {
                "when it is full, guests writing to it fail"
            };
            Some(Hint::new(
                "top-storage-near-full",
                st.id.clone(),
                format!(
                    "storage {}: the {what}{} is {pct:.1}% full; {then}",
                    st.id, st.what
                ),
            ))
        })
        .collect()
}

/// `g` makes most of busy disk `d`'s operations.
fn drives_disk(g: &GuestIo, d: &DiskIo, pressed: bool, s: &TopSample) -> Option<Hint> {
    if !(busy(d) || pressed) || d.iops() <= 0.0 {
        return None;
    }
    // QEMU counts the guest's requests, the disk its merged ones.
    let share = (g.iops() / d.iops()).min(1.0);
    if share < DRIVES_SHARE {
        return None;
    }
    let mut why = vec![format!(
        "{} is busy {:.0}% of the interval",
        d.name, d.util_pct
    )];
    if let Some(w) = disk_await(d) {
        why.push(format!("a request waits {w:.1} ms there"));
    }
    if pressed {
        why.push(format!(
            "the node's tasks waited for I/O {:.0}% of it",
            s.pressure.io_some_pct.unwrap_or(0.0)
        ));
    }
    Some(Hint::new(
        "top-guest-drives-disk",
        g.label(),
        format!(
            "{}makes {:.0}% of {}'s operations ({:.0} of {:.0} a second) while {}: the other guests on {} wait behind it; a limit on its drive (qm set {} --{} ...,iops_wr=N) or another storage frees them",
            g.name
                .as_deref()
                .map(|n| format!("{n} "))
                .unwrap_or_default(),
            share * 100.0,
            d.name,
            g.iops(),
            d.iops(),
            why.join(", "),
            d.name,
            g.id,
            g.drive.as_deref().unwrap_or("scsi0")
        ),
    ))
}

/// `g`'s operations took far longer as the guest saw them than `d`'s.
fn waits_above_disk(g: &GuestIo, d: &DiskIo) -> Option<Hint> {
    let worst = [
        ("reads", g.read_ms, g.read_iops, d.read_await_ms),
        ("writes", g.write_ms, g.write_iops, d.write_await_ms),
    ]
    .into_iter()
    .filter_map(|(what, mine, iops, disk)| {
        let (mine, disk) = (mine?, disk?);
        (iops >= MIN_IOPS && mine > disk * ABOVE_FACTOR && mine > disk + ABOVE_MS)
            .then_some((what, mine, disk))
    })
    .max_by(|a, b| (a.1 - a.2).total_cmp(&(b.1 - b.2)))?;
    let (what, mine, disk) = worst;
    Some(Hint::new(
        "top-guest-waits-above-disk",
        g.label(),
        format!(
            "its {what} took {mine:.1} ms as the guest waited, {}'s own {disk:.1} ms: the time went above the disk, in QEMU or the storage layer (a limit on the drive, its I/O thread, aio, the image format, a network storage's round trips)",
            d.name
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodeio::sample::NodePressure;

    fn sample(disk_util: f64, guest_iops: f64, guest_ms: f64) -> TopSample {
        TopSample {
            pressure: NodePressure {
                io_some_pct: Some(35.0),
                iowait_pct: Some(12.0),
                ..NodePressure::default()
            },
            guests: vec![
                GuestIo {
                    kind: "vm".into(),
                    id: 101,
                    name: Some("busy".into()),
                    drive: Some("scsi0".into()),
                    disk: Some("loop3".into()),
                    write_iops: guest_iops,
                    write_ms: Some(guest_ms),
                    ..GuestIo::default()
                },
                GuestIo {
                    kind: "vm".into(),
                    id: 102,
                    drive: Some("scsi0".into()),
                    disk: Some("loop3".into()),
                    write_iops: 10.0,
                    write_ms: Some(0.5),
                    ..GuestIo::default()
                },
            ],
            disks: vec![DiskIo {
                name: "loop3".into(),
                write_iops: 2000.0,
                write_await_ms: Some(0.5),
                util_pct: disk_util,
                queue: 1.5,
                guests: vec!["VM 101 scsi0".into(), "VM 102 scsi0".into()],
                ..DiskIo::default()
            }],
            ..TopSample::default()
        }
    }

    fn codes(s: &TopSample) -> Vec<(String, String)> {
        hints(s)
            .into_iter()
            .map(|h| (h.code.to_string(), h.subject.clone()))
            .collect()
    }

    #[test]
    fn the_guest_behind_a_busy_disk_is_named_and_not_the_idle_one() {
        let s = sample(98.0, 1900.0, 0.6);
        let c = codes(&s);
        assert!(
            c.contains(&("top-guest-drives-disk".into(), "VM 101 scsi0".into())),
            "{c:?}"
        );
        assert!(!c.iter().any(|(_, s)| s == "VM 102 scsi0"), "{c:?}");
        assert!(
            c.contains(&("top-disk-saturated".into(), "loop3".into())),
            "{c:?}"
        );
        let said = hints(&s)
            .into_iter()
            .find(|h| h.code == "top-io-pressure")
            .unwrap();
        assert!(
            said.message.contains("35%") && said.message.contains("VM 101 scsi0"),
            "{}",
            said.message
        );
    }

    #[test]
    fn a_quiet_disk_and_node_name_nobody() {
        let mut s = sample(30.0, 1900.0, 0.6);
        s.pressure.io_some_pct = Some(2.0);
        assert!(codes(&s).is_empty(), "{:?}", codes(&s));
    }

    #[test]
    fn a_guest_that_waits_far_above_its_disk_is_named() {
        let mut s = sample(30.0, 200.0, 12.0);
        s.pressure.io_some_pct = None;
        let c = codes(&s);
        assert_eq!(
            c,
            [(
                "top-guest-waits-above-disk".to_string(),
                "VM 101 scsi0".to_string()
            )]
        );
        // Below ten a second: too few to say.
        s.guests[0].write_iops = 5.0;
        assert!(codes(&s).is_empty());
    }

    #[test]
    fn a_backup_while_guests_wait_is_named_and_not_while_they_do_not() {
        use crate::nodeio::jobs::OtherJob;
        let backup = OtherJob {
            kind: "backup".into(),
            what: "guest 103".into(),
            detail: Some("PVE task vzdump by root@pam".into()),
            since: None,
            upid: None,
        };
        // Quiet node, quick guests: a backup alone is no cause.
        let mut s = sample(30.0, 1900.0, 0.6);
        s.pressure.io_some_pct = Some(2.0);
        s.jobs = vec![backup.clone()];
        assert!(codes(&s).is_empty(), "{:?}", codes(&s));
        // The node waits: named, with the job and why.
        s.pressure.io_some_pct = Some(41.0);
        let said = hints(&s)
            .into_iter()
            .find(|h| h.code == "top-job-while-guests-wait")
            .unwrap();
        assert_eq!(said.subject, "backup");
        assert!(
            said.message.contains("backup of guest 103") && said.message.contains("41%"),
            "{}",
            said.message
        );
        // Or a guest waits 25 ms though the node's pressure is low.
        s.pressure.io_some_pct = Some(2.0);
        s.guests[0].write_ms = Some(25.0);
        assert!(
            codes(&s).contains(&("top-job-while-guests-wait".into(), "backup".into())),
            "{:?}",
            codes(&s)
        );
    }

    #[test]
    fn a_thin_pool_near_full_is_named_by_data_or_metadata() {
        use crate::nodeio::storages::StorageUse;
        let mut s = sample(30.0, 1900.0, 0.6);
        s.pressure.io_some_pct = Some(2.0);
        let pool = |used, meta| StorageUse {
            id: "local-lvm".into(),
            kind: "lvmthin".into(),
            what: "thin pool pve/data".into(),
            used_pct: Some(used),
            metadata_pct: Some(meta),
            disks: vec!["sda".into()],
        };
        s.storages = vec![pool(89.9, 3.0)];
        assert!(codes(&s).is_empty());
        s.storages = vec![pool(97.33, 3.75)];
        let h = hints(&s);
        assert_eq!(h[0].code, "top-storage-near-full");
        assert!(h[0].message.contains("97.3% full"), "{}", h[0].message);
        s.storages = vec![pool(40.0, 92.0)];
        assert!(hints(&s)[0].message.contains("metadata of the thin pool"));
    }
}
