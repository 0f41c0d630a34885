//! The text: pveperf's eight lines, labels padded so values start in
//! column 20, each with pveperf's printf format, then the extended lines
//! from column 27. Existing parsers split at the first `:` and read the
//! float that follows, so this is a contract.

use std::fmt::Write as _;

use super::{Devices, Extended, Figure, Outcome, Report};
use crate::figure::Group;
use crate::model::cpubench::CpuOpFigure;
use crate::model::dns::{DnsFigure, servers_over};
use crate::model::io::IoStats;
use crate::model::sync::{VerdictKind, jobs_words as jobs};

/// Column where every pveperf value starts (pveperf pads `AVERAGE SEEK TIME: `).
pub const VALUE_COLUMN: usize = 19;

/// Column where the extended lines' values start (their labels are longer).
pub const X_VALUE_COLUMN: usize = 26;

/// The label padded so the value starts in its group's column.
pub fn label(figure: Figure) -> String {
    let width = match figure.group() {
        Group::Pveperf => VALUE_COLUMN,
        Group::Extended | Group::Network => X_VALUE_COLUMN,
    };
    format!("{:<width$}", format!("{}:", figure.label()))
}

/// Makes a df source printable on one line (control characters as `\ooo`).
pub(crate) fn printable(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for c in source.chars() {
        if c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "\\{b:03o}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The stdout line of a figure, or `None` when it has none. With several
/// runs, a pveperf figure is the median.
pub fn line(report: &Report, figure: Figure) -> Option<String> {
    let value = match figure.group() {
        Group::Pveperf => pveperf_value(report, figure)?,
        Group::Extended => x_value(report, figure)?,
        // A probe run measures no link: the network's figures are the
        // matrix's (net::render).
        Group::Network => return None,
    };
    Some(format!("{}{value}", label(figure)))
}

fn pveperf_value(report: &Report, line: Figure) -> Option<String> {
    Some(match line {
        Figure::DnsExt | Figure::DnsInt => dns_value(report, line)?,
        Figure::HdSize => {
            let fs = report.filesystem.as_ref()?.measured()?;
            format!("{:.2} GB ({})", fs.size_gib(), printable(&fs.source))
        }
        _ => {
            let median = report.stats(line)?.median;
            match line {
                Figure::RegexPerSecond => format!("{}", median.round() as u64),
                Figure::BufferedReads => {
                    format!("{median:.2} MB/sec{}", device_suffix(report, line))
                }
                Figure::AverageSeekTime => format!("{median:.2} ms{}", device_suffix(report, line)),
                _ => format!("{median:.2}"),
            }
        }
    })
}

/// ` (sda, sdb)` when a device line read disks other than the source (ZFS).
fn device_suffix(report: &Report, line: Figure) -> String {
    match report.devices(line) {
        Some((devices, true)) => {
            let names: Vec<String> = devices.iter().map(|d| short_name(d)).collect();
            format!(" ({})", printable(&names.join(", ")))
        }
        _ => String::new(),
    }
}

fn dns_value(report: &Report, line: Figure) -> Option<String> {
    let runs = report.dns(line)?;
    let first = runs.first()?;
    let mut value = if report.dns_dead(line) {
        if runs.iter().all(|r| r.timed_out == 0) {
            "refused (no DNS server answers there)".to_string()
        } else {
            format!(
                "timeout (no answer within {:.2} s)",
                first.timeout.as_secs_f64()
            )
        }
    } else {
        format!("{:.2} ms", report.stats(line)?.median)
    };
    if let Some(domain) = &first.domain {
        let _ = write!(value, " ({})", printable(domain));
    }
    Some(value)
}

/// What stderr should say about a figure: why it is missing, or what
/// makes it less than clean (io_uring refused, a device read to its end).
/// `None` when there is nothing to say.
pub fn diagnostic(report: &Report, line: Figure) -> Option<String> {
    // The scaling's two figures share one outcome: say it once.
    if line == Figure::SyncWritePeak {
        return None;
    }
    if let Some((failed, why)) = report.problem(line) {
        let verdict = if failed { "not measured" } else { "skipped" };
        return Some(format!("{}: {verdict}: {why}", line.label()));
    }
    match line {
        Figure::DnsExt | Figure::DnsInt => dns_diagnostic(line, report.dns(line)?),
        Figure::BufferedReads => {
            let runs = report.buffered_reads.as_ref().and_then(Outcome::measured)?;
            let whole = runs.iter().flat_map(|r| &r.each).find(|r| r.reached_end)?;
            Some(format!(
                "{}: the whole of {} ({} bytes) was read before the window ended",
                line.label(),
                whole.device.display(),
                whole.bytes
            ))
        }
        Figure::SyncWrite4k => {
            let v = &report.extended.sync_write.as_ref()?.measured()?.verdict;
            (v.kind != VerdictKind::Plausible).then(|| {
                format!(
                    "{}: flushes: {}: {}",
                    line.label(),
                    v.kind.words(),
                    v.reason
                )
            })
        }
        _ if line.group() == Group::Extended => {
            let x = &report.extended;
            let stats = match line {
                Figure::Mixed => x.mixed.as_ref()?.measured().map(|m| &m.stats),
                _ => x.devices(line).and_then(|d| d.each.first()),
            }?;
            stats
                .fallback
                .as_ref()
                .map(|why| format!("{}: {why}; ran psync instead", line.label()))
        }
        _ => None,
    }
}

/// Queries that got no answer at all, then each server that answered none
/// of its queries: a dead first server costs every query its wait even
/// when a later server answers them all.
fn dns_diagnostic(line: Figure, runs: &[DnsFigure]) -> Option<String> {
    let first = runs.first()?;
    let sum = |f: fn(&DnsFigure) -> u32| runs.iter().map(f).sum::<u32>();
    let (queries, timed_out, refused) =
        (sum(|r| r.queries), sum(|r| r.timed_out), sum(|r| r.refused));
    let mut parts = Vec::new();
    if timed_out + refused > 0 {
        let servers: Vec<String> = first
            .servers
            .iter()
            .map(|s| s.addr.ip().to_string())
            .collect();
        parts.push(format!(
            "{} of {queries} queries got no answer from {} ({timed_out} timed out after {:.2} s, {refused} refused)",
            timed_out + refused,
            servers.join(", "),
            first.timeout.as_secs_f64(),
        ));
    }
    let dead: Vec<String> = servers_over(runs)
        .iter()
        .filter(|s| s.sent > 0 && s.answered == 0 && first.servers.len() > 1)
        .map(|s| format!("{} answered none of its {} queries", s.addr.ip(), s.sent))
        .collect();
    if !dead.is_empty() && timed_out + refused < queries {
        parts.push(format!(
            "name server {}; the mean includes the waits for it",
            dead.join(", name server ")
        ));
    }
    (!parts.is_empty()).then(|| format!("{}: {}", line.label(), parts.join("; ")))
}

/// ` on sda3, sdb3` when a device test read disks other than the source.
fn x_names(report: &Report, devices: &Devices<IoStats>) -> String {
    if !devices.named {
        return String::new();
    }
    let names: Vec<String> = report
        .storage
        .iter()
        .flat_map(|s| &s.read_devices)
        .map(|d| short_name(d))
        .collect();
    format!(" on {}", names.join(", "))
}

fn short_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn engine_note(s: &IoStats) -> String {
    match &s.fallback {
        Some(_) => format!("{} (io_uring refused)", s.engine.name()),
        None => s.engine.name().to_string(),
    }
}

/// The value part of an extended line.
fn x_value(report: &Report, line: Figure) -> Option<String> {
    let x: &Extended = &report.extended;
    let ms = |us: f64| us / 1000.0;
    Some(match line {
        Figure::SeqWrite => {
            let runs = x.seq_write.as_ref()?.measured()?;
            let each: Vec<String> = runs
                .iter()
                .map(|r| format!("{:.2}", r.mib_per_sec()))
                .collect();
            let data = if runs.iter().any(|r| r.zero_data) {
                "zeros"
            } else {
                "incompressible data"
            };
            if report.on_volume() {
                return Some(format!(
                    "{:.2} MB/sec (the scratch volume's prefill: all of it once, 1 MiB O_DIRECT writes; {data})",
                    x.value(line)?
                ));
            }
            format!(
                "{:.2} MB/sec ({} runs: {}; {data})",
                x.value(line)?,
                runs.len(),
                each.join(", ")
            )
        }
        Figure::SeqReadDirect => {
            let d = x.devices(line)?;
            format!(
                "{:.2} MB/sec (1 MiB O_DIRECT reads, QD8, {}{})",
                x.value(line)?,
                engine_note(d.each.first()?),
                x_names(report, d)
            )
        }
        Figure::RandRead4kQd1 | Figure::RandRead4kQd32 => {
            let d = x.devices(line)?;
            let lat =
                crate::latency::merged(d.each.iter().map(|s| Some(&s.read_latency)))?.summary()?;
            format!(
                "{:.0} IOPS (mean {:.3} ms, p99 {:.3} ms, {}{})",
                x.value(line)?,
                ms(lat.mean_us),
                ms(lat.p99_us),
                engine_note(d.each.first()?),
                x_names(report, d)
            )
        }
        Figure::RandWrite4kQd1 | Figure::RandWrite4kQd32 => {
            let d = x.devices(line)?;
            let lat =
                crate::latency::merged(d.each.iter().map(|s| Some(&s.write_latency)))?.summary()?;
            let on = if report.on_volume() {
                " on the scratch volume"
            } else {
                " on a file in PATH"
            };
            format!(
                "{:.0} IOPS (mean {:.3} ms, p99 {:.3} ms, O_DIRECT, {}{on})",
                x.value(line)?,
                ms(lat.mean_us),
                ms(lat.p99_us),
                engine_note(d.each.first()?),
            )
        }
        Figure::Mixed => {
            let m = x.mixed.as_ref()?.measured()?;
            let file = if m.direct {
                "O_DIRECT file"
            } else {
                "buffered file: the filesystem refuses O_DIRECT"
            };
            format!(
                "{:.0} read IOPS, {:.0} write IOPS (80% random, {file}, {})",
                m.stats.read_iops(),
                m.stats.write_iops(),
                engine_note(&m.stats)
            )
        }
        Figure::SyncWrite4k => {
            let r = x.sync_write.as_ref()?.measured()?;
            let f = &r.figure;
            let l = f.latency.summary()?;
            let p99_9 = l
                .p99_9_us
                .map(|p| format!(", p99.9 {:.3} ms", ms(p)))
                .unwrap_or_default();
            let reference = r
                .reference
                .as_ref()
                .map(|r| format!("; {:.0}% of {}'s median", r.percent, r.class))
                .unwrap_or_default();
            let space = if report.on_volume() {
                "of the volume, O_DIRECT"
            } else {
                "file"
            };
            format!(
                "{:.0} IOPS (mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms{p99_9}, max {:.3} ms; {}, {} MiB {space}, 1 job); flushes: {}{reference}",
                f.iops(),
                ms(l.mean_us),
                ms(l.p50_us),
                ms(l.p99_us),
                ms(l.max_us),
                f.mode.name(),
                f.file_bytes >> 20,
                r.verdict.kind.words()
            )
        }
        Figure::SyncWriteJobs => {
            let steps: Vec<String> = x
                .scaling()?
                .steps
                .iter()
                .map(|s| format!("{} {:.0}", jobs(s.jobs), s.iops()))
                .collect();
            format!("{} IOPS", steps.join(", "))
        }
        Figure::SyncWritePeak => {
            let scaling = x.scaling()?;
            let peak = scaling.peak()?;
            let gain = crate::plan::SYNC_MIN_GAIN * 100.0;
            let stops = match scaling.stops_at(crate::plan::SYNC_MIN_GAIN) {
                Some(n) => format!(
                    "stops scaling at {}: no later step adds {gain:.0}% or more",
                    jobs(n)
                ),
                None => format!("still scaling at the last step: it added {gain:.0}% or more"),
            };
            format!("{:.0} IOPS at {} ({stops})", peak.iops(), jobs(peak.jobs))
        }
        _ if Figure::CPU_BENCH.contains(&line) => cpu_value(x.cpu(line)?),
        Figure::SustainedWrite => {
            let s = x.sustained.as_ref()?.measured()?;
            let (second, slowest) = s.slowest()?;
            let how = if s.direct {
                "1 MiB O_DIRECT writes"
            } else {
                "1 MiB buffered writes: the filesystem refuses O_DIRECT"
            };
            let secs = s.bytes_per_second.len();
            let stretch = crate::model::sustained::STRETCH.min(secs);
            format!(
                "{:.2} MB/sec over {secs} s (first {stretch} s {:.2}, last {stretch} s {:.2}, slowest second {:.2} at {second} s; {how} cycling over a {} MiB file)",
                s.mean(),
                s.first()?,
                s.last()?,
                slowest,
                s.file_bytes >> 20
            )
        }
        // A figure without a format of its own: its value and unit.
        _ => format!("{} {}", line.spec().format(x.value(line)?), line.unit()),
    })
}

/// A CPU figure as PBS prints it, `2022.00 MB/s (100%)`, then the
/// threads' figures.
fn cpu_value(f: &CpuOpFigure) -> String {
    let mut text = format!("{:.2} MB/s ({:.0}%)", f.mb_per_s(), f.percent());
    if let (Some(n), Some(total), Some(each), Some(scaling)) = (
        f.thread_count(),
        f.threads_mb_per_s(),
        f.per_thread_mb_per_s(),
        f.scaling(),
    ) {
        let threads = if n == 1 { "thread" } else { "threads" };
        let _ = write!(
            text,
            "; {n} {threads} at once: {total:.2} MB/s, {each:.2} per thread, {scaling:.2} of {n} x 1 thread"
        );
    }
    text
}

/// The whole report as text: pveperf's lines, then the extended ones.
pub fn render(report: &Report) -> String {
    Figure::ALL
        .iter()
        .filter_map(|l| line(report, *l))
        .map(|l| l + "\n")
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::blockdev::{ReadFigure, SeekFigure};
    use crate::model::dns::{DnsFigure, ServerStats};
    use crate::model::filesystem::FsInfo;
    use crate::model::fsync::FsyncFigure;
    use crate::model::regex::{RegexEngine, RegexFigure};
    use crate::report::Devices;

    pub(crate) fn dns(domain: Option<&str>, answered: u32) -> DnsFigure {
        DnsFigure {
            domain: domain.map(str::to_string),
            servers: vec![ServerStats {
                sent: 101,
                answered,
                answer_time: Duration::from_millis(15) * answered,
                ..ServerStats::new("127.0.0.1:53".parse().unwrap())
            }],
            queries: 101,
            answered,
            timed_out: 101 - answered,
            refused: 0,
            elapsed: Duration::from_millis(1515),
            timeout: Duration::from_secs(2),
        }
    }

    pub(crate) fn fsync(iterations: u64) -> FsyncFigure {
        FsyncFigure {
            iterations,
            elapsed: Duration::from_secs(2),
            latency: None,
        }
    }

    /// A report built from known numbers, one run per timed test.
    pub(crate) fn full_report() -> Report {
        let mut r = Report::new("/var/lib/vz".into());
        r.cpu_bogomips = Some(Outcome::Measured(38401.92));
        r.regex = Some(Outcome::Measured(vec![RegexFigure {
            engine: RegexEngine::Perl,
            iterations: 2_345_678,
            window: Duration::from_secs(3),
        }]));
        r.filesystem = Some(Outcome::Measured(FsInfo {
            total_bytes: 94 * (1 << 30) + 300 * (1 << 20),
            avail_bytes: 1,
            source: "/dev/mapper/pve-root".into(),
            fstype: "ext4".into(),
            mount_point: "/".into(),
            read_only: false,
            dev: (253, 1),
            options: String::new(),
        }));
        r.buffered_reads = Some(Outcome::Measured(vec![Devices {
            each: vec![ReadFigure {
                device: "/dev/mapper/pve-root".into(),
                bytes: 1536 << 20,
                elapsed: Duration::from_secs(3),
                reached_end: false,
            }],
            named: false,
        }]));
        r.seek = Some(Outcome::Measured(vec![Devices {
            each: vec![SeekFigure {
                device: "/dev/mapper/pve-root".into(),
                block_size: 512,
                device_bytes: 1 << 30,
                reads: 12_000,
                elapsed: Duration::from_secs(3),
                latency: None,
            }],
            named: false,
        }]));
        r.fsync = Some(Outcome::Measured(vec![fsync(3700)]));
        r.dns_ext = Some(Outcome::Measured(vec![dns(None, 101)]));
        r.dns_int = Some(Outcome::Measured(vec![dns(Some("proxmox.example"), 101)]));
        r
    }

    #[test]
    fn renders_pveperfs_eight_lines_exactly() {
        let expected = "\
CPU BOGOMIPS:      38401.92
REGEX/SECOND:      2345678
HD SIZE:           94.29 GB (/dev/mapper/pve-root)
BUFFERED READS:    512.00 MB/sec
AVERAGE SEEK TIME: 0.25 ms
FSYNCS/SECOND:     1850.00
DNS EXT:           15.00 ms
DNS INT:           15.00 ms (proxmox.example)
";
        assert_eq!(render(&full_report()), expected);
        for l in expected.lines() {
            assert_eq!(&l[18..19], " ", "{l}");
            assert_ne!(&l[19..20], " ", "value of {l:?} must start in column 20");
        }
    }

    #[test]
    fn missing_lines_are_omitted_and_explained() {
        let mut r = full_report();
        r.buffered_reads = Some(Outcome::Skipped("tmpfs is not a block device".into()));
        r.seek = None;
        r.fsync = Some(Outcome::Failed("filesystem is read-only".into()));
        let text = render(&r);
        assert!(
            !text.contains("BUFFERED READS") && !text.contains("SEEK") && !text.contains("FSYNCS")
        );
        assert_eq!(text.lines().count(), 5);
        assert_eq!(
            diagnostic(&r, Figure::FsyncsPerSecond).unwrap(),
            "FSYNCS/SECOND: not measured: filesystem is read-only"
        );
        assert_eq!(
            diagnostic(&r, Figure::BufferedReads).unwrap(),
            "BUFFERED READS: skipped: tmpfs is not a block device"
        );
        assert!(r.any_failed());
        r.fsync = None;
        assert!(!r.any_failed(), "a skipped line is no failure");
    }

    #[test]
    fn dead_dns_says_so_and_fails() {
        let mut r = full_report();
        r.dns_ext = Some(Outcome::Measured(vec![dns(None, 0)]));
        r.dns_int = Some(Outcome::Measured(vec![dns(Some("x.example"), 100)]));
        let text = render(&r);
        assert!(
            text.contains("DNS EXT:           timeout (no answer within 2.00 s)\n"),
            "{text}"
        );
        assert!(text.contains("DNS INT:           15.00 ms (x.example)\n"));
        assert!(r.any_failed());
        let note = diagnostic(&r, Figure::DnsInt).unwrap();
        assert!(
            note.contains("1 of 101 queries got no answer from 127.0.0.1"),
            "{note}"
        );
        let mut refused = dns(None, 0);
        (refused.timed_out, refused.refused) = (0, 101);
        r.dns_ext = Some(Outcome::Measured(vec![refused]));
        assert!(render(&r).contains("DNS EXT:           refused (no DNS server answers there)\n"));
    }

    #[test]
    fn several_runs_print_the_median() {
        let mut r = full_report();
        r.fsync = Some(Outcome::Measured(vec![fsync(600), fsync(200), fsync(500)]));
        let regex = |n| RegexFigure {
            engine: RegexEngine::Rust,
            iterations: n,
            window: Duration::from_secs(3),
        };
        r.regex = Some(Outcome::Measured(vec![regex(10), regex(13)]));
        let text = render(&r);
        assert!(text.contains("FSYNCS/SECOND:     250.00\n"), "{text}");
        assert!(
            text.contains("REGEX/SECOND:      12\n"),
            "median 11.5 rounds to 12: {text}"
        );
    }

    #[test]
    fn zfs_leaf_disks_are_named_and_averaged() {
        let mut r = full_report();
        let read = |dev: &str, mib: u64| ReadFigure {
            device: dev.into(),
            bytes: mib << 20,
            elapsed: Duration::from_secs(1),
            reached_end: false,
        };
        r.buffered_reads = Some(Outcome::Measured(vec![Devices {
            each: vec![read("/dev/sda3", 500), read("/dev/sdb3", 300)],
            named: true,
        }]));
        assert_eq!(
            line(&r, Figure::BufferedReads).unwrap(),
            "BUFFERED READS:    400.00 MB/sec (sda3, sdb3)"
        );
    }

    #[test]
    fn control_characters_in_sources_stay_on_one_line() {
        assert_eq!(printable("a\nb\tc"), "a\\012b\\011c");
        assert_eq!(
            printable("/dev/disk/by-label/my disk"),
            "/dev/disk/by-label/my disk"
        );
    }

    use crate::latency::Latency;
    use crate::model::io::{Engine, MixedFigure, SeqWriteFigure};
    use crate::model::storage::Storage;

    /// An extended line of a report with `x` and ZFS's two leaf disks.
    fn xline(x: &Extended, figure: Figure, names: &[&str]) -> Option<String> {
        let mut r = Report::new("/".into());
        r.extended = x.clone();
        r.storage = Some(Storage {
            read_devices: names.iter().map(|n| format!("/dev/{n}").into()).collect(),
            ..Default::default()
        });
        line(&r, figure)
    }

    fn stats(reads: u64, writes: u64) -> IoStats {
        let mut read_latency = Latency::default();
        for _ in 0..reads.min(1000) {
            read_latency.record(Duration::from_micros(100));
        }
        IoStats {
            engine: Engine::IoUring,
            block: 4096,
            depth: 1,
            reads,
            writes,
            elapsed: Duration::from_secs(2),
            read_latency,
            write_latency: Latency::default(),
            cpu: Duration::from_millis(10),
            fallback: None,
        }
    }

    #[test]
    fn lines_have_their_formats() {
        let mut x = Extended::default();
        let w = |mib: u64| SeqWriteFigure {
            bytes: mib << 20,
            elapsed: Duration::from_secs(1),
            zero_data: false,
        };
        x.seq_write = Some(Outcome::Measured(vec![w(100), w(200), w(300)]));
        x.rand_read_qd1 = Some(Outcome::Measured(Devices {
            each: vec![stats(20000, 0)],
            named: false,
        }));
        let mut fallback = stats(1000, 0);
        fallback.engine = Engine::Psync;
        fallback.fallback = Some("io_uring refused: Operation not permitted".into());
        x.rand_read_qd32 = Some(Outcome::Measured(Devices {
            each: vec![fallback, stats(3000, 0)],
            named: true,
        }));
        x.mixed = Some(Outcome::Measured(MixedFigure {
            stats: stats(1400, 600),
            direct: false,
            file_bytes: 1 << 30,
        }));
        let paths = ["sda3", "sdb3"];
        assert_eq!(
            xline(&x, Figure::SeqWrite, &[]).unwrap(),
            "SEQ WRITE:                200.00 MB/sec (3 runs: 100.00, 200.00, 300.00; incompressible data)"
        );
        assert_eq!(
            xline(&x, Figure::RandRead4kQd1, &[]).unwrap(),
            "RANDOM READ 4K QD1:       10000 IOPS (mean 0.100 ms, p99 0.100 ms, io_uring)"
        );
        assert_eq!(
            xline(&x, Figure::RandRead4kQd32, &paths).unwrap(),
            "RANDOM READ 4K QD32:      1000 IOPS (mean 0.100 ms, p99 0.100 ms, psync (io_uring refused) on sda3, sdb3)"
        );
        assert_eq!(
            xline(&x, Figure::Mixed, &[]).unwrap(),
            "MIXED 70/30 4K QD16:      700 read IOPS, 300 write IOPS (80% random, buffered file: the filesystem refuses O_DIRECT, io_uring)"
        );
        assert_eq!(xline(&x, Figure::SeqReadDirect, &[]), None);
        assert_eq!(x.value(Figure::RandRead4kQd32), Some(1000.0));
        let mut r = Report::new("/".into());
        r.extended = x;
        assert!(!r.any_failed());
        r.extended.seq_read = Some(Outcome::Failed("no".into()));
        assert!(r.any_failed());
        assert_eq!(
            diagnostic(&r, Figure::SeqReadDirect).unwrap(),
            "SEQ READ DIRECT: not measured: no"
        );
    }

    /// The text, with `-v`'s details, of the known-numbers report, pinned.
    #[test]
    fn text_of_known_numbers_is_pinned() {
        use crate::output::Render;
        let report = crate::report::json::tests::known_report();
        let mut doc = crate::report::Document::new(&report);
        doc.verbose = true;
        crate::testutil::assert_snapshot("report.txt", &doc.text());
        let diagnostics: Vec<String> = Figure::ALL
            .iter()
            .filter_map(|f| diagnostic(&report, *f))
            .collect();
        crate::testutil::assert_snapshot("report.stderr", &diagnostics.join("\n"));
    }

    /// A report of the device lines: two named leaf disks (one read to its
    /// end), seek latencies, the random writes, a psync fallback, a dead
    /// DNS server, on a scratch volume; all its outputs pinned.
    #[test]
    fn outputs_of_a_device_report_are_pinned() {
        use crate::output::{Format, Render};
        let mut r = crate::report::json::tests::known_report();
        let read = |dev: &str, mib: u64, end: bool| ReadFigure {
            device: dev.into(),
            bytes: mib << 20,
            elapsed: Duration::from_secs(1),
            reached_end: end,
        };
        r.buffered_reads = Some(Outcome::Measured(vec![
            Devices {
                each: vec![read("/dev/sda3", 500, false), read("/dev/sdb3", 300, true)],
                named: true,
            },
            Devices {
                each: vec![read("/dev/sda3", 520, false), read("/dev/sdb3", 310, false)],
                named: true,
            },
        ]));
        let mut latency = Latency::default();
        for us in [4000u64, 8000, 9000] {
            latency.record(Duration::from_micros(us));
        }
        let seek = |dev: &str, reads: u64| SeekFigure {
            device: dev.into(),
            block_size: 4096,
            device_bytes: 1 << 40,
            reads,
            elapsed: Duration::from_secs(3),
            latency: Some(latency.clone()),
        };
        r.seek = Some(Outcome::Measured(vec![Devices {
            each: vec![seek("/dev/sda3", 400), seek("/dev/sdb3", 380)],
            named: true,
        }]));
        let mut dead = dns(None, 90);
        dead.servers.push(crate::model::dns::ServerStats {
            sent: 11,
            ..crate::model::dns::ServerStats::new("127.0.0.2:53".parse().unwrap())
        });
        r.dns_ext = Some(Outcome::Measured(vec![dead]));
        r.dns_int = Some(Outcome::Measured(vec![dns(Some("dead.example"), 0)]));
        let mut fallback = stats(9000, 0);
        fallback.engine = Engine::Psync;
        fallback.fallback = Some("io_uring refused: Operation not permitted".into());
        let x = &mut r.extended;
        x.seq_read = Some(Outcome::Measured(Devices {
            each: vec![fallback, stats(7000, 0)],
            named: true,
        }));
        let mut writes = stats(100, 4000);
        writes.write_latency = latency.clone();
        x.rand_write_qd1 = Some(Outcome::Measured(Devices {
            each: vec![writes],
            named: false,
        }));
        x.rand_write_qd32 = Some(Outcome::Failed("the volume is read-only".into()));
        x.sustained = Some(Outcome::Skipped("not asked".into()));
        if let Some(Outcome::Measured(fs)) = &mut r.filesystem {
            fs.fstype = crate::model::filesystem::VOLUME.into();
        }
        r.storage = Some(Storage {
            read_devices: vec!["/dev/sda3".into(), "/dev/sdb3".into()],
            ..Default::default()
        });
        let mut doc = crate::report::Document::new(&r);
        doc.verbose = true;
        crate::testutil::assert_snapshot("devices.txt", &doc.text());
        crate::testutil::assert_snapshot("devices.json", &crate::output::json(&doc, true));
        crate::testutil::assert_snapshot("devices.csv", &doc.csv());
        crate::testutil::assert_snapshot("devices.prom", &doc.metrics(Format::Prometheus));
        crate::testutil::assert_snapshot("devices.influx", &doc.metrics(Format::Influx));
        let diagnostics: Vec<String> = Figure::ALL
            .iter()
            .filter_map(|f| diagnostic(&r, *f))
            .collect();
        crate::testutil::assert_snapshot("devices.stderr", &diagnostics.join("\n"));
    }
}
