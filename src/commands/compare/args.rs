//! `pveprobe compare`'s arguments.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

#[derive(Debug, Args)]
#[command(mut_args(worded(&[
    ("output_format", "Format of the table"),
    ("plot", "Also draw the table as an SVG picture in FILE: a panel per figure, a bar per file, whiskers for its runs, worse figures hatched and marked !"),
])))]
pub struct CompareArgs {
    /// JSON results written by `pveprobe --output-format json` (or by
    /// `cluster --output-format json`, `cluster --net` and `net`)
    #[arg(required = true, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub out: OutputArgs,
}
