//! A `datastore` run's forms: the text (pveperf's style of lines, then the
//! projection and the hints), a CSV row per figure, metrics, the picture,
//! and the probe result `compare` and `--baseline` read; each reads the
//! figures one way, through [`DatastoreReport::figures`].

use super::report::{DatastoreReport, fmt_time};
use crate::figure::Figure;
use crate::output::metrics::gauges::{Gauge, Subject};

/// One figure of the run: which, for what (`file`, `16`), its value.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    pub figure: Figure,
    pub instance: Option<String>,
    pub value: f64,
    /// What the line adds: `(disk-capped)`, `(cold)`.
    pub note: String,
}

/// The CSV's columns.
pub const CSV_HEADER: [&str; 7] = [
    "timestamp",
    "path",
    "figure",
    "instance",
    "value",
    "unit",
    "note",
];

impl FigureRow {
    /// Its CSV cells: `figure,instance,value,unit,note`.
    pub fn cells(self) -> [String; 5] {
        [
            self.figure.key().to_string(),
            self.instance.unwrap_or_default(),
            format!("{:.3}", self.value),
            self.figure.unit().to_string(),
            self.note,
        ]
    }
}

impl DatastoreReport {
    /// Every figure measured, in print order.
    pub fn figures(&self) -> Vec<FigureRow> {
        let m = &self.result.measured;
        let cold = if m.cold { "cold" } else { "caches not dropped" };
        let row = |figure, instance: Option<String>, value: f64, note: String| FigureRow {
            figure,
            instance,
            value,
            note,
        };
        let mut out = Vec::new();
        if let Some(s) = m.create_s {
            let note = format!("{s:.1} s for 65,536");
            out.push(row(
                Figure::DatastoreCreate,
                None,
                f64::from(super::PREFIX_DIRS) / s,
                note,
            ));
        }
        for i in &m.ingest {
            let note = format!("{} chunks", i.chunks);
            out.push(row(
                Figure::DatastoreIngest,
                Some(i.sync_level.name().into()),
                i.mib_s,
                note,
            ));
        }
        if let Some(v) = m.known_per_s {
            out.push(row(Figure::DatastoreKnown, None, v, cold.into()));
        }
        for r in &m.restore {
            let note = format!("{cold}, {:.0} MiB/s of image", r.image_mib_s);
            out.push(row(
                Figure::DatastoreRestore,
                Some(r.in_flight.to_string()),
                r.mib_s,
                note,
            ));
        }
        for v in &m.verify {
            let mut note = format!(
                "{cold}, {} decoders {:.0}% busy: {}-capped",
                v.workers,
                v.decoders_busy * 100.0,
                v.capped_by
            );
            if v.bad > 0 {
                note += &format!(", {} chunks bad", v.bad);
            }
            out.push(row(
                Figure::DatastoreVerify,
                Some(v.readers.to_string()),
                v.mib_s,
                note,
            ));
        }
        if let Some(v) = m.mark_per_s {
            out.push(row(Figure::DatastoreGcMark, None, v, cold.into()));
        }
        if let Some(v) = m.sweep_dirs_per_s {
            out.push(row(Figure::DatastoreGcSweepDirs, None, v, cold.into()));
        }
        if let Some(v) = m.sweep_per_s {
            out.push(row(Figure::DatastoreGcSweep, None, v, cold.into()));
        }
        out
    }

    /// The run's figures as a probe result: one entry per figure and
    /// instance, for `compare` and `--baseline`.
    pub fn as_result(&self) -> crate::output::result::JsonReport {
        use crate::figure::projection::Entry;
        use crate::output::result::{JsonReport, XFigure};
        let extended = self
            .figures()
            .into_iter()
            .map(|r| {
                let entry = Entry {
                    instance: r.instance,
                    value: r.value,
                    samples: Vec::new(),
                    facts: Default::default(),
                };
                XFigure::of(r.figure, entry)
            })
            .collect();
        let version = (self.pveprobe_version.as_str(), self.timestamp.as_str());
        let mut result = JsonReport::of_figures(
            self.result.path.clone(),
            version,
            extended,
            self.result.interrupted_by,
        );
        // Named by the node that measured it, not by PATH.
        result.host.hostname = self.hostname.clone();
        result
    }

    fn text(&self) -> String {
        let mut out = String::new();
        let r = &self.result;
        if let Some(fs) = &r.filesystem {
            out += &format!(
                "DATASTORE PATH: {} ({} on {}, {})\n",
                r.path, fs.fstype, fs.source, fs.options
            );
        }
        for row in self.figures() {
            let label = match &row.instance {
                Some(i) => format!("{} {}", row.figure.label(), i.to_uppercase()),
                None => row.figure.label().to_string(),
            };
            out += &format!(
                "{:<31}{} {} ({})\n",
                format!("{label}:"),
                row.figure.spec().format(row.value),
                row.figure.unit(),
                row.note
            );
        }
        if let Some(a) = &r.measured.atime {
            out += &format!(
                "{:<31}{} (mount: {})\n",
                "DATASTORE ATIME:",
                if a.updates {
                    "updates"
                } else {
                    "DOES NOT UPDATE"
                },
                a.mount_option.as_deref().unwrap_or("no atime option")
            );
        }
        if let Some(q) = &r.pbs_qemu {
            let fetches = match super::report::restore_fetches(q) {
                Some(1) => " (restores one chunk at a time: RESTORE 1)",
                Some(_) => " (restores 16 chunks at a time: RESTORE 16)",
                None => "",
            };
            out += &format!("{:<31}{q}{fetches}\n", "PROXMOX-BACKUP-QEMU:");
        }
        out += &self.hours_text();
        if !self.hints.is_empty() {
            out += "\nHINTS\n";
            for h in &self.hints {
                out += &format!("  {h}\n");
            }
        }
        for e in &r.errors {
            out += &format!("\nNOT MEASURED: {e}\n");
        }
        for left in &r.left_behind {
            out += &format!("\nLEFT BEHIND: {left}\n");
        }
        out
    }

    /// The datastore found at PATH and its hours.
    fn hours_text(&self) -> String {
        let mut out = String::new();
        let r = &self.result;
        if let (Some(e), Some(p)) = (&r.existing, &self.projection) {
            let about = e
                .chunks_error
                .map(|x| format!(" (sampled {} dirs, ±{:.0}%)", e.dirs_read, x * 100.0))
                .unwrap_or_default();
            out += &format!(
                "\nDATASTORE {}: {} chunks{about}, {} snapshots, {} .fidx, {} .didx, {} references\n",
                e.name.as_deref().unwrap_or(&e.path),
                e.chunks,
                e.snapshots,
                e.fidx,
                e.didx,
                e.references
            );
            out += &format!(
                "  GC PHASE 1 (mark):    {} ({} chunks touched)\n",
                fmt_time(p.gc_phase1_s),
                p.gc_touches
            );
            out += &format!(
                "  GC PHASE 2 (sweep):   {} (removes chunks untouched for {})\n",
                fmt_time(p.gc_phase2_s),
                fmt_time(Some(p.gc_atime_cutoff_min as f64 * 60.0))
            );
            out += &format!(
                "  VERIFY ALL:           {} ({} reader{})\n",
                fmt_time(p.verify_all_s),
                p.verify_readers,
                if p.verify_readers == 1 { "" } else { "s" }
            );
            if let Some(l) = &e.largest {
                out += &format!(
                    "  RESTORE {} ({:.1} GiB): {} at 1 in flight, {} at 16\n",
                    l.snapshot,
                    l.image_bytes as f64 / f64::from(1 << 30),
                    fmt_time(p.restore_1_s),
                    fmt_time(p.restore_16_s)
                );
                let backups: Vec<String> = p
                    .backup_s
                    .iter()
                    .map(|b| format!("{} at {}", fmt_time(Some(b.seconds)), b.sync_level.name()))
                    .collect();
                out += &format!("  FIRST BACKUP OF IT:   {}\n", backups.join(", "));
            }
            for d in &e.damaged {
                out += &format!("  DAMAGED INDEX: {d}\n");
            }
            for n in &e.notes {
                out += &format!("  NOTE: {n}\n");
            }
        }
        out
    }

    /// Each figure as a metrics subject: labels `figure`, `instance`, `path`.
    pub(super) fn subjects(&self) -> Vec<Subject> {
        self.figures()
            .into_iter()
            .map(|r| Subject {
                labels: vec![
                    ("figure", r.figure.key().into()),
                    ("instance", r.instance.unwrap_or_default()),
                    ("path", self.result.path.clone()),
                ],
                gauges: vec![gauge(r.figure, r.value)],
            })
            .collect()
    }
}

/// A figure's gauge: MiB/s as bytes a second, the rest as they are.
fn gauge(figure: Figure, value: f64) -> Gauge {
    if figure.unit() == "MiB/s" {
        Gauge::new(
            (
                "bytes_per_second",
                "datastore: bytes a second on disk; higher is better",
            ),
            value * 1048576.0,
            ("mib_per_s", value),
        )
    } else {
        Gauge::new(
            (
                "per_second",
                "datastore: chunks or directories a second; higher is better",
            ),
            value,
            ("per_s", value),
        )
    }
}

impl crate::output::Document for DatastoreReport {
    const PICTURE: bool = true;

    fn text(&self) -> String {
        DatastoreReport::text(self)
    }

    fn metrics(&self, format: crate::output::Format) -> String {
        use crate::output::metrics::gauges;
        match format {
            crate::output::Format::Influx => {
                gauges::influx("pveprobe_datastore", &self.subjects(), &self.timestamp)
            }
            _ => gauges::prometheus("pveprobe_datastore", &self.subjects()),
        }
    }

    fn csv(&self, header: bool) -> String {
        let rows: Vec<Vec<String>> = self
            .figures()
            .into_iter()
            .map(|r| {
                [self.timestamp.clone(), self.result.path.clone()]
                    .into_iter()
                    .chain(r.cells())
                    .collect()
            })
            .collect();
        let header = header.then(|| CSV_HEADER.to_vec());
        crate::output::csv::table(header, rows)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(CSV_HEADER.to_vec())
    }

    /// Restore against chunks in flight, verify against readers.
    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        use crate::output::plot::{Chart, Line, charts_svg};
        let m = &self.result.measured;
        let line = |name: &str, points: Vec<(f64, f64)>| Line {
            name: name.into(),
            tags: Vec::new(),
            points,
        };
        let charts = vec![
            Chart {
                title: "RESTORE: chunk files read in random order".into(),
                x_desc: "chunks in flight".into(),
                unit: "MiB/s".into(),
                lines: vec![line(
                    "restore",
                    m.restore
                        .iter()
                        .map(|r| (f64::from(r.in_flight), r.mib_s))
                        .collect(),
                )],
                mark_x: None,
            },
            Chart {
                title: "VERIFY: chunks read in inode order, 4 decoders".into(),
                x_desc: "readers".into(),
                unit: "MiB/s".into(),
                lines: vec![line(
                    "verify",
                    m.verify
                        .iter()
                        .map(|v| (f64::from(v.readers), v.mib_s))
                        .collect(),
                )],
                mark_x: None,
            },
        ];
        Some(charts_svg(
            &format!("pveprobe datastore {}", self.result.path),
            &[],
            &charts,
        ))
    }
}

/// The document `compare` and `--baseline` read: a `datastore` file.
impl crate::results::Stored for DatastoreReport {
    const KIND: Option<&'static str> = Some(super::report::KIND);
    const SCHEMA_VERSION: u32 = super::report::SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// Its figures, named by the path measured.
    fn results(self) -> Vec<crate::results::Named> {
        let who = format!("datastore {}", self.result.path);
        vec![crate::results::Named::new(Some(who), self.as_result())]
    }
}

#[cfg(test)]
mod tests {
    use super::super::report::sample;
    use super::*;
    use crate::output::Document as _;

    #[test]
    fn every_figure_in_print_order_once_per_level_depth_and_reader_count() {
        let keys: Vec<(String, Option<String>)> = sample()
            .figures()
            .into_iter()
            .map(|r| (r.figure.key().to_string(), r.instance))
            .collect();
        assert_eq!(keys.len(), 1 + 3 + 1 + 4 + 3 + 3);
        assert_eq!(keys[0], ("datastore_create".into(), None));
        assert_eq!(keys[3], ("datastore_ingest".into(), Some("file".into())));
        assert_eq!(keys[8], ("datastore_restore".into(), Some("16".into())));
        assert_eq!(keys.last().unwrap().0, "datastore_gc_sweep");
        // Each figure of the list, and no other.
        let mut figures: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
        figures.dedup();
        let listed: Vec<&str> = Figure::DATASTORE.iter().map(|f| f.key()).collect();
        assert_eq!(figures, listed);
    }

    #[test]
    fn the_text_has_a_line_per_figure_and_the_csv_a_row() {
        let mut r = sample();
        r.hints = super::super::hints::hints(&r);
        let text = r.text();
        assert!(
            text.contains("DATASTORE RESTORE 16:          320 MiB/s (cold, 800 MiB/s of image)\n"),
            "{text}"
        );
        assert!(
            text.contains("DATASTORE INGEST FILESYSTEM:   400 MiB/s (96 chunks)\n"),
            "{text}"
        );
        assert!(
            text.contains("DATASTORE ATIME:               updates (mount: relatime)\n"),
            "{text}"
        );
        assert!(
            text.contains("HINTS\n  [datastore-sync-file-costly] /mnt/datastore/store1: sync-level file ingests 100 MiB/s"),
            "{text}"
        );
        let csv = r.csv(true);
        let mut rows = csv::Reader::from_reader(csv.as_bytes());
        assert_eq!(
            rows.headers().unwrap().iter().collect::<Vec<_>>(),
            CSV_HEADER
        );
        let rows: Vec<csv::StringRecord> = rows.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), r.figures().len());
        assert_eq!(
            rows[8].iter().skip(2).take(4).collect::<Vec<_>>(),
            ["datastore_restore", "16", "320.000", "MiB/s"]
        );
        assert!(!r.csv(false).starts_with("timestamp"));
    }

    #[test]
    fn metrics_read_back_by_influxdata_s_parser_and_in_base_units() {
        let r = sample();
        let influx = r.metrics(crate::output::Format::Influx);
        let lines: Vec<_> = influxdb_line_protocol::parse_lines(&influx)
            .map(|l| l.unwrap())
            .collect();
        assert_eq!(lines.len(), r.figures().len());
        assert!(
            lines
                .iter()
                .all(|l| l.series.measurement.as_str() == "pveprobe_datastore")
        );
        let prom = r.metrics(crate::output::Format::Prometheus);
        assert!(prom.contains(
            "pveprobe_datastore_bytes_per_second{figure=\"datastore_restore\",instance=\"16\",path=\"/mnt/datastore/store1\"} 335544320"
        ), "{prom}");
        assert!(
            prom.contains("pveprobe_datastore_per_second{figure=\"datastore_gc_mark\""),
            "{prom}"
        );
    }

    #[test]
    fn the_picture_is_svg_and_the_result_compare_reads_has_every_figure() {
        let r = sample();
        let svg = r.picture().unwrap().unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        assert!(svg.contains("RESTORE"));
        let result = r.as_result();
        assert_eq!(result.extended.len(), r.figures().len());
        assert_eq!(result.host.hostname.as_deref(), Some("pve1"));
        use crate::results::Stored as _;
        let named = r.results();
        assert_eq!(
            named[0].who.as_deref(),
            Some("datastore /mnt/datastore/store1")
        );
    }
}
