//! An interval of `top` as text (the view a terminal redraws, a snapshot
//! otherwise), CSV rows and metrics; the JSON line is the sample itself.

use super::render_use::{net_gauges, node_use_gauges, node_use_line, use_gauges, use_text};
use crate::nodeio::sample::{GuestIo, TopSample};
use crate::output::metrics::gauges::{self, Gauge, Subject};

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}%")).unwrap_or_else(|| "-".into())
}

/// The CSV's columns: a row per guest drive, per disk, per job, per
/// guest (its CPU and memory: kind `guest`) and per guest interface
/// (`net`); a row fills the columns of what it is.
pub const CSV_HEADER: [&str; 22] = [
    "timestamp",
    "node",
    "subject",
    "kind",
    "on",
    "read_iops",
    "write_iops",
    "read_mib_s",
    "write_mib_s",
    "read_ms",
    "write_ms",
    "util_pct",
    "queue",
    "io_some_pct",
    "cpu_used_pct",
    "cpu_ready_pct",
    "cpu_limited_pct",
    "memory_host_mib",
    "memory_swap_mib",
    "net_rx_mib_s",
    "net_tx_mib_s",
    "net_drops_s",
];

impl TopSample {
    /// What else runs, and the storages (how full, where known).
    fn jobs_text(&self) -> String {
        let mut out = String::new();
        if !self.jobs.is_empty() {
            out += "\nALSO RUNNING\n";
            for j in &self.jobs {
                out += &format!(
                    "  {:<16}{:<24}{}{}\n",
                    j.kind,
                    j.what,
                    j.detail.as_deref().unwrap_or(""),
                    j.since
                        .as_deref()
                        .map(|t| format!(" (since {t})"))
                        .unwrap_or_default()
                );
            }
        }
        let known: Vec<_> = self
            .storages
            .iter()
            .filter(|s| s.used_pct.is_some())
            .collect();
        if !known.is_empty() {
            out += "\nSTORAGES\n";
            for st in known {
                out += &format!(
                    "  {:<16}{:<28}{:>6}% used{}  on {}\n",
                    st.id,
                    st.what,
                    opt(st.used_pct, 1),
                    st.metadata_pct
                        .map(|m| format!(", metadata {m:.1}%"))
                        .unwrap_or_default(),
                    if st.disks.is_empty() {
                        "-".to_string()
                    } else {
                        st.disks.join(", ")
                    }
                );
            }
        }
        out
    }

    /// Each guest drive and disk as a metrics subject, and the node.
    fn subjects(&self, influx: bool) -> Vec<Subject> {
        let tag = |mut labels: Vec<(&'static str, String)>, object: &str| {
            labels.push(("node", self.node.clone()));
            if influx {
                labels.push(("object", object.into()));
            }
            labels
        };
        let mut out = Vec::new();
        for g in self.guests.iter().filter(|g| !g.busy && g.error.is_none()) {
            let labels = vec![
                ("guest", format!("{}/{}", g.kind, g.id)),
                ("drive", g.drive.clone().unwrap_or_default()),
                ("disk", g.disk.clone().unwrap_or_default()),
            ];
            out.push(Subject {
                labels: tag(labels, "top_guest"),
                gauges: guest_gauges(g),
            });
        }
        for d in &self.disks {
            let mut gauges = io_gauges(d.read_iops, d.write_iops, d.read_mib_s, d.write_mib_s);
            gauges.push(Gauge::new(
                (
                    "utilization_ratio",
                    "share of the interval with a request in flight, 0 to 1",
                ),
                d.util_pct / 100.0,
                ("util_pct", d.util_pct),
            ));
            out.push(Subject {
                labels: tag(vec![("disk", d.name.clone())], "top_disk"),
                gauges,
            });
        }
        for st in &self.storages {
            let gauges: Vec<Gauge> = [
                (
                    "used_ratio",
                    "share of the storage in use, 0 to 1",
                    "used_pct",
                    st.used_pct,
                ),
                (
                    "metadata_used_ratio",
                    "share of a thin pool's metadata in use, 0 to 1",
                    "metadata_pct",
                    st.metadata_pct,
                ),
            ]
            .into_iter()
            .filter_map(|(name, help, field, v)| {
                v.map(|v| Gauge::new((name, help), v / 100.0, (field, v)))
            })
            .collect();
            if !gauges.is_empty() {
                out.push(Subject {
                    labels: tag(vec![("storage", st.id.clone())], "top_storage"),
                    gauges,
                });
            }
        }
        for g in &self.guest_use {
            let guest = format!("{}/{}", g.kind, g.id);
            out.push(Subject {
                labels: tag(vec![("guest", guest.clone())], "top_guest_use"),
                gauges: use_gauges(g),
            });
            for n in &g.net {
                let labels = vec![
                    ("guest", guest.clone()),
                    ("net", n.net.clone()),
                    ("interface", n.interface.clone()),
                ];
                out.push(Subject {
                    labels: tag(labels, "top_guest_net"),
                    gauges: net_gauges(n),
                });
            }
        }
        out.push(Subject {
            labels: tag(Vec::new(), "top_node"),
            gauges: self.node_gauges(),
        });
        out
    }

    /// The node's pressure as gauges (ratios, 0 to 1).
    fn node_gauges(&self) -> Vec<Gauge> {
        let p = &self.pressure;
        [
            (
                "io_some_ratio",
                "PSI: share of the interval some task waited for I/O, 0 to 1",
                "io_some_pct",
                p.io_some_pct,
            ),
            (
                "io_full_ratio",
                "PSI: share of the interval all tasks waited for I/O, 0 to 1",
                "io_full_pct",
                p.io_full_pct,
            ),
            (
                "iowait_ratio",
                "share of the CPUs' time idle with I/O outstanding (PVE's IO delay), 0 to 1",
                "iowait_pct",
                p.iowait_pct,
            ),
        ]
        .into_iter()
        .filter_map(|(name, help, field, v)| {
            v.map(|v| Gauge::new((name, help), v / 100.0, (field, v)))
        })
        .chain(std::iter::once(Gauge::new(
            (
                "jobs",
                "backups, migrations, scrubs and other jobs besides the guests running now",
            ),
            self.jobs.len() as f64,
            ("jobs", self.jobs.len() as f64),
        )))
        .chain(node_use_gauges(&self.node_use))
        .collect()
    }

    pub fn influx(&self) -> String {
        gauges::influx("pveprobe_top", &self.subjects(true), &self.timestamp)
    }

    pub fn prometheus(&self) -> String {
        gauges::prometheus("pveprobe_top", &self.subjects(false))
    }

    /// Graphite's plaintext lines under `root`, at PVE's paths: a guest
    /// drive's under `ROOT.qemu.VMID` (a container's `ROOT.lxc.CTID`), a
    /// disk's and the node's under `ROOT.nodes.NODE`, a storage's under
    /// `ROOT.storages.NODE.ID`; then `pveprobe_top`, and the figure.
    pub fn graphite(&self, root: &str) -> String {
        let Ok(t) = self.timestamp.parse::<jiff::Timestamp>() else {
            return String::new();
        };
        let word = |v: &str| -> String {
            v.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        let node = word(&self.node);
        let mut out = String::new();
        for s in self.subjects(true) {
            let label = |k: &str| {
                s.labels
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map_or(String::new(), |(_, v)| word(v))
            };
            let base = match label("object").as_str() {
                "top_guest" => {
                    let guest = s
                        .labels
                        .iter()
                        .find(|(n, _)| *n == "guest")
                        .map(|(_, v)| v.as_str());
                    let (kind, id) = guest.and_then(|g| g.split_once('/')).unwrap_or(("vm", ""));
                    let kind = if kind == "ct" { "lxc" } else { "qemu" };
                    match label("drive") {
                        d if d.is_empty() => format!("{kind}.{}.pveprobe_top", word(id)),
                        d => format!("{kind}.{}.pveprobe_top.{d}", word(id)),
                    }
                }
                "top_guest_use" | "top_guest_net" => {
                    let guest = label("guest");
                    let (kind, id) = guest.split_once('_').unwrap_or(("vm", ""));
                    let kind = if kind == "ct" { "lxc" } else { "qemu" };
                    match label("net") {
                        n if n.is_empty() => format!("{kind}.{id}.pveprobe_top"),
                        n => format!("{kind}.{id}.pveprobe_top.{n}"),
                    }
                }
                "top_disk" => format!("nodes.{node}.pveprobe_top.disks.{}", label("disk")),
                "top_storage" => format!("storages.{node}.{}.pveprobe_top", label("storage")),
                _ => format!("nodes.{node}.pveprobe_top"),
            };
            for g in s.gauges.iter().filter(|g| g.value.is_finite()) {
                out += &format!("{root}.{base}.{} {} {}\n", g.field, g.value, t.as_second());
            }
        }
        out
    }
}

/// An interval as a document, in every format: what the session checks
/// the format and `--append`'s CSV header against. `top` writes each
/// interval as it comes, with its own CSV header once.
impl crate::output::Document for TopSample {
    const PICTURE: bool = true;

    /// The view: the node's pressure, the guests busiest first, the disks,
    /// the hints.
    fn text(&self) -> String {
        let p = &self.pressure;
        let mut out = format!(
            "pveprobe top: {} at {}, over {:.1} s (read-only; this sampling: {:.1}% of a CPU, {} MiB)\n\
             IO delay {}   IO pressure some {} full {}   CPU pressure {}   memory pressure {}   dirty {} MiB, writeback {} MiB, swap in/out {}/{} MiB/s\n{}\n",
            self.node,
            super::when::local(&self.timestamp),
            self.seconds,
            self.own.cpu_pct,
            self.own.rss_kib / 1024,
            pct(p.iowait_pct),
            pct(p.io_some_pct),
            pct(p.io_full_pct),
            pct(p.cpu_some_pct),
            pct(p.memory_some_pct),
            opt(p.dirty_mib, 0),
            opt(p.writeback_mib, 0),
            opt(p.swap_in_mib_s, 1),
            opt(p.swap_out_mib_s, 1),
            node_use_line(self),
        );
        out += &format!(
            "\n{:<24}{:<12}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}  {}\n",
            "GUEST", "ON", "R IOPS", "W IOPS", "R MiB/s", "W MiB/s", "R ms", "W ms", "NAME"
        );
        for g in &self.guests {
            out += &guest_row(g);
        }
        if self.guests.is_empty() {
            out += "  (no running guest)\n";
        }
        out += &format!(
            "\n{:<24}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>7}{:>7}  {}\n",
            "DISK",
            "R IOPS",
            "W IOPS",
            "R MiB/s",
            "W MiB/s",
            "R AWAIT",
            "W AWAIT",
            "QUEUE",
            "UTIL",
            "STORAGES AND GUESTS"
        );
        for d in &self.disks {
            out += &format!(
                "{:<24}{:>9.0}{:>9.0}{:>9.1}{:>9.1}{:>9}{:>9}{:>7.1}{:>6.0}%  {}\n",
                d.name,
                d.read_iops,
                d.write_iops,
                d.read_mib_s,
                d.write_mib_s,
                opt(d.read_await_ms, 2),
                opt(d.write_await_ms, 2),
                d.queue,
                d.util_pct,
                d.storages
                    .iter()
                    .chain(&d.guests)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        out += &use_text(self);
        out += &self.jobs_text();
        if !self.hints.is_empty() {
            out += "\nHINTS\n";
            for h in &self.hints {
                out += &format!("  {h}\n");
            }
        }
        for n in &self.notes {
            out += &format!("note: {n}\n");
        }
        out
    }

    /// Its CSV rows (`header`: the header first).
    fn csv(&self, header: bool) -> String {
        let mut rows: Vec<Vec<String>> = Vec::new();
        let f = |v: f64| format!("{v:.3}");
        let o = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        let io_some = o(self.pressure.io_some_pct);
        for g in self.guests.iter().filter(|g| !g.busy && g.error.is_none()) {
            rows.push(vec![
                self.timestamp.clone(),
                self.node.clone(),
                g.label(),
                g.kind.clone(),
                g.disk.clone().unwrap_or_default(),
                f(g.read_iops),
                f(g.write_iops),
                f(g.read_mib_s),
                f(g.write_mib_s),
                o(g.read_ms),
                o(g.write_ms),
                String::new(),
                String::new(),
                io_some.clone(),
            ]);
        }
        for d in &self.disks {
            rows.push(vec![
                self.timestamp.clone(),
                self.node.clone(),
                d.name.clone(),
                "disk".into(),
                String::new(),
                f(d.read_iops),
                f(d.write_iops),
                f(d.read_mib_s),
                f(d.write_mib_s),
                o(d.read_await_ms),
                o(d.write_await_ms),
                f(d.util_pct),
                f(d.queue),
                io_some.clone(),
            ]);
        }
        for j in &self.jobs {
            let mut row = vec![
                self.timestamp.clone(),
                self.node.clone(),
                format!("{} {}", j.kind, j.what),
                "job".to_string(),
            ];
            row.resize(13, String::new());
            row.push(io_some.clone());
            rows.push(row);
        }
        // The I/O columns end at io_some_pct: the rows so far stop there.
        for row in &mut rows {
            row.resize(CSV_HEADER.len(), String::new());
        }
        for g in &self.guest_use {
            let mut row = vec![
                self.timestamp.clone(),
                self.node.clone(),
                g.label(),
                "guest".to_string(),
            ];
            row.resize(13, String::new());
            row.push(io_some.clone());
            row.extend([
                o(g.cpu.used_pct),
                o(g.cpu.ready_pct),
                o(g.cpu.limited_pct),
                o(g.memory.host_mib),
                o(g.memory.swap_mib),
            ]);
            row.resize(CSV_HEADER.len(), String::new());
            rows.push(row);
            for n in &g.net {
                let mut row = vec![
                    self.timestamp.clone(),
                    self.node.clone(),
                    format!("{} {}", g.label(), n.net),
                    "net".to_string(),
                    n.interface.clone(),
                ];
                row.resize(13, String::new());
                row.push(io_some.clone());
                row.resize(19, String::new());
                row.extend([f(n.rx_mib_s), f(n.tx_mib_s), f(n.drops_s())]);
                rows.push(row);
            }
        }
        crate::output::csv::table(header.then_some(CSV_HEADER), rows)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(CSV_HEADER.to_vec())
    }

    fn metrics(&self, format: crate::output::Format) -> String {
        match format {
            crate::output::Format::Influx => self.influx(),
            _ => self.prometheus(),
        }
    }
}

/// Reads and writes a second and bytes a second as gauges.
fn io_gauges(r: f64, w: f64, rm: f64, wm: f64) -> Vec<Gauge> {
    vec![
        Gauge::new(
            ("read_ops_per_second", "reads a second"),
            r,
            ("read_iops", r),
        ),
        Gauge::new(
            ("write_ops_per_second", "writes a second"),
            w,
            ("write_iops", w),
        ),
        Gauge::new(
            ("read_bytes_per_second", "bytes read a second"),
            rm * 1048576.0,
            ("read_mib_s", rm),
        ),
        Gauge::new(
            ("write_bytes_per_second", "bytes written a second"),
            wm * 1048576.0,
            ("write_mib_s", wm),
        ),
    ]
}

/// A guest drive's gauges: its I/O and, for a VM, its latencies.
fn guest_gauges(g: &GuestIo) -> Vec<Gauge> {
    let mut gauges = io_gauges(g.read_iops, g.write_iops, g.read_mib_s, g.write_mib_s);
    const MEAN: &str = "mean latency as the guest waited (QEMU's counters), seconds";
    const P99: &str =
        "99th percentile of the interval's latency (QEMU's histogram, where set), seconds";
    const MAX: &str = "longest operation in QEMU's latency window (where set), seconds";
    for (name, help, field, v) in [
        ("read_latency_seconds", MEAN, "read_ms", g.read_ms),
        ("write_latency_seconds", MEAN, "write_ms", g.write_ms),
        ("read_p99_seconds", P99, "read_p99_ms", g.read_p99_ms),
        ("write_p99_seconds", P99, "write_p99_ms", g.write_p99_ms),
        ("read_max_seconds", MAX, "read_max_ms", g.read_max_ms),
        ("write_max_seconds", MAX, "write_max_ms", g.write_max_ms),
    ] {
        if let Some(ms) = v {
            gauges.push(Gauge::new((name, help), ms / 1000.0, (field, ms)));
        }
    }
    gauges
}

fn guest_row(g: &GuestIo) -> String {
    let name = g.name.clone().unwrap_or_default();
    if g.busy {
        return format!(
            "{:<24}{:<12}  its QMP socket was busy (another client): read next time  {name}\n",
            g.label(),
            g.disk.as_deref().unwrap_or("-")
        );
    }
    if let Some(e) = &g.error {
        return format!("{:<24}{:<12}  not read: {e}  {name}\n", g.label(), "-");
    }
    let mut qemu = Vec::new();
    if let (Some(r), Some(w)) = (g.read_p99_ms, g.write_p99_ms) {
        qemu.push(format!("p99 {r:.1}/{w:.1} ms"));
    } else if let Some(p) = g.read_p99_ms.or(g.write_p99_ms) {
        qemu.push(format!("p99 {p:.1} ms"));
    }
    if let (Some(win), Some(r), Some(w)) = (g.window_s, g.read_max_ms, g.write_max_ms) {
        qemu.push(format!("max {r:.1}/{w:.1} ms in {win} s"));
    }
    let name = if qemu.is_empty() {
        name
    } else {
        format!("{name} ({})", qemu.join(", "))
    };
    format!(
        "{:<24}{:<12}{:>9.0}{:>9.0}{:>9.1}{:>9.1}{:>9}{:>9}  {name}\n",
        g.label(),
        g.disk.as_deref().unwrap_or("-"),
        g.read_iops,
        g.write_iops,
        g.read_mib_s,
        g.write_mib_s,
        opt(g.read_ms, 2),
        opt(g.write_ms, 2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodeio::sample::{DiskIo, NodePressure};
    use crate::output::Document as _;

    fn sample() -> TopSample {
        TopSample {
            node: "pve1".into(),
            timestamp: "2026-12-05T09:00:00Z".into(),
            seconds: 1.0,
            pressure: NodePressure {
                io_some_pct: Some(35.0),
                iowait_pct: Some(12.5),
                ..NodePressure::default()
            },
            guests: vec![
                GuestIo {
                    kind: "vm".into(),
                    id: 101,
                    name: Some("db".into()),
                    drive: Some("scsi0".into()),
                    disk: Some("dm-5".into()),
                    write_iops: 2500.0,
                    write_mib_s: 9.8,
                    write_ms: Some(6.25),
                    ..GuestIo::default()
                },
                GuestIo {
                    kind: "vm".into(),
                    id: 102,
                    busy: true,
                    ..GuestIo::default()
                },
            ],
            disks: vec![DiskIo {
                name: "dm-5".into(),
                write_iops: 2400.0,
                write_mib_s: 9.6,
                write_await_ms: Some(0.4),
                util_pct: 97.0,
                queue: 1.2,
                guests: vec!["VM 101 scsi0".into()],
                ..DiskIo::default()
            }],
            ..TopSample::default()
        }
    }

    #[test]
    fn the_view_has_the_pressure_each_guest_and_disk() {
        let text = sample().text();
        assert!(
            text.contains("IO delay 12.5%   IO pressure some 35.0%"),
            "{text}"
        );
        let vm = text
            .lines()
            .find(|l| l.starts_with("VM 101 scsi0"))
            .unwrap();
        assert!(
            vm.contains("dm-5") && vm.contains("2500") && vm.contains("6.25") && vm.ends_with("db"),
            "{vm}"
        );
        let busy = text.lines().find(|l| l.starts_with("VM 102")).unwrap();
        assert!(busy.contains("busy (another client)"), "{busy}");
        let disk = text.lines().find(|l| l.starts_with("dm-5")).unwrap();
        assert!(
            disk.contains("97%") && disk.ends_with("VM 101 scsi0"),
            "{disk}"
        );
    }

    #[test]
    fn csv_rows_leave_out_a_guest_not_read() {
        let csv = sample().csv(true);
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows[0], CSV_HEADER.join(","));
        assert_eq!(rows.len(), 3, "{csv}");
        assert!(
            rows[1].contains(",VM 101 scsi0,vm,dm-5,0.000,2500.000,"),
            "{csv}"
        );
        assert!(rows[2].contains(",dm-5,disk,,"), "{csv}");
    }

    #[test]
    fn metrics_have_guests_disks_and_the_node() {
        let prom = sample().prometheus();
        assert!(
            prom.contains("pveprobe_top_write_latency_seconds{guest=\"vm/101\",drive=\"scsi0\",disk=\"dm-5\",node=\"pve1\"} 0.00625"),
            "{prom}"
        );
        assert!(
            prom.contains("pveprobe_top_utilization_ratio{disk=\"dm-5\",node=\"pve1\"} 0.97"),
            "{prom}"
        );
        assert!(
            prom.contains("pveprobe_top_io_some_ratio{node=\"pve1\"} 0.35"),
            "{prom}"
        );
        assert!(!prom.contains("vm/102"), "{prom}");
        let influx = sample().influx();
        assert!(influx.contains("object=top_guest"), "{influx}");
    }

    /// `sample()` with a VM's CPU, memory and an interface, and the node's.
    fn whole() -> TopSample {
        use crate::nodeio::guests::{GuestCpu, GuestMemory, GuestNet, GuestUse, NodeUse};
        TopSample {
            guest_use: vec![GuestUse {
                kind: "vm".into(),
                id: 101,
                name: Some("db".into()),
                cpu: GuestCpu {
                    used_pct: Some(150.0),
                    vcpus: 2,
                    ready_pct: Some(22.5),
                    limited_pct: Some(0.0),
                    ..GuestCpu::default()
                },
                memory: GuestMemory {
                    host_mib: Some(2048.0),
                    swap_mib: Some(0.0),
                    max_mib: Some(4096.0),
                    balloon_mib: Some(3072.0),
                    ..GuestMemory::default()
                },
                net: vec![GuestNet {
                    net: "net0".into(),
                    interface: "tap101i0".into(),
                    rx_mib_s: 1.5,
                    rx_drops_s: 3.0,
                    ..GuestNet::default()
                }],
                oom_kills: 0,
            }],
            node_use: NodeUse {
                cores: Some(4),
                vcpus: 8,
                overcommit: Some(2.0),
                memory_mib: Some(16384.0),
                available_mib: Some(8192.0),
                guest_memory_mib: 4096.0,
                oom_kills: 1,
                ..NodeUse::default()
            },
            ..sample()
        }
    }

    #[test]
    fn the_whole_guest_is_in_every_format() {
        let s = whole();
        let text = s.text();
        assert!(text.contains("CPU 8 vCPUs on 4 cores (2.0:1)"), "{text}");
        assert!(text.contains("OOM KILLS 1"), "{text}");
        let row = text.lines().find(|l| l.starts_with("VM 101  ")).unwrap();
        for cell in ["150", "22.5%", "0.0%", "2048", "3072/4096", "db"] {
            assert!(row.contains(cell), "{cell}: {row}");
        }
        assert!(
            text.lines()
                .any(|l| l.starts_with("VM 101") && l.contains("tap101i0") && l.contains("1.50")),
            "{text}"
        );
        let csv = s.csv(true);
        let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
        assert!(rows.iter().all(|r| r.len() == CSV_HEADER.len()), "{csv}");
        let col = |name| CSV_HEADER.iter().position(|h| *h == name).unwrap();
        let guest = rows.iter().find(|r| r[3] == "guest").unwrap();
        assert_eq!(guest[2], "VM 101");
        assert_eq!(guest[col("cpu_ready_pct")], "22.500");
        let net = rows.iter().find(|r| r[3] == "net").unwrap();
        assert_eq!((net[2], net[4]), ("VM 101 net0", "tap101i0"));
        assert_eq!(net[col("net_drops_s")], "3.000");
        let prom = s.prometheus();
        for line in [
            "pveprobe_top_cpu_ready_ratio{guest=\"vm/101\",node=\"pve1\"} 0.225",
            "pveprobe_top_receive_drops_per_second{guest=\"vm/101\",net=\"net0\",interface=\"tap101i0\",node=\"pve1\"} 3",
            "pveprobe_top_vcpus_per_core{node=\"pve1\"} 2",
            "pveprobe_top_oom_kills{node=\"pve1\"} 1",
        ] {
            assert!(prom.contains(line), "{line}\n{prom}");
        }
        let graphite = s.graphite("proxmox");
        assert!(
            graphite.contains("proxmox.qemu.101.pveprobe_top.cpu_ready_pct 22.5 "),
            "{graphite}"
        );
        assert!(
            graphite.contains("proxmox.qemu.101.pveprobe_top.net0.rx_drops_s 3 "),
            "{graphite}"
        );
        // A sample of schema 1 (before the whole guest) reads back.
        let mut old = serde_json::to_value(sample()).unwrap();
        let o = old.as_object_mut().unwrap();
        o.remove("guest_use");
        o.remove("node_use");
        o.insert("schema_version".into(), 1.into());
        let back: TopSample = serde_json::from_value(old).unwrap();
        assert!(back.guest_use.is_empty() && back.node_use.cores.is_none());
    }

    #[test]
    fn a_json_line_reads_back_as_the_sample() {
        let s = sample();
        let line = crate::output::json(&s, false);
        assert!(!line.trim_end().contains('\n'));
        let back: TopSample = serde_json::from_str(&line).unwrap();
        assert_eq!(back, s);
    }
}
