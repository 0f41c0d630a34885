//! QEMU's QMP answers `top` reads: `query-blockstats` (each drive's
//! operations, bytes and the nanoseconds they took, counted by QEMU since
//! the VM started: what the guest waited for) and `query-block` (the file
//! or device behind each drive). Each takes the `return` value of one
//! answer, as text, which [`message`] takes out of the line QEMU wrote.

use serde::Deserialize;

/// One drive's counters (`BlockDeviceStats`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriveStats {
    /// PVE's drive id (`drive-scsi0`), or the device's qdev id where QEMU
    /// gives no drive name (`-blockdev`).
    pub drive: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub read_ns: u64,
    pub write_ns: u64,
    pub flush_ns: u64,
    /// QEMU's own latency window where the drive has one
    /// (`stats-intervals`): the shortest.
    pub timed: Option<TimedStats>,
    /// QEMU's latency histograms where one was set
    /// (`block-latency-histogram-set`): cumulative counts per bin.
    pub read_histogram: Option<Histogram>,
    pub write_histogram: Option<Histogram>,
}

/// One of QEMU's latency windows (`BlockDeviceTimedStats`): the reads'
/// and writes' latency over the last `interval_s` seconds, as QEMU keeps
/// it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct TimedStats {
    #[serde(rename = "interval_length")]
    pub interval_s: u64,
    #[serde(rename = "max_rd_latency_ns", default)]
    pub max_read_ns: u64,
    #[serde(rename = "avg_rd_latency_ns", default)]
    pub avg_read_ns: u64,
    #[serde(rename = "max_wr_latency_ns", default)]
    pub max_write_ns: u64,
    #[serde(rename = "avg_wr_latency_ns", default)]
    pub avg_write_ns: u64,
    #[serde(rename = "avg_rd_queue_depth", default)]
    pub avg_read_queue: f64,
    #[serde(rename = "avg_wr_queue_depth", default)]
    pub avg_write_queue: f64,
}

/// A latency histogram (`BlockLatencyHistogramInfo`): `bins[i]` counts the
/// operations that took from `boundaries_ns[i-1]` up to `boundaries_ns[i]`
/// (the first from 0, the last beyond the last boundary).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct Histogram {
    #[serde(rename = "boundaries")]
    pub boundaries_ns: Vec<u64>,
    pub bins: Vec<u64>,
}

impl Histogram {
    /// Whether it is one QEMU could have given: a bin more than boundaries.
    pub fn well_formed(&self) -> bool {
        self.bins.len() == self.boundaries_ns.len() + 1
            && self.boundaries_ns.windows(2).all(|w| w[0] < w[1])
    }

    /// The upper boundary (ns) of the bin where `share` (0 to 1) of the
    /// operations counted since `before` fall: the percentile as the
    /// histogram can tell it; `None` without operations, for the last bin
    /// (no upper boundary), or when `before` is another histogram.
    pub fn percentile_since(&self, before: &Histogram, share: f64) -> Option<u64> {
        if !self.well_formed() || before.boundaries_ns != self.boundaries_ns {
            return None;
        }
        let counts: Vec<u64> = self
            .bins
            .iter()
            .zip(&before.bins)
            .map(|(a, b)| a.saturating_sub(*b))
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        let want = (share.clamp(0.0, 1.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, c) in counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return self.boundaries_ns.get(i).copied();
            }
        }
        None
    }
}

#[derive(Deserialize)]
struct RawEntry {
    #[serde(default)]
    device: String,
    #[serde(default)]
    qdev: String,
    stats: RawStats,
}

#[derive(Deserialize)]
struct RawStats {
    rd_bytes: u64,
    wr_bytes: u64,
    rd_operations: u64,
    wr_operations: u64,
    #[serde(default)]
    flush_operations: u64,
    #[serde(default)]
    rd_total_time_ns: u64,
    #[serde(default)]
    wr_total_time_ns: u64,
    #[serde(default)]
    flush_total_time_ns: u64,
    #[serde(default)]
    timed_stats: Vec<TimedStats>,
    rd_latency_histogram: Option<Histogram>,
    wr_latency_histogram: Option<Histogram>,
}

/// Why an answer is not what QMP answers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("not a QMP {what} answer: {why}")]
pub struct QmpError {
    pub what: &'static str,
    pub why: String,
}

/// The drive name of an entry: `device`, else the last part of `qdev`
/// (`/machine/peripheral/scsi0/virtio-backend` gives `scsi0`).
fn drive_name(device: &str, qdev: &str) -> String {
    if !device.is_empty() {
        return device.to_string();
    }
    qdev.trim_end_matches("/virtio-backend")
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `query-blockstats`'s return: one entry per drive with a name.
pub fn blockstats(text: &str) -> Result<Vec<DriveStats>, QmpError> {
    let raw: Vec<RawEntry> = serde_json::from_str(text).map_err(|e| QmpError {
        what: "query-blockstats",
        why: e.to_string(),
    })?;
    Ok(raw
        .into_iter()
        .map(|e| DriveStats {
            drive: drive_name(&e.device, &e.qdev),
            read_bytes: e.stats.rd_bytes,
            write_bytes: e.stats.wr_bytes,
            reads: e.stats.rd_operations,
            writes: e.stats.wr_operations,
            flushes: e.stats.flush_operations,
            read_ns: e.stats.rd_total_time_ns,
            write_ns: e.stats.wr_total_time_ns,
            flush_ns: e.stats.flush_total_time_ns,
            timed: e
                .stats
                .timed_stats
                .into_iter()
                .filter(|t| t.interval_s > 0)
                .min_by_key(|t| t.interval_s),
            read_histogram: e.stats.rd_latency_histogram.filter(Histogram::well_formed),
            write_histogram: e.stats.wr_latency_histogram.filter(Histogram::well_formed),
        })
        .filter(|d| !d.drive.is_empty())
        .collect())
}

#[derive(Deserialize)]
struct RawBlock {
    #[serde(default)]
    device: String,
    #[serde(default)]
    qdev: String,
    inserted: Option<RawInserted>,
}

#[derive(Deserialize)]
struct RawInserted {
    file: String,
}

/// `query-block`'s return: each drive with a medium and the file or
/// device QEMU opened for it (`/dev/zvol/...`, `rbd:pool/vm-100-disk-0...`,
/// `/mnt/pve/nfs/images/100/vm-100-disk-0.qcow2`).
pub fn block_files(text: &str) -> Result<Vec<(String, String)>, QmpError> {
    let raw: Vec<RawBlock> = serde_json::from_str(text).map_err(|e| QmpError {
        what: "query-block",
        why: e.to_string(),
    })?;
    Ok(raw
        .into_iter()
        .filter_map(|b| Some((drive_name(&b.device, &b.qdev), b.inserted?.file)))
        .filter(|(d, _)| !d.is_empty())
        .collect())
}

fn answer<T: serde::de::DeserializeOwned>(what: &'static str, text: &str) -> Result<T, QmpError> {
    serde_json::from_str(text).map_err(|e| QmpError {
        what,
        why: e.to_string(),
    })
}

#[derive(Deserialize)]
struct RawCpu {
    #[serde(rename = "cpu-index")]
    index: u32,
    #[serde(rename = "thread-id")]
    thread: u32,
}

/// `query-cpus-fast`'s return: each vCPU's index and the host thread that
/// runs it, by index.
pub fn vcpu_threads(text: &str) -> Result<Vec<(u32, u32)>, QmpError> {
    let raw: Vec<RawCpu> = answer("query-cpus-fast", text)?;
    let mut out: Vec<(u32, u32)> = raw.into_iter().map(|c| (c.index, c.thread)).collect();
    out.sort_unstable();
    Ok(out)
}

#[derive(Deserialize)]
struct RawBalloon {
    actual: u64,
}

/// `query-balloon`'s return: the memory the guest has now, bytes (its
/// memory less what the balloon holds).
pub fn balloon_actual(text: &str) -> Result<u64, QmpError> {
    Ok(answer::<RawBalloon>("query-balloon", text)?.actual)
}

#[derive(Deserialize)]
struct RawMemorySize {
    #[serde(rename = "base-memory")]
    base: u64,
    #[serde(rename = "plugged-memory", default)]
    plugged: u64,
}

/// `query-memory-size-summary`'s return: the memory the VM was given,
/// bytes (its base and what was hot-plugged).
pub fn memory_size(text: &str) -> Result<u64, QmpError> {
    let m: RawMemorySize = answer("query-memory-size-summary", text)?;
    Ok(m.base.saturating_add(m.plugged))
}

/// What the guest's balloon driver says of its memory (`qom-get` of the
/// balloon device's `guest-stats`), bytes and events since its boot; a
/// figure it has not reported is `None`, as is everything before the
/// first poll (QEMU's `2^64 - 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GuestStats {
    /// When the guest last reported, s since the epoch (0: never).
    pub last_update: u64,
    pub available: Option<u64>,
    pub swap_in: Option<u64>,
    pub swap_out: Option<u64>,
    pub major_faults: Option<u64>,
}

#[derive(Deserialize)]
struct RawGuestStats {
    stats: std::collections::BTreeMap<String, u64>,
    #[serde(rename = "last-update")]
    last_update: u64,
}

/// `qom-get` of `guest-stats`'s return.
pub fn guest_stats(text: &str) -> Result<GuestStats, QmpError> {
    let raw: RawGuestStats = answer("qom-get guest-stats", text)?;
    let get = |k: &str| raw.stats.get(k).copied().filter(|v| *v != u64::MAX);
    Ok(GuestStats {
        last_update: raw.last_update,
        available: get("stat-available-memory"),
        swap_in: get("stat-swap-in"),
        swap_out: get("stat-swap-out"),
        major_faults: get("stat-major-faults"),
    })
}

/// What one line QEMU wrote on its QMP socket is: the greeting, an answer
/// (its `return` as JSON text, for its command's parser: read once, never
/// built into a tree), a refusal (its `error`'s `desc`), or anything else
/// (an event).
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Greeting,
    Answer(String),
    Refused(String),
    Other,
}

/// A message's members that tell what it is; the rest passed over unread.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "QMP")]
    greeting: Option<serde::de::IgnoredAny>,
    #[serde(rename = "return", borrow)]
    answer: Option<&'a serde_json::value::RawValue>,
    error: Option<Refusal>,
}

#[derive(Deserialize)]
struct Refusal {
    desc: Option<String>,
}

/// What the line `text` (one JSON object) is.
pub fn message(text: &str) -> Result<Message, serde_json::Error> {
    let e: Envelope = serde_json::from_str(text)?;
    Ok(match (e.greeting, e.answer, e.error) {
        (_, Some(r), _) => Message::Answer(r.get().to_string()),
        (_, _, Some(r)) => Message::Refused(r.desc.unwrap_or_else(|| "?".into())),
        (Some(_), ..) => Message::Greeting,
        _ => Message::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::fixture;

    #[test]
    fn blockstats_of_a_vm_give_each_drives_counters() {
        let all = blockstats(&fixture("qemu/7.2", "query-blockstats.json")).unwrap();
        let names: Vec<&str> = all.iter().map(|d| d.drive.as_str()).collect();
        assert_eq!(names, ["drive-scsi0", "drive-virtio0"]);
        // SeaBIOS read the boot sector of the SCSI disk, and nothing else.
        let d = &all[0];
        assert_eq!((d.reads, d.read_bytes, d.writes), (1, 512, 0));
        assert!(d.read_ns > 0);
        assert_eq!(all[1].reads, 0);
        assert!(blockstats("{\"return\": 1}").is_err());
    }

    #[test]
    fn qemus_latency_window_and_histograms_where_they_are_enabled() {
        let all = blockstats(&fixture("qemu/7.2", "query-blockstats-timed.json")).unwrap();
        let d = &all[0];
        assert_eq!(d.drive, "drive-scsi0");
        // Two windows (10 s and 60 s): the shorter is kept.
        let t = d.timed.as_ref().unwrap();
        assert_eq!(t.interval_s, 10);
        assert!(d.reads > 0);
        let h = d.read_histogram.as_ref().unwrap();
        assert!(h.well_formed());
        assert_eq!(h.bins.iter().sum::<u64>(), d.reads);
        let none = Histogram {
            boundaries_ns: h.boundaries_ns.clone(),
            bins: vec![0; h.bins.len()],
        };
        let p = h.percentile_since(&none, 0.99).unwrap();
        assert!(h.boundaries_ns.contains(&p));
        // The first drive has none of them.
        let plain = blockstats(&fixture("qemu/7.2", "query-blockstats.json")).unwrap();
        assert!(plain[0].timed.is_none() && plain[0].read_histogram.is_none());
    }

    #[test]
    fn a_percentile_is_the_upper_boundary_of_its_bin_over_the_interval() {
        let h = |bins: Vec<u64>| Histogram {
            boundaries_ns: vec![1_000, 10_000, 100_000],
            bins,
        };
        let before = h(vec![5, 5, 5, 5]);
        // 100 new: 90 under 1 µs, 9 to 10 µs, 1 to 100 µs.
        let now = h(vec![95, 14, 6, 5]);
        assert_eq!(now.percentile_since(&before, 0.5), Some(1_000));
        assert_eq!(now.percentile_since(&before, 0.99), Some(10_000));
        assert_eq!(now.percentile_since(&before, 1.0), Some(100_000));
        // Nothing new, another histogram, one beyond the last boundary.
        assert_eq!(before.percentile_since(&before, 0.99), None);
        let other = Histogram {
            boundaries_ns: vec![1, 2, 3],
            bins: vec![0; 4],
        };
        assert_eq!(now.percentile_since(&other, 0.99), None);
        assert_eq!(h(vec![5, 5, 5, 6]).percentile_since(&before, 0.99), None);
        assert!(!h(vec![1, 2]).well_formed());
    }

    #[test]
    fn block_files_give_each_drives_file() {
        let all = block_files(&fixture("qemu/7.2", "query-block.json")).unwrap();
        assert_eq!(
            all,
            [
                (
                    "drive-scsi0".into(),
                    "/var/lib/vz/images/100/disk.raw".into()
                ),
                (
                    "drive-virtio0".into(),
                    "/var/lib/vz/images/100/disk2.raw".into()
                )
            ]
        );
    }

    #[test]
    fn a_blockdev_drive_is_named_by_its_qdev() {
        assert_eq!(
            drive_name("", "/machine/peripheral/scsi0/virtio-backend"),
            "scsi0"
        );
        assert_eq!(drive_name("", "scsi1"), "scsi1");
        assert_eq!(drive_name("drive-scsi0", "x"), "drive-scsi0");
    }

    #[test]
    fn a_vms_vcpu_threads_balloon_and_memory() {
        let cpus = vcpu_threads(&fixture("qemu/7.2", "query-cpus-fast.json")).unwrap();
        assert_eq!(cpus, [(0, 26158), (1, 26159)]);
        let actual = balloon_actual(&fixture("qemu/7.2", "query-balloon.json")).unwrap();
        let size = memory_size(&fixture("qemu/7.2", "query-memory-size-summary.json")).unwrap();
        assert_eq!((actual, size), (512 << 20, 512 << 20));
        // Before the guest's first report every figure is QEMU's -1.
        let unpolled =
            guest_stats(&fixture("qemu/7.2", "qom-get-guest-stats-unpolled.json")).unwrap();
        assert_eq!(unpolled, GuestStats::default());
        let polled = guest_stats(
            r#"{"stats": {"stat-available-memory": 1048576, "stat-swap-in": 3, "stat-swap-out": 18446744073709551615}, "last-update": 1765000000}"#,
        )
        .unwrap();
        assert_eq!(polled.available, Some(1048576));
        assert_eq!((polled.swap_in, polled.swap_out), (Some(3), None));
        for bad in ["", "{}", "[{\"cpu-index\": 0}]", "{\"actual\": -1}"] {
            assert!(vcpu_threads(bad).is_err(), "{bad}");
            assert!(balloon_actual(bad).is_err(), "{bad}");
            assert!(memory_size(bad).is_err(), "{bad}");
            assert!(guest_stats(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_message_of_a_real_session_is_told_apart() {
        let lines = fixture("qemu/7.2", "session.jsonl");
        let got: Vec<Message> = lines.lines().map(|l| message(l).unwrap()).collect();
        let answer = || Message::Answer("{}".into());
        assert_eq!(
            got,
            [
                Message::Greeting,
                answer(),
                Message::Refused("The command query-no-such-thing has not been found".into()),
                Message::Other,
                answer(),
                Message::Other,
                answer(),
            ]
        );
        // An answer is its `return` as QEMU wrote it, for its parser.
        let text = r#"{"return": [{"device": "drive-scsi0", "stats": {"rd_bytes": 512}}]}"#;
        let Message::Answer(r) = message(text).unwrap() else {
            panic!("not an answer");
        };
        assert_eq!(
            r,
            r#"[{"device": "drive-scsi0", "stats": {"rd_bytes": 512}}]"#
        );
        assert!(message("{\"return\": ").is_err());
        assert!(message("[1, 2]").is_err());
    }
}
