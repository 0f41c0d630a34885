//! What every document shares: the JSON envelope (`kind` and
//! `schema_version` at its top), its exit status, and the probe results it
//! holds for `compare`. Each command's document implements [`Document`];
//! `compare` finds a file's reader by its `kind`
//! ([`crate::results::Readers`]), and a command's exit status is its
//! document's.

use crate::error::exit::Exit;
use crate::output::result::JsonReport;

/// A command's document as a file holds it.
pub trait Document {
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

    /// The status the command that wrote it exits with: 0 when every
    /// figure asked for was measured and nothing was left behind.
    fn exit_status(&self) -> Exit;
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

/// The probe result is a document too: `compare`'s reader of a file with
/// no `kind`, and what `--baseline` reads. Its impl stands beside the
/// trait, so `result` needs nothing of this module.
impl Document for JsonReport {
    const KIND: Option<&'static str> = None;
    const SCHEMA_VERSION: u32 = crate::output::result::SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The result itself, named by the host it records.
    fn results(self) -> Vec<Named> {
        vec![Named::new(self.host.hostname.clone(), self)]
    }

    /// The signal that cut the run short; else 1 when a line that
    /// applies could not be measured.
    fn exit_status(&self) -> crate::error::exit::Exit {
        use crate::error::exit::Exit;
        match self.interrupted_by_signal {
            Some(sig) => Exit::Signal(sig),
            None if self.not_measured.iter().any(|n| n.failed) => Exit::NotMeasured,
            None => Exit::Ok,
        }
    }
}
