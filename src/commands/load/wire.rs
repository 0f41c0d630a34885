//! What `load`'s parts say to each other: a worker VM and its node over
//! the VM's serial port, a node's agent (`load-node`) and the run's
//! coordinator over the agent's stdin and stdout (through ssh for other
//! nodes). One JSON object a line, each behind [`PREFIX`], so the
//! kernel's or firmware's own lines on the port, or a login banner, are
//! told apart and skipped.

use serde::{Deserialize, Serialize};

use crate::model::latency::Latency;

/// What starts every line of the protocol, both ways.
pub const PREFIX: &str = "pveprobe-worker ";

/// The most a protocol line holds, in bytes (a line longer than this is
/// no line of ours).
pub const MAX_LINE: usize = 64 << 10;

/// The slowest fill a worker's disks are given time for, in bytes a second.
pub const SLOWEST_FILL: f64 = 5.0 * 1024.0 * 1024.0;

/// What a worker says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum FromWorker {
    /// Up, with its disks: the first line, once.
    Hello {
        version: String,
        disks: Vec<WorkerDisk>,
    },
    /// Every disk written once ([`ToWorker::Fill`]).
    Filled { bytes: u64, seconds: f64 },
    /// A job's measured window begins (its warm-up is over): the node
    /// stamps this line's arrival, and the workers' stamps give their
    /// skew. A probe in an existing VM stamps it itself (`at_ns`, the
    /// guest's clock), as its lines come only when it ends.
    Started {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_ns: Option<u64>,
    },
    /// Operations completed in second `n` (from 0) of the window.
    Second { n: u32, ops: u64 },
    /// A job's result.
    Result(WorkerResult),
    /// Why a job or the worker failed.
    Error { message: String },
}

/// What the node says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToWorker {
    /// Write every disk once from start to end, 1 MiB at a time: random
    /// data, or zeros with `zero`.
    Fill {
        zero: bool,
    },
    Job(WorkerJob),
    /// Power off.
    Bye,
}

/// One raw virtual disk of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerDisk {
    /// The kernel's name: `sda`.
    pub name: String,
    pub bytes: u64,
    pub logical_block: u64,
}

/// A workload on all of a worker's disks at once: `workers` jobs, dealt
/// to the disks in turn, each with `iodepth` operations in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerJob {
    pub block: usize,
    /// Reads among the operations, in percent.
    pub read_pct: u32,
    /// Random offsets among the operations, in percent.
    pub random_pct: u32,
    pub workers: usize,
    pub iodepth: usize,
    /// Writes opened O_DSYNC: each is on stable storage before the next
    /// (a database's commits).
    #[serde(default)]
    pub sync: bool,
    /// Run first and not counted.
    #[serde(default)]
    pub warmup: f64,
    pub seconds: f64,
}

/// What a job did, over all its workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerResult {
    pub workers: usize,
    pub reads: u64,
    pub writes: u64,
    /// The longest worker's time, in seconds.
    pub seconds: f64,
    /// Every read's latency, as a histogram (merged, never averaged).
    pub read_latency: Latency,
    pub write_latency: Latency,
    /// The I/O engine the workers ran on (`io_uring`, `psync`).
    pub engine: String,
}

impl WorkerResult {
    /// Operations a second, reads and writes together.
    pub fn iops(&self) -> f64 {
        if self.seconds > 0.0 {
            (self.reads + self.writes) as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// What the coordinator tells a node's agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToNode {
    /// Make and boot the node's workers: the first message, once.
    Deploy(Box<NodePlan>),
    /// Every worker fills its disks.
    Fill { zero: bool },
    /// Every worker runs this job, at once.
    Job(WorkerJob),
    /// Power the workers off and destroy them; the agent then exits.
    Done,
}

/// One node's share of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePlan {
    /// The node's name, as the cluster knows it.
    pub node: String,
    pub storage: String,
    pub vmids: Vec<u32>,
    pub disks_per_vm: usize,
    pub disk_bytes: u64,
    /// The kernel the workers boot (the node's own,
    /// `/boot/vmlinuz-$(uname -r)`, when `None`); its release's modules go
    /// in the initramfs (from the file name `vmlinuz-RELEASE` unless `release`).
    pub kernel: Option<std::path::PathBuf>,
    pub release: Option<String>,
    pub modules: std::path::PathBuf,
    /// The static pveprobe that becomes the workers' `/init`.
    pub probe: std::path::PathBuf,
    /// Further files in the initramfs (a dynamic probe's libraries: tests).
    #[serde(default)]
    pub with: Vec<std::path::PathBuf>,
    pub settings: crate::pvevm::VmSettings,
    /// `vmids` are existing VMs, measured through their guest agents in a
    /// private directory made under `guest_dir` in each (`--vms`); none is
    /// made or destroyed.
    #[serde(default)]
    pub existing: bool,
    #[serde(default)]
    pub guest_dir: String,
    /// How long a worker may take to boot and say hello, in seconds.
    pub boot_within: f64,
    /// How long past a job's end a worker may take to answer, in seconds.
    pub answer_within: f64,
}

/// A worker as its node made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeployedVm {
    pub vmid: u32,
    pub disks: Vec<WorkerDisk>,
}

/// A VMID the run made and could not remove, or an existing VM whose
/// directory was left, with why and what removes it (`qm destroy` when
/// `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftVm {
    pub vmid: u32,
    pub why: String,
    #[serde(default)]
    pub command: Option<String>,
}

/// What a node's agent tells the coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum FromNode {
    /// Its workers are up, each with its disks (those that failed are
    /// named by [`FromNode::VmFailed`] before).
    Deployed { vms: Vec<DeployedVm> },
    /// A worker filled its disks.
    Filled { vmid: u32, bytes: u64, seconds: f64 },
    /// A worker's window began, stamped by the node's clock when its line
    /// arrived (nanoseconds since the epoch).
    Started { vmid: u32, at_ns: u64 },
    /// A worker's operations in second `n` of the window.
    Second { vmid: u32, n: u32, ops: u64 },
    /// A worker's result.
    Result {
        vmid: u32,
        result: Box<WorkerResult>,
    },
    /// A worker failed (to boot, to fill, a job) or stopped answering:
    /// it takes no further part.
    VmFailed { vmid: u32, message: String },
    /// Every worker answered the job, or was given up on.
    JobDone,
    /// The workers are destroyed; those that could not be are in `left`.
    Removed {
        removed: Vec<u32>,
        left: Vec<LeftVm>,
    },
    /// The agent cannot go on (it cleans up and says `Removed` next).
    Failed { message: String },
}

/// A message as one protocol line, newline included.
pub fn line<T: Serialize>(message: &T) -> String {
    let json = serde_json::to_string(message).expect("the protocol's types serialise");
    format!("{PREFIX}{json}\n")
}

/// The message a line holds, if it is a protocol line (`None` for the
/// kernel's and others' lines); `Err` for a protocol line that is no
/// message of type `T`.
pub fn read<T: for<'de> Deserialize<'de>>(line: &str) -> Option<Result<T, String>> {
    let json = line.trim_end_matches(['\r', '\n']).strip_prefix(PREFIX)?;
    Some(serde_json::from_str(json).map_err(|e| format!("{e}: {}", crate::model::printable(json))))
}

/// Reads `input`'s protocol lines of type `T` (others skipped, each line
/// at most [`MAX_LINE`]) into `pass` as they come, then `None` once it
/// ends; stops early when `pass` says false.
pub fn pass_lines<T: for<'de> Deserialize<'de>>(
    mut input: impl std::io::BufRead,
    mut pass: impl FnMut(Option<T>) -> bool,
) {
    let mut line = String::new();
    loop {
        line.clear();
        match std::io::BufRead::read_line(
            &mut std::io::Read::take(&mut input, MAX_LINE as u64),
            &mut line,
        ) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if let Some(Ok(m)) = read::<T>(&line)
                    && !pass(Some(m))
                {
                    return;
                }
            }
        }
    }
    pass(None);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_back_and_other_lines_are_skipped() {
        let job = ToWorker::Job(WorkerJob {
            block: 4096,
            read_pct: 70,
            random_pct: 80,
            workers: 8,
            iodepth: 16,
            sync: false,
            warmup: 1.0,
            seconds: 2.0,
        });
        let text = line(&job);
        assert!(
            text.starts_with("pveprobe-worker {\"type\":\"job\""),
            "{text}"
        );
        assert_eq!(read::<ToWorker>(&text), Some(Ok(job)));
        assert_eq!(
            read::<ToWorker>("[    0.000000] Linux version 6.1\r\n"),
            None
        );
        assert!(matches!(
            read::<ToWorker>("pveprobe-worker {\"type\":\"nonsense\"}"),
            Some(Err(_))
        ));
        let r = WorkerResult {
            workers: 2,
            reads: 700,
            writes: 300,
            seconds: 2.0,
            read_latency: Latency::default(),
            write_latency: Latency::default(),
            engine: "io_uring".into(),
        };
        assert_eq!(r.iops(), 500.0);
    }
}
