//! Each running guest's CPU, memory and network, and the node's, beside
//! the I/O: what esxtop's CPU, memory and network panels give, for PVE's
//! guests. The counters (read by `guest_read`) and the figures made of
//! two of them.

use std::collections::BTreeMap;

use pveprobe_parse::cgroup::{self, Throttling};
use pveprobe_parse::memory::{self, Arc};
use pveprobe_parse::netdev;
use pveprobe_parse::pressure::Pressure;
use pveprobe_parse::procpid::SchedStat;
use pveprobe_parse::qmp::GuestStats;
use serde::{Deserialize, Serialize};

/// One guest's counters at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuestCounters {
    /// Its QEMU's PID (a VM).
    pub pid: Option<u32>,
    /// CPU time used since it started, µs: its QEMU process's, a
    /// container's cgroup's.
    pub cpu_us: Option<u64>,
    /// Each vCPU's index and its thread's scheduler counters (a VM).
    pub vcpus: Vec<(u32, SchedStat)>,
    /// Its cgroup's CPU quota at work (`cpu.stat`).
    pub throttling: Option<Throttling>,
    /// Its cgroup's pressure (cgroup v2).
    pub cpu_pressure: Option<Pressure>,
    pub memory_pressure: Option<Pressure>,
    /// The host memory it holds and what of that is in host swap, KiB.
    pub host_kib: Option<u64>,
    pub swap_kib: Option<u64>,
    /// The memory its balloon leaves it, and the memory it was given, bytes.
    pub balloon: Option<u64>,
    pub memory_max: Option<u64>,
    /// What its balloon driver reported, and its rates between its last
    /// two reports read.
    pub guest: Option<GuestStats>,
    pub guest_rates: Option<GuestRates>,
    /// The OOM killer's kills in its cgroup.
    pub oom_kills: Option<u64>,
}

/// What the guest swapped in and out (MiB/s) and its major faults a
/// second, between two of its balloon driver's reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GuestRates {
    pub swap_in_mib_s: Option<f64>,
    pub swap_out_mib_s: Option<f64>,
    pub major_faults_s: Option<f64>,
}

/// The rates between reports `a` and `b`, over their own times; none when
/// `b` is no later report.
pub fn guest_rates(a: &GuestStats, b: &GuestStats) -> Option<GuestRates> {
    let between = b
        .last_update
        .checked_sub(a.last_update)
        .filter(|s| *s > 0)? as f64;
    let rate = |x: Option<u64>, y: Option<u64>, unit: f64| {
        Some(y?.saturating_sub(x?) as f64 / unit / between)
    };
    Some(GuestRates {
        swap_in_mib_s: rate(a.swap_in, b.swap_in, MIB),
        swap_out_mib_s: rate(a.swap_out, b.swap_out, MIB),
        major_faults_s: rate(a.major_faults, b.major_faults, 1.0),
    })
}

/// The node's own counters at one moment, besides its pressure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeCounters {
    pub cores: Option<usize>,
    pub memory: Option<memory::Memory>,
    pub arc: Option<Arc>,
    /// KSM's pages shared beyond the first copy: what it saves.
    pub ksm_sharing: Option<u64>,
    pub oom_kills: Option<u64>,
    pub net: Vec<netdev::Counters>,
}

/// A guest's CPU over an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestCpu {
    /// The CPU it used, % of one core (200 is two cores' worth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_pct: Option<f64>,
    /// Its vCPUs (a VM's threads; none for a container).
    pub vcpus: u32,
    /// Ready: the worst vCPU's share of the interval runnable but not
    /// running, beyond what its own quota held it, % (esxtop's %RDY per
    /// vCPU; a container's from its cgroup's CPU pressure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_pct: Option<f64>,
    /// Each vCPU's ready share, %, by index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vcpu_ready_pct: Vec<f64>,
    /// Limited: the share of the interval its own CPU quota (PVE's
    /// `cpulimit`) held it, % (`cpu.stat`'s throttled time, which the
    /// kernel sums over the CPUs it was held on, over the CPUs it can be
    /// on at once: its vCPUs, at most the node's cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_pct: Option<f64>,
    /// Its cgroup's CPU pressure, `some`, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_pct: Option<f64>,
}

/// A guest's memory at the interval's end, and its rates over it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestMemory {
    /// Host memory its QEMU (or its cgroup) holds, and of it in host swap, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_mib: Option<f64>,
    /// The memory it was given, and what its balloon leaves it, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balloon_mib: Option<f64>,
    /// As the guest's balloon driver reports: its available memory, MiB,
    /// what it swapped in and out, MiB/s, its major faults a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_available_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_swap_in_mib_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_swap_out_mib_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_major_faults_s: Option<f64>,
    /// Its cgroup's memory pressure, `some` and `full`, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_some_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_full_pct: Option<f64>,
}

/// One guest interface over the interval, from the guest's side: what the
/// host's tap or veth sent is what the guest received.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestNet {
    /// `net0`, as the guest's config names it.
    pub net: String,
    /// `tap104i0`, `veth105i0`.
    pub interface: String,
    pub rx_mib_s: f64,
    pub tx_mib_s: f64,
    pub rx_packets_s: f64,
    pub tx_packets_s: f64,
    /// Packets dropped a second on their way in and out.
    pub rx_drops_s: f64,
    pub tx_drops_s: f64,
}

impl GuestNet {
    pub fn drops_s(&self) -> f64 {
        self.rx_drops_s + self.tx_drops_s
    }
}

/// One guest's CPU, memory and network over the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestUse {
    /// `vm` or `ct`.
    pub kind: String,
    pub id: u32,
    pub name: Option<String>,
    pub cpu: GuestCpu,
    pub memory: GuestMemory,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub net: Vec<GuestNet>,
    /// The OOM killer's kills in its cgroup over the interval.
    #[serde(default)]
    pub oom_kills: u64,
}

impl GuestUse {
    /// `VM 101`, `CT 200`.
    pub fn label(&self) -> String {
        let kind = if self.kind == "ct" { "CT" } else { "VM" };
        format!("{kind} {}", self.id)
    }
}

/// The ZFS ARC, MiB.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ArcUse {
    pub size_mib: f64,
    pub target_mib: f64,
    pub min_mib: f64,
    pub max_mib: f64,
}

/// The node's CPU and memory against its guests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeUse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// The running guests' vCPUs (a container's `cores` where set), and
    /// their ratio to the cores.
    pub vcpus: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overcommit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_mib: Option<f64>,
    /// The memory the running guests were given, MiB.
    pub guest_memory_mib: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_used_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arc: Option<ArcUse>,
    /// What KSM's sharing saves, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ksm_saved_mib: Option<f64>,
    /// PSI memory `full`: all non-idle tasks waited for memory, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_full_pct: Option<f64>,
    /// The OOM killer's kills on the node over the interval (`/proc/vmstat`).
    pub oom_kills: u64,
    /// Each kill the kernel's log told of, its victim named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kills: Vec<super::oom::OomKill>,
}

const MIB: f64 = 1048576.0;

fn delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// A share of the interval from two PSI readings, %.
fn stall(a: &Option<Pressure>, b: &Option<Pressure>, full: bool, secs: f64) -> Option<f64> {
    let total = |p: &Option<Pressure>| {
        p.and_then(|p| {
            if full {
                p.full.map(|f| f.total_us)
            } else {
                Some(p.some.total_us)
            }
        })
    };
    delta(total(a), total(b)).map(|us| (us as f64 / (secs * 1e4)).min(100.0))
}

/// A guest's CPU between two readings `secs` apart; `spread` the CPUs it
/// can be on at once (its vCPUs, at most the node's cores), over which the
/// kernel sums the time its quota held it.
pub fn cpu(a: &GuestCounters, b: &GuestCounters, secs: f64, spread: u32) -> GuestCpu {
    let limited_pct = match (a.throttling, b.throttling) {
        (Some(x), Some(y)) => {
            let held = y.throttled_us.saturating_sub(x.throttled_us) as f64;
            Some((held / (secs * 1e4 * f64::from(spread.max(1)))).min(100.0))
        }
        _ => None,
    };
    let held = limited_pct.unwrap_or(0.0);
    let vcpu_ready_pct: Vec<f64> = b
        .vcpus
        .iter()
        .filter_map(|(index, now)| {
            let (_, then) = a.vcpus.iter().find(|(i, _)| i == index)?;
            let waited = now.wait_ns.saturating_sub(then.wait_ns) as f64 / (secs * 1e7);
            Some((waited.min(100.0) - held).max(0.0))
        })
        .collect();
    let pressure_pct = stall(&a.cpu_pressure, &b.cpu_pressure, false, secs);
    let ready_pct = if b.vcpus.is_empty() {
        pressure_pct.map(|p| (p - held).max(0.0))
    } else {
        vcpu_ready_pct.iter().copied().reduce(f64::max)
    };
    GuestCpu {
        used_pct: delta(a.cpu_us, b.cpu_us).map(|us| us as f64 / (secs * 1e4)),
        vcpus: b.vcpus.len() as u32,
        ready_pct,
        vcpu_ready_pct,
        limited_pct,
        pressure_pct,
    }
}

/// A guest's memory at `b`, and its rates since `a`.
pub fn memory(a: &GuestCounters, b: &GuestCounters, secs: f64) -> GuestMemory {
    let mib = |b: Option<u64>| b.map(|b| b as f64 / MIB);
    let gb = b.guest.unwrap_or_default();
    let rates = b.guest_rates.unwrap_or_default();
    GuestMemory {
        host_mib: b.host_kib.map(|k| k as f64 / 1024.0),
        swap_mib: b.swap_kib.map(|k| k as f64 / 1024.0),
        max_mib: mib(b.memory_max),
        balloon_mib: mib(b.balloon),
        guest_available_mib: mib(gb.available),
        guest_swap_in_mib_s: rates.swap_in_mib_s,
        guest_swap_out_mib_s: rates.swap_out_mib_s,
        guest_major_faults_s: rates.major_faults_s,
        pressure_some_pct: stall(&a.memory_pressure, &b.memory_pressure, false, secs),
        pressure_full_pct: stall(&a.memory_pressure, &b.memory_pressure, true, secs),
    }
}

/// The guest interfaces between two readings of `/proc/net/dev`, by
/// guest: each as the guest sees it (the host's transmit is its receive).
pub fn interfaces(
    a: &[netdev::Counters],
    b: &[netdev::Counters],
    secs: f64,
) -> BTreeMap<(String, u32), Vec<GuestNet>> {
    let mut out: BTreeMap<(String, u32), Vec<GuestNet>> = BTreeMap::new();
    for now in b {
        let Some((guest, n)) = netdev::guest_interface(&now.name) else {
            continue;
        };
        let Some(then) = a.iter().find(|i| i.name == now.name) else {
            continue;
        };
        let per_s = |x: u64, y: u64| x.saturating_sub(y) as f64 / secs;
        let key = match guest {
            cgroup::Guest::Vm(id) => ("vm".to_string(), id),
            cgroup::Guest::Container(id) => ("ct".to_string(), id),
        };
        out.entry(key).or_default().push(GuestNet {
            net: format!("net{n}"),
            interface: now.name.clone(),
            rx_mib_s: per_s(now.tx_bytes, then.tx_bytes) / MIB,
            tx_mib_s: per_s(now.rx_bytes, then.rx_bytes) / MIB,
            rx_packets_s: per_s(now.tx_packets, then.tx_packets),
            tx_packets_s: per_s(now.rx_packets, then.rx_packets),
            rx_drops_s: per_s(now.tx_drop, then.tx_drop),
            tx_drops_s: per_s(now.rx_drop, then.rx_drop),
        });
    }
    out
}

/// The node between two readings; `guests` what each running guest was
/// given (its vCPUs, its memory, MiB).
pub fn node_use(
    a: &NodeCounters,
    b: &NodeCounters,
    guests: &[(u32, f64)],
    memory_full_pct: Option<f64>,
) -> NodeUse {
    let mib = |v: u64| v as f64 / MIB;
    let page = crate::sys::cpus::page_size();
    let vcpus: u32 = guests.iter().map(|g| g.0).sum();
    let cores = b.cores.map(|c| c as u32);
    NodeUse {
        cores,
        vcpus,
        overcommit: cores.filter(|c| *c > 0).map(|c| vcpus as f64 / c as f64),
        memory_mib: b.memory.map(|m| mib(m.total)),
        available_mib: b.memory.and_then(|m| m.available).map(mib),
        guest_memory_mib: guests.iter().fold(0.0, |sum, g| sum + g.1),
        swap_used_mib: b
            .memory
            .map(|m| mib(m.swap_total.saturating_sub(m.swap_free))),
        arc: b.arc.map(|arc| ArcUse {
            size_mib: mib(arc.size),
            target_mib: mib(arc.target),
            min_mib: mib(arc.min),
            max_mib: mib(arc.max),
        }),
        ksm_saved_mib: b.ksm_sharing.map(|p| mib(p.saturating_mul(page))),
        memory_full_pct,
        oom_kills: delta(a.oom_kills, b.oom_kills).unwrap_or(0),
        kills: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(wait_ms: u64) -> SchedStat {
        SchedStat {
            run_ns: 0,
            wait_ns: wait_ms * 1_000_000,
            slices: 0,
        }
    }

    #[test]
    fn ready_is_the_run_queue_wait_beyond_what_the_quota_held() {
        let a = GuestCounters {
            cpu_us: Some(0),
            vcpus: vec![(0, sched(0)), (1, sched(0))],
            ..GuestCounters::default()
        };
        // Over 2 s: vCPU 0 waited 0.4 s, vCPU 1 0.1 s; 1.5 s of CPU used.
        let b = GuestCounters {
            cpu_us: Some(1_500_000),
            vcpus: vec![(0, sched(400)), (1, sched(100))],
            ..a.clone()
        };
        let c = cpu(&a, &b, 2.0, 2);
        assert_eq!(c.used_pct, Some(75.0));
        assert_eq!(c.vcpu_ready_pct, [20.0, 5.0]);
        assert_eq!((c.ready_pct, c.limited_pct, c.vcpus), (Some(20.0), None, 2));
        // Held by its own quota 15% of the interval on each of its two
        // CPUs (the kernel sums them): that is limited, and ready only the
        // wait beyond it.
        let throttled = |us| {
            Some(Throttling {
                periods: 0,
                throttled: 0,
                throttled_us: us,
            })
        };
        let (a, b) = (
            GuestCounters {
                throttling: throttled(0),
                ..a
            },
            GuestCounters {
                throttling: throttled(600_000),
                ..b
            },
        );
        let c = cpu(&a, &b, 2.0, 2);
        assert_eq!(c.limited_pct, Some(15.0));
        assert_eq!(c.vcpu_ready_pct, [5.0, 0.0]);
        // A vCPU new since `a` has no figure; none at all is no ready.
        let one = GuestCounters {
            vcpus: vec![(0, sched(0))],
            ..a.clone()
        };
        assert_eq!(cpu(&one, &b, 2.0, 2).vcpu_ready_pct, [5.0]);
        let other = GuestCounters {
            vcpus: vec![(2, sched(0))],
            ..a
        };
        assert_eq!(cpu(&other, &b, 2.0, 2).ready_pct, None);
    }

    #[test]
    fn the_guests_rates_are_over_its_own_reports_times() {
        let report = |at, swap_in, faults| GuestStats {
            last_update: at,
            swap_in: Some(swap_in),
            major_faults: Some(faults),
            ..GuestStats::default()
        };
        // Two reports 30 s apart: 30 MiB swapped in, 600 major faults.
        let r = guest_rates(&report(100, 0, 0), &report(130, 30 << 20, 600)).unwrap();
        assert_eq!((r.swap_in_mib_s, r.major_faults_s), (Some(1.0), Some(20.0)));
        assert_eq!(r.swap_out_mib_s, None, "not reported");
        // The same report read again is no rate.
        assert_eq!(guest_rates(&report(130, 1, 1), &report(130, 2, 2)), None);
    }

    #[test]
    fn a_taps_counters_are_the_guests_the_other_way_round() {
        let tap = |tx_bytes, tx_drop| netdev::Counters {
            name: "tap104i1".into(),
            tx_bytes,
            tx_drop,
            rx_bytes: 1 << 20,
            ..netdev::Counters::default()
        };
        let got = interfaces(
            &[tap(0, 0)],
            &[
                tap(4 << 20, 6),
                netdev::Counters {
                    name: "eth0".into(),
                    ..netdev::Counters::default()
                },
            ],
            2.0,
        );
        let n = &got[&("vm".to_string(), 104)][0];
        assert_eq!((n.net.as_str(), n.interface.as_str()), ("net1", "tap104i1"));
        assert_eq!((n.rx_mib_s, n.tx_mib_s, n.rx_drops_s), (2.0, 0.0, 3.0));
        assert_eq!(got.len(), 1);
    }
}
