//! A `load` run's figures as a probe result, for `compare` and the
//! metrics formats: each phase's LOAD IOPS (with the read p99 of all the
//! cluster's reads), THROUGHPUT, WRITE P99 and VM FAIRNESS, the phase's
//! name their instance and its workload their facts; and LOAD IOPS
//! WITHIN TARGET, instanced by the target. And the same as metrics:
//! the cluster, each node and each VM of every phase.

use super::report::{LoadReport, PhaseResult};
use crate::figure::Figure;
use crate::figure::projection::Facts;
use crate::figure::projection::load::LoadFacts;
use crate::output::metrics::gauges::{self, Gauge, Subject};
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
        // Figure by figure, phase by phase within each (a stable sort).
        let mut extended: Vec<XFigure> = self.phases.iter().flat_map(phase_entries).collect();
        extended.sort_by_key(|e| Figure::LOAD.iter().position(|f| f.key() == e.key));
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
        JsonReport::of_figures(
            name,
            (&self.pveprobe_version, &self.timestamp),
            extended,
            self.interrupted_by,
        )
    }
}

/// A node's or VM's (or the cluster's) figures of a phase as gauges.
fn group_gauges(iops: f64, mib_s: f64, read: Option<f64>, write: Option<f64>) -> Vec<Gauge> {
    let mut out = vec![
        Gauge::new(
            (
                "operations_per_second",
                "load: reads and writes per second in the measured window; higher is better",
            ),
            iops,
            ("iops", iops),
        ),
        Gauge::new(
            (
                "bytes_per_second",
                "load: bytes read and written per second; higher is better",
            ),
            mib_s * 1_048_576.0,
            ("mib_per_s", mib_s),
        ),
    ];
    for (us, name, help, field) in [
        (
            read,
            "read_latency_p99_seconds",
            "load: 99th percentile of the reads' latency, merged from every worker's histogram; lower is better",
            "read_p99_ms",
        ),
        (
            write,
            "write_latency_p99_seconds",
            "load: 99th percentile of the writes' latency, merged; lower is better",
            "write_p99_ms",
        ),
    ] {
        if let Some(us) = us {
            out.push(Gauge::new((name, help), us / 1e6, (field, us / 1000.0)));
        }
    }
    out
}

fn share_gauge(share: Option<f64>, (name, help): (&'static str, &'static str)) -> Option<Gauge> {
    share.map(|s| Gauge::new((name, help), s, (name, s)))
}

impl LoadReport {
    /// Each phase's cluster, nodes and VMs, and a target's best, as
    /// metrics subjects: labels `phase`, `scope` (`cluster`, `node`,
    /// `vm`, `target`), `node`, `vmid`; for InfluxDB also `object=load`,
    /// `storage` and `profile`.
    fn subjects(&self, influx: bool) -> Vec<Subject> {
        use crate::model::choice::Choice as _;
        let run: Vec<(&'static str, String)> = if influx {
            vec![
                ("object", "load".into()),
                ("storage", self.storage.clone()),
                ("profile", self.profile.name().into()),
            ]
        } else {
            Vec::new()
        };
        let subject = |labels: Vec<(&'static str, String)>, gauges| Subject {
            labels: labels.into_iter().chain(run.iter().cloned()).collect(),
            gauges,
        };
        let p99 = |l: &Option<crate::model::latency::LatencySummary>| l.map(|l| l.p99_us);
        let mut out = Vec::new();
        for p in self.phases.iter().filter(|p| p.figures.answered > 0) {
            let f = &p.figures;
            let mut gauges =
                group_gauges(f.iops, f.mib_s, p99(&f.read_latency), p99(&f.write_latency));
            gauges.extend(share_gauge(
                f.vm_fairness,
                (
                    "vm_fairness_ratio",
                    "load: the slowest VM's IOPS as a share of the median VM's; higher is fairer",
                ),
            ));
            gauges.extend(share_gauge(
                f.node_fairness,
                ("node_fairness_ratio", "load: the slowest node's IOPS as a share of the median node's; higher is fairer"),
            ));
            if let Some(ms) = f.start_skew_ms {
                gauges.push(Gauge::new(
                    (
                        "start_skew_seconds",
                        "load: between the first and the last worker's start",
                    ),
                    ms / 1000.0,
                    ("start_skew_ms", ms),
                ));
            }
            let phase = ("phase", p.name.clone());
            out.push(subject(
                vec![phase.clone(), ("scope", "cluster".into())],
                gauges,
            ));
            for (scope, groups) in [("node", &f.nodes), ("vm", &f.vms)] {
                for g in groups {
                    let mut gauges =
                        group_gauges(g.iops, g.mib_s, p99(&g.read_latency), p99(&g.write_latency));
                    gauges.extend(share_gauge(
                        g.share_of_median,
                        ("share_of_median_ratio", "load: IOPS as a share of the median of its peers; below 0.67 is marked"),
                    ));
                    let mut labels = vec![phase.clone(), ("scope", scope.into())];
                    match g.name.split_once('/') {
                        Some((node, vmid)) => {
                            labels.push(("node", node.into()));
                            labels.push(("vmid", vmid.into()));
                        }
                        None => labels.push(("node", g.name.clone())),
                    }
                    out.push(subject(labels, gauges));
                }
            }
        }
        if let Some(t) = &self.target
            && let Some(best) = t.best
        {
            let gauge = Gauge::new(
                (
                    "target_operations_per_second",
                    "load: the highest IOPS within the latency target; higher is better",
                ),
                best.iops,
                ("iops", best.iops),
            );
            let labels = vec![("scope", "target".into()), ("target", t.target.text())];
            out.push(subject(labels, vec![gauge]));
        }
        out
    }

    /// In InfluxDB line protocol: measurement `pveprobe_load`, the run's time.
    pub fn influx(&self) -> String {
        gauges::influx("pveprobe_load", &self.subjects(true), &self.timestamp)
    }

    /// In Prometheus' text format: `pveprobe_load_*` gauges in base units.
    pub fn prometheus(&self) -> String {
        gauges::prometheus("pveprobe_load", &self.subjects(false))
    }
}

/// The document `compare` and `--baseline` read: a `load` file.
impl crate::results::Stored for LoadReport {
    const KIND: Option<&'static str> = Some(super::report::KIND);
    const SCHEMA_VERSION: u32 = super::report::SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// Its figures, named by the storage (or `existing VMs`).
    fn results(self) -> Vec<crate::results::Named> {
        vec![crate::results::Named::new(
            Some(self.subject()),
            self.as_result(),
        )]
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
    fn the_metrics_have_the_cluster_each_node_and_vm_of_each_phase() {
        let r = report(false);
        let prom = r.prometheus();
        assert!(
            prom.contains("# TYPE pveprobe_load_operations_per_second gauge\n"),
            "{prom}"
        );
        for sample in [
            "pveprobe_load_operations_per_second{phase=\"70-30\",scope=\"cluster\"} 1100\n",
            "pveprobe_load_operations_per_second{phase=\"70-30\",scope=\"node\",node=\"pve2\"} 100\n",
            "pveprobe_load_operations_per_second{phase=\"70-30\",scope=\"vm\",node=\"pve1\",vmid=\"101\"} 1000\n",
            // Every read took 500 us.
            "pveprobe_load_read_latency_p99_seconds{phase=\"70-30\",scope=\"cluster\"} 0.0005",
            "pveprobe_load_vm_fairness_ratio{phase=\"70-30\",scope=\"cluster\"} 0.1818",
        ] {
            assert!(prom.contains(sample), "{sample} in {prom}");
        }
        // No writes: no write latency.
        assert!(!prom.contains("write_latency"), "{prom}");
        let influx = r.influx();
        let lines: Vec<&str> = influx.lines().collect();
        assert_eq!(lines.len(), 1 + 2 + 2, "{influx}");
        assert!(
            lines[0].starts_with(
                "pveprobe_load,object=load,phase=70-30,profile=hci-70-30,scope=cluster,storage=ceph-vm iops=1100,mib_per_s="
            ),
            "{influx}"
        );
        assert!(lines[0].ends_with(" 1796428800000000000"), "{influx}");
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
