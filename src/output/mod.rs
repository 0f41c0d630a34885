//! One output path for every command: a command's report is a
//! [`Document`], which renders itself in every format it has (JSON from
//! its serde form, so the serialiser is written once; CSV through the one
//! writer [`csv::table`]; the metrics formats from the probe results it
//! holds), and [`write`] puts the text on stdout or in a file with the
//! same rules everywhere: a reader that stops reading (`| head`) is no
//! error, a file that cannot be written is.
//!
//! What every document shares lives here too: the probe result every
//! command reads and writes ([`result`]), its CSV ([`csv`], with the
//! header check of `--append`) and metrics ([`metrics`]: names, labels,
//! escaping), a figure's line as pveperf prints it ([`line`]), and the
//! progress every long command shows on stderr ([`progress`]). What
//! `compare` reads back from a file is `results::Stored`.

pub mod csv;
pub mod line;
pub mod metrics;
pub mod plot;
pub mod progress;
pub mod result;
pub mod table;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How results are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For people: pveperf's lines, a table.
    Text,
    /// One JSON document on one line.
    Json,
    /// The same JSON, indented.
    JsonPretty,
    /// For spreadsheets.
    Csv,
    /// InfluxDB line protocol, tagged as PVE's External Metric Server tags.
    Influx,
    /// Prometheus' text format, for node_exporter's textfile collector.
    Prometheus,
}

impl Format {
    /// Whether the format writes probe results as metrics (figures with
    /// their node's labels) rather than the document's own shape.
    pub fn is_metrics(self) -> bool {
        matches!(self, Format::Influx | Format::Prometheus)
    }
}

/// A metrics format asked of a command that writes no probe result
/// (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error(
    "--output-format {} writes a probe run's figures as metrics; {command} writes none: use {}",
    crate::model::choice::Choice::name(*format),
    Format::tables()
)]
pub struct NoMetrics {
    pub format: Format,
    pub command: &'static str,
}

/// The formats a document has: `format`, unless `D` does not render it.
pub fn check<D: Document>(format: Format, command: &'static str) -> Result<Format, NoMetrics> {
    if D::FORMATS.contains(&format) {
        Ok(format)
    } else {
        Err(NoMetrics { format, command })
    }
}

/// Every format but the metrics ones: for documents that hold no probe result.
pub const TABLES: &[Format] = &[Format::Text, Format::Json, Format::JsonPretty, Format::Csv];

impl Format {
    /// The formats that are not metrics, for a message: `text, json, json-pretty or csv`.
    fn tables() -> String {
        use crate::model::choice::Choice;
        let names: Vec<&str> = Format::ALL
            .iter()
            .filter(|f| !f.is_metrics())
            .map(|f| f.name())
            .collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl crate::model::choice::Choice for Format {
    const ALL: &'static [Self] = &[
        Format::Text,
        Format::Json,
        Format::JsonPretty,
        Format::Csv,
        Format::Influx,
        Format::Prometheus,
    ];

    fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::JsonPretty => "json-pretty",
            Format::Csv => "csv",
            Format::Influx => "influx",
            Format::Prometheus => "prometheus",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Format::Text => "pveperf's lines (and -v details)",
            Format::Json => "One JSON document on one line",
            Format::JsonPretty => "The same JSON, indented",
            Format::Csv => "A CSV header and one row",
            Format::Influx => {
                "InfluxDB line protocol, tagged as PVE's metric server tags (host, object)"
            }
            Format::Prometheus => "Prometheus text format, for node_exporter's textfile collector",
        }
    }
}

/// A command's report, in every format it has; JSON is its serde form.
/// Every command's report implements it, `top`'s intervals one at a time.
/// The command's session (`commands::common::session`) refuses a format
/// the document does not have before the command runs, checks the
/// `--append` file's header against [`Document::csv_header`], writes what
/// it renders and saves its [`Document::picture`] for `--plot`.
pub trait Document: Serialize {
    /// The formats it is written in.
    const FORMATS: &'static [Format] = <Format as crate::model::choice::Choice>::ALL;

    fn text(&self) -> String;

    /// The text for a person at a terminal (inline bars where it has them).
    fn text_for_person(&self) -> String {
        self.text()
    }

    /// Its CSV rows, under the header when `header` (not when `--append`
    /// adds rows to a file that has it), written by [`csv::table`].
    fn csv(&self, header: bool) -> String;

    /// The CSV header, for a document that `--append` adds rows of to a file.
    fn csv_header() -> Option<Vec<&'static str>>
    where
        Self: Sized,
    {
        None
    }

    /// Whether the document has a picture for `--plot` (the session
    /// refuses `--plot` before any work when it has none).
    const PICTURE: bool = false;

    /// What `--plot` draws, when the document has a picture.
    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        None
    }

    /// The probe results the document holds, in a metrics format
    /// (`Influx` or `Prometheus`). A document that holds none (a
    /// comparison) keeps this default and writes nothing in them; its
    /// command refuses them first ([`check`], through `FORMATS`).
    fn metrics(&self, _format: Format) -> String {
        String::new()
    }
}

/// A document as `format`, ending in a newline (or empty); the CSV with
/// its header when `csv_header`.
pub fn render(doc: &impl Document, format: Format, csv_header: bool) -> String {
    match format {
        Format::Text => doc.text(),
        Format::Json => json(doc, false),
        Format::JsonPretty => json(doc, true),
        Format::Csv => doc.csv(csv_header),
        Format::Influx | Format::Prometheus => doc.metrics(format),
    }
}

/// The JSON of a document, with a final newline.
pub fn json(doc: &impl Serialize, pretty: bool) -> String {
    let mut text = if pretty {
        serde_json::to_string_pretty(doc)
    } else {
        serde_json::to_string(doc)
    }
    .expect("documents are plain data and always serialize");
    text.push('\n');
    text
}

/// Where the text goes.
#[derive(Debug, Clone, Copy)]
pub enum Destination<'a> {
    Stdout,
    /// A file, replaced, or with `append` added to.
    File {
        path: &'a Path,
        append: bool,
    },
}

impl<'a> Destination<'a> {
    /// `--output FILE` or stdout.
    pub fn of(output: Option<&'a Path>, append: bool) -> Self {
        match output {
            Some(path) => Destination::File { path, append },
            None => Destination::Stdout,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("stdout: {}", crate::error::describe(.0))]
    Stdout(std::io::Error),
    #[error("cannot write {}: {}", path.display(), crate::error::describe(source))]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes `text` to `target`. On stdout a closed pipe ends the output
/// quietly: the reader wanted no more.
pub fn write(target: Destination, text: &str) -> Result<(), WriteError> {
    match target {
        Destination::Stdout => {
            if text.is_empty() {
                return Ok(());
            }
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                result => result.map_err(WriteError::Stdout),
            }
        }
        Destination::File { path, append } => {
            let mut options = std::fs::OpenOptions::new();
            options.create(true);
            if append {
                options.append(true)
            } else {
                options.write(true).truncate(true)
            };
            options
                .open(path)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(|source| WriteError::File {
                    path: path.into(),
                    source,
                })
        }
    }
}

/// Replaces `path` with `text` at once: written to a new file beside it
/// (`O_EXCL`, no symlink followed), then renamed over it, so a reader
/// (node_exporter's textfile collector) sees the old file or the new one,
/// never a part. The new file is removed when anything fails.
pub fn replace(path: &Path, text: &str) -> Result<(), WriteError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let failed = |source| WriteError::File {
        path: path.into(),
        source,
    };
    let name = path
        .file_name()
        .ok_or_else(|| failed(std::io::Error::from(std::io::ErrorKind::InvalidInput)))?;
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        failed(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_nothing_is_left_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pveprobe.prom");
        replace(&path, "a 1\n").unwrap();
        replace(&path, "a 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a 2\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // A directory where the file goes: refused, and no temporary left.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir_all(blocked.join("sub")).unwrap();
        assert!(replace(&blocked, "x").is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[derive(Serialize)]
    struct Doc {
        n: u32,
    }

    impl Document for Doc {
        fn text(&self) -> String {
            format!("n is {}\n", self.n)
        }
        fn csv(&self, header: bool) -> String {
            csv::table(header.then_some(["n"]), [[self.n.to_string()]])
        }
    }

    #[test]
    fn every_format_renders_from_one_document() {
        let doc = Doc { n: 7 };
        assert_eq!(render(&doc, Format::Text, true), "n is 7\n");
        assert_eq!(render(&doc, Format::Json, true), "{\"n\":7}\n");
        assert_eq!(render(&doc, Format::JsonPretty, true), "{\n  \"n\": 7\n}\n");
        assert_eq!(render(&doc, Format::Csv, true), "n\n7\n");
        assert_eq!(render(&doc, Format::Csv, false), "7\n");
        // It holds no probe result: nothing to write as metrics.
        assert_eq!(render(&doc, Format::Influx, true), "");
        assert_eq!(render(&doc, Format::Prometheus, true), "");
    }

    #[test]
    fn commands_without_results_refuse_the_metrics_formats() {
        use crate::model::choice::Choice;
        let metrics: Vec<_> = Format::ALL.iter().filter(|f| f.is_metrics()).collect();
        assert_eq!(metrics, [&Format::Influx, &Format::Prometheus]);
        #[derive(Serialize)]
        struct Ratios;
        impl Document for Ratios {
            const FORMATS: &'static [Format] = TABLES;
            fn text(&self) -> String {
                String::new()
            }
            fn csv(&self, _header: bool) -> String {
                String::new()
            }
        }
        assert_eq!(
            check::<Ratios>(Format::Csv, "pveprobe compare").unwrap(),
            Format::Csv
        );
        let err = check::<Ratios>(Format::Prometheus, "pveprobe compare").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--output-format prometheus writes a probe run's figures as metrics; \
             pveprobe compare writes none: use text, json, json-pretty or csv"
        );
        // A document with probe results has every format.
        for f in Format::ALL {
            assert_eq!(check::<Doc>(*f, "pveprobe").unwrap(), *f);
        }
    }

    #[test]
    fn files_are_replaced_or_appended_to_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write(Destination::of(Some(&path), false), "a\n").unwrap();
        write(Destination::of(Some(&path), true), "b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
        write(Destination::of(Some(&path), false), "c\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "c\n");
        let missing = dir.path().join("no/such/dir");
        let err = write(Destination::of(Some(&missing), false), "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot write {}: No such file or directory",
                missing.display()
            )
        );
    }
}
