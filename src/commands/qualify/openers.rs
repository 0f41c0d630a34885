//! Which processes hold a device open, as `fuser` would show them: every
//! `/proc/PID/fd/*` whose target is the device or one of its partitions
//! (compared by device number, never by name). QEMU opens a passed-through
//! disk without `O_EXCL`, so only this shows a running VM's disk; each
//! opener is named with the guest it runs (`VM 100` from QEMU's `-id` or
//! PVE's pidfile, `CT 101` from its `lxc-start` ancestor). A process whose
//! open files cannot be read is a finding too: what was not seen is not
//! known to be free. qualify itself and its own children are left out.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use crate::sys::host::Host;
use pveprobe_parse::procpid;

/// Where qemu-server keeps each running VM's QEMU PID, `VMID.pid`.
pub const QEMU_PIDFILES: &str = "/var/run/qemu-server";

/// What the check asks of the processes: the seam that lets its tests
/// stand in a process table.
pub trait Procs {
    /// Every process's PID.
    fn pids(&self) -> io::Result<Vec<u32>>;
    /// The device numbers of the block devices `pid` has open; empty for a
    /// process that ended meanwhile.
    fn block_devices(&self, pid: u32) -> io::Result<Vec<u64>>;
    /// Its name (`/proc/PID/comm`).
    fn comm(&self, pid: u32) -> Option<String>;
    /// Its arguments (`/proc/PID/cmdline`).
    fn cmdline(&self, pid: u32) -> Vec<String>;
    /// Its parent.
    fn ppid(&self, pid: u32) -> Option<u32>;
    /// The running VMs' QEMU PIDs by VMID (PVE's pidfiles).
    fn qemu_pidfiles(&self) -> BTreeMap<u32, u32>;
}

/// The host's processes, read from its `/proc` (through the [`Host`] seam).
pub struct HostProcs<'a>(pub &'a Host);

/// A process gone between the listing and the read is no finding.
fn gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH)
}

impl Procs for HostProcs<'_> {
    fn pids(&self) -> io::Result<Vec<u32>> {
        let dir = std::fs::read_dir(self.0.path("/proc"))?;
        Ok(dir
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect())
    }

    fn block_devices(&self, pid: u32) -> io::Result<Vec<u64>> {
        let dir = match std::fs::read_dir(self.0.path(format!("/proc/{pid}/fd"))) {
            Ok(dir) => dir,
            Err(e) if gone(&e) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut devs = Vec::new();
        for entry in dir {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if gone(&e) => continue,
                Err(e) => return Err(e),
            };
            // The magic link followed: the open file itself (an fd closed
            // meanwhile is gone; a socket or pipe is no block device).
            if let Ok(meta) = std::fs::metadata(entry.path())
                && meta.file_type().is_block_device()
            {
                devs.push(meta.rdev());
            }
        }
        Ok(devs)
    }

    fn comm(&self, pid: u32) -> Option<String> {
        self.0.read_value(format!("/proc/{pid}/comm"))
    }

    fn cmdline(&self, pid: u32) -> Vec<String> {
        self.0
            .read_bytes(format!("/proc/{pid}/cmdline"))
            .map(|b| procpid::cmdline(&b))
            .unwrap_or_default()
    }

    fn ppid(&self, pid: u32) -> Option<u32> {
        procpid::ppid(&self.0.read(format!("/proc/{pid}/status")).ok()?)
    }

    fn qemu_pidfiles(&self) -> BTreeMap<u32, u32> {
        self.0
            .list(QEMU_PIDFILES)
            .into_iter()
            .filter_map(|name| {
                let vmid = name.strip_suffix(".pid")?.parse().ok()?;
                let text = self.0.read(format!("{QEMU_PIDFILES}/{name}")).ok()?;
                Some((procpid::pidfile_pid(&text)?, vmid))
            })
            .collect()
    }
}

/// What the scan found: each opener of a device, and the processes whose
/// open files could not be read.
#[derive(Debug, Default, PartialEq)]
pub struct Openers {
    /// `(device name, "held open by kvm (pid 4242, VM 100)")`.
    pub held: Vec<(String, String)>,
    /// `pid 17 (name): Permission denied`.
    pub unseen: Vec<String>,
}

/// How many parents are followed up to an `lxc-start` (a container's
/// processes are its descendants).
const MAX_ANCESTORS: usize = 64;

/// Whether `pid` is `me` or a descendant of it.
fn mine(procs: &dyn Procs, pid: u32, me: u32) -> bool {
    let mut p = pid;
    for _ in 0..MAX_ANCESTORS {
        if p == me {
            return true;
        }
        match procs.ppid(p) {
            Some(parent) if parent != 0 && parent != p => p = parent,
            _ => return false,
        }
    }
    false
}

/// The guest `pid` runs: `VM 100` (QEMU's `-id`, else PVE's pidfile) or
/// `CT 101` (an `lxc-start` among it and its ancestors).
fn guest(procs: &dyn Procs, pid: u32, pidfiles: &BTreeMap<u32, u32>) -> Option<String> {
    if let Some(vmid) = procpid::qemu_vmid(&procs.cmdline(pid)).or(pidfiles.get(&pid).copied()) {
        return Some(format!("VM {vmid}"));
    }
    let mut p = pid;
    for _ in 0..MAX_ANCESTORS {
        if let Some(ctid) = procpid::lxc_ctid(&procs.cmdline(p)) {
            return Some(format!("CT {ctid}"));
        }
        match procs.ppid(p) {
            Some(parent) if parent > 1 && parent != p => p = parent,
            _ => return None,
        }
    }
    None
}

/// Every process but `me` and its children that has one of `devices`
/// (`(name, device number)`) open.
pub fn scan(procs: &dyn Procs, devices: &[(String, u64)], me: u32) -> Openers {
    let mut found = Openers::default();
    let mut pids = match procs.pids() {
        Ok(pids) => pids,
        Err(e) => {
            found
                .unseen
                .push(format!("the processes: {}", crate::error::describe(&e)));
            return found;
        }
    };
    pids.sort_unstable();
    let pidfiles = procs.qemu_pidfiles();
    for pid in pids {
        let open = match procs.block_devices(pid) {
            Ok(open) => open,
            Err(e) => {
                let name = procs.comm(pid).unwrap_or_else(|| "?".into());
                found.unseen.push(format!(
                    "pid {pid} ({name}): {}",
                    crate::error::describe(&e)
                ));
                continue;
            }
        };
        let held: Vec<&String> = devices
            .iter()
            .filter(|(_, dev)| open.contains(dev))
            .map(|(name, _)| name)
            .collect();
        if held.is_empty() || mine(procs, pid, me) {
            continue;
        }
        let name = procs.comm(pid).unwrap_or_else(|| "?".into());
        let whose = guest(procs, pid, &pidfiles)
            .map(|g| format!(", {g}"))
            .unwrap_or_default();
        for device in held {
            found.held.push((
                device.clone(),
                format!("held open by {name} (pid {pid}{whose})"),
            ));
        }
    }
    found
}

/// How many times [`scan_settled`] looks before it believes a holder.
pub const LOOKS: u32 = 5;
/// The pause between two looks.
pub const LOOK_PAUSE: std::time::Duration = std::time::Duration::from_millis(200);

/// [`scan`], looked at again after `pause` while something holds a device,
/// up to `looks` times: the first look in which nothing holds one, or the
/// last. A scanner that opens every disk for a moment (LVM's `pvs` run by
/// another program, udev's `blkid` after a close) is gone by the next look;
/// a VM, a mount or a `dd` is not. Only a look that shows the device free
/// lets the write go on, as a single look would.
pub fn scan_settled(
    procs: &dyn Procs,
    devices: &[(String, u64)],
    me: u32,
    looks: u32,
    pause: std::time::Duration,
) -> Openers {
    let mut found = scan(procs, devices, me);
    for _ in 1..looks {
        if found.held.is_empty() {
            break;
        }
        std::thread::sleep(pause);
        found = scan(procs, devices, me);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in process: its name, arguments, parent, and its open
    /// block devices or the errno reading them gives.
    struct Proc(&'static str, Vec<String>, u32, Result<Vec<u64>, i32>);

    /// A stand-in process table.
    #[derive(Default)]
    struct Table {
        procs: BTreeMap<u32, Proc>,
        pidfiles: BTreeMap<u32, u32>,
    }

    impl Table {
        fn with(
            mut self,
            pid: u32,
            comm: &'static str,
            cmd: &str,
            ppid: u32,
            open: Result<Vec<u64>, i32>,
        ) -> Self {
            let args = cmd.split(' ').map(String::from).collect();
            self.procs.insert(pid, Proc(comm, args, ppid, open));
            self
        }
    }

    impl Procs for Table {
        fn pids(&self) -> io::Result<Vec<u32>> {
            Ok(self.procs.keys().copied().collect())
        }
        fn block_devices(&self, pid: u32) -> io::Result<Vec<u64>> {
            match &self.procs[&pid].3 {
                Ok(devs) => Ok(devs.clone()),
                Err(errno) => Err(io::Error::from_raw_os_error(*errno)),
            }
        }
        fn comm(&self, pid: u32) -> Option<String> {
            self.procs.get(&pid).map(|p| p.0.to_string())
        }
        fn cmdline(&self, pid: u32) -> Vec<String> {
            self.procs
                .get(&pid)
                .map(|p| p.1.clone())
                .unwrap_or_default()
        }
        fn ppid(&self, pid: u32) -> Option<u32> {
            self.procs.get(&pid).map(|p| p.2)
        }
        fn qemu_pidfiles(&self) -> BTreeMap<u32, u32> {
            self.pidfiles.clone()
        }
    }

    /// A process table that changes from one look to the next.
    struct Looks(Vec<Table>, std::cell::Cell<usize>);

    impl Looks {
        fn now(&self) -> &Table {
            &self.0[self.1.get().min(self.0.len() - 1)]
        }
        /// The table of the look under way.
        fn seen(&self) -> &Table {
            &self.0[(self.1.get() - 1).min(self.0.len() - 1)]
        }
    }

    impl Procs for Looks {
        fn pids(&self) -> io::Result<Vec<u32>> {
            // Every scan starts here: the look after this one sees the next table.
            let pids = self.now().pids();
            self.1.set(self.1.get() + 1);
            pids
        }
        fn block_devices(&self, pid: u32) -> io::Result<Vec<u64>> {
            self.seen().block_devices(pid)
        }
        fn comm(&self, pid: u32) -> Option<String> {
            self.seen().comm(pid)
        }
        fn cmdline(&self, pid: u32) -> Vec<String> {
            self.seen().cmdline(pid)
        }
        fn ppid(&self, pid: u32) -> Option<u32> {
            self.seen().ppid(pid)
        }
        fn qemu_pidfiles(&self) -> BTreeMap<u32, u32> {
            BTreeMap::new()
        }
    }

    /// What [`scan_settled`] finds over `tables`, one a look, with no
    /// pause, and how many looks it took.
    fn settle(tables: Vec<Table>, looks: u32) -> (Vec<(String, String)>, usize) {
        let procs = Looks(tables, 0.into());
        let found = scan_settled(&procs, &devices(), 99, looks, std::time::Duration::ZERO);
        (found.held, procs.1.get())
    }

    #[test]
    fn a_scanner_gone_by_the_next_look_does_not_hold_the_disk_a_steady_holder_does() {
        let pvs = || Table::default().with(80, "pvs", "pvs --noheadings", 1, Ok(vec![SDB]));
        let dd = || Table::default().with(90, "dd", "dd of=/dev/sdb", 1, Ok(vec![SDB]));
        let free = Table::default;
        // pvs for one look, then nothing: free, after two looks.
        assert_eq!(settle(vec![pvs(), free()], LOOKS), (vec![], 2));
        // Free at the first look: one look only.
        assert_eq!(settle(vec![free(), pvs()], LOOKS), (vec![], 1));
        // A holder in every look, even a different one each time: held, by the last.
        assert_eq!(
            settle(vec![pvs(), dd()], LOOKS),
            (
                vec![("sdb".to_string(), "held open by dd (pid 90)".to_string())],
                LOOKS as usize
            )
        );
        // One look is a plain scan.
        assert_eq!(settle(vec![pvs(), free()], 1).0.len(), 1);
    }

    const SDB: u64 = 8 << 8 | 16;
    const SDB1: u64 = 8 << 8 | 17;

    fn devices() -> Vec<(String, u64)> {
        vec![("sdb".into(), SDB), ("sdb1".into(), SDB1)]
    }

    #[test]
    fn a_vms_qemu_a_containers_process_and_any_other_are_named() {
        let table = Table::default()
            .with(1, "systemd", "/sbin/init", 0, Ok(vec![]))
            .with(
                4242,
                "kvm",
                "/usr/bin/kvm -id 100 -name truenas",
                1,
                Ok(vec![SDB]),
            )
            .with(5000, "kvm", "/usr/bin/kvm -name other", 1, Ok(vec![SDB1]))
            .with(
                600,
                "lxc-start",
                "/usr/bin/lxc-start -F -n 101",
                1,
                Ok(vec![]),
            )
            .with(601, "init", "/sbin/init", 600, Ok(vec![]))
            .with(602, "postgres", "postgres -D /data", 601, Ok(vec![SDB1]))
            .with(700, "dd", "dd if=/dev/sdb", 1, Ok(vec![8 << 8, SDB]));
        let mut table = table;
        table.pidfiles.insert(5000, 102);
        let found = scan(&table, &devices(), 99);
        assert_eq!(
            found.held,
            [
                (
                    "sdb1".to_string(),
                    "held open by postgres (pid 602, CT 101)".to_string()
                ),
                ("sdb".to_string(), "held open by dd (pid 700)".to_string()),
                (
                    "sdb".to_string(),
                    "held open by kvm (pid 4242, VM 100)".to_string()
                ),
                (
                    "sdb1".to_string(),
                    "held open by kvm (pid 5000, VM 102)".to_string()
                ),
            ]
        );
        assert!(found.unseen.is_empty());
    }

    #[test]
    fn qualify_and_its_children_are_left_out() {
        let table = Table::default()
            .with(
                99,
                "pveprobe",
                "pveprobe qualify /dev/sdb",
                1,
                Ok(vec![SDB]),
            )
            .with(100, "wipefs", "wipefs --no-act /dev/sdb", 99, Ok(vec![SDB]));
        assert_eq!(scan(&table, &devices(), 99), Openers::default());
    }

    #[test]
    fn open_files_not_seen_are_a_finding_and_a_vanished_process_is_not() {
        let table = Table::default()
            .with(17, "secret", "secret", 1, Err(libc::EACCES))
            .with(18, "gone", "gone", 1, Ok(vec![]));
        let found = scan(&table, &devices(), 99);
        assert!(found.held.is_empty());
        assert_eq!(found.unseen, ["pid 17 (secret): Permission denied"]);
    }

    #[test]
    fn the_real_proc_shows_a_file_this_process_holds_and_leaves_itself_out() {
        // /dev/null is a character device: no block device of ours is open.
        let host = Host::real();
        let procs = HostProcs(&host);
        let me = std::process::id();
        assert!(procs.pids().unwrap().contains(&me));
        assert!(procs.ppid(me).is_some());
        assert!(!procs.cmdline(me).is_empty());
        // Whatever block devices this process holds are its own.
        let mine: Vec<(String, u64)> = procs
            .block_devices(me)
            .unwrap()
            .into_iter()
            .map(|d| ("x".to_string(), d))
            .collect();
        assert!(scan(&procs, &mine, me).held.is_empty());
    }
}
