//! One reading of everything `top` counts, at one moment: the node's disks
//! (`/proc/diskstats`), its CPUs' time (`/proc/stat`), its pressure
//! (`/proc/pressure/*`), each running VM's drives (QEMU's counters through
//! its QMP socket, one short visit each) and each container's I/O (its
//! cgroup). Nothing is written anywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pveprobe_parse::iostat::{self, CgroupIo, CpuTimes, DiskStat};
use pveprobe_parse::pressure::{self, Pressure};
use pveprobe_parse::qmp::DriveStats;

use super::guest_read;
use super::guests::{self, GuestCounters, NodeCounters};
use crate::pvevm::qmp::{self, VmFacts};
use crate::sys::host::Host;

/// Where the counters are read.
#[derive(Debug, Clone)]
pub struct Sources {
    pub host: Host,
    /// PVE's VM sockets (`/var/run/qemu-server`).
    pub qmp_dir: PathBuf,
    /// `/etc/pve` (the VMs' configs under `qemu-server/`, the containers'
    /// under `lxc/`, `storage.cfg`).
    pub pve_dir: PathBuf,
    /// Where what else runs is read.
    pub jobs: super::jobs::JobSources,
}

/// A VM's drives at one moment, or why they were not read.
#[derive(Debug, Clone, PartialEq)]
pub enum VmDrives {
    Read(Vec<DriveStats>),
    /// Its socket was busy (another client held it): read next time.
    Busy,
    Failed(String),
}

/// Every counter at one moment.
#[derive(Debug, Clone)]
pub struct Counters {
    pub at: std::time::Instant,
    pub disks: Vec<DiskStat>,
    pub cpu: Option<CpuTimes>,
    pub io: Option<Pressure>,
    pub cpu_pressure: Option<Pressure>,
    pub memory: Option<Pressure>,
    /// Dirty and writeback pages, KiB (`/proc/meminfo`).
    pub dirty_kib: Option<u64>,
    pub writeback_kib: Option<u64>,
    /// Pages swapped in and out since boot (`/proc/vmstat`).
    pub swapped_pages: Option<(u64, u64)>,
    pub vms: BTreeMap<u32, VmDrives>,
    pub cts: BTreeMap<u32, Vec<CgroupIo>>,
    /// What else runs besides the guests.
    pub jobs: Vec<super::jobs::OtherJob>,
    /// Each running guest's CPU and memory, by kind (`vm`, `ct`) and ID.
    pub guests: BTreeMap<(String, u32), GuestCounters>,
    /// The node's memory, ARC, KSM, OOM kills and interfaces.
    pub node: NodeCounters,
    /// The kernel's log records written since the last reading.
    pub kernel_log: Vec<String>,
    /// This process's CPU time so far (its children's included: the tools
    /// it asks), µs, and its resident set, KiB.
    pub own_cpu_us: u64,
    pub own_rss_kib: u64,
}

/// The running VMs: their sockets in `dir`.
pub fn running_vms(dir: &Path) -> Vec<u32> {
    let mut out: Vec<u32> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".qmp")?.parse().ok()
        })
        .collect();
    out.sort_unstable();
    out
}

/// The containers with an I/O cgroup: `lxc/CTID` under cgroup v2's root or
/// v1's blkio hierarchy; each its counters.
fn containers(host: &Host) -> BTreeMap<u32, Vec<CgroupIo>> {
    let mut out = BTreeMap::new();
    for (dir, v2) in [
        ("/sys/fs/cgroup/lxc", true),
        ("/sys/fs/cgroup/unified/lxc", true),
        ("/sys/fs/cgroup/blkio/lxc", false),
    ] {
        for name in host.list(dir) {
            let Ok(ctid) = name.parse::<u32>() else {
                continue;
            };
            let at = format!("{dir}/{name}");
            let io = if v2 {
                host.read(format!("{at}/io.stat"))
                    .map(|t| iostat::io_stat(&t))
                    .unwrap_or_default()
            } else {
                let bytes = host
                    .read(format!("{at}/blkio.throttle.io_service_bytes_recursive"))
                    .or_else(|_| host.read(format!("{at}/blkio.throttle.io_service_bytes")))
                    .unwrap_or_default();
                let ops = host
                    .read(format!("{at}/blkio.throttle.io_serviced_recursive"))
                    .or_else(|_| host.read(format!("{at}/blkio.throttle.io_serviced")))
                    .unwrap_or_default();
                iostat::blkio_throttle(&bytes, &ops)
            };
            if !io.is_empty() || !out.contains_key(&ctid) {
                out.insert(ctid, io);
            }
        }
    }
    out
}

/// This process's CPU time (user and system, µs) and resident set (KiB).
fn own_use() -> (u64, u64) {
    use nix::sys::resource::{UsageWho, getrusage};
    let children = getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| {
        let us = |t: nix::sys::time::TimeVal| (t.tv_sec() as u64) * 1_000_000 + t.tv_usec() as u64;
        us(u.user_time()) + us(u.system_time())
    });
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => {
            let us =
                |t: nix::sys::time::TimeVal| (t.tv_sec() as u64) * 1_000_000 + t.tv_usec() as u64;
            // This process's own, whatever host the rest is read from.
            let rss = Host::real()
                .read("/proc/self/statm")
                .ok()
                .and_then(|t| pveprobe_parse::procpid::resident_pages(&t))
                .map_or(0, |pages| pages * crate::sys::cpus::page_size() / 1024);
            (us(u.user_time()) + us(u.system_time()) + children, rss)
        }
        Err(_) => (0, 0),
    }
}

/// How often a VM's balloon and its guest's report are asked: they move
/// slowly (pvestatd's autoballooning every 10 s, the guest's report every
/// 2 s) and each is one more answer for QEMU to write and this process to
/// wake for. In between, the last is shown.
pub const BALLOON_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// A VM's balloon as last asked.
#[derive(Debug, Clone, Default)]
pub struct Balloon {
    asked: Option<std::time::Instant>,
    actual: Option<u64>,
    guest: Option<pveprobe_parse::qmp::GuestStats>,
    rates: Option<guests::GuestRates>,
}

/// Reads everything once; `facts` keeps what each VM says of itself at
/// the first visit (its drives' files, its vCPU threads, its memory),
/// `places` where its cgroup's files are, `balloons` its balloon as last
/// asked.
pub fn read(
    src: &Sources,
    vms: &[u32],
    facts: &mut BTreeMap<u32, VmFacts>,
    places: &mut BTreeMap<u32, Option<guest_read::Places>>,
    balloons: &mut BTreeMap<u32, Balloon>,
) -> Counters {
    let host = &src.host;
    let mut drives = BTreeMap::new();
    let mut guests = BTreeMap::new();
    for &vmid in vms {
        let want_facts = !facts.contains_key(&vmid);
        let kept = balloons.entry(vmid).or_default();
        let want_balloon = kept.asked.is_none_or(|at| at.elapsed() >= BALLOON_EVERY);
        let got = match qmp::visit(&qmp::socket(&src.qmp_dir, vmid), want_facts, want_balloon) {
            Ok(v) => {
                if let Some(f) = v.facts {
                    facts.insert(vmid, f);
                }
                if want_balloon {
                    let rates = match (&kept.guest, &v.guest) {
                        (Some(a), Some(b)) => guests::guest_rates(a, b).or(kept.rates),
                        _ => None,
                    };
                    *kept = Balloon {
                        asked: Some(std::time::Instant::now()),
                        actual: v.balloon,
                        guest: v.guest,
                        rates,
                    };
                }
                VmDrives::Read(v.stats)
            }
            Err(qmp::QmpError::Busy) => VmDrives::Busy,
            Err(e) => VmDrives::Failed(e.to_string()),
        };
        drives.insert(vmid, got);
        let (balloon, guest, rates) = (kept.actual, kept.guest, kept.rates);
        let known = facts.get(&vmid);
        let pidfile = src.qmp_dir.join(format!("{vmid}.pid"));
        let mut c = guest_read::vm(
            host,
            &pidfile,
            known.map_or(&[][..], |f| &f.vcpus),
            places.entry(vmid).or_default(),
        );
        c.memory_max = known.and_then(|f| f.memory);
        c.balloon = balloon;
        c.guest = guest;
        c.guest_rates = rates;
        guests.insert(("vm".to_string(), vmid), c);
    }
    // Each read once: the node's counters take their figures from the same.
    let memory = host
        .read("/proc/meminfo")
        .ok()
        .and_then(|t| pveprobe_parse::memory::meminfo(&t));
    let vmstat = host.read("/proc/vmstat").ok();
    let psi = |f: &str| {
        host.read(format!("/proc/pressure/{f}"))
            .ok()
            .and_then(|t| pressure::pressure(&t))
    };
    let (own_cpu_us, own_rss_kib) = own_use();
    let stat = host.read("/proc/stat").ok();
    let cts = containers(host);
    for &ctid in cts.keys() {
        guests.insert(("ct".to_string(), ctid), guest_read::container(host, ctid));
    }
    Counters {
        at: std::time::Instant::now(),
        disks: host
            .read("/proc/diskstats")
            .map(|t| iostat::diskstats(&t))
            .unwrap_or_default(),
        cpu: stat.as_deref().and_then(iostat::cpu_times),
        io: psi("io"),
        cpu_pressure: psi("cpu"),
        memory: psi("memory"),
        dirty_kib: memory.map(|m| m.dirty / 1024),
        writeback_kib: memory.map(|m| m.writeback / 1024),
        swapped_pages: vmstat
            .as_deref()
            .and_then(pveprobe_parse::memory::swapped_pages),
        vms: drives,
        cts,
        jobs: Vec::new(),
        guests,
        node: guest_read::node(host, stat.as_deref(), memory, vmstat.as_deref()),
        kernel_log: Vec::new(),
        own_cpu_us,
        own_rss_kib,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_vms_are_their_sockets() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["101.qmp", "100.qmp", "100.qga", "100.serial0", "x.qmp"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        assert_eq!(running_vms(dir.path()), [100, 101]);
    }

    #[test]
    fn a_containers_cgroup_is_read_in_v1_and_v2() {
        let root = tempfile::tempdir().unwrap();
        let v1 = root.path().join("sys/fs/cgroup/blkio/lxc/200");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(
            v1.join("blkio.throttle.io_service_bytes"),
            "7:3 Read 0\n7:3 Write 8192\nTotal 8192\n",
        )
        .unwrap();
        std::fs::write(
            v1.join("blkio.throttle.io_serviced"),
            "7:3 Write 2\nTotal 2\n",
        )
        .unwrap();
        let v2 = root.path().join("sys/fs/cgroup/lxc/201");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(
            v2.join("io.stat"),
            "8:0 rbytes=4096 wbytes=0 rios=1 wios=0\n",
        )
        .unwrap();
        let cts = containers(&Host::with_root(root.path()));
        assert_eq!(cts[&200][0].writes, 2);
        assert_eq!(cts[&200][0].write_bytes, 8192);
        assert_eq!(cts[&201][0].reads, 1);
    }
}
