//! The one profile `pveprobe guest` runs on both sides of QEMU: inside the
//! guest on a file of the filesystem on the VM's disk, and on the host on
//! the same storage, with the same code (the guest runs a static build of
//! this binary). Every job is O_DIRECT where the filesystem takes it.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ProbeError;
use crate::measure::engine::{self, EngineChoice, Job, JobParams};
use crate::measure::{seqwrite, syncwrite};
use crate::model::latency::LatencySummary;
use crate::model::sync::SyncMode;
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;

/// The profile's jobs on the engine, by key, label and shape.
pub const JOBS: [(&str, &str, JobParams); 6] = [
    (
        "seq_read_1m_qd8",
        "SEQ READ 1M QD8",
        JobParams::SEQ_READ_DIRECT,
    ),
    (
        "seq_write_1m_qd8",
        "SEQ WRITE 1M QD8",
        JobParams {
            block: 1 << 20,
            depth: 8,
            read_pct: 0,
            random_pct: 0,
        },
    ),
    (
        "rand_read_4k_qd1",
        "RANDOM READ 4K QD1",
        JobParams::RAND_READ_4K_QD1,
    ),
    (
        "rand_read_4k_qd32",
        "RANDOM READ 4K QD32",
        JobParams::RAND_READ_4K_QD32,
    ),
    (
        "rand_write_4k_qd1",
        "RANDOM WRITE 4K QD1",
        JobParams::RAND_WRITE_4K_QD1,
    ),
    (
        "rand_write_4k_qd32",
        "RANDOM WRITE 4K QD32",
        JobParams::RAND_WRITE_4K_QD32,
    ),
];

/// SYNC WRITE 4K's key: fdatasync after each 4 KiB write, one job.
pub const SYNC_KEY: &str = "sync_write_4k";

/// The file the sync job writes over (as -x's SYNC WRITE 4K).
const SYNC_FILE_BYTES: u64 = 64 << 20;

/// One figure of the profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileFigure {
    pub key: String,
    pub label: String,
    /// `MiB/s` for the 1M jobs, `IOPS` for the rest.
    pub unit: String,
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
}

/// The profile measured on one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// What was measured: `file in /srv (ext4)`, `scratch volume local-lvm:vm-...`.
    pub target: String,
    /// Whether the jobs ran O_DIRECT (a filesystem such as tmpfs refuses it).
    pub direct: bool,
    /// The span the jobs ran over.
    pub bytes: u64,
    pub seconds: f64,
    /// The filesystem's block size (statvfs), where the profile ran on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    pub figures: Vec<ProfileFigure>,
}

impl Profile {
    pub fn figure(&self, key: &str) -> Option<&ProfileFigure> {
        self.figures.iter().find(|f| f.key == key)
    }
}

/// The engine's jobs over `span` bytes: reads on `read` (prefilled), each
/// write job on the file `write` gives it (a fresh one per job on a
/// filesystem, the same device on a scratch volume).
pub fn run_jobs(
    read: &File,
    write: &mut dyn FnMut() -> Result<File, ProbeError>,
    span: u64,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<Vec<ProfileFigure>, ProbeError> {
    let mut out = Vec::new();
    for (key, label, params) in JOBS {
        let span = span / params.block as u64 * params.block as u64;
        let fresh;
        let file = if params.read_pct == 100 {
            read
        } else {
            fresh = write()?;
            &fresh
        };
        let stats = engine::run(
            &Job::new(file, params, span, window),
            EngineChoice::Auto,
            interrupt,
        )?;
        let (ops, latency) = if params.read_pct == 100 {
            (stats.read_iops(), stats.read_latency.summary())
        } else {
            (stats.write_iops(), stats.write_latency.summary())
        };
        let (unit, value) = if params.block >= 1 << 20 {
            ("MiB/s", ops * params.block as f64 / f64::from(1 << 20))
        } else {
            ("IOPS", ops)
        };
        out.push(ProfileFigure {
            key: key.into(),
            label: label.into(),
            unit: unit.into(),
            value,
            latency,
        });
    }
    Ok(out)
}

fn sync_figure(fig: &crate::model::sync::SyncWriteFigure) -> ProfileFigure {
    ProfileFigure {
        key: SYNC_KEY.into(),
        label: "SYNC WRITE 4K".into(),
        unit: "IOPS".into(),
        value: fig.iops(),
        latency: fig.latency.summary(),
    }
}

/// The profile in a private directory inside `parent` (a file of `bytes`
/// written first and read by the read jobs, a fresh preallocated file of
/// `bytes` for each write job, then SYNC WRITE 4K on a file of its own),
/// removed afterwards, also when a job fails or is interrupted.
pub fn run_in_dir(
    parent: &Path,
    bytes: u64,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<Profile, ProbeError> {
    let mut scratch = ScratchDir::create(parent)?;
    let result = (|| {
        let pool = seqwrite::aligned_data();
        seqwrite::run(
            &mut scratch,
            "profile.dat",
            bytes,
            pool.as_slice(),
            interrupt,
        )?;
        let (file, direct) = scratch.open_rw("profile.dat")?;
        // Each write job on a fresh preallocated file, as -x's RANDOM
        // WRITE 4K on a path and fio's default file: every write of the
        // window is a block's first.
        let mut fresh = || {
            let f = scratch.create_file("write.dat")?;
            crate::sys::scratch::preallocate(&f, bytes)
                .map_err(|e| ProbeError::io(format!("preallocating {bytes} bytes"), e))?;
            drop(f);
            Ok(scratch.open_rw("write.dat")?.0)
        };
        let mut figures = run_jobs(&file, &mut fresh, bytes, window, interrupt)?;
        drop(file);
        // The write jobs' file emptied before SYNC WRITE 4K, as -x removes
        // each test's files before the next.
        drop(scratch.create_file("write.dat")?);
        let sync = syncwrite::measure(
            &mut scratch,
            1,
            SYNC_FILE_BYTES.min(bytes),
            SyncMode::Fdatasync,
            window,
            interrupt,
        )?;
        figures.push(sync_figure(&sync));
        Ok((figures, direct))
    })();
    let (result, _left) = scratch.finish(result);
    let (figures, direct) = result?;
    Ok(Profile {
        target: format!("a file in {}", parent.display()),
        direct,
        bytes,
        seconds: window.as_secs_f64(),
        block_size: nix::sys::statvfs::statvfs(parent)
            .ok()
            .map(|st| st.block_size()),
        figures,
    })
}

/// The profile on a scratch volume's device (opened O_DIRECT, prefilled
/// over `bytes` by the caller).
pub fn run_on_device(
    device: &File,
    name: &str,
    bytes: u64,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<Vec<ProfileFigure>, ProbeError> {
    let mut same = || {
        device
            .try_clone()
            .map_err(|e| ProbeError::io(format!("{name}: dup"), e))
    };
    let mut figures = run_jobs(device, &mut same, bytes, window, interrupt)?;
    let sync = syncwrite::measure_device(
        device,
        name,
        SYNC_FILE_BYTES.min(bytes),
        SyncMode::Fdatasync,
        window,
        interrupt,
    )?;
    figures.push(sync_figure(&sync));
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_on_a_file_gives_every_figure_and_leaves_nothing() {
        let parent = tempfile::tempdir().unwrap();
        let p = run_in_dir(
            parent.path(),
            8 << 20,
            Duration::from_millis(50),
            &Interrupt::default(),
        )
        .unwrap();
        let keys: Vec<&str> = p.figures.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "seq_read_1m_qd8",
                "seq_write_1m_qd8",
                "rand_read_4k_qd1",
                "rand_read_4k_qd32",
                "rand_write_4k_qd1",
                "rand_write_4k_qd32",
                "sync_write_4k"
            ]
        );
        assert!(
            p.figures
                .iter()
                .all(|f| f.value > 0.0 && f.latency.is_some())
        );
        assert_eq!(p.figure("seq_read_1m_qd8").unwrap().unit, "MiB/s");
        assert_eq!(p.figure("sync_write_4k").unwrap().unit, "IOPS");
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Profile>(&json).unwrap(), p);
    }

    #[test]
    fn an_interrupted_profile_leaves_nothing() {
        let parent = tempfile::tempdir().unwrap();
        let interrupt = Interrupt::default();
        interrupt.raise(libc::SIGINT);
        let r = run_in_dir(
            parent.path(),
            8 << 20,
            Duration::from_millis(50),
            &interrupt,
        );
        assert!(matches!(r, Err(ProbeError::Interrupted(_))), "{r:?}");
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }
}
