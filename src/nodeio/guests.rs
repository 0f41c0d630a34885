//! Each running guest's CPU, memory and network, and the node's, beside
//! the I/O: what esxtop's CPU, memory and network panels give, for PVE's
//! guests. A VM's counters are its QEMU process's (found by PVE's pidfile,
//! `VMID.pid` beside its socket), each vCPU thread's (`query-cpus-fast`
//! names them) and its cgroup's, found from `/proc/PID/cgroup`, not
//! assumed; a container's are its cgroup's (`lxc/CTID`). Read-only.

use std::collections::BTreeMap;

use pveprobe_parse::cgroup::{self, Membership, Throttling};
use pveprobe_parse::memory::{self, Arc};
use pveprobe_parse::netdev;
use pveprobe_parse::pressure::{self, Pressure};
use pveprobe_parse::procpid::{self, SchedStat};
use pveprobe_parse::qmp::GuestStats;
use serde::{Deserialize, Serialize};

use crate::sys::host::Host;
use crate::sys::kept::Kept;

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

/// A running VM's QEMU and the files read for it each interval, kept
/// open ([`Kept`]): its `stat` (which, held, also says the process is the
/// one found: a gone process's fails), its `status`, each vCPU thread's
/// `schedstat`, and its cgroup's files, found from its `/proc/PID/cgroup`
/// (which is read again every [`PLACES_KEPT`]: a VM's cgroup is set when
/// it starts, but a tool may move it); only the files that exist, so none
/// is asked for in vain each interval.
#[derive(Debug)]
pub struct Places {
    /// The QEMU: its PID and when it started (which process it is).
    pid: u32,
    start_ticks: u64,
    stat: Kept,
    status: Kept,
    /// Each vCPU thread's schedstat, by thread ID.
    vcpus: BTreeMap<u32, Kept>,
    /// Its `/proc/PID/cgroup` as read, and when.
    cgroup: String,
    found: std::time::Instant,
    cpu_stat: Option<Kept>,
    cpu_pressure: Option<Kept>,
    memory_pressure: Option<Kept>,
    oom: Option<Kept>,
    /// Its memory in swap (`VmSwap`), KiB, and when it was read.
    swap: Option<(std::time::Instant, Option<u64>)>,
}

/// How often a VM's `/proc/PID/cgroup` is read again.
const PLACES_KEPT: std::time::Duration = std::time::Duration::from_secs(30);
/// How often a QEMU's swap is read (`/proc/PID/status`, which the kernel
/// renders whole for two lines of it): swap moves slowly, and `record`
/// at 10 s reads it every third interval.
const SWAP_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

impl Places {
    /// Process `pid`'s files, `stat` its stat file as just read.
    fn find(host: &Host, pid: u32, start_ticks: u64, stat: Kept) -> Places {
        let cgroup = host.read(format!("/proc/{pid}/cgroup")).unwrap_or_default();
        let mut p = Places {
            pid,
            start_ticks,
            stat,
            status: Kept::new(host, format!("/proc/{pid}/status")),
            vcpus: BTreeMap::new(),
            cgroup: String::new(),
            found: std::time::Instant::now(),
            cpu_stat: None,
            cpu_pressure: None,
            memory_pressure: None,
            oom: None,
            swap: None,
        };
        p.cgroup_files(host, cgroup);
        p
    }

    /// The files of the cgroups in `text` (`/proc/PID/cgroup`): v1's
    /// hierarchy of a controller, else v2's (mounted at `/sys/fs/cgroup`,
    /// or beside v1 at `/sys/fs/cgroup/unified`); pressure is v2's alone.
    /// The root cgroup is the node's, never a guest's: none.
    fn cgroup_files(&mut self, host: &Host, text: String) {
        let lines: Vec<Membership> = cgroup::memberships(&text);
        let v2_path = lines
            .iter()
            .find(|m| m.hierarchy == 0 && m.controllers.is_empty())
            .map(|m| m.path.clone());
        let dirs = |controller: Option<&str>| -> Vec<String> {
            let v1 = controller.and_then(|c| {
                lines
                    .iter()
                    .find(|m| m.controllers.iter().any(|x| x == c))
                    .map(|m| (c, m.path.clone()))
            });
            match (v1, &v2_path) {
                (Some((c, path)), _) if path != "/" => vec![format!("/sys/fs/cgroup/{c}{path}")],
                (Some(_), _) => vec![],
                (None, Some(path)) if path != "/" => vec![
                    format!("/sys/fs/cgroup{path}"),
                    format!("/sys/fs/cgroup/unified{path}"),
                ],
                _ => vec![],
            }
        };
        let first = |controller: Option<&str>, files: &[&str]| {
            dirs(controller).iter().find_map(|d| {
                files
                    .iter()
                    .map(|f| format!("{d}/{f}"))
                    .find(|p| host.exists(p))
                    .map(|p| Kept::new(host, p))
            })
        };
        self.cpu_stat = first(Some("cpu"), &["cpu.stat"]);
        self.cpu_pressure = first(None, &["cpu.pressure"]);
        self.memory_pressure = first(None, &["memory.pressure"]);
        self.oom = first(Some("memory"), &["memory.events", "memory.oom_control"]);
        self.cgroup = text;
        self.found = std::time::Instant::now();
    }
}

/// A running VM's counters: its QEMU (by `pidfile`, kept while its held
/// `stat` reads and says it is the same process), each vCPU thread of
/// `vcpus` (index, thread ID); `places` its files, found again when its
/// QEMU changes.
pub fn vm(
    host: &Host,
    pidfile: &std::path::Path,
    vcpus: &[(u32, u32)],
    places: &mut Option<Places>,
) -> GuestCounters {
    let stat_of = |kept: &mut Kept| kept.read().ok().and_then(|t| procpid::stat(&t));
    let same = places
        .as_mut()
        .and_then(|p| stat_of(&mut p.stat).filter(|s| s.start_ticks == p.start_ticks));
    let stat = match same {
        Some(stat) => stat,
        None => {
            *places = None;
            let Some(pid) = host
                .read(pidfile)
                .ok()
                .and_then(|t| procpid::pidfile_pid(&t))
            else {
                return GuestCounters::default();
            };
            let mut kept = Kept::new(host, format!("/proc/{pid}/stat"));
            let Some(stat) = stat_of(&mut kept) else {
                return GuestCounters::default();
            };
            *places = Some(Places::find(host, pid, stat.start_ticks, kept));
            stat
        }
    };
    let cg = places.as_mut().expect("found above");
    let pid = cg.pid;
    if cg.found.elapsed() >= PLACES_KEPT {
        let text = host.read(format!("/proc/{pid}/cgroup")).unwrap_or_default();
        if text == cg.cgroup {
            cg.found = std::time::Instant::now();
        } else {
            cg.cgroup_files(host, text);
        }
    }
    if cg.swap.is_none_or(|(at, _)| at.elapsed() >= SWAP_EVERY) {
        let swap = cg
            .status
            .read()
            .ok()
            .and_then(|t| procpid::memory(&t))
            .map(|m| m.swap_kib);
        cg.swap = Some((std::time::Instant::now(), swap));
    }
    cg.vcpus
        .retain(|tid, _| vcpus.iter().any(|&(_, t)| t == *tid));
    let read = |kept: &mut Option<Kept>| kept.as_mut().and_then(|k| k.read().ok());
    GuestCounters {
        pid: Some(pid),
        cpu_us: Some(stat.cpu_ticks * 1_000_000 / crate::sys::cpus::ticks_per_second()),
        vcpus: vcpus
            .iter()
            .filter_map(|&(index, tid)| {
                let text = cg
                    .vcpus
                    .entry(tid)
                    .or_insert_with(|| Kept::new(host, format!("/proc/{pid}/task/{tid}/schedstat")))
                    .read()
                    .ok()?;
                Some((index, procpid::schedstat(&text)?))
            })
            .collect(),
        throttling: read(&mut cg.cpu_stat).and_then(|t| cgroup::throttling(&t)),
        cpu_pressure: read(&mut cg.cpu_pressure).and_then(|t| pressure::pressure(&t)),
        memory_pressure: read(&mut cg.memory_pressure).and_then(|t| pressure::pressure(&t)),
        host_kib: Some(stat.rss_pages * crate::sys::cpus::page_size() / 1024),
        swap_kib: cg.swap.and_then(|(_, s)| s),
        oom_kills: read(&mut cg.oom).and_then(|t| cgroup::oom_kills(&t)),
        ..GuestCounters::default()
    }
}

/// A container's counters from its cgroup: `lxc/CTID` under cgroup v2's
/// root (or beside v1), else v1's controllers' hierarchies.
pub fn container(host: &Host, ctid: u32) -> GuestCounters {
    let v2 = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .iter()
        .map(|root| format!("{root}/lxc/{ctid}"))
        .find(|d| host.exists(format!("{d}/cgroup.procs")));
    let v1 = |controller: &str, file: &str| {
        host.read(format!("/sys/fs/cgroup/{controller}/lxc/{ctid}/{file}"))
            .ok()
    };
    let v2_file = |file: &str| {
        v2.as_ref()
            .and_then(|d| host.read(format!("{d}/{file}")).ok())
    };
    let number = |t: Option<String>| t.and_then(|t| memory::number(&t));
    let cpu_stat = v2_file("cpu.stat");
    let v1_cpu_stat = v1("cpu", "cpu.stat");
    let host_bytes =
        number(v2_file("memory.current")).or_else(|| number(v1("memory", "memory.usage_in_bytes")));
    let swap_bytes = number(v2_file("memory.swap.current")).or_else(|| {
        let all = number(v1("memory", "memory.memsw.usage_in_bytes"))?;
        Some(all.saturating_sub(host_bytes?))
    });
    GuestCounters {
        cpu_us: cpu_stat
            .as_deref()
            .and_then(cgroup::usage_us)
            .or_else(|| number(v1("cpuacct", "cpuacct.usage")).map(|ns| ns / 1000)),
        throttling: v1_cpu_stat
            .as_deref()
            .or(cpu_stat.as_deref())
            .and_then(cgroup::throttling),
        cpu_pressure: v2_file("cpu.pressure").and_then(|t| pressure::pressure(&t)),
        memory_pressure: v2_file("memory.pressure").and_then(|t| pressure::pressure(&t)),
        host_kib: host_bytes.map(|b| b / 1024),
        swap_kib: swap_bytes.map(|b| b / 1024),
        oom_kills: v2_file("memory.events")
            .or_else(|| v1("memory", "memory.oom_control"))
            .and_then(|t| cgroup::oom_kills(&t)),
        ..GuestCounters::default()
    }
}

/// The node's memory, the ARC, KSM, its OOM kills and its interfaces;
/// `stat`, `meminfo` and `vmstat` as the reading already has them (each
/// file read once an interval; `stat`'s CPU lines count the cores).
pub fn node(
    host: &Host,
    stat: Option<&str>,
    meminfo: Option<memory::Memory>,
    vmstat: Option<&str>,
) -> NodeCounters {
    let read = |p: &str| host.read(p).ok();
    NodeCounters {
        cores: stat.and_then(pveprobe_parse::iostat::cpu_count),
        memory: meminfo,
        arc: read("/proc/spl/kstat/zfs/arcstats").and_then(|t| memory::arcstats(&t)),
        ksm_sharing: read("/sys/kernel/mm/ksm/pages_sharing").and_then(|t| memory::number(&t)),
        oom_kills: vmstat.and_then(memory::oom_kills),
        net: read("/proc/net/dev")
            .map(|t| netdev::interfaces(&t))
            .unwrap_or_default(),
    }
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
    fn a_containers_cpu_and_memory_are_its_cgroups_in_v2_and_v1() {
        let root = tempfile::tempdir().unwrap();
        let put = |rel: &str, text: &str| {
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        // cgroup v2, as PVE 7 and later lay it out (cgroup-v2.rst's keys).
        put("sys/fs/cgroup/lxc/105/cgroup.procs", "4242\n");
        put(
            "sys/fs/cgroup/lxc/105/cpu.stat",
            "usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\nnr_periods 10\nnr_throttled 4\nthrottled_usec 250000\n",
        );
        put("sys/fs/cgroup/lxc/105/memory.current", "536870912\n");
        put("sys/fs/cgroup/lxc/105/memory.swap.current", "1048576\n");
        put(
            "sys/fs/cgroup/lxc/105/memory.events",
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
        );
        put(
            "sys/fs/cgroup/lxc/105/cpu.pressure",
            "some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
        );
        // cgroup v1: cpuacct's usage in ns, memory with memsw.
        put(
            "sys/fs/cgroup/cpuacct/lxc/106/cpuacct.usage",
            "7000000000\n",
        );
        put(
            "sys/fs/cgroup/cpu/lxc/106/cpu.stat",
            &fixture_text("cpu.stat-v1-throttled"),
        );
        put(
            "sys/fs/cgroup/memory/lxc/106/memory.usage_in_bytes",
            "268435456\n",
        );
        put(
            "sys/fs/cgroup/memory/lxc/106/memory.memsw.usage_in_bytes",
            "272629760\n",
        );
        let host = Host::with_root(root.path());
        let v2 = container(&host, 105);
        assert_eq!(v2.cpu_us, Some(5_000_000));
        assert_eq!(v2.throttling.unwrap().throttled_us, 250_000);
        assert_eq!((v2.host_kib, v2.swap_kib), (Some(524288), Some(1024)));
        assert_eq!(v2.oom_kills, Some(1));
        assert_eq!(v2.cpu_pressure.unwrap().some.total_us, 123456);
        let v1 = container(&host, 106);
        assert_eq!(v1.cpu_us, Some(7_000_000));
        assert_eq!(v1.throttling.unwrap().throttled_us, 1_183_210);
        assert_eq!((v1.host_kib, v1.swap_kib), (Some(262144), Some(4096)));
        assert_eq!(v1.cpu_pressure, None, "v1 has no pressure");
        // No such container: nothing.
        assert_eq!(container(&host, 107), GuestCounters::default());
    }

    fn fixture_text(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/fixtures/guest/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
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
