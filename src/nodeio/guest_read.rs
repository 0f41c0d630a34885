//! Reading a guest's counters and the node's, each interval: a VM's from
//! its QEMU process (found by PVE's pidfile, `VMID.pid` beside its
//! socket), its vCPU threads (`query-cpus-fast` names them) and its
//! cgroup, found from `/proc/PID/cgroup`, not assumed; a container's from
//! its cgroup (`lxc/CTID`); the node's from its own files. Read-only; the
//! figures made of them are `guests`'.

use std::collections::BTreeMap;

use pveprobe_parse::cgroup::{self, Membership};
use pveprobe_parse::memory;
use pveprobe_parse::netdev;
use pveprobe_parse::pressure;
use pveprobe_parse::procpid;

use super::guests::{GuestCounters, NodeCounters};
use crate::sys::host::Host;
use crate::sys::kept::KeptFile;

/// A running VM's QEMU and the files read for it each interval, kept
/// open ([`KeptFile`]): its `stat` (which, held, also says the process is the
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
    stat: KeptFile,
    status: KeptFile,
    /// Each vCPU thread's schedstat, by thread ID.
    vcpus: BTreeMap<u32, KeptFile>,
    /// Its `/proc/PID/cgroup` as read, and when.
    cgroup: String,
    found: std::time::Instant,
    cpu_stat: Option<KeptFile>,
    cpu_pressure: Option<KeptFile>,
    memory_pressure: Option<KeptFile>,
    oom: Option<KeptFile>,
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
    fn find(host: &Host, pid: u32, start_ticks: u64, stat: KeptFile) -> Places {
        let cgroup = host.read(format!("/proc/{pid}/cgroup")).unwrap_or_default();
        let mut p = Places {
            pid,
            start_ticks,
            stat,
            status: KeptFile::new(host, format!("/proc/{pid}/status")),
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
                    .map(|p| KeptFile::new(host, p))
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
    let stat_of = |kept: &mut KeptFile| kept.read().ok().and_then(|t| procpid::stat(&t));
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
            let mut kept = KeptFile::new(host, format!("/proc/{pid}/stat"));
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
    let read = |kept: &mut Option<KeptFile>| kept.as_mut().and_then(|k| k.read().ok());
    GuestCounters {
        pid: Some(pid),
        cpu_us: Some(stat.cpu_ticks * 1_000_000 / crate::sys::cpus::ticks_per_second()),
        vcpus: vcpus
            .iter()
            .filter_map(|&(index, tid)| {
                let text = cg
                    .vcpus
                    .entry(tid)
                    .or_insert_with(|| {
                        KeptFile::new(host, format!("/proc/{pid}/task/{tid}/schedstat"))
                    })
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
