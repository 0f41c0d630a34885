//! pveprobe's entry point: parse the command line and hand over to
//! `commands::run`; where a command's error is printed. Two speak for
//! themselves: run as `pveperf`, `probe::as_pveperf` prints pveperf's own
//! words (its usage line, `pveperf: ...` notes) and its exit status; and
//! `load-node`, the agent on a node, says on its stderr a scratch
//! directory it could not remove after its answer was sent.

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
    // Where a command's error is printed.
    match commands::run(&opts) {
        Ok(exit) => exit.into(),
        Err(stop) => {
            eprintln!("pveprobe: {stop}");
            stop.exit.into()
        }
    }
}
