//! The guest command's document: each disk's figures guest / host / share,
//! the VM settings read, and the hints that read the two together.

use serde::Serialize;

use super::profile::{JOBS, Profile, SYNC_KEY};
use super::{DiskResult, VmSummary};

/// A hint: a code documented in docs/hints.md, the disk, and what to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuestHint {
    pub code: &'static str,
    pub disk: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct GuestReport {
    pub kind: &'static str,
    pub vm: VmSummary,
    pub disks: Vec<DiskResult>,
    pub hints: Vec<GuestHint>,
    /// What could not be removed, in the guest or on the host.
    pub left_behind: Vec<String>,
    pub interrupted_by: Option<i32>,
}

/// The figures' keys in the table's order.
fn keys() -> impl Iterator<Item = (&'static str, &'static str)> {
    JOBS.iter()
        .map(|(k, l, _)| (*k, *l))
        .chain(std::iter::once((SYNC_KEY, "SYNC WRITE 4K")))
}

fn value(p: Option<&Profile>, key: &str) -> Option<f64> {
    p?.figure(key).map(|f| f.value)
}

/// The guest's figure as a share of the host's.
pub fn share(d: &DiskResult, key: &str) -> Option<f64> {
    let (g, h) = (value(d.guest.as_ref(), key)?, value(d.host.as_ref(), key)?);
    (h > 0.0).then_some(g / h)
}

/// Storage types whose volumes are thin: a guest's discards give space back.
const THIN: [&str; 3] = ["lvmthin", "zfspool", "rbd"];

/// Every hint the settings and figures show.
pub fn hints(r: &GuestReport) -> Vec<GuestHint> {
    let mut out = Vec::new();
    let scsihw = r.vm.scsihw.as_str();
    for d in &r.disks {
        let s = &d.settings;
        let mut hint = |code, message: String| {
            out.push(GuestHint {
                code,
                disk: s.key.clone(),
                message,
            })
        };
        let sync_share = share(d, SYNC_KEY);
        match s.cache.as_str() {
            "unsafe" => hint(
                "cache-absorbs-flushes",
                format!(
                    "cache=unsafe drops the guest's flushes: its SYNC WRITE 4K{} is no disk's, and a host crash loses data the guest was told is safe; cache=none",
                    sync_share.map(|x| format!(" ({x:.1}x the host's)")).unwrap_or_default()
                ),
            ),
            "writeback" if sync_share.is_some_and(|x| x > 1.1) => hint(
                "cache-absorbs-flushes",
                format!(
                    "cache=writeback: the guest's SYNC WRITE 4K is {:.1}x the host's, the host's page cache takes writes the guest's flushes should have sent to the disk; cache=none measures the disk",
                    sync_share.unwrap_or(0.0)
                ),
            ),
            _ => {}
        }
        let iothread_served = s.bus == pveprobe_parse::vmconf::Bus::Virtio
            || (s.bus == pveprobe_parse::vmconf::Bus::Scsi && scsihw == "virtio-scsi-single");
        if s.iothread && !iothread_served {
            hint(
                "iothread-ignored",
                format!(
                    "iothread=1 on {} with scsihw {scsihw}: PVE gives a disk its own I/O thread only on virtio-blk or with virtio-scsi-single; qm set {} --scsihw virtio-scsi-single",
                    s.key, r.vm.vmid
                ),
            );
        }
        let emulated = match s.bus {
            pveprobe_parse::vmconf::Bus::Ide | pveprobe_parse::vmconf::Bus::Sata => Some(format!("{:?}", s.bus).to_lowercase()),
            pveprobe_parse::vmconf::Bus::Scsi if matches!(scsihw, "lsi" | "lsi53c810" | "megasas" | "pvscsi") => {
                Some(format!("scsihw {scsihw}"))
            }
            _ => None,
        };
        if let Some(what) = emulated {
            hint(
                "controller-emulated",
                format!(
                    "{} is on an emulated controller ({what}): every I/O goes through QEMU's device model; virtio-scsi-single or virtio-blk with the guest's virtio driver"
                    , s.key
                ),
            );
        }
        for (name, limit) in &s.throttles {
            let (key, per_mib) = match name.as_str() {
                "iops_rd" | "iops" => ("rand_read_4k_qd32", false),
                "iops_wr" => ("rand_write_4k_qd32", false),
                "mbps_rd" | "mbps" => ("seq_read_1m_qd8", true),
                "mbps_wr" => ("seq_write_1m_qd8", true),
                _ => continue,
            };
            // PVE's mbps are MB/s of 2^20 bytes (QEMU's bps = mbps * 1024 * 1024).
            if let Some(v) = value(d.guest.as_ref(), key)
                && v >= limit * 0.9
                && v <= limit * 1.1
            {
                hint(
                    "throttled",
                    format!(
                        "{name}={limit} caps it: the guest's {} is {v:.0} {}; raise or remove the limit",
                        key.replace('_', " ").to_uppercase(),
                        if per_mib { "MiB/s" } else { "IOPS" }
                    ),
                );
            }
        }
        let thin = s.storage_type.as_deref().is_some_and(|t| THIN.contains(&t)) || s.file.ends_with(".qcow2");
        if thin && !s.discard {
            hint(
                "discard-off-on-thin",
                format!(
                    "{} is thin ({}) without discard=on: what the guest deletes stays allocated; qm set {} --{} {},discard=on and fstrim in the guest",
                    s.key,
                    s.storage_type.as_deref().unwrap_or("qcow2"),
                    r.vm.vmid,
                    s.key,
                    s.file
                ),
            );
        }
        if s.aio.as_deref() == Some("threads") && !matches!(s.cache.as_str(), "writeback" | "unsafe" | "writethrough") {
            hint(
                "aio-threads",
                format!(
                    "aio=threads on {} with cache={}: a pool of threads per request; aio=io_uring (PVE's default) or native serve this cache mode",
                    s.key, s.cache
                ),
            );
        }
    }
    out
}

fn fmt_value(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    }
}

impl GuestReport {
    pub fn text(&self) -> String {
        let mut out = String::new();
        let vm = &self.vm;
        out += &format!(
            "VM {}{}: {}, scsihw {}\n",
            vm.vmid,
            vm.name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default(),
            vm.guest_os.as_deref().unwrap_or("guest OS unknown"),
            vm.scsihw
        );
        for d in &self.disks {
            let s = &d.settings;
            out += &format!(
                "\nDISK {}: {} cache={} aio={} iothread={} discard={}\n",
                s.key,
                s.file,
                s.cache,
                s.aio.as_deref().unwrap_or("default"),
                u8::from(s.iothread),
                if s.discard { "on" } else { "ignore" }
            );
            if let Some(g) = &d.guest {
                out += &format!(
                    "  guest: {} ({}){}\n",
                    d.guest_path.as_deref().unwrap_or("?"),
                    d.guest_fstype.as_deref().unwrap_or("?"),
                    if g.direct { "" } else { ", not O_DIRECT" }
                );
            }
            if let Some(h) = &d.host {
                out += &format!("  host:  {}\n", h.target);
            }
            out += &format!(
                "  {:<22}{:>12}{:>12}{:>8}{:>12}{:>12}\n",
                "FIGURE", "GUEST", "HOST", "SHARE", "GUEST p99", "HOST p99"
            );
            for (key, label) in keys() {
                let unit = d
                    .guest
                    .as_ref()
                    .or(d.host.as_ref())
                    .and_then(|p| p.figure(key))
                    .map(|f| f.unit.clone())
                    .unwrap_or_default();
                let p99 = |p: Option<&Profile>| {
                    p.and_then(|p| p.figure(key))
                        .and_then(|f| f.latency)
                        .map(|l| format!("{:.0} us", l.p99_us))
                        .unwrap_or_else(|| "-".into())
                };
                out += &format!(
                    "  {:<22}{:>12}{:>12}{:>8}{:>12}{:>12}\n",
                    format!("{label} {unit}"),
                    fmt_value(value(d.guest.as_ref(), key)),
                    fmt_value(value(d.host.as_ref(), key)),
                    share(d, key).map(|x| format!("{:.0}%", x * 100.0)).unwrap_or_else(|| "-".into()),
                    p99(d.guest.as_ref()),
                    p99(d.host.as_ref()),
                );
            }
            for e in &d.errors {
                out += &format!("  not measured: {e}\n");
            }
        }
        if !self.hints.is_empty() {
            out += "\nHINTS\n";
            for h in &self.hints {
                out += &format!("  [{}] {}: {}\n", h.code, h.disk, h.message);
            }
        }
        for left in &self.left_behind {
            out += &format!("\nLEFT BEHIND: {left}\n");
        }
        out
    }

    pub const CSV_HEADER: [&'static str; 8] =
        ["vmid", "disk", "storage", "cache", "figure", "guest", "host", "share"];

    pub fn csv(&self, header: bool) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        if header {
            let _ = w.write_record(Self::CSV_HEADER);
        }
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        for d in &self.disks {
            for (key, _) in keys() {
                let _ = w.write_record([
                    self.vm.vmid.to_string(),
                    d.settings.key.clone(),
                    d.settings.storage.clone().unwrap_or_default(),
                    d.settings.cache.clone(),
                    key.to_string(),
                    opt(value(d.guest.as_ref(), key)),
                    opt(value(d.host.as_ref(), key)),
                    opt(share(d, key)),
                ]);
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// Set by the session before rendering: whether the CSV starts with its header.
#[derive(Debug, Clone, Serialize)]
pub struct GuestDocument {
    #[serde(flatten)]
    pub report: GuestReport,
    #[serde(skip)]
    pub csv_header: bool,
}

impl crate::output::Render for GuestDocument {
    const FORMATS: &'static [crate::output::Format] = crate::output::TABLES;

    fn text(&self) -> String {
        self.report.text()
    }

    fn csv(&self) -> String {
        self.report.csv(self.csv_header)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(GuestReport::CSV_HEADER.to_vec())
    }
}
