//! `pveprobe load --storage ID`: the cluster's storage under many guests
//! at once, from worker VMs pveprobe deploys and removes itself (HCIBench
//! for Proxmox VE). The parts, from the top:
//!
//! - [`coordinator`]: the run as a whole on the node it was started on:
//!   the plan and its cost, an agent on every node, the phases sent to
//!   all at once, the figures gathered, the workers removed on every way
//!   out;
//! - [`node`]: a node's agent (`load-node`): makes and boots the node's
//!   workers with `qm`, talks to each over its serial socket, destroys
//!   them with their disks;
//! - [`worker`]: a worker VM's `/init` (`load-worker`): pveprobe as PID 1
//!   on the node's kernel and an [`initramfs`] pveprobe builds, measuring
//!   its raw virtual disks;
//! - [`guest`]: `--vms`, the same workload in existing VMs through their
//!   guest agents, in a private directory in each (`load-guest`);
//! - [`wire`]: what the three say to each other; [`profile`]: the
//!   workloads; [`report`] and [`render`]: the figures and their forms.

pub mod args;
pub mod run;

pub mod baseline;
pub mod coordinator;
pub mod figures;
pub mod guest;
pub mod initramfs;
pub mod node;
pub mod plan;
pub mod profile;
pub mod render;
pub mod report;
#[cfg(test)]
mod sample;
pub mod target;
pub mod wire;
pub mod worker;

use std::path::PathBuf;

use crate::nodes::Reach;
use crate::pvevm::VmSettings;
use profile::{LoadProfile, Phase};

/// How the workers' disks are written before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    Random,
    Zero,
    Skip,
}

impl Fill {
    pub fn name(self) -> &'static str {
        match self {
            Fill::Random => "random",
            Fill::Zero => "zero",
            Fill::Skip => "skip",
        }
    }
}

/// A `load` run as plain data.
#[derive(Debug, Clone)]
pub struct LoadRequest {
    /// Each node's and phase's step, said as it starts.
    pub progress: crate::output::progress::Progress,
    pub storage: String,
    pub reach: Reach,
    pub vms_per_node: usize,
    pub disks_per_vm: usize,
    pub disk_bytes: u64,
    pub profile: LoadProfile,
    pub phases: Vec<Phase>,
    pub fill: Fill,
    /// `None`: each node's own kernel.
    pub kernel: Option<PathBuf>,
    pub release: Option<String>,
    pub modules: PathBuf,
    /// The static pveprobe, on every node, that becomes the workers' `/init`.
    pub probe: PathBuf,
    pub with: Vec<PathBuf>,
    pub settings: VmSettings,
    /// Seconds a worker may take to boot.
    pub boot_within: f64,
    /// Seconds past a job's end a worker may take to answer.
    pub answer_within: f64,
    /// `--vms`: the existing VMs measured, by node; none is made.
    pub existing: Option<Vec<(String, Vec<u32>)>>,
    /// Where in each existing VM the run's directory is made.
    pub guest_dir: String,
    /// `--latency-target`: the first phase's depth raised step by step.
    pub target: Option<target::LatencyTarget>,
    /// Each step's measured window, in seconds.
    pub step_seconds: f64,
    /// When the run started (RFC 3339).
    pub timestamp: String,
}
