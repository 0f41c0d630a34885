//! `pveprobe qualify DEVICE`: the arguments made into a plain request;
//! the device checked, held and confirmed before the session starts (so a
//! dry run takes no lock and opens no `--plot` file); the tests run in it.

use super::args::QualifyArgs;
use crate::commands::common::session::{Frame, LockAs, Session, also_failed};
use crate::commands::common::work::Work;
use crate::commands::qualify::report::QualifyReport;
use crate::commands::qualify::{self, QualifyError, QualifyRequest};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::output;
use crate::sys::lock;

/// `pveprobe qualify DEVICE`.
pub fn qualify(args: &QualifyArgs) -> Ended {
    const COMMAND: &str = "pveprobe qualify";
    // Usage errors come before the device is looked at.
    output::check::<QualifyReport>(args.out.output_format, COMMAND).map_err(Stop::bad_input)?;
    if args.out.plot.is_some() && args.sustained == 0.0 {
        return Err(Stop::bad_input(
            "--plot draws the sustained write's seconds: --sustained 0 has none",
        ));
    }
    let req = QualifyRequest {
        progress: crate::commands::common::requests::progress(&args.out),
        device: args.device.clone(),
        destroy_data_on: args.destroy_data_on.clone(),
        dry_run: args.dry_run,
        seconds: args.seconds,
        sustained: args.sustained,
        no_discard: args.no_discard,
        sysroot: args.sysroot.clone(),
        pve_config: args.pve_config.clone(),
    };
    let Some(ready) = qualify::prepare(&req).map_err(|e| Stop::new(exit_of(&e), e))? else {
        return Ok(Exit::Ok);
    };
    let session = Session::start::<QualifyReport>(Frame {
        signals: true,
        lock: Some(LockAs {
            me: lock::describe_me(&args.device),
            busy: lock::Busy::Wait,
            nothing_done: "nothing was written",
        }),
        ..crate::commands::common::requests::frame(&args.out, COMMAND)
    })?;
    let report = Work::run(&ready, session.interrupt()).map_err(|e| Stop::new(exit_of(&e), e))?;
    let ended = session.finish(&report, Exit::Ok);
    match &report.stopped_early {
        Some(e) => also_failed(ended, format!("{e}; the tests stopped there")),
        None => ended,
    }
}

/// Every refusal comes before a write (2); an interrupt ends with its
/// signal, after the device was discarded.
pub fn exit_of(e: &QualifyError) -> Exit {
    match e {
        QualifyError::Interrupted { signal, .. } => Exit::Signal(*signal),
        QualifyError::Target(_)
        | QualifyError::InUse { .. }
        | QualifyError::NotItsIdentity { .. }
        | QualifyError::NoTerminal { .. }
        | QualifyError::NotConfirmed { .. } => Exit::BadInput,
    }
}
