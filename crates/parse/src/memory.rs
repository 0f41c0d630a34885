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
    })
}

/// `pswpin` and `pswpout` of `/proc/vmstat`: pages swapped in and out.
pub fn swapped_pages(vmstat: &str) -> Option<(u64, u64)> {
    let line_ok = |l: &str| {
        let mut w = l.split_whitespace();
        w.next().is_some_and(str::is_ascii)
            && w.next()
                .is_some_and(|n| digits(n.trim_start_matches('-'), 18))
            && w.next().is_none()
    };
    let v: procfs_core::VmStat = read(&kernel_form(vmstat, line_ok))?;
    let get = |k: &str| v.0.get(k).and_then(|n| u64::try_from(*n).ok());
    Some((get("pswpin")?, get("pswpout")?))
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
