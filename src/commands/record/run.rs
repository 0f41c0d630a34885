//! `pveprobe record`: the arguments made into a request, the recorder run
//! in its session until its count, SIGTERM (systemd's stop: a clean end)
//! or Ctrl-C, and what it kept said.

use std::time::Duration;

use super::args::RecordArgs;
use super::{RecordError, RecordRequest};
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::nodeio::sampling::Sampling;
use crate::output::Format;
use crate::output::progress::{Look, Progress};

/// `pveprobe record`.
pub fn record(args: &RecordArgs) -> Ended {
    let session = Session::start::<super::RecordReport>(Frame {
        signals: true,
        ..Frame::new("pveprobe record", Format::Text, None)
    })?;
    let req = RecordRequest {
        sampling: Sampling {
            sources: requests::sources(&args.sources),
            node: crate::pvestorage::node_name(),
            interval: Duration::from_secs_f64(args.interval),
            count: args.count,
            seconds: None,
        },
        dir: args.dir.clone(),
        limits: crate::store::Limits {
            retain_days: args.retain_days,
            max_bytes: args.max_size,
            ..crate::store::Limits::default()
        },
        textfile: args.textfile.clone(),
        metric_servers: args.metric_servers,
        progress: Progress::new(Look::Lines).named("pveprobe record"),
    };
    let report = Work::run(&req, session.interrupt()).map_err(|e| match e {
        RecordError::Servers(e) => Stop::bad_input(RecordError::Servers(e)),
        e => Stop::not_measured(e),
    })?;
    let exit = match session.interrupt().signal() {
        // SIGTERM is how systemd stops the service: a clean stop.
        Some(sig) if sig != libc::SIGTERM => Exit::Signal(sig),
        _ => Exit::Ok,
    };
    session.finish(&report, exit)
}
