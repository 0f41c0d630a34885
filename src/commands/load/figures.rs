//! A `load` run's figures as a probe result, for `compare` and the
//! metrics formats: each phase's LOAD IOPS (with the read p99 of all the
//! cluster's reads), THROUGHPUT, WRITE P99 and VM FAIRNESS, the phase's
//! name their instance and its workload their facts; and LOAD IOPS
//! WITHIN TARGET, instanced by the target.

use super::report::{LoadReport, PhaseResult};
use crate::figure::Figure;
use crate::figure::projection::Facts;
use crate::figure::projection::load::LoadFacts;
use crate::output::result::{JsonReport, XFigure};

/// One entry of `figure` for `instance`.
fn entry(figure: Figure, instance: &str, value: f64, facts: LoadFacts) -> XFigure {
    XFigure {
        key: figure.key().into(),
        instance: Some(instance.into()),
        label: figure.label().into(),
        unit: figure.unit().into(),
        value,
        samples: Vec::new(),
        facts: Facts::Load(facts),
    }
}

/// A phase's entries: none when no worker answered.
fn phase_entries(p: &PhaseResult) -> Vec<XFigure> {
    let f = &p.figures;
    if f.answered == 0 {
        return Vec::new();
    }
    let facts = LoadFacts {
        workload: p.job.workload(),
        vms: f.answered,
        read_latency: None,
    };
    let mut out = vec![
        entry(
            Figure::LoadIops,
            &p.name,
            f.iops,
            LoadFacts {
                read_latency: f.read_latency,
                ..facts.clone()
            },
        ),
        entry(Figure::LoadThroughput, &p.name, f.mib_s, facts.clone()),
    ];
    if let Some(w) = f.write_latency {
        out.push(entry(
            Figure::LoadWriteP99,
            &p.name,
            w.p99_us / 1000.0,
            facts.clone(),
        ));
    }
    if let Some(share) = f.vm_fairness {
        out.push(entry(Figure::LoadVmFairness, &p.name, share, facts));
    }
    out
}

impl LoadReport {
    /// Who measured: `load on STORAGE` (`load in existing VMs`).
    pub fn subject(&self) -> String {
        if self.existing {
            "load in existing VMs".into()
        } else {
            format!("load on {}", self.storage)
        }
    }

    /// The run's figures as a probe result named by [`LoadReport::subject`].
    pub fn as_result(&self) -> JsonReport {
        let mut extended: Vec<XFigure> = Vec::new();
        for figure in Figure::LOAD {
            for p in &self.phases {
                extended.extend(
                    phase_entries(p)
                        .into_iter()
                        .filter(|e| e.key == figure.key()),
                );
            }
        }
        if let Some(t) = &self.target
            && let Some(best) = t.best
        {
            let workload = self
                .phases
                .iter()
                .find(|p| p.job.iodepth == best.depth)
                .map(|p| p.job.workload())
                .unwrap_or_default();
            extended.push(entry(
                Figure::LoadTargetIops,
                &t.target.text(),
                best.iops,
                LoadFacts {
                    workload,
                    vms: self.vms.iter().filter(|v| v.failed.is_none()).count(),
                    read_latency: None,
                },
            ));
        }
        let name = self.subject();
        JsonReport {
            schema_version: crate::output::result::SCHEMA_VERSION,
            pveprobe_version: self.pveprobe_version.clone(),
            timestamp: Some(self.timestamp.clone()).filter(|t| !t.is_empty()),
            path: name.clone(),
            host: crate::model::host::HostInfo {
                hostname: Some(name),
                ..Default::default()
            },
            extended,
            interrupted_by_signal: self.interrupted_by,
            ..JsonReport::default()
        }
    }
}

/// The document `compare` and `--baseline` read: a `load` file.
impl crate::output::document::Document for LoadReport {
    const KIND: Option<&'static str> = Some(super::report::KIND);
    const SCHEMA_VERSION: u32 = super::report::SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// Its figures, named by the storage (or `existing VMs`).
    fn results(self) -> Vec<crate::output::document::Named> {
        vec![crate::output::document::Named::new(
            Some(self.subject()),
            self.as_result(),
        )]
    }

    fn exit_status(&self) -> crate::error::exit::Exit {
        LoadReport::exit_status(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::load::sample::report;
    use crate::results::{Verdict, table};

    fn read_back(r: &LoadReport) -> crate::results::Input {
        let text = serde_json::to_string(r).unwrap();
        let mut inputs = crate::commands::results_readers()
            .parse(std::path::Path::new("run.json"), &text)
            .unwrap();
        assert_eq!(inputs.len(), 1);
        inputs.remove(0)
    }

    #[test]
    fn each_phase_is_a_figure_compare_reads_back_and_ranks() {
        let before = report(false);
        let input = read_back(&before);
        assert_eq!(input.name, "load on ceph-vm (run.json)");
        let keys: Vec<(&str, Option<&str>)> = input
            .doc
            .extended
            .iter()
            .map(|x| (x.key.as_str(), x.instance.as_deref()))
            .collect();
        // Reads only: no WRITE P99; two VMs: a fairness.
        assert_eq!(
            keys,
            [
                ("load_iops", Some("70-30")),
                ("load_throughput", Some("70-30")),
                ("load_vm_fairness", Some("70-30")),
            ]
        );
        // After a change: pve2's VM as fast as pve1's.
        let mut after = before.clone();
        after.phases[0].workers[1].reads = 2000;
        after.phases[0].figures = after.phases[0].summarise();
        let t = table(&[read_back(&before), read_back(&after)]);
        let row = |key: &str| t.rows.iter().find(|r| r.key == key).unwrap();
        let iops = row("load_iops[70-30]");
        assert_eq!(iops.label, "LOAD IOPS [70-30]");
        assert_eq!(iops.cells[0].value, Some(1100.0));
        assert_eq!(iops.cells[1].value, Some(2000.0));
        assert_eq!(iops.cells[1].verdict, Some(Verdict::Better));
        // Every read took 500 us in both: the same p99.
        let p99 = row("load_read_p99[70-30]");
        assert_eq!(p99.cells[1].ratio, Some(1.0));
        let fair = row("load_vm_fairness[70-30]");
        assert_eq!(fair.cells[1].verdict, Some(Verdict::Better));
        // Another workload is not ranked against this one.
        let mut other = before.clone();
        other.phases[0].job.iodepth = 4;
        let t = table(&[read_back(&before), read_back(&other)]);
        let iops = t.rows.iter().find(|r| r.key == "load_iops[70-30]").unwrap();
        assert_eq!(iops.cells[1].verdict, Some(Verdict::Unlike));
    }

    #[test]
    fn a_latency_targets_best_is_a_figure_of_its_own() {
        use crate::commands::load::target::{LatencyTarget, TargetResult, TargetStep};
        let mut r = report(false);
        let step = |depth, iops, within| TargetStep {
            depth,
            iops,
            latency_us: 100.0 * depth as f64,
            within,
        };
        r.phases[0].job.iodepth = 2;
        r.target = Some(TargetResult {
            target: LatencyTarget::parse("p99=5ms").unwrap(),
            steps: vec![
                step(1, 500.0, true),
                step(2, 1100.0, true),
                step(4, 900.0, false),
            ],
            best: Some(step(2, 1100.0, true)),
            ended: "crossed".into(),
        });
        let result = r.as_result();
        let best = result.extended.last().unwrap();
        assert_eq!(best.key, "load_target_iops");
        assert_eq!(best.instance.as_deref(), Some("p99 <= 5 ms"));
        assert_eq!(best.value, 1100.0);
        assert_eq!(
            best.facts
                .method(crate::figure::Method::Workload)
                .as_deref(),
            Some("4K 70% read 80% random 8x2")
        );
    }
}
