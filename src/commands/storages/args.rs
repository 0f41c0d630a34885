//! `pveprobe storages`'s arguments.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

#[derive(Debug, Args)]
#[command(mut_args(worded(&[
    ("output_format", "Format of the list"),
])))]
pub struct StoragesArgs {
    #[command(flatten)]
    pub out: OutputArgs,

    /// Read storage.cfg and .vmlist from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", hide = true, default_value = crate::pvestorage::ETC_PVE)]
    pub pve_config: PathBuf,
}
