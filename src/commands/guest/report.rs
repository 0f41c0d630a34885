//! The guest command's document: each disk's figures guest / host / share,
//! the VM settings read, and the hints that read the two together.

use serde::{Deserialize, Serialize};

use crate::model::hint::Hint;

use super::profile::{JOBS, Profile, SYNC_KEY};
use super::{DiskResult, VmSummary};

/// The document's `kind`.
pub const KIND: &str = "guest";
/// Its schema's version: a change that breaks a reader counts it up.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestReport {
    pub schema_version: u32,
    /// Always `guest`: how `compare` knows the document.
    pub kind: String,
    pub pveprobe_version: String,
    /// When the run started (RFC 3339).
    pub timestamp: String,
    pub vm: VmSummary,
    pub disks: Vec<DiskResult>,
    pub hints: Vec<Hint>,
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

use pveprobe_parse::vmconf::Bus;

type Found = Option<Hint>;

/// A hint about `d`'s drive (tests/it/docs.rs finds every code by this call).
fn guest_hint(code: &str, d: &DiskResult, message: String) -> Hint {
    Hint::new(code, d.settings.key.clone(), message)
}

/// cache=unsafe always; writeback where the guest's synced writes beat the host's.
fn cache_absorbs_flushes(d: &DiskResult) -> Found {
    let sync_share = share(d, SYNC_KEY);
    let message = match d.settings.cache.as_str() {
        "unsafe" => format!(
            "cache=unsafe drops the guest's flushes: its SYNC WRITE 4K{} is no disk's, and a host crash loses data the guest was told is safe; cache=none",
            sync_share
                .map(|x| format!(" ({x:.1}x the host's)"))
                .unwrap_or_default()
        ),
        "writeback" if sync_share.is_some_and(|x| x > 1.1) => format!(
            "cache=writeback: the guest's SYNC WRITE 4K is {:.1}x the host's, the host's page cache takes writes the guest's flushes should have sent to the disk; cache=none measures the disk",
            sync_share.unwrap_or(0.0)
        ),
        _ => return None,
    };
    Some(guest_hint("cache-absorbs-flushes", d, message))
}

/// iothread=1 where PVE does not give the disk an I/O thread.
fn iothread_ignored(d: &DiskResult, vm: &VmSummary) -> Found {
    let s = &d.settings;
    let served = s.bus == Bus::Virtio || (s.bus == Bus::Scsi && vm.scsihw == "virtio-scsi-single");
    (s.iothread && !served).then(|| {
        guest_hint("iothread-ignored", d,
            format!(
                "iothread=1 on {} with scsihw {}: PVE gives a disk its own I/O thread only on virtio-blk or with virtio-scsi-single; qm set {} --scsihw virtio-scsi-single",
                s.key, vm.scsihw, vm.vmid
            ),
        )
    })
}

/// IDE, SATA, or SCSI on an emulated HBA.
fn controller_emulated(d: &DiskResult, vm: &VmSummary) -> Found {
    let what = match d.settings.bus {
        Bus::Ide => "ide".to_string(),
        Bus::Sata => "sata".to_string(),
        Bus::Scsi
            if matches!(
                vm.scsihw.as_str(),
                "lsi" | "lsi53c810" | "megasas" | "pvscsi"
            ) =>
        {
            format!("scsihw {}", vm.scsihw)
        }
        _ => return None,
    };
    Some(guest_hint(
        "controller-emulated",
        d,
        format!(
            "{} is on an emulated controller ({what}): every I/O goes through QEMU's device model; virtio-scsi-single or virtio-blk with the guest's virtio driver",
            d.settings.key
        ),
    ))
}

/// The figure a throttle caps, and its unit: PVE's mbps are MiB/s
/// (QEMU's bps = mbps * 1024 * 1024).
fn capped(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "iops_rd" | "iops" => ("rand_read_4k_qd32", "IOPS"),
        "iops_wr" => ("rand_write_4k_qd32", "IOPS"),
        "mbps_rd" | "mbps" => ("seq_read_1m_qd8", "MiB/s"),
        "mbps_wr" => ("seq_write_1m_qd8", "MiB/s"),
        _ => return None,
    })
}

/// Every limit whose figure sits within 10% of it.
fn throttled(d: &DiskResult) -> Vec<Hint> {
    d.settings
        .throttles
        .iter()
        .filter_map(|(name, limit)| {
            let (key, unit) = capped(name)?;
            let v = value(d.guest.as_ref(), key)?;
            (v >= limit * 0.9 && v <= limit * 1.1).then(|| {
                guest_hint("throttled", d,
                    format!(
                        "{name}={limit} caps it: the guest's {} is {v:.0} {unit}; raise or remove the limit",
                        key.replace('_', " ").to_uppercase()
                    ),
                )
            })
        })
        .collect()
}

/// A thin volume whose guest's discards are dropped.
fn discard_off_on_thin(d: &DiskResult, vm: &VmSummary) -> Found {
    let s = &d.settings;
    let kind = s.storage_type.as_deref().filter(|t| THIN.contains(t));
    let kind = kind.or(s.file.ends_with(".qcow2").then_some("qcow2"))?;
    (!s.discard).then(|| {
        guest_hint("discard-off-on-thin", d,
            format!(
                "{} is thin ({kind}) without discard=on: what the guest deletes stays allocated; qm set {} --{} {},discard=on and fstrim in the guest",
                s.key, vm.vmid, s.key, s.drive.replace(",discard=ignore", "")
            ),
        )
    })
}

/// aio=threads where io_uring or native serve the cache mode.
fn aio_threads(d: &DiskResult) -> Found {
    let s = &d.settings;
    let buffered = matches!(s.cache.as_str(), "writeback" | "unsafe" | "writethrough");
    (s.aio.as_deref() == Some("threads") && !buffered).then(|| {
        guest_hint("aio-threads", d,
            format!(
                "aio=threads on {} with cache={}: a pool of threads per request; aio=io_uring (PVE's default) or native serve this cache mode",
                s.key, s.cache
            ),
        )
    })
}

/// A disk on IDE, SATA or SCSI without ssd=1 whose host disks are all
/// non-rotational: the guest sees a spinning disk (no discard
/// granularity, no rotation-rate 1), schedules and trims as for one.
fn ssd_off(d: &DiskResult) -> Found {
    let s = &d.settings;
    let emulates = matches!(s.bus, Bus::Ide | Bus::Sata | Bus::Scsi);
    (emulates && !s.ssd && d.host_rotational == Some(false)).then(|| {
        guest_hint("ssd-off", d,
            format!(
                "{} is on non-rotational disks but shown to the guest as a rotating one (ssd=0): its I/O scheduler and fstrim treat it as a spinning disk; add ssd=1",
                s.key
            ),
        )
    })
}

/// A zvol whose volblocksize is larger than the guest filesystem's blocks.
fn volblocksize_vs_guest_block(d: &DiskResult) -> Found {
    let vol = d.settings.volblocksize?;
    let block = d.guest.as_ref()?.block_size?;
    (block > 0 && vol > block).then(|| {
        guest_hint("volblocksize-vs-guest-block", d,
            format!(
                "{} is a zvol with volblocksize {}K under a guest filesystem of {}K blocks: each block the guest writes alone makes ZFS read and rewrite a whole {}K block ({}x the data); a new disk on a storage with blocksize {}k, or a guest filesystem of {}K blocks",
                d.settings.key,
                vol / 1024,
                block / 1024,
                vol / 1024,
                vol / block,
                block / 1024,
                vol / 1024
            ),
        )
    })
}

/// Every hint the settings and figures show.
pub fn hints(r: &GuestReport) -> Vec<Hint> {
    let mut out = Vec::new();
    for d in &r.disks {
        let found = [
            cache_absorbs_flushes(d),
            iothread_ignored(d, &r.vm),
            controller_emulated(d, &r.vm),
            discard_off_on_thin(d, &r.vm),
            aio_threads(d),
            ssd_off(d),
            volblocksize_vs_guest_block(d),
        ]
        .into_iter()
        .flatten()
        .chain(throttled(d));
        out.extend(found);
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

impl crate::results::Stored for GuestReport {
    const KIND: Option<&'static str> = Some(KIND);
    const SCHEMA_VERSION: u32 = SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    fn results(self) -> Vec<crate::results::Named> {
        let who = format!("VM {}", self.vm.vmid);
        vec![crate::results::Named::new(Some(who), self.as_result())]
    }
}

impl GuestReport {
    /// The guest side's figures as a result `compare` ranks: one entry per
    /// figure and VM disk (`guest_rand_read_4k_qd1` for `scsi0`).
    fn as_result(&self) -> crate::output::result::JsonReport {
        use crate::output::result::{JsonReport, XFigure};
        let extended = self
            .disks
            .iter()
            .filter_map(|d| Some((d, d.guest.as_ref()?)))
            .flat_map(|(d, p)| {
                p.figures.iter().map(|f| XFigure {
                    key: format!("guest_{}", f.key),
                    instance: Some(d.settings.key.clone()),
                    label: format!("GUEST {}", f.label),
                    unit: f.unit.clone(),
                    value: f.value,
                    samples: Vec::new(),
                    facts: Default::default(),
                })
            })
            .collect();
        JsonReport {
            schema_version: crate::output::result::SCHEMA_VERSION,
            pveprobe_version: self.pveprobe_version.clone(),
            timestamp: Some(self.timestamp.clone()).filter(|t| !t.is_empty()),
            path: format!("VM {}", self.vm.vmid),
            host: crate::model::host::HostInfo {
                hostname: Some(format!("VM {}", self.vm.vmid)),
                ..Default::default()
            },
            extended,
            interrupted_by_signal: self.interrupted_by,
            ..JsonReport::default()
        }
    }
}

/// The CSV's columns before the figures.
const CSV_BEFORE: [&str; 10] = [
    "timestamp",
    "vmid",
    "disk",
    "storage",
    "storage_type",
    "scsihw",
    "cache",
    "aio",
    "iothread",
    "discard",
];

impl crate::output::Document for GuestReport {
    const FORMATS: &'static [crate::output::Format] = crate::output::TABLES;

    fn text(&self) -> String {
        let mut out = String::new();
        let vm = &self.vm;
        out += &format!(
            "VM {}{}: {}, scsihw {}\n",
            vm.vmid,
            vm.name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default(),
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
                "  {:<28}{:>10}{:>10}{:>8}{:>12}{:>12}\n",
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
                    "  {:<28}{:>10}{:>10}{:>8}{:>12}{:>12}\n",
                    format!("{label} {unit}"),
                    fmt_value(value(d.guest.as_ref(), key)),
                    fmt_value(value(d.host.as_ref(), key)),
                    share(d, key)
                        .map(|x| format!("{:.0}%", x * 100.0))
                        .unwrap_or_else(|| "-".into()),
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
                out += &format!("  {h}\n");
            }
        }
        for left in &self.left_behind {
            out += &format!("\nLEFT BEHIND: {left}\n");
        }
        out
    }

    /// A row per VM disk (and the header first when `header`).
    fn csv(&self, header: bool) -> String {
        let mut rows = Vec::new();
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        for d in &self.disks {
            let s = &d.settings;
            let mut row = vec![
                self.timestamp.clone(),
                self.vm.vmid.to_string(),
                s.key.clone(),
                s.storage.clone().unwrap_or_default(),
                s.storage_type.clone().unwrap_or_default(),
                self.vm.scsihw.clone(),
                s.cache.clone(),
                s.aio.clone().unwrap_or_default(),
                u8::from(s.iothread).to_string(),
                u8::from(s.discard).to_string(),
            ];
            for (key, _) in keys() {
                row.push(opt(value(d.guest.as_ref(), key)));
                row.push(opt(value(d.host.as_ref(), key)));
                row.push(opt(share(d, key)));
            }
            rows.push(row);
        }
        let header = header
            .then(<Self as crate::output::Document>::csv_header)
            .flatten();
        crate::output::csv::table(header, rows)
    }

    /// The CSV header: the VM disk and its settings, then each figure
    /// guest, host and share (`guest_sync_write_4k`, `host_...`, `share_...`).
    fn csv_header() -> Option<Vec<&'static str>> {
        static HEADER: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
        HEADER
            .get_or_init(|| {
                let mut h = CSV_BEFORE.to_vec();
                for (key, _) in keys() {
                    for side in ["guest", "host", "share"] {
                        h.push(Box::leak(format!("{side}_{key}").into_boxed_str()));
                    }
                }
                h
            })
            .clone()
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::guest::DiskSettings;
    use crate::commands::guest::profile::ProfileFigure;
    use crate::output::Document as _;

    fn profile(values: &[(&str, f64)]) -> Profile {
        Profile {
            target: "t".into(),
            direct: true,
            bytes: 1 << 30,
            seconds: 1.0,
            block_size: Some(4096),
            figures: values
                .iter()
                .map(|(k, v)| ProfileFigure {
                    key: (*k).into(),
                    label: (*k).into(),
                    unit: "IOPS".into(),
                    value: *v,
                    latency: None,
                })
                .collect(),
        }
    }

    /// The codes of a VM with `scsihw` and one drive `line`, its guest and host figures.
    fn codes(
        scsihw: &str,
        line: &str,
        storage_type: Option<&str>,
        guest: &[(&str, f64)],
        host: &[(&str, f64)],
    ) -> Vec<String> {
        hint_list(scsihw, line, storage_type, guest, host, None)
            .into_iter()
            .map(|h| h.code)
            .collect()
    }

    fn hint_list(
        scsihw: &str,
        line: &str,
        storage_type: Option<&str>,
        guest: &[(&str, f64)],
        host: &[(&str, f64)],
        rotational: Option<bool>,
    ) -> Vec<Hint> {
        let vm = pveprobe_parse::vmconf::parse(line);
        let mut settings = DiskSettings::of(&vm.drives[0]);
        settings.storage_type = storage_type.map(str::to_string);
        let report = GuestReport {
            schema_version: SCHEMA_VERSION,
            kind: KIND.into(),
            pveprobe_version: String::new(),
            timestamp: String::new(),
            vm: VmSummary {
                vmid: 100,
                name: None,
                ostype: None,
                scsihw: scsihw.into(),
                guest_os: None,
                agent_version: None,
            },
            disks: vec![DiskResult {
                settings,
                guest_path: None,
                guest_fstype: None,
                guest: Some(profile(guest)),
                host: Some(profile(host)),
                host_rotational: rotational,
                errors: vec![],
            }],
            hints: vec![],
            left_behind: vec![],
            interrupted_by: None,
        };
        hints(&report)
    }

    const FAST: &str = "virtio-scsi-single";

    #[test]
    fn cache_absorbs_flushes_when_writeback_beats_the_host_or_always_with_unsafe() {
        let sync = |g, h| (vec![(SYNC_KEY, g)], vec![(SYNC_KEY, h)]);
        let (g, h) = sync(9000.0, 600.0);
        assert_eq!(
            codes(FAST, "scsi0: l:v,cache=writeback,discard=on", None, &g, &h),
            ["cache-absorbs-flushes"]
        );
        let (g, h) = sync(590.0, 600.0);
        assert!(codes(FAST, "scsi0: l:v,cache=writeback", None, &g, &h).is_empty());
        assert_eq!(
            codes(FAST, "scsi0: l:v,cache=unsafe", None, &g, &h),
            ["cache-absorbs-flushes"]
        );
        let (g, h) = sync(9000.0, 600.0);
        assert!(codes(FAST, "scsi0: l:v,cache=none", None, &g, &h).is_empty());
    }

    #[test]
    fn iothread_ignored_but_on_virtio_blk_and_virtio_scsi_single() {
        assert_eq!(
            codes("virtio-scsi-pci", "scsi0: l:v,iothread=1", None, &[], &[]),
            ["iothread-ignored"]
        );
        assert!(codes(FAST, "scsi0: l:v,iothread=1", None, &[], &[]).is_empty());
        assert!(codes("virtio-scsi-pci", "virtio0: l:v,iothread=1", None, &[], &[]).is_empty());
        assert!(codes("virtio-scsi-pci", "scsi0: l:v", None, &[], &[]).is_empty());
    }

    #[test]
    fn controller_emulated_for_ide_sata_and_emulated_hbas() {
        assert_eq!(
            codes(FAST, "sata0: l:v", None, &[], &[]),
            ["controller-emulated"]
        );
        assert_eq!(
            codes(FAST, "ide0: l:v", None, &[], &[]),
            ["controller-emulated"]
        );
        assert_eq!(
            codes("megasas", "scsi0: l:v", None, &[], &[]),
            ["controller-emulated"]
        );
        assert!(codes("lsi", "virtio0: l:v", None, &[], &[]).is_empty());
        assert!(codes("virtio-scsi-pci", "scsi0: l:v", None, &[], &[]).is_empty());
    }

    #[test]
    fn throttled_when_a_figure_sits_at_its_limit() {
        let at = [("rand_write_4k_qd32", 1010.0), ("seq_read_1m_qd8", 100.0)];
        assert_eq!(
            codes(FAST, "scsi0: l:v,iops_wr=1000", None, &at, &[]),
            ["throttled"]
        );
        assert_eq!(
            codes(FAST, "scsi0: l:v,mbps_rd=105", None, &at, &[]),
            ["throttled"]
        );
        assert!(codes(FAST, "scsi0: l:v,iops_wr=5000", None, &at, &[]).is_empty());
        assert!(codes(FAST, "scsi0: l:v", None, &at, &[]).is_empty());
    }

    #[test]
    fn ssd_off_where_every_host_disk_is_non_rotational() {
        let on = |line: &str, rotational| {
            hint_list(FAST, line, None, &[], &[], rotational)
                .into_iter()
                .map(|h| h.code)
                .collect::<Vec<_>>()
        };
        assert_eq!(on("scsi0: l:v", Some(false)), ["ssd-off"]);
        assert_eq!(
            on("sata0: l:v", Some(false)),
            ["controller-emulated", "ssd-off"]
        );
        assert!(on("scsi0: l:v,ssd=1", Some(false)).is_empty());
        assert!(on("scsi0: l:v", Some(true)).is_empty());
        assert!(on("scsi0: l:v", None).is_empty());
        // virtio-blk has no ssd option.
        assert!(on("virtio0: l:v", Some(false)).is_empty());
    }

    #[test]
    fn volblocksize_vs_guest_block_where_the_zvol_block_is_larger() {
        let with = |vol: Option<u64>| {
            let vm =
                pveprobe_parse::vmconf::parse("scsi0: local-zfs:vm-100-disk-0,discard=on,ssd=1");
            let mut settings = DiskSettings::of(&vm.drives[0]);
            settings.volblocksize = vol;
            let d = DiskResult {
                settings,
                guest_path: None,
                guest_fstype: None,
                guest: Some(profile(&[])),
                host: None,
                host_rotational: None,
                errors: vec![],
            };
            volblocksize_vs_guest_block(&d)
        };
        let Hint { code, message, .. } = with(Some(16384)).unwrap();
        assert_eq!(code, "volblocksize-vs-guest-block");
        assert!(
            message.contains("volblocksize 16K under a guest filesystem of 4K blocks")
                && message.contains("4x"),
            "{message}"
        );
        assert!(with(Some(4096)).is_none());
        assert!(with(None).is_none());
    }

    #[test]
    fn the_discard_hint_gives_the_whole_drive_string_back() {
        let h = hint_list(
            FAST,
            "scsi1: local-lvm:vm-100-disk-1,cache=writeback,discard=ignore,size=32G",
            Some("lvmthin"),
            &[],
            &[],
            None,
        );
        assert!(
            h[0].message.contains(
                "qm set 100 --scsi1 local-lvm:vm-100-disk-1,cache=writeback,size=32G,discard=on"
            ),
            "{}",
            h[0].message
        );
    }

    #[test]
    fn discard_off_on_thin_storages_and_qcow2() {
        assert_eq!(
            codes(
                FAST,
                "scsi0: local-lvm:vm-100-disk-0",
                Some("lvmthin"),
                &[],
                &[]
            ),
            ["discard-off-on-thin"]
        );
        assert_eq!(
            codes(
                FAST,
                "scsi0: local:100/vm-100-disk-0.qcow2",
                Some("dir"),
                &[],
                &[]
            ),
            ["discard-off-on-thin"]
        );
        assert!(
            codes(
                FAST,
                "scsi0: local-lvm:vm-100-disk-0,discard=on",
                Some("lvmthin"),
                &[],
                &[]
            )
            .is_empty()
        );
        assert!(codes(FAST, "scsi0: lvm:vm-100-disk-0", Some("lvm"), &[], &[]).is_empty());
    }

    #[test]
    fn aio_threads_but_where_the_cache_mode_needs_it() {
        assert_eq!(
            codes(FAST, "scsi0: l:v,aio=threads", None, &[], &[]),
            ["aio-threads"]
        );
        assert!(
            codes(
                FAST,
                "scsi0: l:v,aio=threads,cache=writeback",
                None,
                &[],
                &[]
            )
            .is_empty()
        );
        assert!(codes(FAST, "scsi0: l:v,aio=io_uring", None, &[], &[]).is_empty());
    }

    #[test]
    fn the_csv_has_a_row_per_disk_with_each_figure_guest_host_and_share() {
        let vm =
            pveprobe_parse::vmconf::parse("scsi0: local:v,cache=none\nscsi1: local:w,iothread=1\n");
        let disk = |d: &pveprobe_parse::vmconf::Drive| DiskResult {
            settings: DiskSettings::of(d),
            guest_path: None,
            guest_fstype: None,
            guest: Some(profile(&[(SYNC_KEY, 50.0)])),
            host: Some(profile(&[(SYNC_KEY, 200.0)])),
            host_rotational: None,
            errors: vec![],
        };
        let report = GuestReport {
            schema_version: SCHEMA_VERSION,
            kind: KIND.into(),
            pveprobe_version: String::new(),
            timestamp: "2026-12-04T03:00:00Z".into(),
            vm: VmSummary {
                vmid: 7,
                name: None,
                ostype: None,
                scsihw: FAST.into(),
                guest_os: None,
                agent_version: None,
            },
            disks: vm.drives.iter().map(disk).collect(),
            hints: vec![],
            left_behind: vec![],
            interrupted_by: None,
        };
        let csv = report.csv(true);
        let mut r = ::csv::Reader::from_reader(csv.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        assert_eq!(header.len(), 10 + 7 * 3);
        assert_eq!(
            header
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            header.len()
        );
        let rows: Vec<::csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(&rows[0][col("disk")], "scsi0");
        assert_eq!(&rows[1][col("iothread")], "1");
        assert_eq!(&rows[0][col("guest_sync_write_4k")], "50.000");
        assert_eq!(&rows[0][col("host_sync_write_4k")], "200.000");
        assert_eq!(&rows[0][col("share_sync_write_4k")], "0.250");
        assert_eq!(&rows[0][col("guest_seq_read_1m_qd8")], "");
        assert!(!report.csv(false).contains("vmid"));
    }
}
