//! `pveprobe load`'s arguments, and those of its hidden parts:
//! `load-node` (a node's agent), `load-worker` (a worker VM's `/init`)
//! and `load-initramfs` (what a worker boots).

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

use super::profile::LoadProfile;
use super::target::LatencyTarget;
use crate::commands::common::measure_args::{self, parse_size};
use crate::commands::common::reach_args::ReachArgs;
use crate::model::choice::Choice;
use pveprobe_parse::units::{self, UnitError};

pub const AFTER_HELP: &str = "\
WHAT IT DOES
  The cluster's storage under many guests at once, as HCIBench measures a
  vSAN cluster, from worker VMs pveprobe makes and removes itself:
  1. On every node (or --nodes), --vms-per-node worker VMs are made with PVE's
     own qm (VMIDs from pvesh get /cluster/nextid, named pveprobe-load-VMID,
     tagged pveprobe, onboot 0), each with --disks-per-vm new disks of
     --disk-size on --storage: scsihw virtio-scsi-single, iothread=1,
     cache=none, aio as PVE's default (--scsihw, --no-iothread, --cache, --aio
     change them, so one setting can be compared with another).
  2. A worker boots no OS: the node's own kernel (/boot/vmlinuz-$(uname -r),
     or --kernel) and an initramfs pveprobe builds on the node (the virtio
     modules from /lib/modules, the static pveprobe as /init). It measures
     its raw virtual disks, never a filesystem, and talks to the node over
     its serial socket (serial0: socket): no agent, no network, no guest OS.
  3. Each worker fills its disks once (random data; --fill zero, or skip),
     warms up (--warmup, not counted), then every worker on every node
     starts the measured window (--seconds) at once; each worker's start is
     stamped by its node's clock and the spread is reported as the skew.
  4. With --latency-target p99=5ms (HCIBench's easy run): the outstanding I/O
     per worker is raised step by step (1, 2, 4... 256), a --step-seconds
     window each, until the percentile of all the cluster's I/Os crosses the
     target; the highest total IOPS within it is the answer, every step a
     point of the curve.
  5. The figures: the cluster's total IOPS and MiB/s, latency percentiles of
     all its I/Os merged from every worker's histogram, the same per node
     and per VM, each second's total, and fairness (the slowest VM's and
     node's share of the median; ! marks one a third below its peers).
     --baseline sets each phase beside the sum of the same storage's -x
     figure of its kind measured one node at a time; compare ranks two
     runs phase by phase; --plot draws each node's IOPS each second (and a
     latency target's curve); influx and prometheus write them as metrics.
  PROFILES (--profile)
    hci-read    4K, 100% read, 80% random, 8 workers x 16 outstanding per VM
    hci-70-30   the same at 70% read / 30% write
    seq         1M sequential reads, then 1M sequential writes
    sync        4K synced writes (O_DSYNC), one job per disk at depth 1
    custom      your own: --bs --rwmix --random-share --workers --iodepth
                (these also change any other profile)

EXISTING VMS (--vms)
  The same workload in VMs of your own, as `pveprobe guest` reaches them:
  through each VM's QEMU guest agent (on the node that runs it, by .vmlist),
  a private directory under --guest-dir in the guest, the static probe
  copied in, --disks-per-vm files of --disk-size there, measured through the
  guest's filesystem (O_DIRECT). Each guest needs that room and a quarter
  more. The directory is removed on every way out; no VM is made or touched
  otherwise. Their starts are stamped by each guest's clock, set against
  the node's (guest-get-time), and the skew is reported.

COST AND SAFETY
  Said before the run; --dry-run prints the plan and does nothing. Without a
  terminal to ask on, --yes is needed. While it runs, the cluster's own
  guests on that storage slow down: run it in a quiet hour. It writes every
  worker disk once (the fill) and then as much as the storage takes for
  --warmup and --seconds. It refuses when a node's storage has less room than
  its workers' disks and a quarter more. It only ever touches the VMs and
  disks it made. On every way out (done, an error, Ctrl-C, SIGTERM, a node
  that stops answering) each node's agent stops and destroys its workers with
  their disks (qm destroy --purge); what could not be removed is named with
  the command that removes it, and the exit status says so.

EXAMPLES
  pveprobe load --storage local-lvm --dry-run
  pveprobe load --storage ceph-vm --yes
  pveprobe load --storage ceph-vm --profile hci-70-30 --vms-per-node 2 --yes
  pveprobe load --storage ceph-vm --nodes pve1,pve2 --seconds 60 --warmup 10 --yes
  pveprobe load --storage ceph-vm --profile custom --bs 16K --rwmix 50 --yes
  pveprobe load --storage ceph-vm --latency-target p99=5ms --yes   the most IOPS within 5 ms
  pveprobe load --vms 101,102,205 --disks-per-vm 2 --disk-size 4G --yes   your own VMs
  pveprobe load --storage ceph-vm --yes --output-format json --output load.json
  pveprobe compare before.json after.json          two runs, phase by phase
  pveprobe cluster -x --storage ceph-vm --output-format json --output alone.json
  pveprobe load --storage ceph-vm --yes --baseline alone.json   at once vs alone
  pveprobe load --storage ceph-vm --latency-target p99=5ms --yes --plot curve.svg";

/// `pveprobe load --storage ID`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_args(worded(&[
    ("output_format", "Output format: text, json, json-pretty, csv (a row per figure), influx or prometheus (each phase's cluster, nodes and VMs as metrics)"),
    ("plot", "Also draw each node's IOPS second by second (and a latency target's curve: IOPS against latency, a point per step) as an SVG picture in FILE"),
])))]
pub struct LoadArgs {
    /// The PVE storage the workers' disks are made on
    #[arg(long, value_name = "ID", required_unless_present = "vms")]
    pub storage: Option<String>,

    /// Instead of making workers: these existing VMs, through their guest
    /// agents, on files in a private directory in each (comma-separated)
    #[arg(
        long,
        value_name = "VMIDS",
        value_delimiter = ',',
        conflicts_with = "storage"
    )]
    pub vms: Vec<u32>,

    /// With --vms: where in each guest the run's directory is made
    #[arg(long, value_name = "DIR", default_value = "/var/tmp", requires = "vms")]
    pub guest_dir: String,

    /// Read .vmlist (which node runs each VM) from DIR instead of /etc/pve
    #[arg(long, value_name = "DIR", default_value = "/etc/pve")]
    pub pve_config: PathBuf,

    /// Worker VMs on each node
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub vms_per_node: u32,

    /// Disks of each worker VM
    #[arg(long, value_name = "K", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=30))]
    pub disks_per_vm: u32,

    /// Each disk's size (K, M, G suffixes; at least 16M)
    #[arg(long, value_name = "SIZE", default_value = "8G", value_parser = parse_size)]
    pub disk_size: u64,

    /// The workload
    #[arg(long, value_name = "PROFILE", value_parser = measure_args::parser::<LoadProfile>(), default_value = LoadProfile::HciRead.name(), help_heading = "Workload")]
    pub profile: LoadProfile,

    /// Block size (K, M suffixes)
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Workload")]
    pub bs: Option<u64>,

    /// Reads among the operations, in percent
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100), help_heading = "Workload")]
    pub rwmix: Option<u32>,

    /// Random offsets among the operations, in percent
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100), help_heading = "Workload")]
    pub random_share: Option<u32>,

    /// Workers (jobs) in each VM, dealt to its disks in turn
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256), help_heading = "Workload")]
    pub workers: Option<u32>,

    /// Operations each worker keeps in flight
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024), help_heading = "Workload")]
    pub iodepth: Option<u32>,

    /// How the disks are written before the run: random, zero or skip
    #[arg(long, value_name = "DATA", default_value = "random", value_parser = ["random", "zero", "skip"], help_heading = "Workload")]
    pub fill: String,

    /// Seconds of warm-up before each measured window (not counted)
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = seconds_from(0.0), help_heading = "Workload")]
    pub warmup: f64,

    /// Seconds of each measured window
    #[arg(long, value_name = "SECS", default_value_t = 300.0, value_parser = seconds_from(0.5), help_heading = "Workload")]
    pub seconds: f64,

    /// Find the highest total IOPS within a latency target (p99=5ms): the
    /// profile's outstanding I/O per worker raised 1, 2, 4... up to 256,
    /// a --step-seconds window each, until the percentile of all the
    /// cluster's I/Os crosses it
    #[arg(long, value_name = "TARGET", value_parser = LatencyTarget::parse, help_heading = "Workload")]
    pub latency_target: Option<LatencyTarget>,

    /// Seconds of each step's window with --latency-target
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = seconds_from(0.5), help_heading = "Workload")]
    pub step_seconds: f64,

    /// The kernel the workers boot [default: each node's /boot/vmlinuz-$(uname -r)]
    #[arg(long, value_name = "FILE", help_heading = "Worker VMs")]
    pub kernel: Option<PathBuf>,

    /// That kernel's release, whose modules go in [default: from its name]
    #[arg(long, value_name = "RELEASE", help_heading = "Worker VMs")]
    pub kernel_release: Option<String>,

    /// Where the kernels' modules are
    #[arg(
        long,
        value_name = "DIR",
        default_value = "/lib/modules",
        help_heading = "Worker VMs"
    )]
    pub modules: PathBuf,

    /// The static pveprobe that becomes each worker's /init
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/usr/lib/pveprobe/pveprobe-static",
        help_heading = "Worker VMs"
    )]
    pub worker_probe: PathBuf,

    /// A further file in the workers' initramfs, at its own path (a
    /// dynamically linked probe's libraries, for tests)
    #[arg(long = "worker-file", value_name = "FILE", hide = true)]
    pub worker_files: Vec<PathBuf>,

    /// The workers' SCSI controller (qm's scsihw)
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "virtio-scsi-single",
        help_heading = "Worker VMs"
    )]
    pub scsihw: String,

    /// Disks without an I/O thread of their own (iothread=0)
    #[arg(long, help_heading = "Worker VMs")]
    pub no_iothread: bool,

    /// The disks' cache mode (qm's cache=)
    #[arg(
        long,
        value_name = "MODE",
        default_value = "none",
        help_heading = "Worker VMs"
    )]
    pub cache: String,

    /// The disks' asynchronous I/O (qm's aio=: io_uring, native, threads) [default: PVE's]
    #[arg(long, value_name = "MODE", help_heading = "Worker VMs")]
    pub aio: Option<String>,

    /// Each worker's memory, in MiB
    #[arg(long, value_name = "MIB", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(256..), help_heading = "Worker VMs")]
    pub memory: u32,

    /// Each worker's virtual CPUs
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=128), help_heading = "Worker VMs")]
    pub cores: u32,

    /// Seconds a worker may take to boot and say hello
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = seconds_from(1.0), help_heading = "Worker VMs")]
    pub boot_timeout: f64,

    /// Seconds past a job's end a worker may take to answer before it is given up on
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = seconds_from(1.0), help_heading = "Worker VMs")]
    pub answer_timeout: f64,

    /// Print what would be made, written and run, and do nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Go on without asking (needed without a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,

    #[command(flatten)]
    pub out: OutputArgs,

    /// Set each phase beside the sum of this storage's figures measured one
    /// node at a time: JSON results of `pveprobe -x --storage ID` (one per
    /// node) or of `pveprobe cluster -x --storage ID`
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "vms")]
    pub baseline: Vec<PathBuf>,

    #[command(flatten)]
    pub reach: ReachArgs,
}

/// A number of seconds, at least `min`, at most a week.
fn seconds_from(min: f64) -> impl Fn(&str) -> Result<f64, UnitError> + Clone + Send + Sync {
    units::seconds_between(min, 7.0 * 86_400.0)
}

/// `pveprobe load-node`: a node's agent in a run; its plan comes on stdin.
#[derive(Debug, Args)]
pub struct LoadNodeArgs {}

/// `pveprobe load-worker`: a worker VM's `/init`.
#[derive(Debug, Args)]
pub struct LoadWorkerArgs {
    /// The serial port the node listens on (PVE's serial0)
    #[arg(long, value_name = "DEVICE", default_value = "/dev/ttyS0")]
    pub port: PathBuf,
}

/// `pveprobe load-initramfs --out FILE`: a worker VM's initramfs.
#[derive(Debug, Args)]
pub struct LoadInitramfsArgs {
    /// The initramfs to write (a new file)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// The kernel release whose modules go in (default: this node's, uname -r)
    #[arg(long, value_name = "RELEASE")]
    pub release: Option<String>,

    /// Where the releases' modules are
    #[arg(long, value_name = "DIR", default_value = "/lib/modules")]
    pub modules: PathBuf,

    /// The probe that becomes /init: a static pveprobe
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/usr/lib/pveprobe/pveprobe-static"
    )]
    pub probe: PathBuf,

    /// A further file, at its own path (a dynamically linked probe's
    /// libraries and loader, for tests)
    #[arg(long = "with", value_name = "FILE")]
    pub with: Vec<PathBuf>,
}

/// `pveprobe load-guest`: one step of `load --vms` in an existing VM.
#[derive(Debug, Args)]
pub struct LoadGuestArgs {
    /// The run's private directory in the guest
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Files measured, one per worker disk
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub files: u32,

    /// Each file's size in bytes
    #[arg(long, value_name = "BYTES")]
    pub file_size: u64,

    /// prepare (make the files), fill, fill-zero or job
    #[arg(long, value_name = "STEP", value_parser = ["prepare", "fill", "fill-zero", "job"])]
    pub step: String,

    /// With --step job: the job, as JSON
    #[arg(long, value_name = "JSON", required_if_eq("step", "job"))]
    pub job: Option<String>,
}
