//! The run of `load` as a whole, from the node it was started on: the
//! plan (which VMIDs on which nodes, what it writes, what it costs), an
//! agent on every node (`pveprobe load-node`: this node's as a child,
//! the others' through ssh), the phases sent to all agents at once, their
//! figures gathered, and every agent told to remove its workers on every
//! way out. A node whose agent stops answering is given up on within a
//! time limit; its workers are named with the command that removes them.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::profile::Phase;
use super::report::{LeftBehind, LoadReport, PhaseResult, VmRecord, WorkerFigures};
use super::wire::{self, FromNode, NodePlan, ToNode, WorkerJob};
use super::{Fill, LoadRequest};
use crate::nodes::members::Node;
use crate::nodes::remote::{self, shell_line};
use crate::pvevm;
use crate::sys::conversation::{Conversation, Heard};
use crate::sys::interrupt::Interrupt;

/// How long an agent may take to make and boot its workers, beyond the
/// workers' own boot time: `qm create` allocates every disk.
const DEPLOY_GRACE: Duration = Duration::from_secs(900);
/// How long an agent may take to remove its workers.
const REMOVE_WITHIN: Duration = Duration::from_secs(900);
/// Beyond an agent's own time limits, for its answer's way back.
const SLACK: Duration = Duration::from_secs(30);

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
    let mut out = match &req.existing {
        Some(_) => format!(
            "pveprobe load in {} existing VM{} on {} node{}, through their guest agents: {} file{} of {} each in a private directory under {} in each ({} in all)\n",
            vms,
            if vms == 1 { "" } else { "s" },
            planned.len(),
            if planned.len() == 1 { "" } else { "s" },
            req.disks_per_vm,
            if req.disks_per_vm == 1 { "" } else { "s" },
            crate::model::bytes_text(req.disk_bytes),
            req.guest_dir,
            crate::model::bytes_text(disk_total),
        ),
        None => format!(
            "pveprobe load on storage {}: {} worker VM{} on {} node{}, {} disk{} of {} each ({} in all)\n",
            req.storage,
            vms,
            if vms == 1 { "" } else { "s" },
            planned.len(),
            if planned.len() == 1 { "" } else { "s" },
            req.disks_per_vm,
            if req.disks_per_vm == 1 { "" } else { "s" },
            crate::model::bytes_text(req.disk_bytes),
            crate::model::bytes_text(disk_total),
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
                crate::model::bytes_text(disk_total)
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

/// A node's agent and what it said.
struct Agent {
    planned: Planned,
    talk: Option<Conversation>,
    deployed: bool,
    job_done: bool,
    /// It said its workers are removed, with those it could not remove.
    removed: Option<Vec<wire::LeftVm>>,
    /// Its output ended (or it was given up on).
    gone: bool,
    /// Its stderr's last word, once it ended.
    last_word: Option<String>,
}

impl Agent {
    fn tell(&mut self, message: &ToNode) {
        let sent = self
            .talk
            .as_mut()
            .is_some_and(|t| t.send(&wire::line(message)).is_ok());
        if !sent {
            self.gone = true;
        }
    }
}

/// The run's state: the agents, the workers, the phase under way.
struct Run<'a> {
    req: &'a LoadRequest,
    agents: Vec<Agent>,
    vms: Vec<VmRecord>,
    /// The phase under way: each worker's figures so far, by VMID.
    current: BTreeMap<u32, WorkerFigures>,
    problems: Vec<String>,
}

impl Run<'_> {
    fn record(&mut self, vmid: u32) -> Option<&mut VmRecord> {
        self.vms.iter_mut().find(|v| v.vmid == vmid)
    }

    fn hear(&mut self, i: usize, line: Option<String>) {
        let Some(line) = line else {
            self.agents[i].gone = true;
            return;
        };
        let Some(Ok(message)) = wire::read::<FromNode>(&line) else {
            return;
        };
        let node = self.agents[i].planned.node.name.clone();
        match message {
            FromNode::Deployed { vms } => {
                self.agents[i].deployed = true;
                for vm in vms {
                    if let Some(r) = self.record(vm.vmid) {
                        r.disks = vm.disks.len();
                    }
                }
                eprintln!("pveprobe: {node}: workers up");
            }
            FromNode::VmFailed { vmid, message } => {
                eprintln!("pveprobe: {node}: VM {vmid}: {message}");
                if let Some(w) = self.current.get_mut(&vmid) {
                    w.error.get_or_insert(message.clone());
                }
                if let Some(r) = self.record(vmid) {
                    r.failed.get_or_insert(message);
                }
            }
            FromNode::Filled {
                vmid,
                bytes,
                seconds,
            } => {
                if let Some(r) = self.record(vmid) {
                    r.filled_bytes = bytes;
                    r.fill_seconds = seconds;
                }
            }
            FromNode::Started { vmid, at_ns } => {
                if let Some(w) = self.current.get_mut(&vmid) {
                    w.started_ns = Some(at_ns);
                }
            }
            FromNode::Second { vmid, n, ops } => {
                if let Some(w) = self.current.get_mut(&vmid) {
                    let n = n as usize;
                    if w.per_second.len() <= n && n < 1 << 20 {
                        w.per_second.resize(n + 1, 0);
                    }
                    if let Some(slot) = w.per_second.get_mut(n) {
                        *slot = ops;
                    }
                }
            }
            FromNode::Result { vmid, result } => {
                if let Some(w) = self.current.get_mut(&vmid) {
                    w.reads = result.reads;
                    w.writes = result.writes;
                    w.seconds = result.seconds;
                    w.read_latency = result.read_latency;
                    w.write_latency = result.write_latency;
                    w.engine = result.engine.clone();
                    w.error = None;
                }
            }
            FromNode::JobDone => self.agents[i].job_done = true,
            FromNode::Removed { left, .. } => self.agents[i].removed = Some(left),
            FromNode::Failed { message } => {
                eprintln!("pveprobe: {node}: {message}");
                self.problems.push(format!("{node}: {message}"));
            }
        }
    }

    /// Hears the agents until every one still there is `done`, the time
    /// is up (those not done are given up on) or, when `interrupt` is
    /// given, a signal comes. False when the signal came.
    fn wait(
        &mut self,
        rx: &mpsc::Receiver<Heard>,
        limit: Duration,
        interrupt: Option<&Interrupt>,
        what: &str,
        done: fn(&Agent) -> bool,
    ) -> bool {
        let until = Instant::now() + limit;
        loop {
            if self.agents.iter().all(|a| a.gone || done(a)) {
                return true;
            }
            if interrupt.is_some_and(|i| i.signal().is_some()) {
                return false;
            }
            if Instant::now() > until {
                for a in self.agents.iter_mut().filter(|a| !a.gone && !done(a)) {
                    let why = format!(
                        "{}: its agent did not answer within {:.0} s ({what}); given up on",
                        a.planned.node.name,
                        limit.as_secs_f64()
                    );
                    eprintln!("pveprobe: {why}");
                    self.problems.push(why);
                    a.gone = true;
                }
                return true;
            }
            if let Ok((i, line)) = rx.recv_timeout(Duration::from_millis(100))
                && i < self.agents.len()
            {
                self.hear(i, line);
            }
        }
    }

    fn tell_all(&mut self, message: &ToNode) {
        for a in self.agents.iter_mut().filter(|a| !a.gone) {
            a.tell(message);
        }
    }

    /// A phase on every worker at once; its result.
    fn phase(
        &mut self,
        phase: &Phase,
        rx: &mpsc::Receiver<Heard>,
        interrupt: &Interrupt,
    ) -> Option<PhaseResult> {
        self.current = self
            .agents
            .iter()
            .filter(|a| !a.gone)
            .flat_map(|a| {
                a.planned
                    .vmids
                    .iter()
                    .map(move |&v| (v, &a.planned.node.name))
            })
            .filter(|(v, _)| self.vms.iter().any(|r| r.vmid == *v && r.failed.is_none()))
            .map(|(vmid, node)| {
                (
                    vmid,
                    WorkerFigures {
                        node: node.clone(),
                        vmid,
                        error: Some("no answer".into()),
                        ..WorkerFigures::default()
                    },
                )
            })
            .collect();
        if self.current.is_empty() {
            return None;
        }
        eprintln!(
            "pveprobe: {}: {} workers, {:.0} s warm-up, {:.0} s measured",
            phase.name,
            self.current.len(),
            phase.job.warmup,
            phase.job.seconds
        );
        for a in &mut self.agents {
            a.job_done = false;
        }
        self.tell_all(&ToNode::Job(phase.job.clone()));
        let limit =
            Duration::from_secs_f64(phase.job.warmup + phase.job.seconds + self.req.answer_within)
                + SLACK;
        let finished = self.wait(rx, limit, Some(interrupt), phase.name.as_str(), |a| {
            a.job_done
        });
        let workers = std::mem::take(&mut self.current).into_values().collect();
        finished.then(|| PhaseResult::new(phase, workers))
    }
}

/// The command that starts a node's agent.
fn agent_command(req: &LoadRequest, p: &Planned) -> Result<Command, String> {
    if p.local {
        let me = std::env::current_exe().map_err(|e| format!("which program am I: {e}"))?;
        let mut cmd = Command::new(me);
        cmd.arg("load-node");
        return Ok(cmd);
    }
    let mut words = req.reach.remote_command.clone();
    words.push("load-node".into());
    let argv = req
        .reach
        .ssh(&[])
        .argv_stdin(&p.node, &shell_line(&words), true);
    let (program, args) = argv.split_first().ok_or("no ssh command")?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    Ok(cmd)
}

fn node_plan(req: &LoadRequest, p: &Planned) -> NodePlan {
    NodePlan {
        node: p.node.name.clone(),
        storage: req.storage.clone(),
        vmids: p.vmids.clone(),
        disks_per_vm: req.disks_per_vm,
        disk_bytes: req.disk_bytes,
        kernel: req.kernel.clone(),
        release: req.release.clone(),
        modules: req.modules.clone(),
        probe: req.probe.clone(),
        with: req.with.clone(),
        settings: req.settings.clone(),
        existing: req.existing.is_some(),
        guest_dir: req.guest_dir.clone(),
        boot_within: req.boot_within,
        answer_within: req.answer_within,
    }
}

/// The whole run; what it found, and what it could not remove.
pub fn run(req: &LoadRequest, planned: Vec<Planned>, interrupt: &Interrupt) -> LoadReport {
    let (tx, rx) = mpsc::channel();
    let mut run = Run {
        req,
        agents: Vec::new(),
        vms: planned
            .iter()
            .flat_map(|p| {
                p.vmids.iter().map(|&vmid| VmRecord {
                    node: p.node.name.clone(),
                    vmid,
                    disks: 0,
                    filled_bytes: 0,
                    fill_seconds: 0.0,
                    failed: None,
                })
            })
            .collect(),
        current: BTreeMap::new(),
        problems: Vec::new(),
    };
    for (i, p) in planned.into_iter().enumerate() {
        let talk = agent_command(req, &p)
            .and_then(|mut cmd| {
                Conversation::start(&mut cmd, i, wire::MAX_LINE, tx.clone())
                    .map_err(|e| format!("cannot start its agent: {}", crate::error::describe(&e)))
            })
            .map_err(|why| run.problems.push(format!("{}: {why}", p.node.name)))
            .ok();
        let plan = node_plan(req, &p);
        let mut agent = Agent {
            planned: p,
            gone: talk.is_none(),
            talk,
            deployed: false,
            job_done: false,
            removed: None,
            last_word: None,
        };
        agent.tell(&ToNode::Deploy(Box::new(plan)));
        run.agents.push(agent);
    }
    let mut phases = Vec::new();
    let deploy = Duration::from_secs_f64(req.boot_within) + DEPLOY_GRACE;
    let mut going = run.wait(&rx, deploy, Some(interrupt), "making its workers", |a| {
        a.deployed
    });
    for vm in run.vms.iter_mut() {
        let deployed = run
            .agents
            .iter()
            .any(|a| a.deployed && a.planned.vmids.contains(&vm.vmid));
        if !deployed {
            vm.failed
                .get_or_insert("its node's agent did not deploy it".into());
        }
    }
    if going && req.fill != Fill::Skip {
        let bytes = req.disks_per_vm as f64 * req.disk_bytes as f64;
        eprintln!("pveprobe: filling the workers' disks");
        for a in &mut run.agents {
            a.job_done = false;
        }
        run.tell_all(&ToNode::Fill {
            zero: req.fill == Fill::Zero,
        });
        let limit =
            Duration::from_secs_f64(bytes / super::node::SLOWEST_FILL + req.answer_within) + SLACK;
        going = run.wait(&rx, limit, Some(interrupt), "the fill", |a| a.job_done);
    }
    let mut target = None;
    match (req.target, req.phases.first()) {
        (Some(t), Some(first)) if going => {
            target = Some(super::target::search(t, &super::target::DEPTHS, |depth| {
                let step = Phase {
                    name: format!("depth {depth}"),
                    job: WorkerJob {
                        iodepth: depth,
                        // The storage is warm after the first step.
                        warmup: if phases.is_empty() {
                            first.job.warmup
                        } else {
                            0.0
                        },
                        seconds: req.step_seconds,
                        ..first.job.clone()
                    },
                };
                let result = run.phase(&step, &rx, interrupt)?;
                let figures = (result.figures.iops, result.percentile_us(t.percentile)?);
                phases.push(result);
                Some(figures)
            }));
        }
        _ => {
            for phase in &req.phases {
                if !going {
                    break;
                }
                match run.phase(phase, &rx, interrupt) {
                    Some(result) => phases.push(result),
                    None => going = false,
                }
            }
        }
    }
    // Every way out: every agent removes its workers.
    run.tell_all(&ToNode::Done);
    run.wait(&rx, REMOVE_WITHIN, None, "removing its workers", |a| {
        a.removed.is_some()
    });
    let mut left_behind = Vec::new();
    for a in &mut run.agents {
        if let Some(talk) = a.talk.take() {
            let ended = talk.finish(Duration::from_secs(10));
            a.last_word = remote::last_line(&ended.stderr);
        }
        let node = &a.planned.node.name;
        let on_node = |vmid: u32| {
            if a.planned.local {
                pvevm::destroy_command(vmid)
            } else {
                format!(
                    "ssh root@{} {}",
                    a.planned.node.address,
                    pvevm::destroy_command(vmid)
                )
            }
        };
        match &a.removed {
            Some(left) => left_behind.extend(left.iter().map(|l| LeftBehind {
                node: node.clone(),
                vmid: l.vmid,
                why: l.why.clone(),
                command: on_node(l.vmid),
            })),
            None => left_behind.extend(a.planned.vmids.iter().map(|&vmid| LeftBehind {
                node: node.clone(),
                vmid,
                why: format!(
                    "its node's agent ended without saying it was removed{}",
                    a.last_word
                        .as_deref()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default()
                ),
                command: on_node(vmid),
            })),
        }
    }
    LoadReport {
        schema_version: super::report::SCHEMA_VERSION,
        kind: super::report::KIND.into(),
        pveprobe_version: env!("CARGO_PKG_VERSION").into(),
        timestamp: req.timestamp.clone(),
        storage: req.storage.clone(),
        profile: req.profile,
        disks_per_vm: req.disks_per_vm,
        disk_bytes: req.disk_bytes,
        fill: req.fill.name().into(),
        settings: req.settings.clone(),
        vms: run.vms,
        phases,
        target,
        left_behind,
        problems: run.problems,
        interrupted_by: interrupt.signal(),
    }
}
