//! A device-mapper table line as `dmsetup table NAME` prints it, for the
//! targets pveprobe explains: the thin pool's chunk size and features
//! (the kernel's `Documentation/admin-guide/device-mapper/
//! thin-provisioning.rst`: `<start> <length> thin-pool <metadata dev>
//! <data dev> <data block size (sectors)> <low water mark (blocks)>
//! [<number of feature args> [<arg>]*]`).

/// A thin pool's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinPool {
    /// The data block ("chunk") size in bytes.
    pub chunk_bytes: u64,
    /// New chunks are zeroed before their first write (no `skip_block_zeroing`).
    pub zeroing: bool,
    /// `ignore_discard`: discards are dropped.
    pub ignore_discard: bool,
    /// `no_discard_passdown`: discards free chunks but do not reach the disk.
    pub no_discard_passdown: bool,
}

/// The thin-pool line of a table; `None` for any other target or a line
/// that does not parse.
pub fn thin_pool(table: &str) -> Option<ThinPool> {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some("thin-pool"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let sectors: u64 = words.get(5)?.parse().ok()?;
    // 64 KiB to 1 GiB, a multiple of 64 KiB (128 sectors).
    if !(128..=2_097_152).contains(&sectors) || !sectors.is_multiple_of(128) {
        return None;
    }
    words.get(6)?.parse::<u64>().ok()?;
    let count: usize = words.get(7).map_or(Some(0), |c| c.parse().ok())?;
    let features = if count == 0 {
        &[][..]
    } else {
        words.get(8..8usize.checked_add(count)?)?
    };
    Some(ThinPool {
        chunk_bytes: sectors * 512,
        zeroing: !features.contains(&"skip_block_zeroing"),
        ignore_discard: features.contains(&"ignore_discard"),
        no_discard_passdown: features.contains(&"no_discard_passdown"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_pool_lines() {
        // PVE's installer pool: 64 KiB chunks (128 sectors), zeroing on.
        let p = thin_pool("0 3770679296 thin-pool 252:2 252:3 128 0 0\n").unwrap();
        assert_eq!(p.chunk_bytes, 65536);
        assert!(p.zeroing && !p.ignore_discard);
        let p = thin_pool(
            "0 3770679296 thin-pool 252:2 252:3 1024 0 2 skip_block_zeroing no_discard_passdown",
        )
        .unwrap();
        assert_eq!(p.chunk_bytes, 512 << 10);
        assert!(!p.zeroing && p.no_discard_passdown);
        // Without the feature count.
        assert!(
            thin_pool("0 100 thin-pool 252:2 252:3 128 0")
                .unwrap()
                .zeroing
        );
        assert_eq!(thin_pool("0 100 linear 8:3 2048"), None);
        assert_eq!(thin_pool("0 100 thin-pool 252:2 252:3 100 0 0"), None);
        assert_eq!(thin_pool("0 100 thin-pool 252:2 252:3 128 0 3 a"), None);
        assert_eq!(thin_pool(""), None);
        // Found by the fuzzer: a feature count near usize::MAX.
        assert_eq!(
            thin_pool(
                "0 6 thin-pool 25:2 25 128 +0000000000 +000000000000000018446744073709551615"
            ),
            None
        );
    }
}
