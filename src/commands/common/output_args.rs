//! The output arguments every command that writes a report takes, declared
//! once: `--quiet`, `--output-format`, `--output`, `--append` and `--plot`.
//! A command flattens [`OutputArgs`] into its own arguments and, where its
//! report reads them its own way, words their help for itself with
//! [`worded`] on its struct (`#[command(mut_args(worded(&[("plot",
//! "...")])))]`), each argument left in its place. What its
//! report does not have (a format, rows to append, a picture) is refused
//! by the command's session (`requests::frame`), before any
//! work, in the same words for every command.

use std::path::PathBuf;

use clap::Args;

use crate::model::choice::Choice;
use crate::output::Format;

#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// No progress on stderr (notes, warnings and errors are still said):
    /// for cron and scripts. Without it, progress is a countdown on a
    /// terminal and a line per step otherwise
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,

    /// Output format: text, json, json-pretty or csv, influx or prometheus
    /// where the report holds figures
    #[arg(
        long,
        value_name = "FORMAT",
        value_parser = super::measure_args::parser::<Format>(),
        default_value = Format::Text.name(),
        help_heading = "Output"
    )]
    pub output_format: Format,

    /// Write the results to FILE instead of stdout
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,

    /// With csv and --output: add the rows to FILE, writing the header only
    /// if FILE is empty; refuses a FILE whose header differs
    #[arg(long, requires = "output", help_heading = "Output")]
    pub append: bool,

    /// Also draw the results as an SVG picture in FILE
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub plot: Option<PathBuf>,
}

/// A command's own words for the group's help: `(id, help)` pairs, for
/// clap's `mut_args` (which, unlike `mut_arg`, leaves each argument where
/// it stands in `--help` and the man page).
pub fn worded(
    helps: &'static [(&'static str, &'static str)],
) -> impl FnMut(clap::Arg) -> clap::Arg {
    move |arg| match helps.iter().find(|(id, _)| arg.get_id() == *id) {
        Some((_, help)) => arg.help(*help),
        None => arg,
    }
}

impl OutputArgs {
    /// Whether the report is text for a person on a terminal.
    pub fn for_person(&self) -> bool {
        use std::io::IsTerminal as _;
        self.output_format == Format::Text
            && self.output.is_none()
            && std::io::stdout().is_terminal()
    }
}
