//! The ceph document's other formats: a CSV row per figure, each OSD's
//! figures as metrics, `--plot`'s seconds of each rados bench, and the
//! [`crate::output::Document`] the session writes.

use super::*;
use crate::output::metrics::gauges::{self, Gauge, Subject};

/// The CSV's columns.
pub const CSV_HEADER: [&str; 14] = [
    "timestamp",
    "fsid",
    "run_id",
    "subject",
    "test",
    "block_bytes",
    "threads",
    "mib_s",
    "iops",
    "avg_lat_ms",
    "max_lat_ms",
    "commit_ms",
    "apply_ms",
    "used_pct",
];

/// Each OSD's figures as gauges: name (after `pveprobe_ceph_osd_`) and
/// value in Prometheus' base unit, the InfluxDB field and value as the
/// table prints it.
pub(super) fn osd_metrics(o: &OsdResult) -> Vec<Gauge> {
    let mib = 1048576.0;
    let mut out = Vec::new();
    if let Some(b) = &o.bench_4m {
        out.push(Gauge::new(
            (
                "bench_4m_bytes_per_second",
                "ceph tell osd.N bench, 1 GiB in 4 MiB writes, bytes per second; higher is better",
            ),
            b.mib_s * mib,
            ("bench_4m_mib_per_s", b.mib_s),
        ));
    }
    if let Some(b) = &o.bench_4k {
        out.push(Gauge::new(
            (
                "bench_4k_per_second",
                "ceph tell osd.N bench in 4 KiB writes, writes per second; higher is better",
            ),
            b.iops,
            ("bench_4k_iops", b.iops),
        ));
    }
    if let Some(ms) = o.commit_ms {
        out.push(Gauge::new(
            (
                "commit_latency_seconds",
                "ceph osd perf commit latency, seconds; lower is better",
            ),
            ms / 1000.0,
            ("commit_ms", ms),
        ));
    }
    if let Some(ms) = o.apply_ms {
        out.push(Gauge::new(
            (
                "apply_latency_seconds",
                "ceph osd perf apply latency, seconds; lower is better",
            ),
            ms / 1000.0,
            ("apply_ms", ms),
        ));
    }
    if let Some(ms) = o.pool_op_ms {
        out.push(Gauge::new(
            (
                "pool_op_latency_seconds",
                "the slowest mean of the OSD's own operations in a pool job (perf dump over the job), seconds; lower is better",
            ),
            ms / 1000.0,
            ("pool_op_ms", ms),
        ));
        let drags = f64::from(u8::from(o.drags));
        out.push(Gauge::new(
            (
                "drags_pool",
                "1 when its operations in a pool job took more than 3x its class's median (osd-drags-pool)",
            ),
            drags,
            ("drags_pool", drags),
        ));
    }
    if let Some(pct) = o.utilization {
        out.push(Gauge::new(
            ("used_ratio", "share of the OSD used (ceph osd df), 0 to 1"),
            pct / 100.0,
            ("used_pct", pct),
        ));
    }
    out
}

/// A pool job's (or one client's part of it) figures as gauges.
fn job_metrics(f: &BenchFigure) -> Vec<Gauge> {
    let mut out = vec![
        Gauge::new(
            (
                "bytes_per_second",
                "rados or rbd bench, bytes per second; higher is better",
            ),
            f.mib_s * 1048576.0,
            ("mib_per_s", f.mib_s),
        ),
        Gauge::new(
            (
                "ops_per_second",
                "rados or rbd bench, operations per second; higher is better",
            ),
            f.iops,
            ("iops", f.iops),
        ),
    ];
    if let Some(ms) = f.avg_lat_ms {
        out.push(Gauge::new(
            (
                "latency_seconds",
                "rados bench's mean latency (over every client's operations), seconds; lower is better",
            ),
            ms / 1000.0,
            ("avg_lat_ms", ms),
        ));
    }
    out
}

impl CephReport {
    /// Each OSD as a metrics subject: labels `osd`, `host`, `class` (and
    /// for InfluxDB `object=ceph`, `fsid`).
    fn subjects(&self, influx: bool) -> Vec<Subject> {
        self.osds
            .iter()
            .map(|o| {
                let mut labels = vec![("osd", format!("osd.{}", o.id))];
                for (k, v) in [("host", &o.host), ("class", &o.device_class)] {
                    labels.push((k, v.clone().unwrap_or_default()));
                }
                if influx {
                    labels.push(("object", "ceph".into()));
                    labels.push(("fsid", self.fsid.clone().unwrap_or_default()));
                }
                Subject {
                    labels,
                    gauges: osd_metrics(o),
                }
            })
            .collect()
    }

    /// Each pool job as a metrics subject, and from several clients each
    /// client's part: labels `pool`, `job`, `clients` (how many ran it at
    /// once) and `client` (`total`, or the node; for InfluxDB also
    /// `object=ceph_pool`, `fsid`).
    fn pool_subjects(&self, influx: bool) -> Vec<Subject> {
        let mut out = Vec::new();
        for p in &self.pools {
            for j in &p.jobs {
                let parts = std::iter::once(("total".to_string(), Some(&j.figure))).chain(
                    j.clients
                        .iter()
                        .map(|c| (c.node.clone(), c.figure.as_ref())),
                );
                for (client, f) in parts {
                    let Some(f) = f else { continue };
                    let mut labels = vec![
                        ("pool", p.name.clone()),
                        ("job", j.key.clone()),
                        ("clients", j.clients.len().max(1).to_string()),
                        ("client", client),
                    ];
                    if influx {
                        labels.push(("object", "ceph_pool".into()));
                        labels.push(("fsid", self.fsid.clone().unwrap_or_default()));
                    }
                    out.push(Subject {
                        labels,
                        gauges: job_metrics(f),
                    });
                }
            }
        }
        out
    }

    /// Per OSD and per pool job, in InfluxDB line protocol: measurement
    /// `pveprobe_ceph`, tags `object=ceph`, `fsid`, `osd`, `host`, `class`
    /// (a pool job's: see `pool_subjects`); the run's time.
    pub fn influx(&self) -> String {
        let mut subjects = self.subjects(true);
        subjects.extend(self.pool_subjects(true));
        gauges::influx("pveprobe_ceph", &subjects, &self.timestamp)
    }

    /// Per OSD, in Prometheus' text format: `pveprobe_ceph_osd_*` gauges in
    /// base units, labels `osd`, `host`, `class`; per pool job
    /// `pveprobe_ceph_pool_*` (no timestamps: the textfile collector
    /// refuses them).
    pub fn prometheus(&self) -> String {
        gauges::prometheus("pveprobe_ceph_osd", &self.subjects(false))
            + &gauges::prometheus("pveprobe_ceph_pool", &self.pool_subjects(false))
    }
}

impl crate::output::Document for CephReport {
    const PICTURE: bool = true;

    fn metrics(&self, format: crate::output::Format) -> String {
        match format {
            crate::output::Format::Influx => self.influx(),
            _ => self.prometheus(),
        }
    }

    fn text(&self) -> String {
        self.text_table()
    }

    fn csv(&self, header: bool) -> String {
        self.csv_text(header)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(CSV_HEADER.to_vec())
    }

    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        use crate::output::plot::{Chart, Line, charts_svg, series_svg};
        let (title, points) = self.timeline()?;
        let Some((clients_title, lines)) = self.clients_timeline() else {
            return Some(series_svg(&title, "MiB/s", &points));
        };
        let chart = |title: String, lines: Vec<Line>| Chart {
            title,
            x_desc: "seconds, job after job".into(),
            unit: "MiB/s".into(),
            lines,
            mark_x: None,
        };
        let alone = Line {
            name: "this node alone".into(),
            points,
            tags: Vec::new(),
        };
        Some(charts_svg(
            "rados bench, each second: one client, then several at once",
            &[],
            &[chart(title, vec![alone]), chart(clients_title, lines)],
        ))
    }
}

impl CephReport {
    /// The first benched pool's rados bench seconds, job after job on one
    /// time axis (MiB/s each second), for `--plot`; its title names the jobs.
    pub fn timeline(&self) -> Option<(String, Vec<(f64, f64)>)> {
        let pool = self
            .pools
            .iter()
            .find(|p| p.jobs.iter().any(|j| !j.figure.per_second.is_empty()))?;
        let mut points = Vec::new();
        let mut names = Vec::new();
        let mut offset = 0.0;
        for j in pool
            .jobs
            .iter()
            .filter(|j| j.key.starts_with("rados_") && j.clients.is_empty())
        {
            for (i, v) in j.figure.per_second.iter().enumerate() {
                points.push((offset + i as f64 + 1.0, *v));
            }
            names.push(format!(
                "{} from {offset:.0} s",
                j.label.to_lowercase().replace("rados ", "")
            ));
            offset += j.figure.per_second.len() as f64;
        }
        Some((
            format!(
                "rados bench on pool {}, each second: {}",
                pool.name,
                names.join(", ")
            ),
            points,
        ))
    }
}

impl CephReport {
    /// The first benched pool's rados bench jobs from several clients at
    /// once: each client's seconds and their total, job after job on one
    /// time axis; `None` without such jobs.
    pub fn clients_timeline(&self) -> Option<(String, Vec<crate::output::plot::Line>)> {
        let pool = self
            .pools
            .iter()
            .find(|p| p.jobs.iter().any(|j| !j.clients.is_empty()))?;
        let jobs: Vec<&PoolJob> = pool
            .jobs
            .iter()
            .filter(|j| j.key.starts_with("rados_") && !j.clients.is_empty())
            .collect();
        let nodes: Vec<String> = jobs
            .first()?
            .clients
            .iter()
            .map(|c| c.node.clone())
            .collect();
        let mut lines: Vec<crate::output::plot::Line> = std::iter::once("total".to_string())
            .chain(nodes.iter().cloned())
            .map(|name| crate::output::plot::Line {
                name,
                points: Vec::new(),
                tags: Vec::new(),
            })
            .collect();
        let mut offset = 0.0;
        for j in &jobs {
            let mut seconds: Vec<&[f64]> = vec![&j.figure.per_second];
            for n in &nodes {
                let mine = j.clients.iter().find(|c| &c.node == n);
                seconds.push(
                    mine.and_then(|c| c.figure.as_ref())
                        .map_or(&[], |f| &f.per_second),
                );
            }
            for (line, each) in lines.iter_mut().zip(seconds) {
                line.points.extend(
                    each.iter()
                        .enumerate()
                        .map(|(i, v)| (offset + i as f64 + 1.0, *v)),
                );
            }
            offset += j.figure.per_second.len() as f64;
        }
        Some((
            format!(
                "pool {} from {} clients at once (total and each client)",
                pool.name,
                nodes.len()
            ),
            lines,
        ))
    }
}
