//! What stops `guest` before it measures, in its own words: each error
//! names the VM and what to do; `run.rs` gives each its exit status.

use std::path::PathBuf;

/// Why a VM could not be measured. [`super::run::exit_of`] gives each its exit
/// status: what was asked cannot be measured here (2), or the VM or its
/// agent did not let it be (1).
#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    #[error("cannot read {}: {}", path.display(), crate::error::describe(source))]
    ConfigUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("VM {vmid} is on node {node}, not this one: run `pveprobe guest {vmid}` on {node}")]
    OnOtherNode { vmid: u32, node: String },
    #[error(
        "there is no VM {vmid}: {} does not exist (a container's config is in lxc/, which guest does not measure)",
        path.display()
    )]
    NoVm { vmid: u32, path: PathBuf },
    #[error("VM {vmid} is locked ({lock}): measure it when the {lock} is over")]
    Locked { vmid: u32, lock: String },
    #[error("VM {vmid} has no disk {key}; its disks: {}", if disks.is_empty() { "none".to_string() } else { disks.join(", ") })]
    NoSuchDisk {
        vmid: u32,
        key: String,
        disks: Vec<String>,
    },
    #[error("VM {vmid} has no disk on a PVE storage (a passed-through disk: name it with --disk)")]
    NoDiskOnStorage { vmid: u32 },
    #[error(
        "VM {vmid} has no guest agent: install qemu-guest-agent in the guest, then `qm set {vmid} --agent enabled=1` and restart the VM"
    )]
    NoAgent { vmid: u32 },
    #[error(
        "cannot read the guest probe {}: {} (the pveprobe package installs it)",
        path.display(),
        crate::error::describe(source)
    )]
    NoGuestProbe {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The agent did not answer, or not as it should (the words say
    /// what to check).
    #[error("{0}")]
    Agent(String),
    #[error(
        "the guest agent of VM {vmid} has {} blocked or missing: allow them in the guest (qemu-ga's --block-rpcs, -b, or block-rpcs in /etc/qemu/qemu-ga.conf; --allow-rpcs on agents that list what they allow), restart qemu-guest-agent; nothing was copied",
        missing.join(", ")
    )]
    AgentBlocks { vmid: u32, missing: Vec<String> },
    #[error(
        "VM {vmid} runs {system} on {machine}: pveprobe's guest probe is an x86-64 Linux program; nothing was copied"
    )]
    NotLinux {
        vmid: u32,
        system: String,
        machine: String,
    },
}
