//! The OOM killer's victims, named: the kernel's log (`/dev/kmsg`, read
//! from the moment sampling starts, never before, never blocking) gives
//! each kill's summary and victim; its cgroup (`/qemu.slice/104.scope`,
//! `/lxc/105`) or its PID (a VM's QEMU known from the readings) names the
//! guest. Read-only: the log is read, never cleared.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read as _;

use pveprobe_parse::{cgroup, oom};
use serde::{Deserialize, Serialize};

/// A kill the kernel's OOM killer made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OomKill {
    /// When (RFC 3339, from the record's time since boot).
    pub at: String,
    /// The guest it was: `vm` or `ct`, and its ID; none for another process.
    pub kind: Option<String>,
    pub id: Option<u32>,
    pub pid: u32,
    /// The process's name (`kvm`, `qemu-system-x86`).
    pub comm: String,
    /// What it held when killed, MiB (anonymous, file and shared memory).
    pub rss_mib: f64,
    /// `CONSTRAINT_NONE`: the node was short; `CONSTRAINT_MEMCG`: a
    /// cgroup's limit (`memcg`).
    pub constraint: String,
    pub memcg: Option<String>,
    /// The victim's own cgroup.
    pub task_memcg: Option<String>,
}

impl OomKill {
    /// `VM 104`, `CT 105`, or the process.
    pub fn label(&self) -> String {
        match (self.kind.as_deref(), self.id) {
            (Some("ct"), Some(id)) => format!("CT {id}"),
            (Some(_), Some(id)) => format!("VM {id}"),
            _ => format!("process {} ({})", self.pid, self.comm),
        }
    }
}

/// `/dev/kmsg`, opened at the end of what it holds: each read gives the
/// records written since.
#[derive(Debug, Default)]
pub struct KernelLog {
    file: Option<File>,
}

impl KernelLog {
    /// The real kernel's log from now on; none where it cannot be read
    /// (not root, `dmesg_restrict`, a fixture host): the kills are then
    /// counted (`/proc/vmstat`) but not named.
    pub fn open() -> KernelLog {
        use std::os::unix::fs::OpenOptionsExt as _;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/kmsg")
            .ok()
            .and_then(|f| {
                use std::os::fd::AsFd as _;
                nix::unistd::lseek(f.as_fd(), 0, nix::unistd::Whence::SeekEnd).ok()?;
                Some(f)
            });
        KernelLog { file }
    }

    /// The records written since the last read, at most `MAX` of them.
    pub fn read_new(&mut self) -> Vec<String> {
        const MAX: usize = 100_000;
        let Some(f) = self.file.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        // One record a read; a record is at most 8 KiB (PRINTKRB_RECORD_MAX).
        let mut buf = vec![0u8; 8192];
        while out.len() < MAX {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.push(String::from_utf8_lossy(&buf[..n]).into_owned()),
                // Records overwritten before they were read: on to the next.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(_) => break,
            }
        }
        out
    }
}

/// The kills in `records`, each named: by its cgroup where PVE's layout
/// names the guest, else by `pids` (each running VM's QEMU and each
/// container's processes known to the readings); `wall_of` turns a
/// record's time since boot into RFC 3339.
pub fn kills(
    records: &[String],
    pids: &BTreeMap<u32, (String, u32)>,
    wall_of: impl Fn(u64) -> String,
) -> Vec<OomKill> {
    let mut out = Vec::new();
    let mut last: Option<oom::Summary> = None;
    for line in records {
        let Some(r) = oom::record(line) else {
            continue;
        };
        if let Some(s) = oom::summary(r.message) {
            last = Some(s);
            continue;
        }
        let Some(k) = oom::killed(r.message) else {
            continue;
        };
        let summary = last.take().filter(|s| s.pid == k.pid);
        let by_cgroup = summary
            .as_ref()
            .and_then(|s| s.task_memcg.as_deref())
            .and_then(cgroup::guest_of)
            .map(|g| match g {
                cgroup::Guest::Vm(id) => ("vm".to_string(), id),
                cgroup::Guest::Container(id) => ("ct".to_string(), id),
            });
        let guest = by_cgroup.or_else(|| pids.get(&k.pid).cloned());
        out.push(OomKill {
            at: wall_of(r.since_boot_us),
            kind: guest.as_ref().map(|g| g.0.clone()),
            id: guest.map(|g| g.1),
            pid: k.pid,
            comm: k.comm.clone(),
            rss_mib: (k.anon_rss_kib + k.file_rss_kib + k.shmem_rss_kib) as f64 / 1024.0,
            constraint: summary
                .as_ref()
                .map(|s| s.constraint.clone())
                .unwrap_or_else(|| {
                    if k.by_cgroup {
                        "CONSTRAINT_MEMCG".into()
                    } else {
                        "CONSTRAINT_NONE".into()
                    }
                }),
            memcg: summary.as_ref().and_then(|s| s.oom_memcg.clone()),
            task_memcg: summary.and_then(|s| s.task_memcg),
        });
    }
    out
}

/// The wall time of a kernel log record's time since boot (the kernel's
/// log clock is CLOCK_MONOTONIC's), as RFC 3339.
pub fn wall_of(since_boot_us: u64) -> String {
    let now = jiff::Timestamp::now();
    let Ok(mono) = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) else {
        return now.to_string();
    };
    let mono_us = mono.tv_sec() * 1_000_000 + mono.tv_nsec() / 1000;
    let ago = mono_us.saturating_sub(since_boot_us as i64).max(0);
    jiff::Timestamp::from_microsecond(now.as_microsecond() - ago)
        .unwrap_or(now)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_kill_in_a_memory_cgroup_is_named_by_its_pid() {
        // The capture (fixtures/README.md): python3 in a v1 memory cgroup
        // of 32 MiB, not a guest's.
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/guest/kmsg-oom-memcg-v1"
        ))
        .unwrap();
        let records: Vec<String> = text.lines().map(str::to_string).collect();
        let none = kills(&records, &BTreeMap::new(), |us| us.to_string());
        assert_eq!(none.len(), 1, "{none:?}");
        let k = &none[0];
        assert_eq!((k.kind.as_deref(), k.comm.as_str()), (None, "python3"));
        assert_eq!(k.constraint, "CONSTRAINT_MEMCG");
        assert_eq!(k.memcg.as_deref(), Some("/pveprobe-oomcapture"));
        assert!(k.rss_mib > 20.0 && k.rss_mib < 40.0, "{k:?}");
        assert!(k.label().starts_with("process "), "{}", k.label());
        // The same PID known as a VM's QEMU names the VM.
        let pids = BTreeMap::from([(k.pid, ("vm".to_string(), 104))]);
        let named = kills(&records, &pids, |us| us.to_string());
        assert_eq!(named[0].label(), "VM 104");
        // A kill on a PVE node names the guest by its cgroup.
        let pve = [
            "6,10,5000,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/qemu.slice/105.scope,task=kvm,pid=4242,uid=0".to_string(),
            "3,11,5001,-;Out of memory: Killed process 4242 (kvm) total-vm:9000000kB, anon-rss:8388608kB, file-rss:1024kB, shmem-rss:0kB, UID:0 pgtables:17000kB oom_score_adj:0".to_string(),
        ];
        let k = &kills(&pve, &BTreeMap::new(), |us| us.to_string())[0];
        assert_eq!((k.label().as_str(), k.at.as_str()), ("VM 105", "5001"));
        assert_eq!(k.constraint, "CONSTRAINT_NONE");
        assert_eq!(k.rss_mib, 8193.0);
    }
}
