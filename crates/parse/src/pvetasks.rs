//! PVE's list of active tasks, `/var/log/pve/tasks/active`: one line per
//! task, `UPID SAVED` while it runs (or until PVE notices its process is
//! gone), `UPID SAVED ENDTIME STATUS` once it ended (pve-common's
//! `PVE::INotify::read_active_workers` and `write_active_workers`). A UPID
//! is `UPID:NODE:PID:PSTART:STARTTIME:TYPE:ID:USER:`, PID, PSTART (the
//! process's start in clock ticks since boot) and STARTTIME (epoch
//! seconds) in hex (`PVE::UPID::decode`).

use serde::{Deserialize, Serialize};

/// The active file is small (PVE keeps the running tasks and the last few
/// ended ones); a larger one is read up to here.
pub const MAX_BYTES: usize = 1 << 20;

/// One task of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub upid: String,
    pub node: String,
    pub pid: u32,
    /// The process's start, clock ticks since boot (`/proc/PID/stat`'s
    /// field 22): with the PID, which process runs the task.
    pub pstart: u64,
    /// When the task started, epoch seconds.
    pub starttime: i64,
    /// `vzdump`, `qmigrate`, `qmmove`, ...
    pub kind: String,
    /// The guest or object it is about (`103`), may be empty.
    pub id: String,
    pub user: String,
    /// Its end, epoch seconds, once it ended.
    pub endtime: Option<i64>,
    /// `OK`, `WARNINGS: 1`, an error: once it ended.
    pub status: Option<String>,
}

impl Task {
    /// Whether the list says it still runs (no end written yet); whether
    /// its process still lives is the reader's to check.
    pub fn listed_running(&self) -> bool {
        self.endtime.is_none()
    }
}

fn hex<T: TryFrom<u64>>(s: &str, min: usize, max: usize) -> Option<T> {
    if !(min..=max).contains(&s.len()) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    T::try_from(u64::from_str_radix(s, 16).ok()?).ok()
}

fn node_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A UPID's parts, or `None` for what is not one.
pub fn upid(text: &str) -> Option<Task> {
    let rest = text.strip_prefix("UPID:")?.strip_suffix(':')?;
    let parts: Vec<&str> = rest.split(':').collect();
    let [node, pid, pstart, start, kind, id, user] = parts.as_slice() else {
        return None;
    };
    let plain = |s: &str| !s.chars().any(char::is_whitespace);
    if !node_name_ok(node) || kind.is_empty() || user.is_empty() {
        return None;
    }
    if ![kind, id, user].iter().all(|s| plain(s)) {
        return None;
    }
    Some(Task {
        upid: text.to_string(),
        node: node.to_string(),
        pid: hex(pid, 8, 8)?,
        pstart: hex(pstart, 8, 9)?,
        starttime: hex(start, 8, 8)?,
        kind: kind.to_string(),
        id: id.to_string(),
        user: user.to_string(),
        endtime: None,
        status: None,
    })
}

/// Every task line of the active file; a line that is none is passed
/// over, as PVE warns and passes over it.
pub fn active(text: &str) -> Vec<Task> {
    text.lines().filter_map(active_line).collect()
}

fn active_line(line: &str) -> Option<Task> {
    let (upid_text, rest) = line.split_once(|c: char| c.is_whitespace())?;
    let mut task = upid(upid_text)?;
    let (saved, rest) = match rest.split_once(|c: char| c.is_whitespace()) {
        Some((s, r)) => (s, Some(r)),
        None => (rest, None),
    };
    if saved != "0" && saved != "1" {
        return None;
    }
    if let Some(rest) = rest {
        let (end, status) = match rest.split_once(|c: char| c.is_whitespace()) {
            Some((e, s)) => (e, Some(s.trim())),
            None => (rest, None),
        };
        if end.len() != 8 || !end.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        task.endtime = Some(hex(end, 8, 8)?);
        task.status = status.filter(|s| !s.is_empty()).map(str::to_string);
    }
    Some(task)
}

/// A replication job that is running: PVE's replication state
/// (`/var/lib/pve-manager/pve-replication-state.json`, `{VMID: {"local/
/// TARGET": {...}}}`) keeps a running job's `pid` and `ptime` (its
/// process's start, as a task's PSTART) until it ends
/// (pve-guest-common's `PVE::ReplicationState::record_job_start`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replication {
    pub vmid: u32,
    /// The node it replicates to.
    pub target: String,
    pub pid: u32,
    pub ptime: u64,
    /// When this run started, epoch seconds.
    pub last_try: Option<i64>,
}

/// The replication jobs the state says are running; none for what is no
/// such state.
pub fn replications(text: &str) -> Vec<Replication> {
    let Ok(serde_json::Value::Object(vms)) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let num = |v: &serde_json::Value| -> Option<u64> {
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    };
    let mut out = Vec::new();
    for (vmid, targets) in &vms {
        let (Ok(vmid), Some(targets)) = (vmid.parse::<u32>(), targets.as_object()) else {
            continue;
        };
        for (tid, state) in targets {
            let (Some(pid), Some(ptime)) = (
                state.get("pid").and_then(num),
                state.get("ptime").and_then(num),
            ) else {
                continue;
            };
            let Ok(pid) = u32::try_from(pid) else {
                continue;
            };
            out.push(Replication {
                vmid,
                target: tid.strip_prefix("local/").unwrap_or(tid).to_string(),
                pid,
                ptime,
                last_try: state
                    .get("last_try")
                    .and_then(num)
                    .and_then(|t| i64::try_from(t).ok()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::fixture;

    #[test]
    fn a_running_backup_and_two_ended_tasks() {
        let tasks = active(&fixture("pve/tasks-active", "vzdump-running.txt"));
        assert_eq!(tasks.len(), 3, "{tasks:?}");
        let b = &tasks[0];
        assert_eq!(
            (b.kind.as_str(), b.id.as_str(), b.node.as_str()),
            ("vzdump", "103", "mini-pve-0")
        );
        assert_eq!(
            (b.pid, b.pstart, b.starttime),
            (851962, 65597267, 1637122234)
        );
        assert!(b.listed_running());
        let apt = &tasks[1];
        assert_eq!(apt.kind, "aptupdate");
        assert_eq!(apt.id, "");
        assert_eq!(apt.endtime, Some(1637122161));
        assert_eq!(apt.status.as_deref(), Some("OK"));
        assert!(!apt.listed_running());
    }

    #[test]
    fn what_is_no_task_line_is_passed_over() {
        for bad in [
            "",
            "UPID:pve1:0000ABCD:00001234:61947EE2:vzdump:100:root@pam:",
            "UPID:pve1:0000ABCD:00001234:61947EE2:vzdump:100:root@pam: 2",
            "UPID:pve1:ABCD:00001234:61947EE2:vzdump:100:root@pam: 1",
            "UPID:-pve1:0000ABCD:00001234:61947EE2:vzdump:100:root@pam: 1",
            "UPID:pve1:0000ABCD:00001234:61947EE2::100:root@pam: 1",
            "UPID:pve1:0000ABCD:00001234:61947EE2:vzdump:100:root@pam 1",
            "UPID:pve1:0000ABCD:00001234:61947EE2:vzdump:100:root@pam: 1 6194806 OK",
            "pve1:0000ABCD:00001234:61947EE2:vzdump:100:root@pam: 1",
        ] {
            assert!(active(bad).is_empty(), "{bad:?}");
        }
        // A nine-digit process start, as on a host up long enough.
        let long = active("UPID:pve1:0000ABCD:1E0A3F2C1:61947EE2:qmigrate:100:root@pam: 0\n");
        assert_eq!(long[0].pstart, 0x1E0A3F2C1);
    }

    #[test]
    fn a_running_replication_has_its_process() {
        let r = replications(&fixture("pve/replication-state", "one-running.json"));
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].vmid, r[0].target.as_str()), (100, "pve2"));
        assert_eq!((r[0].pid, r[0].ptime), (2716845, 311559416));
        assert_eq!(r[0].last_try, Some(1733385600));
        for bad in ["", "[]", "{\"x\": {}}", "{\"100\": 5}", "not json"] {
            assert!(replications(bad).is_empty(), "{bad}");
        }
    }
}
