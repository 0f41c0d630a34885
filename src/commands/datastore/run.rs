//! `pveprobe datastore PATH`: the arguments made into a plain request
//! (`--datastore NAME` read from datastore.cfg), run in a session that
//! holds the host-wide lock and catches Ctrl-C and SIGTERM (the private
//! directory is removed before the exit).

use super::args::{CHUNKS, DatastoreArgs, QUICK_CHUNKS};
use super::cluster::{ClusterDatastoreRequest, DatastoreClusterReport};
use super::report::DatastoreReport;
use super::{DatastoreError, DatastoreRequest};
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, LockAs, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::results::{self, Input, Readers};
use pveprobe_parse::pbs;

/// `pveprobe datastore`, its `--baseline` read with `readers`.
pub fn datastore(args: &DatastoreArgs, readers: &Readers) -> Ended {
    if args.cluster {
        return across_cluster(args);
    }
    let (path, name, tuning) = target(args).map_err(|e| Stop::new(exit_of(&e), e))?;
    let baseline = args
        .baseline
        .as_deref()
        .map(|b| readers.load(b))
        .transpose()
        .map_err(Stop::bad_input)?;
    let req = DatastoreRequest {
        progress: crate::commands::common::requests::progress(&args.out),
        path: path.clone(),
        name,
        tuning,
        chunks: chunks(args),
        host: crate::sys::host::Host::real(),
    };
    let session = Session::start::<DatastoreReport>(Frame {
        signals: true,
        lock: Some(LockAs {
            me: crate::sys::lock::describe_me(&path),
            busy: crate::sys::lock::Busy::Wait,
            nothing_done: "nothing was measured or written",
        }),
        ..crate::commands::common::requests::frame(&args.out, "pveprobe datastore")
    })?;
    let report = Work::run(&req, session.interrupt()).map_err(|e| Stop::new(exit_of(&e), e))?;
    let mut exit = exit_status(&report);
    for e in &report.result.errors {
        req.progress.say(e);
    }
    if let Some(base) = baseline {
        let current = Input {
            name: "this run".into(),
            doc: report.as_result(),
        };
        let (table, worse) = results::against_baseline(base, current, args.tolerance);
        req.progress.say("compared with the baseline:");
        req.progress.block(&table);
        worse.iter().for_each(|w| req.progress.say(w));
        if !worse.is_empty() && exit == Exit::Ok {
            exit = Exit::WorseThanBaseline;
        }
    }
    session.finish(&report, exit)
}

fn chunks(args: &DatastoreArgs) -> u32 {
    args.chunks
        .unwrap_or(if args.quick { QUICK_CHUNKS } else { CHUNKS })
}

/// `--cluster`: every node's PATH, side by side.
fn across_cluster(args: &DatastoreArgs) -> Ended {
    let path = args
        .path
        .as_deref()
        .ok_or_else(|| Stop::bad_input("--cluster needs PATH"))?;
    let req = ClusterDatastoreRequest {
        reach: requests::reach(&args.reach),
        path: path
            .to_str()
            .ok_or_else(|| Stop::bad_input("PATH is not UTF-8"))?
            .to_string(),
        chunks: chunks(args),
        parallel: args.parallel,
        progress: requests::progress(&args.out),
    };
    let session = Session::start::<DatastoreClusterReport>(Frame {
        signals: true,
        ..requests::frame(&args.out, "pveprobe datastore --cluster")
    })?;
    let report = Work::run(&req, session.interrupt()).map_err(Stop::bad_input)?;
    let exit = if report.nodes.iter().any(|n| n.status != "ok") {
        Exit::NodeDidNotAnswer
    } else if report.answered().any(|(_, r)| exit_status(r) != Exit::Ok) {
        Exit::NotMeasured
    } else {
        Exit::Ok
    };
    session.finish(&report, exit)
}

/// PATH and, from datastore.cfg, the datastore's name and tuning: by
/// `--datastore NAME`, or the entry whose path PATH is.
fn target(
    args: &DatastoreArgs,
) -> Result<(std::path::PathBuf, Option<String>, Option<pbs::Tuning>), DatastoreError> {
    let file = args.pbs_config.join("datastore.cfg");
    let cfg = match crate::sys::host::read_capped(&file, pbs::MAX_CFG_BYTES as u64 + 1) {
        Ok(text) => Some(pbs::datastore_cfg(&text).map_err(|e| {
            DatastoreError::Config(format!("{}: {e}; nothing was measured", file.display()))
        })?),
        Err(e) if args.datastore.is_some() => {
            return Err(DatastoreError::Config(format!(
                "{}: {}; --datastore reads it",
                file.display(),
                crate::error::describe(&e)
            )));
        }
        Err(_) => None,
    };
    let stores = cfg.map(|c| c.stores).unwrap_or_default();
    if let Some(name) = &args.datastore {
        let store = stores
            .into_iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| {
                DatastoreError::Config(format!("no datastore {name:?} in {}", file.display()))
            })?;
        return Ok((store.path.into(), Some(store.name), Some(store.tuning)));
    }
    let path = args.path.clone().unwrap_or_default();
    let canonical = std::fs::canonicalize(&path).ok();
    let store = stores
        .into_iter()
        .find(|s| canonical.is_some() && std::fs::canonicalize(&s.path).ok() == canonical);
    Ok(match store {
        Some(s) => (path, Some(s.name), Some(s.tuning)),
        None => (path, None, None),
    })
}

/// The signal that stopped the run; else 0 when every figure was
/// measured and nothing was left behind, 1 otherwise.
pub fn exit_status(report: &DatastoreReport) -> Exit {
    let r = &report.result;
    match r.interrupted_by {
        Some(sig) => Exit::Signal(sig),
        None if r.errors.is_empty() && r.left_behind.is_empty() => Exit::Ok,
        None => Exit::NotMeasured,
    }
}

/// What cannot be measured as asked (2); what failed while measuring (1).
pub fn exit_of(e: &DatastoreError) -> Exit {
    match e {
        DatastoreError::BadPath(_) | DatastoreError::NoRoom { .. } | DatastoreError::Config(_) => {
            Exit::BadInput
        }
        DatastoreError::Probe(crate::error::ProbeError::Interrupted(sig)) => Exit::Signal(*sig),
        DatastoreError::Probe(_) => Exit::NotMeasured,
    }
}
