//! A `load` run's forms: the text table, a CSV row per figure, the
//! picture, and the report as the [`crate::output::Document`] the session
//! writes; each reads the figures [`super::report`] made, one way.

use super::report::{GroupFigures, LoadReport, PhaseResult};
use crate::model::latency::LatencySummary;

/// The CSV's columns.
pub const CSV_HEADER: [&str; 14] = [
    "timestamp",
    "storage",
    "profile",
    "phase",
    "subject",
    "name",
    "iops",
    "mib_s",
    "read_p50_ms",
    "read_p99_ms",
    "read_p99_9_ms",
    "write_p50_ms",
    "write_p99_ms",
    "share_of_median",
];

impl crate::output::Document for LoadReport {
    const PICTURE: bool = true;

    fn text(&self) -> String {
        text(self)
    }

    fn metrics(&self, format: crate::output::Format) -> String {
        match format {
            crate::output::Format::Influx => self.influx(),
            _ => self.prometheus(),
        }
    }

    fn csv(&self, header: bool) -> String {
        csv(self, header)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(CSV_HEADER.to_vec())
    }

    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        Some(picture(self))
    }
}

/// `--plot`: each node's IOPS second by second, phase after phase on one
/// time axis; under a latency target, first its curve (the cluster's
/// IOPS against the percentile, a point per step, the target marked).
pub fn picture(r: &LoadReport) -> Result<String, crate::output::plot::PlotError> {
    use crate::output::plot::{Chart, Line, charts_svg};
    let mut charts = Vec::new();
    let mut key = Vec::new();
    if let Some(t) = &r.target {
        let line = Line {
            name: "cluster".into(),
            points: t
                .steps
                .iter()
                .map(|s| (s.latency_us / 1000.0, s.iops))
                .collect(),
            tags: t.steps.iter().map(|s| format!("QD {}", s.depth)).collect(),
        };
        charts.push(Chart {
            title: format!(
                "IOPS against p{} latency, a step per depth",
                t.target.percentile
            ),
            x_desc: format!("p{} latency, ms", t.target.percentile),
            unit: "IOPS".into(),
            lines: vec![line],
            mark_x: Some((
                t.target.limit_us / 1000.0,
                format!(" target {}", t.target.text()),
            )),
        });
        key.push(match t.best {
            Some(b) => format!(
                "highest within {}: {:.0} IOPS at {} in flight per worker",
                t.target.text(),
                b.iops,
                b.depth
            ),
            None => format!("no step was within {}", t.target.text()),
        });
    }
    let mut nodes: Vec<Line> = Vec::new();
    let mut offset = 0.0;
    let mut phases = Vec::new();
    for p in &r.phases {
        let mut seconds = 0;
        for w in p.workers.iter().filter(|w| w.error.is_none()) {
            let at = match nodes.iter().position(|l| l.name == w.node) {
                Some(at) => at,
                None => {
                    nodes.push(Line {
                        name: w.node.clone(),
                        ..Line::default()
                    });
                    nodes.len() - 1
                }
            };
            let line = &mut nodes[at].points;
            for (i, ops) in w.per_second.iter().enumerate() {
                let x = offset + i as f64 + 1.0;
                match line.iter_mut().find(|(px, _)| *px == x) {
                    Some(point) => point.1 += *ops as f64,
                    None => line.push((x, *ops as f64)),
                }
            }
            seconds = seconds.max(w.per_second.len());
        }
        phases.push(format!("{} from {offset:.0} s", p.name));
        offset += seconds as f64;
    }
    for line in &mut nodes {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    charts.push(Chart {
        title: "IOPS per node, each second".into(),
        x_desc: "seconds".into(),
        unit: "IOPS".into(),
        lines: nodes,
        mark_x: None,
    });
    key.push(format!("phases: {}", phases.join(", ")));
    let title = format!(
        "pveprobe {}: {}, {} worker VMs",
        r.subject(),
        crate::model::choice::Choice::name(r.profile),
        r.vms.len()
    );
    charts_svg(&title, &key, &charts)
}

fn ms(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

fn percentiles(l: &Option<LatencySummary>) -> String {
    match l {
        None => "-".into(),
        Some(l) => format!(
            "p50 {}  p99 {}{}",
            ms(l.p50_us),
            ms(l.p99_us),
            l.p99_9_us
                .map(|v| format!("  p99.9 {}", ms(v)))
                .unwrap_or_default()
        ),
    }
}

fn group_lines(out: &mut String, heading: &str, groups: &[GroupFigures]) {
    *out += &format!(
        "  {heading:<16} {:>10} {:>9}  {:<38} {:<38} {:>5}\n",
        "IOPS", "MiB/s", "read latency", "write latency", "share"
    );
    for g in groups {
        *out += &format!(
            "  {:<16} {:>10.0} {:>9.1}  {:<38} {:<38} {:>5}\n",
            format!("{}{}", g.name, if g.slow { " !" } else { "" }),
            g.iops,
            g.mib_s,
            percentiles(&g.read_latency),
            percentiles(&g.write_latency),
            g.share_of_median
                .map(|s| format!("{s:.2}"))
                .unwrap_or_else(|| "-".into())
        );
    }
}

fn phase_text(out: &mut String, p: &PhaseResult) {
    let j = &p.job;
    let f = &p.figures;
    *out += &format!(
        "\nPHASE {}: {} blocks, {}% read, {}% random, {} workers x {} in flight per VM{}, {:.0} s (after {:.0} s warm-up)\n",
        p.name,
        super::profile::block_text(j.block),
        j.read_pct,
        j.random_pct,
        j.workers,
        j.iodepth,
        if j.sync { ", synced" } else { "" },
        j.seconds,
        j.warmup
    );
    *out += &format!(
        "  CLUSTER {:>10.0} IOPS {:>9.1} MiB/s   {} of {} workers answered\n",
        f.iops, f.mib_s, f.answered, f.asked
    );
    *out += &format!(
        "  read latency (all I/Os):  {}\n",
        percentiles(&f.read_latency)
    );
    *out += &format!(
        "  write latency (all I/Os): {}\n",
        percentiles(&f.write_latency)
    );
    let mut facts = Vec::new();
    if let Some(s) = f.start_skew_ms {
        facts.push(format!("start skew {s:.1} ms"));
    }
    if let Some(v) = f.vm_fairness {
        facts.push(format!("slowest VM {v:.2} of the median"));
    }
    if let Some(n) = f.node_fairness {
        facts.push(format!("slowest node {n:.2} of the median"));
    }
    if !facts.is_empty() {
        *out += &format!("  {}\n", facts.join("; "));
    }
    group_lines(out, "NODE", &f.nodes);
    group_lines(out, "VM", &f.vms);
    if !f.per_second_iops.is_empty() {
        let seconds: Vec<String> = f.per_second_iops.iter().map(u64::to_string).collect();
        *out += &format!("  each second (IOPS): {}\n", seconds.join(" "));
    }
    for w in p.workers.iter().filter(|w| w.error.is_some()) {
        *out += &format!(
            "  {}/{}: {}\n",
            w.node,
            w.vmid,
            w.error.as_deref().unwrap_or_default()
        );
    }
}

/// The text's first lines: where it ran, on what, how.
fn head(r: &LoadReport) -> String {
    let nodes = {
        let mut n: Vec<&str> = r.vms.iter().map(|v| v.node.as_str()).collect();
        n.dedup();
        n.len()
    };
    let s = &r.settings;
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let each = crate::model::human::Size(r.disk_bytes).to_string();
    if r.existing {
        format!(
            "pveprobe load in existing VMs, profile {}, {} on {}, {} of {each} each\n",
            crate::model::choice::Choice::name(r.profile),
            count(r.vms.len(), "VM"),
            count(nodes, "node"),
            count(r.disks_per_vm, "file"),
        )
    } else {
        let mut head = format!(
            "pveprobe load: storage {}, profile {}, {} on {}, {} of {each} each\n",
            r.storage,
            crate::model::choice::Choice::name(r.profile),
            count(r.vms.len(), "worker VM"),
            count(nodes, "node"),
            count(r.disks_per_vm, "disk"),
        );
        head += &format!(
            "workers: scsihw {}, iothread={}, cache={}, aio={}; fill: {}\n",
            s.scsihw,
            u8::from(s.iothread),
            s.cache,
            s.aio.as_deref().unwrap_or("default"),
            r.fill
        );
        head
    }
}

/// The text table.
pub fn text(r: &LoadReport) -> String {
    let mut out = head(r);
    let filled: u64 = r.vms.iter().map(|v| v.filled_bytes).sum();
    if filled > 0 {
        let slowest = r.vms.iter().map(|v| v.fill_seconds).fold(0.0, f64::max);
        out += &format!(
            "filled: {} in {:.0} s\n",
            crate::model::human::Size(filled),
            slowest
        );
    }
    for p in &r.phases {
        phase_text(&mut out, p);
    }
    if let Some(t) = &r.target {
        target_text(&mut out, t);
    }
    one_at_a_time_text(&mut out, &r.one_at_a_time);
    let failed: Vec<String> = r
        .vms
        .iter()
        .filter_map(|v| Some(format!("  {}/{}: {}\n", v.node, v.vmid, v.failed.as_ref()?)))
        .collect();
    if !failed.is_empty() {
        out += "\nWORKERS THAT FAILED\n";
        out += &failed.concat();
    }
    for p in &r.problems {
        out += &format!("problem: {p}\n");
    }
    if r.left_behind.is_empty() {
        out += if r.existing {
            "\nThe run's directory was removed from every VM.\n"
        } else {
            "\nEvery worker VM was destroyed with its disks.\n"
        };
    } else {
        out += "\nLEFT BEHIND (remove with the command shown)\n";
        for l in &r.left_behind {
            out += &format!("  {}/{}: {}\n    {}\n", l.node, l.vmid, l.why, l.command);
        }
    }
    if let Some(sig) = r.interrupted_by {
        out += &format!("Interrupted by signal {sig}.\n");
    }
    out
}

/// The latency target's steps and its best.
fn target_text(out: &mut String, t: &super::target::TargetResult) {
    *out += &format!("\nLATENCY TARGET {}\n", t.target.text());
    *out += &format!(
        "  {:>6} {:>10} {:>12}\n",
        "DEPTH",
        "IOPS",
        format!("p{}", t.target.percentile)
    );
    for s in &t.steps {
        *out += &format!(
            "  {:>6} {:>10.0} {:>12}{}\n",
            s.depth,
            s.iops,
            ms(s.latency_us),
            if s.within { "" } else { "  beyond" }
        );
    }
    match &t.best {
        Some(b) => {
            *out += &format!(
                "  highest within it: {:.0} IOPS at {} in flight per worker ({} {})\n",
                b.iops,
                b.depth,
                format_args!("p{}", t.target.percentile),
                ms(b.latency_us)
            )
        }
        None => *out += "  no step was within it\n",
    }
    *out += &format!("  ended: {}\n", t.ended);
}

/// `--baseline`: each phase beside the sum of its figure measured one
/// node at a time.
fn one_at_a_time_text(out: &mut String, all: &[super::report::OneAtATime]) {
    if all.is_empty() {
        return;
    }
    *out += "\nALL AT ONCE AGAINST ONE NODE AT A TIME (--baseline)\n";
    for o in all {
        let each: Vec<String> = o
            .nodes
            .iter()
            .map(|a| format!("{} {:.0}", a.node, a.value))
            .collect();
        *out += &format!(
            "  {}: {:.0} {} at once; {} alone sums to {:.0} ({}){}\n",
            o.phase,
            o.at_once,
            o.unit,
            o.label,
            o.sum,
            each.join(", "),
            o.ratio
                .map(|r| format!(": {r:.2} of the sum"))
                .unwrap_or_default()
        );
    }
}

/// A row per figure: the cluster's, each node's and each VM's, per phase.
pub fn csv(r: &LoadReport, header: bool) -> String {
    let mut records = Vec::new();
    let lat = |l: &Option<LatencySummary>, f: fn(&LatencySummary) -> Option<f64>| {
        l.as_ref()
            .and_then(f)
            .map(|us| format!("{:.3}", us / 1000.0))
            .unwrap_or_default()
    };
    let profile = crate::model::choice::Choice::name(r.profile);
    for p in &r.phases {
        let f = &p.figures;
        let cluster = GroupFigures {
            name: String::new(),
            iops: f.iops,
            mib_s: f.mib_s,
            read_latency: f.read_latency,
            write_latency: f.write_latency,
            share_of_median: None,
            slow: false,
        };
        let rows = std::iter::once(("cluster", &cluster))
            .chain(f.nodes.iter().map(|g| ("node", g)))
            .chain(f.vms.iter().map(|g| ("vm", g)));
        for (subject, g) in rows {
            records.push([
                r.timestamp.clone(),
                r.storage.clone(),
                profile.to_string(),
                p.name.clone(),
                subject.to_string(),
                g.name.clone(),
                format!("{:.0}", g.iops),
                format!("{:.2}", g.mib_s),
                lat(&g.read_latency, |l| Some(l.p50_us)),
                lat(&g.read_latency, |l| Some(l.p99_us)),
                lat(&g.read_latency, |l| l.p99_9_us),
                lat(&g.write_latency, |l| Some(l.p50_us)),
                lat(&g.write_latency, |l| Some(l.p99_us)),
                g.share_of_median
                    .map(|s| format!("{s:.3}"))
                    .unwrap_or_default(),
            ]);
        }
    }
    crate::output::csv::table(header.then_some(CSV_HEADER), records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::load::report::LeftBehind;
    use crate::commands::load::sample::report;

    #[test]
    fn the_text_says_what_was_measured_where_and_what_was_left() {
        let text = text(&report(false));
        assert!(
            text.starts_with("pveprobe load: storage ceph-vm, profile hci-70-30, 2 worker VMs on 2 nodes, 2 disks of 1.00 GiB each\n"),
            "{text}"
        );
        assert!(text.contains("  CLUSTER       1100 IOPS"), "{text}");
        // pve2's VM at 100 of a median 550 IOPS is marked.
        assert!(text.contains("pve2/102 !"), "{text}");
        assert!(
            text.contains("Every worker VM was destroyed with its disks."),
            "{text}"
        );
        let vms = text_of_existing();
        assert!(
            vms.starts_with("pveprobe load in existing VMs, profile hci-70-30, 2 VMs on 2 nodes, 2 files of 1.00 GiB each\n"),
            "{vms}"
        );
        assert!(!vms.contains("scsihw"), "{vms}");
        assert!(
            vms.contains("The run's directory was removed from every VM."),
            "{vms}"
        );
        let mut left = report(false);
        left.left_behind.push(LeftBehind {
            node: "pve2".into(),
            vmid: 102,
            why: "qm destroy failed".into(),
            command: "ssh root@10.0.0.2 qm destroy 102 --purge --destroy-unreferenced-disks 1"
                .into(),
        });
        let said = super::text(&left);
        assert!(said.contains("LEFT BEHIND"), "{said}");
        assert!(
            said.contains("ssh root@10.0.0.2 qm destroy 102 --purge"),
            "{said}"
        );
        assert_eq!(
            crate::commands::load::run::exit_status(&left),
            crate::error::exit::Exit::NotMeasured
        );
    }

    fn text_of_existing() -> String {
        text(&report(true))
    }

    #[test]
    fn the_csv_has_a_row_for_the_cluster_each_node_and_each_vm() {
        let out = csv(&report(false), true);
        let rows: Vec<&str> = out.lines().collect();
        assert_eq!(rows.len(), 1 + 1 + 2 + 2, "{out}");
        assert!(
            rows[0].starts_with("timestamp,storage,profile,phase,subject"),
            "{out}"
        );
        assert!(rows[1].contains(",70-30,cluster,,1100,"), "{out}");
        assert!(rows[5].contains(",vm,pve2/102,100,"), "{out}");
        // The read p99 in ms: every read took 500 us.
        assert!(rows[1].contains(",0.500,"), "{out}");
    }

    #[test]
    fn the_picture_has_a_line_per_node_and_a_targets_curve() {
        use crate::commands::load::target::{LatencyTarget, TargetResult, TargetStep};
        let plain = picture(&report(false)).unwrap();
        assert!(plain.contains("IOPS per node, each second"), "{plain}");
        assert!(
            plain.contains("\npve1\n") && plain.contains("\npve2\n"),
            "{plain}"
        );
        assert!(!plain.contains("IOPS against"), "{plain}");
        // Two lines (the axes' strokes are thinner).
        let lines = |svg: &str| svg.matches("stroke-width=\"2\" points=").count();
        assert_eq!(lines(&plain), 2, "{plain}");
        let mut r = report(false);
        let step = |depth, iops, latency_us| TargetStep {
            depth,
            iops,
            latency_us,
            within: latency_us <= 5000.0,
        };
        let steps = vec![
            step(1, 500.0, 900.0),
            step(2, 1100.0, 2000.0),
            step(4, 1200.0, 9000.0),
        ];
        r.target = Some(TargetResult {
            target: LatencyTarget::parse("p99=5ms").unwrap(),
            best: Some(steps[1]),
            steps,
            ended: "crossed".into(),
        });
        let target = picture(&r).unwrap();
        for text in [
            "IOPS against p99 latency",
            "QD 1",
            "QD 4",
            " target p99 &lt;= 5 ms",
            "highest within p99 &lt;= 5 ms: 1100 IOPS at 2 in flight per worker",
        ] {
            assert!(target.contains(text), "{text} in {target}");
        }
        // The curve and the two nodes, and the target's mark.
        assert_eq!(lines(&target), 3, "{target}");
        assert!(target.contains("stroke=\"#111111\""), "{target}");
    }
}
