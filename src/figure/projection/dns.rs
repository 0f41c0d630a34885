//! The projection of DNS EXT and DNS INT: the mean time per query over
//! each run, the name servers asked, and what a dead one cost.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::runs;
use super::{Context, Facet, Facts, Project, Projection, Sample, Seen};
use crate::figure::{Field, Figure};
use crate::model::dns::{DnsFigure, servers_over};
use crate::model::printable;

impl Sample for DnsFigure {
    fn value(&self) -> f64 {
        self.mean_ms()
    }
}

/// A DNS line's facts: the search domain, the queries' fate and each server's share.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DnsFacts {
    /// The search domain queried (DNS INT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Query counts over all runs.
    pub queries: DnsCounts,
    /// Each name server asked, in order, over all runs.
    pub servers: Vec<DnsServer>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DnsCounts {
    pub sent: u32,
    pub answered: u32,
    pub timed_out: u32,
    pub refused: u32,
}

/// What one name server did over all runs of a DNS line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DnsServer {
    pub address: String,
    pub sent: u32,
    pub answered: u32,
    pub timed_out: u32,
    pub refused: u32,
    /// Mean ms from query to this server's answer; absent when it answered none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_answer_ms: Option<f64>,
}

impl Facet for DnsFacts {
    fn text(&self, field: Field) -> Option<String> {
        match field {
            Field::Domain => self.domain.clone(),
            _ => None,
        }
    }

    fn details(&self, seen: &Seen) -> String {
        let q = &self.queries;
        let mut out = format!(
            "      queries: {} sent, {} answered, {} timed out, {} refused ({} schedule)\n",
            q.sent, q.answered, q.timed_out, q.refused, seen.dns_schedule
        );
        for s in &self.servers {
            let _ = writeln!(out, "      {}", server_line(s));
        }
        out
    }
}

/// One name server's share of a DNS line: a dead first server is named.
fn server_line(s: &DnsServer) -> String {
    let answers = match s.mean_answer_ms {
        Some(ms) => format!("{} answered (mean {ms:.3} ms)", s.answered),
        None => "none answered".to_string(),
    };
    let mut line = format!("server {}: {} sent, {answers}", s.address, s.sent);
    if s.timed_out > 0 {
        let _ = write!(line, ", {} timed out", s.timed_out);
    }
    if s.refused > 0 {
        let _ = write!(line, ", {} refused", s.refused);
    }
    line
}

/// True when no run got any answer: the line has no figure.
pub fn dead(runs: &[DnsFigure]) -> bool {
    runs.iter().all(DnsFigure::no_answer)
}

impl Project for Vec<DnsFigure> {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        let runs_of = self.as_slice();
        let Some(first) = runs_of.first() else {
            return Projection {
                failed: Some("no name server answered".into()),
                ..Projection::default()
            };
        };
        let domain = first
            .domain
            .as_ref()
            .map(|d| format!(" ({})", printable(d)))
            .unwrap_or_default();
        let diagnostic = diagnostic(figure, runs_of);
        if dead(runs_of) {
            let value = if runs_of.iter().all(|r| r.timed_out == 0) {
                "refused (no DNS server answers there)".to_string()
            } else {
                format!(
                    "timeout (no answer within {:.2} s)",
                    first.timeout.as_secs_f64()
                )
            };
            return Projection {
                line: Some(value + &domain),
                diagnostic,
                failed: Some("no name server answered".into()),
                ..Projection::default()
            };
        }
        let sum = |f: fn(&DnsFigure) -> u32| runs_of.iter().map(f).sum();
        let facts = DnsFacts {
            domain: first.domain.clone(),
            queries: DnsCounts {
                sent: sum(|r| r.queries),
                answered: sum(|r| r.answered),
                timed_out: sum(|r| r.timed_out),
                refused: sum(|r| r.refused),
            },
            servers: servers(runs_of),
        };
        let samples = runs_of.iter().map(Sample::value).collect();
        Projection {
            diagnostic,
            ..runs(figure, samples, Facts::Dns(facts), |v| {
                format!("{v:.2} ms{domain}")
            })
        }
    }
}

/// Each server's counts over all runs.
fn servers(runs: &[DnsFigure]) -> Vec<DnsServer> {
    servers_over(runs)
        .iter()
        .map(|s| DnsServer {
            address: s.addr.ip().to_string(),
            sent: s.sent,
            answered: s.answered,
            timed_out: s.timed_out(),
            refused: s.refused,
            mean_answer_ms: s.mean_answer_ms(),
        })
        .collect()
}

/// Queries that got no answer at all, then each server that answered none
/// of its queries: a dead first server costs every query its wait even
/// when a later server answers them all.
fn diagnostic(line: Figure, runs: &[DnsFigure]) -> Option<String> {
    let first = runs.first()?;
    let sum = |f: fn(&DnsFigure) -> u32| runs.iter().map(f).sum::<u32>();
    let (queries, timed_out, refused) =
        (sum(|r| r.queries), sum(|r| r.timed_out), sum(|r| r.refused));
    let mut parts = Vec::new();
    if timed_out + refused > 0 {
        let servers: Vec<String> = first
            .servers
            .iter()
            .map(|s| s.addr.ip().to_string())
            .collect();
        parts.push(format!(
            "{} of {queries} queries got no answer from {} ({timed_out} timed out after {:.2} s, {refused} refused)",
            timed_out + refused,
            servers.join(", "),
            first.timeout.as_secs_f64(),
        ));
    }
    let dead: Vec<String> = servers_over(runs)
        .iter()
        .filter(|s| s.sent > 0 && s.answered == 0 && first.servers.len() > 1)
        .map(|s| format!("{} answered none of its {} queries", s.addr.ip(), s.sent))
        .collect();
    if !dead.is_empty() && timed_out + refused < queries {
        parts.push(format!(
            "name server {}; the mean includes the waits for it",
            dead.join(", name server ")
        ));
    }
    (!parts.is_empty()).then(|| format!("{}: {}", line.label(), parts.join("; ")))
}
