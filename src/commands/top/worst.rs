//! `top --worst`: the record's worst moments, merged into episodes and
//! ranked, each with the disk, the guests and their share of its
//! operations, the jobs that ran and the hints that applied. Ranked by
//! the frames' summaries alone (no frame opened); only the episodes shown
//! are opened.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::hint::Hint;
use crate::nodeio::jobs::OtherJob;
use crate::nodeio::recorded;
use crate::nodeio::sample::TopSample;
use crate::store::read::{Kept, Scanned};

use super::causes::{Cause, OOM_SEVERITY, causes, slowest_disk};

/// An interval is bad from here: the node's IO delay or PSI I/O full, %,
/// a guest drive's mean latency, ms, a vCPU's ready share, % or PSI
/// memory full, % (the hints' thresholds, docs/hints.md); and whenever the
/// OOM killer killed.
pub const IOWAIT_PCT: f64 = 10.0;
pub const IO_FULL_PCT: f64 = 10.0;
pub const GUEST_MS: f64 = crate::nodeio::hints::GUEST_WAITS_MS;
pub const READY_PCT: f64 = crate::nodeio::guest_hints::READY_PCT;
pub const MEMORY_FULL_PCT: f64 = crate::nodeio::guest_hints::MEMORY_FULL_PCT;

/// Intervals this far apart or closer are one episode, s.
pub const MERGE_S: f64 = 60.0;
/// The frames opened at most per episode (spread over it).
const OPENED: usize = 600;

/// `--worst`'s answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorstReport {
    pub schema_version: u32,
    /// Always `top-worst`.
    pub kind: String,
    /// Which pveprobe ranked it (`--cluster` asks the same on every node).
    pub pveprobe_version: String,
    pub node: String,
    /// The window asked for (RFC 3339).
    pub since: String,
    pub until: String,
    /// Intervals in the window, and the shards they were read from.
    pub intervals: usize,
    pub episodes: Vec<Episode>,
    /// The worst interval, when no episode passed the thresholds.
    pub worst_interval: Option<Peak>,
    pub notes: Vec<String>,
    /// `--cluster`: each node asked, and how it answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeAnswer>,
}

/// A node `--cluster` asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeAnswer {
    pub node: String,
    /// `ok`, or why it gave no answer (`no record`, `unreachable`, ...).
    pub status: String,
    pub detail: Option<String>,
    /// Its intervals in the window.
    pub intervals: usize,
}

/// How bad an interval or an episode's worst was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    pub at: String,
    pub iowait_pct: Option<f64>,
    pub io_full_pct: Option<f64>,
    /// The slowest guest drive's mean latency, ms.
    pub guest_ms: Option<f64>,
    /// The worst vCPU's ready share, %, PSI memory full, %, and the OOM
    /// killer's kills (none in a store written before them).
    #[serde(default)]
    pub ready_pct: Option<f64>,
    #[serde(default)]
    pub memory_full_pct: Option<f64>,
    #[serde(default)]
    pub oom_kills: Option<f64>,
}

/// Bad intervals close together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub rank: usize,
    /// `--cluster`: the node it was on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub start: String,
    pub end: String,
    pub seconds: f64,
    pub intervals: usize,
    /// Each interval's severity (its worst figure over its threshold)
    /// times its seconds, summed: what it is ranked by.
    pub severity: f64,
    pub peak: Peak,
    /// The disk busiest over the episode, and its mean utilisation, %.
    pub disk: Option<String>,
    pub disk_util_pct: Option<f64>,
    /// The guests whose figures made it bad, whatever disk they are on:
    /// the ones killed first, then the worst over its threshold first.
    #[serde(default)]
    pub causes: Vec<Cause>,
    /// The guests on it (or, with no disk known, the slowest), busiest first.
    pub guests: Vec<EpisodeGuest>,
    pub jobs: Vec<OtherJob>,
    pub hints: Vec<Hint>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EpisodeGuest {
    /// `VM 101 scsi0`.
    pub guest: String,
    pub name: Option<String>,
    /// Its operations a second over the episode.
    pub iops: f64,
    /// Its share of the disk's operations, %.
    pub share_pct: Option<f64>,
    /// Its mean read and write latency over the episode, ms.
    pub read_ms: Option<f64>,
    pub write_ms: Option<f64>,
}

/// A summary's figure as the f32 it was kept as says it (61.5, not
/// 61.499996185302734).
fn num(x: f32) -> Option<f64> {
    (!x.is_nan()).then(|| x.to_string().parse().unwrap_or(f64::from(x)))
}

/// An interval's severity: its worst figure over that figure's threshold
/// (1 is the threshold).
pub fn severity(k: &Kept) -> f64 {
    let s = &k.summary;
    [
        num(s.iowait_pct).map(|x| x / IOWAIT_PCT),
        num(s.io_full_pct).map(|x| x / IO_FULL_PCT),
        num(s.guest_ms).map(|x| x / GUEST_MS),
        num(s.ready_pct).map(|x| x / READY_PCT),
        num(s.memory_full_pct).map(|x| x / MEMORY_FULL_PCT),
        num(s.oom_kills).filter(|k| *k >= 1.0).map(|_| OOM_SEVERITY),
    ]
    .into_iter()
    .flatten()
    .fold(0.0, f64::max)
}

fn rfc3339(us: i64) -> String {
    jiff::Timestamp::from_microsecond(us)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

fn peak(k: &Kept) -> Peak {
    Peak {
        at: rfc3339(k.time_us),
        iowait_pct: num(k.summary.iowait_pct),
        io_full_pct: num(k.summary.io_full_pct),
        guest_ms: num(k.summary.guest_ms),
        ready_pct: num(k.summary.ready_pct),
        memory_full_pct: num(k.summary.memory_full_pct),
        oom_kills: num(k.summary.oom_kills),
    }
}

/// The episodes of `scanned` (index ranges into its entries), worst first.
pub fn episodes(scanned: &Scanned) -> Vec<(std::ops::Range<usize>, f64)> {
    let e = &scanned.entries;
    let mut out: Vec<(std::ops::Range<usize>, f64)> = Vec::new();
    let mut last_bad: Option<usize> = None;
    for i in 0..e.len() {
        let sev = severity(&e[i]);
        if sev < 1.0 {
            continue;
        }
        // The first interval of the window has no start: it counts a
        // second, so an episode of it alone still ranks.
        let secs = match i {
            0 => 1.0,
            _ => ((e[i].time_us - e[i - 1].time_us) as f64 / 1e6).min(MERGE_S),
        };
        let joined =
            last_bad.is_some_and(|j| (e[i].time_us - e[j].time_us) as f64 / 1e6 <= MERGE_S);
        match out.last_mut() {
            Some((r, total)) if joined => {
                r.end = i + 1;
                *total += sev * secs;
            }
            _ => out.push((i..i + 1, sev * secs)),
        }
        last_bad = Some(i);
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.start.cmp(&b.0.start)));
    out
}

/// The report: the `top` worst episodes, each opened and described.
pub fn report(scanned: &Scanned, node: &str, since: i64, until: i64, top: usize) -> WorstReport {
    let mut r = WorstReport {
        schema_version: 1,
        kind: "top-worst".into(),
        pveprobe_version: env!("CARGO_PKG_VERSION").into(),
        node: node.into(),
        since: rfc3339(since),
        until: rfc3339(until),
        intervals: scanned.entries.len(),
        notes: scanned.notes.clone(),
        ..WorstReport::default()
    };
    let found = episodes(scanned);
    if found.is_empty() {
        r.worst_interval = scanned
            .entries
            .iter()
            .max_by(|a, b| severity(a).total_cmp(&severity(b)))
            .map(peak);
    }
    for (rank, (range, sev)) in found.into_iter().take(top).enumerate() {
        let mut ep = describe(scanned, range, &mut r.notes);
        ep.rank = rank + 1;
        ep.severity = sev;
        r.episodes.push(ep);
    }
    r
}

/// One episode opened: its disk, guests, jobs and hints.
fn describe(scanned: &Scanned, range: std::ops::Range<usize>, notes: &mut Vec<String>) -> Episode {
    let e = &scanned.entries;
    let worst = range
        .clone()
        .max_by(|a, b| severity(&e[*a]).total_cmp(&severity(&e[*b])))
        .unwrap_or(range.start);
    let first_secs = match range.start {
        0 => 0.0,
        i => ((e[i].time_us - e[i - 1].time_us) as f64 / 1e6).min(MERGE_S),
    };
    let mut ep = Episode {
        start: rfc3339(e[range.start].time_us - (first_secs * 1e6) as i64),
        end: rfc3339(e[range.end - 1].time_us),
        seconds: (e[range.end - 1].time_us - e[range.start].time_us) as f64 / 1e6 + first_secs,
        intervals: range.len(),
        peak: peak(&e[worst]),
        ..Episode::default()
    };
    let step = range.len().div_ceil(OPENED).max(1);
    let mut samples: Vec<TopSample> = Vec::new();
    for i in range.clone().step_by(step).chain(std::iter::once(worst)) {
        match scanned.payload(i).and_then(|p| recorded::decode(&p)) {
            Ok(s) => samples.push(s),
            Err(why) => notes.push(format!("{}: {why}", rfc3339(e[i].time_us))),
        }
    }
    let Some(worst_sample) = samples.pop() else {
        return ep;
    };
    samples.push(worst_sample.clone());
    ep.causes = causes(&samples);
    // The disk: the most utilised over the episode of those a guest is on
    // (a loop or zvol under a guest, not the disk below its file), else of
    // all.
    let mut util: BTreeMap<&str, (f64, f64, bool)> = BTreeMap::new();
    for s in &samples {
        for d in &s.disks {
            let u = util.entry(&d.name).or_default();
            u.0 += d.util_pct * s.seconds;
            u.1 += d.iops() * s.seconds;
            u.2 |= !d.guests.is_empty();
        }
    }
    let total_secs: f64 = samples.iter().map(|s| s.seconds).sum::<f64>().max(1e-9);
    // A guest drive that made it bad names its own disk (a guest on Ceph
    // or NFS has none here: then no disk is named for it).
    let slow_disk = slowest_disk(&samples);
    let disk = util
        .iter()
        .filter(|(n, _)| slow_disk.as_deref().is_none_or(|d| d == **n))
        .max_by(|a, b| a.1.2.cmp(&b.1.2).then(a.1.0.total_cmp(&b.1.0)))
        .map(|(n, u)| (n.to_string(), (u.0, u.1)));
    ep.disk_util_pct = disk.as_ref().map(|(_, u)| u.0 / total_secs);
    ep.disk = disk.as_ref().map(|(n, _)| n.clone());
    ep.guests = guests(
        &samples,
        disk.as_ref().map(|(n, u)| (n.as_str(), u.1)),
        total_secs,
    );
    for s in &samples {
        for j in &s.jobs {
            if !ep
                .jobs
                .iter()
                .any(|k| k.kind == j.kind && k.what == j.what && k.upid == j.upid)
            {
                ep.jobs.push(j.clone());
            }
        }
    }
    ep.hints = worst_sample.hints;
    ep
}

/// Each guest's operations over the episode, its share of `disk`'s, and
/// its latency weighted by its operations.
fn guests(samples: &[TopSample], disk: Option<(&str, f64)>, secs: f64) -> Vec<EpisodeGuest> {
    #[derive(Default)]
    struct Sum {
        name: Option<String>,
        ops: f64,
        reads: f64,
        writes: f64,
        read_wait: f64,
        write_wait: f64,
    }
    let mut sums: BTreeMap<String, Sum> = BTreeMap::new();
    for s in samples {
        for g in &s.guests {
            let on = match disk {
                Some((d, _)) => g.disk.as_deref() == Some(d),
                None => true,
            };
            if !on {
                continue;
            }
            let x = sums.entry(g.label()).or_default();
            x.name = g.name.clone();
            let (r, w) = (g.read_iops * s.seconds, g.write_iops * s.seconds);
            x.ops += r + w;
            x.reads += r;
            x.writes += w;
            x.read_wait += r * g.read_ms.unwrap_or(0.0);
            x.write_wait += w * g.write_ms.unwrap_or(0.0);
        }
    }
    let mut out: Vec<EpisodeGuest> = sums
        .into_iter()
        .filter(|(_, x)| x.ops > 0.0)
        .map(|(label, x)| EpisodeGuest {
            guest: label,
            name: x.name,
            iops: x.ops / secs,
            share_pct: disk
                .filter(|(_, ops)| *ops > 0.0)
                .map(|(_, ops)| (x.ops / ops * 100.0).min(100.0)),
            read_ms: (x.reads > 0.0).then(|| x.read_wait / x.reads),
            write_ms: (x.writes > 0.0).then(|| x.write_wait / x.writes),
        })
        .collect();
    out.sort_by(|a, b| b.iops.total_cmp(&a.iops));
    out.truncate(5);
    out
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.0}%"))
}

fn ms(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.1} ms"))
}

impl Episode {
    fn guests_line(&self) -> String {
        self.guests
            .iter()
            .map(|g| {
                let name = g
                    .name
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default();
                let share = g
                    .share_pct
                    .map(|s| format!(" {s:.0}% of its ops,"))
                    .unwrap_or_default();
                format!(
                    "{}{name}{share} {:.0} IOPS, read {}, write {}",
                    g.guest,
                    g.iops,
                    ms(g.read_ms),
                    ms(g.write_ms)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn jobs_line(&self) -> String {
        self.jobs
            .iter()
            .map(|j| {
                let mut t = format!("{} {}", j.kind, j.what);
                if let Some(d) = &j.detail {
                    t += &format!(" ({d})");
                }
                if let Some(u) = &j.upid {
                    t += &format!(" {u}");
                }
                t
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl crate::output::Document for WorstReport {
    const FORMATS: &'static [crate::output::Format] = &[
        crate::output::Format::Text,
        crate::output::Format::Json,
        crate::output::Format::JsonPretty,
        crate::output::Format::Csv,
    ];

    fn text(&self) -> String {
        let mut out = format!(
            "Worst moments on {}, {} to {} ({} intervals recorded)\n",
            self.node,
            super::when::local(&self.since),
            super::when::local(&self.until),
            self.intervals
        );
        if self.episodes.is_empty() {
            out += &format!(
                "No interval passed the thresholds (IO delay {IOWAIT_PCT}%, PSI I/O full {IO_FULL_PCT}%, a guest drive's mean latency {GUEST_MS} ms, a vCPU ready {READY_PCT}%, PSI memory full {MEMORY_FULL_PCT}%, an OOM kill).\n"
            );
            if let Some(p) = &self.worst_interval {
                out += &format!(
                    "The worst: {}, IO delay {}, PSI full {}, slowest guest drive {}\n",
                    super::when::local(&p.at),
                    pct(p.iowait_pct),
                    pct(p.io_full_pct),
                    ms(p.guest_ms)
                );
            }
        }
        for e in &self.episodes {
            if let Some(n) = &e.node {
                out += &format!("\n{n}:");
            }
            out += &format!(
                "\n#{} {} to {} ({}, {} intervals)\n   worst at {}: IO delay {}, PSI I/O full {}, slowest guest drive {}\n",
                e.rank,
                super::when::local(&e.start),
                super::when::local(&e.end),
                crate::model::human::duration(e.seconds),
                e.intervals,
                super::when::local(&e.peak.at),
                pct(e.peak.iowait_pct),
                pct(e.peak.io_full_pct),
                ms(e.peak.guest_ms),
            );
            let more: Vec<String> = [
                e.peak.ready_pct.map(|r| format!("vCPU ready {r:.0}%")),
                e.peak
                    .memory_full_pct
                    .filter(|m| *m > 0.0)
                    .map(|m| format!("PSI memory full {m:.0}%")),
                e.peak
                    .oom_kills
                    .filter(|k| *k >= 1.0)
                    .map(|k| format!("{k:.0} OOM kill(s)")),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !more.is_empty() {
                out += &format!("   and {}\n", more.join(", "));
            }
            for c in &e.causes {
                out += &format!(
                    "   {}{}: {}\n",
                    c.guest,
                    c.name
                        .as_deref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default(),
                    c.why
                );
            }
            if let Some(d) = &e.disk {
                out += &format!("   disk {d}, {} utilised\n", pct(e.disk_util_pct));
            }
            if !e.guests.is_empty() {
                out += &format!("   guests: {}\n", e.guests_line());
            }
            if !e.jobs.is_empty() {
                out += &format!("   jobs: {}\n", e.jobs_line());
            }
            for h in &e.hints {
                out += &format!("   hint {}: {}\n", h.code, h.sentence());
            }
        }
        for n in &self.nodes {
            out += &format!(
                "node {}: {}{}\n",
                n.node,
                n.status,
                n.detail
                    .as_deref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            );
        }
        for n in &self.notes {
            out += &format!("note: {n}\n");
        }
        out
    }

    fn csv(&self, header: bool) -> String {
        let f = |x: Option<f64>| x.map(|x| format!("{x:.2}")).unwrap_or_default();
        crate::output::csv::table(
            header.then_some(CSV_HEADER),
            self.episodes.iter().map(|e| {
                vec![
                    e.node.clone().unwrap_or_else(|| self.node.clone()),
                    e.rank.to_string(),
                    e.start.clone(),
                    e.end.clone(),
                    format!("{:.0}", e.seconds),
                    format!("{:.1}", e.severity),
                    f(e.peak.iowait_pct),
                    f(e.peak.io_full_pct),
                    f(e.peak.guest_ms),
                    f(e.peak.ready_pct),
                    f(e.peak.memory_full_pct),
                    f(e.peak.oom_kills),
                    e.causes
                        .iter()
                        .map(|c| format!("{}: {}", c.guest, c.why))
                        .collect::<Vec<_>>()
                        .join("; "),
                    e.disk.clone().unwrap_or_default(),
                    e.guests_line(),
                    e.jobs_line(),
                    e.hints
                        .iter()
                        .map(|h| h.code.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                ]
            }),
        )
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(CSV_HEADER.to_vec())
    }
}

const CSV_HEADER: [&str; 17] = [
    "node",
    "rank",
    "start",
    "end",
    "seconds",
    "severity",
    "iowait_peak_pct",
    "io_full_peak_pct",
    "guest_ms_peak",
    "ready_peak_pct",
    "memory_full_peak_pct",
    "oom_kills",
    "causes",
    "disk",
    "guests",
    "jobs",
    "hints",
];
