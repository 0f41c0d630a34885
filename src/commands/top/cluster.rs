//! `top --worst --cluster`: every node's record asked over ssh, as
//! `cluster` reaches the nodes (`timeout ... pveprobe top --worst ...
//! --output-format json` on each, at once), and the cluster's worst
//! moments ranked together, each with its node. A node without a
//! recorder, or one that does not answer, is named with why; the others'
//! answers stand.

use std::time::Duration;

use super::worst::{NodeAnswer, WorstReport};
use crate::commands::common::work::Work;
use crate::nodes::remote;
use crate::nodes::{NodesError, Reach, load_nodes};
use crate::sys::interrupt::Interrupt;

/// How long a node may take to answer, s.
pub const NODE_LIMIT: Duration = Duration::from_secs(60);

/// A node's report, or its status word and why.
type Answer = Result<WorstReport, (String, Option<String>)>;

/// The cluster's window.
#[derive(Debug, Clone)]
pub struct ClusterWorstRequest {
    pub reach: Reach,
    /// `--since` as given (the nodes parse it).
    pub since: String,
    pub episodes: usize,
}

impl ClusterWorstRequest {
    fn line(&self) -> String {
        let args = [
            "top",
            "--worst",
            "--since",
            &self.since,
            "--episodes",
            &self.episodes.to_string(),
            "--output-format",
            "json",
        ]
        .map(String::from);
        remote::timed_line(&self.reach.remote_command, &args, NODE_LIMIT)
    }
}

impl Work for ClusterWorstRequest {
    type Report = WorstReport;
    type Error = NodesError;

    fn run(&self, _: &Interrupt) -> Result<WorstReport, NodesError> {
        let (members, _) = load_nodes(&self.reach)?;
        let ssh = self.reach.ssh(&[]);
        let line = self.line();
        let answers: Vec<(String, Answer)> = std::thread::scope(|s| {
            let asked: Vec<_> = members
                .nodes
                .iter()
                .map(|node| {
                    let (ssh, line) = (&ssh, &line);
                    s.spawn(move || {
                        if !node.contacted() {
                            let why = "offline in pmxcfs's members list: not contacted";
                            return (node.name.clone(), Err(("offline".into(), Some(why.into()))));
                        }
                        let run = crate::sys::child::run(
                            remote::SSH,
                            &ssh.args(node, line, false),
                            &remote::ssh_opts(NODE_LIMIT + Duration::from_secs(10)),
                        );
                        let got = remote::answer::<WorstReport>(&run, NODE_LIMIT, "top --worst")
                            .map_err(|(status, detail)| (status.word().to_string(), detail));
                        (node.name.clone(), got)
                    })
                })
                .collect();
            asked
                .into_iter()
                .map(|h| h.join().expect("a node's thread"))
                .collect()
        });
        let mut report = WorstReport {
            schema_version: 1,
            kind: "top-worst".into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            node: "cluster".into(),
            ..WorstReport::default()
        };
        for (node, got) in answers {
            match got {
                Ok(r) => {
                    report.intervals += r.intervals;
                    if report.since.is_empty() {
                        (report.since, report.until) = (r.since.clone(), r.until.clone());
                    }
                    report.episodes.extend(r.episodes.into_iter().map(|mut e| {
                        e.node = Some(node.clone());
                        e
                    }));
                    report
                        .notes
                        .extend(r.notes.into_iter().map(|n| format!("{node}: {n}")));
                    report.nodes.push(NodeAnswer {
                        node,
                        status: "ok".into(),
                        detail: None,
                        intervals: r.intervals,
                    });
                }
                Err((status, detail)) => {
                    let no_record = detail
                        .as_deref()
                        .is_some_and(|d| d.contains("no record here"));
                    report.nodes.push(NodeAnswer {
                        node,
                        status: if no_record {
                            "no record".into()
                        } else {
                            status
                        },
                        detail,
                        intervals: 0,
                    });
                }
            }
        }
        report.episodes.sort_by(|a, b| {
            b.severity
                .total_cmp(&a.severity)
                .then(a.start.cmp(&b.start))
        });
        report.episodes.truncate(self.episodes);
        for (i, e) in report.episodes.iter_mut().enumerate() {
            e.rank = i + 1;
        }
        Ok(report)
    }
}
