//! The kernel's memory counters, by procfs-core: `/proc/meminfo` (the
//! machine's memory for the host fingerprint; dirty and writeback pages
//! for `top`) and `/proc/vmstat` (pages swapped in and out since boot).
//! Only lines of the kernel's form reach procfs-core (`Key: N kB`,
//! `key N`, the numbers short enough not to overflow once scaled): it
//! slices a meminfo key by bytes and multiplies kB by 1024 unchecked.

use crate::procfs::{digits, kernel_form, read};

/// What pveprobe reads of `/proc/meminfo`, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Memory {
    pub total: u64,
    pub dirty: u64,
    pub writeback: u64,
    /// `MemAvailable` (since Linux 3.14).
    pub available: Option<u64>,
    pub swap_total: u64,
    pub swap_free: u64,
}

fn meminfo_line(line: &str) -> bool {
    let mut w = line.split_whitespace();
    let key_ok = w
        .next()
        .and_then(|k| k.strip_suffix(':'))
        .is_some_and(|k| !k.is_empty() && k.is_ascii());
    key_ok
        && w.next().is_some_and(|n| digits(n, 15))
        && matches!(w.next(), None | Some("kB"))
        && w.next().is_none()
}

/// `/proc/meminfo`; `None` without the fields every kernel writes.
pub fn meminfo(text: &str) -> Option<Memory> {
    let m: procfs_core::Meminfo = read(&kernel_form(text, meminfo_line))?;
    Some(Memory {
        total: m.mem_total,
        dirty: m.dirty,
        writeback: m.writeback,
        available: m.mem_available,
        swap_total: m.swap_total,
        swap_free: m.swap_free,
    })
}

/// `/proc/vmstat`'s counters, by name.
fn vmstat_counters(vmstat: &str) -> Option<procfs_core::VmStat> {
    let line_ok = |l: &str| {
        let mut w = l.split_whitespace();
        w.next().is_some_and(str::is_ascii)
            && w.next()
                .is_some_and(|n| digits(n.trim_start_matches('-'), 18))
            && w.next().is_none()
    };
    read(&kernel_form(vmstat, line_ok))
}

/// `pswpin` and `pswpout` of `/proc/vmstat`: pages swapped in and out.
pub fn swapped_pages(vmstat: &str) -> Option<(u64, u64)> {
    let v = vmstat_counters(vmstat)?;
    let get = |k: &str| v.0.get(k).and_then(|n| u64::try_from(*n).ok());
    Some((get("pswpin")?, get("pswpout")?))
}

/// `oom_kill` of `/proc/vmstat`: the OOM killer's kills since boot, the
/// node's and every cgroup's (Linux 4.13 and later).
pub fn oom_kills(vmstat: &str) -> Option<u64> {
    let v = vmstat_counters(vmstat)?;
    v.0.get("oom_kill").and_then(|n| u64::try_from(*n).ok())
}

/// A one-number sysfs file (`/sys/kernel/mm/ksm/pages_sharing`).
pub fn number(text: &str) -> Option<u64> {
    let t = text.trim();
    digits(t, 20).then(|| t.parse().ok()).flatten()
}

/// The ZFS ARC (`/proc/spl/kstat/zfs/arcstats`), bytes: its size, its
/// target (`c`) and the bounds the target moves in (`c_min`, `c_max`,
/// which `zfs_arc_max` sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Arc {
    pub size: u64,
    pub target: u64,
    pub min: u64,
    pub max: u64,
}

/// `arcstats`: a kstat header line, `name type data`, then one
/// `NAME TYPE VALUE` line a figure; `None` without the four.
pub fn arcstats(text: &str) -> Option<Arc> {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_ascii_whitespace();
            (w.next()? == key).then_some(())?;
            let _kind = w.next()?;
            let v = w.next()?;
            if w.next().is_some() {
                return None;
            }
            v.parse::<u64>().ok()
        })
    };
    Some(Arc {
        size: value("size")?,
        target: value("c")?,
        min: value("c_min")?,
        max: value("c_max")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::fixture;

    #[test]
    fn this_vms_meminfo_and_vmstat() {
        let m = meminfo(&fixture("hosts/this-vm/proc", "meminfo")).unwrap();
        assert_eq!(m.total % 1024, 0);
        assert!(m.total > 1 << 30, "{m:?}");
        assert!(m.dirty < m.total && m.writeback < m.total);
        // Captured on a machine without swap.
        let vmstat = fixture("hosts/this-vm/proc", "vmstat");
        assert_eq!(swapped_pages(&vmstat), Some((0, 0)));
        assert!(oom_kills(&vmstat).is_some());
        // No swap on it; every kernel since 3.14 says what is available.
        assert_eq!((m.swap_total, m.swap_free), (0, 0));
        assert!(m.available.is_some_and(|a| a > 0 && a < m.total), "{m:?}");
    }

    #[test]
    fn the_arc_of_a_real_host() {
        // node_exporter's capture (fixtures/README.md).
        let a = arcstats(&fixture("guest", "arcstats-node-exporter")).unwrap();
        assert_eq!(
            a,
            Arc {
                size: 1603939792,
                target: 1643208777,
                min: 33554432,
                max: 8367976448,
            }
        );
        // `c` is not `c_min`'s prefix: each key is matched whole.
        let cut: String = fixture("guest", "arcstats-node-exporter")
            .lines()
            .filter(|l| !l.starts_with("c "))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(arcstats(&cut), None);
        assert_eq!(arcstats("size 4 x\nc 4 1\nc_min 4 1\nc_max 4 1\n"), None);
    }

    #[test]
    fn a_sysfs_number() {
        assert_eq!(number("0\n"), Some(0));
        assert_eq!(number("12345\n"), Some(12345));
        for bad in ["", "-1", "1 2", "x", "99999999999999999999999"] {
            assert_eq!(number(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn what_is_not_the_kernels_form_is_no_figure() {
        assert_eq!(
            meminfo("MemTotal: 1 kB\n"),
            None,
            "the other fields are missing"
        );
        // Past 2^64 once scaled, a key ending in a multi-byte character.
        assert_eq!(
            meminfo("MemTotal: 18446744073709551615 kB\n\u{e9}: 1\n"),
            None
        );
        let text = "nr_free_pages 3\npswpin 12\npswpout 345\npswpin_x 9\n";
        assert_eq!(swapped_pages(text), Some((12, 345)));
        assert_eq!(swapped_pages("pswpin 1\n"), None);
        assert_eq!(swapped_pages("pswpin x\npswpout 1\n"), None);
    }
}
