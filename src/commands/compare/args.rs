//! `pveprobe compare`'s arguments.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::measure_args;
use crate::model::choice::Choice;
use crate::output::Format;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// JSON results written by `pveprobe --output-format json` (or by
    /// `cluster --output-format json`, `cluster --net` and `net`)
    #[arg(required = true, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Format of the table
    #[arg(long, value_name = "FORMAT", value_parser = measure_args::parser::<Format>(), default_value = Format::Text.name())]
    pub output_format: Format,

    /// Also draw the table as an SVG picture in FILE: a panel per figure, a
    /// bar per file, whiskers for its runs, worse figures hatched and marked !
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}
