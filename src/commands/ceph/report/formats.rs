//! The ceph document's other formats: a CSV row per figure, each OSD's
//! figures as metrics, `--plot`'s seconds of each rados bench, and the
//! document the session writes ([`CephDocument`]).

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

/// Set by the session before rendering: whether the CSV starts with its header.
#[derive(Debug, Clone, Serialize)]
pub struct CephDocument {
    #[serde(flatten)]
    pub report: CephReport,
    #[serde(skip)]
    pub csv_header: bool,
}

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

    /// Per OSD, in InfluxDB line protocol: measurement `pveprobe_ceph`,
    /// tags `object=ceph`, `fsid`, `osd`, `host`, `class`; the run's time.
    pub fn influx(&self) -> String {
        gauges::influx("pveprobe_ceph", &self.subjects(true), &self.timestamp)
    }

    /// Per OSD, in Prometheus' text format: `pveprobe_ceph_osd_*` gauges in
    /// base units, labels `osd`, `host`, `class` (no timestamps: the
    /// textfile collector refuses them).
    pub fn prometheus(&self) -> String {
        gauges::prometheus("pveprobe_ceph_osd", &self.subjects(false))
    }
}

impl crate::output::Render for CephDocument {
    fn metrics(&self, format: crate::output::Format) -> String {
        match format {
            crate::output::Format::Influx => self.report.influx(),
            _ => self.report.prometheus(),
        }
    }

    fn text(&self) -> String {
        self.report.text()
    }

    fn csv(&self) -> String {
        self.report.csv(self.csv_header)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(CSV_HEADER.to_vec())
    }

    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        let (title, points) = self.report.timeline()?;
        Some(crate::output::plot::series_svg(&title, "MiB/s", &points))
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
        for j in pool.jobs.iter().filter(|j| j.key.starts_with("rados_")) {
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
