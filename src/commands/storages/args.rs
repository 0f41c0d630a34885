//! `pveprobe storages`'s arguments.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::measure_args;
use crate::model::choice::Choice;
use crate::output::Format;

#[derive(Debug, Args)]
pub struct StoragesArgs {
    /// Format of the list
    #[arg(long, value_name = "FORMAT", value_parser = measure_args::parser::<Format>(), default_value = Format::Text.name())]
    pub output_format: Format,

    /// Read storage.cfg and .vmlist from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", hide = true, default_value = crate::pvestorage::ETC_PVE)]
    pub pve_config: PathBuf,
}
