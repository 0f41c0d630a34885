//! What `top` names of the guests' CPU, memory and network: a guest whose
//! vCPUs wait for the node's cores, one its own limit holds, its memory in
//! host swap or squeezed by its balloon, the ARC over the guests, a node
//! that gave its guests more than it has, drops on a guest's interface.
//! Each names the guest, the cause and what PVE offers.

use super::guests::{GuestUse, NodeUse};
use super::sample::TopSample;
use crate::model::hint::Hint;

/// A vCPU waits for the node from this ready share, % (esxtop's %RDY:
/// under 5% healthy, over 10% contention).
pub const READY_PCT: f64 = 10.0;
/// A guest's own CPU limit holds it from this share of the interval, %.
pub const LIMITED_PCT: f64 = 10.0;
/// Host swap holds a guest's memory from this much, MiB...
pub const SWAPPED_MIB: f64 = 64.0;
/// ... while the node swaps in this much a second, MiB/s.
pub const SWAP_IN_MIB_S: f64 = 0.1;
/// A guest faults from this many major faults a second.
pub const FAULTS_S: f64 = 10.0;
/// The node is short of memory below this share available, %...
pub const SHORT_PCT: f64 = 10.0;
/// ... or from this PSI memory `full`, %.
pub const MEMORY_FULL_PCT: f64 = 10.0;

/// `VM 101 (web)`.
fn named(g: &GuestUse) -> String {
    match &g.name {
        Some(n) => format!("{} ({n})", g.label()),
        None => g.label(),
    }
}

fn is_vm(g: &GuestUse) -> bool {
    g.kind != "ct"
}

/// The node is short of memory: little available, or its tasks stall on it.
fn short(n: &NodeUse) -> bool {
    let low = match (n.available_mib, n.memory_mib) {
        (Some(a), Some(t)) if t > 0.0 => a / t * 100.0 < SHORT_PCT,
        _ => false,
    };
    low || n.memory_full_pct.is_some_and(|f| f >= MEMORY_FULL_PCT)
}

/// The guest hints of one interval.
pub fn hints(s: &TopSample) -> Vec<Hint> {
    let n = &s.node_use;
    let swapping_in = s.pressure.swap_in_mib_s.unwrap_or(0.0) >= SWAP_IN_MIB_S;
    let mut out = Vec::new();
    for g in &s.guest_use {
        out.extend(ready(g, s));
        out.extend(limited(g));
        if swapping_in && g.memory.swap_mib.is_some_and(|m| m >= SWAPPED_MIB) {
            out.push(Hint::new(
                "guest-memory-swapped",
                g.label(),
                format!(
                    "{}: {:.0} MiB of its memory is in the host's swap and the node swaps in {:.1} MiB/s: it waits for its own memory. Give the node's guests less memory than it has (their memory, the balloon's minimum), cap the ZFS ARC (zfs_arc_max), or add RAM",
                    named(g),
                    g.memory.swap_mib.unwrap_or(0.0),
                    s.pressure.swap_in_mib_s.unwrap_or(0.0)
                ),
            ));
        }
        out.extend(balloon_squeezed(g));
        for i in g.net.iter().filter(|i| i.drops_s() >= 1.0) {
            out.push(Hint::new(
                "guest-net-drops",
                format!("{} {}", g.label(), i.net),
                format!(
                    "{} {} ({}): {:.0} packets a second dropped on the way in and {:.0} on the way out: the guest does not take them as fast as they come (its CPU, its ring), or the bridge's queue is full. Give it more vCPUs or virtio multiqueue (queues= on {}), and check the rate limit (rate=) and the MTU",
                    named(g),
                    i.net,
                    i.interface,
                    i.rx_drops_s,
                    i.tx_drops_s,
                    i.net
                ),
            ));
        }
    }
    out.extend(overcommitted(n));
    out.extend(arc_squeezes(s, swapping_in));
    out.extend(
        n.kills
            .iter()
            .filter(|k| k.id.is_some())
            .map(|k| oom_killed(k, n)),
    );
    out
}

/// The kernel's OOM killer took a guest.
fn oom_killed(k: &super::oom::OomKill, n: &NodeUse) -> Hint {
    let picture = match (n.available_mib, n.memory_mib) {
        (Some(a), Some(t)) => format!(
            "; at the interval's end the node had {:.1} of {:.1} GiB available, its running guests given {:.1} GiB{}",
            a / 1024.0,
            t / 1024.0,
            n.guest_memory_mib / 1024.0,
            n.arc
                .as_ref()
                .map(|arc| format!(", the ZFS ARC {:.1} GiB", arc.size_mib / 1024.0))
                .unwrap_or_default()
        ),
        _ => String::new(),
    };
    let (why, fix) = if k.constraint == "CONSTRAINT_MEMCG" {
        (
            format!(
                "its cgroup {} reached its memory limit",
                k.memcg.as_deref().unwrap_or("?")
            ),
            "raise that limit, or give the guest less memory than it",
        )
    } else {
        (
            "the node ran out of memory".to_string(),
            "give the node's guests less memory than it has (node-memory-overcommitted), cap the ZFS ARC, add swap or RAM, or move a guest; start it again (qm start / pct start)",
        )
    };
    Hint::new(
        "guest-oom-killed",
        k.label(),
        format!(
            "{}: the kernel's OOM killer killed it at {} ({} PID {}, {:.0} MiB resident): {why}{picture}. To keep it: {fix}",
            k.label(),
            k.at,
            k.comm,
            k.pid,
            k.rss_mib
        ),
    )
}

/// Its vCPUs waited for the node's cores.
fn ready(g: &GuestUse, s: &TopSample) -> Option<Hint> {
    let r = g.cpu.ready_pct.filter(|r| *r >= READY_PCT)?;
    let n = &s.node_use;
    let ratio = match (n.overcommit, n.cores) {
        (Some(o), Some(c)) => format!("; the node runs {} vCPUs on {c} cores ({o:.1}:1)", n.vcpus),
        _ => String::new(),
    };
    let mut users: Vec<&GuestUse> = s
        .guest_use
        .iter()
        .filter(|u| u.cpu.used_pct.is_some_and(|p| p >= 10.0))
        .collect();
    users.sort_by(|a, b| {
        b.cpu
            .used_pct
            .unwrap_or(0.0)
            .total_cmp(&a.cpu.used_pct.unwrap_or(0.0))
    });
    let used: Vec<String> = users
        .iter()
        .take(5)
        .map(|u| format!("{} {:.0}%", u.label(), u.cpu.used_pct.unwrap_or(0.0)))
        .collect();
    let what = if is_vm(g) {
        "its worst vCPU was ready but not running"
    } else {
        "its tasks were runnable but not running"
    };
    Some(Hint::new(
        "guest-cpu-ready",
        g.label(),
        format!(
            "{}: {what} {r:.0}% of the interval (esxtop's %RDY: under 5% is healthy, over 10% contention): the node's cores are short, not its own limit{ratio}{}. Fewer vCPUs where guests idle, fewer busy guests on this node (migrate one), or CPU affinity to keep them apart",
            named(g),
            if used.is_empty() {
                String::new()
            } else {
                format!("; the cores went to {} (of a core)", used.join(", "))
            }
        ),
    ))
}

/// Its own CPU limit held it.
fn limited(g: &GuestUse) -> Option<Hint> {
    let l = g.cpu.limited_pct.filter(|l| *l >= LIMITED_PCT)?;
    let how = if is_vm(g) {
        format!(
            "raise or remove its cpulimit (qm set {} --cpulimit N; 0 is none)",
            g.id
        )
    } else {
        format!(
            "raise or remove its cpulimit (pct set {} --cpulimit N; 0 is none)",
            g.id
        )
    };
    Some(Hint::new(
        "guest-cpu-limited",
        g.label(),
        format!(
            "{}: its own CPU limit held it {l:.0}% of the interval (its cgroup's quota ran out; the node had cores for it): {how}",
            named(g)
        ),
    ))
}

/// Its balloon holds memory while the guest swaps or faults.
fn balloon_squeezed(g: &GuestUse) -> Option<Hint> {
    let m = &g.memory;
    let (b, max) = (m.balloon_mib?, m.max_mib?);
    if b >= max * 0.95 {
        return None;
    }
    let swaps = m.guest_swap_in_mib_s.is_some_and(|s| s > 0.0);
    let faults = m.guest_major_faults_s.is_some_and(|f| f >= FAULTS_S);
    if !swaps && !faults {
        return None;
    }
    Some(Hint::new(
        "guest-balloon-squeezed",
        g.label(),
        format!(
            "{}: its balloon leaves it {b:.0} of its {max:.0} MiB while it {}: the node took memory back that the guest needs. Raise its minimum (qm set {} --balloon N), or free memory on the node so the balloon deflates",
            named(g),
            match (swaps, faults) {
                (true, true) => "swaps in and faults",
                (true, false) => "swaps in",
                _ => "faults pages in",
            },
            g.id
        ),
    ))
}

/// The running guests and the ARC's maximum together exceed the node's RAM.
fn overcommitted(n: &NodeUse) -> Option<Hint> {
    let total = n.memory_mib?;
    let arc_max = n.arc.as_ref().map_or(0.0, |a| a.max_mib);
    let given = n.guest_memory_mib + arc_max;
    (given > total).then(|| {
        Hint::new(
            "node-memory-overcommitted",
            "node",
            format!(
                "the running guests were given {:.1} GiB{} on a node with {:.1} GiB: when they use it, the node swaps or the OOM killer takes a guest. Lower the guests' memory or use ballooning with minimums that fit, cap the ARC, or move a guest",
                n.guest_memory_mib / 1024.0,
                if arc_max > 0.0 {
                    format!(" and the ZFS ARC may grow to {:.1} GiB", arc_max / 1024.0)
                } else {
                    String::new()
                },
                total / 1024.0
            ),
        )
    })
}

/// The ARC holds memory while guests swap or the node is short.
fn arc_squeezes(s: &TopSample, swapping_in: bool) -> Option<Hint> {
    let n = &s.node_use;
    let (arc, total) = (n.arc.as_ref()?, n.memory_mib?);
    // The ARC gives back above its minimum only slowly; below a tenth of
    // RAM (PVE's own cap for new installs) it is not the cause.
    if arc.size_mib < total * 0.1 {
        return None;
    }
    let swapped = swapping_in
        && s.guest_use
            .iter()
            .any(|g| g.memory.swap_mib.is_some_and(|m| m >= SWAPPED_MIB));
    if !swapped && !short(n) {
        return None;
    }
    Some(Hint::new(
        "arc-squeezes-guests",
        "node",
        format!(
            "the ZFS ARC holds {:.1} GiB (its maximum {:.1} GiB) while {}: cap it. Since PVE 8.1 new installs cap it at 10% of RAM, at most 16 GiB; set zfs_arc_max in /etc/modprobe.d/zfs.conf (and update-initramfs -u) or at once in /sys/module/zfs/parameters/zfs_arc_max",
            arc.size_mib / 1024.0,
            arc.max_mib / 1024.0,
            if swapped {
                "guests' memory is in swap"
            } else {
                "the node is short of memory"
            }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::guests::{ArcUse, GuestCpu, GuestMemory, GuestNet};
    use super::*;

    fn guest(id: u32, cpu: GuestCpu) -> GuestUse {
        GuestUse {
            kind: "vm".into(),
            id,
            name: Some(format!("g{id}")),
            cpu,
            ..GuestUse::default()
        }
    }

    fn codes(s: &TopSample) -> Vec<(String, String)> {
        hints(s).into_iter().map(|h| (h.code, h.subject)).collect()
    }

    #[test]
    fn ready_blames_the_node_and_limited_the_guests_own_limit() {
        let mut s = TopSample {
            guest_use: vec![
                guest(
                    101,
                    GuestCpu {
                        used_pct: Some(150.0),
                        ready_pct: Some(25.0),
                        limited_pct: Some(0.0),
                        ..GuestCpu::default()
                    },
                ),
                guest(
                    102,
                    GuestCpu {
                        used_pct: Some(15.0),
                        ready_pct: Some(2.0),
                        limited_pct: Some(80.0),
                        ..GuestCpu::default()
                    },
                ),
                guest(
                    103,
                    GuestCpu {
                        used_pct: Some(1.0),
                        ready_pct: Some(4.9),
                        ..GuestCpu::default()
                    },
                ),
            ],
            node_use: NodeUse {
                cores: Some(2),
                vcpus: 6,
                overcommit: Some(3.0),
                ..NodeUse::default()
            },
            ..TopSample::default()
        };
        assert_eq!(
            codes(&s),
            [
                ("guest-cpu-ready".to_string(), "VM 101".to_string()),
                ("guest-cpu-limited".to_string(), "VM 102".to_string()),
            ]
        );
        let h = &hints(&s)[0];
        assert!(h.message.contains("6 vCPUs on 2 cores (3.0:1)"), "{h}");
        assert!(h.message.contains("VM 101 150%, VM 102 15%"), "{h}");
        assert!(!h.message.contains("VM 103 "), "{h}");
        s.guest_use.truncate(0);
        assert!(codes(&s).is_empty());
    }

    #[test]
    fn memory_hints_need_the_guest_to_pay_for_it() {
        let swapped = GuestUse {
            memory: GuestMemory {
                swap_mib: Some(512.0),
                balloon_mib: Some(1024.0),
                max_mib: Some(4096.0),
                guest_major_faults_s: Some(50.0),
                ..GuestMemory::default()
            },
            ..guest(104, GuestCpu::default())
        };
        let mut s = TopSample {
            guest_use: vec![swapped],
            node_use: NodeUse {
                memory_mib: Some(16384.0),
                available_mib: Some(8192.0),
                guest_memory_mib: 14336.0,
                arc: Some(ArcUse {
                    size_mib: 4096.0,
                    max_mib: 8192.0,
                    ..ArcUse::default()
                }),
                ..NodeUse::default()
            },
            ..TopSample::default()
        };
        // Not swapping in: swap holding it is no hint yet; the balloon
        // squeezes a faulting guest; the guests and the ARC's maximum are
        // over RAM.
        assert_eq!(
            codes(&s),
            [
                ("guest-balloon-squeezed".to_string(), "VM 104".to_string()),
                ("node-memory-overcommitted".to_string(), "node".to_string()),
            ]
        );
        s.pressure.swap_in_mib_s = Some(3.0);
        let got = codes(&s);
        assert!(got.contains(&("guest-memory-swapped".into(), "VM 104".into())));
        assert!(got.contains(&("arc-squeezes-guests".into(), "node".into())));
        // A guest interface dropping packets.
        s.guest_use[0].net = vec![GuestNet {
            net: "net0".into(),
            interface: "tap104i0".into(),
            rx_drops_s: 12.0,
            ..GuestNet::default()
        }];
        assert!(codes(&s).contains(&("guest-net-drops".into(), "VM 104 net0".into())));
        // A VM the OOM killer took; a process that is no guest is no hint.
        s.node_use.kills = vec![
            super::super::oom::OomKill {
                at: "2026-12-06T03:12:05Z".into(),
                kind: Some("vm".into()),
                id: Some(104),
                pid: 4242,
                comm: "kvm".into(),
                rss_mib: 8192.0,
                constraint: "CONSTRAINT_NONE".into(),
                ..Default::default()
            },
            super::super::oom::OomKill {
                pid: 7,
                comm: "python3".into(),
                ..Default::default()
            },
        ];
        let oom: Vec<Hint> = hints(&s)
            .into_iter()
            .filter(|h| h.code == "guest-oom-killed")
            .collect();
        assert_eq!(oom.len(), 1, "{oom:?}");
        assert_eq!(oom[0].subject, "VM 104");
        for part in [
            "03:12:05",
            "kvm PID 4242",
            "8192 MiB",
            "ran out of memory",
            "8.0 of 16.0 GiB",
        ] {
            assert!(oom[0].message.contains(part), "{part}: {}", oom[0]);
        }
    }
}
