//! CSV: one row per probe run, host fields first, then one column per
//! figure with its unit in the column name (see `docs/output.md`). The
//! header is stable: `--append` refuses a file whose header differs.

use super::result::JsonReport;
use crate::figure;

/// Host and run columns, before the figures.
const LEADING: [&str; 21] = [
    "hostname",
    "cpu_model",
    "sockets",
    "cores",
    "threads",
    "memory_bytes",
    "kernel",
    "os_release",
    "pve_manager",
    "pveprobe_version",
    "timestamp",
    "path",
    "pve_storage",
    "pve_storage_type",
    "fs_source",
    "fs_type",
    "runs",
    "duration_s",
    "regex_engine",
    "fsync_order",
    "dns_schedule",
];

/// The header: host and run columns, then each figure's values (the
/// median of its runs) in print order, from the list of figures. Figures
/// measured once per key have no column (the header is fixed).
pub fn header() -> Vec<&'static str> {
    LEADING
        .iter()
        .copied()
        .chain(values().map(|v| v.column))
        .collect()
}

/// The figures' values that have a column.
fn values() -> impl Iterator<Item = &'static figure::Value> {
    figure::values().filter(|v| v.figure.spec().per.is_none())
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

pub fn row(doc: &JsonReport) -> Vec<String> {
    let h = &doc.host;
    let fs = doc.filesystem.as_ref();
    let mut row = vec![
        opt(&h.hostname),
        opt(&h.cpu_model),
        opt(&h.sockets),
        opt(&h.cores),
        opt(&h.threads),
        opt(&h.memory_bytes),
        opt(&h.kernel),
        opt(&h.os_release),
        opt(&h.pve_manager),
        doc.pveprobe_version.clone(),
        opt(&doc.timestamp),
        doc.path.clone(),
        doc.pve_storage
            .as_ref()
            .map(|s| s.id.clone())
            .unwrap_or_default(),
        doc.pve_storage
            .as_ref()
            .map(|s| s.kind.clone())
            .unwrap_or_default(),
        fs.map(|f| f.source.clone()).unwrap_or_default(),
        fs.map(|f| f.fstype.clone()).unwrap_or_default(),
        doc.settings.runs.to_string(),
        doc.settings.duration_s.to_string(),
        doc.settings.regex_engine.clone(),
        doc.settings.fsync_order.clone(),
        doc.settings.dns_schedule.clone(),
    ];
    row.extend(values().map(|v| doc.cell(v)));
    row
}

/// The CSV text: the header (unless `with_header` is false) and one row.
pub fn render(doc: &JsonReport, with_header: bool) -> String {
    table(with_header.then(header), [row(doc)])
}

/// CSV text: `header` when given, then `rows`, quoted as RFC 4180 says.
/// Every document's CSV is written here.
pub fn table<H, R>(header: Option<H>, rows: impl IntoIterator<Item = R>) -> String
where
    H: IntoIterator,
    H::Item: AsRef<[u8]>,
    R: IntoIterator,
    R::Item: AsRef<[u8]>,
{
    let mut writer = csv::Writer::from_writer(Vec::new());
    if let Some(record) = header {
        writer.write_record(record).expect("writing to memory");
    }
    for record in rows {
        writer.write_record(record).expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("writing to memory")).expect("CSV of UTF-8 fields")
}

/// What `--append` finds in an existing file.
#[derive(Debug, PartialEq, Eq)]
pub enum Existing {
    /// No file, or an empty one: write the header first.
    Empty,
    /// Rows under our header: add a row only.
    SameHeader,
    /// Another header: refuse.
    OtherHeader(Vec<String>),
}

pub fn existing(text: &str) -> Existing {
    existing_under(text, &header())
}

/// What a file holds, against the header `ours` (another document's CSV).
pub fn existing_under(text: &str, ours: &[&str]) -> Existing {
    if text.trim().is_empty() {
        return Existing::Empty;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    let first: Vec<String> = match reader.records().next() {
        Some(Ok(record)) => record.iter().map(str::to_string).collect(),
        _ => vec![text.lines().next().unwrap_or_default().to_string()],
    };
    if first == ours {
        Existing::SameHeader
    } else {
        Existing::OtherHeader(first)
    }
}

/// Why `--append` cannot add to the file it names (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    #[error("--append works with --output-format csv only")]
    NotCsv,
    #[error("cannot read {}: {}", path.display(), crate::error::describe(source))]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{} has another header ({columns} columns, starting {first:?}); not appending to it", path.display())]
    OtherHeader {
        path: std::path::PathBuf,
        columns: usize,
        first: String,
    },
}

/// Whether the CSV written to `output` needs the header `ours`: with
/// `--append`, only when the file is missing or empty; a file under
/// another header is refused. Checked before anything is measured, so a
/// wrong file costs no run.
pub fn needs_header(
    format: crate::output::Format,
    output: Option<&std::path::Path>,
    append: bool,
    ours: &[&str],
) -> Result<bool, AppendError> {
    if append && format != crate::output::Format::Csv {
        return Err(AppendError::NotCsv);
    }
    let Some(path) = output.filter(|_| append) else {
        return Ok(true);
    };
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(AppendError::Read {
                path: path.into(),
                source,
            });
        }
    };
    match existing_under(&text, ours) {
        Existing::Empty => Ok(true),
        Existing::SameHeader => Ok(false),
        Existing::OtherHeader(found) => Err(AppendError::OtherHeader {
            path: path.into(),
            columns: found.len(),
            first: found.first().cloned().unwrap_or_default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_host_first_then_one_column_per_figure() {
        let h = header();
        assert_eq!(h[0], "hostname");
        assert_eq!(h.len(), LEADING.len() + 8 + 1 + 6 + 2 + 4 + 3 + 4 + 5 * 4);
        assert_eq!(
            &h[LEADING.len()..LEADING.len() + 2],
            ["cpu_bogomips", "regex_iterations_per_3s"]
        );
        let unique: std::collections::BTreeSet<_> = h.iter().collect();
        assert_eq!(unique.len(), h.len());
    }

    #[test]
    fn recognises_existing_files() {
        assert_eq!(existing(""), Existing::Empty);
        assert_eq!(existing("\n"), Existing::Empty);
        let ours = format!("{}\nrow\n", header().join(","));
        assert_eq!(existing(&ours), Existing::SameHeader);
        assert_eq!(
            existing("a,b\n1,2\n"),
            Existing::OtherHeader(vec!["a".into(), "b".into()])
        );
    }
}

#[cfg(test)]
mod snapshot_tests {
    use super::*;
    use crate::model::testutil::assert_snapshot;

    #[test]
    fn csv_of_known_numbers_is_pinned() {
        let doc = crate::output::result::known::result();
        let text = render(&doc, true);
        assert_snapshot("report.csv", &text);
        assert_eq!(
            render(&doc, false),
            text.lines().nth(1).unwrap().to_string() + "\n"
        );
        let mut reader = ::csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            header()
        );
        let rows: Vec<_> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            &rows[0][header().iter().position(|h| *h == "fsyncs_per_s").unwrap()],
            "210"
        );
        assert_eq!(
            &rows[0][header()
                .iter()
                .position(|h| *h == "average_seek_time_ms")
                .unwrap()],
            ""
        );
    }
}
