//! The ceph document's hints: one rule per code (docs/hints.md), each
//! reading the OSDs, pools and networks together, OSDs first.

use super::{
    CephReport, FLASH_SMALL_IOPS, LATENCY_FACTOR, NEARFULL_PCT, OsdResult, PoolResult, SLOW_SHARE,
};
use crate::model::hint::Hint;

/// The median of the finite values.
pub(super) fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    crate::model::stats::median(&xs)
}

/// The OSDs of `o`'s device class (itself included).
pub(super) fn class_of<'a>(
    o: &OsdResult,
    all: &'a [OsdResult],
) -> impl Iterator<Item = &'a OsdResult> {
    let class = o.device_class.clone();
    all.iter().filter(move |x| x.device_class == class)
}

/// `o`'s 4 MiB bench and its class's median, when it is more than a third
/// below it (a class of at least three OSDs: with two, which is slow?;
/// memstore OSDs, which have no disk, neither judged nor counted).
pub fn slow_in_class(o: &OsdResult, all: &[OsdResult]) -> Option<(f64, f64)> {
    // A memstore OSD's bench copies memory: it says nothing of a disk.
    let on_disk = |x: &OsdResult| x.objectstore.as_deref() != Some("memstore");
    let mine = o.bench_4m.as_ref().filter(|_| on_disk(o))?.mib_s;
    let peers: Vec<f64> = class_of(o, all)
        .filter(|x| on_disk(x))
        .filter_map(|x| x.bench_4m.as_ref().map(|b| b.mib_s))
        .collect();
    if peers.len() < 3 {
        return None;
    }
    let med = median(peers)?;
    (mine < med * (1.0 - SLOW_SHARE)).then_some((mine, med))
}

pub(super) fn osd_slow(o: &OsdResult, all: &[OsdResult]) -> Option<Hint> {
    let (mine, med) = slow_in_class(o, all)?;
    Some(Hint::new(
        "osd-slow",
        format!("osd.{}", o.id),
        format!(
            "its bench wrote {mine:.0} MiB/s where the {} OSDs' median is {med:.0}: every placement group it serves waits for it; check its disk's health and link (pveprobe -v on {}), or mark it out (ceph osd out {})",
            o.device_class.as_deref().unwrap_or("same-class"),
            o.host.as_deref().unwrap_or("its node"),
            o.id
        ),
    ))
}

pub(super) fn commit_latency_high(o: &OsdResult, all: &[OsdResult]) -> Option<Hint> {
    let mine = o.commit_ms?;
    let med = median(class_of(o, all).filter_map(|x| x.commit_ms).collect())?;
    (class_of(o, all).count() >= 3 && mine > med * LATENCY_FACTOR && mine > med + 5.0).then(|| {
        Hint::new(
            "osd-commit-latency",
            format!("osd.{}", o.id),
            format!(
                "commit latency {mine:.0} ms against its class's median of {med:.0} ms (ceph osd perf): its disk or controller is slow to make writes durable"
            ),
        )
    })
}

pub(super) fn hdd_without_flash_db(o: &OsdResult) -> Option<Hint> {
    if o.data_rotational != Some(true) {
        return None;
    }
    let why = match (o.dedicated_db, o.db_rotational) {
        (Some(false), _) => "its RocksDB and WAL share the spinning disk",
        (Some(true), Some(true)) => "its dedicated DB device spins too",
        _ => return None,
    };
    Some(Hint::new(
        "hdd-osd-without-flash-db",
        format!("osd.{}", o.id),
        format!(
            "an HDD OSD whose DB is not on flash ({why}): every small write and metadata update waits for a seek; Proxmox recommends the DB/WAL on an SSD or NVMe (pveceph osd create --db_dev)"
        ),
    ))
}

pub(super) fn small_writes_slow_on_flash(o: &OsdResult) -> Option<Hint> {
    if let Some(p) = o.published.as_ref().filter(|p| p.iops < FLASH_SMALL_IOPS) {
        return Some(Hint::new(
            "osd-small-writes-slow",
            format!("osd.{}", o.id),
            format!(
                "its disk {} is a {}, published at {:.0} synced 4 KiB writes a second ({}): no power-loss protection; a datacenter SSD with it does tens of thousands, and Ceph waits for every one",
                p.disk, p.model, p.iops, p.source
            ),
        ));
    }
    let small = o.bench_4k.as_ref()?;
    let flash =
        o.data_rotational == Some(false) || o.device_class.as_deref().is_some_and(|c| c != "hdd");
    (flash && small.iops < FLASH_SMALL_IOPS).then(|| {
        Hint::new(
            "osd-small-writes-slow",
            format!("osd.{}", o.id),
            format!(
                "{:.0} synced 4 KiB writes a second on flash: a datacenter SSD with power-loss protection does tens of thousands; a consumer SSD without it does a few hundred, and Ceph waits for every one (check the model: pveprobe qualify on a spare disk of it)",
                small.iops
            ),
        )
    })
}

/// What is wrong with a disk's SMART health, in words; empty when nothing.
pub(super) fn unhealthy(h: &crate::model::storage::Health) -> Vec<String> {
    let mut out = Vec::new();
    if h.passed == Some(false) {
        out.push("SMART says FAILED".to_string());
    }
    for (n, what) in [
        (h.pending_sectors, "sectors pending reallocation"),
        (h.offline_uncorrectable, "offline uncorrectable sectors"),
        (h.reallocated_sectors, "reallocated sectors"),
    ] {
        if let Some(n) = n.filter(|n| *n > 0) {
            out.push(format!("{n} {what}"));
        }
    }
    if let Some(w) = h.wear_used_pct.filter(|w| *w >= 90) {
        out.push(format!("{w}% of its rated endurance used"));
    }
    out
}

/// A link below an OSD that runs slower than both its ends can.
pub(super) fn disk_link_slow(o: &OsdResult) -> Option<Hint> {
    let (disk, l) = o.links.iter().find(|(_, l)| l.degraded())?;
    Some(Hint::new(
        "osd-link-below-capability",
        format!("osd.{}", o.id),
        format!(
            "{disk}'s {} link {} runs at {}, {} can do {}: the OSD's disk cannot move more than about {:.0} MB/s (a cable, a backplane, a port or a BIOS setting)",
            l.kind,
            l.at,
            l.current,
            l.capable_by.as_deref().unwrap_or("both ends"),
            l.capable.as_deref().unwrap_or_default(),
            l.ceiling_mb_s
        ),
    ))
}

pub(super) fn disk_unhealthy(o: &OsdResult) -> Option<Hint> {
    let bad: Vec<String> = o
        .health
        .iter()
        .filter_map(|h| {
            let what = unhealthy(h);
            (!what.is_empty()).then(|| {
                format!(
                    "{} ({}): {}",
                    h.source,
                    h.model.as_deref().unwrap_or("?"),
                    what.join(", ")
                )
            })
        })
        .collect();
    (!bad.is_empty()).then(|| {
        Hint::new(
            "osd-disk-unhealthy",
            format!("osd.{}", o.id),
            format!(
                "its disk is failing: {}; a failing disk retries reads and slows every placement group on the OSD: replace it (ceph osd out {} first)",
                bad.join("; "),
                o.id
            ),
        )
    })
}

pub(super) fn near_full(o: &OsdResult) -> Option<Hint> {
    let used = o.utilization?;
    (used >= NEARFULL_PCT).then(|| {
        Hint::new(
            "osd-near-full",
            format!("osd.{}", o.id),
            format!(
                "{used:.0}% used, at Ceph's nearfull ratio ({NEARFULL_PCT:.0}%): writes stop at the full ratio; add OSDs or rebalance"
            ),
        )
    })
}

pub(super) fn redundancy_low(p: &PoolResult) -> Option<Hint> {
    if p.kind != "replicated" {
        return None;
    }
    let (size, min) = (p.size?, p.min_size?);
    let what = if size < 3 {
        match size {
            1 => "size 1: one copy of the data, which a single failed OSD loses".to_string(),
            _ => format!("size {size}: after one failed OSD or node a single copy is left"),
        }
    } else if min < 2 {
        format!("min_size {min}: writes go on with a single copy, which a second failure loses")
    } else {
        return None;
    };
    Some(Hint::new(
        "pool-redundancy-low",
        format!("pool {}", p.name),
        format!("{what}; Proxmox and Ceph recommend size 3, min_size 2"),
    ))
}

pub(super) fn pg_count(p: &PoolResult) -> Option<Hint> {
    let wanted = p.pg_num_wanted?;
    Some(Hint::new(
        "pool-pg-count",
        format!("pool {}", p.name),
        format!(
            "{} placement groups where the autoscaler wants {wanted} (mode {}): too few PGs spread the pool over too few OSDs",
            p.pg_num
                .map(|n| n.to_string())
                .unwrap_or_else(|| "?".into()),
            p.autoscale_mode.as_deref().unwrap_or("?")
        ),
    ))
}

/// `public network 10.0.0.0/24`, and `on pve2` for another node's link.
pub(super) fn link_subject(l: &crate::commands::ceph::network::CephLink) -> String {
    match &l.node {
        Some(n) => format!("{} network {} on {n}", l.kind, l.network),
        None => format!("{} network {}", l.kind, l.network),
    }
}

pub(super) fn network_slow(l: &crate::commands::ceph::network::CephLink) -> Option<Hint> {
    let speed = l.speed_mbps?;
    (speed < crate::commands::ceph::network::MIN_MBPS).then(|| {
        Hint::new(
            "ceph-network-slow",
            link_subject(l),
            format!(
                "Ceph's {} network is on {} at {} Mb/s: every client write crosses it {} (Proxmox asks for 10 Gb/s or more for Ceph)",
                l.kind,
                l.interface.as_deref().unwrap_or("?"),
                speed,
                if l.kind == "cluster" { "once per replica" } else { "and then the replication too, without a cluster network" }
            ),
        )
    })
}

pub(super) fn network_shares_corosync(
    l: &crate::commands::ceph::network::CephLink,
) -> Option<Hint> {
    let what = l.shares_corosync.as_deref()?;
    Some(Hint::new(
        "ceph-network-shares-corosync",
        link_subject(l),
        format!(
            "corosync shares Ceph's {} network ({what}): Ceph's traffic delays corosync's packets, which can cost quorum and fence HA nodes; give corosync a network of its own (a second link, pvecm)",
            l.kind
        ),
    ))
}

/// How an OSD dragged a pool job: its operations' mean latency against
/// its class's median in that job, and what else its counters said.
#[derive(Debug, Clone, PartialEq)]
pub struct Drag {
    pub pool: String,
    pub job: String,
    pub mine_ms: Option<f64>,
    pub median_ms: Option<f64>,
    pub osd: crate::commands::ceph::drag::OsdInJob,
}

/// A drag seen in one job alone counts when it is this many times the
/// median ...
pub const ONE_JOB_FACTOR: f64 = 10.0;
/// ... and this many ms beyond it.
pub const ONE_JOB_MS: f64 = 100.0;

/// Operations an OSD must have served in a job for its mean to be judged:
/// a mean of a handful is noise. (Its class's median counts every OSD
/// that served one: one noisy peer does not move a median.)
pub const DRAG_MIN_OPS: u64 = 10;

/// `o`'s worst pool job, when its operations took far longer than its
/// class's peers' in the same job (more than [`LATENCY_FACTOR`] times their
/// median and 5 ms beyond it, among three or more OSDs of the class that
/// served operations in it, as `osd-commit-latency` judges; its own mean
/// over [`DRAG_MIN_OPS`] or more) in two jobs or more, or in one job by
/// more than [`ONE_JOB_FACTOR`] times and [`ONE_JOB_MS`] beyond; or Ceph
/// reported slow operations on it.
pub fn drags_pool(o: &OsdResult, all: &[OsdResult], pools: &[PoolResult]) -> Option<Drag> {
    let class: Vec<i64> = class_of(o, all).map(|x| x.id).collect();
    // (its latency over the median, how far beyond it in ms, the job)
    let mut far: Vec<(f64, f64, Drag)> = Vec::new();
    let mut reported: Option<Drag> = None;
    for p in pools {
        for j in &p.jobs {
            let Some(mine) = j.osds.iter().find(|x| x.id == o.id) else {
                continue;
            };
            let peers: Vec<f64> = j
                .osds
                .iter()
                .filter(|x| class.contains(&x.id) && x.ops > 0)
                .filter_map(|x| x.op_ms)
                .collect();
            let med = (peers.len() >= 3).then(|| median(peers)).flatten();
            let drag = Drag {
                pool: if p.scratch {
                    "the run's scratch pool".into()
                } else {
                    format!("pool {}", p.name)
                },
                job: j.name(),
                mine_ms: mine.op_ms,
                median_ms: med,
                osd: mine.clone(),
            };
            match (mine.op_ms.filter(|_| mine.ops >= DRAG_MIN_OPS), med) {
                (Some(m), Some(med)) if m > med * LATENCY_FACTOR && m > med + 5.0 => {
                    far.push((m / med.max(1e-3), m - med, drag));
                }
                _ if mine.slow_ops => reported = reported.or(Some(drag)),
                _ => {}
            }
        }
    }
    // One far job must be very far: on a busy node one OSD's queue can
    // hold a job for a moment; a drag that repeats, or is that large, is
    // the OSD's.
    let repeated = far.len() >= 2;
    let worst = far
        .into_iter()
        .filter(|(ratio, beyond, _)| repeated || (*ratio > ONE_JOB_FACTOR && *beyond > ONE_JOB_MS))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(.., d)| d);
    worst.or(reported)
}

pub(super) fn osd_drags_pool(o: &OsdResult, r: &CephReport) -> Option<Hint> {
    let d = drags_pool(o, &r.osds, &r.pools)?;
    let class = o.device_class.as_deref().unwrap_or("same-class");
    let mut said = match (d.mine_ms, d.median_ms) {
        (Some(m), Some(med)) if m > med * LATENCY_FACTOR => format!(
            "in {}'s {} its operations took {m:.1} ms on average where the {class} OSDs' median was {med:.1} ms (its perf counters over the job)",
            d.pool, d.job
        ),
        _ => format!("in {}'s {}", d.pool, d.job),
    };
    let mut also = Vec::new();
    if let Some(s) = d.osd.subop_w_ms {
        also.push(format!("its writes for other OSDs {s:.1} ms"));
    }
    if let Some(c) = d.osd.commit_ms {
        also.push(format!("BlueStore commits {c:.1} ms"));
    }
    if let Some(k) = d.osd.kv_sync_ms {
        also.push(format!("RocksDB syncs {k:.1} ms"));
    }
    if d.osd.slow_ops {
        also.push("Ceph reported slow operations on it (SLOW_OPS)".into());
    }
    if !also.is_empty() {
        said += &format!("; {}", also.join(", "));
    }
    if let (Some(m), Some(c)) = (d.mine_ms, d.osd.commit_ms)
        && c * LATENCY_FACTOR < m
    {
        said += ": its store answered quickly, the time went elsewhere (the OSD's queue and CPU, or the network a write's data comes over)";
    }
    if let Some(l) = o.node_load {
        let busy = l.load1 > l.cpus as f64 || l.cpu_pressure_pct.is_some_and(|p| p >= 20.0);
        said += &format!(
            "; its node {}: load {:.1} on {} CPUs{}{}",
            o.host.as_deref().unwrap_or("?"),
            l.load1,
            l.cpus,
            l.cpu_pressure_pct
                .map(|p| format!(", tasks waited for a CPU {p:.0}% of the last minute"))
                .unwrap_or_default(),
            if busy {
                " (busy: its guests take the CPU the OSD needs)"
            } else {
                ""
            }
        );
    }
    let own = if o.slow {
        "its own bench is slow too (osd-slow): start with its disk"
    } else {
        "its own bench is not slow: look beyond its disk, at its node's CPU and load, its network link, its DB device"
    };
    Some(Hint::new(
        "osd-drags-pool",
        format!("osd.{}", o.id),
        format!(
            "{said}: every placement group it holds waits for it; {own} ({}){}",
            o.host.as_deref().unwrap_or("its node"),
            if o.links.iter().any(|(_, l)| l.degraded()) {
                "; a link below it runs below its speed (see above)"
            } else {
                ""
            }
        ),
    ))
}

/// Every hint, OSDs first.
pub fn hints(r: &CephReport) -> Vec<Hint> {
    let mut out: Vec<Hint> = Vec::new();
    for o in &r.osds {
        out.extend(osd_slow(o, &r.osds));
        out.extend(osd_drags_pool(o, r));
        out.extend(commit_latency_high(o, &r.osds));
        out.extend(hdd_without_flash_db(o));
        out.extend(small_writes_slow_on_flash(o));
        out.extend(near_full(o));
        out.extend(disk_unhealthy(o));
        out.extend(disk_link_slow(o));
    }
    // A scratch pool is gone after the run: its settings are no advice.
    for p in r.pools.iter().filter(|p| !p.scratch) {
        out.extend(redundancy_low(p));
        out.extend(pg_count(p));
    }
    for l in &r.networks {
        out.extend(network_slow(l));
        out.extend(network_shares_corosync(l));
    }
    out
}
