//! `pveprobe guest VMID`: a VM's disks measured from inside through the
//! guest agent, beside the host's figures on the same storage; and the
//! hidden `guest-side` the probe copied into the guest runs.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

use crate::commands::common::measure_args;

/// Seconds of each of the profile's seven jobs.
pub const SECONDS: f64 = 10.0;
/// The file each side's jobs run over.
pub const BYTES: u64 = 1 << 30;
/// Where the package installs the static probe copied into guests.
pub const GUEST_PROBE: &str = "/usr/lib/pveprobe/pveprobe-static";

pub const AFTER_HELP: &str = "\
WHAT IT DOES
  On the node where VM VMID runs (a VM of another node: it says which, exit
  2) it reads the VM's config as PVE does (/etc/pve/qemu-server/VMID.conf,
  the current section: drives, scsihw, agent) and, for each disk on a PVE
  storage (or --disk KEY), measures one profile on both sides of QEMU, back
  to back, O_DIRECT on both:
    SEQ READ and SEQ WRITE 1M QD8, RANDOM READ and RANDOM WRITE 4K QD1 and
    QD32, SYNC WRITE 4K (fdatasync, one job), each for --seconds, over a
    file of --write-size.
  In the guest: through PVE's guest agent socket (/var/run/qemu-server/
  VMID.qga), a private directory is made with mktemp -d (mode 0700) on the
  guest filesystem of that disk (found by the drive's serial=, or
  --guest-path), the static probe is copied into it, run with guest-exec,
  and the directory is removed on every way out: success, failure, Ctrl-C
  or SIGTERM on the host (the probe in the guest is stopped first). Every
  agent command has a time limit (--agent-timeout); an agent that stops
  answering is given up on, and what was left is named.
  On the host: the same profile on the disk's storage, in its directory for
  a directory storage, on a scratch volume (pvesm alloc, freed afterwards)
  for a volume storage, as --storage ID does.
  The table gives each figure guest / host / share and p99 latencies; HINTS
  name the VM settings that cost (docs/hints.md): cache-absorbs-flushes,
  iothread-ignored, controller-emulated, throttled, discard-off-on-thin,
  aio-threads, ssd-off, volblocksize-vs-guest-block.

NEEDS
  The VM running with agent enabled (qm set VMID --agent enabled=1), the
  qemu-guest-agent package running in an x86-64 Linux guest, and its
  guest-exec and guest-file-* commands not blocked.

EXAMPLES
  pveprobe guest 100
  pveprobe guest 100 --disk scsi1 --seconds 30
  pveprobe guest 100 --output-format csv --output vm100.csv --append
  pveprobe compare before.json after.json";

#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_args(worded(&[
    ("output_format", "Output format: text, json, json-pretty or csv (a row per figure of each disk)"),
])))]
pub struct GuestArgs {
    /// The VM's ID
    pub vmid: u32,

    /// Only this disk of the VM's config: scsi0, virtio1, sata0...
    #[arg(long, value_name = "KEY")]
    pub disk: Option<String>,

    /// The directory in the guest to measure in, on the disk's filesystem
    /// (default: the mount point of the filesystem on the disk whose serial
    /// is the drive's serial=)
    #[arg(long, value_name = "DIR")]
    pub guest_path: Option<String>,

    /// Seconds of each of the seven jobs, on each side
    #[arg(long, value_name = "SECS", default_value_t = SECONDS, value_parser = measure_args::parse_seconds)]
    pub seconds: f64,

    /// Size of the file each side's jobs run over [default: 1G]
    #[arg(long, value_name = "SIZE", value_parser = measure_args::parse_size)]
    pub write_size: Option<u64>,

    /// The guest side only: nothing is measured on the host
    #[arg(long)]
    pub no_host: bool,

    /// Seconds each guest agent command may take before it is given up on
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = measure_args::parse_seconds)]
    pub agent_timeout: f64,

    #[command(flatten)]
    pub out: OutputArgs,

    /// Read qemu-server/, nodes/ and storage.cfg from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", hide = true, default_value = crate::pvestorage::ETC_PVE)]
    pub pve_config: PathBuf,

    /// The agent's socket instead of /var/run/qemu-server/VMID.qga (tests)
    #[arg(long, value_name = "PATH", hide = true)]
    pub agent_socket: Option<PathBuf>,

    /// The static probe copied into the guest
    #[arg(long, value_name = "FILE", hide = true, default_value = GUEST_PROBE)]
    pub guest_probe: PathBuf,
}

/// What the probe copied into a guest runs: the profile in DIR, as JSON.
#[derive(Debug, Args)]
pub struct GuestSideArgs {
    /// The directory to measure in (a private directory is made inside it)
    pub dir: PathBuf,

    /// Bytes of the file the jobs run over
    #[arg(long)]
    pub bytes: u64,

    /// Seconds of each job
    #[arg(long, value_parser = measure_args::parse_seconds)]
    pub seconds: f64,
}
