//! A document as a file holds it, read back: its `kind` and
//! `schema_version` at its top, and the probe results it holds for
//! `compare` and `--baseline`. Each command's report that `compare` reads
//! implements [`Stored`] beside [`crate::output::Document`], which writes
//! it; [`super::Reader::of`] finds a file's reader by its `kind`.

use crate::output::result::JsonReport;

/// A command's document as a file holds it.
pub trait Stored {
    /// `kind` in its JSON; `None` for a probe result, which has none.
    const KIND: Option<&'static str>;

    /// The `schema_version` this pveprobe writes, and the newest it reads.
    const SCHEMA_VERSION: u32;

    /// The `schema_version` this document has.
    fn schema_version(&self) -> u32;

    /// Its figures for `compare`, as probe results, each with who
    /// measured it (a node, a VM, a disk, a cluster) where it says.
    fn results(self) -> Vec<Named>
    where
        Self: Sized;
}

/// A probe result and who measured it.
#[derive(Debug, Clone)]
pub struct Named {
    pub who: Option<String>,
    pub result: JsonReport,
}

impl Named {
    pub fn new(who: Option<String>, result: JsonReport) -> Self {
        Named { who, result }
    }
}

/// The probe result is stored too: `compare`'s reader of a file with no
/// `kind`, and what `--baseline` reads.
impl Stored for JsonReport {
    const KIND: Option<&'static str> = None;
    const SCHEMA_VERSION: u32 = crate::output::result::SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The result itself, named by the host it records.
    fn results(self) -> Vec<Named> {
        vec![Named::new(self.host.hostname.clone(), self)]
    }
}
