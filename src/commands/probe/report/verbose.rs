//! `-v`: what follows the pveperf lines for a person: each figure's spread
//! over the runs, its per-operation latency, and the pve-docs guidance.

use std::fmt::Write as _;

use super::Figure;
use crate::figure::projection::Facts;
use crate::figure::projection::Seen;
use crate::figure::projection::cpu::CpuFacts;
use crate::model::storage::{Disk, Health, Heat, Link, Storage};
use crate::output::result::JsonReport;

/// The details block, printed after the pveperf lines: each pveperf
/// figure's runs and the details its facts give, then the extended
/// figures' details, the CPU section, what was not measured, the storage
/// stack and the PVE storage.
pub fn render(doc: &JsonReport) -> String {
    let mut out = String::from("\nDetails:\n");
    let filesystem = doc
        .filesystem
        .as_ref()
        .map(|f| (f.fstype.as_str(), f.options.as_str()));
    fn seen<'a>(
        doc: &'a JsonReport,
        filesystem: Option<(&'a str, &'a str)>,
        figure: Figure,
        instance: Option<&'a str>,
        value: f64,
    ) -> Seen<'a> {
        Seen {
            figure,
            instance,
            value,
            dns_schedule: &doc.settings.dns_schedule,
            filesystem,
        }
    }
    for line in Figure::PVEPERF {
        let Some(fig) = doc.figures.get(line) else {
            continue;
        };
        let number = |v: f64| line.spec().format(v);
        let _ = write!(
            out,
            "  {}: {} {}",
            line.label(),
            number(fig.value),
            fig.unit
        );
        if fig.samples.len() > 1 {
            let _ = write!(
                out,
                " (median of {} runs: min {}, max {}, spread {:.1}%)",
                fig.samples.len(),
                number(fig.min),
                number(fig.max),
                fig.spread * 100.0
            );
        }
        out.push('\n');
        out.push_str(
            &fig.facts
                .details(&seen(doc, filesystem, line, None, fig.value)),
        );
    }
    for f in &doc.extended {
        if let Some(figure) = Figure::from_key(&f.key) {
            out.push_str(&f.facts.details(&seen(
                doc,
                filesystem,
                figure,
                f.instance.as_deref(),
                f.value,
            )));
        }
    }
    let cpu: Vec<(&str, &CpuFacts)> = doc
        .extended
        .iter()
        .filter_map(|f| match &f.facts {
            Facts::Cpu(c) => Some((f.label.as_str(), c)),
            _ => None,
        })
        .collect();
    if let Some(section) = crate::figure::projection::cpu::section(&cpu, &doc.host) {
        out.push_str(&section);
    }
    for missing in &doc.not_measured {
        let verdict = if missing.failed {
            "not measured"
        } else {
            "skipped"
        };
        let line = format!("  {}: {verdict}: {}", missing.label, missing.reason);
        let _ = writeln!(out, "{}", crate::model::printable(&line));
    }
    if let Some(storage) = &doc.storage {
        out.push_str(&storage_section(&doc.path, storage));
    }
    if let Some(pve) = &doc.pve_storage {
        let line = format!("  PVE storage {}", pve.describe());
        out.push_str(&crate::model::printable(&line));
        out.push('\n');
    }
    out
}

/// One line per disk: what it is, how it is attached, how it caches.
pub fn disk_line(d: &Disk) -> String {
    let mut parts: Vec<String> = Vec::new();
    let model = match (&d.vendor, &d.model) {
        (Some(v), Some(m)) => Some(format!("{m} ({v})")),
        (None, Some(m)) => Some(m.clone()),
        (Some(v), None) => Some(v.clone()),
        (None, None) => None,
    };
    parts.extend(model);
    parts.extend(
        d.size_bytes
            .map(|b| crate::model::human::Size(b).to_string()),
    );
    parts.extend(d.rotational.map(|r| {
        if r {
            "rotational".to_string()
        } else {
            "non-rotational".to_string()
        }
    }));
    parts.extend(d.transport.clone());
    parts.extend(d.serial.as_ref().map(|s| format!("serial {s}")));
    parts.extend(d.firmware.as_ref().map(|f| format!("firmware {f}")));
    if let (Some(l), Some(p)) = (d.logical_block_size, d.physical_block_size) {
        parts.push(format!("{l}/{p}-byte sectors"));
    }
    parts.extend(d.scheduler.as_ref().map(|s| format!("scheduler {s}")));
    parts.extend(d.write_cache.as_ref().map(|w| format!("write cache: {w}")));
    parts.extend(d.driver.as_ref().map(|dr| format!("driver {dr}")));
    if let Some(c) = &d.controller_driver {
        let at = d
            .controller_pci
            .as_ref()
            .map(|p| format!(" at {p}"))
            .unwrap_or_default();
        parts.push(format!("controller {c}{at}"));
    }
    parts.extend(
        d.module_version
            .as_ref()
            .map(|v| format!("module version {v}")),
    );
    format!("{}: {}", d.name, parts.join(", "))
}

/// `link: SATA 3.0 Gb/s at ata1 (the port can do 6.0 Gb/s), at most 300 MB/s`.
pub fn link_line(l: &Link) -> String {
    let capable = match (&l.capable, &l.capable_by) {
        (Some(c), Some(by)) if l.degraded() => format!(" ({by} can do {c})"),
        _ => String::new(),
    };
    format!(
        "link: {} {} at {}{capable}, at most {:.0} MB/s",
        l.kind, l.current, l.at, l.ceiling_mb_s
    )
}

/// `SMART passed, 13113 h on, 22 °C, 3% worn, ...` (smartctl's words).
pub fn health_line(h: &Health) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &h.model
        && !h.source.starts_with("smartctl /dev/")
    {
        parts.push(m.clone());
    }
    parts.extend(
        h.passed
            .map(|p| format!("SMART {}", if p { "passed" } else { "FAILED" })),
    );
    parts.extend(h.power_on_hours.map(|n| format!("{n} h powered on")));
    parts.extend(h.temperature_c.map(|t| format!("{t} °C")));
    parts.extend(h.wear_used_pct.map(|w| format!("{w}% of endurance used")));
    let counts = [
        (h.reallocated_sectors, "reallocated sectors"),
        (h.pending_sectors, "pending sectors"),
        (h.offline_uncorrectable, "offline uncorrectable"),
        (h.crc_errors, "CRC errors"),
        (h.media_errors, "media errors"),
        (h.unsafe_shutdowns, "unsafe shutdowns"),
        (h.grown_defects, "grown defects"),
        (h.uncorrected_errors, "uncorrected errors"),
    ];
    for (n, what) in counts {
        parts.extend(n.map(|n| format!("{n} {what}")));
    }
    if let (Some(s), Some(t)) = (h.available_spare_pct, h.available_spare_threshold_pct) {
        parts.push(format!("spare {s}% (threshold {t}%)"));
    }
    parts.extend(
        h.critical_warning
            .filter(|&c| c != 0)
            .map(|c| format!("critical warning {c:#04x}")),
    );
    parts.extend(
        h.data_written_bytes
            .map(|b| format!("{:.1} TB written", b as f64 / 1e12)),
    );
    format!("{} ({})", parts.join(", "), h.source)
}

/// `38 -> 51 °C; warning temperature time +2 min` (hwmon, smartctl).
pub fn heat_line(h: &Heat) -> String {
    let t = |t: Option<f64>| t.map_or("?".to_string(), |c| format!("{c:.0}"));
    let mut line = format!(
        "{} -> {} °C over the run",
        t(h.before.temperature_c),
        t(h.after.temperature_c)
    );
    let moved = h.throttling();
    if !moved.is_empty() {
        line.push_str(&format!("; {}", moved.join(", ")));
    }
    format!("{line} ({})", h.before.source)
}

/// The storage section of `-v`: filesystem and layers, one line per leaf
/// disk, the ZFS pool, and the hints.
pub fn storage_section(path: &str, s: &Storage) -> String {
    let mut out = String::from("\nStorage:\n");
    // Names come from mountinfo, sysfs and zpool: one line each, whatever
    // they hold (a newline or a terminal escape in a name is shown as \ooo).
    let put = |out: &mut String, line: String| {
        out.push_str(&crate::model::printable(&line));
        out.push('\n');
    };
    let device = s
        .device
        .as_ref()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    put(
        &mut out,
        format!("  {path}: {} on {}{device}", s.fstype, s.source),
    );
    for layer in &s.layers {
        let detail = layer
            .detail
            .as_ref()
            .map(|d| format!(" {d}"))
            .unwrap_or_default();
        put(
            &mut out,
            format!(
                "    {}: {}{detail} on {}{}",
                layer.name,
                layer.kind,
                layer.below.join(", "),
                layer
                    .thin_pool
                    .as_ref()
                    .map_or_else(String::new, |p| format!(
                        " (thin pool: {} KiB chunks, {}, discards {})",
                        p.chunk_bytes / 1024,
                        if p.zeroing {
                            "new chunks zeroed"
                        } else {
                            "no zeroing"
                        },
                        p.discards
                    ))
            ),
        );
    }
    if let Some(z) = &s.zfs {
        let state = z
            .state
            .as_ref()
            .map(|st| format!(" ({st})"))
            .unwrap_or_default();
        let layout = z
            .layout
            .as_ref()
            .map(|l| format!(": {l}"))
            .unwrap_or_default();
        put(&mut out, format!("  ZFS pool {}{state}{layout}", z.pool));
        if !z.properties.is_empty() {
            let props: Vec<String> = z
                .properties
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            put(
                &mut out,
                format!("  ZFS dataset {}: {}", z.dataset, props.join(", ")),
            );
        }
    }
    for d in &s.disks {
        put(&mut out, format!("  {}", disk_line(d)));
        for l in &d.links {
            put(&mut out, format!("    {}", link_line(l)));
        }
        if let Some(h) = &d.health {
            put(&mut out, format!("    health: {}", health_line(h)));
        }
        for h in &d.behind {
            put(&mut out, format!("    behind it: {}", health_line(h)));
        }
        if let Some(h) = &d.heat {
            put(&mut out, format!("    heat: {}", heat_line(h)));
        }
    }
    for p in &s.problems {
        put(&mut out, format!("  unknown: {p}"));
    }
    for h in &s.hints {
        put(&mut out, format!("  hint: {h}"));
    }
    out
}
