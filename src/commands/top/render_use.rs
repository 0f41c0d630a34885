//! An interval's guests' CPU, memory and network, and the node's against
//! them: the text view's lines and tables, and their metrics gauges.

use crate::nodeio::guests::GuestUse;
use crate::nodeio::sample::TopSample;
use crate::output::metrics::gauges::Gauge;

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}%")).unwrap_or_else(|| "-".into())
}

/// The node's CPU and memory against its guests, in one line: its vCPUs
/// on its cores, its memory, what the guests were given, swap, the ARC,
/// KSM and the OOM kills.
pub fn node_use_line(s: &TopSample) -> String {
    let n = &s.node_use;
    let gib = |m: f64| format!("{:.1}", m / 1024.0);
    let mut out = match (n.cores, n.overcommit) {
        (Some(c), Some(o)) => format!("CPU {} vCPUs on {c} cores ({o:.1}:1)", n.vcpus),
        _ => "CPU -".to_string(),
    };
    if let (Some(a), Some(t)) = (n.available_mib, n.memory_mib) {
        out += &format!(
            "   memory {} of {} GiB available, guests given {}",
            gib(a),
            gib(t),
            gib(n.guest_memory_mib)
        );
    }
    if let Some(sw) = n.swap_used_mib {
        out += &format!(", swap used {sw:.0} MiB");
    }
    if let Some(a) = &n.arc {
        out += &format!("   ARC {} GiB (max {})", gib(a.size_mib), gib(a.max_mib));
    }
    if let Some(k) = n.ksm_saved_mib.filter(|k| *k > 0.0) {
        out += &format!("   KSM saves {k:.0} MiB");
    }
    out += &format!("   memory full {}", pct(n.memory_full_pct));
    if n.oom_kills > 0 {
        out += &format!("   OOM KILLS {}", n.oom_kills);
    }
    out
}

/// A guest's CPU and memory as a row of the text view.
fn use_row(g: &GuestUse) -> String {
    let m = &g.memory;
    format!(
        "{:<12}{:>7}{:>8}{:>9}{:>6}{:>10}{:>10}{:>10}{:>9}{:>9}  {}\n",
        g.label(),
        opt(g.cpu.used_pct, 0),
        pct(g.cpu.ready_pct),
        pct(g.cpu.limited_pct),
        g.cpu.vcpus,
        opt(m.host_mib, 0),
        opt(m.swap_mib, 0),
        match (m.balloon_mib, m.max_mib) {
            (Some(b), Some(x)) => format!("{b:.0}/{x:.0}"),
            (None, Some(x)) => format!("-/{x:.0}"),
            _ => "-".into(),
        },
        opt(m.guest_available_mib, 0),
        pct(m.pressure_some_pct),
        g.name.clone().unwrap_or_default()
    )
}

/// The guests' CPU and memory, and their interfaces, as text.
pub fn use_text(s: &TopSample) -> String {
    if s.guest_use.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{:<12}{:>7}{:>8}{:>9}{:>6}{:>10}{:>10}{:>10}{:>9}{:>9}  {}\n",
        "GUEST",
        "CPU %",
        "READY",
        "LIMITED",
        "vCPU",
        "HOST MiB",
        "SWAP MiB",
        "BALLOON",
        "AVAIL",
        "MEM PSI",
        "NAME"
    );
    for g in &s.guest_use {
        out += &use_row(g);
    }
    let nets: Vec<_> = s
        .guest_use
        .iter()
        .flat_map(|g| g.net.iter().map(move |n| (g, n)))
        .collect();
    if !nets.is_empty() {
        out += &format!(
            "\n{:<12}{:<6}{:<14}{:>10}{:>10}{:>10}{:>10}{:>9}{:>9}\n",
            "GUEST",
            "NET",
            "INTERFACE",
            "RX MiB/s",
            "TX MiB/s",
            "RX pkt/s",
            "TX pkt/s",
            "RX drop",
            "TX drop"
        );
        for (g, n) in nets {
            out += &format!(
                "{:<12}{:<6}{:<14}{:>10.2}{:>10.2}{:>10.0}{:>10.0}{:>9.0}{:>9.0}\n",
                g.label(),
                n.net,
                n.interface,
                n.rx_mib_s,
                n.tx_mib_s,
                n.rx_packets_s,
                n.tx_packets_s,
                n.rx_drops_s,
                n.tx_drops_s
            );
        }
    }
    out
}

/// A share as a ratio gauge, where there is one.
fn ratio(
    name: &'static str,
    help: &'static str,
    field: &'static str,
    pct: Option<f64>,
) -> Option<Gauge> {
    pct.map(|p| Gauge::new((name, help), p / 100.0, (field, p)))
}

/// MiB as a bytes gauge, where there is one.
fn bytes(
    name: &'static str,
    help: &'static str,
    field: &'static str,
    mib: Option<f64>,
) -> Option<Gauge> {
    mib.map(|m| Gauge::new((name, help), m * 1048576.0, (field, m)))
}

/// A guest's CPU and memory as gauges.
pub fn use_gauges(g: &GuestUse) -> Vec<Gauge> {
    let (c, m) = (&g.cpu, &g.memory);
    [
        ratio("cpu_used_ratio", "CPU the guest used, in cores (1 is one core's worth)", "cpu_used_pct", c.used_pct),
        ratio("cpu_ready_ratio", "share of the interval its worst vCPU was ready but not running, beyond its own limit (esxtop's %RDY), 0 to 1", "cpu_ready_pct", c.ready_pct),
        ratio("cpu_limited_ratio", "share of the interval its own CPU limit (cpulimit) held it, 0 to 1", "cpu_limited_pct", c.limited_pct),
        ratio("cpu_pressure_ratio", "PSI of its cgroup: share of the interval some task waited for a CPU, 0 to 1", "cpu_pressure_pct", c.pressure_pct),
        bytes("memory_host_bytes", "host memory its QEMU (a container's cgroup) holds", "memory_host_mib", m.host_mib),
        bytes("memory_swap_bytes", "of its memory, what is in the host's swap", "memory_swap_mib", m.swap_mib),
        bytes("memory_max_bytes", "the memory it was given", "memory_max_mib", m.max_mib),
        bytes("memory_balloon_bytes", "the memory its balloon leaves it", "memory_balloon_mib", m.balloon_mib),
        bytes("guest_available_bytes", "the guest's own available memory (its balloon driver's report)", "guest_available_mib", m.guest_available_mib),
        ratio("memory_pressure_some_ratio", "PSI of its cgroup: share of the interval some task waited for memory, 0 to 1", "memory_pressure_some_pct", m.pressure_some_pct),
        ratio("memory_pressure_full_ratio", "PSI of its cgroup: share of the interval all its tasks waited for memory, 0 to 1", "memory_pressure_full_pct", m.pressure_full_pct),
        Some(Gauge::new(("oom_kills", "the OOM killer's kills in its cgroup over the interval"), g.oom_kills as f64, ("oom_kills", g.oom_kills as f64))),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A guest interface's rates as gauges, from the guest's side.
pub fn net_gauges(n: &crate::nodeio::guests::GuestNet) -> Vec<Gauge> {
    let per_s = |name, help, field, v: f64| Gauge::new((name, help), v, (field, v));
    vec![
        Gauge::new(
            (
                "receive_bytes_per_second",
                "bytes the guest received a second",
            ),
            n.rx_mib_s * 1048576.0,
            ("rx_mib_s", n.rx_mib_s),
        ),
        Gauge::new(
            ("transmit_bytes_per_second", "bytes the guest sent a second"),
            n.tx_mib_s * 1048576.0,
            ("tx_mib_s", n.tx_mib_s),
        ),
        per_s(
            "receive_packets_per_second",
            "packets the guest received a second",
            "rx_packets_s",
            n.rx_packets_s,
        ),
        per_s(
            "transmit_packets_per_second",
            "packets the guest sent a second",
            "tx_packets_s",
            n.tx_packets_s,
        ),
        per_s(
            "receive_drops_per_second",
            "packets to the guest dropped a second",
            "rx_drops_s",
            n.rx_drops_s,
        ),
        per_s(
            "transmit_drops_per_second",
            "packets from the guest dropped a second",
            "tx_drops_s",
            n.tx_drops_s,
        ),
    ]
}

/// The node's CPU and memory against its guests as gauges.
pub fn node_use_gauges(n: &crate::nodeio::guests::NodeUse) -> Vec<Gauge> {
    let count = |name, help, field, v: f64| Gauge::new((name, help), v, (field, v));
    let mut out: Vec<Gauge> = [
        n.overcommit.map(|o| {
            count(
                "vcpus_per_core",
                "the running guests' vCPUs over the node's cores",
                "vcpus_per_core",
                o,
            )
        }),
        bytes(
            "memory_available_bytes",
            "the node's available memory (MemAvailable)",
            "memory_available_mib",
            n.available_mib,
        ),
        Some(Gauge::new(
            (
                "guest_memory_bytes",
                "the memory the running guests were given",
            ),
            n.guest_memory_mib * 1048576.0,
            ("guest_memory_mib", n.guest_memory_mib),
        )),
        bytes(
            "swap_used_bytes",
            "host swap in use",
            "swap_used_mib",
            n.swap_used_mib,
        ),
        bytes(
            "arc_size_bytes",
            "the ZFS ARC's size",
            "arc_size_mib",
            n.arc.as_ref().map(|a| a.size_mib),
        ),
        bytes(
            "arc_max_bytes",
            "the ZFS ARC's maximum (zfs_arc_max)",
            "arc_max_mib",
            n.arc.as_ref().map(|a| a.max_mib),
        ),
        bytes(
            "ksm_saved_bytes",
            "memory KSM's sharing saves",
            "ksm_saved_mib",
            n.ksm_saved_mib,
        ),
        ratio(
            "memory_full_ratio",
            "PSI: share of the interval all non-idle tasks waited for memory, 0 to 1",
            "memory_full_pct",
            n.memory_full_pct,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    out.push(count(
        "oom_kills",
        "the OOM killer's kills on the node over the interval",
        "oom_kills",
        n.oom_kills as f64,
    ));
    out
}
