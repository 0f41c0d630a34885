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

use super::plan::Planned;
use super::profile::Phase;
use super::report::{LeftBehind, LoadReport, PhaseResult, VmRecord, WorkerFigures};
use super::wire::{self, FromNode, NodePlan, ToNode, WorkerJob};
use super::{Fill, LoadRequest};
use crate::commands::common::work::Work;
use crate::nodes::remote::{self, shell_line};
use crate::pvevm;
use crate::sys::conversation::{Conversation, Heard, Listened, listen};
use crate::sys::interrupt::Interrupt;

/// How long an agent may take to make and boot its workers, beyond the
/// workers' own boot time: `qm create` allocates every disk.
const DEPLOY_GRACE: Duration = Duration::from_secs(900);
/// How long an agent may take to remove its workers.
const REMOVE_WITHIN: Duration = Duration::from_secs(900);
/// How long the agents may take to remove their workers once one of them
/// was given up on.
const GIVEN_UP_REMOVE_WITHIN: Duration = Duration::from_secs(120);
/// Beyond an agent's own time limits, for its answer's way back.
const SLACK: Duration = Duration::from_secs(30);

/// A node's agent and what it said.
struct Agent {
    planned: Planned,
    talk: Option<Conversation>,
    deployed: bool,
    job_done: bool,
    /// It said its workers are removed, with those it could not remove.
    removed: Option<Vec<wire::LeftVm>>,
    /// Its output ended, or it could not be started or told.
    ended: bool,
    /// It did not answer within a step's time limit: asked nothing more
    /// but to clean up.
    given_up: bool,
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
            self.ended = true;
        }
    }

    /// Neither ended nor given up on: it takes part.
    fn taking_part(&self) -> bool {
        !self.ended && !self.given_up
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
            self.agents[i].ended = true;
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
                self.req.progress.step(&format!("{node}: workers up"));
            }
            FromNode::VmFailed { vmid, message } => {
                self.req
                    .progress
                    .say(&format!("{node}: VM {vmid}: {message}"));
                // Its failure, unless it gave its result before.
                if let Some(w) = self.current.get_mut(&vmid)
                    && w.seconds == 0.0
                {
                    w.error = Some(message.clone());
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
                self.req.progress.say(&format!("{node}: {message}"));
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
        let ended = listen(
            rx,
            Instant::now() + limit,
            interrupt,
            self,
            |c| c.agents.iter().all(|a| !a.taking_part() || done(a)),
            |c, (i, line)| {
                if i < c.agents.len() {
                    c.hear(i, line);
                }
            },
        );
        match ended {
            Listened::Done => true,
            Listened::Signal => false,
            // Out of time, or every agent's output ended: those not done
            // will not be.
            Listened::Deadline | Listened::Silent => {
                for a in self
                    .agents
                    .iter_mut()
                    .filter(|a| a.taking_part() && !done(a))
                {
                    let why = format!(
                        "{}: its agent did not answer within {:.0} s ({what}); given up on",
                        a.planned.node.name,
                        limit.as_secs_f64()
                    );
                    self.req.progress.say(&why);
                    self.problems.push(why);
                    a.given_up = true;
                }
                true
            }
        }
    }

    fn tell_all(&mut self, message: &ToNode) {
        for a in self.agents.iter_mut().filter(|a| a.taking_part()) {
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
            .filter(|a| a.taking_part())
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
        self.req.progress.timed(
            &format!(
                "{}: {} workers, {:.0} s warm-up, {:.0} s measured",
                phase.name,
                self.current.len(),
                phase.job.warmup,
                phase.job.seconds
            ),
            Duration::from_secs_f64(phase.job.warmup + phase.job.seconds),
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
    let there = (!p.local).then_some((&req.reach, &p.node));
    remote::pveprobe_command(&["load-node".into()], there, |command, words| {
        shell_line(&[command, words].concat())
    })
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

/// The run's state with an agent started (and sent its plan) on every
/// planned node.
fn start<'a>(req: &'a LoadRequest, planned: Vec<Planned>, tx: &mpsc::Sender<Heard>) -> Run<'a> {
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
            ended: talk.is_none(),
            given_up: false,
            talk,
            deployed: false,
            job_done: false,
            removed: None,
            last_word: None,
        };
        agent.tell(&ToNode::Deploy(Box::new(plan)));
        run.agents.push(agent);
    }
    run
}

impl Run<'_> {
    /// Every agent's workers up, then filled; false when a signal came.
    fn deploy_and_fill(&mut self, rx: &mpsc::Receiver<Heard>, interrupt: &Interrupt) -> bool {
        let req = self.req;
        let deploy = Duration::from_secs_f64(req.boot_within) + DEPLOY_GRACE;
        let going = self.wait(rx, deploy, Some(interrupt), "making its workers", |a| {
            a.deployed
        });
        for vm in self.vms.iter_mut() {
            let deployed = self
                .agents
                .iter()
                .any(|a| a.deployed && a.planned.vmids.contains(&vm.vmid));
            if !deployed {
                vm.failed
                    .get_or_insert("its node's agent did not deploy it".into());
            }
        }
        if !going || req.fill == Fill::Skip {
            return going;
        }
        let bytes = req.disks_per_vm as f64 * req.disk_bytes as f64;
        self.req.progress.step("filling the workers' disks");
        for a in &mut self.agents {
            a.job_done = false;
        }
        self.tell_all(&ToNode::Fill {
            zero: req.fill == Fill::Zero,
        });
        let limit = Duration::from_secs_f64(bytes / wire::SLOWEST_FILL + req.answer_within) + SLACK;
        self.wait(rx, limit, Some(interrupt), "the fill", |a| a.job_done)
    }

    /// The phases (or the latency target's steps), while nothing stops them.
    fn phases(
        &mut self,
        rx: &mpsc::Receiver<Heard>,
        interrupt: &Interrupt,
    ) -> (Vec<PhaseResult>, Option<super::target::TargetResult>) {
        let req = self.req;
        let mut phases = Vec::new();
        let (Some(t), Some(first)) = (req.target, req.phases.first()) else {
            for phase in &req.phases {
                match self.phase(phase, rx, interrupt) {
                    Some(result) => phases.push(result),
                    None => break,
                }
            }
            return (phases, None);
        };
        let target = super::target::search(t, &super::target::DEPTHS, |depth| {
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
            let result = self.phase(&step, rx, interrupt)?;
            let figures = (result.figures.iops, result.percentile_us(t.percentile)?);
            phases.push(result);
            Some(figures)
        });
        (phases, Some(target))
    }

    /// Every agent told to remove its workers and heard out; what is left.
    fn clean_up(&mut self, rx: &mpsc::Receiver<Heard>) -> Vec<LeftBehind> {
        // Those given up on too: they may still clean up, but are waited
        // for only so long (a node that hangs would hold the run).
        let any_given_up = self.agents.iter().any(|a| a.given_up);
        for a in self.agents.iter_mut().filter(|a| !a.ended) {
            a.given_up = false;
            a.tell(&ToNode::Done);
        }
        let limit = if any_given_up {
            GIVEN_UP_REMOVE_WITHIN
        } else {
            REMOVE_WITHIN
        };
        self.wait(rx, limit, None, "removing its workers", |a| {
            a.removed.is_some()
        });
        let mut left_behind = Vec::new();
        for a in &mut self.agents {
            match a.talk.take() {
                Some(talk) if a.removed.is_some() || a.ended => {
                    let ended = talk.finish(Duration::from_secs(10));
                    a.last_word = remote::last_line(&ended.stderr);
                }
                // Still at work: left to finish its clean-up, not killed.
                Some(talk) => talk.release(),
                None => {}
            }
            let node = &a.planned.node.name;
            let on_node = |command: String| {
                if a.planned.local {
                    command
                } else {
                    format!("ssh root@{} {command}", a.planned.node.address)
                }
            };
            match &a.removed {
                Some(left) => left_behind.extend(left.iter().map(|l| {
                    LeftBehind {
                        node: node.clone(),
                        vmid: l.vmid,
                        why: l.why.clone(),
                        command: on_node(
                            l.command
                                .clone()
                                .unwrap_or_else(|| pvevm::destroy_command(l.vmid)),
                        ),
                    }
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
                    command: on_node(if self.req.existing.is_some() {
                        format!(
                            "qm guest exec {vmid} -- ls -d {}/.pveprobe.*",
                            self.req.guest_dir
                        )
                    } else {
                        pvevm::destroy_command(vmid)
                    }),
                })),
            }
        }
        left_behind
    }
}

/// A run planned and agreed to: the request and each node's workers.
pub struct LoadRun<'a> {
    pub req: &'a LoadRequest,
    pub planned: Vec<Planned>,
}

/// The whole run; what it found, and what it could not remove. What
/// fails is in the report: a worker's error, a VM left behind.
impl Work for LoadRun<'_> {
    type Report = LoadReport;
    type Error = std::convert::Infallible;

    fn run(&self, interrupt: &Interrupt) -> Result<LoadReport, Self::Error> {
        let req = self.req;
        let (tx, rx) = mpsc::channel();
        let mut run = start(req, self.planned.clone(), &tx);
        let (phases, target) = if run.deploy_and_fill(&rx, interrupt) {
            run.phases(&rx, interrupt)
        } else {
            (Vec::new(), None)
        };
        // Every way out: every agent removes its workers.
        let left_behind = run.clean_up(&rx);
        Ok(LoadReport {
            schema_version: super::report::SCHEMA_VERSION,
            kind: super::report::KIND.into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: req.timestamp.clone(),
            storage: req.storage.clone(),
            profile: req.profile,
            disks_per_vm: req.disks_per_vm,
            disk_bytes: req.disk_bytes,
            fill: req.fill.name().into(),
            existing: req.existing.is_some(),
            settings: req.settings.clone(),
            vms: run.vms,
            phases,
            target,
            one_at_a_time: Vec::new(),
            left_behind,
            problems: run.problems,
            interrupted_by: interrupt.signal(),
        })
    }
}
