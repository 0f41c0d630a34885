//! The ceph document's other formats: a CSV row per figure, each OSD's
//! figures as metrics, `--plot`'s seconds of each rados bench, and the
//! document the session writes ([`CephDocument`]).

use super::*;

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

/// A gauge's name, `# HELP` and samples (labels, value).
type Gauge = (&'static str, &'static str, Vec<(String, f64)>);

/// Each OSD's figures as metrics: name (after `pveprobe_ceph_osd_`), the
/// value in Prometheus' base unit, its `# HELP`, and the Influx field name
/// and value as the table prints it.
pub(super) fn osd_metrics(
    o: &OsdResult,
) -> Vec<(&'static str, f64, &'static str, &'static str, f64)> {
    let mib = 1048576.0;
    let mut out = Vec::new();
    if let Some(b) = &o.bench_4m {
        out.push((
            "bench_4m_bytes_per_second",
            b.mib_s * mib,
            "ceph tell osd.N bench, 1 GiB in 4 MiB writes, bytes per second; higher is better",
            "bench_4m_mib_per_s",
            b.mib_s,
        ));
    }
    if let Some(b) = &o.bench_4k {
        out.push((
            "bench_4k_per_second",
            b.iops,
            "ceph tell osd.N bench in 4 KiB writes, writes per second; higher is better",
            "bench_4k_iops",
            b.iops,
        ));
    }
    if let Some(ms) = o.commit_ms {
        out.push((
            "commit_latency_seconds",
            ms / 1000.0,
            "ceph osd perf commit latency, seconds; lower is better",
            "commit_ms",
            ms,
        ));
    }
    if let Some(ms) = o.apply_ms {
        out.push((
            "apply_latency_seconds",
            ms / 1000.0,
            "ceph osd perf apply latency, seconds; lower is better",
            "apply_ms",
            ms,
        ));
    }
    if let Some(pct) = o.utilization {
        out.push((
            "used_ratio",
            pct / 100.0,
            "share of the OSD used (ceph osd df), 0 to 1",
            "used_pct",
            pct,
        ));
    }
    out
}

impl CephReport {
    /// Per OSD, in InfluxDB line protocol: measurement `pveprobe_ceph`,
    /// tags `object=ceph`, `fsid`, `osd`, `host`, `class`; the run's time.
    pub fn influx(&self) -> String {
        use crate::output::metrics::influx::tag_value;
        let ns = self
            .timestamp
            .parse::<jiff::Timestamp>()
            .ok()
            .map(|t| t.as_nanosecond());
        let mut out = String::new();
        for o in &self.osds {
            let fields: Vec<String> = osd_metrics(o)
                .into_iter()
                .filter(|m| m.4.is_finite())
                .map(|(_, _, _, field, v)| format!("{field}={v}"))
                .collect();
            if fields.is_empty() {
                continue;
            }
            let mut tags = vec![
                ("object", "ceph".to_string()),
                ("osd", format!("osd.{}", o.id)),
            ];
            for (k, v) in [
                ("fsid", &self.fsid),
                ("host", &o.host),
                ("class", &o.device_class),
            ] {
                if let Some(v) = v.as_deref().map(tag_value).filter(|v| !v.is_empty()) {
                    tags.push((k, v));
                }
            }
            tags.sort();
            let tags: Vec<String> = tags.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
            out += &format!(
                "pveprobe_ceph,{} {}{}\n",
                tags.join(","),
                fields.join(","),
                ns.map(|n| format!(" {n}")).unwrap_or_default()
            );
        }
        out
    }

    /// Per OSD, in Prometheus' text format: `pveprobe_ceph_osd_*` gauges in
    /// base units, labels `osd`, `host`, `class` (no timestamps: the
    /// textfile collector refuses them).
    pub fn prometheus(&self) -> String {
        use crate::output::metrics::prometheus::escape_label;
        let mut by_name: Vec<Gauge> = Vec::new();
        for o in &self.osds {
            let mut labels = vec![format!("osd=\"osd.{}\"", o.id)];
            for (k, v) in [("host", &o.host), ("class", &o.device_class)] {
                if let Some(v) = v {
                    labels.push(format!("{k}=\"{}\"", escape_label(v)));
                }
            }
            for (name, value, help, _, _) in osd_metrics(o) {
                if !value.is_finite() {
                    continue;
                }
                let sample = (format!("{{{}}}", labels.join(",")), value);
                match by_name.iter_mut().find(|(n, _, _)| *n == name) {
                    Some((_, _, samples)) => samples.push(sample),
                    None => by_name.push((name, help, vec![sample])),
                }
            }
        }
        let mut out = String::new();
        for (name, help, samples) in by_name {
            let metric = format!("pveprobe_ceph_osd_{name}");
            out += &format!("# HELP {metric} {help}\n# TYPE {metric} gauge\n");
            for (labels, v) in samples {
                out += &format!("{metric}{labels} {v}\n");
            }
        }
        out
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
