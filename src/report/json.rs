//! The JSON document (schema in `docs/report.schema.json`): the report as
//! plain data with every sample, for machines. Versioned by
//! [`SCHEMA_VERSION`]; `compare` and `--baseline` read it back.

use serde::{Deserialize, Serialize};

use super::{Devices, Line, Outcome, Report, Sample, Settings};
use crate::extended::XLine;
use crate::extended::engine::IoStats;
use crate::latency::{LatencySummary, merged};
use crate::probe::hostinfo::HostInfo;
use crate::storage::Storage;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonReport {
    pub schema_version: u32,
    pub pveprobe_version: String,
    /// When the run started, RFC 3339 in UTC.
    pub timestamp: Option<String>,
    pub path: String,
    pub settings: Settings,
    pub host: HostInfo,
    pub filesystem: Option<JsonFilesystem>,
    pub figures: Figures,
    /// What stands behind PATH (layers, disks, ZFS); see docs/output.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Storage>,
    /// The `-x` figures that were measured, in print order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extended: Vec<XFigure>,
    /// Lines that have no figure, and why.
    pub not_measured: Vec<NotMeasured>,
    pub notes: Vec<String>,
    /// The signal that cut the run short, if one did.
    pub interrupted_by_signal: Option<i32>,
    /// The wait for another probe on this host before measuring, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_for_probe: Option<super::Waited>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonFilesystem {
    pub source: String,
    pub fstype: String,
    pub mount_point: String,
    pub size_bytes: u64,
    pub available_bytes: u64,
    pub read_only: bool,
    /// The mount's and its superblock's options (mountinfo).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub options: String,
}

/// One object per pveperf line, in pveperf's order; absent when not measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_bogomips: Option<JsonFigure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex_per_second: Option<JsonFigure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hd_size: Option<JsonFigure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered_reads: Option<JsonFigure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_seek_time: Option<JsonFigure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsyncs_per_second: Option<JsonFigure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_ext: Option<JsonFigure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_int: Option<JsonFigure>,
}

impl Figures {
    pub fn get(&self, line: Line) -> Option<&JsonFigure> {
        match line {
            Line::CpuBogomips => self.cpu_bogomips.as_ref(),
            Line::RegexPerSecond => self.regex_per_second.as_ref(),
            Line::HdSize => self.hd_size.as_ref(),
            Line::BufferedReads => self.buffered_reads.as_ref(),
            Line::AverageSeekTime => self.average_seek_time.as_ref(),
            Line::FsyncsPerSecond => self.fsyncs_per_second.as_ref(),
            Line::DnsExt => self.dns_ext.as_ref(),
            Line::DnsInt => self.dns_int.as_ref(),
        }
    }

    fn slot(&mut self, line: Line) -> &mut Option<JsonFigure> {
        match line {
            Line::CpuBogomips => &mut self.cpu_bogomips,
            Line::RegexPerSecond => &mut self.regex_per_second,
            Line::HdSize => &mut self.hd_size,
            Line::BufferedReads => &mut self.buffered_reads,
            Line::AverageSeekTime => &mut self.average_seek_time,
            Line::FsyncsPerSecond => &mut self.fsyncs_per_second,
            Line::DnsExt => &mut self.dns_ext,
            Line::DnsInt => &mut self.dns_int,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JsonFigure {
    /// The pveperf label.
    pub label: String,
    pub unit: String,
    /// The median of the samples: what the text line prints.
    pub value: f64,
    /// One per run.
    pub samples: Vec<f64>,
    pub min: f64,
    pub max: f64,
    /// (max - min) / value.
    pub spread: f64,
    /// Per-operation latency over all runs (seek and fsync lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    /// The regex engine (REGEX/SECOND).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The block device read (BUFFERED READS, AVERAGE SEEK TIME).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Each device's figure (median over runs) when several were read in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_device: Option<Vec<PerDevice>>,
    /// Bytes per read (AVERAGE SEEK TIME: the logical block size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u32>,
    /// The search domain queried (DNS INT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Query counts over all runs (DNS lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<DnsCounts>,
    /// Each name server asked, in order, over all runs (DNS lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<DnsServer>>,
}

/// An extended figure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct XFigure {
    pub key: String,
    pub label: String,
    /// `MiB/s`, `IOPS` (read IOPS for the mix) or `ms` (FSYNC LATENCY: its p99).
    pub unit: String,
    pub value: f64,
    /// SEQ WRITE: MiB/s of each of its runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// `incompressible` or `zeros` (SEQ WRITE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// `io_uring` or `psync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Why io_uring did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_fallback: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<f64>,
    /// Per-read latency (for FSYNC LATENCY: per fsync iteration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_latency: Option<LatencySummary>,
    /// CPU time of the probe per operation, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_op: Option<f64>,
    /// MIXED: whether its file was opened with O_DIRECT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<bool>,
}

fn x_figure(report: &Report, line: XLine) -> Option<XFigure> {
    let x = &report.extended;
    let mut fig = XFigure {
        key: line.key().into(),
        label: line.label().into(),
        unit: line.unit().into(),
        value: x.value(line)?,
        ..XFigure::default()
    };
    let io = |fig: &mut XFigure, each: &[&IoStats]| {
        let first = each.first()?;
        fig.engine = Some(first.engine.name().into());
        fig.engine_fallback = first.fallback.clone();
        fig.block_size = Some(first.block);
        fig.queue_depth = Some(first.depth);
        let n = each.len() as f64;
        fig.read_iops = Some(each.iter().map(|s| s.read_iops()).sum::<f64>() / n);
        let writes: f64 = each.iter().map(|s| s.write_iops()).sum::<f64>() / n;
        fig.write_iops = (writes > 0.0).then_some(writes);
        fig.latency = merged(each.iter().map(|s| Some(&s.read_latency))).and_then(|l| l.summary());
        fig.write_latency =
            merged(each.iter().map(|s| Some(&s.write_latency))).and_then(|l| l.summary());
        fig.cpu_us_per_op = Some(each.iter().map(|s| s.cpu_us_per_op()).sum::<f64>() / n);
        Some(())
    };
    match line {
        XLine::SeqWrite => {
            let runs = x.seq_write.as_ref()?.measured()?;
            fig.samples = runs.iter().map(|r| r.mib_per_sec()).collect();
            fig.data = Some(
                if runs.iter().any(|r| r.zero_data) {
                    "zeros"
                } else {
                    "incompressible"
                }
                .into(),
            );
        }
        XLine::Mixed => {
            let m = x.mixed.as_ref()?.measured()?;
            io(&mut fig, &[&m.stats])?;
            fig.direct = Some(m.direct);
        }
        XLine::FsyncLatency => fig.latency = Some(*x.fsync_latency.as_ref()?.measured()?),
        _ => {
            let d = x.devices(line)?;
            io(&mut fig, &d.each.iter().collect::<Vec<_>>())?;
        }
    }
    Some(fig)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerDevice {
    pub device: String,
    pub value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DnsCounts {
    pub sent: u32,
    pub answered: u32,
    pub timed_out: u32,
    pub refused: u32,
}

/// What one name server did over all runs of a DNS line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DnsServer {
    pub address: String,
    pub sent: u32,
    pub answered: u32,
    pub timed_out: u32,
    pub refused: u32,
    /// Mean ms from query to this server's answer; absent when it answered none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_answer_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotMeasured {
    pub key: String,
    pub label: String,
    /// True when the line applies but could not be measured (exit status 1);
    /// false when it does not apply here (pveperf omits it too).
    pub failed: bool,
    pub reason: String,
}

fn figure(report: &Report, line: Line) -> Option<JsonFigure> {
    let samples = report.samples(line)?;
    let stats = super::Stats::of(&samples)?;
    let mut fig = JsonFigure {
        label: line.label().to_string(),
        unit: line.unit().to_string(),
        value: stats.median,
        samples,
        min: stats.min,
        max: stats.max,
        spread: stats.spread(),
        ..JsonFigure::default()
    };
    fn measured<T>(o: &Option<Outcome<Vec<T>>>) -> Option<&[T]> {
        o.as_ref().and_then(Outcome::measured).map(Vec::as_slice)
    }
    match line {
        Line::RegexPerSecond => {
            fig.engine = measured(&report.regex)?
                .first()
                .map(|r| r.engine.name().to_string())
        }
        Line::BufferedReads => {
            let runs = measured(&report.buffered_reads)?;
            (fig.device, fig.per_device) = devices(runs, |r| &r.device);
        }
        Line::AverageSeekTime => {
            let runs = measured(&report.seek)?;
            (fig.device, fig.per_device) = devices(runs, |s| &s.device);
            fig.block_size = runs
                .first()
                .and_then(|r| r.each.first())
                .map(|s| s.block_size);
            let all = runs.iter().flat_map(|r| &r.each);
            fig.latency = merged(all.map(|s| s.latency.as_ref())).and_then(|l| l.summary());
        }
        Line::FsyncsPerSecond => {
            let runs = measured(&report.fsync)?;
            fig.latency = merged(runs.iter().map(|r| r.latency.as_ref())).and_then(|l| l.summary());
        }
        Line::DnsExt | Line::DnsInt => {
            let runs = report.dns(line)?;
            fig.domain = runs.first().and_then(|r| r.domain.clone());
            let sum = |f: fn(&crate::probe::dns::DnsFigure) -> u32| runs.iter().map(f).sum();
            fig.queries = Some(DnsCounts {
                sent: sum(|r| r.queries),
                answered: sum(|r| r.answered),
                timed_out: sum(|r| r.timed_out),
                refused: sum(|r| r.refused),
            });
            fig.servers = Some(dns_servers(runs));
        }
        _ => {}
    }
    Some(fig)
}

/// Each server's counts over all runs.
fn dns_servers(runs: &[crate::probe::dns::DnsFigure]) -> Vec<DnsServer> {
    crate::probe::dns::servers_over(runs)
        .iter()
        .map(|s| DnsServer {
            address: s.addr.ip().to_string(),
            sent: s.sent,
            answered: s.answered,
            timed_out: s.timed_out(),
            refused: s.refused,
            mean_answer_ms: s.mean_answer_ms(),
        })
        .collect()
}

/// The devices' names joined, and with several devices each one's median.
fn devices<T: Sample>(
    runs: &[Devices<T>],
    path: fn(&T) -> &std::path::PathBuf,
) -> (Option<String>, Option<Vec<PerDevice>>) {
    let Some(first) = runs.first() else {
        return (None, None);
    };
    let names: Vec<String> = first
        .each
        .iter()
        .map(|d| path(d).display().to_string())
        .collect();
    let per_device = (names.len() > 1).then(|| {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let values: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.each.get(i))
                    .map(Sample::value)
                    .collect();
                PerDevice {
                    device: name.clone(),
                    value: super::Stats::of(&values).map_or(0.0, |s| s.median),
                }
            })
            .collect()
    });
    (Some(names.join(", ")), per_device)
}

impl JsonReport {
    pub fn from_report(report: &Report) -> Self {
        let mut figures = Figures::default();
        let mut not_measured = Vec::new();
        for line in Line::ALL {
            *figures.slot(line) = figure(report, line);
            let reason = match report.problem(line) {
                Some((failed, why)) => Some((failed, why.to_string())),
                None if report.dns_dead(line) => {
                    Some((true, "no name server answered".to_string()))
                }
                None => None,
            };
            if let Some((failed, reason)) = reason {
                not_measured.push(NotMeasured {
                    key: line.key().to_string(),
                    label: line.label().to_string(),
                    failed,
                    reason,
                });
            }
        }
        for line in XLine::ALL {
            if let Some((failed, why)) = report.extended.problem(line) {
                not_measured.push(NotMeasured {
                    key: line.key().to_string(),
                    label: line.label().to_string(),
                    failed,
                    reason: why.to_string(),
                });
            }
        }
        JsonReport {
            schema_version: SCHEMA_VERSION,
            pveprobe_version: env!("CARGO_PKG_VERSION").to_string(),
            timestamp: report
                .started
                .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string()),
            path: report.path.display().to_string(),
            settings: report.settings.clone(),
            host: report.host.clone().unwrap_or_default(),
            filesystem: report
                .filesystem
                .as_ref()
                .and_then(Outcome::measured)
                .map(|fs| JsonFilesystem {
                    source: fs.source.clone(),
                    fstype: fs.fstype.clone(),
                    mount_point: fs.mount_point.display().to_string(),
                    size_bytes: fs.total_bytes,
                    available_bytes: fs.avail_bytes,
                    read_only: fs.read_only,
                    options: fs.options.clone(),
                }),
            figures,
            storage: report.storage.clone(),
            extended: XLine::ALL
                .into_iter()
                .filter_map(|l| x_figure(report, l))
                .collect(),
            not_measured,
            notes: report.notes.clone(),
            interrupted_by_signal: report.interrupted_by,
            waited_for_probe: report.waited_for_probe.clone(),
        }
    }
}

pub fn render(report: &Report, pretty: bool) -> String {
    let doc = JsonReport::from_report(report);
    let mut text = if pretty {
        serde_json::to_string_pretty(&doc)
    } else {
        serde_json::to_string(&doc)
    }
    .expect("a report always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::latency::Latency;
    use crate::report::text::tests::{fsync, full_report};

    /// The known-numbers report with a fixed time, host and settings.
    pub(crate) fn known_report() -> Report {
        let mut r = full_report();
        r.started = Some("2026-11-29T12:00:00Z".parse().unwrap());
        r.settings = Settings {
            duration_s: 3.0,
            runs: 3,
            regex_engine: "perl".into(),
            dns_timeout_s: 2.0,
            fsync_order: "pveperf".into(),
            dns_schedule: "bounded".into(),
        };
        r.host = Some(HostInfo {
            hostname: Some("pve1".into()),
            cpu_model: Some("AMD EPYC 9754 128-Core Processor".into()),
            sockets: Some(1),
            cores: Some(128),
            threads: Some(256),
            memory_bytes: Some(1 << 40),
            kernel: Some("6.8.12-4-pve".into()),
            os_release: Some("Debian GNU/Linux 12 (bookworm)".into()),
            pve_manager: Some("8.3.1".into()),
        });
        let mut latency = Latency::default();
        for us in [400u64, 500, 600, 700, 5000] {
            latency.record(Duration::from_micros(us));
        }
        let mut runs = vec![fsync(400), fsync(440), fsync(420)];
        runs[0].latency = Some(latency);
        r.fsync = Some(Outcome::Measured(runs));
        r.seek = Some(Outcome::Skipped(
            "rpool/data (zfs) is not a block device".into(),
        ));
        r.buffered_reads = Some(Outcome::Skipped(
            "rpool/data (zfs) is not a block device".into(),
        ));
        r.notes.push(
            "page cache not dropped (not root): disk figures may come partly from memory".into(),
        );
        r
    }

    fn snapshot(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/snapshots")
            .join(name)
    }

    /// Compares with a pinned file; `UPDATE_SNAPSHOTS=1` rewrites it, except
    /// under CI, where a changed output must fail rather than be accepted.
    pub(crate) fn assert_snapshot(name: &str, actual: &str) {
        let path = snapshot(name);
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() && !ci {
            std::fs::write(&path, actual).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            actual,
            expected,
            "{} differs (UPDATE_SNAPSHOTS=1 to accept)",
            path.display()
        );
    }

    pub(crate) fn validate(doc: &str) {
        let schema_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let instance: serde_json::Value = serde_json::from_str(doc).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "schema violations: {errors:#?}");
    }

    #[test]
    fn json_of_known_numbers_is_pinned_and_valid() {
        let text = render(&known_report(), true);
        assert_snapshot("report.json", &text);
        validate(&text);
        let empty = Report {
            settings: known_report().settings,
            ..Report::new("/".into())
        };
        validate(&render(&empty, false));
    }

    #[test]
    fn json_reads_back_into_the_same_document() {
        let text = render(&known_report(), false);
        let doc: JsonReport = serde_json::from_str(&text).unwrap();
        assert_eq!(doc, JsonReport::from_report(&known_report()));
        assert_eq!(doc.figures.fsyncs_per_second.as_ref().unwrap().value, 210.0);
        assert_eq!(doc.not_measured.len(), 2);
        assert!(!doc.not_measured[0].failed);
    }

    #[test]
    fn schema_rejects_a_wrong_document() {
        let mut doc: serde_json::Value =
            serde_json::from_str(&render(&known_report(), false)).unwrap();
        doc["figures"]["fsyncs_per_second"]["unit"] = "MB/s".into();
        let schema_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
        assert!(!jsonschema::validator_for(&schema).unwrap().is_valid(&doc));
    }
}
