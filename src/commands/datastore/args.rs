//! `pveprobe datastore PATH`: its arguments; the help is its manual.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

/// Chunks written at each sync level in a default run.
pub const CHUNKS: u32 = 96;
/// ... and with `--quick`.
pub const QUICK_CHUNKS: u32 = 24;
/// PBS's own configuration directory.
pub const PBS_CONFIG: &str = "/etc/proxmox-backup";

pub const AFTER_HELP: &str = "\
WHAT IT DOES
  Replays, in a private directory it makes under PATH (removed on every way
  out: success, error, Ctrl-C, SIGTERM), the file calls Proxmox Backup
  Server makes on a datastore (proxmox-backup's pbs-datastore: chunk_store.rs,
  datastore.rs, verify.rs; proxmox-backup-qemu's restore.rs), and times each:
    CREATE      the 65,536 .chunks prefix directories a new datastore gets,
                made and synced
    INGEST      4 MiB chunks as PBS blobs (zstd level 1, its blob header and
                CRC32, data that compresses as VM images do: about 1.6 MiB
                on disk), inserted as insert_chunk does (stat, a temp file,
                write, rename) at each sync-level: none (nothing synced),
                filesystem (one syncfs at the end: PBS's default), file (an
                fsync of each chunk and of its directory); MiB/s on disk
    KNOWN       a chunk the store has already: stat and an atime touch
    RESTORE     whole chunk files read in random order, caches dropped, 1, 4,
                8 and 16 in flight (proxmox-backup-qemu before 2.0.1 read one
                at a time; since, 16 by default)
    VERIFY      chunks read in inode order by 1, 2 and 4 readers (PBS 4.1)
                feeding 4 decoders (CRC, zstd, SHA-256); says whether the disk
                or the CPU capped it
    GC MARK     utimensat (atime only, AT_SYMLINK_NOFOLLOW) of each chunk in
                an index's order, cold
    GC SWEEP    the 65,536 prefix directories read, and each chunk fstatat'ed,
                cold
    ATIME       PBS's own check: a chunk's atime must rise when touched; the
                mount's atime option is named
  Before each cold pass what the run wrote is synced (syncfs) and caches
  are dropped twice (3 into /proc/sys/vm/drop_caches, as pveperf does; the
  second takes the metadata the first leaves); without root they cannot
  be, and it says so.

PROJECTION
  When PATH is a datastore (a .chunks directory in it) or --datastore NAME
  names one in /etc/proxmox-backup/datastore.cfg, it is read, never written,
  atimes included (O_NOATIME): its chunks counted (the prefix directories
  sampled when there are many, with the error said), their bytes, its .fidx
  and .didx indexes, snapshots and references. With its gc-atime-cutoff,
  sync-level, gc-cache-capacity and verification threads, the figures become
  hours: GC phase 1 and 2, a verify of every snapshot, a restore of its
  largest VM at 1 and 16 chunks in flight, a first backup of that VM at each
  sync level.

ROOM AND MEMORY
  A default run writes about 0.5 GiB of chunks and 65,536 directories (256 MiB
  on ext4); it refuses a PATH with too little room or too few inodes, before
  writing anything. --quick writes a quarter of the chunks. Each sync level's
  chunks are made in memory before they are timed, so the clock runs on
  the calls only: a default run peaks at about 190 MiB, --quick at 70
  (1.6 MiB a chunk for --chunks N).

CLUSTER
  --cluster runs `timeout -k 5 600 pveprobe datastore --output-format json
  -- PATH` on every node through ssh (as pveprobe cluster: pmxcfs's members,
  or --nodes), one at a time (--parallel: all at once), and sets the figures
  side by side, a column a node; a value a third below the other nodes'
  median is marked !. A node that does not answer is named with why.

EXIT STATUS
  0    every figure measured, nothing left behind
  1    a figure could not be measured (the filesystem filled, a call failed)
       or something could not be removed (said under LEFT BEHIND)
  2    bad usage, PATH missing, not a directory, read only, too little room,
       a damaged index, datastore.cfg unreadable (nothing was written)
  3    --baseline: a figure is worse than the baseline by more than --tolerance
  4    --cluster: a node did not answer
  130, 143  stopped by SIGINT or SIGTERM (the private directory removed)

EXAMPLES
  pveprobe datastore /mnt/datastore/store1
  pveprobe datastore --datastore store1 --output-format json-pretty
  pveprobe datastore /mnt/nfs/pbs --quick
  pveprobe datastore /mnt/datastore/store1 --baseline before.json
  pveprobe datastore /mnt/datastore/store1 --cluster --quick
  pveprobe compare before.json after.json";

#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
#[command(mut_args(worded(&[
    ("output_format", "Output format: text, json, json-pretty, csv (a row per figure), influx or prometheus"),
    ("plot", "Also draw restore and verify against chunks in flight as an SVG picture in FILE"),
])))]
pub struct DatastoreArgs {
    /// The directory to measure: a datastore's, or where one would go
    #[arg(value_name = "PATH", required_unless_present = "datastore")]
    pub path: Option<PathBuf>,

    /// The datastore of that name in datastore.cfg: its path, and its
    /// tuning for the projection
    #[arg(long, value_name = "NAME", conflicts_with = "path")]
    pub datastore: Option<String>,

    /// A quarter of the chunks: under a minute on most disks
    #[arg(long, conflicts_with = "chunks")]
    pub quick: bool,

    /// Chunks written at each sync level (3 levels; restore, verify and GC
    /// read them all); at most 512, as each level's are made in memory
    /// first, 1.6 MiB each
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(4..=512))]
    pub chunks: Option<u32>,

    /// Compare with an earlier `datastore` JSON result; exit 3 when a
    /// figure is worse by more than --tolerance
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// How much worse than --baseline a figure may be, in percent
    #[arg(long, value_name = "PCT", default_value_t = 20.0, requires = "baseline",
          value_parser = crate::commands::common::measure_args::parse_percent)]
    pub tolerance: f64,

    /// Run on every node of the cluster over ssh, as `pveprobe cluster`
    /// reaches them (PATH on each: its datastore directory), one node at a
    /// time; the figures side by side, a column a node
    #[arg(long, conflicts_with_all = ["datastore", "baseline"], help_heading = "Nodes")]
    pub cluster: bool,

    /// With --cluster: every node at once (their datastores are their own)
    #[arg(long, requires = "cluster", help_heading = "Nodes")]
    pub parallel: bool,

    #[command(flatten)]
    pub reach: crate::commands::common::reach_args::ReachArgs,

    #[command(flatten)]
    pub out: OutputArgs,

    /// Read datastore.cfg from DIR instead of /etc/proxmox-backup (tests)
    #[arg(long, value_name = "DIR", hide = true, default_value = PBS_CONFIG)]
    pub pbs_config: PathBuf,
}
