//! The kernel's I/O counters, for `top`: `/proc/diskstats` (each block
//! device's completed reads and writes, sectors, the milliseconds spent
//! and in flight), the first line of `/proc/stat` (the CPUs' time, iowait
//! among it: what PVE's "IO delay" graph draws), and a cgroup's I/O: v2's
//! `io.stat` and v1's `blkio.throttle.io_serviced` and
//! `io_service_bytes` (a container's, per device). All are counters since
//! boot (or since the cgroup was made): the difference of two readings is
//! the interval's.

/// One line of `/proc/diskstats` (Documentation/admin-guide/iostats.rst).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskStat {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    pub reads: u64,
    pub reads_merged: u64,
    /// 512-byte sectors, whatever the device's own sector size.
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    /// Requests in flight now (not a counter).
    pub in_flight: u64,
    /// Milliseconds the device had a request in flight.
    pub busy_ms: u64,
    /// Milliseconds requests spent, weighted by how many were in flight.
    pub weighted_ms: u64,
    /// Flushes completed and the milliseconds they took (Linux 5.5 on).
    pub flushes: Option<u64>,
    pub flush_ms: Option<u64>,
    /// 512-byte sectors discarded (Linux 4.18 on).
    pub sectors_discarded: Option<u64>,
}

/// `/proc/diskstats`, each line by procfs-core: a line per device with at
/// least the 14 fields of Linux 2.6; a line that is not one is passed over
/// (procfs-core reads the file whole or not at all), and so is a name
/// that could not be a block device's (it names a sysfs directory later).
pub fn diskstats(text: &str) -> Vec<DiskStat> {
    text.lines()
        .filter_map(|line| procfs_core::DiskStat::from_line(line).ok())
        .filter_map(disk)
        .collect()
}

fn disk(d: procfs_core::DiskStat) -> Option<DiskStat> {
    if d.name.is_empty() || d.name.len() > 64 || d.name.contains('/') {
        return None;
    }
    Some(DiskStat {
        major: u32::try_from(d.major).ok()?,
        minor: u32::try_from(d.minor).ok()?,
        name: d.name,
        reads: d.reads,
        reads_merged: d.merged,
        sectors_read: d.sectors_read,
        read_ms: d.time_reading,
        writes: d.writes,
        writes_merged: d.writes_merged,
        sectors_written: d.sectors_written,
        write_ms: d.time_writing,
        in_flight: d.in_progress,
        busy_ms: d.time_in_progress,
        weighted_ms: d.weighted_time_in_progress,
        flushes: d.flushes,
        flush_ms: d.time_flushing,
        sectors_discarded: d.sectors_discarded,
    })
}

/// The CPUs' time from `/proc/stat`'s `cpu` line, in USER_HZ ticks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    /// Time the CPUs were idle with I/O outstanding: PVE's IO delay.
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Every tick counted (guest time is inside user and nice already).
    pub fn total(&self) -> u64 {
        self.user
            .saturating_add(self.nice)
            .saturating_add(self.system)
            .saturating_add(self.idle)
            .saturating_add(self.iowait)
            .saturating_add(self.irq)
            .saturating_add(self.softirq)
            .saturating_add(self.steal)
    }
}

/// `/proc/stat` by procfs-core: its aggregate `cpu` line (fields after
/// the fifth are newer kernels' and default to 0); `None` without one, or
/// without the lines every kernel writes beside it (`ctxt`, `btime`,
/// `processes`), which procfs-core asks for.
pub fn cpu_times(text: &str) -> Option<CpuTimes> {
    let t = crate::procfs::kernel_stats(text)?.total;
    Some(CpuTimes {
        user: t.user,
        nice: t.nice,
        system: t.system,
        idle: t.idle,
        iowait: t.iowait.unwrap_or(0),
        irq: t.irq.unwrap_or(0),
        softirq: t.softirq.unwrap_or(0),
        steal: t.steal.unwrap_or(0),
    })
}

/// How many CPUs `/proc/stat` has a line for (`cpu0`, `cpu1`, ...): the
/// node's online cores and threads.
pub fn cpu_count(text: &str) -> Option<usize> {
    let n = crate::procfs::kernel_stats(text)?.cpu_time.len();
    (n > 0).then_some(n)
}

/// A cgroup's I/O on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CgroupIo {
    pub major: u32,
    pub minor: u32,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

fn device(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// cgroup v2's `io.stat`: `MAJ:MIN rbytes=N wbytes=N rios=N wios=N ...`
/// per device (keys it does not know are passed over).
pub fn io_stat(text: &str) -> Vec<CgroupIo> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (major, minor) = device(words.next()?)?;
            let mut io = CgroupIo {
                major,
                minor,
                ..CgroupIo::default()
            };
            for w in words {
                let (k, v) = w.split_once('=')?;
                let v: u64 = v.parse().ok()?;
                match k {
                    "rbytes" => io.read_bytes = v,
                    "wbytes" => io.write_bytes = v,
                    "rios" => io.reads = v,
                    "wios" => io.writes = v,
                    _ => {}
                }
            }
            Some(io)
        })
        .collect()
}

/// cgroup v1's `blkio.throttle.io_service_bytes` (`bytes`) and
/// `blkio.throttle.io_serviced` (operations), both `MAJ:MIN Read N`,
/// `MAJ:MIN Write N`, ... and a `Total N` line: per device.
pub fn blkio_throttle(bytes: &str, serviced: &str) -> Vec<CgroupIo> {
    let mut out: Vec<CgroupIo> = Vec::new();
    for (text, is_bytes) in [(bytes, true), (serviced, false)] {
        for line in text.lines() {
            let mut w = line.split_whitespace();
            let (Some(dev), Some(op), Some(v), None) = (w.next(), w.next(), w.next(), w.next())
            else {
                continue;
            };
            let (Some((major, minor)), Ok(v)) = (device(dev), v.parse::<u64>()) else {
                continue;
            };
            let at = match out
                .iter()
                .position(|c| (c.major, c.minor) == (major, minor))
            {
                Some(i) => i,
                None => {
                    out.push(CgroupIo {
                        major,
                        minor,
                        ..CgroupIo::default()
                    });
                    out.len() - 1
                }
            };
            let io = &mut out[at];
            match (op, is_bytes) {
                ("Read", true) => io.read_bytes = v,
                ("Write", true) => io.write_bytes = v,
                ("Read", false) => io.reads = v,
                ("Write", false) => io.writes = v,
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::fixture;

    #[test]
    fn diskstats_of_this_vm_has_its_disk_and_loop_devices() {
        let all = diskstats(&fixture("hosts/this-vm/proc", "diskstats"));
        assert!(all.len() >= 2, "{all:?}");
        assert!(all.iter().all(|d| !d.name.is_empty()));
        // A 6.x kernel gives the flush and discard fields.
        assert!(all.iter().all(|d| d.flushes.is_some()));
        assert!(all.iter().all(|d| d.sectors_discarded.is_some()));
    }

    #[test]
    fn a_diskstats_line_of_linux_2_6_has_no_flushes_and_a_short_one_is_no_line() {
        let old = "   8       0 sda 100 2 800 30 50 1 400 20 0 40 50\n";
        let d = &diskstats(old)[0];
        assert_eq!(
            (d.reads, d.sectors_read, d.writes, d.busy_ms),
            (100, 800, 50, 40)
        );
        assert_eq!((d.flushes, d.sectors_discarded), (None, None));
        // Linux 4.18's discard fields: the 16th, sectors discarded.
        let discards = "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 4096 15\n";
        assert_eq!(diskstats(discards)[0].sectors_discarded, Some(4096));
        assert!(diskstats("8 0 sda 1 2 3\nnot a line at all\n").is_empty());
        assert!(diskstats("8 0 ../x 1 2 3 4 5 6 7 8 9 10 11\n").is_empty());
    }

    #[test]
    fn cpu_times_read_the_aggregate_line() {
        let t = cpu_times(&fixture("hosts/this-vm/proc", "stat")).unwrap();
        assert!(t.idle > 0 && t.total() > t.idle);
        // The machine it was captured on has two vCPUs.
        assert_eq!(cpu_count(&fixture("hosts/this-vm/proc", "stat")), Some(2));
        // Linux 2.4's four fields; the lines every kernel writes beside.
        let rest = "ctxt 1\nbtime 2\nprocesses 3\n";
        let t = cpu_times(&format!("cpu  1 2 3 4\ncpu0 1 2 3 4\n{rest}")).unwrap();
        assert_eq!((t.idle, t.iowait, t.total()), (4, 0, 10));
        assert_eq!(cpu_times(&format!("cpu0 1 2 3 4 5\n{rest}")), None);
        assert_eq!(cpu_count(&format!("cpu  1 2 3 4\n{rest}")), None);
        assert_eq!(cpu_times(&format!("cpu  1 x 3 4 5\n{rest}")), None);
    }

    #[test]
    fn a_cgroups_io_in_v2_and_v1() {
        let v2 = io_stat(
            "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n253:0 rbytes=4096 wbytes=0 rios=1 wios=0\n",
        );
        assert_eq!(v2.len(), 2);
        assert_eq!((v2[0].major, v2[0].minor, v2[0].wios()), (8, 16, 353));
        assert_eq!(v2[0].write_bytes, 314773504);
        let bytes = "7:0 Read 4096\n7:0 Write 1048576\n7:0 Sync 0\n7:0 Async 1052672\n7:0 Total 1052672\nTotal 1052672\n";
        let ops = "7:0 Read 1\n7:0 Write 256\n7:0 Total 257\nTotal 257\n";
        let v1 = blkio_throttle(bytes, ops);
        assert_eq!(
            v1,
            [CgroupIo {
                major: 7,
                minor: 0,
                read_bytes: 4096,
                write_bytes: 1048576,
                reads: 1,
                writes: 256
            }]
        );
    }

    impl CgroupIo {
        fn wios(&self) -> u64 {
            self.writes
        }
    }
}
