//! pveprobe's entry point: parse the command line and hand over to
//! `commands::run`, or run as `pveperf` (`probe::as_pveperf`, pveperf's
//! command line); the one place a command's error is printed, under the
//! name it was run as (`pveprobe: ...`, `pveperf: ...`), and its exit
//! status returned. Lines a command says as it goes (notes, diagnostics,
//! progress) are its own, on stderr.

use std::process::ExitCode;

use clap::Parser;

use pveprobe::commands::probe::as_pveperf as pveperf;
use pveprobe::commands::{self, Opts};
use pveprobe::output::progress::{PVEPROBE, Progress};

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let (name, ended) = if args
        .next()
        .is_some_and(|argv0| pveperf::invoked_as_pveperf(&argv0))
    {
        (
            pveperf::NAME,
            pveperf::main(args.collect(), &Opts::parse_from(["pveprobe"]).probe),
        )
    } else {
        (PVEPROBE, commands::run(&Opts::parse()))
    };
    // What a scratch directory dropped unremoved left, said as every line is.
    for left in pveprobe::sys::scratch::left_behind() {
        Progress::default().named(name).say(&left);
    }
    // Where a command's error is printed.
    match ended {
        Ok(exit) => exit.into(),
        Err(stop) => {
            if let Some(line) = stop.line(name) {
                eprintln!("{line}");
            }
            stop.exit.into()
        }
    }
}
