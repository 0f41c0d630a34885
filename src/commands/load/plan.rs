//! `load`'s plan: which nodes, which VMIDs, and what the run costs, said
//! before anything is made and by `--dry-run`.

use super::{Fill, LoadRequest};
use crate::nodes::members::Node;
use crate::pvevm;

/// Who runs on which node.
#[derive(Debug, Clone)]
pub struct Planned {
    pub node: Node,
    /// This node: its agent is a child, not reached over ssh.
    pub local: bool,
    pub vmids: Vec<u32>,
}

/// The workers' VMIDs: the cluster's next free ones, each checked free.
pub fn allocate_vmids(count: usize) -> Result<Vec<u32>, String> {
    let mut id = pvevm::next_id(None)
        .map_err(|e| e.to_string())?
        .ok_or("pvesh gave no VMID")?;
    let mut ids = Vec::with_capacity(count);
    while ids.len() < count {
        if pvevm::next_id(Some(id))
            .map_err(|e| e.to_string())?
            .is_some()
        {
            ids.push(id);
        }
        id = id.checked_add(1).ok_or("no VMID left")?;
    }
    Ok(ids)
}

/// What the run costs, said before it and by `--dry-run`.
pub fn describe(req: &LoadRequest, planned: &[Planned]) -> String {
    let vms: usize = planned.iter().map(|p| p.vmids.len()).sum();
    let disk_total = vms as u64 * req.disks_per_vm as u64 * req.disk_bytes;
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let (vms_text, nodes) = (count(vms, "worker VM"), count(planned.len(), "node"));
    let each = crate::model::human::Size(req.disk_bytes).to_string();
    let total = crate::model::human::Size(disk_total).to_string();
    let mut out = match &req.existing {
        Some(_) => format!(
            "pveprobe load in {} on {nodes}, through their guest agents: {} of {each} each in a private directory under {} in each ({total} in all)\n",
            count(vms, "existing VM"),
            count(req.disks_per_vm, "file"),
            req.guest_dir,
        ),
        None => format!(
            "pveprobe load on storage {}: {vms_text} on {nodes}, {} of {each} each ({total} in all)\n",
            req.storage,
            count(req.disks_per_vm, "disk"),
        ),
    };
    for p in planned {
        out += &format!(
            "  {}{}: VMID {}\n",
            p.node.name,
            if p.local { " (this node)" } else { "" },
            p.vmids
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out + &describe_work(req, disk_total)
}

/// The plan's second half: the workers' settings, the fill, the phases,
/// the time, the cost and the clean-up.
fn describe_work(req: &LoadRequest, disk_total: u64) -> String {
    let mut out = String::new();
    let s = &req.settings;
    if req.existing.is_none() {
        out += &format!(
            "  each: {} MiB, {} cores, scsihw {}, iothread={}, cache={}, aio={}\n",
            s.memory_mib,
            s.cores,
            s.scsihw,
            u8::from(s.iothread),
            s.cache,
            s.aio.as_deref().unwrap_or("PVE's default")
        );
    }
    match req.fill {
        Fill::Skip => out += "  no fill: reads of blocks never written may measure nothing\n",
        fill => {
            out += &format!(
                "  fill: every disk written once with {} ({})\n",
                if fill == Fill::Zero {
                    "zeros"
                } else {
                    "random data"
                },
                crate::model::human::Size(disk_total)
            )
        }
    }
    let mut seconds = 0.0;
    if let (Some(t), Some(first)) = (req.target, req.phases.first()) {
        let steps = super::target::DEPTHS.len() as f64;
        out += &format!(
            "  latency target {}: {}'s job at 1, 2, 4... {} in flight per worker, {:.0} s each, until it is crossed\n",
            t.text(),
            first.name,
            super::target::DEPTHS[super::target::DEPTHS.len() - 1],
            req.step_seconds
        );
        seconds = first.job.warmup + steps * req.step_seconds;
    }
    for p in req.phases.iter().filter(|_| req.target.is_none()) {
        let j = &p.job;
        out += &format!(
            "  {}: {} B blocks, {}% read, {}% random, {} workers x {} in flight{} per VM, {:.0} s warm-up, {:.0} s measured\n",
            p.name,
            j.block,
            j.read_pct,
            j.random_pct,
            j.workers,
            j.iodepth,
            if j.sync { ", synced" } else { "" },
            j.warmup,
            j.seconds
        );
        seconds += j.warmup + j.seconds;
    }
    out += &format!(
        "  at most about {:.0} s of load after the fill; the cluster's own guests on {} slow down meanwhile\n",
        seconds,
        if req.existing.is_some() {
            "the VMs' storage"
        } else {
            req.storage.as_str()
        }
    );
    out += match req.existing {
        Some(_) => {
            "  each guest's directory is removed when the run ends, however it ends; no VM is made or changed\n"
        }
        None => {
            "  every worker is destroyed with its disks (qm destroy --purge) when the run ends, however it ends\n"
        }
    };
    out
}
