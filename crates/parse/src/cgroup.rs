//! A guest's cgroup as the kernel says it: which cgroup a process is in
//! (`/proc/PID/cgroup`, cgroup v2's `0::PATH` line or a v1 controller's
//! line), which guest PVE put there (`/qemu.slice/VMID.scope` for a VM,
//! `/lxc/CTID` or `/lxc.payload.CTID` for a container), how often its CPU
//! quota held it (`cpu.stat`: v2's `throttled_usec`, v1's `throttled_time`
//! in ns) and how often the OOM killer took one of its tasks (`oom_kill`,
//! in v2's `memory.events` and v1's `memory.oom_control` alike).

/// One line of `/proc/PID/cgroup`: `ID:CONTROLLERS:PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub hierarchy: u32,
    /// Empty for cgroup v2's line; v1 lists its controllers (`cpu,cpuacct`).
    pub controllers: Vec<String>,
    pub path: String,
}

/// The lines of `/proc/PID/cgroup`; a line not of the kernel's form is
/// left out.
pub fn memberships(text: &str) -> Vec<Membership> {
    text.lines()
        .filter_map(|l| {
            let (id, rest) = l.split_once(':')?;
            let (controllers, path) = rest.split_once(':')?;
            if !path.starts_with('/') {
                return None;
            }
            Some(Membership {
                hierarchy: id.parse().ok()?,
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// The cgroup of `controller` (`cpu`, `memory`): v1's line that names it,
/// else v2's (where every controller has the one path).
pub fn path_of<'a>(lines: &'a [Membership], controller: &str) -> Option<&'a str> {
    lines
        .iter()
        .find(|m| m.controllers.iter().any(|c| c == controller))
        .or_else(|| {
            lines
                .iter()
                .find(|m| m.hierarchy == 0 && m.controllers.is_empty())
        })
        .map(|m| m.path.as_str())
}

/// A guest as PVE names its cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guest {
    Vm(u32),
    Container(u32),
}

/// The guest whose cgroup `path` is, or holds it: `/qemu.slice/104.scope`
/// (and below it), `/lxc/105`, `/lxc.payload.105`, `/lxc.monitor.105`.
pub fn guest_of(path: &str) -> Option<Guest> {
    let mut parts = path.split('/').filter(|p| !p.is_empty());
    match parts.next()? {
        "qemu.slice" => {
            let id = parts.next()?.strip_suffix(".scope")?;
            Some(Guest::Vm(vmid(id)?))
        }
        "lxc" => Some(Guest::Container(vmid(parts.next()?)?)),
        top => {
            let id = top
                .strip_prefix("lxc.payload.")
                .or_else(|| top.strip_prefix("lxc.monitor."))?;
            Some(Guest::Container(vmid(id)?))
        }
    }
}

/// A VMID as PVE allows it: 100 to 999999999.
fn vmid(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|id| *id >= 100)
}

/// What `cpu.stat` says of the CPU quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Throttling {
    /// Quota periods that had runnable tasks.
    pub periods: u64,
    /// Of those, the periods the quota ran out in.
    pub throttled: u64,
    /// How long the cgroup's tasks were held, in microseconds.
    pub throttled_us: u64,
}

/// `cpu.stat`'s throttling, v2 (`throttled_usec`) or v1 (`throttled_time`,
/// ns); `None` where it has none of it (a root cgroup, no cpu controller).
pub fn throttling(cpu_stat: &str) -> Option<Throttling> {
    let value = |key: &str| {
        cpu_stat.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    let throttled_us =
        value("throttled_usec").or_else(|| value("throttled_time").map(|ns| ns / 1000))?;
    Some(Throttling {
        periods: value("nr_periods")?,
        throttled: value("nr_throttled")?,
        throttled_us,
    })
}

/// The CPU time a cgroup's tasks used, µs: v2's `usage_usec` of
/// `cpu.stat`.
pub fn usage_us(cpu_stat: &str) -> Option<u64> {
    cpu_stat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == "usage_usec").then(|| v.trim().parse().ok()).flatten()
    })
}

/// The OOM killer's kills in the cgroup: `oom_kill N` of v2's
/// `memory.events` or v1's `memory.oom_control`.
pub fn oom_kills(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/../../fixtures/guest/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn a_hybrid_hosts_lines_give_each_controllers_path() {
        let lines = memberships(&fixture("proc-pid-cgroup-v1-hybrid"));
        assert_eq!(lines.len(), 10);
        assert_eq!(path_of(&lines, "cpu"), Some("/"));
        assert_eq!(
            path_of(&lines, "memory"),
            Some("/process_api/ce10f8e7122aa7740d5151bff59f14ed")
        );
        // No io controller in v1 here: v2's line.
        assert_eq!(path_of(&lines, "io"), Some("/"));
    }

    #[test]
    fn pves_cgroups_name_their_guest() {
        let v2 = memberships("0::/qemu.slice/104.scope\n");
        assert_eq!(guest_of(path_of(&v2, "cpu").unwrap()), Some(Guest::Vm(104)));
        assert_eq!(
            guest_of("/qemu.slice/104.scope/vcpu0"),
            Some(Guest::Vm(104))
        );
        assert_eq!(guest_of("/lxc/105/ns"), Some(Guest::Container(105)));
        assert_eq!(guest_of("/lxc.payload.105"), Some(Guest::Container(105)));
        assert_eq!(guest_of("/lxc.monitor.105"), Some(Guest::Container(105)));
        for none in [
            "/",
            "/system.slice/pvestatd.service",
            "/qemu.slice",
            "/qemu.slice/x.scope",
            "/lxc/12",
            "/lxc/99999999999",
        ] {
            assert_eq!(guest_of(none), None, "{none}");
        }
    }

    #[test]
    fn throttling_reads_v1_in_ns_and_v2_in_us() {
        // A busy loop held to 15 ms in 100 ms for 1.5 s (cgroup v1).
        let v1 = throttling(&fixture("cpu.stat-v1-throttled")).unwrap();
        assert_eq!(
            v1,
            Throttling {
                periods: 16,
                throttled: 16,
                throttled_us: 1_183_210
            }
        );
        assert_eq!(
            throttling(&fixture("cpu.stat-v1")),
            Some(Throttling::default())
        );
        // v2's keys (Documentation/admin-guide/cgroup-v2.rst, "cpu.stat").
        let v2 = "usage_usec 1000\nuser_usec 600\nsystem_usec 400\nnr_periods 50\nnr_throttled 10\nthrottled_usec 250000\nnr_bursts 0\nburst_usec 0\n";
        assert_eq!(throttling(v2).unwrap().throttled_us, 250_000);
        assert_eq!(usage_us(v2), Some(1000));
        // The root's cpu.stat has no quota, but counts the CPU used; v1's
        // has no usage (that is cpuacct's).
        assert_eq!(throttling(&fixture("cpu.stat-v2")), None);
        assert!(usage_us(&fixture("cpu.stat-v2")).is_some_and(|u| u > 0));
        assert_eq!(usage_us(&fixture("cpu.stat-v1")), None);
    }

    #[test]
    fn oom_kills_are_counted_in_both_versions() {
        assert_eq!(
            oom_kills("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"),
            Some(1)
        );
        assert_eq!(
            oom_kills("low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n"),
            Some(2)
        );
        assert_eq!(oom_kills("oom_kill_disable 0\n"), None);
    }
}
