//! `qualify`'s document (`kind: "qualify"`): the device, its figures as
//! every result carries them (so `compare` ranks disks), where the one-job
//! figure sits, the verdicts, and what was written. Text, JSON and CSV (a
//! row per disk, for `--append`) are made from it.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::verdict::Placement;
use crate::figure::Figure;
use crate::model::qualify::{Device, Use, UseVerdict, Written};
use crate::output::result::{JsonReport, XFigure};

pub const KIND: &str = "qualify";
pub const SCHEMA_VERSION: u32 = 1;

/// How the tests ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QualifySettings {
    /// `--seconds`: each test's window.
    pub seconds: f64,
    /// `--sustained`'s budget.
    pub sustained_s: f64,
    /// Whether the device was to be discarded afterwards.
    pub discard: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QualifyReport {
    pub kind: String,
    pub schema_version: u32,
    pub pveprobe_version: String,
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    pub device: Device,
    pub settings: QualifySettings,
    /// What the checks looked at before writing (they found nothing).
    pub checked: Vec<String>,
    pub figures: Vec<XFigure>,
    /// Lines of the figures as the text shows them, by key.
    #[serde(skip)]
    pub lines: Vec<(Figure, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    pub verdicts: Vec<UseVerdict>,
    pub written: Written,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_by_signal: Option<i32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// DISK SUSTAINED WRITE's MiB/s each second, for `--plot`.
    #[serde(skip)]
    pub sustained_seconds: Option<Vec<f64>>,
    /// The error that stopped the tests early, if one did.
    #[serde(skip)]
    pub stopped_early: Option<String>,
}

impl crate::results::Stored for QualifyReport {
    const KIND: Option<&'static str> = Some(KIND);
    const SCHEMA_VERSION: u32 = SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    fn results(self) -> Vec<crate::results::Named> {
        let who = device_words(&self.device);
        vec![crate::results::Named::new(Some(who), self.as_result())]
    }
}

impl crate::output::Document for QualifyReport {
    const PICTURE: bool = true;

    /// A disk's qualification holds no probe result to send as metrics.
    const FORMATS: &'static [crate::output::Format] = crate::output::TABLES;

    /// The text for people.
    fn text(&self) -> String {
        let d = &self.device;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "DEVICE: /dev/{} {} {}, {}{}",
            d.name,
            d.model.as_deref().unwrap_or("(no model)"),
            crate::model::human::Size(d.size_bytes).decimals(1),
            d.transport.as_deref().unwrap_or("transport unknown"),
            match d.rotational {
                Some(true) => ", rotational",
                Some(false) => ", non-rotational",
                None => "",
            }
        );
        for (figure, line) in &self.lines {
            let _ = writeln!(out, "{}{line}", crate::output::line::label(*figure));
            if *figure == Figure::DiskSync1
                && let Some(p) = &self.placement
            {
                let _ = writeln!(out, "{:28}{}", "", p.words());
            }
        }
        if !self.verdicts.is_empty() {
            let _ = writeln!(out, "VERDICTS (they place a disk, they do not certify it):");
            for v in &self.verdicts {
                let value = v.value.map(|x| format!(" at {x:.0}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  {:<22}{}{value} ({})",
                    format!("{}:", v.for_use.words()),
                    v.fit.words(),
                    v.rule
                );
            }
        }
        let _ = writeln!(out, "WRITTEN: {}", written_words(d, &self.written));
        out
    }

    /// The header and one row.
    fn csv(&self, header: bool) -> String {
        let d = &self.device;
        let opt = |v: &Option<String>| v.clone().unwrap_or_default();
        let mut record = vec![
            self.timestamp.clone(),
            opt(&self.hostname),
            d.name.clone(),
            opt(&d.model),
            opt(&d.serial),
            opt(&d.wwn),
            d.size_bytes.to_string(),
            opt(&d.transport),
            self.settings.seconds.to_string(),
        ];
        let doc = self.as_result();
        for f in Figure::QUALIFY {
            for v in f.spec().values {
                record.push(doc.cell(v));
            }
        }
        for u in Use::ALL {
            record.push(
                self.verdicts
                    .iter()
                    .find(|v| v.for_use == u)
                    .map(|v| v.fit.words().to_string())
                    .unwrap_or_default(),
            );
        }
        record.push(self.written.bytes.to_string());
        record.push(self.written.afterwards.clone());
        let header = header
            .then(<Self as crate::output::Document>::csv_header)
            .flatten();
        crate::output::csv::table(header, [record])
    }

    /// The CSV header: the device, each figure's values, the verdicts.
    fn csv_header() -> Option<Vec<&'static str>> {
        let values = Figure::QUALIFY
            .iter()
            .flat_map(|f| f.spec().values.iter().map(|v| v.column));
        CSV_BEFORE
            .into_iter()
            .chain(values)
            .chain(Use::ALL.map(Use::column))
            .chain(["written_bytes", "afterwards"])
            .collect::<Vec<_>>()
            .into()
    }

    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        let title = format!("DISK SUSTAINED WRITE on {}", device_words(&self.device));
        let seconds = self.sustained_seconds.clone()?;
        Some(crate::output::plot::seconds_svg(&title, seconds))
    }
}

/// The device as a person names it: `Samsung SSD 870 QVO 1TB (sdb, S5VSNJ0R...)`.
pub fn device_words(d: &Device) -> String {
    let id = d.serial.as_deref().or(d.wwn.as_deref());
    let name = match id {
        Some(id) => format!("{}, {id}", d.name),
        None => d.name.clone(),
    };
    match d.model.as_deref() {
        Some(m) => format!("{m} ({name})"),
        None => name,
    }
}

/// What was written where, in a sentence.
pub fn written_words(d: &Device, w: &Written) -> String {
    if w.bytes == 0 {
        return format!("nothing was written to /dev/{}", d.name);
    }
    let mut parts = Vec::new();
    if w.sequential_to > 0 {
        parts.push(format!(
            "sequentially its first {} (offsets 0 to {})",
            crate::model::human::Size(w.sequential_to).decimals(1),
            w.sequential_to
        ));
    }
    if w.random {
        parts.push("4 KiB blocks at random offsets over all of it".into());
    }
    format!(
        "wrote {} to /dev/{}: {}; {}",
        crate::model::human::Size(w.bytes).decimals(1),
        d.name,
        parts.join(", and "),
        w.afterwards
    )
}

impl QualifyReport {
    /// As a result `compare` reads: the disk's figures, named after the disk.
    pub fn as_result(&self) -> JsonReport {
        JsonReport {
            schema_version: crate::output::result::SCHEMA_VERSION,
            pveprobe_version: self.pveprobe_version.clone(),
            timestamp: Some(self.timestamp.clone()).filter(|t| !t.is_empty()),
            path: format!("/dev/{}", self.device.name),
            settings: crate::output::result::Settings {
                duration_s: self.settings.seconds,
                ..Default::default()
            },
            host: crate::model::host::HostInfo {
                hostname: Some(device_words(&self.device)),
                ..Default::default()
            },
            extended: self.figures.clone(),
            notes: self.notes.clone(),
            interrupted_by_signal: self.interrupted_by_signal,
            ..JsonReport::default()
        }
    }
}

const CSV_BEFORE: [&str; 9] = [
    "timestamp",
    "hostname",
    "device",
    "model",
    "serial",
    "wwn",
    "size_bytes",
    "transport",
    "seconds",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Document as _;

    #[test]
    fn the_csv_header_has_every_qualify_value_and_verdict_once() {
        let h = QualifyReport::csv_header().expect("qualify appends rows");
        let unique: std::collections::BTreeSet<_> = h.iter().collect();
        assert_eq!(unique.len(), h.len());
        assert!(h.contains(&"disk_sync_write_4k_1job_iops"));
        assert!(h.contains(&"disk_sustained_write_last_10s_mib_per_s"));
        assert!(h.contains(&"use_zfs_data"));
        let row = QualifyReport::default().csv(true);
        let mut r = ::csv::Reader::from_reader(row.as_bytes());
        assert_eq!(r.headers().unwrap().len(), h.len());
        assert_eq!(r.records().next().unwrap().unwrap().len(), h.len());
    }

    #[test]
    fn written_says_what_and_where() {
        let d = Device {
            name: "loop7".into(),
            ..Device::default()
        };
        let mut w = Written::default();
        assert_eq!(written_words(&d, &w), "nothing was written to /dev/loop7");
        w.bytes = 3 << 30;
        w.sequential_to = 1 << 30;
        w.random = true;
        w.afterwards = "discarded".into();
        assert_eq!(
            written_words(&d, &w),
            "wrote 3.0 GiB to /dev/loop7: sequentially its first 1.0 GiB (offsets 0 to 1073741824), and 4 KiB blocks at random offsets over all of it; discarded"
        );
    }
}
