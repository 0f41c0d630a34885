//! The JSON document (schema in `docs/report.schema.json`): the report as
//! plain data with every sample, for machines. Versioned by
//! [`SCHEMA_VERSION`]; `compare` and `--baseline` read it back.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::{Devices, Figure, Outcome, Report, Sample, Settings};
use crate::figure::{Field, Group, Method, Value};
use crate::latency::{LatencySummary, merged};
use crate::model::cpubench::CpuOpFigure;
use crate::model::dns::{DnsFigure, servers_over};
use crate::model::host::HostInfo;
use crate::model::io::IoStats;
use crate::model::storage::Storage;
use crate::model::sync::{Reference, SyncWriteFigure, Verdict};

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
    /// What the run made and could not remove, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_behind: Vec<String>,
    /// The wait for another probe on this host before measuring, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_for_probe: Option<super::Waited>,
    /// `--storage`: the PVE storage measured, and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pve_storage: Option<crate::model::pve::PveTarget>,
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

/// One object per pveperf line, in pveperf's order, keyed by the figure's
/// key; absent when not measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures(BTreeMap<Figure, JsonFigure>);

impl Figures {
    pub fn get(&self, figure: Figure) -> Option<&JsonFigure> {
        self.0.get(&figure)
    }

    /// Sets (or with `None` removes) a figure.
    pub fn set(&mut self, figure: Figure, fig: Option<JsonFigure>) {
        match fig {
            Some(fig) => self.0.insert(figure, fig),
            None => self.0.remove(&figure),
        };
    }
}

impl Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(f, fig)| (f.key(), fig)))
    }
}

impl<'de> Deserialize<'de> for Figures {
    /// Keys of no pveperf figure are passed over, as serde passes over
    /// unknown fields elsewhere in the document.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let all = BTreeMap::<String, JsonFigure>::deserialize(deserializer)?;
        Ok(Figures(
            all.into_iter()
                .filter_map(|(key, fig)| {
                    Figure::from_key(&key)
                        .filter(|f| f.group() == Group::Pveperf)
                        .map(|f| (f, fig))
                })
                .collect(),
        ))
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
    /// The key of a figure measured once per key (see `figure::Spec::per`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    pub label: String,
    /// `MiB/s` or `IOPS` (read IOPS for the mix).
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
    /// Per read (SYNC WRITE 4K: per write and its sync).
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
    /// SYNC WRITE 4K: `fdatasync` or `dsync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_mode: Option<String>,
    /// SYNC WRITE 4K: how many jobs wrote at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u32>,
    /// SYNC WRITE 4K: each job's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_bytes: Option<u64>,
    /// SYNC WRITE 4K: whether the flushes can have reached a disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// SYNC WRITE 4K: against its device class's band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// SYNC WRITE 4K PEAK: the count of jobs at the peak.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_jobs: Option<u32>,
    /// SYNC WRITE 4K PEAK: the last count of jobs that still gained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stops_scaling_at: Option<u32>,
    /// A CPU figure: the seconds its loop ran for (PBS's, scaled with `--duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    /// A CPU figure against PBS's reference machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pbs_reference: Option<PbsReference>,
    /// A CPU figure on `--cpu-threads` threads at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<CpuThreads>,
    /// SUSTAINED WRITE: MiB/s of each second.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series_mib_per_s: Vec<f64>,
    /// SUSTAINED WRITE: the mean of its first and last ten seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_10s_mib_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_10s_mib_per_s: Option<f64>,
    /// SUSTAINED WRITE: its slowest second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_second: Option<SlowestSecond>,
    /// A network figure measured each way: the way back (from the
    /// responder to the measuring node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back: Option<f64>,
}

/// SUSTAINED WRITE's slowest second: which (from 0), and its MiB/s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SlowestSecond {
    pub second: usize,
    pub mib_per_s: f64,
}

/// A CPU figure as `proxmox-backup-client benchmark` rates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PbsReference {
    /// The machine PBS compares with.
    pub machine: String,
    /// Its figure, in MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// This figure as a percentage of it (PBS prints it rounded).
    pub percent: f64,
}

/// A CPU figure on several threads at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuThreads {
    pub count: u32,
    /// All threads together, in MB/s.
    pub mb_per_s: f64,
    pub per_thread_mb_per_s: f64,
    /// `mb_per_s` over `count` times the one-thread figure.
    pub scaling: f64,
    /// Each thread's MB/s.
    pub each_mb_per_s: Vec<f64>,
}

/// PBS's reference machine for its CPU figures.
pub const PBS_REFERENCE_MACHINE: &str = "AMD Ryzen 7 2700X (proxmox-backup-client benchmark, 2020)";

/// A CPU figure's facts.
fn cpu_fields(fig: &mut XFigure, f: &CpuOpFigure) {
    fig.window_s = Some(f.window.as_secs_f64());
    fig.pbs_reference = Some(PbsReference {
        machine: PBS_REFERENCE_MACHINE.into(),
        mb_per_s: f.op.reference_bytes_per_s() / crate::model::cpubench::MB,
        percent: f.percent(),
    });
    fig.threads = f.thread_count().map(|count| CpuThreads {
        count,
        mb_per_s: f.threads_mb_per_s().unwrap_or(0.0),
        per_thread_mb_per_s: f.per_thread_mb_per_s().unwrap_or(0.0),
        scaling: f.scaling().unwrap_or(0.0),
        each_mb_per_s: f.threads.iter().map(|t| t.mb_per_s()).collect(),
    });
}

/// SYNC WRITE 4K's facts of one count of jobs.
fn sync_fields(fig: &mut XFigure, f: &SyncWriteFigure) {
    fig.sync_mode = Some(f.mode.name().into());
    fig.jobs = Some(f.jobs);
    fig.file_bytes = Some(f.file_bytes);
    fig.block_size = Some(crate::plan::SYNC_BLOCK);
    fig.queue_depth = Some(1);
    fig.write_iops = Some(f.iops());
    fig.latency = f.latency.summary();
    fig.cpu_us_per_op = Some(f.cpu_us_per_write());
}

/// The JSON entries of an extended figure: one, or one per key for a
/// figure measured once per key; none when it has no figure.
fn x_figures(report: &Report, line: Figure) -> Vec<XFigure> {
    let entry = || XFigure {
        key: line.key().into(),
        label: line.label().into(),
        unit: line.unit().into(),
        ..XFigure::default()
    };
    if line == Figure::SyncWriteJobs {
        let steps = report.extended.scaling().map_or(&[][..], |s| &s.steps);
        return steps
            .iter()
            .map(|step| {
                let mut fig = XFigure {
                    instance: Some(format!("jobs={}", step.jobs)),
                    value: step.iops(),
                    ..entry()
                };
                sync_fields(&mut fig, step);
                fig
            })
            .collect();
    }
    x_figure(report, line).into_iter().collect()
}

fn x_figure(report: &Report, line: Figure) -> Option<XFigure> {
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
        Figure::SeqWrite => {
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
        Figure::Mixed => {
            let m = x.mixed.as_ref()?.measured()?;
            io(&mut fig, &[&m.stats])?;
            fig.direct = Some(m.direct);
        }
        Figure::SyncWrite4k => {
            let r = x.sync_write.as_ref()?.measured()?;
            sync_fields(&mut fig, &r.figure);
            fig.verdict = Some(r.verdict.clone());
            fig.reference = r.reference.clone();
        }
        _ if Figure::CPU_BENCH.contains(&line) => cpu_fields(&mut fig, x.cpu(line)?),
        Figure::SustainedWrite => {
            let s = x.sustained.as_ref()?.measured()?;
            fig.window_s = Some(s.window.as_secs_f64());
            fig.file_bytes = Some(s.file_bytes);
            fig.direct = Some(s.direct);
            fig.block_size = Some(crate::extended::sustained::CHUNK);
            fig.data = Some("incompressible".into());
            fig.series_mib_per_s = s.series();
            fig.first_10s_mib_per_s = s.first();
            fig.last_10s_mib_per_s = s.last();
            fig.slowest_second = s
                .slowest()
                .map(|(second, mib_per_s)| SlowestSecond { second, mib_per_s });
        }
        Figure::SyncWritePeak => {
            let scaling = x.scaling()?;
            let peak = scaling.peak()?;
            fig.sync_mode = Some(peak.mode.name().into());
            fig.peak_jobs = Some(peak.jobs);
            fig.stops_scaling_at = scaling.stops_at(crate::plan::SYNC_MIN_GAIN);
        }
        // A device test's I/O details; a figure without any keeps its value.
        _ => {
            if let Some(d) = x.devices(line) {
                io(&mut fig, &d.each.iter().collect::<Vec<_>>())?;
            }
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

fn figure(report: &Report, line: Figure) -> Option<JsonFigure> {
    let samples = report.samples(line)?;
    let stats = crate::stats::Stats::of(&samples)?;
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
        Figure::RegexPerSecond => {
            fig.engine = measured(&report.regex)?
                .first()
                .map(|r| r.engine.name().to_string())
        }
        Figure::BufferedReads => {
            let runs = measured(&report.buffered_reads)?;
            (fig.device, fig.per_device) = devices(runs, |r| &r.device);
        }
        Figure::AverageSeekTime => {
            let runs = measured(&report.seek)?;
            (fig.device, fig.per_device) = devices(runs, |s| &s.device);
            fig.block_size = runs
                .first()
                .and_then(|r| r.each.first())
                .map(|s| s.block_size);
            let all = runs.iter().flat_map(|r| &r.each);
            fig.latency = merged(all.map(|s| s.latency.as_ref())).and_then(|l| l.summary());
        }
        Figure::FsyncsPerSecond => {
            let runs = measured(&report.fsync)?;
            fig.latency = merged(runs.iter().map(|r| r.latency.as_ref())).and_then(|l| l.summary());
        }
        Figure::DnsExt | Figure::DnsInt => {
            let runs = report.dns(line)?;
            fig.domain = runs.first().and_then(|r| r.domain.clone());
            let sum = |f: fn(&DnsFigure) -> u32| runs.iter().map(f).sum();
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
fn dns_servers(runs: &[DnsFigure]) -> Vec<DnsServer> {
    servers_over(runs)
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
                    value: crate::stats::Stats::of(&values).map_or(0.0, |s| s.median),
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
        for line in Figure::ALL {
            if line.group() == Group::Pveperf {
                figures.set(line, figure(report, line));
            }
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
            extended: Figure::extended()
                .flat_map(|l| x_figures(report, l))
                .collect(),
            not_measured,
            notes: report.notes.clone(),
            interrupted_by_signal: report.interrupted_by,
            left_behind: report.left_behind.clone(),
            waited_for_probe: report.waited_for_probe.clone(),
            pve_storage: report.pve_storage.clone(),
        }
    }
}

/// One value of a figure in a result: the number, which key it was
/// measured for (a figure measured per key), and its runs where the
/// result keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading<'a> {
    pub instance: Option<&'a str>,
    pub value: f64,
    /// One per run (empty where the result keeps none).
    pub samples: &'a [f64],
}

impl Reading<'_> {
    /// max - min of the runs, with at least two of them.
    pub fn range(&self) -> Option<f64> {
        crate::stats::Stats::of(self.samples)
            .filter(|s| s.count >= 2)
            .map(|s| s.max - s.min)
    }
}

impl JsonReport {
    /// The readings of a value (one per key for a figure measured per key);
    /// none where the result lacks it. Non-finite numbers are left out.
    pub fn readings(&self, v: &Value) -> Vec<Reading<'_>> {
        let spec = v.figure.spec();
        let mut out = Vec::new();
        match spec.group {
            Group::Pveperf => {
                if let (Some(f), Field::Value) = (self.figures.get(v.figure), v.field) {
                    out.push(Reading {
                        instance: None,
                        value: f.value,
                        samples: &f.samples,
                    });
                }
            }
            Group::Extended | Group::Network => {
                for f in self.extended.iter().filter(|f| f.key == spec.key) {
                    let (value, samples) = match v.field {
                        Field::Value => (Some(f.value), f.samples.as_slice()),
                        Field::WriteIops => (f.write_iops, &[][..]),
                        Field::P99Ms => (f.latency.map(|l| l.p99_us / 1000.0), &[][..]),
                        Field::ReferencePercent => {
                            (f.reference.as_ref().map(|r| r.percent), &[][..])
                        }
                        Field::PeakJobs => (f.peak_jobs.map(f64::from), &[][..]),
                        Field::StopsAt => (f.stops_scaling_at.map(f64::from), &[][..]),
                        Field::PbsPercent => (f.pbs_reference.as_ref().map(|r| r.percent), &[][..]),
                        Field::ThreadsMbPerS => (f.threads.as_ref().map(|t| t.mb_per_s), &[][..]),
                        Field::ThreadScaling => (f.threads.as_ref().map(|t| t.scaling), &[][..]),
                        Field::First10s => (f.first_10s_mib_per_s, &[][..]),
                        Field::Last10s => (f.last_10s_mib_per_s, &[][..]),
                        Field::SlowestSecond => (f.slowest_second.map(|s| s.mib_per_s), &[][..]),
                        Field::MaxMs => (f.latency.map(|l| l.max_us / 1000.0), &[][..]),
                        Field::Back => (f.back, &[][..]),
                        Field::Domain | Field::Verdict => (None, &[][..]),
                    };
                    if let Some(value) = value {
                        out.push(Reading {
                            instance: f.instance.as_deref(),
                            value,
                            samples,
                        });
                    }
                }
            }
        }
        out.retain(|r| r.value.is_finite());
        out
    }

    /// The reading of a value measured once (not per key).
    pub fn reading(&self, v: &Value) -> Option<Reading<'_>> {
        self.readings(v).into_iter().find(|r| r.instance.is_none())
    }

    /// A value as a CSV cell: the number, or the text of a text value.
    pub fn cell(&self, v: &Value) -> String {
        match v.field {
            Field::Domain => self
                .figures
                .get(v.figure)
                .and_then(|f| f.domain.clone())
                .unwrap_or_default(),
            Field::Verdict => self
                .extended
                .iter()
                .find(|f| f.key == v.figure.key())
                .and_then(|f| f.verdict.as_ref())
                .map(|v| v.kind.words().to_string())
                .unwrap_or_default(),
            _ => self
                .reading(v)
                .map(|r| r.value.to_string())
                .unwrap_or_default(),
        }
    }

    /// How this result measured a figure in respect of `method`; `None`
    /// where it does not say (the figure is missing).
    pub fn method(&self, figure: Figure, method: Method) -> Option<String> {
        let s = &self.settings;
        let x = || self.extended.iter().find(|f| f.key == figure.key());
        match method {
            Method::RegexEngine => Some(s.regex_engine.clone()),
            Method::FsyncOrder => Some(s.fsync_order.clone()),
            Method::DnsSchedule => Some(s.dns_schedule.clone()),
            Method::Window => Some(format!("{} s", s.duration_s)),
            Method::Data => x()?.data.clone(),
            Method::IoEngine => x()?.engine.clone(),
            Method::SyncMode => x()?.sync_mode.clone(),
            Method::CpuThreads => x()?.threads.as_ref().map(|t| t.count.to_string()),
            Method::Sustained => x()?.window_s.map(|s| format!("{s} s")),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
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
            cpu_crypto_flags: vec!["aes".into(), "sha_ni".into(), "vaes".into()],
            cpu_governor: Some("performance".into()),
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
        // The extended figures, with known numbers.
        {
            use crate::latency::Latency;
            use crate::model::io::{Engine, IoStats};
            let io = |reads: u64, writes: u64, block: usize, depth: usize| {
                let mut read_latency = Latency::default();
                let mut write_latency = Latency::default();
                for us in [80u64, 100, 120, 400] {
                    read_latency.record(Duration::from_micros(us));
                    if writes > 0 {
                        write_latency.record(Duration::from_micros(us * 2));
                    }
                }
                IoStats {
                    engine: Engine::IoUring,
                    block,
                    depth,
                    reads,
                    writes,
                    elapsed: Duration::from_secs(2),
                    read_latency,
                    write_latency,
                    cpu: Duration::from_millis(10),
                    fallback: None,
                }
            };
            let w = |mib: u64| crate::model::io::SeqWriteFigure {
                bytes: mib << 20,
                elapsed: Duration::from_secs(1),
                zero_data: false,
            };
            let one = |s: IoStats| {
                Outcome::Measured(crate::report::Devices {
                    each: vec![s],
                    named: false,
                })
            };
            let x = &mut r.extended;
            x.seq_write = Some(Outcome::Measured(vec![w(400), w(420), w(380)]));
            x.seq_read = Some(one(io(1000, 0, 1 << 20, 8)));
            x.rand_read_qd1 = Some(one(io(20_000, 0, 4096, 1)));
            x.rand_read_qd32 = Some(one(io(160_000, 0, 4096, 32)));
            x.mixed = Some(Outcome::Measured(crate::model::io::MixedFigure {
                stats: io(14_000, 6_000, 4096, 16),
                direct: true,
                file_bytes: 1 << 30,
            }));
            use crate::model::sync::{
                SyncMode, SyncResult, SyncScaling, SyncWriteFigure, VerdictKind,
            };
            let sync = |jobs: u32, writes: u64| {
                let mut latency = Latency::default();
                for us in [300u64, 350, 400, 2500] {
                    latency.record(Duration::from_micros(us));
                }
                SyncWriteFigure {
                    jobs,
                    mode: SyncMode::Fdatasync,
                    file_bytes: 64 << 20,
                    writes,
                    elapsed: Duration::from_secs(3),
                    latency,
                    cpu: Duration::from_millis(writes / 50),
                }
            };
            x.sync_write = Some(Outcome::Measured(SyncResult {
                figure: sync(1, 7200),
                verdict: Verdict {
                    kind: VerdictKind::Plausible,
                    reason: "sda solid state: no bound on commits a second".into(),
                },
                reference: crate::flushes::reference(
                    Some(&crate::model::storage::Storage {
                        disks: vec![crate::model::storage::Disk {
                            name: "sda".into(),
                            model: Some("INTEL SSDSC2KB480G8".into()),
                            rotational: Some(false),
                            transport: Some("SATA".into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                    None,
                    2400.0,
                ),
            }));
            x.sync_scaling = Some(Outcome::Measured(SyncScaling {
                steps: vec![sync(1, 7200), sync(2, 13_500), sync(4, 14_100)],
            }));
            x.sustained = Some(Outcome::Measured(
                crate::model::sustained::SustainedFigure {
                    bytes_per_second: [900u64, 880, 870, 400, 210, 200]
                        .iter()
                        .map(|m| m << 20)
                        .collect(),
                    window: Duration::from_secs(6),
                    elapsed: Duration::from_secs(6),
                    file_bytes: 8 << 30,
                    direct: true,
                },
            ));
            x.cpu_bench = Some(Outcome::Measured(cpu_bench(&[
                (2022.0, &[1900.0, 1800.0]),
                (752.0, &[700.0, 690.0]),
                (1198.0, &[1100.0, 1150.0]),
                (3645.0, &[3000.0, 3100.0]),
                (758.0, &[700.0, 710.0]),
            ])));
        }
        r
    }

    /// PBS's operations in order, each `(MB/s alone, MB/s of each thread)`,
    /// over one-second windows (ZSTD COMPRESS three).
    pub(crate) fn cpu_bench(each: &[(f64, &[f64])]) -> crate::model::cpubench::CpuBench {
        use crate::model::cpubench::{CpuBench, CpuOp, CpuOpFigure, MB, Throughput};
        let t = |mb: f64, window: Duration| Throughput {
            bytes: (mb * MB * window.as_secs_f64()) as u64,
            elapsed: window,
        };
        CpuBench {
            ops: CpuOp::ALL
                .into_iter()
                .zip(each)
                .map(|(op, (alone, threads))| CpuOpFigure {
                    op,
                    window: op.pbs_window(),
                    single: t(*alone, op.pbs_window()),
                    threads: threads.iter().map(|mb| t(*mb, op.pbs_window())).collect(),
                })
                .collect(),
        }
    }

    /// Replaces `key`'s figure in `doc` by one entry per `(instance, value)`,
    /// as a figure measured once per key is kept.
    pub(crate) fn per_key(doc: &mut JsonReport, key: &str, each: &[(&str, f64)]) {
        let like = doc.extended.iter().find(|f| f.key == key).cloned();
        doc.extended.retain(|f| f.key != key);
        for (instance, value) in each {
            doc.extended.push(XFigure {
                key: key.into(),
                instance: Some(instance.to_string()),
                value: *value,
                ..like.clone().unwrap_or_default()
            });
        }
    }

    pub(crate) use crate::testutil::assert_snapshot;

    pub(crate) fn validate(doc: &str) {
        let schema = crate::testutil::schema("report");
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
        let text = crate::output::json(&JsonReport::from_report(&known_report()), true);
        assert_snapshot("report.json", &text);
        validate(&text);
        let empty = Report {
            settings: known_report().settings,
            ..Report::new("/".into())
        };
        validate(&crate::output::json(
            &JsonReport::from_report(&empty),
            false,
        ));
    }

    #[test]
    fn json_reads_back_into_the_same_document() {
        let text = crate::output::json(&JsonReport::from_report(&known_report()), false);
        let doc: JsonReport = serde_json::from_str(&text).unwrap();
        assert_eq!(doc, JsonReport::from_report(&known_report()));
        assert_eq!(
            doc.figures.get(Figure::FsyncsPerSecond).unwrap().value,
            210.0
        );
        assert_eq!(doc.not_measured.len(), 2);
        assert!(!doc.not_measured[0].failed);
    }

    /// The schema names every figure of the list, and nothing else.
    #[test]
    fn schema_knows_the_list_of_figures() {
        let schema = crate::testutil::schema("report");
        let names = crate::testutil::enum_names;
        let of = |group: Group, f: fn(Figure) -> &'static str| -> Vec<String> {
            Figure::ALL
                .into_iter()
                .filter(|x| x.group() == group)
                .map(|x| f(x).to_string())
                .collect()
        };
        let defs = &schema["$defs"];
        assert_eq!(names(&defs["key"]), of(Group::Pveperf, Figure::key));
        let x = &defs["xfigure"]["properties"];
        assert_eq!(names(&x["key"]), of(Group::Extended, Figure::key));
        assert_eq!(names(&x["label"]), of(Group::Extended, Figure::label));
        for f in Figure::PVEPERF {
            let props = &schema["properties"]["figures"]["properties"][f.key()];
            assert!(
                props.is_object(),
                "figures.{} is not in the schema",
                f.key()
            );
        }
    }

    #[test]
    fn schema_rejects_a_wrong_document() {
        let mut doc: serde_json::Value = serde_json::from_str(&crate::output::json(
            &JsonReport::from_report(&known_report()),
            false,
        ))
        .unwrap();
        doc["figures"]["fsyncs_per_second"]["unit"] = "MB/s".into();
        let schema = crate::testutil::schema("report");
        assert!(!jsonschema::validator_for(&schema).unwrap().is_valid(&doc));
    }
}
