//! pveprobe's entry point: parse the command line and hand over to `app`.

use std::process::ExitCode;

use clap::Parser;

use pveprobe::app;
use pveprobe::cli::{Command, Opts};

mod pveperf_mode;

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if args
        .next()
        .is_some_and(|argv0| pveperf_mode::invoked_as_pveperf(&argv0))
    {
        return pveperf_mode::main(args.collect());
    }
    let opts = Opts::parse();
    ExitCode::from(match &opts.command {
        Some(Command::Compare(args)) => app::compare(args),
        Some(Command::Cluster(args)) => pveprobe::cluster::run(args),
        Some(Command::Storages(args)) => app::storages(args),
        Some(Command::Net(args)) => pveprobe::net::run(&pveprobe::net::Request {
            reach: &args.reach,
            opts: &args.net_options,
            only: Some(&args.pair_nodes),
            parallel: args.parallel,
            dry_run: args.dry_run,
            format: args.output_format,
            output: args.output.as_deref(),
        }),
        Some(Command::NetServe(args)) => pveprobe::net::serve_main(args),
        Some(Command::NetProbe(args)) => pveprobe::net::probe_main(args),
        Some(Command::NetInfo) => pveprobe::net::info_main(),
        None => app::probe(&opts.probe),
    })
}
