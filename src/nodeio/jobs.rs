//! What else moves the node's disks besides its guests: PVE's tasks that
//! copy disks (backups, migrations, restores, clones, disk moves) from its
//! active task list, running replication jobs from PVE's replication
//! state, a ZFS scrub or resilver (`zpool status`), Ceph's recovery,
//! backfill and scrubs (`ceph status`), a running `fstrim`. All read-only;
//! the files every interval, the tools and the process list less often
//! (each read costs: `ceph` is a Python program).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pveprobe_parse::ceph::ClusterActivity;
use pveprobe_parse::pvetasks;
use serde::{Deserialize, Serialize};

use super::behind::Behind;
use crate::sys::child::{self, ChildOptions};
use crate::sys::host::Host;

/// PVE's active task list.
pub const TASKS_FILE: &str = "/var/log/pve/tasks/active";
/// PVE's replication state.
pub const REPLICATION_STATE: &str = "/var/lib/pve-manager/pve-replication-state.json";
/// Present while the ZFS module is loaded.
pub const ZFS_KSTAT: &str = "/proc/spl/kstat/zfs";

/// `zpool status` and the process list at most this often.
pub const ZFS_EVERY: Duration = Duration::from_secs(10);
/// `ceph status` at most this often.
pub const CEPH_EVERY: Duration = Duration::from_secs(30);
/// How long a tool may take.
const TOOL_LIMIT: Duration = Duration::from_secs(10);

/// PVE's task types that read or write guest disks: the type, what the
/// job is, and whose it is.
const DISK_TASKS: [(&str, &str, &str); 11] = [
    ("vzdump", "backup", "guest"),
    ("qmigrate", "migration", "VM"),
    ("vzmigrate", "migration", "CT"),
    ("qmrestore", "restore", "VM"),
    ("vzrestore", "restore", "CT"),
    ("qmclone", "clone", "VM"),
    ("vzclone", "clone", "CT"),
    ("qmmove", "disk move", "VM"),
    ("move_volume", "volume move", "CT"),
    ("imgcopy", "disk copy", "VM"),
    ("qmtemplate", "template", "VM"),
];

/// One thing besides the guests that reads or writes the node's storage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OtherJob {
    /// `backup`, `migration`, `replication`, `scrub`, `resilver`,
    /// `ceph recovery`, `ceph backfill`, `ceph scrub`, `fstrim`, ...
    pub kind: String,
    /// What it works on: `guest 103`, `VM 101 to pve2`, `pool tank`, `Ceph`.
    pub what: String,
    /// How far or how fast, as its tool says it.
    pub detail: Option<String>,
    /// When it started (RFC 3339), where known.
    pub since: Option<String>,
    /// PVE's task ID, for a PVE task (`UPID:pve1:...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upid: Option<String>,
}

/// Where the jobs are read.
#[derive(Debug, Clone)]
pub struct JobSources {
    pub tasks_file: PathBuf,
    pub replication_state: PathBuf,
    /// Whose presence says the ZFS module is loaded.
    pub zfs_kstat: PathBuf,
    /// A Ceph configuration whose presence says this node is in a Ceph
    /// cluster (PVE's `/etc/pve/ceph.conf`).
    pub ceph_conf: PathBuf,
}

impl JobSources {
    pub fn under_pve_dir(pve_dir: &std::path::Path) -> Self {
        JobSources {
            tasks_file: PathBuf::from(TASKS_FILE),
            replication_state: PathBuf::from(REPLICATION_STATE),
            zfs_kstat: PathBuf::from(ZFS_KSTAT),
            ceph_conf: pve_dir.join("ceph.conf"),
        }
    }
}

/// The jobs a tool tells, and why a tool told nothing.
type Told = (Vec<OtherJob>, Vec<String>);

/// Reads the jobs: the files every interval, the costly parts on threads
/// of their own at their own pace (a hanging tool never holds the view).
#[derive(Debug)]
pub struct JobReader {
    slow: Behind<Told>,
    /// The node's sectors discarded when the process list was last read
    /// for `fstrim` (`u64::MAX` before the first).
    trim_scanned: Arc<AtomicU64>,
    ceph: Behind<Told>,
    /// Why a tool gave nothing, once each.
    pub notes: Vec<String>,
}

impl Default for JobReader {
    fn default() -> Self {
        JobReader {
            slow: Behind::new(ZFS_EVERY),
            trim_scanned: Arc::new(AtomicU64::new(u64::MAX)),
            ceph: Behind::new(CEPH_EVERY),
            notes: Vec::new(),
        }
    }
}

impl JobReader {
    /// Everything that runs now (the tools' part as last read).
    /// `discarded`: the node's sectors discarded so far (`/proc/diskstats`),
    /// where the kernel counts them. `fstrim` moves disks only by
    /// discarding, so the process list (every process's name, a thousand
    /// files on a busy node) is read for it only when discards have moved
    /// since it was last read, or when they are not counted.
    pub fn read(&mut self, host: &Host, src: &JobSources, discarded: Option<u64>) -> Vec<OtherJob> {
        let mut out = tasks(host, src);
        out.extend(replications(host, src));
        let (h, zfs) = (host.clone(), host.exists(&src.zfs_kstat));
        let scanned = Arc::clone(&self.trim_scanned);
        let (jobs, notes) = self.slow.poll(move || {
            let mut told = (trims(&h, discarded, &scanned), Vec::new());
            if zfs {
                match child::run("zpool", &["status"], &tool_opts(TOOL_LIMIT)) {
                    Ok(done) => told.0.extend(zfs_jobs(&done.stdout_text())),
                    Err(e) => told.1.push(format!("zpool status: {e}")),
                }
            }
            told
        });
        out.extend(jobs.iter().cloned());
        let mut said = notes.clone();
        if host.exists(&src.ceph_conf) {
            let conf = src.ceph_conf.to_string_lossy().into_owned();
            let (jobs, notes) = self.ceph.poll(move || {
                // Ceph's own limit too: a child left when top ends stops by itself.
                let args = [
                    "-c",
                    &conf,
                    "--connect-timeout",
                    "10",
                    "status",
                    "-f",
                    "json",
                ];
                let ran = child::run("ceph", &args, &tool_opts(TOOL_LIMIT));
                match ran.map_err(|e| e.to_string()).and_then(|done| {
                    pveprobe_parse::ceph::cluster_activity(&done.stdout_text())
                        .map_err(|e| e.to_string())
                }) {
                    Ok(a) => (ceph_jobs(&a), Vec::new()),
                    Err(e) => (Vec::new(), vec![format!("ceph status: {e}")]),
                }
            });
            out.extend(jobs.iter().cloned());
            said.extend(notes.iter().cloned());
        }
        for n in said {
            if !self.notes.contains(&n) {
                self.notes.push(n);
            }
        }
        out
    }
}

/// How a read-only tool is run: within `limit`, in a process group of
/// its own (top's Ctrl-C is top's).
pub(super) fn tool_opts(limit: Duration) -> ChildOptions<'static> {
    ChildOptions::limit(limit).own_group()
}

/// Whether process `pid` is the one that started at `ticks` (a PID may
/// have been reused since PVE wrote it).
fn alive(host: &Host, pid: u32, ticks: u64) -> bool {
    host.read(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| pveprobe_parse::procpid::start_ticks(&s))
        == Some(ticks)
}

fn since(epoch: i64) -> Option<String> {
    jiff::Timestamp::from_second(epoch)
        .ok()
        .map(|t| t.to_string())
}

/// The disk tasks PVE lists as running whose process still runs.
fn tasks(host: &Host, src: &JobSources) -> Vec<OtherJob> {
    let Ok(text) =
        crate::sys::host::read_capped(&host.path(&src.tasks_file), pvetasks::MAX_BYTES as u64)
    else {
        return Vec::new();
    };
    pvetasks::active(&text)
        .into_iter()
        .filter(|t| t.listed_running())
        .filter_map(|t| {
            let (_, kind, whose) = DISK_TASKS.iter().find(|(k, ..)| *k == t.kind)?;
            alive(host, t.pid, t.pstart).then(|| OtherJob {
                kind: kind.to_string(),
                what: if t.id.is_empty() {
                    "guests".into()
                } else {
                    format!("{whose} {}", t.id)
                },
                detail: Some(format!("PVE task {} by {}", t.kind, t.user)),
                since: since(t.starttime),
                upid: Some(t.upid.clone()),
            })
        })
        .collect()
}

/// The replication jobs running now.
fn replications(host: &Host, src: &JobSources) -> Vec<OtherJob> {
    let Ok(text) = crate::sys::host::read_capped(&host.path(&src.replication_state), 1 << 20)
    else {
        return Vec::new();
    };
    pvetasks::replications(&text)
        .into_iter()
        .filter(|r| alive(host, r.pid, r.ptime))
        .map(|r| OtherJob {
            kind: "replication".into(),
            what: format!("guest {} to {}", r.vmid, r.target),
            detail: None,
            since: r.last_try.and_then(since),
            upid: None,
        })
        .collect()
}

/// `fstrim` processes, looked for only when the node's discards moved
/// since `scanned` (then set to them), or when they are not counted.
fn trims(host: &Host, discarded: Option<u64>, scanned: &AtomicU64) -> Vec<OtherJob> {
    match discarded {
        Some(now) if scanned.swap(now, Ordering::Relaxed) == now => Vec::new(),
        _ => fstrims(host),
    }
}

/// `fstrim` processes (a timer's weekly run trims every filesystem).
fn fstrims(host: &Host) -> Vec<OtherJob> {
    let n = host
        .list("/proc")
        .into_iter()
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        .filter(|p| {
            host.read(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.trim() == "fstrim")
        })
        .count();
    (n > 0)
        .then(|| OtherJob {
            kind: "fstrim".into(),
            what: "filesystems".into(),
            detail: (n > 1).then(|| format!("{n} processes")),
            since: None,
            upid: None,
        })
        .into_iter()
        .collect()
}

/// Scrubs and resilvers under way.
pub fn zfs_jobs(text: &str) -> Vec<OtherJob> {
    pveprobe_parse::zfs::scans(text)
        .into_iter()
        .map(|s| {
            let mut detail = Vec::new();
            if let Some(p) = s.done_pct {
                detail.push(format!("{p:.1}% done"));
            }
            if let Some(r) = s.rate {
                detail.push(format!("at {r}"));
            }
            if let Some(t) = s.to_go {
                detail.push(format!("{t} to go"));
            }
            OtherJob {
                kind: s.kind,
                what: format!("pool {}", s.pool),
                detail: (!detail.is_empty()).then(|| detail.join(", ")),
                since: None,
                upid: None,
            }
        })
        .collect()
}

/// Ceph's recovery, backfill and scrubs, each with its PGs.
pub fn ceph_jobs(a: &ClusterActivity) -> Vec<OtherJob> {
    let mut out = Vec::new();
    let rate = a
        .recovering_bytes_per_sec
        .filter(|r| *r > 0.0)
        .map(|r| format!(", {:.1} MiB/s", r / 1048576.0))
        .unwrap_or_default();
    for (kind, now, waiting, extra) in [
        (
            "ceph recovery",
            a.recovering_pgs,
            a.recovery_wait_pgs,
            rate.as_str(),
        ),
        ("ceph backfill", a.backfilling_pgs, a.backfill_wait_pgs, ""),
    ] {
        if now > 0 {
            out.push(OtherJob {
                kind: kind.into(),
                what: "Ceph".into(),
                detail: Some(format!("{now} PGs, {waiting} waiting{extra}")),
                since: None,
                upid: None,
            });
        }
    }
    if a.scrubbing_pgs > 0 {
        out.push(OtherJob {
            kind: "ceph scrub".into(),
            what: "Ceph".into(),
            detail: Some(format!(
                "{} PGs ({} deep)",
                a.scrubbing_pgs, a.deep_scrubbing_pgs
            )),
            since: None,
            upid: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(path: &str) -> String {
        std::fs::read_to_string(format!("{}/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// A `/proc/PID/stat` line in Linux 6.x's 52 fields, started at `ticks`.
    fn stat_line(pid: u32, comm: &str, ticks: u64) -> String {
        format!(
            "{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194624 18341 0 0 0 108 411 0 0 20 0 1 0 {ticks} \
             50192384 2537 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 17 1 0 0 0 0 0 0 0 0 0 \
             0 0 0 0"
        )
    }

    #[test]
    fn a_listed_task_counts_only_while_its_process_runs() {
        let root = tempfile::tempdir().unwrap();
        let host = Host::with_root(root.path());
        let src = JobSources::under_pve_dir(std::path::Path::new("/etc/pve"));
        let tasks_file = host.path(&src.tasks_file);
        std::fs::create_dir_all(tasks_file.parent().unwrap()).unwrap();
        std::fs::write(&tasks_file, fixture("pve/tasks-active/vzdump-running.txt")).unwrap();
        // No such process: PVE has not noticed the end yet; not a job.
        assert!(tasks(&host, &src).is_empty());
        let proc_dir = root.path().join("proc/851962");
        std::fs::create_dir_all(&proc_dir).unwrap();
        let stat = |ticks: u64| stat_line(851962, "task UPID:mini", ticks);
        // Another process with that PID since.
        std::fs::write(proc_dir.join("stat"), stat(7)).unwrap();
        assert!(tasks(&host, &src).is_empty());
        std::fs::write(proc_dir.join("stat"), stat(65597267)).unwrap();
        let jobs = tasks(&host, &src);
        assert_eq!(jobs.len(), 1, "{jobs:?}");
        assert_eq!(
            (jobs[0].kind.as_str(), jobs[0].what.as_str()),
            ("backup", "guest 103")
        );
        assert_eq!(jobs[0].since.as_deref(), Some("2021-11-17T04:10:34Z"));
    }

    #[test]
    fn a_running_replication_and_fstrim() {
        let root = tempfile::tempdir().unwrap();
        let host = Host::with_root(root.path());
        let src = JobSources::under_pve_dir(std::path::Path::new("/etc/pve"));
        let state = host.path(&src.replication_state);
        std::fs::create_dir_all(state.parent().unwrap()).unwrap();
        std::fs::write(&state, fixture("pve/replication-state/one-running.json")).unwrap();
        let p = root.path().join("proc/2716845");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(
            p.join("stat"),
            stat_line(2716845, "pvescheduler", 311559416),
        )
        .unwrap();
        std::fs::write(p.join("comm"), "pvescheduler\n").unwrap();
        let jobs = replications(&host, &src);
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].what, "guest 100 to pve2");
        assert!(fstrims(&host).is_empty());
        let t = root.path().join("proc/4242");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("comm"), "fstrim\n").unwrap();
        assert_eq!(fstrims(&host)[0].kind, "fstrim");
        // Looked for only when discards moved since the last look, or
        // when the kernel does not count them.
        let scanned = AtomicU64::new(u64::MAX);
        assert_eq!(trims(&host, Some(100), &scanned).len(), 1);
        assert!(trims(&host, Some(100), &scanned).is_empty());
        assert_eq!(trims(&host, Some(164), &scanned).len(), 1);
        assert_eq!(trims(&host, None, &scanned).len(), 1);
    }

    #[test]
    fn scrubs_resilvers_and_ceph_as_jobs() {
        let z = zfs_jobs(&fixture("zfs-status/scrub-2.2.txt"));
        assert_eq!(z[0].what, "pool backup2");
        assert_eq!(
            z[0].detail.as_deref(),
            Some("34.8% done, at 3.23G/s, 1 days 18:56:16 to go")
        );
        let a =
            pveprobe_parse::ceph::cluster_activity(&fixture("ceph/pacific/status-recovering.json"))
                .unwrap();
        let c = ceph_jobs(&a);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].kind, "ceph recovery");
        assert!(
            c[0].detail
                .as_deref()
                .unwrap()
                .starts_with("1 PGs, 31 waiting, ")
        );
        let healthy =
            pveprobe_parse::ceph::cluster_activity(&fixture("ceph/pacific/status-healthy.json"))
                .unwrap();
        assert!(ceph_jobs(&healthy).is_empty());
    }
}
