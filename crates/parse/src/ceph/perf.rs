//! `ceph tell osd.N perf dump`: an OSD's own counters, of which `pveprobe
//! ceph` reads the latencies of the operations it served. Each is a
//! time average, `{"avgcount": N, "sum": SECONDS, "avgtime": ...}`,
//! counted since the daemon started: a job's latency is the difference
//! of two dumps (sum over count).
//!
//! - `osd.op_w_latency`, `op_r_latency`: client writes and reads, from
//!   receipt to reply (the replicas' sub-operations included);
//! - `osd.subop_w_latency`: writes done for a primary on another OSD;
//! - BlueStore's transaction commit: `bluestore.commit_lat` up to Pacific,
//!   `bluestore.txc_commit_lat` from Quincy on (ceph/ceph
//!   `src/os/bluestore/BlueStore.cc`); `bluestore.kv_sync_lat` in both.
//!   A memstore OSD has no `bluestore` section: those are `None`.

use serde_json::Value;

use super::{CephOutputError, json, num};

/// A time average: operations counted and the seconds they took.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimeAvg {
    pub count: u64,
    pub sum_s: f64,
}

impl TimeAvg {
    /// What happened between `before` and this; `None` when the counter
    /// went back (the daemon restarted).
    pub fn since(self, before: TimeAvg) -> Option<TimeAvg> {
        let count = self.count.checked_sub(before.count)?;
        let sum_s = self.sum_s - before.sum_s;
        (sum_s >= 0.0 || count == 0).then_some(TimeAvg {
            count,
            sum_s: sum_s.max(0.0),
        })
    }

    /// The mean in milliseconds; `None` without an operation.
    pub fn mean_ms(self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_s * 1000.0 / self.count as f64)
    }
}

/// The counters `pveprobe ceph` reads of one OSD.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OsdCounters {
    pub op_w: Option<TimeAvg>,
    pub op_r: Option<TimeAvg>,
    pub subop_w: Option<TimeAvg>,
    pub commit: Option<TimeAvg>,
    pub kv_sync: Option<TimeAvg>,
}

impl OsdCounters {
    /// Each counter's change between `before` and this.
    pub fn since(&self, before: &OsdCounters) -> OsdCounters {
        let d = |a: Option<TimeAvg>, b: Option<TimeAvg>| a?.since(b?);
        OsdCounters {
            op_w: d(self.op_w, before.op_w),
            op_r: d(self.op_r, before.op_r),
            subop_w: d(self.subop_w, before.subop_w),
            commit: d(self.commit, before.commit),
            kv_sync: d(self.kv_sync, before.kv_sync),
        }
    }
}

fn time_avg(v: Option<&Value>) -> Option<TimeAvg> {
    let v = v?;
    let count = num(v.get("avgcount")?)?;
    let sum_s = num(v.get("sum")?)?;
    (count >= 0.0 && count.fract() == 0.0 && count < 1.8e19 && sum_s.is_finite() && sum_s >= 0.0)
        .then_some(TimeAvg {
            count: count as u64,
            sum_s,
        })
}

/// An OSD's `perf dump`. Err unless it has an `osd` section.
pub fn perf_dump(text: &str) -> Result<OsdCounters, CephOutputError> {
    let what = "ceph tell osd.N perf dump";
    let v = json(what, text)?;
    let osd = v
        .get("osd")
        .filter(|o| o.is_object())
        .ok_or(CephOutputError::Shape {
            what,
            expected: "an object with an `osd` section",
        })?;
    let store = v.get("bluestore");
    let bluestore = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| time_avg(store.and_then(|s| s.get(*n))))
    };
    Ok(OsdCounters {
        op_w: time_avg(osd.get("op_w_latency")),
        op_r: time_avg(osd.get("op_r_latency")),
        subop_w: time_avg(osd.get("subop_w_latency")),
        commit: bluestore(&["txc_commit_lat", "commit_lat"]),
        kv_sync: bluestore(&["kv_sync_lat"]),
    })
}

/// `ceph health detail -f json`'s `SLOW_OPS`: the OSDs it names
/// (`osd.3`), from its summary and detail messages. Empty when healthy.
pub fn slow_ops_osds(text: &str) -> Result<Vec<i64>, CephOutputError> {
    let what = "ceph health detail";
    let v = json(what, text)?;
    let checks = v
        .get("checks")
        .filter(|c| c.is_object())
        .ok_or(CephOutputError::Shape {
            what,
            expected: "an object with `checks`",
        })?;
    let Some(slow) = checks.get("SLOW_OPS") else {
        return Ok(Vec::new());
    };
    let mut messages: Vec<&str> = Vec::new();
    messages.extend(slow.pointer("/summary/message").and_then(Value::as_str));
    for d in slow
        .get("detail")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        messages.extend(d.get("message").and_then(Value::as_str));
    }
    let mut ids: Vec<i64> = Vec::new();
    for m in messages {
        // "... daemons [osd.1,osd.3] have slow ops." and "osd.3 has slow ops"
        for part in m.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')) {
            if let Some(id) = part.strip_prefix("osd.").and_then(|n| n.parse().ok()) {
                ids.push(id);
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/ceph")
            .join(rel);
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn the_latencies_of_pacific_and_of_quincy_on() {
        let mem = perf_dump(&fixture("pacific/tell-osd-perf-dump-memstore.json")).unwrap();
        let w = mem.op_w.unwrap();
        assert_eq!(w.count, 12);
        assert!((w.mean_ms().unwrap() - 154.675).abs() < 0.01);
        assert_eq!(mem.op_r.unwrap().mean_ms(), None);
        assert_eq!((mem.commit, mem.kv_sync), (None, None));
        let blue = perf_dump(&fixture("pacific/tell-osd-perf-dump-bluestore.json")).unwrap();
        assert_eq!(blue.commit.unwrap().count, 193);
        assert_eq!(blue.kv_sync.unwrap().count, 176);
        let quincy = perf_dump(&fixture("quincy/tell-osd-perf-dump-bluestore.json")).unwrap();
        assert_eq!(quincy, blue);
        assert!(perf_dump("{\"bluestore\": {}}").is_err());
        assert!(perf_dump("not json").is_err());
    }

    #[test]
    fn a_job_is_the_difference_of_two_dumps() {
        let before = TimeAvg {
            count: 10,
            sum_s: 1.0,
        };
        let after = TimeAvg {
            count: 30,
            sum_s: 3.0,
        };
        let d = after.since(before).unwrap();
        assert_eq!(d.count, 20);
        assert!((d.mean_ms().unwrap() - 100.0).abs() < 1e-9);
        // A restarted daemon's counters went back: no figure.
        assert_eq!(before.since(after), None);
    }

    #[test]
    fn slow_ops_name_their_osds() {
        assert!(
            slow_ops_osds(&fixture("pacific/health-detail.json"))
                .unwrap()
                .is_empty()
        );
        let slow = r#"{"status":"HEALTH_WARN","checks":{"SLOW_OPS":{"severity":"HEALTH_WARN",
            "summary":{"message":"12 slow ops, oldest one blocked for 35 sec, daemons [osd.1,osd.3] have slow ops.","count":12},
            "detail":[],"muted":false}}}"#;
        assert_eq!(slow_ops_osds(slow).unwrap(), [1, 3]);
    }
}
