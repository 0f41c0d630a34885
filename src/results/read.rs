//! Results read back: a file's `kind` picks its reader (each command's
//! document has one, [`Reader::of`]); a document newer than this
//! pveprobe is refused; every document is read as the probe results it
//! holds, each named for the table.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::stored::{Named, Stored};
use crate::output::result::JsonReport;

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("cannot read {}: {}", path.display(), crate::error::describe(source))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a pveprobe JSON result: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} has schema_version {found}; this pveprobe reads up to {max}", path.display())]
    Version { path: PathBuf, found: u32, max: u32 },
    #[error("{} holds {found} results; a baseline is one", path.display())]
    NotOne { path: PathBuf, found: usize },
}

/// A result read from a file, named for the table.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub doc: JsonReport,
}

/// Reads a result file to a bound: a result is kilobytes; the bound keeps
/// `--baseline /dev/zero` finite.
pub fn read_result(path: &Path) -> Result<String, CompareError> {
    crate::sys::host::read_capped(path, 64 << 20).map_err(|source| CompareError::Read {
        path: path.into(),
        source,
    })
}

/// A document of type `T` read from `path` as `text`, refused when its
/// schema version (`version`) is newer than this pveprobe reads (`max`).
pub fn parse_versioned<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    version: fn(&T) -> u32,
    max: u32,
) -> Result<T, CompareError> {
    let doc: T = serde_json::from_str(text).map_err(|source| CompareError::Parse {
        path: path.into(),
        source,
    })?;
    match version(&doc) {
        found if found > max => Err(CompareError::Version {
            path: path.into(),
            found,
            max,
        }),
        _ => Ok(doc),
    }
}

/// A column's name: `WHO (FILE)`.
pub fn named(who: Option<&str>, path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    match who {
        Some(who) => format!("{who} ({file})"),
        None => file,
    }
}

/// What kind of document a file is (a probe result has no `kind`).
#[derive(serde::Deserialize)]
struct Kind {
    kind: Option<String>,
}

/// One kind of document and how it is read.
#[derive(Clone, Copy)]
pub struct Reader {
    kind: Option<&'static str>,
    read: fn(&Path, &str) -> Result<Vec<Named>, CompareError>,
}

impl Reader {
    /// The reader of documents of type `D`.
    pub fn of<D: Stored + DeserializeOwned>() -> Self {
        fn read<D: Stored + DeserializeOwned>(
            path: &Path,
            text: &str,
        ) -> Result<Vec<Named>, CompareError> {
            let doc: D = parse_versioned(path, text, D::schema_version, D::SCHEMA_VERSION)?;
            Ok(doc.results())
        }
        Reader {
            kind: D::KIND,
            read: read::<D>,
        }
    }
}

/// The kinds of document this pveprobe reads: the probe's result (no
/// `kind`) and those it is given.
#[derive(Clone)]
pub struct Readers(Vec<Reader>);

impl Readers {
    /// The probe's result and `kinds`.
    pub fn new(kinds: Vec<Reader>) -> Self {
        let mut all = vec![Reader::of::<JsonReport>()];
        all.extend(kinds);
        Readers(all)
    }

    /// The results in `text`, read from `path`, by its `kind` (read once;
    /// a kind this pveprobe does not know reads as a probe result, as
    /// before kinds were written), each named `WHO (FILE)`.
    pub fn parse(&self, path: &Path, text: &str) -> Result<Vec<Input>, CompareError> {
        let kind = serde_json::from_str::<Kind>(text).ok().and_then(|k| k.kind);
        let reader = self
            .0
            .iter()
            .find(|r| r.kind.is_some() && r.kind == kind.as_deref())
            .unwrap_or(&self.0[0]);
        Ok((reader.read)(path, text)?
            .into_iter()
            .map(|n| Input {
                name: named(n.who.as_deref(), path),
                doc: n.result,
            })
            .collect())
    }

    /// The results the file at `path` holds.
    pub fn read(&self, path: &Path) -> Result<Vec<Input>, CompareError> {
        self.parse(path, &read_result(path)?)
    }

    /// The one result `--baseline` compares with: a file that holds
    /// several (a cluster's) or none is refused.
    pub fn load(&self, path: &Path) -> Result<Input, CompareError> {
        let mut all = self.read(path)?;
        match all.len() {
            1 => Ok(all.remove(0)),
            n => Err(CompareError::NotOne {
                path: path.into(),
                found: n,
            }),
        }
    }
}
