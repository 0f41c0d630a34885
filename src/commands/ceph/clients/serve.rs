//! The client's end of a run from several clients (`pveprobe
//! ceph-client` on its node): wait for the agreed start, run the job in
//! the client's own namespace, answer; stopped, remove what it wrote.

use std::time::Duration;

use super::now_ms;
use super::wire::{ClientAnswer, ClientJob};
use crate::commands::ceph::*;

/// What `pveprobe ceph-client` does on its node: waits for the start,
/// runs `job`, and answers; stopped (by `interrupt`: a signal, or its
/// stdin closed), it stops the bench and removes its namespace's objects.
pub fn serve(job: &ClientJob, node: &str, interrupt: &Interrupt) -> ClientAnswer {
    let tools = CephTools {
        conf: &job.conf,
        interrupt,
        // A client answers in JSON; this node says the steps.
        progress: &crate::output::progress::Progress::default(),
    };
    let mut answer = ClientAnswer {
        pveprobe_version: env!("CARGO_PKG_VERSION").into(),
        node: node.into(),
        link: network::this_node(&crate::sys::host::Host::real(), &job.conf, node)
            .ok()
            .and_then(|l| l.into_iter().find(|l| l.kind == "public")),
        ..ClientAnswer::default()
    };
    while now_ms() < job.start_at_ms && interrupt.signal().is_none() {
        let left = job.start_at_ms - now_ms();
        std::thread::sleep(Duration::from_millis(left.min(50)));
    }
    let mut scratch = Scratch::new(&tools, &job.pool, &job.namespace);
    let ran = if interrupt.signal().is_some() {
        Err(CephError::Interrupted(
            interrupt.signal().unwrap_or(libc::SIGHUP),
        ))
    } else {
        answer.started_ms = Some(now_ms());
        if let Some(rados) = scratch::rados_job(&job.job) {
            scratch.rados_bench(rados, job.seconds, job.cap)
        } else if let Some((_, _, io)) = RBD_JOBS.iter().find(|j| j.0 == job.job) {
            scratch.rbd_bench(io, job.rbd_bytes)
        } else {
            Err(CephError::Tool {
                command: "ceph-client".into(),
                why: format!("no job {:?}", job.job),
            })
        }
    };
    match ran {
        Ok(f) => answer.figure = Some(f),
        Err(e) => {
            answer.error = Some(e.to_string());
            if matches!(e, CephError::Interrupted(_)) {
                answer.left_behind = scratch.clean();
            }
        }
    }
    answer
}
