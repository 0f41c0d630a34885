//! How many CPUs: the two questions pveprobe asks, answered by `num_cpus`
//! (what the field's Rust tools use) here and nowhere else (a node's load
//! for `ceph` is set beside [`usable`] too). [`usable`] is what
//! this process may run on at once (its CPU affinity, as `taskset` sets
//! it, and its cgroup's CPU quota, as a container's or a systemd unit's
//! `CPUQuota=` limits it): how many threads a figure "on all CPUs" runs.
//! [`physical`] is the cores the machine has, hyper-threads not counted:
//! what that figure is set beside. The page size is read here too, from
//! sysconf, never assumed.

/// The CPUs this process may use at once (at least 1).
pub fn usable() -> usize {
    num_cpus::get().max(1)
}

/// The machine's physical cores (at least 1; on a VM, its vCPUs as its
/// firmware describes them).
pub fn physical() -> usize {
    num_cpus::get_physical().max(1)
}

/// The page size in bytes (`sysconf(_SC_PAGESIZE)`): what the kernel's
/// page counters (`/proc/vmstat`'s swap, `statm`) count in.
pub fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|p| u64::try_from(p).ok())
        .filter(|p| *p > 0)
        .unwrap_or(4096)
}

/// The clock ticks a second `/proc/PID/stat`'s CPU times count in
/// (`sysconf(_SC_CLK_TCK)`).
pub fn ticks_per_second() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|t| *t > 0)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_cpus_follow_the_affinity() {
        use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
        use nix::unistd::Pid;
        // On a thread of its own: the affinity is the thread's.
        std::thread::spawn(|| {
            let all = sched_getaffinity(Pid::from_raw(0)).unwrap();
            let first = (0..CpuSet::count())
                .find(|&c| all.is_set(c).unwrap())
                .unwrap();
            let mut one = CpuSet::new();
            one.set(first).unwrap();
            sched_setaffinity(Pid::from_raw(0), &one).unwrap();
            assert_eq!(usable(), 1);
            assert!(physical() >= 1);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_page_size_is_the_kernels() {
        let p = page_size();
        assert!(p.is_power_of_two() && p >= 4096, "{p}");
    }
}
