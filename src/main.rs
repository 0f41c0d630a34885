//! pveprobe's entry point: parse the command line and hand over to
//! `commands::run`; the one place a command's error is printed.

use std::process::ExitCode;

use clap::Parser;

use pveprobe::commands::probe::as_pveperf as pveperf;
use pveprobe::commands::{self, Opts};

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if args
        .next()
        .is_some_and(|argv0| pveperf::invoked_as_pveperf(&argv0))
    {
        return pveperf::main(args.collect());
    }
    let opts = Opts::parse();
    // The one place a command's error is printed.
    match commands::run(&opts) {
        Ok(exit) => exit.into(),
        Err(stop) => {
            eprintln!("pveprobe: {stop}");
            stop.exit.into()
        }
    }
}
