//! `pveprobe qualify DEVICE`: the options of the one command that writes
//! to a whole device.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

use crate::commands::common::measure_args;

/// Proxmox's paper runs its test for 60 s.
pub const SECONDS: f64 = 60.0;
/// The sustained write's default budget.
pub const SUSTAINED: f64 = 120.0;

pub const AFTER_HELP: &str = "\
SAFETY
  qualify is the one pveprobe command that writes to a device, and it
  destroys what the device holds. Before any write it refuses, naming what
  it found:
  - a path that is not a block device;
  - a signature on the device or any of its partitions, as libblkid's
    low-level probe finds it (wipefs --no-act): partition tables,
    filesystems, swap, LVM PV, LUKS, md RAID, zfs_member, Ceph BlueStore,
    bcache; clear a disk you are sure of with wipefs -a first;
  - a device, or a partition of it, mounted, used as swap, or held by
    device-mapper, md or bcache (sysfs holders);
  - part of an imported ZFS pool (zpool status), a PV of a volume group
    (pvs), named by a storage in /etc/pve/storage.cfg;
  - on the disk below /, /boot or the EFI partition;
  - held open, it or a partition, by any other process (every
    /proc/PID/fd, by device number, as fuser): a VM's QEMU, which opens a
    passed-through disk without O_EXCL, is named with its VM, a process
    of a container with its CT; a holder must be there in five looks
    0.2 s apart, so a scanner such as pvs, open for a moment, is not one;
  - named by any guest of the cluster: every drive of a VM and every
    mount point or device of a container in /etc/pve/nodes/*/qemu-server
    and nodes/*/lxc, snapshots and pending changes too, by a path that
    resolves to it or a partition (/dev/disk/by-id, by-path, by-uuid,
    by-partuuid, /dev/sdX);
  - held open exclusively by another program (EBUSY).
  A check that cannot run (wipefs missing, zpool failing, a process whose
  open files cannot be read, a guest config that cannot be read) refuses
  too: what was not seen is not known to be free.
  It then holds the device open O_EXCL for the whole run, so the kernel
  refuses mounts and other exclusive openers meanwhile, and asks for the
  disk's identity: --destroy-data-on SERIAL (or its WWN; NAME:SIZE in bytes
  for a device with neither, e.g. loop7:4294967296, and for a partition).
  On a terminal without it, it shows the disk and what it checked and asks
  for that identity; without a terminal it refuses (exit 2). --dry-run runs
  every check, prints the plan and its time, and writes nothing.
  Afterwards it discards the whole device (BLKDISCARD) on a non-rotational
  disk that takes discards, unless --no-discard, and says what it wrote
  where. Ctrl-C, SIGTERM and SIGHUP stop the writes at once, discard as
  above, and exit 128+n.

THE TESTS
  Each runs O_DIRECT on the device for --seconds:
  DISK SYNC WRITE 4K 1 JOB  Proxmox's Ceph benchmark paper (2018/02):
                     fio --ioengine=libaio --filename=/dev/sdX --direct=1
                     --sync=1 --rw=write --bs=4K --numjobs=1 --iodepth=1
                     --runtime=60 --time_based; the line names the paper's
                     rows and the flushes' bands it sits between.
  ... 5 JOBS, 10 JOBS the same, 5 and 10 jobs (the community's journal test)
  DISK RANDOM WRITE/READ 4K QD1, QD32, DISK SEQ READ/WRITE 1M QD8
  DISK SUSTAINED WRITE 1 MiB sequential writes for --sustained seconds,
                     per second, to find where a cache runs out (the cliff)
  Then a verdict per use (Ceph OSD WAL/DB, ZFS SLOG/special, ZFS data,
  VM disks on LVM-thin), each with its rule and figure (README: qualify).

EXAMPLES
  pveprobe qualify --dry-run /dev/sdb
  pveprobe qualify --destroy-data-on S3F3NX0K123456 /dev/sdb
  pveprobe qualify --destroy-data-on S3F3NX0K123456 --output-format csv \\
      --output disks.csv --append /dev/sdb";

#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_args(worded(&[
    ("output_format", "Output format: text, json, json-pretty or csv (a row per disk)"),
    ("append", "With csv and --output: add a row to FILE (the header only if FILE is empty); a spreadsheet of candidate disks, one run per disk"),
    ("plot", "Also draw the sustained write's seconds as an SVG picture in FILE"),
])))]
pub struct QualifyArgs {
    /// The whole disk or partition to test: /dev/sdb, /dev/disk/by-id/...
    /// (everything on it is destroyed)
    #[arg(value_name = "DEVICE")]
    pub device: PathBuf,

    /// The device's serial number or WWN (NAME:SIZE for a device with
    /// neither, or a partition): confirms which disk's data is destroyed
    #[arg(long, value_name = "SERIAL")]
    pub destroy_data_on: Option<String>,

    /// Run every check, print the plan and its time; write nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Seconds of each test (the paper's: 60)
    #[arg(long, value_name = "SECS", default_value_t = SECONDS, value_parser = measure_args::parse_seconds)]
    pub seconds: f64,

    /// Seconds of the sustained write that finds a cache's cliff (0: none)
    #[arg(long, value_name = "SECS", default_value_t = SUSTAINED, value_parser = parse_budget)]
    pub sustained: f64,

    /// Do not discard the device afterwards
    #[arg(long)]
    pub no_discard: bool,

    #[command(flatten)]
    pub out: OutputArgs,

    /// Read /sys and /run/udev below DIR instead of / (tests)
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,

    /// Read storage.cfg from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", hide = true, default_value = crate::pvestorage::ETC_PVE)]
    pub pve_config: PathBuf,
}

fn parse_budget(text: &str) -> Result<f64, pveprobe_parse::units::UnitError> {
    if text.trim() == "0" {
        return Ok(0.0);
    }
    measure_args::parse_seconds(text)
}
