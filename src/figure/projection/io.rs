//! The projections of the `-x` I/O tests: SEQ WRITE's runs, the queue-depth
//! jobs on one or more devices (SEQ READ DIRECT, the random reads and
//! writes) and MIXED.

use serde::{Deserialize, Serialize};

use super::interface::{InterfaceShare, share};
use super::{Context, Entry, Facet, Facts, Project, Projection, Sample, Seen, ms, short_name};
use crate::figure::{Field, Figure, Method};
use crate::model::Devices;
use crate::model::io::{IoStats, MixedFigure, SeqWriteFigure};
use crate::model::latency::{LatencySummary, merged};

impl Sample for SeqWriteFigure {
    fn value(&self) -> f64 {
        self.mib_per_sec()
    }
}

/// SEQ WRITE's facts: what it wrote.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SeqWriteFacts {
    /// `incompressible` or `zeros`.
    pub data: String,
}

impl Facet for SeqWriteFacts {
    fn method(&self, method: Method) -> Option<String> {
        (method == Method::Data).then(|| self.data.clone())
    }
}

impl Project for Vec<SeqWriteFigure> {
    fn project(&self, figure: Figure, context: &Context) -> Projection {
        let zeros = self.iter().any(|r| r.zero_data);
        let facts = SeqWriteFacts {
            data: if zeros { "zeros" } else { "incompressible" }.into(),
        };
        let samples: Vec<f64> = self.iter().map(Sample::value).collect();
        let Some(entry) = Entry::of_runs(figure, samples, Facts::SeqWrite(facts)) else {
            return Projection::default();
        };
        let data = if zeros {
            "zeros"
        } else {
            "incompressible data"
        };
        let line = if context.on_volume {
            format!(
                "{:.2} MB/sec (the scratch volume's prefill: all of it once, 1 MiB O_DIRECT writes; {data})",
                entry.value
            )
        } else {
            let each: Vec<String> = entry.samples.iter().map(|v| format!("{v:.2}")).collect();
            format!(
                "{:.2} MB/sec ({} runs: {}; {data})",
                entry.value,
                self.len(),
                each.join(", ")
            )
        };
        Projection {
            line: Some(line),
            entries: vec![entry],
            ..Projection::default()
        }
    }
}

/// An I/O test's facts: how it ran and what it counted (the mean over
/// the devices read in turn).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IoFacts {
    /// `io_uring` or `psync`.
    pub engine: String,
    /// Why io_uring did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_fallback: Option<String>,
    pub block_size: usize,
    pub queue_depth: usize,
    pub read_iops: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<f64>,
    /// Per read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_latency: Option<LatencySummary>,
    /// CPU time of the probe per operation, in microseconds.
    pub cpu_us_per_op: f64,
    /// MIXED: whether its file was opened with O_DIRECT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direct: Option<bool>,
    /// SEQ READ DIRECT against its disk's narrowest link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<InterfaceShare>,
    /// RANDOM WRITE: `unwritten-once` (a fresh preallocated file in PATH
    /// per job, as fio's default file, each block written at most once by
    /// the random map) or `written` (a scratch volume after its prefill).
    /// `unwritten`: one preallocated file for both jobs, no random map.
    /// Results without it wrote over a file laid out first: `written`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_blocks: Option<String>,
}

impl Facet for IoFacts {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::WriteIops => self.write_iops,
            Field::P99Ms => self.latency.map(|l| ms(l.p99_us)),
            Field::MaxMs => self.latency.map(|l| ms(l.max_us)),
            _ => None,
        }
    }

    fn method(&self, method: Method) -> Option<String> {
        match method {
            Method::IoEngine => Some(self.engine.clone()),
            Method::WriteBlocks => Some(
                self.write_blocks
                    .clone()
                    .unwrap_or_else(|| "written".into()),
            ),
            _ => None,
        }
    }

    fn details(&self, _: &Seen) -> String {
        self.interface
            .as_ref()
            .map(InterfaceShare::detail)
            .unwrap_or_default()
    }
}

impl IoFacts {
    /// The facts of jobs on one or more devices; `None` without any.
    pub(crate) fn of(each: &[&IoStats]) -> Option<IoFacts> {
        let first = each.first()?;
        let n = each.len() as f64;
        let mean = |f: fn(&IoStats) -> f64| each.iter().map(|s| f(s)).sum::<f64>() / n;
        let writes = mean(IoStats::write_iops);
        Some(IoFacts {
            engine: first.engine.name().into(),
            engine_fallback: first.fallback.clone(),
            block_size: first.block,
            queue_depth: first.depth,
            read_iops: mean(IoStats::read_iops),
            write_iops: (writes > 0.0).then_some(writes),
            latency: merged(each.iter().map(|s| Some(&s.read_latency))).and_then(|l| l.summary()),
            write_latency: merged(each.iter().map(|s| Some(&s.write_latency)))
                .and_then(|l| l.summary()),
            cpu_us_per_op: mean(IoStats::cpu_us_per_op),
            direct: None,
            interface: None,
            write_blocks: None,
        })
    }
}

/// The engine, and that it was not io_uring's choice.
pub(crate) fn engine_note(s: &IoStats) -> String {
    match &s.fallback {
        Some(_) => format!("{} (io_uring refused)", s.engine.name()),
        None => s.engine.name().to_string(),
    }
}

/// What stderr says of a job that fell back to psync.
pub(crate) fn fallback(figure: Figure, s: &IoStats) -> Option<String> {
    s.fallback
        .as_ref()
        .map(|why| format!("{}: {why}; ran psync instead", figure.label()))
}

fn mean(each: &[IoStats], f: fn(&IoStats) -> f64) -> f64 {
    let values: Vec<f64> = each.iter().map(f).collect();
    crate::model::stats::mean(&values).unwrap_or(0.0)
}

/// SEQ READ DIRECT, RANDOM READ 4K QD1 and QD32 (on the source or a ZFS
/// pool's leaf disks in turn) and RANDOM WRITE 4K QD1 and QD32 (on a
/// scratch volume's device or a file in PATH).
impl Project for Devices<IoStats> {
    fn project(&self, figure: Figure, context: &Context) -> Projection {
        let each: Vec<&IoStats> = self.each.iter().collect();
        let (Some(first), Some(mut facts)) = (self.each.first(), IoFacts::of(&each)) else {
            return Projection::default();
        };
        let writes = matches!(figure, Figure::RandWrite4kQd1 | Figure::RandWrite4kQd32);
        let value = if figure == Figure::SeqReadDirect {
            mean(&self.each, IoStats::read_mib_per_sec)
        } else if writes {
            mean(&self.each, IoStats::write_iops)
        } else {
            mean(&self.each, IoStats::read_iops)
        };
        if figure == Figure::SeqReadDirect {
            facts.interface = share(context.storage, value);
        }
        if writes {
            // `unwritten-once`: a fresh preallocated file per job, each
            // block written at most once in the window (the random map);
            // `unwritten` was the one file of both jobs, without the map.
            let blocks = if context.on_volume {
                "written"
            } else {
                "unwritten-once"
            };
            facts.write_blocks = Some(blocks.into());
        }
        let names = if self.named {
            let names: Vec<String> = context.read_devices.iter().map(|d| short_name(d)).collect();
            format!(" on {}", names.join(", "))
        } else {
            String::new()
        };
        let latency = |of: fn(&IoStats) -> &crate::model::latency::Latency| {
            merged(self.each.iter().map(|s| Some(of(s)))).and_then(|l| l.summary())
        };
        let line = if figure == Figure::SeqReadDirect {
            Some(format!(
                "{value:.2} MB/sec (1 MiB O_DIRECT reads, QD8, {}{names})",
                engine_note(first)
            ))
        } else if writes {
            let on = if context.on_volume {
                " on the scratch volume"
            } else {
                " on a file in PATH"
            };
            latency(|s| &s.write_latency).map(|l| {
                format!(
                    "{value:.0} IOPS (mean {:.3} ms, p99 {:.3} ms, O_DIRECT, {}{on})",
                    ms(l.mean_us),
                    ms(l.p99_us),
                    engine_note(first),
                )
            })
        } else {
            latency(|s| &s.read_latency).map(|l| {
                format!(
                    "{value:.0} IOPS (mean {:.3} ms, p99 {:.3} ms, {}{names})",
                    ms(l.mean_us),
                    ms(l.p99_us),
                    engine_note(first),
                )
            })
        };
        Projection {
            entries: vec![Entry::once(value, Facts::Io(facts))],
            line,
            diagnostic: fallback(figure, first),
            failed: None,
        }
    }
}

impl Project for MixedFigure {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        let s = &self.stats;
        let Some(facts) = IoFacts::of(&[s]) else {
            return Projection::default();
        };
        let file = if self.direct {
            "O_DIRECT file"
        } else {
            "buffered file: the filesystem refuses O_DIRECT"
        };
        Projection {
            entries: vec![Entry::once(
                s.read_iops(),
                Facts::Io(IoFacts {
                    direct: Some(self.direct),
                    ..facts
                }),
            )],
            line: Some(format!(
                "{:.0} read IOPS, {:.0} write IOPS (80% random, {file}, {})",
                s.read_iops(),
                s.write_iops(),
                engine_note(s)
            )),
            diagnostic: fallback(figure, s),
            failed: None,
        }
    }
}
