//! `--baseline FILE...`: the cluster's total under load beside the sum of
//! the same storage's figures measured one node at a time (`pveprobe -x
//! --storage ID` on each node, or `pveprobe cluster -x --storage ID`).
//! Each phase is set beside the `-x` figure of its kind of job: 4K random
//! reads beside RANDOM READ 4K QD32, a 4K random mix beside MIXED's reads
//! and writes, 4K random writes beside RANDOM WRITE 4K QD32, 1M
//! sequential reads beside SEQ READ DIRECT, 1M sequential writes beside
//! SEQ WRITE, synced 4K writes beside SYNC WRITE 4K. Many guests at once
//! rarely get the sum: the ratio says how far from it the cluster is.

use std::path::PathBuf;

use super::report::{AloneFigure, LoadReport, OneAtATime, PhaseResult};
use super::wire::WorkerJob;
use crate::figure::Figure;
use crate::output::metrics::node_name;
use crate::output::result::JsonReport;
use crate::results::{CompareError, Input, Readers};

/// The `-x` figure a job is set beside, and whether it is in IOPS.
pub fn figure_of(job: &WorkerJob) -> Option<Figure> {
    let random = job.random_pct >= 50;
    match (job.block, job.sync, job.read_pct, random) {
        (4096, true, 0, _) => Some(Figure::SyncWrite4k),
        (_, true, ..) => None,
        (4096, false, 100, true) => Some(Figure::RandRead4kQd32),
        (4096, false, 0, true) => Some(Figure::RandWrite4kQd32),
        (4096, false, 1..=99, true) => Some(Figure::Mixed),
        (1_048_576, false, 100, false) => Some(Figure::SeqReadDirect),
        (1_048_576, false, 0, false) => Some(Figure::SeqWrite),
        _ => None,
    }
}

/// `figure`'s number in `doc`: its value; MIXED's reads and writes summed.
fn value_in(doc: &JsonReport, figure: Figure) -> Option<f64> {
    let values = figure.spec().values;
    let count = if figure == Figure::Mixed { 2 } else { 1 };
    values[..count]
        .iter()
        .map(|v| doc.reading(v).map(|r| r.value))
        .sum()
}

/// Reads every file's results (a cluster's gives one per node) and keeps
/// those of `storage`; a file that cannot be read is an error, before
/// anything runs.
pub fn read(
    readers: &Readers,
    files: &[PathBuf],
    storage: &str,
) -> Result<Vec<Input>, CompareError> {
    let mut out = Vec::new();
    for f in files {
        for input in readers.read(f)? {
            if input
                .doc
                .pve_storage
                .as_ref()
                .is_some_and(|s| s.id == storage)
            {
                out.push(input);
            }
        }
    }
    Ok(out)
}

/// A phase beside the baseline's figures of the run's nodes (the last
/// file's where two have a node).
fn beside(p: &PhaseResult, nodes: &[String], inputs: &[Input]) -> Option<OneAtATime> {
    let figure = figure_of(&p.job)?;
    let mut alone: Vec<AloneFigure> = Vec::new();
    for input in inputs {
        let Some(host) = input.doc.host.hostname.as_deref().map(node_name) else {
            continue;
        };
        if !nodes.iter().any(|n| n == host) {
            continue;
        }
        let Some(value) = value_in(&input.doc, figure) else {
            continue;
        };
        alone.retain(|a| a.node != host);
        alone.push(AloneFigure {
            node: host.into(),
            value,
            file: input.name.clone(),
        });
    }
    if alone.is_empty() {
        return None;
    }
    alone.sort_by(|a, b| a.node.cmp(&b.node));
    let sum: f64 = alone.iter().map(|a| a.value).sum();
    let at_once = if figure.unit() == "IOPS" {
        p.figures.iops
    } else {
        p.figures.mib_s
    };
    Some(OneAtATime {
        phase: p.name.clone(),
        figure: figure.key().into(),
        label: figure.label().into(),
        unit: figure.unit().into(),
        nodes: alone,
        sum,
        at_once,
        ratio: (sum > 0.0).then(|| at_once / sum),
    })
}

/// Every phase that has a one-at-a-time figure in `inputs`.
pub fn compare(r: &LoadReport, inputs: &[Input]) -> Vec<OneAtATime> {
    let mut nodes: Vec<String> = r.vms.iter().map(|v| v.node.clone()).collect();
    nodes.dedup();
    r.phases
        .iter()
        .filter(|p| p.figures.answered > 0)
        .filter_map(|p| beside(p, &nodes, inputs))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::load::sample::report;
    use crate::model::pve::{How, PveTarget};

    fn alone(host: &str, storage: &str, scale: f64) -> Input {
        let mut doc = crate::output::result::known::result();
        doc.host.hostname = Some(host.into());
        doc.pve_storage = Some(PveTarget {
            id: storage.into(),
            kind: "rbd".into(),
            shared: true,
            how: How::ScratchVolume,
            path: None,
            volume: None,
            device: None,
            size_bytes: None,
        });
        for x in &mut doc.extended {
            x.value *= scale;
        }
        Input {
            name: format!("{host} ({host}.json)"),
            doc,
        }
    }

    #[test]
    fn each_phase_is_set_beside_the_sum_of_its_figure_alone() {
        // The known result's MIXED: 7000 reads and 3000 writes a second;
        // pve2's reads halved.
        let inputs = vec![
            alone("pve1.example.com", "ceph-vm", 1.0),
            alone("pve2", "ceph-vm", 0.5),
            // Not a node of the run.
            alone("pve9", "ceph-vm", 1.0),
        ];
        let r = report(false);
        let all = compare(&r, &inputs);
        assert_eq!(all.len(), 1);
        let o = &all[0];
        assert_eq!(o.figure, "mixed_70_30_4k_qd16");
        assert_eq!(
            o.nodes
                .iter()
                .map(|a| (a.node.as_str(), a.value))
                .collect::<Vec<_>>(),
            [("pve1", 10_000.0), ("pve2", 6_500.0)]
        );
        assert_eq!(o.sum, 16_500.0);
        assert_eq!(o.at_once, 1100.0);
        assert!((o.ratio.unwrap() - 1100.0 / 16_500.0).abs() < 1e-12);
        let text = super::super::render::text(&LoadReport {
            one_at_a_time: all.clone(),
            ..r
        });
        assert!(
            text.contains("  70-30: 1100 IOPS at once; MIXED 70/30 4K QD16 alone sums to 16500 (pve1 10000, pve2 6500): 0.07 of the sum\n"),
            "{text}"
        );
    }

    #[test]
    fn jobs_are_set_beside_the_figure_of_their_kind_only() {
        use crate::commands::load::profile::{JobChanges, LoadProfile, phases};
        let of = |p: LoadProfile| {
            phases(p, &JobChanges::default(), 2, 0.0, 1.0)
                .iter()
                .map(|p| figure_of(&p.job))
                .collect::<Vec<_>>()
        };
        assert_eq!(of(LoadProfile::HciRead), [Some(Figure::RandRead4kQd32)]);
        assert_eq!(of(LoadProfile::Hci7030), [Some(Figure::Mixed)]);
        assert_eq!(
            of(LoadProfile::Seq),
            [Some(Figure::SeqReadDirect), Some(Figure::SeqWrite)]
        );
        assert_eq!(of(LoadProfile::Sync), [Some(Figure::SyncWrite4k)]);
        // 64K random reads: no -x figure of that kind.
        let mut job = phases(LoadProfile::HciRead, &JobChanges::default(), 2, 0.0, 1.0)[0]
            .job
            .clone();
        job.block = 65536;
        assert_eq!(figure_of(&job), None);
        // Another storage's results are not read.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("other.json");
        std::fs::write(
            &file,
            serde_json::to_string(&alone("pve1", "local-lvm", 1.0).doc).unwrap(),
        )
        .unwrap();
        let readers = crate::commands::results_readers();
        assert!(
            read(&readers, std::slice::from_ref(&file), "ceph-vm")
                .unwrap()
                .is_empty()
        );
        assert_eq!(read(&readers, &[file], "local-lvm").unwrap().len(), 1);
    }
}
