//! What a `load` run found: every worker's own figures, phase by phase,
//! as its worker sent them (counts, histograms, each second), and the
//! figures made of them: the cluster's totals, latency percentiles of all
//! its I/Os merged from the histograms (never an average of percentiles),
//! the same per node and per VM, each second's total, fairness, the skew
//! of the workers' starts. Plain data; `render` writes it.

use serde::{Deserialize, Serialize};

use super::profile::{LoadProfile, Phase};
use super::wire::WorkerJob;
use crate::model::latency::{Latency, LatencySummary};
use crate::pvevm::VmSettings;

/// `kind` in the JSON: how `compare` knows the document.
pub const KIND: &str = "load";
/// Its schema's version: a change that breaks a reader counts it up.
pub const SCHEMA_VERSION: u32 = 1;
/// A node or VM this far below the median of its peers is marked `!`.
pub const SLOW_SHARE: f64 = 2.0 / 3.0;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadReport {
    pub schema_version: u32,
    /// Always `load`.
    pub kind: String,
    pub pveprobe_version: String,
    /// When the run started (RFC 3339).
    pub timestamp: String,
    pub storage: String,
    pub profile: LoadProfile,
    pub disks_per_vm: usize,
    pub disk_bytes: u64,
    /// `random`, `zero` or `skip`.
    pub fill: String,
    /// `--vms`: the workers are existing VMs (files in a directory in
    /// each), not VMs the run made; `storage` is empty then.
    #[serde(default)]
    pub existing: bool,
    pub settings: VmSettings,
    /// Every worker planned, by node, and what became of it.
    pub vms: Vec<VmRecord>,
    pub phases: Vec<PhaseResult>,
    /// `--latency-target`'s search: its steps are the phases.
    #[serde(default)]
    pub target: Option<super::target::TargetResult>,
    /// `--baseline`: each phase beside the sum of the same storage's
    /// figures measured one node at a time.
    #[serde(default)]
    pub one_at_a_time: Vec<OneAtATime>,
    /// What the run made and could not remove, with the command that does.
    pub left_behind: Vec<LeftBehind>,
    /// What went wrong beyond one worker (a node that did not answer).
    pub problems: Vec<String>,
    pub interrupted_by: Option<i32>,
}

/// A worker VM of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmRecord {
    pub node: String,
    pub vmid: u32,
    /// Disks it found (0 until it said hello).
    pub disks: usize,
    /// Bytes its fill wrote, and in how long.
    pub filled_bytes: u64,
    pub fill_seconds: f64,
    /// Why it took no (further) part, if so.
    pub failed: Option<String>,
}

/// One node's figure, measured alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AloneFigure {
    pub node: String,
    pub value: f64,
    /// The file it was read from.
    pub file: String,
}

/// `--baseline` (see `baseline`): a phase beside the sum of the one-at-a-time figures of its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneAtATime {
    pub phase: String,
    /// The `-x` figure's key and label, and its unit (IOPS or MiB/s).
    pub figure: String,
    pub label: String,
    pub unit: String,
    /// Each node of the run the baseline has, alone.
    pub nodes: Vec<AloneFigure>,
    pub sum: f64,
    /// The phase's total, all at once, in the same unit.
    pub at_once: f64,
    /// `at_once / sum`.
    pub ratio: Option<f64>,
}

/// A VM that could not be removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftBehind {
    pub node: String,
    pub vmid: u32,
    pub why: String,
    /// What removes it, run on that node.
    pub command: String,
}

/// One phase: its job and every worker's part of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    pub job: WorkerJob,
    pub workers: Vec<WorkerFigures>,
    /// Made of `workers` when the phase ends ([`PhaseResult::summarise`]).
    pub figures: PhaseFigures,
}

/// One worker's part of a phase, as it sent it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkerFigures {
    pub node: String,
    pub vmid: u32,
    pub reads: u64,
    pub writes: u64,
    /// Its window's length, in seconds.
    pub seconds: f64,
    pub read_latency: Latency,
    pub write_latency: Latency,
    pub engine: String,
    /// Operations in each second of its window.
    pub per_second: Vec<u64>,
    /// When its window began, by its node's clock (ns since the epoch).
    pub started_ns: Option<u64>,
    /// Why it has no result.
    pub error: Option<String>,
}

impl WorkerFigures {
    pub fn iops(&self) -> f64 {
        if self.seconds > 0.0 && self.error.is_none() {
            (self.reads + self.writes) as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// A node's or a VM's figures in a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupFigures {
    /// The node's name, or the VM's `node/VMID`.
    pub name: String,
    pub iops: f64,
    pub mib_s: f64,
    pub read_latency: Option<LatencySummary>,
    pub write_latency: Option<LatencySummary>,
    /// Its IOPS as a share of the median of its peers'.
    pub share_of_median: Option<f64>,
    /// A third or more below the median of its peers.
    pub slow: bool,
}

/// The figures of a phase, made of its workers'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    /// Workers with a result, of those asked.
    pub answered: usize,
    pub asked: usize,
    pub iops: f64,
    pub mib_s: f64,
    /// Of all the cluster's reads and writes, from the merged histograms.
    pub read_latency: Option<LatencySummary>,
    pub write_latency: Option<LatencySummary>,
    pub nodes: Vec<GroupFigures>,
    pub vms: Vec<GroupFigures>,
    /// The cluster's operations per second, second by second.
    pub per_second_iops: Vec<u64>,
    /// The slowest VM's IOPS as a share of the median VM's, and node's.
    pub vm_fairness: Option<f64>,
    pub node_fairness: Option<f64>,
    /// Between the first and the last worker's start, in milliseconds.
    pub start_skew_ms: Option<f64>,
}

/// The median of the finite values.
fn median(values: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    crate::model::stats::median(&finite)
}

/// The workers in `members` as one group.
fn group(name: String, members: &[&WorkerFigures], block: usize) -> GroupFigures {
    let iops: f64 = members.iter().map(|w| w.iops()).sum();
    let (mut reads, mut writes) = (Latency::default(), Latency::default());
    for w in members.iter().filter(|w| w.error.is_none()) {
        reads.merge(&w.read_latency);
        writes.merge(&w.write_latency);
    }
    GroupFigures {
        name,
        iops,
        mib_s: iops * block as f64 / 1_048_576.0,
        read_latency: reads.summary(),
        write_latency: writes.summary(),
        share_of_median: None,
        slow: false,
    }
}

/// Each group's share of the median, its `!`, and the smallest share
/// (the fairness); only among two or more.
fn rank(groups: &mut [GroupFigures]) -> Option<f64> {
    if groups.len() < 2 {
        return None;
    }
    let m = median(&groups.iter().map(|g| g.iops).collect::<Vec<_>>())?;
    if m <= 0.0 {
        return None;
    }
    for g in groups.iter_mut() {
        let share = g.iops / m;
        g.share_of_median = Some(share);
        g.slow = share < SLOW_SHARE;
    }
    groups
        .iter()
        .filter_map(|g| g.share_of_median)
        .min_by(f64::total_cmp)
}

impl PhaseResult {
    /// The `pct`th percentile of every I/O of the phase, reads and writes.
    pub fn percentile_us(&self, pct: f64) -> Option<f64> {
        let mut all = Latency::default();
        for w in self.workers.iter().filter(|w| w.error.is_none()) {
            all.merge(&w.read_latency);
            all.merge(&w.write_latency);
        }
        all.percentile_us(pct)
    }

    pub fn new(phase: &Phase, workers: Vec<WorkerFigures>) -> PhaseResult {
        let mut result = PhaseResult {
            name: phase.name.clone(),
            job: phase.job.clone(),
            workers,
            figures: PhaseFigures::default(),
        };
        result.figures = result.summarise();
        result
    }

    /// The phase's figures, made of its workers'.
    pub fn summarise(&self) -> PhaseFigures {
        let block = self.job.block;
        let all: Vec<&WorkerFigures> = self.workers.iter().collect();
        let total = group(String::new(), &all, block);
        let mut nodes: Vec<String> = self.workers.iter().map(|w| w.node.clone()).collect();
        nodes.dedup();
        let mut node_groups: Vec<GroupFigures> = nodes
            .iter()
            .map(|n| {
                let members: Vec<&WorkerFigures> =
                    self.workers.iter().filter(|w| &w.node == n).collect();
                group(n.clone(), &members, block)
            })
            .collect();
        let mut vm_groups: Vec<GroupFigures> = self
            .workers
            .iter()
            .map(|w| group(format!("{}/{}", w.node, w.vmid), &[w], block))
            .collect();
        let seconds = self
            .workers
            .iter()
            .map(|w| w.per_second.len())
            .max()
            .unwrap_or(0);
        let per_second_iops = (0..seconds)
            .map(|i| {
                self.workers
                    .iter()
                    .filter(|w| w.error.is_none())
                    .filter_map(|w| w.per_second.get(i))
                    .sum()
            })
            .collect();
        let starts: Vec<u64> = self.workers.iter().filter_map(|w| w.started_ns).collect();
        let start_skew_ms = match (starts.iter().min(), starts.iter().max()) {
            (Some(a), Some(b)) if starts.len() > 1 => Some((b - a) as f64 / 1e6),
            _ => None,
        };
        PhaseFigures {
            answered: self.workers.iter().filter(|w| w.error.is_none()).count(),
            asked: self.workers.len(),
            iops: total.iops,
            mib_s: total.mib_s,
            read_latency: total.read_latency,
            write_latency: total.write_latency,
            node_fairness: rank(&mut node_groups),
            vm_fairness: rank(&mut vm_groups),
            nodes: node_groups,
            vms: vm_groups,
            per_second_iops,
            start_skew_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn worker(node: &str, vmid: u32, ops: u64, us: u64, started_ms: u64) -> WorkerFigures {
        let mut read_latency = Latency::default();
        for _ in 0..ops {
            read_latency.record(Duration::from_micros(us));
        }
        WorkerFigures {
            node: node.into(),
            vmid,
            reads: ops,
            writes: 0,
            seconds: 10.0,
            read_latency,
            engine: "io_uring".into(),
            per_second: vec![ops / 10; 10],
            started_ns: Some(1_700_000_000_000_000_000 + started_ms * 1_000_000),
            ..WorkerFigures::default()
        }
    }

    #[test]
    fn totals_merged_percentiles_fairness_and_skew() {
        let phase = Phase {
            name: "read".into(),
            job: super::super::profile::phases(
                LoadProfile::HciRead,
                &Default::default(),
                8,
                0.0,
                10.0,
            )[0]
            .job
            .clone(),
        };
        // pve1: two VMs of 10,000 ops at 100 us; pve2: one of 10,000 and
        // one slow VM of 1,000 ops at 2 ms.
        let r = PhaseResult::new(
            &phase,
            vec![
                worker("pve1", 101, 10_000, 100, 0),
                worker("pve1", 102, 10_000, 100, 3),
                worker("pve2", 103, 10_000, 100, 1),
                worker("pve2", 104, 1_000, 2000, 7),
            ],
        );
        let f = &r.figures;
        assert_eq!((f.answered, f.asked), (4, 4));
        assert!((f.iops - 3100.0).abs() < 1e-9, "{f:?}");
        assert!((f.mib_s - 3100.0 * 4096.0 / 1_048_576.0).abs() < 1e-9);
        // 31,000 reads: the 99th percentile (the 30,690th) is among the
        // slow VM's 1,000 at 2 ms; the median is 100 us.
        let read = f.read_latency.unwrap();
        assert_eq!(read.count, 31_000);
        assert!((read.p99_us - 2000.0).abs() <= 2.0, "{read:?}");
        assert!((read.p50_us - 100.0).abs() <= 0.1, "{read:?}");
        // Per node: pve2's p99 is the slow VM's; pve1's is 100 us.
        assert!((f.nodes[0].read_latency.unwrap().p99_us - 100.0).abs() <= 0.1);
        assert!((f.nodes[1].read_latency.unwrap().p99_us - 2000.0).abs() <= 2.0);
        // VM fairness: 100 of a median 1,000 IOPS; the slow VM is marked.
        assert!((f.vm_fairness.unwrap() - 0.1).abs() < 1e-9, "{f:?}");
        assert_eq!(
            f.vms
                .iter()
                .filter(|v| v.slow)
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>(),
            ["pve2/104"]
        );
        // Nodes: 2,000 and 1,100 IOPS, median 1,550: pve2 at 0.71 is no `!`.
        assert!(f.nodes.iter().all(|n| !n.slow), "{:?}", f.nodes);
        assert!((f.node_fairness.unwrap() - 1100.0 / 1550.0).abs() < 1e-9);
        assert_eq!(f.per_second_iops, vec![3100; 10]);
        assert!((f.start_skew_ms.unwrap() - 7.0).abs() < 1e-9);
        // A failed worker counts for nothing and is not answered.
        let mut failed = worker("pve2", 105, 5000, 100, 2);
        failed.error = Some("it stopped answering".into());
        let r = PhaseResult::new(&phase, vec![worker("pve1", 101, 10_000, 100, 0), failed]);
        assert_eq!((r.figures.answered, r.figures.asked), (1, 2));
        assert!((r.figures.iops - 1000.0).abs() < 1e-9);
        assert_eq!(r.figures.read_latency.unwrap().count, 10_000);
    }
}
