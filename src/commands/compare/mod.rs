//! `pveprobe compare FILE...`: results put side by side. Its work is the
//! [`crate::results`] layer's, which the probe's `--baseline` and
//! `cluster` share: read each file by its kind, rank, render.

pub mod args;
pub mod run;

use std::path::PathBuf;

use crate::commands::common::work::Work;
use crate::results::{CompareError, Input, Readers, Table};
use crate::sys::interrupt::Interrupt;

/// The files to put side by side, and the readers of every kind.
pub struct CompareRequest<'a> {
    pub files: &'a [PathBuf],
    pub readers: &'a Readers,
}

/// Each file read by its kind (a cluster's gives one input per node that
/// answered), then ranked in one table.
impl Work for CompareRequest<'_> {
    type Report = Table;
    type Error = CompareError;

    fn run(&self, _interrupt: &Interrupt) -> Result<Table, CompareError> {
        let inputs: Vec<Input> = self
            .files
            .iter()
            .map(|f| self.readers.read(f))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect();
        Ok(crate::results::table(&inputs))
    }
}
