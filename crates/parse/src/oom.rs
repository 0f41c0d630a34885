//! The OOM killer's own words in the kernel's log, as `/dev/kmsg` gives
//! each record (`PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;MESSAGE`,
//! Documentation/ABI/testing/dev-kmsg): the summary line
//! (`oom-kill:constraint=...,oom_memcg=...,task_memcg=...,task=...,pid=...,uid=...`,
//! mm/oom_kill.c's `dump_oom_summary`) and the kill itself (`Out of
//! memory: Killed process PID (COMM) total-vm:...kB, anon-rss:...kB, ...`,
//! or `Memory cgroup out of memory: ...` where a cgroup's limit was hit,
//! `__oom_kill_process`).

/// A `/dev/kmsg` record's header and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub priority: u8,
    pub sequence: u64,
    /// Microseconds since boot (CLOCK_MONOTONIC).
    pub since_boot_us: u64,
    pub message: &'a str,
}

/// One record of `/dev/kmsg`; its continuation lines (` KEY=VALUE`) and
/// anything not of the kernel's form give `None`.
pub fn record(line: &str) -> Option<Record<'_>> {
    let (header, message) = line.split_once(';')?;
    let mut fields = header.split(',');
    let priority = fields.next()?.parse::<u32>().ok()? & 7;
    let sequence = fields.next()?.parse().ok()?;
    let since_boot_us = fields.next()?.parse().ok()?;
    Some(Record {
        priority: priority as u8,
        sequence,
        since_boot_us,
        message: message.trim_end_matches('\n'),
    })
}

/// `oom-kill:...`: why, and whose cgroup.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    /// `CONSTRAINT_NONE` (the node was short), `CONSTRAINT_MEMCG` (a
    /// cgroup's limit), `CONSTRAINT_CPUSET`, `CONSTRAINT_MEMORY_POLICY`.
    pub constraint: String,
    /// The cgroup whose limit was hit (absent when the node was short).
    pub oom_memcg: Option<String>,
    /// The victim's cgroup: which guest it was.
    pub task_memcg: Option<String>,
    pub task: String,
    pub pid: u32,
}

/// The summary line's fields; `None` for any other message.
pub fn summary(message: &str) -> Option<Summary> {
    let rest = message.strip_prefix("oom-kill:")?;
    let mut s = Summary::default();
    // `nodemask=(null)` and `cpuset=/` hold no comma; `task=` is a comm,
    // which may: it is taken up to `,pid=`.
    let (fields, pid_uid) = rest.rsplit_once(",pid=")?;
    s.pid = pid_uid.split(',').next()?.parse().ok()?;
    let (fields, task) = fields.split_once(",task=")?;
    s.task = task.to_string();
    for field in fields.split(',') {
        let Some((key, value)) = field.split_once('=') else {
            continue;
        };
        match key {
            "constraint" => s.constraint = value.to_string(),
            "oom_memcg" => s.oom_memcg = Some(value.to_string()),
            "task_memcg" => s.task_memcg = Some(value.to_string()),
            _ => {}
        }
    }
    (!s.constraint.is_empty()).then_some(s)
}

/// `... Killed process PID (COMM) total-vm:NkB, anon-rss:NkB, ...`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Killed {
    /// Its cgroup's limit was hit (`Memory cgroup out of memory`), not the
    /// node's memory.
    pub by_cgroup: bool,
    pub pid: u32,
    pub comm: String,
    pub total_vm_kib: u64,
    pub anon_rss_kib: u64,
    pub file_rss_kib: u64,
    pub shmem_rss_kib: u64,
}

/// The kill line's figures; `None` for any other message.
pub fn killed(message: &str) -> Option<Killed> {
    let (why, rest) = message.split_once(": Killed process ")?;
    let (pid, rest) = rest.split_once(" (")?;
    let (comm, rest) = rest.rsplit_once(") ")?;
    let kib = |key: &str| {
        rest.split([',', ' '])
            .find_map(|w| w.strip_prefix(key)?.strip_suffix("kB")?.parse().ok())
    };
    Some(Killed {
        by_cgroup: why.ends_with("Memory cgroup out of memory"),
        pid: pid.parse().ok()?,
        comm: comm.to_string(),
        total_vm_kib: kib("total-vm:")?,
        anon_rss_kib: kib("anon-rss:")?,
        file_rss_kib: kib("file-rss:").unwrap_or(0),
        shmem_rss_kib: kib("shmem-rss:").unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_memcg_kill_is_read_from_its_records() {
        // A python3 killed in a 32 MiB v1 memory cgroup on this project's
        // machine (kernel 6.18), read from /dev/kmsg: fixtures/README.md.
        let text = std::fs::read_to_string(format!(
            "{}/../../fixtures/guest/kmsg-oom-memcg-v1",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let records: Vec<Record> = text.lines().filter_map(record).collect();
        assert_eq!(records.len(), text.lines().count());
        let s = records.iter().find_map(|r| summary(r.message)).unwrap();
        assert_eq!(
            s,
            Summary {
                constraint: "CONSTRAINT_MEMCG".into(),
                oom_memcg: Some("/pveprobe-oomcapture".into()),
                task_memcg: Some("/pveprobe-oomcapture".into()),
                task: "python3".into(),
                pid: 11023,
            }
        );
        let (at, k) = records
            .iter()
            .find_map(|r| Some((r.since_boot_us, killed(r.message)?)))
            .unwrap();
        assert_eq!(at, 3_965_809_384);
        assert_eq!(
            k,
            Killed {
                by_cgroup: true,
                pid: 11023,
                comm: "python3".into(),
                total_vm_kib: 221_368,
                anon_rss_kib: 32_512,
                file_rss_kib: 6_672,
                shmem_rss_kib: 0,
            }
        );
    }

    #[test]
    fn a_node_wide_kill_of_a_vm_names_its_scope() {
        // A VM killed when the node ran short, composed in mm/oom_kill.c's
        // formats (`global_oom` where no cgroup's limit was hit; kvm is
        // QEMU's comm on PVE): no such kill was provoked on this machine.
        let s = summary("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=qemu.slice,mems_allowed=0-1,global_oom,task_memcg=/qemu.slice/104.scope,task=kvm,pid=4242,uid=0").unwrap();
        assert_eq!(s.constraint, "CONSTRAINT_NONE");
        assert_eq!(s.oom_memcg, None);
        assert_eq!(s.task_memcg.as_deref(), Some("/qemu.slice/104.scope"));
        assert_eq!((s.task.as_str(), s.pid), ("kvm", 4242));
        let k = killed("Out of memory: Killed process 4242 (kvm) total-vm:75497472kB, anon-rss:67108864kB, file-rss:4096kB, shmem-rss:0kB, UID:0 pgtables:140000kB oom_score_adj:0").unwrap();
        assert!(!k.by_cgroup);
        assert_eq!(k.anon_rss_kib, 67_108_864);
        // A comm with a parenthesis and a comma is still read whole.
        let odd = killed("Out of memory: Killed process 7 (a) b, c) total-vm:1kB, anon-rss:2kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:0kB oom_score_adj:0").unwrap();
        assert_eq!(odd.comm, "a) b, c");
        assert_eq!(
            summary("oom-kill:constraint=X,task=a,b,pid=9,uid=0")
                .unwrap()
                .task,
            "a,b"
        );
        assert_eq!(record(" SUBSYSTEM=memory"), None);
        assert_eq!(killed("python3 invoked oom-killer: gfp_mask=0xcc0"), None);
    }
}
