//! The pool benches of a run: each chosen pool (or the run's scratch
//! pool, made first and deleted after) benched from this node alone, then
//! with `--clients` from several nodes at once, its scratch space removed
//! before the next pool.

use super::*;

/// Each chosen pool's benches (or the scratch pool's, made first and
/// deleted after), each pool's scratch space removed before the next.
pub fn bench_pools(
    req: &CephRequest,
    mut view: ClusterView,
    tools: &CephTools,
    report: &mut CephReport,
) {
    let mut scratch_pool = req
        .scratch_pool
        .then(|| ScratchPool::new(tools, &req.run_id));
    let names: Vec<String> = match scratch_pool.as_mut() {
        Some(sp) => match sp.create(&mut view) {
            Ok(()) => {
                if let Some(p) = view.pools.iter().find(|p| p.name == sp.name) {
                    report.pools.push(report::PoolResult {
                        scratch: true,
                        ..report::PoolResult::of(p, &view)
                    });
                }
                vec![sp.name.clone()]
            }
            Err(e) => {
                report.pools.push(report::PoolResult {
                    name: sp.name.clone(),
                    scratch: true,
                    errors: vec![format!("the scratch pool: {e}")],
                    ..report::PoolResult::default()
                });
                Vec::new()
            }
        },
        None => chosen_pools(req, &view)
            .unwrap_or_default()
            .iter()
            .map(|p| p.name.clone())
            .collect(),
    };
    for name in names {
        if tools.interrupt.signal().is_some() {
            break;
        }
        let (jobs, errors) = bench_pool(req, &view, tools, &name, &mut report.left_behind);
        if let Some(pool) = report.pools.iter_mut().find(|p| p.name == name) {
            pool.jobs = jobs;
            pool.errors.extend(errors);
        }
    }
    if let Some(sp) = scratch_pool.as_mut() {
        report.left_behind.extend(sp.delete());
    }
}

/// One pool's jobs and what failed: from this node alone, then from the
/// clients; what could not be removed goes to `left`.
fn bench_pool(
    req: &CephRequest,
    view: &ClusterView,
    tools: &CephTools,
    name: &str,
    left: &mut Vec<String>,
) -> (Vec<PoolJob>, Vec<String>) {
    let mut scratch = Scratch::new(tools, name, &req.run_id);
    let watch = drag::Watch::new(
        tools,
        view.tree
            .iter()
            .filter(|t| t.status.as_deref() != Some("down"))
            .map(|t| t.id)
            .collect(),
    );
    let mut jobs = Vec::new();
    let mut errors = Vec::new();
    let rbd = req.rbd_bench
        && view
            .pools
            .iter()
            .any(|p| p.name == name && p.applications.iter().any(|a| a == "rbd"));
    let cap = write_cap(view, name);
    let ran = scratch
        .rados_jobs(req.seconds, cap, &watch, &mut jobs)
        .and_then(|()| {
            if rbd {
                scratch.rbd_jobs(
                    req.rbd_bytes.min(cap.unwrap_or(u64::MAX)),
                    &watch,
                    &mut jobs,
                )
            } else {
                Ok(())
            }
        });
    let alone = ran.is_ok();
    if let Err(e) = ran {
        errors.push(e.to_string());
    }
    left.extend(scratch.clean());
    if req.clients.is_empty() || !alone {
        return (jobs, errors);
    }
    let clients = clients::Clients {
        nodes: &req.clients,
        reach: req.reach.as_ref(),
        conf_given: req.conf_given,
        answer_within: req.answer_within,
    };
    let run = clients::PoolRun {
        pool: name,
        run_id: &req.run_id,
        conf: &req.conf,
        seconds: req.seconds,
        cap,
        rbd_bytes: rbd.then_some(req.rbd_bytes),
    };
    let (ran, more_left) = clients.pool_jobs(tools, &run, &watch, &mut jobs);
    left.extend(more_left);
    for j in &jobs {
        for c in j.clients.iter().filter(|c| c.error.is_some()) {
            errors.push(format!(
                "{}: {}: {}",
                j.name(),
                c.node,
                c.error.as_deref().unwrap_or_default()
            ));
        }
    }
    if let Err(e) = ran {
        errors.push(format!("from {} clients: {e}", req.clients.len()));
    }
    (jobs, errors)
}
