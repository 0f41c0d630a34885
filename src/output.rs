//! One output path for the probe, `compare` and `cluster`: a document
//! renders itself in every format through [`Render`] (JSON from its serde
//! form, so the serialiser is written once), and [`write`] puts the text
//! on stdout or in a file with the same rules everywhere: a reader that
//! stops reading (`| head`) is no error, a file that cannot be written is.

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
}

impl crate::choice::Choice for Format {
    const ALL: &'static [Self] = &[Format::Text, Format::Json, Format::JsonPretty, Format::Csv];

    fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::JsonPretty => "json-pretty",
            Format::Csv => "csv",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Format::Text => "pveperf's lines (and -v details)",
            Format::Json => "One JSON document on one line",
            Format::JsonPretty => "The same JSON, indented",
            Format::Csv => "A CSV header and one row",
        }
    }
}

/// A document in every format; JSON is its serde form.
pub trait Render: Serialize {
    fn text(&self) -> String;
    fn csv(&self) -> String;
}

/// A document as `format`, ending in a newline (or empty).
pub fn render(doc: &impl Render, format: Format) -> String {
    match format {
        Format::Text => doc.text(),
        Format::Json => json(doc, false),
        Format::JsonPretty => json(doc, true),
        Format::Csv => doc.csv(),
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
pub enum Target<'a> {
    Stdout,
    /// A file, replaced, or with `append` added to.
    File {
        path: &'a Path,
        append: bool,
    },
}

impl<'a> Target<'a> {
    /// `--output FILE` or stdout.
    pub fn of(output: Option<&'a Path>, append: bool) -> Self {
        match output {
            Some(path) => Target::File { path, append },
            None => Target::Stdout,
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
pub fn write(target: Target, text: &str) -> Result<(), WriteError> {
    match target {
        Target::Stdout => {
            if text.is_empty() {
                return Ok(());
            }
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                result => result.map_err(WriteError::Stdout),
            }
        }
        Target::File { path, append } => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Doc {
        n: u32,
    }

    impl Render for Doc {
        fn text(&self) -> String {
            format!("n is {}\n", self.n)
        }
        fn csv(&self) -> String {
            format!("n\n{}\n", self.n)
        }
    }

    #[test]
    fn every_format_renders_from_one_document() {
        let doc = Doc { n: 7 };
        assert_eq!(render(&doc, Format::Text), "n is 7\n");
        assert_eq!(render(&doc, Format::Json), "{\"n\":7}\n");
        assert_eq!(render(&doc, Format::JsonPretty), "{\n  \"n\": 7\n}\n");
        assert_eq!(render(&doc, Format::Csv), "n\n7\n");
    }

    #[test]
    fn files_are_replaced_or_appended_to_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write(Target::of(Some(&path), false), "a\n").unwrap();
        write(Target::of(Some(&path), true), "b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
        write(Target::of(Some(&path), false), "c\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "c\n");
        let missing = dir.path().join("no/such/dir");
        let err = write(Target::of(Some(&missing), false), "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot write {}: No such file or directory",
                missing.display()
            )
        );
    }
}
