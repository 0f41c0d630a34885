//! What pveprobe reads of a process: for `qualify`, of one that holds a
//! device open, to name it:
//! its parent (`/proc/PID/status`), its arguments (`/proc/PID/cmdline`),
//! and the guest it runs: a VM's QEMU (`/usr/bin/kvm -id 100 ...`, as
//! qemu-server starts it; or PVE's pidfile `/var/run/qemu-server/100.pid`)
//! or a container's `lxc-start -F -n 101`; for `top`, when a PVE task's
//! process started (`/proc/PID/stat`), to know it is still that task's,
//! and its own resident set (`/proc/PID/statm`).
//!
//! `stat` and `statm` are procfs-core's `Stat` and `StatM`. Kept of
//! pveprobe's own: `status`'s `PPid:` (procfs-core's `Status` wants the
//! whole file, and `qualify` needs one line of it) and `cmdline` (a NUL
//! split, which procfs-core leaves to its live reader).

/// The process start (clock ticks since boot) in `/proc/PID/stat`: field
/// 22, read by procfs-core's `Stat`. Only a line of the kernel's form
/// reaches it (`PID (COMM) S ...`): procfs-core slices before the `(` and
/// after the last `)` unchecked.
pub fn start_ticks(stat: &str) -> Option<u64> {
    Some(kernel_stat(stat)?.starttime)
}

/// `/proc/PID/stat` by procfs-core, for a line of the kernel's form only.
fn kernel_stat(stat: &str) -> Option<procfs_core::process::Stat> {
    let line = stat.trim();
    let (pid, _) = line.split_once(" (")?;
    let close = line.rfind(')')?;
    if !crate::procfs::digits(pid, 10) || !line[close..].starts_with(") ") {
        return None;
    }
    crate::procfs::read(line)
}

/// A process's name, parent and CPU time, of `/proc/PID/stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Its name as the kernel keeps it (15 bytes at most).
    pub comm: String,
    pub ppid: u32,
    /// User and system time so far, in clock ticks.
    pub cpu_ticks: u64,
    /// When it started, in clock ticks after boot: with the PID, which
    /// process it is.
    pub start_ticks: u64,
    /// Its resident set, in pages.
    pub rss_pages: u64,
}

/// [`ProcStat`] of `/proc/PID/stat` (fields 2, 4, 14, 15, 22 and 24), read
/// by procfs-core's `Stat` behind the guard of [`start_ticks`].
pub fn stat(stat: &str) -> Option<ProcStat> {
    let s = kernel_stat(stat)?;
    Some(ProcStat {
        comm: s.comm,
        ppid: u32::try_from(s.ppid).ok()?,
        cpu_ticks: s.utime.checked_add(s.stime)?,
        start_ticks: s.starttime,
        rss_pages: s.rss,
    })
}

/// The resident set in pages, of `/proc/PID/statm` (procfs-core's `StatM`).
pub fn resident_pages(statm: &str) -> Option<u64> {
    let statm: procfs_core::process::StatM = crate::procfs::read(statm)?;
    Some(statm.resident)
}

/// `PPid:` of `/proc/PID/status`.
pub fn ppid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The arguments of `/proc/PID/cmdline` (NUL-separated; a kernel thread's
/// is empty).
pub fn cmdline(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// The last component of a program's path.
fn program(args: &[String]) -> Option<&str> {
    args.first()?.rsplit('/').next()
}

/// The value of option `short`/`long` in `args` (`-n 101`, `-n101`,
/// `--name 101`, `--name=101`).
fn option<'a>(args: &'a [String], short: &str, long: &str) -> Option<&'a str> {
    let mut words = args.iter().skip(1);
    while let Some(w) = words.next() {
        if w == short || w == long {
            return words.next().map(String::as_str);
        }
        if let Some(v) = w.strip_prefix(&format!("{long}=")) {
            return Some(v);
        }
        if short.len() == 2
            && let Some(v) = w.strip_prefix(short).filter(|v| !v.is_empty())
            && !w.starts_with("--")
        {
            return Some(v);
        }
    }
    None
}

/// The VMID of a QEMU process qemu-server started (`kvm -id 100`).
pub fn qemu_vmid(args: &[String]) -> Option<u32> {
    let prog = program(args)?;
    if !(prog == "kvm" || prog.starts_with("qemu-system-") || prog == "qemu") {
        return None;
    }
    let mut words = args.iter().skip(1);
    while let Some(w) = words.next() {
        if w == "-id" {
            return words.next()?.parse().ok();
        }
    }
    None
}

/// The CTID of a container's `lxc-start` (`lxc-start -F -n 101`).
pub fn lxc_ctid(args: &[String]) -> Option<u32> {
    if program(args)? != "lxc-start" {
        return None;
    }
    option(args, "-n", "--name")?.parse().ok()
}

/// The PID in a pidfile (`/var/run/qemu-server/100.pid`: the PID and a
/// newline).
pub fn pidfile_pid(text: &str) -> Option<u32> {
    text.trim().parse().ok()
}

/// A task's scheduler counters (`/proc/PID/task/TID/schedstat`,
/// kernel/sched/stats.c): time on a CPU, time waiting on a run queue
/// (libvirt's `vcpu.N.delay`: a vCPU ready but not running), and the
/// slices run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedStat {
    pub run_ns: u64,
    pub wait_ns: u64,
    pub slices: u64,
}

/// `schedstat`'s three numbers; `None` for anything else.
pub fn schedstat(text: &str) -> Option<SchedStat> {
    let mut words = text.split_ascii_whitespace().map(|w| w.parse::<u64>().ok());
    let s = SchedStat {
        run_ns: words.next()??,
        wait_ns: words.next()??,
        slices: words.next()??,
    };
    words.next().is_none().then_some(s)
}

/// What of a process's memory is resident and what is in swap, KiB
/// (`VmRSS` and `VmSwap` of `/proc/PID/status`; a kernel thread has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcMemory {
    pub rss_kib: u64,
    pub swap_kib: u64,
}

/// `/proc/PID/status`'s `VmRSS` and `VmSwap`; `None` without both.
pub fn memory(status: &str) -> Option<ProcMemory> {
    let kib = |key: &str| {
        status.lines().find_map(|l| {
            let rest = l.strip_prefix(key)?.strip_prefix(':')?;
            let mut w = rest.split_ascii_whitespace();
            let n = w.next()?.parse::<u64>().ok()?;
            (w.next() == Some("kB") && w.next().is_none()).then_some(n)
        })
    };
    Some(ProcMemory {
        rss_kib: kib("VmRSS")?,
        swap_kib: kib("VmSwap")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_processes_resident_and_swapped_memory() {
        let status = crate::testutil::fixture("guest", "proc-pid-status");
        let m = memory(&status).unwrap();
        assert!(m.rss_kib > 0, "{m:?}");
        // Captured on a machine without swap.
        assert_eq!(m.swap_kib, 0);
        // `VmRSSx`, a line cut short, a kernel thread's status: no figure.
        assert_eq!(memory("VmRSSx:\t1 kB\nVmSwap:\t0 kB\n"), None);
        assert_eq!(memory("VmRSS:\t1\nVmSwap:\t0 kB\n"), None);
        assert_eq!(memory("Name:\tkthreadd\nState:\tS (sleeping)\n"), None);
        assert_eq!(
            memory("VmRSS:\t  2048 kB\nVmSwap:\t    12 kB\n"),
            Some(ProcMemory {
                rss_kib: 2048,
                swap_kib: 12
            })
        );
    }

    #[test]
    fn the_process_start_is_field_22() {
        // A whole line in Linux 6.x's 52 fields (a process of this
        // machine's, its command and start changed).
        let stat = "851962 (task UPID:mini) S 1 851962 851962 0 -1 4194624 18341 14455803 0 1797 \
                    108 411 39171 7550 20 0 1 0 65597267 50192384 2537 18446744073709551615 1 1 0 0 \
                    0 0 0 4096 1256 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";
        assert_eq!(start_ticks(stat), Some(65597267));
        // A command with spaces and parentheses: the last `)` ends it.
        let odd = stat.replace("(task UPID:mini)", "(a) b (c))");
        assert_eq!(start_ticks(&odd), Some(65597267));
        // Cut short, or not the kernel's form (procfs-core would slice
        // before a `(` at the start, or past a `)` at the end).
        for bad in ["1 (x) S", "(x) S 1", "1 (x)", "x (y) S 1", ""] {
            assert_eq!(start_ticks(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_stat_gives_name_parent_and_cpu_time() {
        // An sshd session's line on Debian 12 (OpenSSH 9.2), utime 1187
        // and stime 2514 ticks after a stream of 4 GiB.
        let stat = "23210 (sshd) S 23198 23198 23198 0 -1 4194624 517 0 0 0 1187 2514 0 0 20 0 1 0 \
                    3530112 17956864 2458 18446744073709551615 1 1 0 0 0 0 0 4096 81926 0 0 0 17 1 \
                    0 0 0 0 0 0 0 0 0 0 0 0 0";
        assert_eq!(
            super::stat(stat),
            Some(ProcStat {
                comm: "sshd".into(),
                ppid: 23198,
                cpu_ticks: 1187 + 2514,
                start_ticks: 3530112,
                rss_pages: 2458,
            })
        );
        let odd = stat.replace("(sshd)", "(sshd: root@notty)");
        assert_eq!(super::stat(&odd).unwrap().comm, "sshd: root@notty");
        for bad in ["1 (x) S", "(x) S 1", ""] {
            assert_eq!(super::stat(bad), None, "{bad:?}");
        }
    }

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_status_gives_its_parent() {
        let status = "Name:\tkvm\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t1\nTracerPid:\t0\n";
        assert_eq!(ppid(status), Some(1));
        assert_eq!(ppid("Name:\tx\n"), None);
        assert_eq!(ppid("PPid:\tlots\n"), None);
    }

    #[test]
    fn a_cmdline_splits_at_nul() {
        assert_eq!(
            cmdline(b"/usr/bin/kvm\x00-id\x00100\x00-name\x00truenas,debug-threads=on\x00"),
            [
                "/usr/bin/kvm",
                "-id",
                "100",
                "-name",
                "truenas,debug-threads=on"
            ]
        );
        assert!(cmdline(b"").is_empty());
    }

    #[test]
    fn the_guest_of_qemu_and_lxc_start() {
        assert_eq!(
            qemu_vmid(&args(&["/usr/bin/kvm", "-id", "100", "-name", "x"])),
            Some(100)
        );
        assert_eq!(
            qemu_vmid(&args(&["/usr/bin/qemu-system-x86_64", "-id", "7"])),
            Some(7)
        );
        assert_eq!(qemu_vmid(&args(&["/usr/bin/sleep", "-id", "100"])), None);
        assert_eq!(qemu_vmid(&args(&["/usr/bin/kvm", "-id"])), None);
        assert_eq!(
            lxc_ctid(&args(&["/usr/bin/lxc-start", "-F", "-n", "101"])),
            Some(101)
        );
        assert_eq!(lxc_ctid(&args(&["lxc-start", "--name=102"])), Some(102));
        assert_eq!(lxc_ctid(&args(&["lxc-start", "-F", "-n103"])), Some(103));
        assert_eq!(lxc_ctid(&args(&["lxc-start", "--name", "104"])), Some(104));
        assert_eq!(lxc_ctid(&args(&["lxc-attach", "-n", "101"])), None);
        assert_eq!(lxc_ctid(&args(&[])), None);
        assert_eq!(pidfile_pid("4242\n"), Some(4242));
        assert_eq!(pidfile_pid("x"), None);
    }

    #[test]
    fn a_throttled_tasks_schedstat_reads_its_wait() {
        // A busy loop held to 15% of a core by a CFS quota on this
        // project's machine: it waited 52 times as long as it ran.
        let text = std::fs::read_to_string(format!(
            "{}/../../fixtures/guest/schedstat-throttled",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert_eq!(
            schedstat(&text),
            Some(SchedStat {
                run_ns: 1_514_357,
                wait_ns: 78_566_092,
                slices: 4
            })
        );
        assert_eq!(schedstat("1 2"), None);
        assert_eq!(schedstat("1 2 3 4"), None);
        assert_eq!(schedstat("1 -2 3"), None);
    }
}
