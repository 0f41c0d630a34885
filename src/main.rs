//! pveprobe's entry point: parse the command line and hand over to `app`.

use std::process::ExitCode;

use clap::Parser;

use pveprobe::app;
use pveprobe::cli::{Command, Opts};

fn main() -> ExitCode {
    let opts = Opts::parse();
    ExitCode::from(match &opts.command {
        Some(Command::Compare(args)) => app::compare(args),
        None => app::probe(&opts.probe),
    })
}
