//! `load --vms`: the workload in existing VMs, through their guest
//! agents, as `guest` does: a private directory made in each guest
//! (`mktemp -d` under `--guest-dir`), the static probe copied in, a file
//! per "disk" there, and each step run by the agent (`guest-exec` of
//! `pveprobe load-guest`), its lines read when it ends. On the node, a
//! thread per VM ([`spawn`]) takes the same messages a worker VM takes on
//! its serial port and answers the same way, so the node's agent relays
//! both alike. The directory is removed on every way out; no VM is made,
//! stopped or destroyed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use super::wire::{self, FromWorker, NodePlan, ToWorker, WorkerDisk, WorkerJob};
use super::worker;
use crate::qga::Agent;
use crate::qga::inguest::{self, InGuest};
use crate::sys::interrupt::Interrupt;

/// Where PVE puts a VM's guest agent socket.
const QGA_DIR: &str = "/var/run/qemu-server";
/// Each agent command's time limit.
const AGENT_LIMIT: Duration = Duration::from_secs(30);

/// What `load-guest` does in the guest.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestStep {
    /// Makes the files (room checked first) and says hello.
    Prepare,
    Fill {
        zero: bool,
    },
    Job(WorkerJob),
}

fn say(message: &FromWorker) {
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_all(wire::line(message).as_bytes())
        .and_then(|()| out.flush());
}

/// `pveprobe load-guest`: one step in the guest's directory `dir`, on
/// `files` files of `bytes` each; its lines on stdout.
pub fn main(dir: &Path, files: usize, bytes: u64, step: &GuestStep) -> Result<(), String> {
    let disks: Vec<WorkerDisk> = (0..files)
        .map(|i| WorkerDisk {
            name: dir.join(format!("disk{i}")).display().to_string(),
            bytes,
            logical_block: 512,
        })
        .collect();
    match step {
        GuestStep::Prepare => {
            let need = files as u64 * bytes;
            let fs =
                nix::sys::statvfs::statvfs(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let avail = fs.blocks_available() as u64 * fs.fragment_size() as u64;
            if avail < need + need / 4 {
                return Err(format!(
                    "{} has {} free; the files need {} and a quarter more to spare",
                    dir.display(),
                    crate::model::human::Size(avail),
                    crate::model::human::Size(need)
                ));
            }
            for d in &disks {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&d.name)
                    .and_then(|f| f.set_len(bytes))
                    .map_err(|e| format!("{}: {}", d.name, crate::error::describe(&e)))?;
            }
            say(&FromWorker::Hello {
                version: env!("CARGO_PKG_VERSION").into(),
                disks,
            });
        }
        GuestStep::Fill { zero } => say(&worker::fill(&disks, *zero)?),
        GuestStep::Job(job) => {
            let result = worker::run_job(&disks, job, true, &mut say)?;
            say(&FromWorker::Result(result));
        }
    }
    Ok(())
}

/// A VM's thread on the node: what it is told, and how to stop its step.
pub struct GuestThread {
    pub tell: mpsc::Sender<ToWorker>,
    pub stop: Interrupt,
    /// Its end: the guest's directory and why, if it could not be removed.
    pub done: std::thread::JoinHandle<Option<(String, String)>>,
}

/// The thread that runs VM `vmid`'s part: its events go to `events` as
/// `(vmid, message)`, `None` when it ends.
pub fn spawn(
    vmid: u32,
    plan: &NodePlan,
    probe: std::sync::Arc<Vec<u8>>,
    events: impl Fn(u32, Option<FromWorker>) + Send + 'static,
) -> GuestThread {
    let (tell, told) = mpsc::channel();
    let stop = Interrupt::default();
    let plan = plan.clone();
    let flag = stop.clone();
    let done = std::thread::spawn(move || {
        let mut left = None;
        if let Err(message) = serve(vmid, &plan, &probe, &told, &flag, &events, &mut left) {
            events(vmid, Some(FromWorker::Error { message }));
        }
        events(vmid, None);
        left
    });
    GuestThread { tell, stop, done }
}

/// Where a VM's thread sends what its guest said.
struct Reply<'a, F> {
    vmid: u32,
    stop: &'a Interrupt,
    events: &'a F,
}

/// Runs the guest's probe with `args`; its lines to `to`, the guest's
/// clock stamps moved to the node's clock by `offset_ns`.
fn step<F: Fn(u32, Option<FromWorker>)>(
    guest: &mut InGuest,
    args: &[&str],
    limit: Duration,
    offset_ns: i64,
    to: &Reply<F>,
) -> Result<(), String> {
    let out = guest.run(args, limit, to.stop).map_err(|e| e.to_string())?;
    for line in String::from_utf8_lossy(&out).lines() {
        match wire::read::<FromWorker>(line) {
            Some(Ok(FromWorker::Started { at_ns })) => (to.events)(
                to.vmid,
                Some(FromWorker::Started {
                    at_ns: at_ns.map(|t| (t as i64 - offset_ns).max(0) as u64),
                }),
            ),
            Some(Ok(m)) => (to.events)(to.vmid, Some(m)),
            _ => {}
        }
    }
    Ok(())
}

fn serve(
    vmid: u32,
    plan: &NodePlan,
    probe: &[u8],
    told: &mpsc::Receiver<ToWorker>,
    stop: &Interrupt,
    events: &impl Fn(u32, Option<FromWorker>),
    left: &mut Option<(String, String)>,
) -> Result<(), String> {
    let socket = Path::new(QGA_DIR).join(format!("{vmid}.qga"));
    let mut agent = Agent::connect(&socket, AGENT_LIMIT).map_err(|e| e.to_string())?;
    let info = agent.info().map_err(|e| e.to_string())?;
    let mut needed = inguest::NEEDED.to_vec();
    needed.push("guest-get-time");
    let missing = info.missing(&needed);
    if !missing.is_empty() {
        return Err(format!(
            "its guest agent lacks or blocks {}",
            missing.join(", ")
        ));
    }
    let mut guest = InGuest::create(&mut agent, &plan.guest_dir).map_err(|e| e.to_string())?;
    let ended = (|| -> Result<(), String> {
        guest.install(probe).map_err(|e| e.to_string())?;
        let common: Vec<String> = vec![
            "load-guest".into(),
            "--dir".into(),
            guest.dir.clone(),
            "--files".into(),
            plan.disks_per_vm.to_string(),
            "--file-size".into(),
            plan.disk_bytes.to_string(),
        ];
        let answer = Duration::from_secs_f64(plan.answer_within);
        let to = Reply { vmid, stop, events };
        let go = |g: &mut InGuest, s: &[String], limit: Duration, offset: i64| {
            let args: Vec<&str> = common.iter().chain(s).map(String::as_str).collect();
            step(g, &args, limit, offset, &to)
        };
        go(&mut guest, &["--step".into(), "prepare".into()], answer, 0)?;
        while let Ok(message) = told.recv() {
            match message {
                ToWorker::Bye => break,
                ToWorker::Fill { zero } => {
                    let bytes = plan.disks_per_vm as f64 * plan.disk_bytes as f64;
                    let limit = answer + Duration::from_secs_f64(bytes / wire::SLOWEST_FILL);
                    let s = if zero { "fill-zero" } else { "fill" };
                    go(&mut guest, &["--step".into(), s.into()], limit, 0)?;
                }
                ToWorker::Job(job) => {
                    let before = worker::now_ns() as i64;
                    let guest_now = guest.agent().time().map_err(|e| e.to_string())?;
                    let after = worker::now_ns() as i64;
                    let offset = guest_now - (before + after) / 2;
                    let limit = answer + Duration::from_secs_f64(job.warmup + job.seconds);
                    let json = serde_json::to_string(&job).map_err(|e| e.to_string())?;
                    go(
                        &mut guest,
                        &["--step".into(), "job".into(), "--job".into(), json],
                        limit,
                        offset,
                    )?;
                }
            }
        }
        Ok(())
    })();
    guest.clean();
    *left = guest.left.take().map(|why| (guest.dir.clone(), why));
    ended
}
