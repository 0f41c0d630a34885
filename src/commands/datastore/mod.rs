//! `pveprobe datastore PATH`: what a Proxmox Backup Server datastore on
//! PATH's storage gives to a restore, a verify, a garbage collection and a
//! backup, by PBS's own calls replayed in a private directory
//! ([`replay`]), and, when PATH is a datastore, those figures made into
//! its hours ([`existing`] reads it, never writes; [`report`] projects).

pub mod args;
pub mod chunks;
pub mod cluster;
pub mod existing;
pub mod hints;
pub mod render;
pub mod replay;
pub mod report;
pub mod run;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::commands::common::work::Work;
use crate::error::ProbeError;
use crate::model::filesystem::FsInfo;
use crate::model::storage::Storage;
use crate::output::progress::Progress;
use crate::sys::host::Host;
use crate::sys::interrupt::Interrupt;
use pveprobe_parse::pbs::{SyncLevel, Tuning};

/// Chunks in flight a restore is measured at.
pub const RESTORE_DEPTHS: [u32; 4] = [1, 4, 8, 16];
/// Verify's reader threads measured (PBS 4.1 allows more than one).
pub const VERIFY_READERS: [u32; 3] = [1, 2, 4];
/// Verify's decoder threads: PBS's default.
pub const VERIFY_WORKERS: u32 = 4;
/// `.chunks`' prefix directories: `0000` to `ffff`.
pub const PREFIX_DIRS: u32 = 65536;

/// What a run is asked.
#[derive(Debug)]
pub struct DatastoreRequest {
    pub progress: Progress,
    pub path: PathBuf,
    /// From datastore.cfg with `--datastore`.
    pub name: Option<String>,
    pub tuning: Option<Tuning>,
    /// Chunks written at each sync level.
    pub chunks: u32,
    pub host: Host,
}

/// Why nothing was measured.
#[derive(Debug, thiserror::Error)]
pub enum DatastoreError {
    #[error("{0}")]
    BadPath(String),
    #[error("{path}: {needed} needed, {avail} free ({what}); nothing was written")]
    NoRoom {
        path: String,
        needed: String,
        avail: String,
        what: &'static str,
    },
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Probe(#[from] ProbeError),
}

/// Everything measured, as the replay returns it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Seconds the 65,536 prefix directories took to make.
    pub create_s: Option<f64>,
    pub ingest: Vec<Ingest>,
    /// The known-chunk path (stat, atime touch), chunks a second, cold.
    pub known_per_s: Option<f64>,
    pub restore: Vec<Restore>,
    pub verify: Vec<Verify>,
    /// GC phase 1: utimensat of each chunk in index order, chunks a second.
    pub mark_per_s: Option<f64>,
    /// GC phase 2: the prefix directories read, directories a second.
    pub sweep_dirs_per_s: Option<f64>,
    /// GC phase 2: each chunk fstatat'ed, chunks a second.
    pub sweep_per_s: Option<f64>,
    pub atime: Option<Atime>,
    /// Caches were dropped before each cold pass (root only).
    pub cold: bool,
    /// Chunks written, their image and their bytes on disk.
    pub chunks: u64,
    pub stored_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ingest {
    pub sync_level: SyncLevel,
    pub chunks: u64,
    pub stored_bytes: u64,
    pub seconds: f64,
    pub mib_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Restore {
    pub in_flight: u32,
    /// Chunk files read, MiB/s on disk.
    pub mib_s: f64,
    /// The same as image a client gets (4 MiB a chunk), MiB/s.
    pub image_mib_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verify {
    pub readers: u32,
    pub workers: u32,
    /// Chunk files read and checked, MiB/s on disk.
    pub mib_s: f64,
    /// Share of the decoders' time busy: near 1, the CPU capped it.
    pub decoders_busy: f64,
    /// `disk` or `cpu`.
    pub capped_by: String,
    /// Chunks whose CRC or digest was wrong (none, on a sound disk).
    pub bad: u64,
}

/// PBS's atime check, and the mount's option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Atime {
    /// A chunk's atime rose when touched, as PBS's GC requires.
    pub updates: bool,
    /// `noatime`, `relatime`, `strictatime`, `lazytime`: what the mount says.
    pub mount_option: Option<String>,
}

/// The datastore found at PATH, read only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FoundDatastore {
    pub name: Option<String>,
    pub path: String,
    pub tuning: Tuning,
    pub chunks: u64,
    /// Prefix directories read, of 65,536: fewer when sampled.
    pub dirs_read: u32,
    /// The count's relative error at 95% when sampled.
    pub chunks_error: Option<f64>,
    /// Mean bytes of a chunk on disk, from the chunks stat'ed.
    pub mean_chunk_bytes: Option<f64>,
    pub fidx: u64,
    pub didx: u64,
    pub snapshots: u64,
    /// Digests the indexes list, duplicates counted.
    pub references: u64,
    pub largest: Option<Largest>,
    /// Index files that could not be read, each with why.
    pub damaged: Vec<String>,
    /// What was not counted, and why.
    pub notes: Vec<String>,
}

/// The snapshot with the most image: the VM whose restore is projected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Largest {
    pub snapshot: String,
    pub image_bytes: u64,
    pub chunks: u64,
    /// Its chunks' bytes on disk (estimated from a sample when many).
    pub stored_bytes: u64,
}

/// The whole run's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatastoreResult {
    pub path: String,
    pub filesystem: Option<FsInfo>,
    pub storage: Option<Storage>,
    pub measured: Measured,
    pub existing: Option<FoundDatastore>,
    /// Where the node's proxmox-backup-qemu is, its version.
    pub pbs_qemu: Option<String>,
    pub left_behind: Vec<String>,
    pub interrupted_by: Option<i32>,
    pub errors: Vec<String>,
}

impl Work for DatastoreRequest {
    type Report = report::DatastoreReport;
    type Error = DatastoreError;

    fn run(&self, interrupt: &Interrupt) -> Result<Self::Report, Self::Error> {
        let result = replay::run(self, interrupt)?;
        let hostname = self.host.read_value(crate::sys::host::PROC_HOSTNAME);
        let mut report = report::DatastoreReport::new(result, hostname);
        report.hints = hints::hints(&report);
        Ok(report)
    }
}
