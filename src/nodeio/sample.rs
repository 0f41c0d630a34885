//! One interval of `top` as plain data: the difference of two readings
//! made into rates (the node's pressure, each guest drive's and each
//! disk's I/O), each guest drive tied to the host disk behind it. The
//! judgement (the hints) and the rendering are elsewhere.

use std::collections::BTreeMap;
use std::time::Instant;

use pveprobe_parse::iostat::DiskStat;
use pveprobe_parse::pressure::Pressure;
use pveprobe_parse::qmp::DriveStats;
use serde::{Deserialize, Serialize};

use super::read::{Counters, VmDrives};
use crate::model::hint::Hint;

/// How `top`'s intervals are versioned: 2 added each guest's CPU, memory
/// and network (`guest_use`) and the node's (`node_use`); an interval of
/// version 1 reads with both empty.
pub const SCHEMA_VERSION: u32 = 2;
pub const KIND: &str = "top";

/// One interval on one node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopSample {
    pub schema_version: u32,
    /// Always `top`.
    pub kind: String,
    pub pveprobe_version: String,
    pub node: String,
    /// The interval's end (RFC 3339).
    pub timestamp: String,
    /// The interval's length, s.
    pub seconds: f64,
    pub pressure: NodePressure,
    /// Each guest's drives (a container as one), busiest first.
    pub guests: Vec<GuestIo>,
    /// The node's disks with I/O in the interval or a guest on them, busiest first.
    pub disks: Vec<DiskIo>,
    /// What else runs: backups, migrations, replication, scrubs, Ceph's
    /// recovery, fstrim.
    #[serde(default)]
    pub jobs: Vec<super::jobs::OtherJob>,
    /// The node's PVE storages: their disks and how full they are.
    #[serde(default)]
    pub storages: Vec<super::storages::StorageUse>,
    /// Each running guest's CPU, memory and network, VMs then containers.
    #[serde(default)]
    pub guest_use: Vec<super::guests::GuestUse>,
    /// The node's CPU and memory against its guests.
    #[serde(default)]
    pub node_use: super::guests::NodeUse,
    /// What sampling cost this process.
    pub own: OwnCost,
    pub hints: Vec<Hint>,
    pub notes: Vec<String>,
}

/// What the node waited for over the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodePressure {
    /// Share of the CPUs' time idle with I/O outstanding (`/proc/stat`
    /// iowait): what PVE's "IO delay" graph draws, %.
    pub iowait_pct: Option<f64>,
    /// PSI: share of the interval some (all non-idle) tasks waited for
    /// I/O, %.
    pub io_some_pct: Option<f64>,
    pub io_full_pct: Option<f64>,
    pub cpu_some_pct: Option<f64>,
    pub memory_some_pct: Option<f64>,
    /// Dirty pages and pages under writeback at the interval's end, MiB.
    pub dirty_mib: Option<f64>,
    pub writeback_mib: Option<f64>,
    /// Swapped in and out over the interval, MiB/s.
    #[serde(default)]
    pub swap_in_mib_s: Option<f64>,
    #[serde(default)]
    pub swap_out_mib_s: Option<f64>,
}

/// One guest drive's I/O as the guest sees it (a VM's from QEMU's
/// counters), or one container's (its cgroup's, all its devices).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestIo {
    /// `vm` or `ct`.
    pub kind: String,
    pub id: u32,
    pub name: Option<String>,
    /// `scsi0` (a VM's drive); none for a container.
    pub drive: Option<String>,
    /// The file or device QEMU opened for it.
    pub file: Option<String>,
    /// The host block device it is on (`loop3`, `dm-5`, `zd16`), where known.
    pub disk: Option<String>,
    pub read_iops: f64,
    pub write_iops: f64,
    pub flush_iops: f64,
    pub read_mib_s: f64,
    pub write_mib_s: f64,
    /// Mean latency of its reads and writes as the guest waited, ms (QEMU's
    /// total time over the operations); none without operations or for a
    /// container.
    pub read_ms: Option<f64>,
    pub write_ms: Option<f64>,
    /// Over how long the rates are, s: longer than the interval when its
    /// socket was busy at the last reading.
    pub seconds: f64,
    /// QEMU's own latency window where the drive has one
    /// (`stats-intervals`): its length, s, and the longest read and write
    /// in it, ms (over QEMU's window, not the interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_max_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_max_ms: Option<f64>,
    /// The 99th percentile of the interval's reads and writes, ms, from
    /// QEMU's latency histogram where one was set: the upper boundary of
    /// its bin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_p99_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_p99_ms: Option<f64>,
    /// Its socket was busy this time (another client held it): the figures
    /// are from its last reading, next time they cover both intervals.
    #[serde(default)]
    pub busy: bool,
    pub error: Option<String>,
}

impl GuestIo {
    pub fn iops(&self) -> f64 {
        self.read_iops + self.write_iops
    }

    /// `VM 101 scsi0`, `CT 200`.
    pub fn label(&self) -> String {
        let kind = if self.kind == "ct" { "CT" } else { "VM" };
        match &self.drive {
            Some(d) => format!("{kind} {} {d}", self.id),
            None => format!("{kind} {}", self.id),
        }
    }
}

/// One host block device's I/O over the interval (`/proc/diskstats`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskIo {
    pub name: String,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mib_s: f64,
    pub write_mib_s: f64,
    /// Mean time a read (write) took, queue included, ms.
    pub read_await_ms: Option<f64>,
    pub write_await_ms: Option<f64>,
    /// Requests in flight on average.
    pub queue: f64,
    /// Share of the interval it had a request in flight, %.
    pub util_pct: f64,
    /// The guest drives on it (`VM 101 scsi0`).
    pub guests: Vec<String>,
    /// The PVE storages on it.
    #[serde(default)]
    pub storages: Vec<String>,
}

impl DiskIo {
    pub fn iops(&self) -> f64 {
        self.read_iops + self.write_iops
    }
}

/// This process's share of one CPU over the interval, and its memory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OwnCost {
    pub cpu_pct: f64,
    pub rss_kib: u64,
}

/// A share of the interval from two PSI totals (µs waited), %.
fn stall_pct(a: Option<u64>, b: Option<u64>, secs: f64) -> Option<f64> {
    let (a, b) = (a?, b?);
    (secs > 0.0).then(|| (b.saturating_sub(a) as f64 / (secs * 1e6) * 100.0).min(100.0))
}

fn some(p: &Option<Pressure>) -> Option<u64> {
    p.map(|p| p.some.total_us)
}

fn full(p: &Option<Pressure>) -> Option<u64> {
    p.and_then(|p| p.full.map(|f| f.total_us))
}

/// The node's pressure between readings `a` and `b`.
pub fn pressure(a: &Counters, b: &Counters, secs: f64) -> NodePressure {
    let iowait_pct = match (a.cpu, b.cpu) {
        (Some(a), Some(b)) if b.total() > a.total() => {
            Some(b.iowait.saturating_sub(a.iowait) as f64 / (b.total() - a.total()) as f64 * 100.0)
        }
        _ => None,
    };
    NodePressure {
        iowait_pct,
        io_some_pct: stall_pct(some(&a.io), some(&b.io), secs),
        io_full_pct: stall_pct(full(&a.io), full(&b.io), secs),
        cpu_some_pct: stall_pct(some(&a.cpu_pressure), some(&b.cpu_pressure), secs),
        memory_some_pct: stall_pct(some(&a.memory), some(&b.memory), secs),
        dirty_mib: b.dirty_kib.map(|k| k as f64 / 1024.0),
        writeback_mib: b.writeback_kib.map(|k| k as f64 / 1024.0),
        swap_in_mib_s: swap_rate(
            a.swapped_pages.map(|p| p.0),
            b.swapped_pages.map(|p| p.0),
            secs,
        ),
        swap_out_mib_s: swap_rate(
            a.swapped_pages.map(|p| p.1),
            b.swapped_pages.map(|p| p.1),
            secs,
        ),
    }
}

/// PSI memory `full` between readings `a` and `b`, %.
pub fn memory_full(a: &Counters, b: &Counters, secs: f64) -> Option<f64> {
    stall_pct(full(&a.memory), full(&b.memory), secs)
}

const MIB: f64 = 1048576.0;

/// Pages counted between two readings as MiB/s (the kernel counts swap in
/// pages of the page size).
fn swap_rate(a: Option<u64>, b: Option<u64>, secs: f64) -> Option<f64> {
    let page = crate::sys::cpus::page_size() as f64;
    Some(b?.saturating_sub(a?) as f64 * page / MIB / secs.max(1e-3))
}

/// Each disk's I/O between `a` and `b` (a disk new in `b` is passed over).
pub fn disks(a: &[DiskStat], b: &[DiskStat], secs: f64) -> Vec<DiskIo> {
    b.iter()
        .filter_map(|d| {
            let p = a.iter().find(|p| p.name == d.name)?;
            let n = |x: u64, y: u64| x.saturating_sub(y) as f64;
            let (reads, writes) = (n(d.reads, p.reads), n(d.writes, p.writes));
            let per = |ms: f64, ops: f64| (ops > 0.0).then(|| ms / ops);
            Some(DiskIo {
                name: d.name.clone(),
                read_iops: reads / secs,
                write_iops: writes / secs,
                read_mib_s: n(d.sectors_read, p.sectors_read) * 512.0 / MIB / secs,
                write_mib_s: n(d.sectors_written, p.sectors_written) * 512.0 / MIB / secs,
                read_await_ms: per(n(d.read_ms, p.read_ms), reads),
                write_await_ms: per(n(d.write_ms, p.write_ms), writes),
                queue: n(d.weighted_ms, p.weighted_ms) / (secs * 1000.0),
                util_pct: (n(d.busy_ms, p.busy_ms) / (secs * 10.0)).min(100.0),
                guests: Vec::new(),
                storages: Vec::new(),
            })
        })
        .collect()
}

/// A VM drive's I/O between two readings of its counters `secs` apart.
pub fn drive(a: &DriveStats, b: &DriveStats, secs: f64) -> GuestIo {
    let n = |x: u64, y: u64| x.saturating_sub(y) as f64;
    let (reads, writes) = (n(b.reads, a.reads), n(b.writes, a.writes));
    let per = |ns: f64, ops: f64| (ops > 0.0).then(|| ns / ops / 1e6);
    GuestIo {
        kind: "vm".into(),
        drive: Some(
            b.drive
                .strip_prefix("drive-")
                .unwrap_or(&b.drive)
                .to_string(),
        ),
        read_iops: reads / secs,
        write_iops: writes / secs,
        flush_iops: n(b.flushes, a.flushes) / secs,
        read_mib_s: n(b.read_bytes, a.read_bytes) / MIB / secs,
        write_mib_s: n(b.write_bytes, a.write_bytes) / MIB / secs,
        read_ms: per(n(b.read_ns, a.read_ns), reads),
        write_ms: per(n(b.write_ns, a.write_ns), writes),
        window_s: b.timed.as_ref().map(|t| t.interval_s),
        read_max_ms: b.timed.as_ref().map(|t| t.max_read_ns as f64 / 1e6),
        write_max_ms: b.timed.as_ref().map(|t| t.max_write_ns as f64 / 1e6),
        read_p99_ms: p99(&a.read_histogram, &b.read_histogram),
        write_p99_ms: p99(&a.write_histogram, &b.write_histogram),
        seconds: secs,
        ..GuestIo::default()
    }
}

/// The interval's 99th percentile from two readings of a histogram, ms.
fn p99(
    a: &Option<pveprobe_parse::qmp::Histogram>,
    b: &Option<pveprobe_parse::qmp::Histogram>,
) -> Option<f64> {
    let (a, b) = (a.as_ref()?, b.as_ref()?);
    b.percentile_since(a, 0.99).map(|ns| ns as f64 / 1e6)
}

/// Each VM's last counters read and when: a VM whose socket was busy is
/// measured over the span since.
#[derive(Debug, Default)]
pub struct LastRead {
    vms: BTreeMap<u32, (Instant, Vec<DriveStats>)>,
}

impl LastRead {
    /// The counters of the reading an interval starts from, for each VM
    /// read then and not known yet: the run's first reading (else the
    /// first interval has no VM), or a VM that came up since. A VM known
    /// already keeps its last counters.
    pub fn start_from(&mut self, then: &Counters) {
        for (&vmid, got) in &then.vms {
            if let VmDrives::Read(stats) = got {
                self.vms
                    .entry(vmid)
                    .or_insert_with(|| (then.at, stats.clone()));
            }
        }
    }

    /// The VMs' drives of reading `now`, against their last counters; the
    /// counters kept for next time.
    pub fn vms(&mut self, now: &Counters) -> Vec<GuestIo> {
        let mut out = Vec::new();
        for (&vmid, got) in &now.vms {
            match got {
                VmDrives::Read(stats) => {
                    if let Some((then, before)) = self.vms.get(&vmid) {
                        let secs = now.at.duration_since(*then).as_secs_f64().max(1e-3);
                        for s in stats {
                            if let Some(b) = before.iter().find(|b| b.drive == s.drive) {
                                out.push(GuestIo {
                                    id: vmid,
                                    ..drive(b, s, secs)
                                });
                            }
                        }
                    }
                    self.vms.insert(vmid, (now.at, stats.clone()));
                }
                VmDrives::Busy => out.push(GuestIo {
                    kind: "vm".into(),
                    id: vmid,
                    busy: true,
                    ..GuestIo::default()
                }),
                VmDrives::Failed(why) => out.push(GuestIo {
                    kind: "vm".into(),
                    id: vmid,
                    error: Some(why.clone()),
                    ..GuestIo::default()
                }),
            }
        }
        // A VM gone: its counters go too.
        self.vms.retain(|id, _| now.vms.contains_key(id));
        out
    }
}

/// Each container's I/O between `a` and `b`, all its devices together;
/// its disk the device it moved most bytes on (by `major:minor` in `names`).
pub fn containers(a: &Counters, b: &Counters, secs: f64, names: &[DiskStat]) -> Vec<GuestIo> {
    b.cts
        .iter()
        .filter_map(|(&ctid, now)| {
            let before = a.cts.get(&ctid)?;
            let mut io = GuestIo {
                kind: "ct".into(),
                id: ctid,
                seconds: secs,
                ..GuestIo::default()
            };
            let mut most = (0u64, None);
            for d in now {
                let p = before
                    .iter()
                    .find(|p| (p.major, p.minor) == (d.major, d.minor))
                    .copied()
                    .unwrap_or_default();
                let moved = d.read_bytes.saturating_sub(p.read_bytes)
                    + d.write_bytes.saturating_sub(p.write_bytes);
                io.read_iops += d.reads.saturating_sub(p.reads) as f64 / secs;
                io.write_iops += d.writes.saturating_sub(p.writes) as f64 / secs;
                io.read_mib_s += d.read_bytes.saturating_sub(p.read_bytes) as f64 / MIB / secs;
                io.write_mib_s += d.write_bytes.saturating_sub(p.write_bytes) as f64 / MIB / secs;
                if moved > most.0 {
                    most = (moved, Some((d.major, d.minor)));
                }
            }
            io.disk = most.1.and_then(|(ma, mi)| {
                names
                    .iter()
                    .find(|n| (n.major, n.minor) == (ma, mi))
                    .map(|n| n.name.clone())
            });
            Some(io)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(
        name: &str,
        reads: u64,
        writes: u64,
        sectors_w: u64,
        write_ms: u64,
        busy_ms: u64,
    ) -> DiskStat {
        DiskStat {
            major: 7,
            minor: 3,
            name: name.into(),
            reads,
            writes,
            sectors_written: sectors_w,
            write_ms,
            busy_ms,
            weighted_ms: write_ms,
            ..DiskStat::default()
        }
    }

    #[test]
    fn a_disks_rates_come_from_the_difference_of_its_counters() {
        let a = [disk("loop3", 10, 1000, 8000, 500, 100)];
        let b = [disk("loop3", 10, 3000, 24000, 2500, 1900)];
        let d = &disks(&a, &b, 2.0)[0];
        assert_eq!((d.read_iops, d.write_iops), (0.0, 1000.0));
        // 16000 sectors of 512 bytes over 2 s.
        assert!((d.write_mib_s - 16000.0 * 512.0 / MIB / 2.0).abs() < 1e-9);
        assert_eq!(d.write_await_ms, Some(1.0));
        assert_eq!(d.read_await_ms, None);
        assert_eq!(d.util_pct, 90.0);
        assert_eq!(d.queue, 1.0);
    }

    #[test]
    fn a_drives_latency_is_qemus_time_over_its_operations() {
        let a = DriveStats {
            drive: "drive-scsi0".into(),
            writes: 100,
            write_bytes: 409600,
            write_ns: 1_000_000,
            ..DriveStats::default()
        };
        let b = DriveStats {
            writes: 1100,
            write_bytes: 4505600,
            write_ns: 5_001_000_000,
            ..a.clone()
        };
        let g = drive(&a, &b, 1.0);
        assert_eq!(g.drive.as_deref(), Some("scsi0"));
        assert_eq!(g.write_iops, 1000.0);
        assert_eq!(g.write_ms, Some(5.0));
        assert_eq!(g.read_ms, None);
        assert_eq!((g.window_s, g.write_p99_ms), (None, None));
        // Where QEMU keeps a latency window and a histogram, they are read.
        let hist = |bins: Vec<u64>| pveprobe_parse::qmp::Histogram {
            boundaries_ns: vec![1_000_000, 10_000_000],
            bins,
        };
        let a = DriveStats {
            write_histogram: Some(hist(vec![100, 0, 0])),
            ..a
        };
        let b = DriveStats {
            timed: Some(pveprobe_parse::qmp::TimedStats {
                interval_s: 10,
                max_write_ns: 42_000_000,
                ..Default::default()
            }),
            write_histogram: Some(hist(vec![100, 990, 10])),
            ..b
        };
        let g = drive(&a, &b, 1.0);
        assert_eq!((g.window_s, g.write_max_ms), (Some(10), Some(42.0)));
        assert_eq!(g.write_p99_ms, Some(10.0));
        assert_eq!(g.read_p99_ms, None);
    }

    /// An empty reading at `at`, with `vms`.
    fn reading_of(at: Instant, vms: BTreeMap<u32, VmDrives>) -> Counters {
        Counters {
            at,
            disks: vec![],
            cpu: None,
            io: None,
            cpu_pressure: None,
            memory: None,
            dirty_kib: None,
            writeback_kib: None,
            swapped_pages: None,
            vms,
            cts: BTreeMap::new(),
            jobs: Vec::new(),
            guests: BTreeMap::new(),
            node: Default::default(),
            kernel_log: Vec::new(),
            own_cpu_us: 0,
            own_rss_kib: 0,
        }
    }

    #[test]
    fn the_first_interval_has_every_vm_read_in_both_its_readings() {
        let writes = |n: u64| DriveStats {
            drive: "drive-scsi0".into(),
            writes: n,
            write_bytes: n * 4096,
            ..DriveStats::default()
        };
        let vms = |n: u64| {
            BTreeMap::from([
                (100, VmDrives::Read(vec![writes(n)])),
                (101, VmDrives::Read(vec![writes(7)])),
                (102, VmDrives::Busy),
            ])
        };
        let t0 = Instant::now();
        let (first, second) = (
            reading_of(t0, vms(0)),
            reading_of(t0 + std::time::Duration::from_secs(2), vms(200)),
        );
        let mut last = LastRead::default();
        last.start_from(&first);
        let got = last.vms(&second);
        let ids: Vec<(u32, bool)> = got.iter().map(|g| (g.id, g.busy)).collect();
        assert_eq!(ids, [(100, false), (101, false), (102, true)]);
        assert_eq!(got[0].write_iops, 100.0);
        assert_eq!(got[1].write_iops, 0.0);
        // A VM known keeps its last counters: the next interval is from
        // `second`, even handed an older reading.
        let third = reading_of(t0 + std::time::Duration::from_secs(4), vms(600));
        last.start_from(&first);
        assert_eq!(last.vms(&third)[0].write_iops, 200.0);
    }

    #[test]
    fn pressure_is_the_share_of_the_interval_waited() {
        let reading = |iowait, total_io: u64| Counters {
            at: Instant::now(),
            disks: vec![],
            cpu: Some(pveprobe_parse::iostat::CpuTimes {
                idle: 1000 - iowait,
                iowait,
                ..Default::default()
            }),
            io: Some(Pressure {
                some: pveprobe_parse::pressure::Stall {
                    total_us: total_io,
                    ..Default::default()
                },
                full: None,
            }),
            cpu_pressure: None,
            memory: None,
            dirty_kib: Some(2048),
            writeback_kib: None,
            swapped_pages: Some((0, total_io)),
            vms: BTreeMap::new(),
            cts: BTreeMap::new(),
            jobs: Vec::new(),
            guests: BTreeMap::new(),
            node: Default::default(),
            kernel_log: Vec::new(),
            own_cpu_us: 0,
            own_rss_kib: 0,
        };
        let mut b = reading(0, 0);
        b.cpu = Some(pveprobe_parse::iostat::CpuTimes {
            idle: 1500,
            iowait: 500,
            ..Default::default()
        });
        b.io.as_mut().unwrap().some.total_us = 400_000;
        // 1,024 pages of the page size swapped out in 2 s.
        b.swapped_pages = Some((0, 1024));
        let p = pressure(&reading(0, 0), &b, 2.0);
        let page = crate::sys::cpus::page_size() as f64;
        assert_eq!(p.swap_out_mib_s, Some(1024.0 * page / MIB / 2.0));
        assert_eq!(p.swap_in_mib_s, Some(0.0));
        // 500 of the 1000 ticks between were iowait; 0.4 s of 2 s waited.
        assert_eq!(p.iowait_pct, Some(50.0));
        assert_eq!(p.io_some_pct, Some(20.0));
        assert_eq!(p.io_full_pct, None);
        assert_eq!(p.dirty_mib, Some(2.0));
    }
}
