//! The JSON document (schema in `docs/report.schema.json`): the report as
//! plain data with every sample, for machines. Versioned by
//! [`SCHEMA_VERSION`]; `compare` and `--baseline` read it back.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::{Figure, Outcome, Report, Settings};
use crate::figure::projection::Entry;
use crate::figure::projection::Facts;
use crate::figure::{Field, Group, Method, Value};
use crate::model::host::HostInfo;
use crate::model::storage::Storage;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    pub waited_for_probe: Option<crate::model::host::Waited>,
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
        let all = BTreeMap::<String, RawFigure>::deserialize(deserializer)?;
        let mut figures = BTreeMap::new();
        for (key, mut raw) in all {
            let Some(figure) = Figure::from_key(&key).filter(|f| f.group() == Group::Pveperf)
            else {
                continue;
            };
            let facts = raw.facts(Some(figure))?;
            figures.insert(
                figure,
                JsonFigure {
                    label: raw.label,
                    unit: raw.unit,
                    value: raw.value,
                    samples: raw.samples,
                    min: raw.min,
                    max: raw.max,
                    spread: raw.spread,
                    facts,
                },
            );
        }
        Ok(Figures(figures))
    }
}

/// A pveperf line's entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// What the figure's kind records beside it (the engine, the devices
    /// read, the latency, the name servers).
    #[serde(flatten)]
    pub facts: Facts,
}

impl JsonFigure {
    fn of(figure: Figure, entry: Entry) -> Option<JsonFigure> {
        let stats = crate::model::stats::Stats::of(&entry.samples)?;
        Some(JsonFigure {
            label: figure.label().to_string(),
            unit: figure.unit().to_string(),
            value: entry.value,
            min: stats.min,
            max: stats.max,
            spread: stats.spread(),
            samples: entry.samples,
            facts: entry.facts,
        })
    }
}

/// An extended (or network) figure's entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// What the figure's kind records beside it.
    #[serde(flatten)]
    pub facts: Facts,
}

impl XFigure {
    pub fn of(figure: Figure, entry: Entry) -> XFigure {
        XFigure {
            key: figure.key().into(),
            instance: entry.instance,
            label: figure.label().into(),
            unit: figure.unit().into(),
            value: entry.value,
            samples: entry.samples,
            facts: entry.facts,
        }
    }
}

/// An entry as read back: its fields, and the rest for its facts.
#[derive(Deserialize)]
struct RawFigure {
    #[serde(default)]
    key: String,
    #[serde(default)]
    instance: Option<String>,
    label: String,
    unit: String,
    value: f64,
    #[serde(default)]
    samples: Vec<f64>,
    #[serde(default)]
    min: f64,
    #[serde(default)]
    max: f64,
    #[serde(default)]
    spread: f64,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

impl RawFigure {
    /// The facts of `figure`'s kind (none for a figure this version does not know).
    fn facts<E: serde::de::Error>(&mut self, figure: Option<Figure>) -> Result<Facts, E> {
        let kind = figure.map_or(crate::figure::Kind::None, |f| f.spec().facts);
        Facts::read(kind, std::mem::take(&mut self.rest)).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for XFigure {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut raw = RawFigure::deserialize(deserializer)?;
        let facts = raw.facts(Figure::from_key(&raw.key))?;
        Ok(XFigure {
            key: raw.key,
            instance: raw.instance,
            label: raw.label,
            unit: raw.unit,
            value: raw.value,
            samples: raw.samples,
            facts,
        })
    }
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

impl JsonReport {
    pub fn from_report(report: &Report) -> Self {
        let mut figures = Figures::default();
        let mut not_measured = Vec::new();
        let mut extended = Vec::new();
        for line in Figure::ALL {
            // Projected once: a measured figure's problem is its
            // projection's (a dead DNS line), another's its outcome's.
            let (entries, problem) = match report.projection(line) {
                Some(p) => (p.entries, p.failed.map(|why| (true, why))),
                None => (Vec::new(), report.problem(line)),
            };
            if line.group() == Group::Pveperf {
                figures.set(
                    line,
                    entries
                        .into_iter()
                        .next()
                        .and_then(|e| JsonFigure::of(line, e)),
                );
            } else {
                extended.extend(entries.into_iter().map(|e| XFigure::of(line, e)));
            }
            if let Some((failed, reason)) = problem {
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
            extended,
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
        crate::model::stats::Stats::of(self.samples)
            .filter(|s| s.count >= 2)
            .map(|s| s.max - s.min)
    }
}

impl JsonReport {
    /// The readings of a value (one per key for a figure measured per key);
    /// none where the result lacks it. Non-finite numbers are left out.
    pub fn readings(&self, v: &Value) -> Vec<Reading<'_>> {
        let mut out: Vec<Reading> = self
            .entries(v.figure)
            .filter_map(|(instance, value, samples, facts)| {
                let (value, samples) = match v.field {
                    Field::Value => (value, samples),
                    field => (facts.number(field)?, &[][..]),
                };
                Some(Reading {
                    instance,
                    value,
                    samples,
                })
            })
            .collect();
        out.retain(|r| r.value.is_finite());
        out
    }

    /// A figure's entries: `(instance, value, samples, facts)`.
    fn entries(&self, figure: Figure) -> impl Iterator<Item = (Option<&str>, f64, &[f64], &Facts)> {
        let pveperf = self
            .figures
            .get(figure)
            .filter(|_| figure.group() == Group::Pveperf)
            .map(|f| (None, f.value, f.samples.as_slice(), &f.facts));
        let key = figure.key();
        let others = self
            .extended
            .iter()
            .filter(move |f| figure.group() != Group::Pveperf && f.key == key)
            .map(|f| {
                (
                    f.instance.as_deref(),
                    f.value,
                    f.samples.as_slice(),
                    &f.facts,
                )
            });
        pveperf.into_iter().chain(others)
    }

    /// The facts of a figure measured once (not per key).
    fn facts(&self, figure: Figure) -> Option<&Facts> {
        self.entries(figure)
            .find(|(instance, ..)| instance.is_none())
            .map(|(.., facts)| facts)
    }

    /// The reading of a value measured once (not per key).
    pub fn reading(&self, v: &Value) -> Option<Reading<'_>> {
        self.readings(v).into_iter().find(|r| r.instance.is_none())
    }

    /// A value as a CSV cell: the number, or the text of a text value.
    pub fn cell(&self, v: &Value) -> String {
        if v.is_number() {
            return self
                .reading(v)
                .map(|r| r.value.to_string())
                .unwrap_or_default();
        }
        self.facts(v.figure)
            .and_then(|f| f.text(v.field))
            .unwrap_or_default()
    }

    /// How this result measured a figure in respect of `method`; `None`
    /// where it does not say (the figure is missing).
    pub fn method(&self, figure: Figure, method: Method) -> Option<String> {
        let s = &self.settings;
        match method {
            Method::RegexEngine => Some(s.regex_engine.clone()),
            Method::FsyncOrder => Some(s.fsync_order.clone()),
            Method::DnsSchedule => Some(s.dns_schedule.clone()),
            Method::Window => Some(format!("{} s", s.duration_s)),
            _ => self.facts(figure)?.method(method),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::latency::Latency;
    use crate::probe::report::text::tests::{fsync, full_report};

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
        known_io(&mut r.extended);
        known_sync_and_more(&mut r.extended);
        r
    }

    /// SEQ WRITE, the device tests and MIXED, with known numbers.
    fn known_io(x: &mut crate::probe::report::Extended) {
        use crate::model::io::{Engine, IoStats};
        use crate::model::latency::Latency;
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
            Outcome::Measured(crate::model::Devices {
                each: vec![s],
                named: false,
            })
        };
        x.seq_write = Some(Outcome::Measured(vec![w(400), w(420), w(380)]));
        x.seq_read = Some(one(io(1000, 0, 1 << 20, 8)));
        x.rand_read_qd1 = Some(one(io(20_000, 0, 4096, 1)));
        x.rand_read_qd32 = Some(one(io(160_000, 0, 4096, 32)));
        x.mixed = Some(Outcome::Measured(crate::model::io::MixedFigure {
            stats: io(14_000, 6_000, 4096, 16),
            direct: true,
            file_bytes: 1 << 30,
        }));
    }

    /// SYNC WRITE 4K and its scaling, SUSTAINED WRITE and PBS's CPU
    /// figures, with known numbers.
    fn known_sync_and_more(x: &mut crate::probe::report::Extended) {
        use crate::model::latency::Latency;
        use crate::model::sync::{
            FlushVerdict, SyncMode, SyncResult, SyncScaling, SyncWriteFigure, VerdictKind,
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
            verdict: FlushVerdict {
                kind: VerdictKind::Plausible,
                reason: "sda solid state: no bound on commits a second".into(),
            },
            published: Vec::new(),
            reference: crate::syncverdict::reference(
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

    /// PBS's operations in order, each `(MB/s alone, MB/s of each thread)`,
    /// over one-second windows (ZSTD COMPRESS three).
    pub(crate) fn cpu_bench(each: &[(f64, &[f64])]) -> crate::model::cpubench::CpuBench {
        use crate::model::cpubench::{CpuBench, CpuOp, CpuOpFigure, CpuThroughput, MB};
        let t = |mb: f64, window: Duration| CpuThroughput {
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

    use crate::model::testutil::assert_snapshot;

    pub(crate) fn validate(doc: &str) {
        let schema = crate::model::testutil::schema("report");
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
        let schema = crate::model::testutil::schema("report");
        let names = crate::model::testutil::enum_names;
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
        let schema = crate::model::testutil::schema("report");
        assert!(!jsonschema::validator_for(&schema).unwrap().is_valid(&doc));
    }
}
