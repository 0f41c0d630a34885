//! The OSD that drags a pool, whatever makes it slow: around every pool
//! job, each OSD's own counters (`ceph tell osd.N perf dump`, read before
//! and after, their difference the job's), and the OSDs Ceph reported slow
//! operations on right after it (`ceph health detail`'s `SLOW_OPS`). An
//! OSD's own bench (`osd-slow`) sees its disk only; these see everything
//! an operation waited for on that OSD: its node's CPU, its network, its
//! DB device, its replicas. The judgement is the report's
//! (`report::hints::drags_pool`).

use pveprobe_parse::ceph::OsdCounters;
use serde::{Deserialize, Serialize};

use super::*;

/// OSDs read at once.
const AT_ONCE: usize = 16;

/// One OSD's own view of a pool job: what it served and how long each
/// operation took, by its counters' difference over the job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OsdInJob {
    pub id: i64,
    /// Client operations it served as primary during the job (writes for a
    /// writing job, reads for a reading one).
    pub ops: u64,
    /// Their mean latency (`op_w_latency` or `op_r_latency`), ms.
    pub op_ms: Option<f64>,
    /// Writes it did for primaries on other OSDs (`subop_w_latency`), ms.
    pub subop_w_ms: Option<f64>,
    /// BlueStore's transaction commit (`commit_lat`, `txc_commit_lat`), ms.
    pub commit_ms: Option<f64>,
    /// BlueStore's RocksDB sync (`kv_sync_lat`), ms.
    pub kv_sync_ms: Option<f64>,
    /// Named by `SLOW_OPS` right after the job.
    pub slow_ops: bool,
}

/// The counters of `osds` read around each job.
pub struct Watch<'a> {
    tools: &'a CephTools<'a>,
    osds: Vec<i64>,
}

impl<'a> Watch<'a> {
    pub fn new(tools: &'a CephTools<'a>, osds: Vec<i64>) -> Self {
        Watch { tools, osds }
    }

    /// Every watched OSD's counters now, a few at a time; one that does
    /// not answer is left out (its view of the job is missing). Ctrl-C
    /// stops the reads (they write nothing).
    fn counters(&self) -> Vec<(i64, OsdCounters)> {
        let mut out = Vec::new();
        for chunk in self.osds.chunks(AT_ONCE) {
            let read = std::thread::scope(|s| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|id| {
                        s.spawn(move || {
                            let who = format!("osd.{id}");
                            let c = self.tools.call(
                                "ceph",
                                &["tell", &who, "perf", "dump"],
                                READ_LIMIT,
                                true,
                            );
                            let text = c.answer(child::run(c.program, &c.argv, &c.opts)).ok()?;
                            Some((*id, parse::perf_dump(&text).ok()?))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .filter_map(|h| h.join().ok().flatten())
                    .collect::<Vec<_>>()
            });
            out.extend(read);
        }
        out
    }

    /// The OSDs `SLOW_OPS` names now.
    fn slow_ops(&self) -> Vec<i64> {
        {
            let c = self.tools.call(
                "ceph",
                &["health", "detail", "-f", "json"],
                READ_LIMIT,
                false,
            );
            c.answer(child::run(c.program, &c.argv, &c.opts))
        }
        .ok()
        .and_then(|t| parse::slow_ops_osds(&t).ok())
        .unwrap_or_default()
    }

    /// Runs `job` (a `write` one or not) between two readings of the
    /// counters; what each OSD saw of it.
    pub fn around<T>(
        &self,
        write: bool,
        job: impl FnOnce() -> Result<T, CephError>,
    ) -> Result<(T, Vec<OsdInJob>), CephError> {
        if self.osds.is_empty() {
            return Ok((job()?, Vec::new()));
        }
        let before = self.counters();
        let done = job()?;
        let after = self.counters();
        let slow = self.slow_ops();
        Ok((done, in_job(&before, &after, write, &slow)))
    }
}

/// Each OSD read both times, its counters' difference.
pub fn in_job(
    before: &[(i64, OsdCounters)],
    after: &[(i64, OsdCounters)],
    write: bool,
    slow: &[i64],
) -> Vec<OsdInJob> {
    after
        .iter()
        .filter_map(|(id, a)| {
            let (_, b) = before.iter().find(|(i, _)| i == id)?;
            let d = a.since(b);
            let op = if write { d.op_w } else { d.op_r };
            Some(OsdInJob {
                id: *id,
                ops: op.map_or(0, |o| o.count),
                op_ms: op.and_then(|o| o.mean_ms()),
                subop_w_ms: d.subop_w.and_then(|o| o.mean_ms()),
                commit_ms: d.commit.and_then(|o| o.mean_ms()),
                kv_sync_ms: d.kv_sync.and_then(|o| o.mean_ms()),
                slow_ops: slow.contains(id),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pveprobe_parse::ceph::TimeAvg;

    fn counters(w: (u64, f64), subop: (u64, f64)) -> OsdCounters {
        let t = |(count, sum_s)| Some(TimeAvg { count, sum_s });
        OsdCounters {
            op_w: t(w),
            op_r: t((0, 0.0)),
            subop_w: t(subop),
            commit: None,
            kv_sync: None,
        }
    }

    #[test]
    fn a_job_is_what_each_osd_counted_between_the_two_readings() {
        let before = vec![
            (0, counters((100, 1.0), (0, 0.0))),
            (1, counters((5, 0.1), (0, 0.0))),
        ];
        let after = vec![
            (0, counters((300, 3.0), (10, 0.2))),
            (1, counters((105, 50.1), (0, 0.0))),
            // Not read before: no view.
            (2, counters((10, 1.0), (0, 0.0))),
        ];
        let seen = in_job(&before, &after, true, &[1]);
        assert_eq!(seen.len(), 2);
        assert_eq!((seen[0].ops, seen[0].op_ms), (200, Some(10.0)));
        assert_eq!(seen[0].subop_w_ms, Some(20.0));
        assert!(!seen[0].slow_ops);
        assert_eq!((seen[1].ops, seen[1].op_ms), (100, Some(500.0)));
        assert!(seen[1].slow_ops);
        // A reading job reads op_r: none served.
        let reads = in_job(&before, &after, false, &[]);
        assert_eq!((reads[0].ops, reads[0].op_ms), (0, None));
    }
}
