//! `pveprobe ceph`: the arguments made into a plain request, the cluster
//! read and the plan said (or only said, with `--dry-run`), a yes asked
//! for, then the run in a session that catches Ctrl-C and SIGTERM (what
//! the run wrote is removed before the exit).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::args::{CephArgs, CephClientArgs, CephNodeInfoArgs};
use crate::commands::ceph::report::CephReport;
use crate::commands::ceph::{self, CephError, CephRequest, CephTools};
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, LockAs, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};

/// The node's ceph.conf: PVE's, else Ceph's own.
fn conf(given: Option<&Path>) -> Result<PathBuf, Stop> {
    if let Some(c) = given {
        return if c.is_file() {
            Ok(c.to_path_buf())
        } else {
            Err(Stop::bad_input(format!(
                "--conf {}: no such file",
                c.display()
            )))
        };
    }
    [ceph::PVE_CONF, ceph::CEPH_CONF]
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            Stop::bad_input(format!(
                "no {} or {}: this node is not part of a Ceph cluster (pveceph init makes one); --conf FILE names another",
                ceph::PVE_CONF,
                ceph::CEPH_CONF
            ))
        })
}

/// `pveprobe ceph`.
pub fn ceph(args: &CephArgs) -> Ended {
    let reach = (!args.this_node_only).then(|| requests::reach(&args.reach));
    let node = crate::pvestorage::node_name();
    let clients = ceph::clients::resolve::resolve(&args.clients, reach.as_ref(), &node)
        .map_err(|e| Stop::bad_input(format!("{e}; nothing was written")))?;
    if !clients.is_empty() && args.no_pool_bench {
        return Err(Stop::bad_input(
            "--clients runs the pool benches from several nodes: not with --no-pool-bench",
        ));
    }
    let req = CephRequest {
        conf: conf(args.conf.as_deref())?,
        pools: args.pools.clone(),
        osds: args.osds.clone(),
        osd_bench: !args.no_osd_bench,
        pool_bench: !args.no_pool_bench,
        rbd_bench: !args.no_rbd_bench,
        seconds: args.seconds,
        parallel: args.parallel as usize,
        rbd_bytes: args.rbd_size.unwrap_or(super::args::RBD_BYTES),
        osd_limit: Duration::from_secs(args.osd_timeout),
        run_id: ceph::run_id(&crate::pvestorage::node_name()),
        node,
        conf_given: args.conf.is_some(),
        reach,
        scratch_pool: args.scratch_pool,
        clients,
        answer_within: Duration::from_secs(args.answer_timeout),
        progress: crate::commands::common::requests::progress(&args.out),
    };
    let session = Session::start::<CephReport>(Frame {
        signals: true,
        lock: Some(LockAs {
            me: crate::sys::lock::describe_me(Path::new("the Ceph cluster")),
            busy: crate::sys::lock::Busy::Wait,
            nothing_done: "nothing was written to the cluster",
        }),
        ..crate::commands::common::requests::frame(&args.out, "pveprobe ceph")
    })?;
    let interrupt = session.interrupt();
    let tools = CephTools {
        conf: &req.conf,
        interrupt,
        progress: &req.progress,
    };
    let view = ceph::inspect(&tools).map_err(|e| match e {
        CephError::Interrupted(sig) => Stop::new(
            Exit::Signal(sig),
            "interrupted; nothing was written to the cluster",
        ),
        e => Stop::not_measured(format!("cannot read the cluster: {e}; nothing was written")),
    })?;
    if req.scratch_pool {
        scratch_pool_allowed(&tools, &view)?;
    }
    let plan = ceph::plan(&req, &view)
        .map_err(|e| Stop::bad_input(format!("{e}; nothing was written")))?;
    if args.dry_run {
        print!("{plan}");
        return Ok(Exit::Ok);
    }
    let writes = req.osd_bench || req.pool_bench;
    if writes && !args.yes {
        crate::commands::common::confirm::confirm(
            &req.progress,
            &plan,
            "pveprobe ceph writes to the cluster and slows its client I/O meanwhile; without a terminal to ask on, --yes says go (--dry-run prints the plan); nothing was written",
            "not confirmed; nothing was written",
        )?;
    } else {
        req.progress.block(&plan);
    }
    if let Some(sig) = interrupt.signal() {
        return Err(Stop::new(
            Exit::Signal(sig),
            "interrupted; nothing was written to the cluster",
        ));
    }
    let Ok(report) = Work::run(&ceph::CephRun { req: &req, view }, interrupt);
    let exit = exit_status(&report);
    for o in &report.osds {
        for e in &o.errors {
            req.progress.say(&format!("osd.{}: {e}", o.id));
        }
    }
    for p in &report.pools {
        for e in &p.errors {
            req.progress.say(&format!("pool {}: {e}", p.name));
        }
    }
    for left in &report.left_behind {
        req.progress.say(&format!("left behind: {left}"));
    }
    session.finish(&report, exit)
}

/// `pveprobe ceph-node-info`: this node's OSD disks and Ceph links as
/// JSON, for `ceph` on another node.
pub fn node_info(args: &CephNodeInfoArgs) -> Ended {
    let conf = conf(args.conf.as_deref())?;
    let facts = ceph::nodes::facts(
        &crate::sys::host::Host::real(),
        &conf,
        &crate::pvestorage::node_name(),
        &args.devices,
        None,
    );
    let text = serde_json::to_string(&facts)
        .map_err(|e| Stop::not_measured(format!("ceph-node-info: {e}")))?;
    println!("{text}");
    Ok(Exit::Ok)
}

/// `pveprobe ceph-client`: one pool job of a run from several nodes, on
/// this node; its answer as one line of JSON. A signal or its stdin
/// closing stops it (it then removes its objects).
pub fn client(args: &CephClientArgs) -> Ended {
    let job = ceph::clients::wire::ClientJob {
        conf: conf(args.conf.as_deref())?,
        pool: args.pool.clone(),
        namespace: args.namespace.clone(),
        job: args.job.clone(),
        seconds: args.seconds,
        cap: args.cap,
        rbd_bytes: args.rbd_bytes,
        start_at_ms: args.start_at,
    };
    let interrupt = crate::sys::interrupt::Interrupt::install()
        .map_err(|e| Stop::not_measured(format!("ceph-client: signals: {e}")))?;
    let stdin_closed = interrupt.clone();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        stdin_closed.raise(libc::SIGHUP);
    });
    let answer = ceph::clients::serve::serve(&job, &crate::pvestorage::node_name(), &interrupt);
    let text = serde_json::to_string(&answer)
        .map_err(|e| Stop::not_measured(format!("ceph-client: {e}")))?;
    // The run may have gone (given up on this node): nobody to tell.
    let _ = writeln!(std::io::stdout(), "{text}");
    Ok(Exit::Ok)
}

/// `--scratch-pool` only where the pool can be deleted again: every
/// monitor in quorum must allow it, or nothing is made (exit 2).
fn scratch_pool_allowed(tools: &CephTools, view: &ceph::ClusterView) -> Result<(), Stop> {
    let refused = ceph::pool_delete_refused(tools, &view.mons).map_err(|e| {
        Stop::not_measured(format!(
            "--scratch-pool: cannot ask the monitors whether a pool may be deleted: {e}; nothing was written"
        ))
    })?;
    if refused.is_empty() && !view.mons.is_empty() {
        return Ok(());
    }
    Err(Stop::bad_input(format!(
        "--scratch-pool: {} {} pools to be deleted ({} is not true), so the scratch pool could not be removed after the run; allow it (ceph config set mon {} true, or PVE's ceph.conf) or bench an existing pool with --pool; nothing was created",
        if refused.is_empty() {
            "no monitor in quorum".to_string()
        } else {
            refused.join(", ")
        },
        if refused.is_empty() {
            "answered; it may not allow"
        } else {
            "does not allow"
        },
        ceph::POOL_DELETE,
        ceph::POOL_DELETE
    )))
}

/// The signal that stopped the run; else 0 when every OSD's and pool's bench ran and nothing
/// was left behind, 1 otherwise.
pub fn exit_status(report: &CephReport) -> Exit {
    let measured = report.osds.iter().all(|o| o.errors.is_empty())
        && report.pools.iter().all(|p| p.errors.is_empty());
    match report.interrupted_by {
        Some(sig) => Exit::Signal(sig),
        None if measured && report.left_behind.is_empty() => Exit::Ok,
        None => Exit::NotMeasured,
    }
}
