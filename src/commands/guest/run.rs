//! `pveprobe guest VMID`: the arguments made into a plain request, run in
//! a session that holds the host-wide lock and catches Ctrl-C and SIGTERM
//! (the guest's directory is removed before the exit); and `guest-side`,
//! the probe's end in a guest.

use super::args::{GuestArgs, GuestSideArgs};
use crate::commands::common::session::{Frame, LockAs, Session};
use crate::commands::common::work::Work;
use crate::commands::guest::error::GuestError;
use crate::commands::guest::report::GuestReport;
use crate::commands::guest::{self, GuestRequest, QGA_DIR};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::sys::interrupt::Interrupt;

/// `pveprobe guest VMID`.
pub fn guest(args: &GuestArgs) -> Ended {
    let req = GuestRequest {
        progress: crate::commands::common::requests::progress(&args.out),
        vmid: args.vmid,
        disk: args.disk.clone(),
        guest_path: args.guest_path.clone(),
        pve_config: args.pve_config.clone(),
        socket: args
            .agent_socket
            .clone()
            .unwrap_or_else(|| std::path::Path::new(QGA_DIR).join(format!("{}.qga", args.vmid))),
        guest_probe: args.guest_probe.clone(),
        bytes: args.write_size.unwrap_or(super::args::BYTES),
        seconds: args.seconds,
        agent_timeout: std::time::Duration::from_secs_f64(args.agent_timeout),
        host: !args.no_host,
    };
    // The host-wide lock, as the probe's: two measurements at once would
    // each measure the other.
    let me = std::path::PathBuf::from(format!("VM {}", args.vmid));
    let session = Session::start::<GuestReport>(Frame {
        signals: true,
        lock: Some(LockAs {
            me: crate::sys::lock::describe_me(&me),
            busy: crate::sys::lock::Busy::Wait,
            nothing_done: "nothing was measured or copied",
        }),
        ..crate::commands::common::requests::frame(&args.out, "pveprobe guest")
    })?;
    let report = Work::run(&req, session.interrupt()).map_err(|e| Stop::new(exit_of(&e), e))?;
    let exit = exit_status(&report);
    for d in &report.disks {
        for e in &d.errors {
            req.progress.say(&format!("{}: {e}", d.settings.key));
        }
    }
    session.finish(&report, exit)
}

/// `pveprobe guest-side DIR`: the profile as one line of JSON on stdout.
pub fn guest_side(args: &GuestSideArgs) -> Ended {
    let interrupt = Interrupt::install()
        .map_err(|e| Stop::not_measured(format!("cannot install signal handlers: {e}")))?;
    let profile =
        guest::guest_side(&args.dir, args.bytes, args.seconds, &interrupt).map_err(|e| {
            match interrupt.signal() {
                Some(sig) => Stop::new(Exit::Signal(sig), e),
                None => Stop::not_measured(e),
            }
        })?;
    let json = serde_json::to_string(&profile).map_err(|e| Stop::not_measured(e.to_string()))?;
    println!("{json}");
    Ok(Exit::Ok)
}

/// The signal that stopped the run; else 0 when every disk was measured and nothing
/// was left behind, 1 otherwise.
pub fn exit_status(report: &GuestReport) -> Exit {
    let measured = report.disks.iter().all(|d| d.errors.is_empty());
    match report.interrupted_by {
        Some(sig) => Exit::Signal(sig),
        None if measured && report.left_behind.is_empty() => Exit::Ok,
        None => Exit::NotMeasured,
    }
}

/// What was asked cannot be measured on this node (2); the VM or its
/// agent did not let it be measured (1).
pub fn exit_of(e: &GuestError) -> Exit {
    match e {
        GuestError::OnOtherNode { .. }
        | GuestError::NoVm { .. }
        | GuestError::Locked { .. }
        | GuestError::NoSuchDisk { .. }
        | GuestError::NoDiskOnStorage { .. }
        | GuestError::NoAgent { .. } => Exit::BadInput,
        GuestError::ConfigUnreadable { .. }
        | GuestError::NoGuestProbe { .. }
        | GuestError::Agent(_)
        | GuestError::AgentBlocks { .. }
        | GuestError::NotLinux { .. } => Exit::NotMeasured,
    }
}
