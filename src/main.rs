//! pveprobe's entry point: parse the command line, check PATH, run, print.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use pveprobe::cli::Opts;
use pveprobe::error::PathError;
use pveprobe::report::text;
use pveprobe::run::{self, Event};
use pveprobe::window::Interrupt;

mod pveperf_mode;

/// Exit statuses (see `--help`).
mod exit {
    pub const OK: u8 = 0;
    pub const NOT_MEASURED: u8 = 1;
    pub const BAD_INPUT: u8 = 2;
}

fn check_path(path: &std::path::Path) -> Result<(), PathError> {
    let meta = std::fs::metadata(path).map_err(|source| PathError::Inaccessible {
        path: path.into(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(PathError::NotADirectory { path: path.into() });
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if args
        .next()
        .is_some_and(|argv0| pveperf_mode::invoked_as_pveperf(&argv0))
    {
        return pveperf_mode::main(args.collect());
    }
    let config = Opts::parse().into_config();
    if let Err(err) = check_path(&config.path) {
        eprintln!("pveprobe: {err}");
        return ExitCode::from(exit::BAD_INPUT);
    }
    let interrupt = match Interrupt::install() {
        Ok(i) => i,
        Err(err) => {
            eprintln!("pveprobe: cannot install signal handlers: {err}");
            return ExitCode::from(exit::NOT_MEASURED);
        }
    };

    let mut sink = |report: &pveprobe::report::Report, event: Event| match event {
        Event::Line(line) => {
            if let Some(text) = text::line(report, line) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}");
                let _ = out.flush();
            }
            if let Some(why) = text::diagnostic(report, line) {
                eprintln!("pveprobe: {why}");
            }
        }
        Event::Note(note) => eprintln!("pveprobe: {note}"),
    };
    let report = run::run(&config, &interrupt, &mut sink);

    if let Some(sig) = report.interrupted_by {
        let name = nix::sys::signal::Signal::try_from(sig)
            .map(|s| s.as_str())
            .unwrap_or("signal");
        eprintln!("pveprobe: interrupted by {name}; stopped and removed the files it made");
        return ExitCode::from((128 + sig) as u8);
    }
    ExitCode::from(if report.any_failed() {
        exit::NOT_MEASURED
    } else {
        exit::OK
    })
}
