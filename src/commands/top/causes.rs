//! The guests that made a `--worst` episode bad, whatever disk they are
//! on: each one the OOM killer killed first, then each vCPU ready and each
//! guest drive slow over its threshold, worst first; and the disk of the
//! slowest drive.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::nodeio::guest_hints::READY_PCT;
use crate::nodeio::hints::GUEST_WAITS_MS as GUEST_MS;
use crate::nodeio::sample::TopSample;

/// An interval with a kill is this bad: always an episode, ranked first.
pub const OOM_SEVERITY: f64 = 1000.0;

/// A guest that made an episode bad, and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// `VM 104`, `VM 101 scsi0`, `CT 105`.
    pub guest: String,
    pub name: Option<String>,
    /// `killed by the OOM killer at ...`, `vCPU ready 34%`, `writes 159 ms on loop3`.
    pub why: String,
    /// Its worst figure over its threshold (1 is the threshold).
    pub severity: f64,
}

/// The guests whose figures passed a threshold in `samples`: each kill,
/// then each guest's worst vCPU ready and each drive's worst latency,
/// worst first.
pub(super) fn causes(samples: &[TopSample]) -> Vec<Cause> {
    let mut killed: Vec<Cause> = Vec::new();
    let mut worst: BTreeMap<String, Cause> = BTreeMap::new();
    let mut keep = |c: Cause| {
        let e = worst.entry(c.guest.clone()).or_default();
        if c.severity > e.severity {
            *e = c;
        }
    };
    for s in samples {
        for k in s.node_use.kills.iter().filter(|k| k.id.is_some()) {
            if !killed.iter().any(|c| c.guest == k.label()) {
                killed.push(Cause {
                    guest: k.label(),
                    name: None,
                    why: format!(
                        "killed by the OOM killer at {} ({} PID {}, {:.0} MiB)",
                        super::when::local(&k.at),
                        k.comm,
                        k.pid,
                        k.rss_mib
                    ),
                    severity: OOM_SEVERITY,
                });
            }
        }
        for g in &s.guest_use {
            if let Some(r) = g.cpu.ready_pct.filter(|r| *r >= READY_PCT) {
                keep(Cause {
                    guest: g.label(),
                    name: g.name.clone(),
                    why: format!("vCPU ready {r:.0}% of an interval"),
                    severity: r / READY_PCT,
                });
            }
        }
        for g in s.guests.iter().filter(|g| g.iops() > 0.0) {
            let ms = g.read_ms.unwrap_or(0.0).max(g.write_ms.unwrap_or(0.0));
            if ms >= GUEST_MS {
                keep(Cause {
                    guest: g.label(),
                    name: g.name.clone(),
                    why: format!(
                        "its operations took {ms:.0} ms{}",
                        g.disk
                            .as_deref()
                            .map(|d| format!(" on {d}"))
                            .unwrap_or_default()
                    ),
                    severity: ms / GUEST_MS,
                });
            }
        }
    }
    let mut rest: Vec<Cause> = worst.into_values().collect();
    rest.sort_by(|a, b| b.severity.total_cmp(&a.severity));
    killed.extend(rest);
    killed.truncate(8);
    killed
}

/// The disk of the slowest guest drive over its threshold in `samples`.
pub(super) fn slowest_disk(samples: &[TopSample]) -> Option<String> {
    samples
        .iter()
        .flat_map(|s| &s.guests)
        .filter(|g| g.iops() > 0.0)
        .map(|g| (g, g.read_ms.unwrap_or(0.0).max(g.write_ms.unwrap_or(0.0))))
        .filter(|(_, ms)| *ms >= GUEST_MS)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .and_then(|(g, _)| g.disk.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodeio::guests::{GuestCpu, GuestUse};
    use crate::nodeio::oom::OomKill;
    use crate::nodeio::sample::{DiskIo, GuestIo};

    /// A node where VM 101 writes at 159 ms a write on loop3 (its drive
    /// held to 100 IOPS), another disk is busier and VM 102's vCPU waits.
    fn night() -> TopSample {
        TopSample {
            guests: vec![GuestIo {
                kind: "vm".into(),
                id: 101,
                name: Some("db".into()),
                drive: Some("scsi0".into()),
                disk: Some("loop3".into()),
                write_iops: 100.0,
                write_ms: Some(159.0),
                ..GuestIo::default()
            }],
            disks: vec![
                DiskIo {
                    name: "loop3".into(),
                    write_iops: 100.0,
                    util_pct: 15.0,
                    guests: vec!["VM 101 scsi0".into()],
                    ..DiskIo::default()
                },
                DiskIo {
                    name: "loop9".into(),
                    util_pct: 90.0,
                    guests: vec!["VM 103 scsi0".into()],
                    ..DiskIo::default()
                },
            ],
            guest_use: vec![GuestUse {
                kind: "vm".into(),
                id: 102,
                cpu: GuestCpu {
                    ready_pct: Some(34.0),
                    ..GuestCpu::default()
                },
                ..GuestUse::default()
            }],
            ..TopSample::default()
        }
    }

    #[test]
    fn an_episode_names_the_guests_that_made_it_bad_whatever_their_disk() {
        let s = night();
        let c = causes(std::slice::from_ref(&s));
        let named: Vec<(&str, &str)> = c
            .iter()
            .map(|c| (c.guest.as_str(), c.why.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("VM 101 scsi0", "its operations took 159 ms on loop3"),
                ("VM 102", "vCPU ready 34% of an interval"),
            ]
        );
        // The slow drive names its own disk, not the busier one.
        assert_eq!(
            slowest_disk(std::slice::from_ref(&s)).as_deref(),
            Some("loop3")
        );
        // A kill comes first, whatever the rest.
        let mut killed = s;
        killed.node_use.kills = vec![OomKill {
            at: "2026-12-06T03:12:05Z".into(),
            kind: Some("vm".into()),
            id: Some(104),
            pid: 4242,
            comm: "kvm".into(),
            rss_mib: 8192.0,
            ..OomKill::default()
        }];
        let c = causes(&[killed]);
        assert_eq!(c[0].guest, "VM 104");
        assert!(
            c[0].why.starts_with("killed by the OOM killer at "),
            "{}",
            c[0].why
        );
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn an_episodes_causes_and_peak_cross_to_the_cluster_whole() {
        // `--worst --cluster` reads each node's answer back as a report:
        // the whole guest's figures and causes must come through.
        use super::super::worst::{Episode, Peak, WorstReport};
        let report = WorstReport {
            intervals: 3,
            episodes: vec![Episode {
                rank: 1,
                peak: Peak {
                    ready_pct: Some(34.0),
                    memory_full_pct: Some(12.5),
                    oom_kills: Some(1.0),
                    ..Peak::default()
                },
                causes: causes(&[night()]),
                ..Episode::default()
            }],
            ..WorstReport::default()
        };
        let line = serde_json::to_string(&report).unwrap();
        let back: WorstReport = serde_json::from_str(&line).unwrap();
        assert_eq!(back, report);
        assert_eq!(back.episodes[0].causes.len(), 2);
    }
}
