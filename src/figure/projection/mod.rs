//! Each figure's projection: what a measurement shows of itself, made by
//! its model type and read by every renderer. A model type implements
//! [`Project`]: its JSON entries (value, runs and [`Facts`]), the value
//! part of its text line, what stderr says about it, and whether a figure
//! that was measured still has no number. The text, `-v`, JSON, CSV, the
//! metrics formats, `compare`, `--baseline` and the cluster table read a
//! figure only through a projection or the JSON entries it made; none of
//! them names a figure to find its numbers.
//!
//! The files here are the model types' projections, one per kind of
//! measurement, each with the facts its JSON entry carries.

pub mod ceph;
pub mod cpu;
pub mod device;
pub mod dns;
pub mod interface;
pub mod io;
pub mod load;
pub mod net;
pub mod pveperf;
pub mod qualify;
pub mod sustained;
pub mod sync;

use std::path::PathBuf;

use serde::Serialize;

use crate::figure::{Field, Figure, Kind, Method};
use crate::model::Devices;

/// What a projection needs of the run beyond its own measurement.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The run measured a `--storage` scratch volume's device.
    pub on_volume: bool,
    /// The devices the read tests read when the source is not one (a ZFS
    /// pool's leaf disks).
    pub read_devices: &'a [PathBuf],
    /// What stands behind PATH, where resolved.
    pub storage: Option<&'a crate::model::storage::Storage>,
}

/// One JSON entry of a figure: a figure measured once per key has one
/// per key.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key it was measured for (see `figure::Spec::per`).
    pub instance: Option<String>,
    pub value: f64,
    /// One per run (empty where the figure keeps none).
    pub samples: Vec<f64>,
    pub facts: Facts,
}

impl Entry {
    /// The number a value of the figure reads from this entry: its value,
    /// or one its facts hold.
    pub fn reading(&self, field: Field) -> Option<f64> {
        match field {
            Field::Value => Some(self.value),
            field => self.facts.number(field),
        }
    }

    /// A figure measured in runs, valued by its spec's rule (the median,
    /// SEQ WRITE's mean); `None` without any run.
    pub fn of_runs(figure: Figure, samples: Vec<f64>, facts: Facts) -> Option<Entry> {
        Some(Entry {
            instance: None,
            value: figure.spec().runs.of(&samples)?,
            samples,
            facts,
        })
    }

    /// A figure measured once.
    pub fn once(value: f64, facts: Facts) -> Entry {
        Entry {
            instance: None,
            value,
            samples: Vec::new(),
            facts,
        }
    }
}

/// What one figure of a run shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Projection {
    /// Its JSON entries; none when it has no figure.
    pub entries: Vec<Entry>,
    /// The value part of its text line (after the padded label); `None`:
    /// no line.
    pub line: Option<String>,
    /// What stderr says about it beyond the line (io_uring refused, a
    /// device read to its end, a dead name server).
    pub diagnostic: Option<String>,
    /// Measured, but without a number, and why: the run fails (no name
    /// server answered).
    pub failed: Option<String>,
}

impl Projection {
    /// The value of its entry measured once (not per key).
    pub fn value(&self) -> Option<f64> {
        self.entries
            .iter()
            .find(|e| e.instance.is_none())
            .map(|e| e.value)
    }
}

/// A model type's projection of a figure it measured. One model type
/// can measure several figures (PBS's five CPU figures, the scaling's
/// JOBS and PEAK, the I/O tests): `figure` says which.
pub trait Project {
    fn project(&self, figure: Figure, context: &Context) -> Projection;
}

/// One measurement of a timed test, reduced to the number its line prints.
pub trait Sample {
    fn value(&self) -> f64;
}

impl<T: Sample> Sample for Devices<T> {
    /// The mean over the devices read in turn.
    fn value(&self) -> f64 {
        let values: Vec<f64> = self.each.iter().map(Sample::value).collect();
        crate::model::stats::mean(&values).unwrap_or(0.0)
    }
}

/// What the `-v` details of an entry may draw on beyond its facts.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub figure: Figure,
    pub instance: Option<&'a str>,
    pub value: f64,
    /// `settings.dns_schedule`.
    pub dns_schedule: &'a str,
    /// The filesystem's type and mount options, where known.
    pub filesystem: Option<(&'a str, &'a str)>,
}

/// What a kind of facts answers: its derived numbers and texts (for
/// `compare`, CSV, metrics and the cluster table), what it says of the
/// methods that shape it, and its `-v` details.
pub trait Facet {
    /// A number of the entry other than its value (`Field::Value`).
    fn number(&self, _field: Field) -> Option<f64> {
        None
    }

    /// A text value of the entry (the search domain, the flushes' verdict).
    fn text(&self, _field: Field) -> Option<String> {
        None
    }

    /// How the entry was measured in respect of `method`, where its facts say.
    fn method(&self, _method: Method) -> Option<String> {
        None
    }

    /// Its lines in `-v`'s details, each ending in a newline.
    fn details(&self, _seen: &Seen) -> String {
        String::new()
    }
}

macro_rules! facts {
    ($($kind:ident($facts:ty),)*) => {
        /// The facts a figure's JSON entry carries beside its value, one
        /// kind per figure (`figure::Spec::facts`), flattened into the
        /// entry so the document keeps one object per figure.
        #[derive(Debug, Clone, Default, Serialize)]
        #[serde(untagged)]
        pub enum Facts {
            /// Its value and runs alone.
            #[default]
            None,
            $($kind($facts),)*
        }

        impl Facts {
            /// The facts of `kind` from the entry's other fields (a result
            /// read back); `Facts::None` for a figure of no kind.
            pub fn read(
                kind: Kind,
                fields: serde_json::Map<String, serde_json::Value>,
            ) -> Result<Facts, serde_json::Error> {
                let value = serde_json::Value::Object(fields);
                Ok(match kind {
                    Kind::None => Facts::None,
                    $(Kind::$kind => Facts::$kind(serde_json::from_value(value)?),)*
                })
            }

            fn facet(&self) -> Option<&dyn Facet> {
                match self {
                    Facts::None => None,
                    $(Facts::$kind(f) => Some(f),)*
                }
            }
        }
    };
}

facts! {
    Regex(pveperf::RegexFacts),
    Device(device::DeviceFacts),
    Fsync(pveperf::FsyncFacts),
    Dns(dns::DnsFacts),
    SeqWrite(io::SeqWriteFacts),
    Io(io::IoFacts),
    Sync(sync::SyncFacts),
    Peak(sync::PeakFacts),
    Cpu(cpu::CpuFacts),
    Sustained(sustained::SustainedFacts),
    Net(net::NetFacts),
    Load(load::LoadFacts),
    Ceph(ceph::CephFacts),
}

/// Facts are equal when they say the same in the document: facts of a
/// kind that hold nothing are no facts.
impl PartialEq for Facts {
    fn eq(&self, other: &Facts) -> bool {
        let fields = |f: &Facts| match serde_json::to_value(f) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        fields(self) == fields(other)
    }
}

impl Facts {
    /// A number of the entry other than its value.
    pub fn number(&self, field: Field) -> Option<f64> {
        self.facet()?.number(field)
    }

    /// A text value of the entry.
    pub fn text(&self, field: Field) -> Option<String> {
        self.facet()?.text(field)
    }

    /// How the entry was measured in respect of `method`.
    pub fn method(&self, method: Method) -> Option<String> {
        self.facet()?.method(method)
    }

    /// Its `-v` details.
    pub fn details(&self, seen: &Seen) -> String {
        self.facet().map(|f| f.details(seen)).unwrap_or_default()
    }
}

/// A pveperf line measured in runs: the median of `samples`, printed by
/// `text`; nothing without runs.
pub(crate) fn runs(
    figure: Figure,
    samples: Vec<f64>,
    facts: Facts,
    text: impl FnOnce(f64) -> String,
) -> Projection {
    let Some(entry) = Entry::of_runs(figure, samples, facts) else {
        return Projection::default();
    };
    Projection {
        line: Some(text(entry.value)),
        entries: vec![entry],
        ..Projection::default()
    }
}

/// Latency in ms from a summary's microseconds.
pub(crate) fn ms(us: f64) -> f64 {
    us / 1000.0
}

/// A summary's percentiles for `-v`: `p50 0.350 ms, ..., max 2.501 ms over 4 operations`.
pub fn latency_ms(l: &crate::model::latency::LatencySummary) -> String {
    let ms = |us: f64| format!("{:.3}", us / 1000.0);
    let p99_9 = l
        .p99_9_us
        .map(|p| format!(" p99.9 {} ms,", ms(p)))
        .unwrap_or_default();
    format!(
        "p50 {} ms, p90 {} ms, p99 {} ms,{p99_9} max {} ms over {} operations",
        ms(l.p50_us),
        ms(l.p90_us),
        ms(l.p99_us),
        ms(l.max_us),
        l.count
    )
}

/// The last part of a device path (`/dev/sda3` -> `sda3`).
pub fn short_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::device::DeviceFacts;
    use super::pveperf::{FsyncFacts, RegexFacts, fsync_meaning};
    use super::*;

    fn seen(figure: Figure, value: f64) -> Seen<'static> {
        Seen {
            figure,
            instance: None,
            value,
            dns_schedule: "bounded",
            filesystem: None,
        }
    }

    /// The last detail line: the pve-docs guidance.
    fn guidance(facet: &dyn Facet, figure: Figure, value: f64) -> String {
        let text = facet.details(&seen(figure, value));
        text.lines().last().unwrap().trim().to_string()
    }

    #[test]
    fn guidance_follows_pve_docs_thresholds() {
        let fsync = FsyncFacts { latency: None };
        let g = |v| guidance(&fsync, Figure::FsyncsPerSecond, v);
        assert!(g(201.0).ends_with(": good"));
        assert!(g(199.0).contains(": low: a write-back cache"));
        let reads = DeviceFacts {
            device: "/dev/sda".into(),
            ..DeviceFacts::default()
        };
        let g = |v| guidance(&reads, Figure::BufferedReads, v);
        assert!(g(40.0).ends_with(": good"));
        assert!(g(39.9).ends_with(": low"));
        let seek = DeviceFacts {
            block_size: Some(512),
            ..reads.clone()
        };
        let g = |v| guidance(&seek, Figure::AverageSeekTime, v);
        assert!(g(7.9).ends_with("good, even for SAS/SCSI disks"));
        assert!(g(15.0).ends_with("acceptable for SATA disks, slow for SAS/SCSI"));
        assert!(g(25.0).ends_with(": slow"));
        let regex = |engine: &str, v| {
            let facts = RegexFacts {
                engine: engine.into(),
            };
            guidance(&facts, Figure::RegexPerSecond, v)
        };
        assert!(regex("perl", 300_001.0).ends_with(": good"));
        assert!(regex("perl", 299_999.0).ends_with(": low"));
        assert!(regex("rust", 1e6).contains("--regex-engine perl"));
    }

    #[test]
    fn fsync_meaning_is_true_for_the_filesystem_at_hand() {
        let ext4 = fsync_meaning(Some(("ext4", "rw,relatime,data=ordered")));
        assert!(ext4.starts_with("measures: pveperf's loop (open with truncate, fsync, write"));
        assert!(ext4.contains("on ext4 (data=ordered)"), "{ext4}");
        for (fstype, options) in [
            ("ext4", "rw,relatime,noauto_da_alloc,data=ordered"),
            ("ext4", "rw,data=writeback"),
            ("xfs", "rw,relatime,attr2,inode64"),
            ("btrfs", "rw,relatime,space_cache=v2"),
        ] {
            let text = fsync_meaning(Some((fstype, options)));
            assert!(
                !text.contains("part of the data is synced"),
                "{fstype} {options}: {text}"
            );
            assert!(text.contains("not the data written after it"));
        }
        assert!(fsync_meaning(Some(("tmpfs", "rw"))).contains("fsync does nothing"));
        assert!(fsync_meaning(None).ends_with("SYNC WRITE 4K (-x)"));
    }
}
