//! `pveprobe load`: the arguments made into a plain request, the nodes
//! and VMIDs planned and the cost said (or only said, with `--dry-run`),
//! a yes asked for, then the run in a session that catches Ctrl-C and
//! SIGTERM (every worker is destroyed before the exit). And the hidden
//! parts: `load-node` (a node's agent), `load-worker` (a worker VM's
//! `/init`) and `load-initramfs` (a worker's initramfs to a new file).

use std::io::BufWriter;
use std::path::Path;

use super::args::{LoadArgs, LoadGuestArgs, LoadInitramfsArgs, LoadNodeArgs, LoadWorkerArgs};
use super::coordinator;
use super::initramfs::{self, InitramfsSpec};
use super::plan::{self, Planned};
use super::profile::{self, JobChanges};
use super::report::LoadReport;
use super::{Fill, LoadRequest};
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, LockAs, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::output::progress::Progress;
use crate::pvevm::VmSettings;
use crate::sys::interrupt::Interrupt;

/// The smallest disk a worker gets.
const SMALLEST_DISK: u64 = 16 << 20;

fn request(args: &LoadArgs) -> Result<LoadRequest, Stop> {
    if args.disk_size < SMALLEST_DISK {
        return Err(Stop::bad_input(
            "--disk-size: at least 16M; nothing was made",
        ));
    }
    let changes = JobChanges {
        block: args.bs.map(|b| b as usize),
        read_pct: args.rwmix,
        random_pct: args.random_share,
        workers: args.workers.map(|w| w as usize),
        iodepth: args.iodepth.map(|d| d as usize),
    };
    if let Some(b) = changes.block
        && (b < 512 || !b.is_multiple_of(512) || b as u64 > args.disk_size)
    {
        return Err(Stop::bad_input(
            "--bs: a multiple of 512 bytes, at most the disk's size; nothing was made",
        ));
    }
    let phases = profile::phases(
        args.profile,
        &changes,
        args.disks_per_vm as usize,
        args.warmup,
        args.seconds,
    );
    let existing = if args.vms.is_empty() {
        None
    } else {
        Some(existing_by_node(&args.pve_config, &args.vms)?)
    };
    Ok(LoadRequest {
        progress: crate::commands::common::requests::progress(&args.out),
        storage: args.storage.clone().unwrap_or_default(),
        existing,
        guest_dir: args.guest_dir.clone(),
        reach: requests::reach(&args.reach),
        vms_per_node: args.vms_per_node as usize,
        disks_per_vm: args.disks_per_vm as usize,
        disk_bytes: args.disk_size,
        profile: args.profile,
        phases,
        fill: match args.fill.as_str() {
            "zero" => Fill::Zero,
            "skip" => Fill::Skip,
            _ => Fill::Random,
        },
        kernel: args.kernel.clone(),
        release: args.kernel_release.clone(),
        modules: args.modules.clone(),
        probe: args.worker_probe.clone(),
        with: args.worker_files.clone(),
        settings: VmSettings {
            scsihw: args.scsihw.clone(),
            iothread: !args.no_iothread,
            cache: args.cache.clone(),
            aio: args.aio.clone(),
            memory_mib: args.memory,
            cores: args.cores,
        },
        target: args.latency_target,
        step_seconds: args.step_seconds,
        boot_within: args.boot_timeout,
        answer_within: args.answer_timeout,
        timestamp: jiff::Timestamp::now().to_string(),
    })
}

/// The VMs of `--vms` by the node that runs each (pmxcfs's .vmlist).
fn existing_by_node(pve: &Path, vms: &[u32]) -> Result<Vec<(String, Vec<u32>)>, Stop> {
    let file = pve.join(".vmlist");
    let text = crate::sys::host::read_capped(&file, pveprobe_parse::vmlist::MAX_BYTES as u64 + 1)
        .map_err(|e| {
        Stop::bad_input(format!(
            "--vms: cannot read {}: {}; nothing was made",
            file.display(),
            crate::error::describe(&e)
        ))
    })?;
    let list = pveprobe_parse::vmlist::parse(&text)
        .map_err(|e| Stop::bad_input(format!("{}: {e}; nothing was made", file.display())))?;
    let mut by_node: Vec<(String, Vec<u32>)> = Vec::new();
    for &vmid in vms {
        let guest = list
            .guests
            .iter()
            .find(|g| g.vmid == vmid && g.kind == "qemu")
            .ok_or_else(|| {
                Stop::bad_input(format!(
                    "--vms: {vmid} is no VM of this cluster ({}); nothing was made",
                    file.display()
                ))
            })?;
        match by_node.iter_mut().find(|(n, _)| *n == guest.node) {
            Some((_, ids)) if !ids.contains(&vmid) => ids.push(vmid),
            Some(_) => {}
            None => by_node.push((guest.node.clone(), vec![vmid])),
        }
    }
    Ok(by_node)
}

/// The nodes to run on and their workers' VMIDs.
fn plan(req: &LoadRequest) -> Result<Vec<Planned>, Stop> {
    let (members, from) = crate::nodes::load_nodes(&req.reach)
        .map_err(|e| Stop::bad_input(format!("{e}; nothing was made")))?;
    let here = members
        .local
        .clone()
        .unwrap_or_else(crate::pvestorage::node_name);
    // Each node used with its workers' VMIDs: the existing VMs' nodes, or
    // every node with new VMIDs.
    let used: Vec<(crate::nodes::members::Node, Vec<u32>)> = match &req.existing {
        Some(existing) => existing
            .iter()
            .map(|(name, vmids)| {
                let node = members.nodes.iter().find(|n| &n.name == name).cloned();
                node.map(|n| (n, vmids.clone())).ok_or_else(|| {
                    Stop::bad_input(format!(
                        "--vms: VM {} runs on {name}, which is not in {from}; nothing was made",
                        vmids[0]
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
        None => {
            if members.nodes.is_empty() {
                return Err(Stop::bad_input(format!(
                    "{from}: no node; nothing was made"
                )));
            }
            let vmids =
                plan::allocate_vmids(members.nodes.len() * req.vms_per_node).map_err(|e| {
                    Stop::not_measured(format!("no VMIDs for the workers: {e}; nothing was made"))
                })?;
            members
                .nodes
                .into_iter()
                .zip(vmids.chunks(req.vms_per_node).map(<[u32]>::to_vec))
                .collect()
        }
    };
    let offline: Vec<&str> = used
        .iter()
        .filter(|(n, _)| !n.contacted())
        .map(|(n, _)| n.name.as_str())
        .collect();
    if !offline.is_empty() {
        return Err(Stop::bad_input(format!(
            "{from}: {} offline; a run needs every node it uses (--nodes names fewer); nothing was made",
            offline.join(", ")
        )));
    }
    Ok(used
        .into_iter()
        .map(|(node, vmids)| Planned {
            local: node.name == here,
            node,
            vmids,
        })
        .collect())
}

/// `pveprobe load --storage ID`, its `--baseline` read with `readers`.
pub fn load(args: &LoadArgs, readers: &crate::results::Readers) -> Ended {
    let req = request(args)?;
    let baseline =
        super::baseline::read(readers, &args.baseline, &req.storage).map_err(Stop::bad_input)?;
    if !args.baseline.is_empty() && baseline.is_empty() {
        return Err(Stop::bad_input(format!(
            "--baseline: no result of storage {} in {}; nothing was made",
            req.storage,
            args.baseline
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let planned = plan(&req)?;
    let said = plan::describe(&req, &planned);
    if args.dry_run {
        print!("{said}");
        return Ok(Exit::Ok);
    }
    if args.yes {
        req.progress.block(&said);
    } else {
        crate::commands::common::confirm::confirm(
            &req.progress,
            &said,
            "pveprobe load makes worker VMs and loads the cluster's storage, and its guests slow down meanwhile; without a terminal to ask on, --yes says go (--dry-run prints the plan); nothing was made",
            "not confirmed; nothing was made",
        )?;
    }
    let session = Session::start::<LoadReport>(Frame {
        signals: true,
        lock: Some(LockAs {
            me: crate::sys::lock::describe_me(Path::new(&match &req.existing {
                Some(_) => "VMs' disks".to_string(),
                None => format!("storage {}", req.storage),
            })),
            busy: crate::sys::lock::Busy::Wait,
            nothing_done: "nothing was made",
        }),
        ..crate::commands::common::requests::frame(&args.out, "pveprobe load")
    })?;
    let interrupt = session.interrupt();
    if let Some(sig) = interrupt.signal() {
        return Err(Stop::new(
            Exit::Signal(sig),
            "interrupted; nothing was made",
        ));
    }
    let Ok(mut report) = Work::run(&coordinator::LoadRun { req: &req, planned }, interrupt);
    req.progress.done();
    report.one_at_a_time = super::baseline::compare(&report, &baseline);
    for l in &report.left_behind {
        req.progress.say(&format!(
            "left behind: VM {} on {} ({}); remove it with: {}",
            l.vmid, l.node, l.why, l.command
        ));
    }
    let exit = exit_status(&report);
    session.finish(&report, exit)
}

/// `pveprobe load-node`: a node's agent; its plan comes on stdin.
pub fn load_node(_args: &LoadNodeArgs) -> Ended {
    let interrupt = Interrupt::install()
        .map_err(|e| Stop::not_measured(format!("cannot install signal handlers: {e}")))?;
    super::node::serve(&interrupt).map_err(Stop::bad_input)?;
    Ok(Exit::Ok)
}

/// `pveprobe load-worker`: returns only when this is no worker VM.
pub fn load_worker(args: &LoadWorkerArgs) -> Ended {
    super::worker::main(&args.port).map_err(Stop::bad_input)?;
    Ok(Exit::Ok)
}

/// `pveprobe load-initramfs --out FILE`.
pub fn load_initramfs(args: &LoadInitramfsArgs) -> Ended {
    let release = match &args.release {
        Some(r) => r.clone(),
        None => nix::sys::utsname::uname()
            .map_err(|e| Stop::not_measured(format!("uname: {e}")))?
            .release()
            .to_string_lossy()
            .into_owned(),
    };
    let spec = InitramfsSpec {
        probe: args.probe.clone(),
        modules: args.modules.join(&release),
        extra: args.with.clone(),
    };
    // A new file, never one that is there (nor a link to one).
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.out)
        .map_err(|e| {
            Stop::bad_input(format!(
                "cannot create {}: {}",
                args.out.display(),
                crate::error::describe(&e)
            ))
        })?;
    let built = initramfs::build(&spec, &mut BufWriter::new(file)).map_err(|e| {
        let _ = std::fs::remove_file(&args.out);
        Stop::not_measured(e)
    })?;
    Progress::default().say(&format!(
        "{}: {} bytes; modules of {release}: {}{}",
        args.out.display(),
        built.bytes,
        built.modules.len(),
        if built.built_in.is_empty() {
            String::new()
        } else {
            format!(" ({} built in)", built.built_in.join(", "))
        }
    ));
    Ok(Exit::Ok)
}

/// `pveprobe load-guest`: one step in an existing VM; its lines on stdout.
pub fn load_guest(args: &LoadGuestArgs) -> Ended {
    use super::guest::GuestStep;
    let step = match args.step.as_str() {
        "prepare" => GuestStep::Prepare,
        "fill" => GuestStep::Fill { zero: false },
        "fill-zero" => GuestStep::Fill { zero: true },
        _ => GuestStep::Job(
            serde_json::from_str(args.job.as_deref().unwrap_or_default())
                .map_err(|e| Stop::bad_input(format!("--job: {e}")))?,
        ),
    };
    super::guest::main(&args.dir, args.files as usize, args.file_size, &step)
        .map_err(Stop::not_measured)?;
    Ok(Exit::Ok)
}

/// 0 when every worker answered every phase and nothing was left; 1
/// when a worker failed or a VM could not be removed; the signal that
/// stopped the run.
pub fn exit_status(report: &LoadReport) -> Exit {
    let all = report.vms.iter().all(|v| v.failed.is_none())
        && report
            .phases
            .iter()
            .all(|p| p.workers.iter().all(|w| w.error.is_none()));
    match report.interrupted_by {
        Some(sig) => Exit::Signal(sig),
        None if all && report.left_behind.is_empty() && report.problems.is_empty() => Exit::Ok,
        None => Exit::NotMeasured,
    }
}
