//! The projections of pveperf's device lines, BUFFERED READS and AVERAGE
//! SEEK TIME: each run reads one device, or a ZFS pool's leaf disks in
//! turn (their mean is the run's figure).

use serde::{Deserialize, Serialize};

use super::interface::{InterfaceShare, share};
use super::runs;
use super::{Context, Facet, Facts, Project, Projection, Sample, Seen, short_name};
use crate::figure::Figure;
use crate::model::Devices;
use crate::model::blockdev::{ReadFigure, SeekFigure};
use crate::model::latency::{LatencySummary, merged};
use crate::model::printable;

impl Sample for ReadFigure {
    fn value(&self) -> f64 {
        self.mib_per_sec()
    }
}

impl Sample for SeekFigure {
    fn value(&self) -> f64 {
        self.mean_ms()
    }
}

/// A device line's facts: the devices read, each one's figure when there
/// were several, and (AVERAGE SEEK TIME) the reads' size and latency.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceFacts {
    /// Per read over all runs (AVERAGE SEEK TIME).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    /// The block devices read, joined by `, `.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub device: String,
    /// Each device's figure (median over runs) when several were read in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_device: Option<Vec<PerDevice>>,
    /// Bytes per read (AVERAGE SEEK TIME: the logical block size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u32>,
    /// BUFFERED READS against its disk's narrowest link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<InterfaceShare>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerDevice {
    pub device: String,
    pub value: f64,
}

impl Facet for DeviceFacts {
    fn details(&self, seen: &Seen) -> String {
        let mut out = match self.block_size {
            Some(bs) => format!(
                "      device: {}, O_DIRECT reads of {bs} bytes\n",
                self.device
            ),
            None => format!("      device: {}, buffered 2 MiB reads\n", self.device),
        };
        if let Some(each) = &self.per_device {
            let list: Vec<String> = each
                .iter()
                .map(|d| format!("{} {}", d.device, seen.figure.spec().format(d.value)))
                .collect();
            out.push_str(&format!(
                "      per device (mean of these is the figure): {}\n",
                list.join(", ")
            ));
        }
        if let Some(l) = &self.latency {
            out.push_str(&format!("      latency: {}\n", super::latency_ms(l)));
        }
        if let Some(i) = &self.interface {
            out.push_str(&i.detail());
        }
        let v = seen.value;
        let guidance = if self.block_size.is_some() {
            let verdict = if v < 8.0 {
                "good, even for SAS/SCSI disks"
            } else if v <= 20.0 {
                "acceptable for SATA disks, slow for SAS/SCSI"
            } else {
                "slow"
            };
            format!("below 8 ms for SAS/SCSI, 15-20 ms for SATA disks: {verdict}")
        } else {
            let verdict = if v >= 40.0 { "good" } else { "low" };
            format!("at least 40 MB/sec: {verdict}")
        };
        out.push_str(&format!("      pve-docs: {guidance}\n"));
        out
    }
}

/// What a device test's runs read, and its projection.
trait Read: Sample {
    fn device(&self) -> &std::path::Path;
}

impl Read for ReadFigure {
    fn device(&self) -> &std::path::Path {
        &self.device
    }
}

impl Read for SeekFigure {
    fn device(&self) -> &std::path::Path {
        &self.device
    }
}

/// The devices' names joined, and with several devices each one's median.
fn device_facts<T: Read>(runs: &[Devices<T>]) -> Option<DeviceFacts> {
    let first = runs.first()?;
    let names: Vec<String> = first
        .each
        .iter()
        .map(|d| d.device().display().to_string())
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
                    value: crate::model::stats::median(&values).unwrap_or(0.0),
                }
            })
            .collect()
    });
    Some(DeviceFacts {
        device: names.join(", "),
        per_device,
        ..DeviceFacts::default()
    })
}

/// ` (sda, sdb)` when the line read disks other than the source (ZFS).
fn named<T: Read>(runs: &[Devices<T>]) -> String {
    match runs.first() {
        Some(first) if first.named => {
            let names: Vec<String> = first.each.iter().map(|d| short_name(d.device())).collect();
            format!(" ({})", printable(&names.join(", ")))
        }
        _ => String::new(),
    }
}

fn project<T: Read>(
    runs_of: &[Devices<T>],
    figure: Figure,
    facts: Option<DeviceFacts>,
    unit: &str,
) -> Projection {
    let Some(facts) = facts else {
        return Projection::default();
    };
    let samples = runs_of.iter().map(Sample::value).collect();
    let suffix = named(runs_of);
    runs(figure, samples, Facts::Device(facts), |v| {
        format!("{v:.2} {unit}{suffix}")
    })
}

impl Project for Vec<Devices<ReadFigure>> {
    fn project(&self, figure: Figure, context: &Context) -> Projection {
        let mut p = project(self, figure, device_facts(self), "MB/sec");
        for entry in &mut p.entries {
            if let Facts::Device(f) = &mut entry.facts {
                f.interface = share(context.storage, entry.value);
            }
        }
        if p.line.is_some() {
            p.diagnostic = self
                .iter()
                .flat_map(|r| &r.each)
                .find(|r| r.reached_end)
                .map(|whole| {
                    format!(
                        "{}: the whole of {} ({} bytes) was read before the window ended",
                        figure.label(),
                        whole.device.display(),
                        whole.bytes
                    )
                });
        }
        p
    }
}

impl Project for Vec<Devices<SeekFigure>> {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        let facts = device_facts(self).map(|f| {
            let all = self.iter().flat_map(|r| &r.each);
            DeviceFacts {
                latency: merged(all.map(|s| s.latency.as_ref())).and_then(|l| l.summary()),
                block_size: self
                    .first()
                    .and_then(|r| r.each.first())
                    .map(|s| s.block_size),
                ..f
            }
        });
        project(self, figure, facts, "ms")
    }
}
