//! `-v`: what follows the pveperf lines for a person: each figure's spread
//! over the runs, its per-operation latency, and the pve-docs guidance.

use std::fmt::Write as _;

use super::Figure;
use super::json::{DnsServer, JsonFigure, JsonFilesystem, JsonReport, XFigure};
use crate::latency::LatencySummary;
use crate::model::storage::{Disk, Storage};

/// How a figure compares with the pve-docs guidance.
pub fn guidance(line: Figure, fig: &JsonFigure) -> Option<String> {
    let v = fig.value;
    let verdict = match line {
        Figure::RegexPerSecond if fig.engine.as_deref() == Some("perl") => {
            if v > 300_000.0 { "good" } else { "low" }.to_string()
        }
        Figure::RegexPerSecond => {
            return Some(
                "pve-docs: above 300000 on pveperf's Perl scale; this rust-engine figure is 3 to 7 times that \
                 scale (use --regex-engine perl to check it)"
                    .to_string(),
            );
        }
        Figure::BufferedReads => if v >= 40.0 { "good" } else { "low" }.to_string(),
        Figure::AverageSeekTime => {
            if v < 8.0 {
                "good, even for SAS/SCSI disks".to_string()
            } else if v <= 20.0 {
                "acceptable for SATA disks, slow for SAS/SCSI".to_string()
            } else {
                "slow".to_string()
            }
        }
        Figure::FsyncsPerSecond if v > 200.0 => "good".to_string(),
        Figure::FsyncsPerSecond => {
            "low: a write-back cache with battery (BBWC) or SSDs with power-loss protection help"
                .to_string()
        }
        _ => return None,
    };
    let rule = match line {
        Figure::RegexPerSecond => "above 300000",
        Figure::BufferedReads => "at least 40 MB/sec",
        Figure::AverageSeekTime => "below 8 ms for SAS/SCSI, 15-20 ms for SATA disks",
        _ => "above 200",
    };
    Some(format!("pve-docs: {rule}: {verdict}"))
}

fn number(line: Figure, v: f64) -> String {
    line.spec().format(v)
}

/// One name server's share of a DNS line: a dead first server is named.
fn server_line(s: &DnsServer) -> String {
    let answers = match s.mean_answer_ms {
        Some(ms) => format!("{} answered (mean {ms:.3} ms)", s.answered),
        None => "none answered".to_string(),
    };
    let mut line = format!("server {}: {} sent, {answers}", s.address, s.sent);
    if s.timed_out > 0 {
        let _ = write!(line, ", {} timed out", s.timed_out);
    }
    if s.refused > 0 {
        let _ = write!(line, ", {} refused", s.refused);
    }
    line
}

/// What FSYNCS/SECOND measures on this filesystem, in one line.
pub fn fsync_meaning(fs: Option<&JsonFilesystem>) -> String {
    let mut text = String::from(
        "measures: pveperf's loop (open with truncate, fsync, write 4001 bytes, close): \
         the fsync commits a file its open just emptied, not the data written after it",
    );
    let fstype = fs.map_or("", |f| f.fstype.as_str());
    let has = |opt: &str| fs.is_some_and(|f| f.options.split(',').any(|o| o == opt));
    match fstype {
        "ext4" if has("data=ordered") && !has("noauto_da_alloc") => text.push_str(
            "; on ext4 (data=ordered) closing a truncated file starts its writeback and the \
             next fsync's journal commit waits for it, so part of the data is synced too",
        ),
        "tmpfs" | "ramfs" => text.push_str(&format!(
            "; on {fstype} fsync does nothing: the figure measures the CPU"
        )),
        _ => {}
    }
    text.push_str("; synced writes as a database makes them: SYNC WRITE 4K (-x)");
    text
}

fn latency_ms(l: &LatencySummary) -> String {
    let ms = |us: f64| format!("{:.3}", us / 1000.0);
    let p99_9 = l
        .p99_9_us
        .map(|p| format!(" p99.9 {} ms,", ms(p)))
        .unwrap_or_default();
    format!(
        "p50 {} ms, p90 {} ms, p99 {} ms,{p99_9} max {} ms over {} operations",
        ms(l.p50_us),
        ms(l.p90_us),
        ms(l.p99_us),
        ms(l.max_us),
        l.count
    )
}

/// SYNC WRITE 4K's details: its latency, CPU, the verdict on its flushes
/// and its class's band.
fn sync_details(f: &XFigure) -> String {
    let mut out = format!(
        "  {}: {} IOPS ({}, {} job, {} MiB file)\n",
        f.label,
        Figure::SyncWrite4k.spec().format(f.value),
        f.sync_mode.as_deref().unwrap_or("?"),
        f.jobs.unwrap_or(1),
        f.file_bytes.unwrap_or(0) >> 20
    );
    // Reasons name paths and disks: one line each, whatever they hold.
    let mut detail = |text: String| {
        let _ = writeln!(out, "      {}", super::text::printable(&text));
    };
    if let Some(l) = &f.latency {
        detail(format!("latency: {}", latency_ms(l)));
    }
    if let Some(cpu) = f.cpu_us_per_op {
        detail(format!("CPU per write: {cpu:.1} us"));
    }
    if let Some(v) = &f.verdict {
        detail(format!("flushes: {}: {}", v.kind.words(), v.reason));
    }
    match &f.reference {
        Some(r) => detail(format!(
            "reference: {:.0}% of the median of {} ({:.0}; band {:.0} to {:.0}): {}",
            r.percent, r.class, r.band_median_iops, r.band_min_iops, r.band_max_iops, r.source
        )),
        None => detail(
            "reference: none (the class is unknown: rotating or virtual disks, or PLP not known; --plp yes|no tells it)"
                .into(),
        ),
    }
    out
}

/// The CPU under PBS's figures: model and topology, the AES and SHA
/// flags, the frequency governor, the windows and each thread's figure.
fn cpu_details(doc: &JsonReport) -> Option<String> {
    let figures: Vec<&XFigure> = Figure::CPU_BENCH
        .iter()
        .filter_map(|f| doc.extended.iter().find(|x| x.key == f.key()))
        .collect();
    let first = figures.first()?;
    let h = &doc.host;
    let mut topology = Vec::new();
    if let Some(n) = h.sockets {
        topology.push(format!("{n} socket{}", if n == 1 { "" } else { "s" }));
    }
    topology.extend(h.cores.map(|n| format!("{n} cores")));
    topology.extend(h.threads.map(|n| format!("{n} threads")));
    let mut head = format!(
        "  CPU: {}",
        h.cpu_model.as_deref().unwrap_or("model unknown")
    );
    if !topology.is_empty() {
        let _ = write!(head, ", {}", topology.join(", "));
    }
    // The model comes from /proc/cpuinfo: one line, whatever it holds.
    let mut out = super::text::printable(&head);
    out.push('\n');
    let mut detail = |text: String| {
        let _ = writeln!(out, "      {}", super::text::printable(&text));
    };
    detail(if h.cpu_crypto_flags.is_empty() {
        "AES/SHA instructions: none listed in /proc/cpuinfo (OpenSSL then hashes and encrypts without them)".into()
    } else {
        format!(
            "AES/SHA instructions (/proc/cpuinfo): {}",
            h.cpu_crypto_flags.join(" ")
        )
    });
    detail(match &h.cpu_governor {
        Some(g) => format!("frequency governor: {g}"),
        None => {
            "frequency governor: none (no cpufreq: a VM, or the firmware sets the frequency)".into()
        }
    });
    // To the millisecond: 1 s, 0.1 s, 0.333 s.
    let window = |f: &XFigure| {
        f.window_s.map_or_else(String::new, |s| {
            format!("{} s", (s * 1000.0).round() / 1000.0)
        })
    };
    let compress = figures
        .iter()
        .find(|f| f.key == Figure::ZstdCompress.key())
        .map(|f| format!(", ZSTD COMPRESS {}", window(f)))
        .unwrap_or_default();
    detail(format!(
        "windows: {} each{compress} (proxmox-backup-client's: 1 s, 3 s at --duration 3)",
        window(first)
    ));
    if let Some(r) = &first.pbs_reference {
        detail(format!("100% is {}", r.machine));
    }
    for f in &figures {
        if let Some(t) = &f.threads {
            let each: Vec<String> = t.each_mb_per_s.iter().map(|v| format!("{v:.2}")).collect();
            detail(format!(
                "{} on {} threads at once: {} MB/s",
                f.label,
                t.count,
                each.join(", ")
            ));
        }
    }
    Some(out)
}

/// The details block, printed after the pveperf lines.
pub fn render(doc: &JsonReport) -> String {
    let mut out = String::from("\nDetails:\n");
    for line in Figure::PVEPERF {
        let Some(fig) = doc.figures.get(line) else {
            continue;
        };
        let _ = write!(
            out,
            "  {}: {} {}",
            line.label(),
            number(line, fig.value),
            fig.unit
        );
        if fig.samples.len() > 1 {
            let _ = write!(
                out,
                " (median of {} runs: min {}, max {}, spread {:.1}%)",
                fig.samples.len(),
                number(line, fig.min),
                number(line, fig.max),
                fig.spread * 100.0
            );
        }
        out.push('\n');
        let mut detail = |text: String| {
            let _ = writeln!(out, "      {text}");
        };
        if let Some(engine) = &fig.engine {
            detail(format!("engine: {engine}"));
        }
        if let Some(device) = &fig.device {
            match fig.block_size {
                Some(bs) => detail(format!("device: {device}, O_DIRECT reads of {bs} bytes")),
                None => detail(format!("device: {device}, buffered 2 MiB reads")),
            }
        }
        if let Some(each) = &fig.per_device {
            let list: Vec<String> = each
                .iter()
                .map(|d| format!("{} {}", d.device, number(line, d.value)))
                .collect();
            detail(format!(
                "per device (mean of these is the figure): {}",
                list.join(", ")
            ));
        }
        if let Some(l) = &fig.latency {
            detail(format!("latency: {}", latency_ms(l)));
        }
        if let Some(q) = &fig.queries {
            detail(format!(
                "queries: {} sent, {} answered, {} timed out, {} refused ({} schedule)",
                q.sent, q.answered, q.timed_out, q.refused, doc.settings.dns_schedule
            ));
        }
        for s in fig.servers.iter().flatten() {
            detail(server_line(s));
        }
        if line == Figure::FsyncsPerSecond {
            detail(fsync_meaning(doc.filesystem.as_ref()));
        }
        if let Some(g) = guidance(line, fig) {
            detail(g);
        }
    }
    if let Some(f) = doc
        .extended
        .iter()
        .find(|f| f.key == Figure::SyncWrite4k.key())
    {
        out.push_str(&sync_details(f));
    }
    if let Some(cpu) = cpu_details(doc) {
        out.push_str(&cpu);
    }
    for missing in &doc.not_measured {
        let verdict = if missing.failed {
            "not measured"
        } else {
            "skipped"
        };
        let line = format!("  {}: {verdict}: {}", missing.label, missing.reason);
        let _ = writeln!(out, "{}", super::text::printable(&line));
    }
    if let Some(storage) = &doc.storage {
        out.push_str(&storage_section(&doc.path, storage));
    }
    if let Some(pve) = &doc.pve_storage {
        let line = format!("  PVE storage {}", pve.describe());
        out.push_str(&super::text::printable(&line));
        out.push('\n');
    }
    out
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / f64::from(1u32 << 30))
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
    parts.extend(d.size_bytes.map(gib));
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

/// The storage section of `-v`: filesystem and layers, one line per leaf
/// disk, the ZFS pool, and the hints.
pub fn storage_section(path: &str, s: &Storage) -> String {
    let mut out = String::from("\nStorage:\n");
    // Names come from mountinfo, sysfs and zpool: one line each, whatever
    // they hold (a newline or a terminal escape in a name is shown as \ooo).
    let put = |out: &mut String, line: String| {
        out.push_str(&super::text::printable(&line));
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
                "    {}: {}{detail} on {}",
                layer.name,
                layer.kind,
                layer.below.join(", ")
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
    }
    for p in &s.problems {
        put(&mut out, format!("  unknown: {p}"));
    }
    for h in &s.hints {
        put(&mut out, format!("  hint: {h}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(value: f64, engine: Option<&str>) -> JsonFigure {
        JsonFigure {
            label: String::new(),
            unit: String::new(),
            value,
            samples: vec![value],
            min: value,
            max: value,
            spread: 0.0,
            engine: engine.map(str::to_string),
            ..JsonFigure::default()
        }
    }

    #[test]
    fn guidance_follows_pve_docs_thresholds() {
        let g = |line, v| guidance(line, &fig(v, None)).unwrap();
        assert!(g(Figure::FsyncsPerSecond, 201.0).ends_with(": good"));
        assert!(g(Figure::FsyncsPerSecond, 199.0).contains(": low: a write-back cache"));
        assert!(g(Figure::BufferedReads, 40.0).ends_with(": good"));
        assert!(g(Figure::BufferedReads, 39.9).ends_with(": low"));
        assert!(g(Figure::AverageSeekTime, 7.9).ends_with("good, even for SAS/SCSI disks"));
        assert!(
            g(Figure::AverageSeekTime, 15.0)
                .ends_with("acceptable for SATA disks, slow for SAS/SCSI")
        );
        assert!(g(Figure::AverageSeekTime, 25.0).ends_with(": slow"));
        assert!(
            guidance(Figure::RegexPerSecond, &fig(300_001.0, Some("perl")))
                .unwrap()
                .ends_with(": good")
        );
        assert!(
            guidance(Figure::RegexPerSecond, &fig(299_999.0, Some("perl")))
                .unwrap()
                .ends_with(": low")
        );
        assert!(
            guidance(Figure::RegexPerSecond, &fig(1e6, Some("rust")))
                .unwrap()
                .contains("--regex-engine perl")
        );
        assert_eq!(guidance(Figure::DnsExt, &fig(1.0, None)), None);
    }

    #[test]
    fn fsync_meaning_is_true_for_the_filesystem_at_hand() {
        let fs = |fstype: &str, options: &str| JsonFilesystem {
            source: "/dev/loop0".into(),
            fstype: fstype.into(),
            mount_point: "/mnt".into(),
            size_bytes: 1,
            available_bytes: 1,
            read_only: false,
            options: options.into(),
        };
        let ext4 = fsync_meaning(Some(&fs("ext4", "rw,relatime,data=ordered")));
        assert!(ext4.starts_with("measures: pveperf's loop (open with truncate, fsync, write"));
        assert!(ext4.contains("on ext4 (data=ordered)"), "{ext4}");
        for (fstype, options) in [
            ("ext4", "rw,relatime,noauto_da_alloc,data=ordered"),
            ("ext4", "rw,data=writeback"),
            ("xfs", "rw,relatime,attr2,inode64"),
            ("btrfs", "rw,relatime,space_cache=v2"),
        ] {
            let text = fsync_meaning(Some(&fs(fstype, options)));
            assert!(
                !text.contains("part of the data is synced"),
                "{fstype} {options}: {text}"
            );
            assert!(text.contains("not the data written after it"));
        }
        assert!(fsync_meaning(Some(&fs("tmpfs", "rw"))).contains("fsync does nothing"));
        assert!(fsync_meaning(None).ends_with("SYNC WRITE 4K (-x)"));
    }
}
