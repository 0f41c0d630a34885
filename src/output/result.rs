//! A probe result as every command reads and writes it: the probe's JSON
//! document (schema in `docs/report.schema.json`), the run as plain data
//! with every sample. Versioned by [`SCHEMA_VERSION`]. The probe makes it
//! from its report; `--storage all`, `cluster` and the guest's host side
//! hold several; `compare` and `--baseline` read it back, and every other
//! document is compared as one ([`crate::results::Stored`]).

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::figure::Figure;
use crate::figure::projection::Entry;
use crate::figure::projection::Facts;
use crate::figure::{Field, Group, Method, Value};
use crate::model::dns::Schedule;
use crate::model::fsync::Order;
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
    pub fn of(figure: Figure, entry: Entry) -> Option<JsonFigure> {
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
    /// Another command's figures as a probe result for `compare`: named
    /// `name` (as host and path), its `-x`-style entries `extended`.
    pub fn of_figures(
        name: String,
        (pveprobe_version, timestamp): (&str, &str),
        extended: Vec<XFigure>,
        interrupted_by_signal: Option<i32>,
    ) -> JsonReport {
        JsonReport {
            schema_version: SCHEMA_VERSION,
            pveprobe_version: pveprobe_version.into(),
            timestamp: Some(timestamp.to_string()).filter(|t| !t.is_empty()),
            path: name.clone(),
            host: crate::model::host::HostInfo {
                hostname: Some(name),
                ..Default::default()
            },
            extended,
            interrupted_by_signal,
            ..JsonReport::default()
        }
    }

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
        self.facts_of(figure, None)
    }

    /// The facts of a figure's entry for `instance` (`None`: measured once).
    fn facts_of(&self, figure: Figure, instance: Option<&str>) -> Option<&Facts> {
        self.entries(figure)
            .find(|(i, ..)| *i == instance)
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

    /// How this result measured a figure (its entry for `instance`, of a
    /// figure measured per key) in respect of `method`; `None` where it
    /// does not say (the figure is missing).
    pub fn method(&self, figure: Figure, instance: Option<&str>, method: Method) -> Option<String> {
        let s = &self.settings;
        match method {
            Method::RegexEngine => Some(s.regex_engine.clone()),
            Method::FsyncOrder => Some(s.fsync_order.clone()),
            Method::DnsSchedule => Some(s.dns_schedule.clone()),
            Method::Window => Some(format!("{} s", s.duration_s)),
            _ => self.facts_of(figure, instance)?.method(method),
        }
    }
}

/// The options and methods that shape the figures, recorded with them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    pub duration_s: f64,
    pub runs: u32,
    pub regex_engine: String,
    pub dns_timeout_s: f64,
    /// FSYNCS/SECOND's order of system calls: `pveperf` (open, fsync,
    /// write, close). Results written before it was recorded synced after
    /// writing: they read as `write-then-fsync`.
    #[serde(default = "write_then_fsync")]
    pub fsync_order: String,
    /// How the DNS lines wait for answers: `bounded` (each server in turn
    /// for at most --dns-timeout) or `pveperf` (Net::DNS's schedule with
    /// pveperf's arguments). Older results read as `bounded`.
    #[serde(default = "bounded")]
    pub dns_schedule: String,
}

fn write_then_fsync() -> String {
    Order::WriteThenFsync.name().to_string()
}

fn bounded() -> String {
    Schedule::Bounded.name().to_string()
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

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
}

#[cfg(test)]
pub(crate) mod known {
    use super::JsonReport;

    /// The probe's known-numbers result, read from its pinned snapshot
    /// (the probe's `json_of_known_numbers_is_pinned_and_valid` keeps the
    /// snapshot what the probe writes), for the tests of the layers and
    /// commands that hold probe results.
    pub(crate) fn result() -> JsonReport {
        let text = include_str!("../../fixtures/snapshots/report.json.snap");
        let body = text.splitn(3, "---\n").nth(2).expect("an insta snapshot");
        serde_json::from_str(body).expect("the pinned result reads back")
    }
}
