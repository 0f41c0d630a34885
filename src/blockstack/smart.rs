//! The leaf disks' health and heat, read with smartmontools' `smartctl
//! --json` (as PVE's GUI shows it) and the kernel's hwmon sensors.
//!
//! smartctl runs through the child helper (no shell, a time limit, an
//! output cap), with a fixed list of options that only read:
//! `--json=c --nocheck=standby --xall [-d TYPE] DEVICE`, and `--scan-open
//! --json=c` to find the physical disks behind a RAID controller.
//! `--nocheck=standby` leaves a sleeping disk asleep (smartctl exits with
//! status 2 and says so). Nothing here writes, enables, or starts a test.
//! Device names come from sysfs (`/dev/<kernel name>`) or smartctl's own
//! scan, and are checked before they reach a command line.

use std::path::Path;
use std::time::Duration;

use crate::model::storage::{Disk, Health, Heat, Storage, Thermal};
use crate::sys::child;
use crate::sys::host::Host;
use crate::sys::interrupt::Interrupt;
use pveprobe_parse::smart::{self, Smart};

/// How long one smartctl call may take. A healthy disk answers `--xall`
/// in well under a second; one retrying a bad sector can take longer, and
/// is then reported as not answering rather than holding the probe.
pub const SMARTCTL_LIMIT: Duration = Duration::from_secs(10);

/// The program, found on PATH.
pub const SMARTCTL: &str = "smartctl";

/// What was learned and what was not.
#[derive(Debug, Default)]
pub struct SmartReading {
    pub health: Option<Health>,
    pub problem: Option<String>,
}

/// A kernel name or smartctl's device path that may reach a command line:
/// `/dev/` and then letters, digits, `/`, `_`, `-`, `.` (no `..`).
fn safe_device(path: &str) -> bool {
    path.strip_prefix("/dev/").is_some_and(|rest| {
        !rest.is_empty()
            && !rest.contains("..")
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'.'))
    })
}

/// A `-d` type from smartctl's scan: `megaraid,3`, `sat+megaraid,0`, `cciss,1`.
fn safe_type(kind: &str) -> bool {
    !kind.is_empty()
        && kind
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b',' | b'+' | b'_'))
}

/// Disks smartctl has nothing to say about.
fn has_smart(d: &Disk) -> bool {
    !matches!(d.transport.as_deref(), Some("virtual" | "virtio"))
        && !["loop", "zram", "ram", "nbd", "md", "dm-"]
            .iter()
            .any(|p| d.name.starts_with(p))
}

/// How smartctl is run: in the C locale, for at most [`SMARTCTL_LIMIT`];
/// any exit status is its answer (its bits say what it found, and the
/// JSON says the rest).
fn smartctl_opts(interrupt: Option<&Interrupt>) -> child::ChildOptions<'_> {
    child::ChildOptions {
        interrupt,
        env: &[("LC_ALL", "C")],
        ..child::ChildOptions::limit(SMARTCTL_LIMIT).any_status()
    }
}

/// Why smartctl with `args` gave no answer, as a reading says it.
fn smartctl_failed(f: child::ToolFailure, args: &[&str]) -> String {
    match f {
        child::ToolFailure::NotStarted { missing: true, .. } => {
            "smartctl is not installed: install smartmontools to see the disks' health (SMART); the figures are \
             unaffected"
                .into()
        }
        child::ToolFailure::TimedOut => format!(
            "smartctl did not answer within {} s ({}): health not read",
            SMARTCTL_LIMIT.as_secs(),
            args.last().copied().unwrap_or_default()
        ),
        child::ToolFailure::Interrupted(_) => "smartctl: interrupted".into(),
        f => format!("smartctl could not be started: {f}"),
    }
}

fn health_of(source: String, s: Smart) -> Health {
    let ata = s.ata.unwrap_or_default();
    let nvme = s.nvme.unwrap_or_default();
    let scsi = s.scsi.unwrap_or_default();
    let uncorrected = match (scsi.uncorrected_read, scsi.uncorrected_write) {
        (None, None) => None,
        (r, w) => Some(r.unwrap_or(0) + w.unwrap_or(0)),
    };
    let sum = |a: [Option<u64>; 2]| match a {
        [None, None] => None,
        [x, y] => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    };
    let thermal = Thermal {
        source: "smartctl".into(),
        temperature_c: s.temperature_c.map(|t| t as f64),
        warning_minutes: nvme.warning_temp_time,
        critical_minutes: nvme.critical_comp_time,
        throttle_transitions: sum(nvme.thermal_transitions),
        throttle_seconds: sum(nvme.thermal_seconds),
    };
    Health {
        source,
        model: s.model,
        serial: s.serial,
        passed: s.passed,
        power_on_hours: s.power_on_hours,
        temperature_c: s.temperature_c,
        reallocated_sectors: ata.reallocated,
        pending_sectors: ata.pending,
        offline_uncorrectable: ata.offline_uncorrectable,
        crc_errors: ata.crc_errors,
        wear_used_pct: nvme.percentage_used.or(ata.wear_used_pct),
        wear_source: if nvme.percentage_used.is_some() {
            Some("NVMe percentage used".into())
        } else {
            ata.wear_source
        },
        link_current: ata.link_current,
        link_max: ata.link_max,
        critical_warning: nvme.critical_warning,
        available_spare_pct: nvme.available_spare,
        available_spare_threshold_pct: nvme.available_spare_threshold,
        media_errors: nvme.media_errors,
        unsafe_shutdowns: nvme.unsafe_shutdowns,
        data_written_bytes: nvme.data_units_written.map(|u| u.saturating_mul(512_000)),
        grown_defects: scsi.grown_defects,
        uncorrected_errors: uncorrected,
        thermal: Some(thermal),
    }
}

/// One device's health: `dtype` is smartctl's `-d` where needed.
pub fn read(device: &str, dtype: Option<&str>, interrupt: Option<&Interrupt>) -> SmartReading {
    if !safe_device(device) || dtype.is_some_and(|t| !safe_type(t)) {
        return SmartReading {
            health: None,
            problem: Some(format!("{device}: not a device name smartctl is given")),
        };
    }
    let mut args = vec!["--json=c", "--nocheck=standby", "--xall"];
    if let Some(t) = dtype {
        args.extend(["-d", t]);
    }
    args.push(device);
    let source = format!("smartctl {}", args[3..].join(" "));
    let out = match child::run(SMARTCTL, &args, &smartctl_opts(interrupt)) {
        Ok(done) => done.stdout,
        Err(f) => {
            return SmartReading {
                health: None,
                problem: Some(smartctl_failed(f, &args)),
            };
        }
    };
    reading(source, &String::from_utf8_lossy(&out))
}

/// What one smartctl answer tells: the health, or why there is none (a
/// disk asleep, a device smartctl cannot reach, output that is not its
/// JSON).
fn reading(source: String, text: &str) -> SmartReading {
    let problem = |why: String| SmartReading {
        health: None,
        problem: Some(format!("{source}: {why}")),
    };
    match smart::parse(text) {
        // --nocheck=standby: smartctl left the disk asleep and read nothing.
        Ok(s) if s.messages.iter().any(|m| m.contains("STANDBY")) => {
            problem("in standby; not woken to read its health".into())
        }
        Ok(s) if s.passed.is_none() && s.protocol.is_none() => {
            let why =
                s.messages.first().cloned().unwrap_or_else(|| {
                    format!("exit status {}", s.exit_status.unwrap_or_default())
                });
            problem(why)
        }
        Ok(s) => SmartReading {
            health: Some(health_of(source, s)),
            problem: None,
        },
        Err(e) => problem(e.to_string()),
    }
}

/// The SCSI host number in a disk's sysfs path (`.../host0/target0:2:0/...`).
fn scsi_host(host: &Host, name: &str) -> Option<u32> {
    let path = host.resolve(format!("/sys/class/block/{name}"))?;
    path.ancestors()
        .filter_map(|a| a.file_name()?.to_str()?.strip_prefix("host")?.parse().ok())
        .next()
}

/// The physical disks smartctl's scan finds behind a RAID volume: for
/// MegaRAID those on the volume's SCSI host (`/dev/bus/N`), for other
/// controllers every pass-through disk the scan lists.
fn behind(
    host: &Host,
    volume: &Disk,
    scan: &[smart::Scanned],
    interrupt: Option<&Interrupt>,
) -> Vec<SmartReading> {
    let bus = scsi_host(host, &volume.name).map(|n| format!("/dev/bus/{n}"));
    scan.iter()
        .filter(|s| {
            let raid = ["megaraid,", "sat+megaraid,", "cciss,", "areca,", "aacraid,"]
                .iter()
                .any(|p| s.kind.starts_with(p));
            let megaraid = s.kind.contains("megaraid,");
            raid && (!megaraid || bus.as_deref() == Some(s.name.as_str()))
        })
        .map(|s| read(&s.name, Some(&s.kind), interrupt))
        .collect()
}

/// Reads the health of every leaf disk smartctl can reach, in parallel,
/// into `storage` (problems into its problems, one line for a missing
/// smartctl).
pub fn read_storage(host: &Host, storage: &mut Storage, interrupt: Option<&Interrupt>) {
    let wanted: Vec<usize> = (0..storage.disks.len())
        .filter(|&i| has_smart(&storage.disks[i]))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let raid = wanted
        .iter()
        .any(|&i| storage.disks[i].transport.as_deref() == Some("RAID volume"));
    let scan = if raid {
        child::run(
            SMARTCTL,
            &["--scan-open", "--json=c"],
            &smartctl_opts(interrupt),
        )
        .ok()
        .and_then(|done| smart::parse_scan(&String::from_utf8_lossy(&done.stdout)).ok())
        .unwrap_or_default()
    } else {
        Vec::new()
    };
    let readings: Vec<(usize, SmartReading, Vec<SmartReading>)> = std::thread::scope(|s| {
        let handles: Vec<_> = wanted
            .iter()
            .map(|&i| {
                let disk = &storage.disks[i];
                let scan = &scan;
                s.spawn(move || {
                    let own = read(&format!("/dev/{}", disk.name), None, interrupt);
                    let physical = if disk.transport.as_deref() == Some("RAID volume") {
                        behind(host, disk, scan, interrupt)
                    } else {
                        Vec::new()
                    };
                    (i, own, physical)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a smartctl reader panicked"))
            .collect()
    });
    let mut problems = Vec::new();
    for (i, own, physical) in readings {
        let disk = &mut storage.disks[i];
        // A RAID volume answers for itself only through its disks.
        let volume = disk.transport.as_deref() == Some("RAID volume");
        match own {
            SmartReading {
                health: Some(h), ..
            } => disk.health = Some(h),
            SmartReading {
                problem: Some(p), ..
            } if !volume || physical.is_empty() => problems.push(p),
            _ => {}
        }
        for r in physical {
            match r {
                SmartReading {
                    health: Some(h), ..
                } => disk.behind.push(h),
                SmartReading {
                    problem: Some(p), ..
                } => problems.push(p),
                _ => {}
            }
        }
        merge_sata_link(disk);
        if let Some(t) = thermal_now(host, disk) {
            disk.heat = Some(Heat {
                before: t,
                after: Thermal::default(),
            });
        }
    }
    // One line for a missing smartctl, not one per disk.
    problems.dedup_by(|a, b| a.starts_with("smartctl is not installed") && a == b);
    storage.problems.extend(problems);
}

/// The disk's own SATA limit (smartctl's `interface_speed.max`) joins the
/// port's: the link can do what both can.
fn merge_sata_link(disk: &mut Disk) {
    let Some(max) = disk
        .health
        .as_ref()
        .and_then(|h| h.link_max.as_deref())
        .and_then(pveprobe_parse::link::sata_gbps)
    else {
        return;
    };
    for l in disk.links.iter_mut().filter(|l| l.kind == "SATA") {
        let port = l
            .capable
            .as_deref()
            .and_then(pveprobe_parse::link::sata_gbps);
        let both = port.map_or(max, |p| p.min(max));
        l.capable = Some(format!("{both:.1} Gb/s"));
        l.capable_mb_s = Some(pveprobe_parse::link::ceiling_mb_s(
            pveprobe_parse::link::Kind::Sata,
            both,
            1,
        ));
        l.capable_by = Some(
            if port.is_some() {
                "the disk and the port"
            } else {
                "the disk"
            }
            .into(),
        );
    }
}

/// The disk's temperature from hwmon (`drivetemp` for SATA,
/// `nvme` for NVMe), in °C: `device/hwmon/hwmonN/temp1_input` or
/// `device/hwmonN/temp1_input`, millidegrees.
pub fn hwmon_celsius(host: &Host, name: &str) -> Option<f64> {
    let device = format!("/sys/class/block/{name}/device");
    let mut dirs: Vec<String> = host
        .list(format!("{device}/hwmon"))
        .into_iter()
        .map(|h| format!("{device}/hwmon/{h}"))
        .collect();
    dirs.extend(
        host.list(&device)
            .into_iter()
            .filter(|n| n.starts_with("hwmon") && n.len() > 5)
            .map(|h| format!("{device}/{h}")),
    );
    dirs.sort();
    dirs.iter().find_map(|d| {
        let milli: f64 = host
            .read_value(Path::new(d).join("temp1_input"))?
            .parse()
            .ok()?;
        (milli.is_finite() && milli.abs() < 1_000_000.0).then_some(milli / 1000.0)
    })
}

/// The disk's thermal state now: smartctl's counters, hwmon's temperature
/// where the kernel has a sensor (else smartctl's).
fn thermal_now(host: &Host, disk: &Disk) -> Option<Thermal> {
    let from_smart = disk.health.as_ref().and_then(|h| h.thermal.clone());
    merge_thermal(from_smart, hwmon_celsius(host, &disk.name))
}

/// smartctl's counters with hwmon's temperature, where each is known.
fn merge_thermal(from_smart: Option<Thermal>, hwmon: Option<f64>) -> Option<Thermal> {
    match (from_smart, hwmon) {
        (Some(mut t), Some(c)) => {
            t.temperature_c = Some(c);
            t.source = "hwmon, smartctl".into();
            Some(t)
        }
        (Some(t), None) => Some(t),
        (None, Some(c)) => Some(Thermal {
            source: "hwmon".into(),
            temperature_c: Some(c),
            ..Thermal::default()
        }),
        (None, None) => None,
    }
}

/// Reads each disk's heat again after the last timed test.
pub fn read_heat_after(host: &Host, storage: &mut Storage, interrupt: Option<&Interrupt>) {
    std::thread::scope(|s| {
        for disk in storage.disks.iter_mut().filter(|d| d.heat.is_some()) {
            s.spawn(move || {
                let now = if disk.health.is_some() {
                    read(&format!("/dev/{}", disk.name), None, interrupt)
                        .health
                        .and_then(|h| h.thermal)
                } else {
                    None
                };
                let after = merge_thermal(now, hwmon_celsius(host, &disk.name));
                if let (Some(heat), Some(after)) = (disk.heat.as_mut(), after) {
                    heat.after = after;
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_device_names_reach_smartctl() {
        assert!(safe_device("/dev/sda"));
        assert!(safe_device("/dev/nvme0n1"));
        assert!(safe_device("/dev/bus/0"));
        assert!(!safe_device("/dev/"));
        assert!(!safe_device("/dev/../etc/passwd"));
        assert!(!safe_device("/dev/sda;reboot"));
        assert!(!safe_device("-t long"));
        assert!(!safe_device("sda"));
        assert!(safe_type("megaraid,1"));
        assert!(safe_type("sat+megaraid,0"));
        assert!(!safe_type("megaraid,1 -t"));
        assert!(!safe_type(""));
        let r = read("/dev/sda --test=long", None, None);
        assert!(r.health.is_none() && r.problem.unwrap().contains("not a device name"));
    }

    fn capture(name: &str) -> String {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/smartctl")
                .join(name),
        )
        .unwrap()
    }

    fn codes_of(json: &str) -> Vec<String> {
        let health = health_of("smartctl /dev/sdx".into(), smart::parse(json).unwrap());
        let storage = Storage {
            disks: vec![Disk {
                name: "sdx".into(),
                health: Some(health),
                ..Disk::default()
            }],
            ..Storage::default()
        };
        crate::blockstack::hints::hints(&storage)
            .into_iter()
            .map(|h| h.code)
            .collect()
    }

    /// Each real capture gives the hints its counters call for, and the
    /// healthy ones none.
    #[test]
    fn captures_give_their_hints() {
        let cases: [(&str, &[&str]); 9] = [
            ("ST3500418AS_12.json", &["reallocated-sectors"]),
            ("HGST_HUS724020ALE640_28.json", &["crc-errors"]),
            (
                "sat-Western_Digital_RE4-WDC_WD2003FYYS-02W0B1-sdi.json",
                &["crc-errors"],
            ),
            (
                // smartctl fails an NVMe drive's assessment on any critical warning.
                "nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json",
                &["smart-failed", "critical-warning"],
            ),
            (
                "SEAGATE_ST373453LC_26.json",
                &["grown-defects", "uncorrected-errors"],
            ),
            ("nvme-null-SAMSUNG_MZQL21T9HCJR-00A07-nvme0.json", &[]),
            (
                "sat-Samsung_based_SSDs-SAMSUNG_MZ7LH480HAHQ-00005-sda.json",
                &[],
            ),
            // 85% used: below the 90% of `worn`.
            (
                "sat-Intel_730_and_DC_S35x0_3610_3700_Series_SSDs-INTEL_SSDSC2BB016T4-sdf.json",
                &[],
            ),
            ("HITACHI_H109060SESUN600G_10.json", &[]),
        ];
        for (file, want) in cases {
            assert_eq!(codes_of(&capture(file)), want, "{file}");
        }
    }

    /// The thresholds, on a real capture with one field changed each.
    #[test]
    fn worn_spare_low_and_failed() {
        let base: serde_json::Value =
            serde_json::from_str(&capture("nvme-null-SAMSUNG_MZQL21T9HCJR-00A07-nvme0.json"))
                .unwrap();
        let with = |path: &[&str], v: serde_json::Value| {
            let mut doc = base.clone();
            let mut at = &mut doc;
            for key in &path[..path.len() - 1] {
                at = &mut at[*key];
            }
            at[path[path.len() - 1]] = v;
            codes_of(&doc.to_string())
        };
        let log = "nvme_smart_health_information_log";
        assert_eq!(with(&[log, "percentage_used"], 90.into()), ["worn"]);
        assert!(with(&[log, "percentage_used"], 89.into()).is_empty());
        assert_eq!(with(&[log, "available_spare"], 9.into()), ["spare-low"]);
        assert!(with(&[log, "available_spare"], 10.into()).is_empty());
        assert_eq!(with(&[log, "media_errors"], 3.into()), ["media-errors"]);
        assert_eq!(
            with(&["smart_status", "passed"], false.into()),
            ["smart-failed"]
        );
    }

    /// A disk smartctl left asleep (`--nocheck=standby`, exit status 2,
    /// its message) has no health and says so; so does a device smartctl
    /// cannot open.
    #[test]
    fn a_sleeping_disk_is_said_to_sleep() {
        let asleep = r#"{"smartctl": {"exit_status": 2, "messages": [{"string": "Device is in STANDBY mode, exit(2)", "severity": "information"}]},
            "device": {"name": "/dev/sdb", "info_name": "/dev/sdb [SAT]", "type": "sat", "protocol": "ATA"}}"#;
        let r = reading("smartctl /dev/sdb".into(), asleep);
        assert!(r.health.is_none());
        assert_eq!(
            r.problem.as_deref(),
            Some("smartctl /dev/sdb: in standby; not woken to read its health")
        );
        let missing = r#"{"smartctl": {"exit_status": 2, "messages": [{"string": "/dev/sdz: No such device", "severity": "error"}]}}"#;
        assert_eq!(
            reading("smartctl /dev/sdz".into(), missing)
                .problem
                .as_deref(),
            Some("smartctl /dev/sdz: /dev/sdz: No such device")
        );
        let ok = reading("smartctl /dev/sdx".into(), &capture("ST3500418AS_12.json"));
        assert_eq!(ok.health.unwrap().reallocated_sectors, Some(304));
    }

    #[test]
    fn virtual_disks_are_not_asked() {
        let d = |name: &str, transport: &str| Disk {
            name: name.into(),
            transport: Some(transport.into()),
            ..Disk::default()
        };
        assert!(has_smart(&d("sda", "SATA")));
        assert!(has_smart(&d("nvme0n1", "NVMe")));
        assert!(has_smart(&d("sda", "RAID volume")));
        assert!(!has_smart(&d("vda", "virtio")));
        assert!(!has_smart(&d("loop0", "virtual")));
    }
}
