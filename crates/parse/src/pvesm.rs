//! The output of `pvesm status`: each storage's type, state and space.
//!
//! pve-storage's `src/PVE/CLI/pvesm.pm` (`$print_status`) prints one
//! header and one row per storage, sorted by ID:
//!
//! ```text
//! printf "%-${maxlen}s %10s %10s %15s %15s %15s %8s\n", 'Name', 'Type',
//!     'Status', 'Total (KiB)', 'Used (KiB)', 'Available (KiB)', '%';
//! printf "%-${maxlen}s %10s %10s %15d %15d %15d $per_fmt\n", $storeid,
//!     $type, $active, $total / 1024, $used / 1024, $avail / 1024, $per;
//! ```
//!
//! `maxlen` is the longest ID plus one. The space columns are KiB in every
//! version (truncated by `%d`); PVE 9 (pve-storage commit 10e47fc,
//! 2025-08) only added `(KiB)` to the header, which read `Total Used
//! Available` before. The status is `active`, `inactive` (PVE could not
//! activate the storage or ask it for space) or `disabled` (disabled, or
//! not for this node); the last column is the used share (`% 7.2f%%`),
//! `N/A` for disabled storages. For inactive and disabled storages
//! `storage_info` in `PVE/Storage.pm` never asks the storage, and the
//! space columns print its placeholders, 0: they are read as unknown here.
//! Warnings go to stderr (`storage 'nas' is not online`); where they were
//! captured with the table, they are skipped like any line that is no row.

/// Input past this many bytes is ignored (cut at the last whole line).
pub const MAX_BYTES: usize = 1 << 20;
/// Rows past this many are ignored.
pub const MAX_ROWS: usize = 10_000;

/// One storage's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRow {
    /// The storage ID.
    pub id: String,
    /// The storage type (`dir`, `lvmthin`, `nfs`, ...).
    pub kind: String,
    /// As printed: `active`, `inactive` or `disabled`.
    pub status: String,
    /// Space in bytes (the KiB printed, times 1024); `None` where PVE did
    /// not measure it (status other than `active`) or printed a negative
    /// figure.
    pub total_bytes: Option<u64>,
    pub used_bytes: Option<u64>,
    pub avail_bytes: Option<u64>,
}

impl StatusRow {
    pub fn is_active(&self) -> bool {
        self.status == "active"
    }
}

/// The rows of `pvesm status` output, in its order. The header, blank
/// lines and lines that are no row (wrong number of columns, a column that
/// is no number, an ID PVE would not accept) are skipped.
pub fn parse_status(text: &str) -> Vec<StatusRow> {
    text.lines()
        .scan(0usize, |seen, line| {
            *seen += line.len() + 1;
            (*seen <= MAX_BYTES).then_some(line)
        })
        .filter_map(parse_row)
        .take(MAX_ROWS)
        .collect()
}

/// One row; `None` for the header or a line that is no row.
pub fn parse_row(line: &str) -> Option<StatusRow> {
    let cols: Vec<&str> = line.split_ascii_whitespace().take(8).collect();
    let [id, kind, status, total, used, avail, percent] = cols[..] else {
        return None;
    };
    if !crate::storagecfg::is_valid_storage_id(id) || !is_percent(percent) {
        return None;
    }
    let numbers = [total, used, avail].map(|c| c.parse::<i64>().ok());
    let [Some(total), Some(used), Some(avail)] = numbers else {
        return None;
    };
    let active = status == "active";
    let bytes = |kib: i64| {
        u64::try_from(kib)
            .ok()
            .filter(|_| active)
            .and_then(|k| k.checked_mul(1024))
    };
    Some(StatusRow {
        id: id.to_string(),
        kind: kind.to_string(),
        status: status.to_string(),
        total_bytes: bytes(total),
        used_bytes: bytes(used),
        avail_bytes: bytes(avail),
    })
}

/// The last column: `N/A` or a figure with a percent sign (`12.34%`).
fn is_percent(col: &str) -> bool {
    col == "N/A"
        || col
            .strip_suffix('%')
            .is_some_and(|n| n.parse::<f64>().is_ok_and(f64::is_finite))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testutil::fixture("pve/pvesm-status", name)
    }

    fn row(id: &str, kind: &str, status: &str, kib: Option<[u64; 3]>) -> StatusRow {
        StatusRow {
            id: id.into(),
            kind: kind.into(),
            status: status.into(),
            total_bytes: kib.map(|k| k[0] * 1024),
            used_bytes: kib.map(|k| k[1] * 1024),
            avail_bytes: kib.map(|k| k[2] * 1024),
        }
    }

    #[test]
    fn default_install() {
        assert_eq!(
            parse_status(&fixture("default-install.txt")),
            [
                row(
                    "local",
                    "dir",
                    "active",
                    Some([98497780, 3427460, 90020772])
                ),
                row(
                    "local-lvm",
                    "lvmthin",
                    "active",
                    Some([366276608, 21977210, 344299397])
                ),
            ]
        );
    }

    #[test]
    fn inactive_and_disabled_storages_have_no_figures() {
        let rows = parse_status(&fixture("inactive-disabled.txt"));
        assert_eq!(
            rows,
            [
                row("iso-nfs", "nfs", "inactive", None),
                row(
                    "local",
                    "dir",
                    "active",
                    Some([98497780, 12109444, 81338788])
                ),
                row(
                    "local-lvm",
                    "lvmthin",
                    "active",
                    Some([366276608, 102557450, 263719157])
                ),
                row("old-backup", "dir", "disabled", None),
            ]
        );
        assert!(!rows[0].is_active() && rows[1].is_active());
    }

    #[test]
    fn zfs_install_with_the_pve9_header() {
        let text = fixture("zfs.txt");
        assert!(text.starts_with("Name "));
        assert!(text.lines().next().unwrap().contains("Total (KiB)"));
        assert_eq!(
            parse_status(&text),
            [
                row(
                    "local",
                    "dir",
                    "active",
                    Some([1793293980, 2398080, 1790895900])
                ),
                row(
                    "local-zfs",
                    "zfspool",
                    "active",
                    Some([1839370916, 48474020, 1790895900])
                ),
                row(
                    "pbs-offsite",
                    "pbs",
                    "active",
                    Some([7751381632, 3125891328, 4625490304])
                ),
            ]
        );
    }

    #[test]
    fn skips_what_is_no_row() {
        let text = "Name Type Status Total Used Available %\n\
                    storage 'x' is not online\n\
                    \n\
                    local dir active 10 5 5 50.00%\n\
                    local dir active 10 5 5\n\
                    local dir active 10 5 x 50.00%\n\
                    local dir active 10 5 5 50.00\n\
                    bad_ dir active 10 5 5 50.00%\n\
                    local dir active 10 5 5 50.00% extra\n\
                    neg dir active -10 5 5 50.00%\n";
        let rows = parse_status(text);
        assert_eq!(
            rows,
            [
                row("local", "dir", "active", Some([10, 5, 5])),
                StatusRow {
                    total_bytes: None,
                    ..row("neg", "dir", "active", Some([0, 5, 5]))
                },
            ]
        );
        assert_eq!(
            parse_row("huge dir active 18014398509481984 0 0 0.00%")
                .unwrap()
                .total_bytes,
            None,
            "KiB past u64 in bytes"
        );
    }

    #[test]
    fn input_is_bounded() {
        let line = "store dir active 1 1 0 100.00%\n";
        let many = line.repeat(MAX_ROWS + 5);
        assert_eq!(parse_status(&many).len(), MAX_ROWS);
        // Past MAX_BYTES nothing is read, and a line cut there is dropped.
        let pad = "#".repeat(MAX_BYTES - 10);
        let text = format!("{pad}\n{line}");
        assert!(parse_status(&text).is_empty());
        let text = format!("{}\n{line}", &pad[..MAX_BYTES - line.len() - 1]);
        assert_eq!(parse_status(&text).len(), 1);
    }

    #[test]
    fn every_fixture_is_tested_here() {
        let names = crate::testutil::fixture_names("pve/pvesm-status");
        assert_eq!(
            names,
            ["default-install.txt", "inactive-disabled.txt", "zfs.txt"]
        );
    }
}
