//! `load`'s workloads: the named profiles (HCIBench's lab runs, a
//! sequential pass, a database's synced writes) and the user's own, each
//! a list of phases, one job each on every worker.

use serde::{Deserialize, Serialize};

use super::wire::WorkerJob;
use crate::model::choice::Choice;

/// `--profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadProfile {
    HciRead,
    #[serde(rename = "hci-70-30")]
    Hci7030,
    Seq,
    Sync,
    Custom,
}

impl LoadProfile {
    pub const ALL: [LoadProfile; 5] = [
        LoadProfile::HciRead,
        LoadProfile::Hci7030,
        LoadProfile::Seq,
        LoadProfile::Sync,
        LoadProfile::Custom,
    ];
}

impl Choice for LoadProfile {
    const ALL: &'static [Self] = &LoadProfile::ALL;

    fn name(self) -> &'static str {
        match self {
            LoadProfile::HciRead => "hci-read",
            LoadProfile::Hci7030 => "hci-70-30",
            LoadProfile::Seq => "seq",
            LoadProfile::Sync => "sync",
            LoadProfile::Custom => "custom",
        }
    }

    fn help(self) -> &'static str {
        match self {
            LoadProfile::HciRead => {
                "4K, 100% read, 80% random, 8 workers x 16 outstanding per VM (HCIBench's lab run)"
            }
            LoadProfile::Hci7030 => "the same at 70% read, 30% write",
            LoadProfile::Seq => "1M sequential reads, then 1M sequential writes, 8 workers x 8",
            LoadProfile::Sync => {
                "4K sequential writes, each synced (O_DSYNC), one job per disk at depth 1"
            }
            LoadProfile::Custom => "4K 100% random reads, 8 x 16, as the other options change it",
        }
    }
}

/// The user's changes to a profile's job (`--bs`, `--rwmix`...).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobChanges {
    pub block: Option<usize>,
    pub read_pct: Option<u32>,
    pub random_pct: Option<u32>,
    pub workers: Option<usize>,
    pub iodepth: Option<usize>,
}

impl JobChanges {
    pub fn any(&self) -> bool {
        *self != JobChanges::default()
    }

    fn apply(&self, job: &mut WorkerJob) {
        job.block = self.block.unwrap_or(job.block);
        job.read_pct = self.read_pct.unwrap_or(job.read_pct);
        job.random_pct = self.random_pct.unwrap_or(job.random_pct);
        job.workers = self.workers.unwrap_or(job.workers);
        job.iodepth = self.iodepth.unwrap_or(job.iodepth);
    }
}

/// A block size as the text writes it: `4K`, `1M`, `512 B`.
pub fn block_text(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{}K", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

impl WorkerJob {
    /// What the job is, in one line: `4K 70% read 80% random 8x16` (and
    /// `synced`): two runs of another workload measure other figures.
    pub fn workload(&self) -> String {
        format!(
            "{} {}% read {}% random {}x{}{}",
            block_text(self.block),
            self.read_pct,
            self.random_pct,
            self.workers,
            self.iodepth,
            if self.sync { " synced" } else { "" }
        )
    }
}

/// One phase of a run: a job on every worker at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub name: String,
    pub job: WorkerJob,
}

fn job(block: usize, read_pct: u32, random_pct: u32, workers: usize, iodepth: usize) -> WorkerJob {
    WorkerJob {
        block,
        read_pct,
        random_pct,
        workers,
        iodepth,
        sync: false,
        warmup: 0.0,
        seconds: 0.0,
    }
}

/// The phases of `profile`, changed by `changes`, each with `warmup` and
/// `seconds`; a sync profile's workers are `disks` (one per disk).
pub fn phases(
    profile: LoadProfile,
    changes: &JobChanges,
    disks: usize,
    warmup: f64,
    seconds: f64,
) -> Vec<Phase> {
    let mut phases = match profile {
        LoadProfile::HciRead => vec![("read", job(4096, 100, 80, 8, 16))],
        LoadProfile::Hci7030 => vec![("70-30", job(4096, 70, 80, 8, 16))],
        LoadProfile::Seq => vec![
            ("seq-read", job(1 << 20, 100, 0, 8, 8)),
            ("seq-write", job(1 << 20, 0, 0, 8, 8)),
        ],
        LoadProfile::Sync => vec![(
            "sync-write",
            WorkerJob {
                sync: true,
                ..job(4096, 0, 0, disks.max(1), 1)
            },
        )],
        LoadProfile::Custom => vec![("custom", job(4096, 100, 100, 8, 16))],
    };
    phases
        .iter_mut()
        .map(|(name, job)| {
            changes.apply(job);
            job.warmup = warmup;
            job.seconds = seconds;
            Phase {
                name: name.to_string(),
                job: job.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_runs_and_changes_to_them() {
        let p = phases(LoadProfile::HciRead, &JobChanges::default(), 8, 60.0, 300.0);
        assert_eq!(p.len(), 1);
        let j = &p[0].job;
        assert_eq!(
            (j.block, j.read_pct, j.random_pct, j.workers, j.iodepth),
            (4096, 100, 80, 8, 16)
        );
        assert_eq!((j.warmup, j.seconds), (60.0, 300.0));
        let p = phases(LoadProfile::Seq, &JobChanges::default(), 8, 0.0, 10.0);
        assert_eq!(
            p.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["seq-read", "seq-write"]
        );
        let sync = phases(LoadProfile::Sync, &JobChanges::default(), 3, 0.0, 10.0);
        assert!(sync[0].job.sync && sync[0].job.workers == 3 && sync[0].job.iodepth == 1);
        let changes = JobChanges {
            read_pct: Some(50),
            iodepth: Some(4),
            ..JobChanges::default()
        };
        assert!(changes.any());
        let p = phases(LoadProfile::Hci7030, &changes, 8, 0.0, 10.0);
        assert_eq!(
            (p[0].job.read_pct, p[0].job.iodepth, p[0].job.random_pct),
            (50, 4, 80)
        );
    }
}
