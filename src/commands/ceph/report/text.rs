//! The ceph document as text: the OSD table, the pools' jobs, the
//! networks, then the hints, notes and what was left behind.

use super::*;

pub(super) fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

pub(super) fn flag(v: Option<bool>, yes: &str, no: &str) -> String {
    match v {
        Some(true) => yes.into(),
        Some(false) => no.into(),
        None => "-".into(),
    }
}

impl CephReport {
    pub(super) fn text_table(&self) -> String {
        let mut out = format!(
            "CEPH {} ({}): {} OSDs, run {}\n",
            self.fsid.as_deref().unwrap_or("?"),
            self.health.as_deref().unwrap_or("health unknown"),
            self.osds.len(),
            self.run_id
        );
        out += &format!(
            "\n{:<9}{:<12}{:<7}{:<10}{:<6}{:<9}{:>8}{:>8}{:>7}{:>13}{:>12}\n",
            "OSD",
            "HOST",
            "CLASS",
            "STORE",
            "DATA",
            "DB",
            "COMMIT",
            "APPLY",
            "USE%",
            "BENCH MiB/s",
            "4K IOPS"
        );
        for o in &self.osds {
            let db = match (o.dedicated_db, o.db_rotational) {
                (Some(false), _) => "shared".to_string(),
                (Some(true), r) => flag(r, "hdd", "flash"),
                (None, _) => "-".into(),
            };
            out += &format!(
                "{:<9}{:<12}{:<7}{:<10}{:<6}{:<9}{:>8}{:>8}{:>7}{:>13}{:>12}\n",
                format!(
                    "{}{}osd.{}",
                    if o.slow { "!" } else { "" },
                    if o.drags { "*" } else { "" },
                    o.id
                ),
                o.host.as_deref().unwrap_or("-"),
                o.device_class.as_deref().unwrap_or("-"),
                o.objectstore.as_deref().unwrap_or("-"),
                flag(o.data_rotational, "hdd", "flash"),
                db,
                opt(o.commit_ms, 1),
                opt(o.apply_ms, 1),
                opt(o.utilization, 1),
                opt(o.bench_4m.as_ref().map(|b| b.mib_s), 0),
                opt(o.bench_4k.as_ref().map(|b| b.iops), 0),
            );
            for e in &o.errors {
                out += &format!("         not measured: {e}\n");
            }
        }
        for o in &self.osds {
            for h in &o.health {
                let what = unhealthy(h);
                out += &format!(
                    "  osd.{}: {} {}: {}\n",
                    o.id,
                    h.source.trim_start_matches("smartctl "),
                    h.model.as_deref().unwrap_or(""),
                    if what.is_empty() {
                        "healthy".to_string()
                    } else {
                        what.join(", ")
                    }
                );
            }
            for (disk, l) in &o.links {
                out += &format!(
                    "  osd.{}: {disk} {} link {} at {}{}\n",
                    o.id,
                    l.kind,
                    l.at,
                    l.current,
                    l.capable
                        .as_deref()
                        .filter(|_| l.degraded())
                        .map(|c| format!(
                            ", {} can do {c}",
                            l.capable_by.as_deref().unwrap_or("both ends")
                        ))
                        .unwrap_or_default()
                );
            }
            if let Some(p) = &o.published {
                out += &format!(
                    "  osd.{}: {} is a {}, published SYNC WRITE 4K {:.0}/s ({})\n",
                    o.id, p.disk, p.model, p.iops, p.source
                );
            }
        }
        out += &self.marks();
        out += &self.pool_tables();
        out += &self.closing();
        out
    }

    /// What the OSD table's marks mean, for those it shows.
    fn marks(&self) -> String {
        let mut out = String::new();
        if self.osds.iter().any(|o| o.slow) {
            out += &format!(
                "  ! more than {:.0}% below its device class's median\n",
                SLOW_SHARE * 100.0
            );
        }
        if self.osds.iter().any(|o| o.drags) {
            out += &format!(
                "  * its operations in a pool job more than {LATENCY_FACTOR:.0}x its device class's median (its perf counters)\n"
            );
        }
        out
    }

    /// Each pool's settings and bench jobs.
    fn pool_tables(&self) -> String {
        let mut out = String::new();
        for p in &self.pools {
            out += &format!(
                "\nPOOL {} ({}, size {}, min_size {}, {} PGs{}; {})\n",
                p.name,
                p.kind,
                p.size.map(|n| n.to_string()).unwrap_or_else(|| "?".into()),
                p.min_size
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "?".into()),
                p.pg_num
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "?".into()),
                p.pg_num_wanted
                    .map(|n| format!(", autoscaler wants {n}"))
                    .unwrap_or_default(),
                if p.applications.is_empty() {
                    "no application".to_string()
                } else {
                    p.applications.join(",")
                }
            );
            if !p.jobs.is_empty() {
                out += &format!(
                    "  {:<26}{:>8}{:>10}{:>10}{:>10}{:>10}  {}\n",
                    "JOB",
                    "THREADS",
                    "MiB/s",
                    "IOPS",
                    "AVG ms",
                    "MAX ms",
                    "SECONDS MiB/s (first, slowest, last)"
                );
            }
            for j in p.jobs.iter().filter(|j| j.clients.is_empty()) {
                out += &job_row(&j.label, &j.figure, &seconds_of(&j.figure));
            }
            out += &clients_table(p);
            for e in &p.errors {
                out += &format!("  not measured: {e}\n");
            }
        }
        out
    }

    /// The nodes' links of Ceph's networks, the hints, notes and what was left.
    fn closing(&self) -> String {
        let mut out = String::new();
        for l in &self.networks {
            out += &format!(
                "\nNETWORK {} {}{}: {}{}{}\n",
                l.kind,
                l.network,
                l.node
                    .as_deref()
                    .map(|n| format!(" on {n}"))
                    .unwrap_or_default(),
                l.interface
                    .as_deref()
                    .unwrap_or("no interface of the node in it"),
                l.speed_mbps
                    .map(|s| format!(", {s} Mb/s"))
                    .unwrap_or_default(),
                l.shares_corosync
                    .as_deref()
                    .map(|w| format!(", shared with corosync ({w})"))
                    .unwrap_or_default()
            );
        }
        if !self.hints.is_empty() {
            out += "\nHINTS\n";
            for h in &self.hints {
                out += &format!("  {h}\n");
            }
        }
        for n in &self.notes {
            out += &format!("\nnote: {n}\n");
        }
        for left in &self.left_behind {
            out += &format!("\nLEFT BEHIND: {left}\n");
        }
        out
    }

    /// A row per figure: each OSD's two benches and latencies, each pool job.
    pub(super) fn csv_text(&self, header: bool) -> String {
        let mut rows = Vec::new();
        let o2 = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        let fsid = self.fsid.clone().unwrap_or_default();
        let mut row =
            |subject: String, test: &str, f: Option<&BenchFigure>, extra: [Option<f64>; 3]| {
                rows.push([
                    self.timestamp.clone(),
                    fsid.clone(),
                    self.run_id.clone(),
                    subject,
                    test.to_string(),
                    f.map(|f| f.block.to_string()).unwrap_or_default(),
                    f.map(|f| f.threads.to_string()).unwrap_or_default(),
                    o2(f.map(|f| f.mib_s)),
                    o2(f.map(|f| f.iops)),
                    o2(f.and_then(|f| f.avg_lat_ms)),
                    o2(f.and_then(|f| f.max_lat_ms)),
                    o2(extra[0]),
                    o2(extra[1]),
                    o2(extra[2]),
                ]);
            };
        for o in &self.osds {
            let latency = [o.commit_ms, o.apply_ms, o.utilization];
            row(
                format!("osd.{}", o.id),
                "osd_bench_4m",
                o.bench_4m.as_ref(),
                latency,
            );
            row(
                format!("osd.{}", o.id),
                "osd_bench_4k",
                o.bench_4k.as_ref(),
                latency,
            );
        }
        for p in &self.pools {
            for j in &p.jobs {
                let pool = match j.clients.len() {
                    0 => format!("pool {}", p.name),
                    n => format!("pool {} from {n} clients", p.name),
                };
                row(pool, &j.key, Some(&j.figure), [None; 3]);
                for c in &j.clients {
                    row(
                        format!("pool {} client {}", p.name, c.node),
                        &j.key,
                        c.figure.as_ref(),
                        [None; 3],
                    );
                }
            }
        }
        // Each OSD's own view of each job: its operations, their mean
        // latency (avg_lat_ms) and BlueStore's commit (commit_ms).
        for p in &self.pools {
            for j in &p.jobs {
                for x in &j.osds {
                    let seen = BenchFigure {
                        block: j.figure.block,
                        seconds: j.figure.seconds,
                        ops: x.ops as f64,
                        iops: if j.figure.seconds > 0.0 {
                            x.ops as f64 / j.figure.seconds
                        } else {
                            0.0
                        },
                        avg_lat_ms: x.op_ms,
                        ..BenchFigure::default()
                    };
                    let clients = if j.clients.is_empty() { "" } else { "_clients" };
                    row(
                        format!("osd.{}", x.id),
                        &format!("in_{}_{}{clients}", p.name, j.key),
                        Some(&seen),
                        [x.commit_ms, None, None],
                    );
                }
            }
        }
        crate::output::csv::table(header.then_some(CSV_HEADER), rows)
    }
}

/// A job's row of the pool table.
fn job_row(label: &str, f: &BenchFigure, tail: &str) -> String {
    format!(
        "  {:<26}{:>8}{:>10}{:>10}{:>10}{:>10}  {tail}\n",
        label,
        f.threads,
        format!("{:.1}", f.mib_s),
        format!("{:.0}", f.iops),
        opt(f.avg_lat_ms, 2),
        opt(f.max_lat_ms, 1),
    )
}

/// A job's first, slowest and last second (MiB/s).
fn seconds_of(f: &BenchFigure) -> String {
    match (f.per_second.first(), f.per_second.last()) {
        (Some(first), Some(last)) => {
            let low = f.per_second.iter().copied().fold(f64::INFINITY, f64::min);
            format!("{first:.1}, {low:.1}, {last:.1}")
        }
        _ => "-".into(),
    }
}

/// The jobs run from several clients at once: each job's total beside
/// the one-client figure of the same job, then a line per client with
/// its node's link on Ceph's public network and when it started.
fn clients_table(p: &PoolResult) -> String {
    let together: Vec<&PoolJob> = p.jobs.iter().filter(|j| !j.clients.is_empty()).collect();
    let Some(first) = together.first() else {
        return String::new();
    };
    let skews: Vec<f64> = together
        .iter()
        .flat_map(|j| &j.clients)
        .filter_map(|c| c.skew_ms)
        .collect();
    let spread = skews.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - skews.iter().copied().fold(f64::INFINITY, f64::min);
    let mut out = format!(
        "  FROM {} CLIENTS AT ONCE ({}){}: totals, each beside the job from this node alone\n",
        first.clients.len(),
        first
            .clients
            .iter()
            .map(|c| c.node.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        if skews.is_empty() {
            String::new()
        } else {
            format!("; their benches started within {spread:.0} ms of each other")
        }
    );
    for j in together {
        let alone = p
            .jobs
            .iter()
            .find(|a| a.clients.is_empty() && a.key == j.key);
        let iops = j.key.contains("4k");
        let beside = match alone {
            Some(a) if iops && a.figure.iops > 0.0 => format!(
                "one client {:.0} IOPS: x{:.2}",
                a.figure.iops,
                j.figure.iops / a.figure.iops
            ),
            Some(a) if a.figure.mib_s > 0.0 => format!(
                "one client {:.1} MiB/s: x{:.2}",
                a.figure.mib_s,
                j.figure.mib_s / a.figure.mib_s
            ),
            _ => String::new(),
        };
        out += &job_row(&j.label, &j.figure, &beside);
        for c in &j.clients {
            let link = c
                .link
                .as_ref()
                .map(|l| {
                    format!(
                        "{}{}",
                        l.interface
                            .as_deref()
                            .unwrap_or("no link in the public network"),
                        l.speed_mbps
                            .map(|s| format!(" {s} Mb/s"))
                            .unwrap_or_default()
                    )
                })
                .unwrap_or_else(|| "public network link unknown".into());
            match (&c.figure, &c.error) {
                (Some(f), _) => {
                    let tail = format!(
                        "{link}{}",
                        c.skew_ms
                            .map(|s| format!(", started {s:+.0} ms"))
                            .unwrap_or_default()
                    );
                    out += &job_row(&format!("  {}", c.node), f, &tail);
                }
                (None, e) => {
                    out += &format!(
                        "    {:<24}not measured: {}\n",
                        c.node,
                        e.as_deref().unwrap_or("no answer")
                    );
                }
            }
        }
    }
    out
}
