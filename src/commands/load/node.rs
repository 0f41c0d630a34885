//! `pveprobe load-node`: a node's agent in a `load` run. The coordinator
//! (on this node or, through ssh, another) sends it the node's share
//! ([`NodePlan`]) on stdin; it builds the workers' initramfs in a private
//! directory, makes and boots the worker VMs with PVE's `qm`, talks to
//! each over its serial socket where PVE puts it, passes jobs down and
//! figures up, and on every way out (done, its stdin closed because the
//! coordinator or ssh went, a signal, an error) stops and destroys every
//! VM it made, with its disks, and says which it could not.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::guest::{self, GuestThread};
use super::initramfs::{self, InitramfsSpec};
use super::wire::{self, DeployedVm, FromNode, FromWorker, LeftVm, NodePlan, ToNode, ToWorker};
use crate::output::progress::Progress;
use crate::pvevm::{self, VmSpec};
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;

/// Where PVE puts a VM's `serial0: socket`.
pub const QEMU_RUN_DIR: &str = "/var/run/qemu-server";
/// The kernel command line of a worker: its console on a second port
/// (none in a worker VM: the kernel stays off the protocol's port), and
/// a panic powers it off rather than hanging.
pub const APPEND: &str = "console=ttyS1 panic=-1 quiet -- load-worker";
/// How long an existing VM's thread may take to remove its directory.
const GUEST_CLEAN_WITHIN: Duration = Duration::from_secs(120);
/// How long the coordinator's plan may take to come.
const PLAN_WITHIN: Duration = Duration::from_secs(60);

enum Event {
    Coordinator(Option<ToNode>),
    Worker(u32, Option<FromWorker>),
}

/// Says `message` to the coordinator; a coordinator gone is no error
/// here (the closed stdin ends the run).
fn say(message: &FromNode) {
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_all(wire::line(message).as_bytes())
        .and_then(|()| out.flush());
}

/// The agent's life. Returns once everything it made is removed (or
/// named as left); `Err` only when it never got a plan.
pub fn serve(interrupt: &Interrupt) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    let from_coordinator = tx.clone();
    std::thread::spawn(move || {
        wire::pass_lines(std::io::stdin().lock(), |m| {
            from_coordinator.send(Event::Coordinator(m)).is_ok()
        });
    });
    let plan = match rx.recv_timeout(PLAN_WITHIN) {
        Ok(Event::Coordinator(Some(ToNode::Deploy(plan)))) => *plan,
        _ => return Err("no plan came from the coordinator".into()),
    };
    let mut fleet = Fleet {
        made: Vec::new(),
        ports: BTreeMap::new(),
        retired: Vec::new(),
        scratch: None,
    };
    let started = if plan.existing {
        reach_existing(&plan, &mut fleet, &tx)
    } else {
        deploy(&plan, &mut fleet, &tx, interrupt)
    };
    let deployed = started.and_then(|()| greeted(&plan, &mut fleet, &rx, interrupt));
    if let Err(message) = deployed.and_then(|vms| {
        say(&FromNode::Deployed { vms });
        relay(&plan, &mut fleet, &rx, interrupt)
    }) {
        say(&FromNode::Failed { message });
    }
    let (removed, left) = fleet.remove();
    say(&FromNode::Removed { removed, left });
    Ok(())
}

/// How a worker is reached: a worker VM's serial port, or the thread
/// that runs an existing VM's part through its guest agent.
enum Port {
    Serial(UnixStream),
    Guest(GuestThread),
}

/// What the agent made: the VMs (in the order made), their ports, and
/// the private directory with the initramfs; the existing VMs' threads.
struct Fleet {
    made: Vec<u32>,
    ports: BTreeMap<u32, Port>,
    /// Existing VMs' threads no longer asked anything, still to be ended.
    retired: Vec<(u32, GuestThread)>,
    scratch: Option<ScratchDir>,
}

impl Fleet {
    fn tell(&mut self, vmid: u32, message: &ToWorker) -> bool {
        match self.ports.get_mut(&vmid) {
            Some(Port::Serial(p)) => {
                let line = wire::line(message);
                p.write_all(line.as_bytes())
                    .and_then(|()| p.flush())
                    .is_ok()
            }
            Some(Port::Guest(g)) => g.tell.send(message.clone()).is_ok(),
            None => false,
        }
    }

    /// A worker that takes no further part.
    fn retire(&mut self, vmid: u32) {
        if let Some(Port::Guest(g)) = self.ports.remove(&vmid) {
            self.retired.push((vmid, g));
        }
    }

    /// Every existing VM's thread stopped and ended: its directory
    /// removed, or named in `left`.
    fn end_guests(&mut self, left: &mut Vec<LeftVm>) {
        for vmid in self.ports.keys().copied().collect::<Vec<_>>() {
            self.retire(vmid);
        }
        let threads = std::mem::take(&mut self.retired);
        for (_, g) in &threads {
            g.stop.raise(libc::SIGTERM);
            let _ = g.tell.send(ToWorker::Bye);
        }
        let until = Instant::now() + GUEST_CLEAN_WITHIN;
        for (vmid, g) in threads {
            while !g.done.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
            if !g.done.is_finished() {
                left.push(LeftVm {
                    vmid,
                    why: "its guest agent did not answer: the run's directory may be left in the guest".into(),
                    command: None,
                });
            } else if let Ok(Some((dir, why))) = g.done.join() {
                left.push(LeftVm {
                    vmid,
                    why: format!("in the guest: {why}"),
                    command: Some(format!("qm guest exec {vmid} -- rm -rf -- {dir}")),
                });
            }
        }
    }

    /// Every VM made stopped and destroyed with its disks; the private
    /// directory removed.
    fn remove(&mut self) -> (Vec<u32>, Vec<LeftVm>) {
        for vmid in self.made.clone() {
            self.tell(vmid, &ToWorker::Bye);
        }
        let (mut removed, mut left) = (Vec::new(), Vec::new());
        self.end_guests(&mut left);
        self.ports.clear();
        for vmid in std::mem::take(&mut self.made) {
            // A VM that is not running (or not there) is no reason to stop.
            let _ = pvevm::stop(vmid);
            match pvevm::destroy(vmid) {
                Ok(()) => removed.push(vmid),
                Err(e) if e.to_string().contains("does not exist") => removed.push(vmid),
                Err(e) => left.push(LeftVm {
                    vmid,
                    why: e.to_string(),
                    command: None,
                }),
            }
        }
        if let Some(scratch) = self.scratch.take()
            && let Err(e) = scratch.remove()
        {
            Progress::default()
                .named("pveprobe load-node")
                .say(&e.to_string());
        }
        (removed, left)
    }
}

/// The kernel the workers boot, and its release: the one asked for
/// (its release from its name, `vmlinuz-RELEASE`, unless given), else
/// this node's own.
fn kernel_of(plan: &NodePlan) -> Result<(PathBuf, String), String> {
    let kernel = match &plan.kernel {
        Some(k) => k.clone(),
        None => {
            let release = nix::sys::utsname::uname()
                .map_err(|e| format!("uname: {e}"))?
                .release()
                .to_string_lossy()
                .into_owned();
            Path::new("/boot").join(format!("vmlinuz-{release}"))
        }
    };
    if !kernel.is_file() {
        return Err(format!(
            "no kernel at {} for the workers (--kernel names one)",
            kernel.display()
        ));
    }
    if let Some(r) = &plan.release {
        return Ok((kernel, r.clone()));
    }
    let release = kernel
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("vmlinuz-"))
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "{}: not named vmlinuz-RELEASE; say its release (--kernel-release)",
                kernel.display()
            )
        })?;
    Ok((kernel, release))
}

/// Whether the storage has room for the workers' disks and a quarter more.
fn check_room(plan: &NodePlan) -> Result<(), String> {
    let need = plan.vmids.len() as u64 * plan.disks_per_vm as u64 * plan.disk_bytes;
    let rows = crate::pvestorage::pvesm::status().map_err(|e| e.to_string())?;
    let row = rows.iter().find(|r| r.id == plan.storage).ok_or_else(|| {
        format!(
            "storage {} is not in this node's pvesm status",
            plan.storage
        )
    })?;
    let avail = row.avail_bytes.unwrap_or(0);
    if avail < need + need / 4 {
        return Err(format!(
            "storage {} has {} free; the workers' disks need {} and a quarter more to spare",
            plan.storage,
            crate::model::human::Size(avail),
            crate::model::human::Size(need)
        ));
    }
    Ok(())
}

/// The workers made and booted, each one's serial port heard on `tx`;
/// those that failed are told.
fn deploy(
    plan: &NodePlan,
    fleet: &mut Fleet,
    tx: &mpsc::Sender<Event>,
    interrupt: &Interrupt,
) -> Result<(), String> {
    check_room(plan)?;
    let (kernel, release) = kernel_of(plan)?;
    let mut scratch = ScratchDir::create(&std::env::temp_dir()).map_err(|e| e.to_string())?;
    let initrd = scratch.path().join("worker.img");
    let file = scratch
        .create_file("worker.img")
        .map_err(|e| e.to_string())?;
    fleet.scratch = Some(scratch);
    initramfs::build(
        &InitramfsSpec {
            probe: plan.probe.clone(),
            modules: plan.modules.join(&release),
            extra: plan.with.clone(),
        },
        &mut std::io::BufWriter::new(file),
    )
    .map_err(|e| e.to_string())?;
    let boot_limit = Duration::from_secs_f64(plan.boot_within);
    let mut booting = BTreeMap::new();
    for &vmid in &plan.vmids {
        interrupt.check().map_err(|e| e.to_string())?;
        let spec = VmSpec {
            vmid,
            name: format!("pveprobe-load-{vmid}"),
            storage: plan.storage.clone(),
            disks: plan.disks_per_vm,
            disk_gib: plan.disk_bytes as f64 / f64::from(1u32 << 30),
            kernel: kernel.clone(),
            initrd: initrd.clone(),
            append: APPEND.into(),
            settings: plan.settings.clone(),
        };
        fleet.made.push(vmid);
        let started = pvevm::create(&spec).and_then(|()| pvevm::start(vmid));
        match started {
            Ok(()) => {
                booting.insert(vmid, Instant::now());
            }
            Err(e) => say(&FromNode::VmFailed {
                vmid,
                message: e.to_string(),
            }),
        }
    }
    for (&vmid, &since) in &booting {
        match connect(vmid, since + boot_limit, interrupt) {
            Ok(port) => {
                listen(vmid, &port, tx.clone())?;
                fleet.ports.insert(vmid, Port::Serial(port));
            }
            Err(message) => say(&FromNode::VmFailed { vmid, message }),
        }
    }
    Ok(())
}

/// The existing VMs of `--vms`, each reached by a thread of its own
/// through its guest agent, what it says heard on `tx`.
fn reach_existing(
    plan: &NodePlan,
    fleet: &mut Fleet,
    tx: &mpsc::Sender<Event>,
) -> Result<(), String> {
    let probe = std::fs::read(&plan.probe)
        .map_err(|e| format!("{}: {}", plan.probe.display(), crate::error::describe(&e)))?;
    let probe = std::sync::Arc::new(probe);
    for &vmid in &plan.vmids {
        let tx = std::sync::Mutex::new(tx.clone());
        let thread = guest::spawn(vmid, plan, probe.clone(), move |vmid, message| {
            if let Ok(tx) = tx.lock() {
                let _ = tx.send(Event::Worker(vmid, message));
            }
        });
        fleet.ports.insert(vmid, Port::Guest(thread));
    }
    Ok(())
}

/// Waits for every worker's hello (those that do not say it in time are
/// told and retired); the workers up.
fn greeted(
    plan: &NodePlan,
    fleet: &mut Fleet,
    rx: &mpsc::Receiver<Event>,
    interrupt: &Interrupt,
) -> Result<Vec<DeployedVm>, String> {
    let boot_limit = Duration::from_secs_f64(plan.boot_within);
    let mut waiting: BTreeSet<u32> = fleet.ports.keys().copied().collect();
    let mut up = Vec::new();
    let until = Instant::now() + boot_limit;
    while !waiting.is_empty() {
        interrupt.check().map_err(|e| e.to_string())?;
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Event::Worker(vmid, Some(FromWorker::Hello { disks, .. }))) => {
                waiting.remove(&vmid);
                up.push(DeployedVm { vmid, disks });
            }
            Ok(Event::Worker(vmid, Some(FromWorker::Error { message })))
                if waiting.remove(&vmid) =>
            {
                fleet.retire(vmid);
                say(&FromNode::VmFailed { vmid, message });
            }
            Ok(Event::Worker(vmid, _)) if waiting.remove(&vmid) => {
                fleet.retire(vmid);
                say(&FromNode::VmFailed {
                    vmid,
                    message: "it stopped before it said hello".into(),
                });
            }
            Ok(Event::Coordinator(None | Some(ToNode::Done))) => {
                return Err("the coordinator ended the run".into());
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("lost its events".into()),
        }
        if Instant::now() > until {
            for vmid in std::mem::take(&mut waiting) {
                fleet.retire(vmid);
                say(&FromNode::VmFailed {
                    vmid,
                    message: format!("it did not boot within {:.0} s", plan.boot_within),
                });
            }
        }
    }
    Ok(up)
}

/// The VM's serial socket, once QEMU listens on it.
fn connect(vmid: u32, until: Instant, interrupt: &Interrupt) -> Result<UnixStream, String> {
    let path = Path::new(QEMU_RUN_DIR).join(format!("{vmid}.serial0"));
    loop {
        match UnixStream::connect(&path) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() > until || interrupt.signal().is_some() => {
                return Err(format!(
                    "no serial socket at {}: {}",
                    path.display(),
                    crate::error::describe(&e)
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// A thread that passes the worker's protocol lines on as events.
fn listen(vmid: u32, port: &UnixStream, tx: mpsc::Sender<Event>) -> Result<(), String> {
    let reader = port
        .try_clone()
        .map_err(|e| format!("VM {vmid}'s socket: {e}"))?;
    std::thread::spawn(move || {
        wire::pass_lines(BufReader::new(reader), |m| {
            tx.send(Event::Worker(vmid, m)).is_ok()
        });
    });
    Ok(())
}

/// Jobs down, figures up, until the coordinator is done or gone.
fn relay(
    plan: &NodePlan,
    fleet: &mut Fleet,
    rx: &mpsc::Receiver<Event>,
    interrupt: &Interrupt,
) -> Result<(), String> {
    // The workers asked for an answer, and by when.
    let mut pending: BTreeSet<u32> = BTreeSet::new();
    let mut deadline = Instant::now();
    let answer = Duration::from_secs_f64(plan.answer_within);
    loop {
        if interrupt.signal().is_some() {
            return Err("stopped by a signal".into());
        }
        let event = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(e) => Some(e),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("lost its events".into()),
        };
        let was_pending = !pending.is_empty();
        match event {
            None => {}
            Some(Event::Coordinator(None | Some(ToNode::Done))) => return Ok(()),
            Some(Event::Coordinator(Some(ToNode::Deploy(_)))) => {}
            Some(Event::Coordinator(Some(ToNode::Fill { zero }))) => {
                let bytes = plan.disks_per_vm as f64 * plan.disk_bytes as f64;
                deadline =
                    Instant::now() + answer + Duration::from_secs_f64(bytes / wire::SLOWEST_FILL);
                pending = ask(fleet, &ToWorker::Fill { zero });
            }
            Some(Event::Coordinator(Some(ToNode::Job(job)))) => {
                deadline =
                    Instant::now() + answer + Duration::from_secs_f64(job.warmup + job.seconds);
                pending = ask(fleet, &ToWorker::Job(job));
            }
            Some(Event::Worker(vmid, message)) => {
                if !fleet.ports.contains_key(&vmid) {
                    continue;
                }
                let (told, answered) = passed_on(vmid, message);
                if matches!(told, FromNode::VmFailed { .. }) {
                    fleet.retire(vmid);
                }
                say(&told);
                if answered {
                    pending.remove(&vmid);
                }
            }
        }
        if !pending.is_empty() && Instant::now() > deadline {
            for vmid in std::mem::take(&mut pending) {
                fleet.retire(vmid);
                say(&FromNode::VmFailed {
                    vmid,
                    message: format!(
                        "it stopped answering: no answer {:.0} s after the job's end",
                        plan.answer_within
                    ),
                });
            }
        }
        if was_pending && pending.is_empty() {
            say(&FromNode::JobDone);
        }
    }
}

/// What a worker said, as the node tells it to the coordinator, and
/// whether it answers what the worker was asked (its result, the fill's
/// end, or its failure).
fn passed_on(vmid: u32, message: Option<FromWorker>) -> (FromNode, bool) {
    let failed = |why: String| FromNode::VmFailed { vmid, message: why };
    match message {
        Some(FromWorker::Filled { bytes, seconds }) => (
            FromNode::Filled {
                vmid,
                bytes,
                seconds,
            },
            true,
        ),
        Some(FromWorker::Started { at_ns }) => (
            FromNode::Started {
                vmid,
                at_ns: at_ns.unwrap_or_else(super::worker::now_ns),
            },
            false,
        ),
        Some(FromWorker::Second { n, ops }) => (FromNode::Second { vmid, n, ops }, false),
        Some(FromWorker::Result(result)) => (
            FromNode::Result {
                vmid,
                result: Box::new(result),
            },
            true,
        ),
        Some(FromWorker::Error { message }) => (failed(message), true),
        Some(FromWorker::Hello { .. }) => {
            (failed("it started again (the VM rebooted)".into()), true)
        }
        None => (
            failed("its serial port closed (the VM stopped)".into()),
            true,
        ),
    }
}

/// Sends `message` to every worker still taking part; those it reached.
fn ask(fleet: &mut Fleet, message: &ToWorker) -> BTreeSet<u32> {
    let vmids: Vec<u32> = fleet.ports.keys().copied().collect();
    let mut asked = BTreeSet::new();
    for vmid in vmids {
        if fleet.tell(vmid, message) {
            asked.insert(vmid);
        } else {
            fleet.retire(vmid);
            say(&FromNode::VmFailed {
                vmid,
                message: "its serial port closed (the VM stopped)".into(),
            });
        }
    }
    if asked.is_empty() {
        say(&FromNode::JobDone);
    }
    asked
}
