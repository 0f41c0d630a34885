//! pveperf's text: the eight lines, labels padded so values start in
//! column 20, each with pveperf's printf format. Existing parsers split at
//! the first `:` and read the float that follows, so this is a contract.

use std::fmt::Write as _;

use super::{Line, Outcome, Report};
use crate::probe::dns::DnsFigure;

/// Column where every value starts (pveperf pads `AVERAGE SEEK TIME: `).
pub const VALUE_COLUMN: usize = 19;

/// The label padded so the value starts in column 20.
pub fn label(line: Line) -> String {
    format!(
        "{:<width$}",
        format!("{}:", line.label()),
        width = VALUE_COLUMN
    )
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

/// The stdout line for `line`, or `None` when it has no figure. With
/// several runs, the figure is the median.
pub fn line(report: &Report, line: Line) -> Option<String> {
    let value = match line {
        Line::DnsExt | Line::DnsInt => dns_value(report, line)?,
        Line::HdSize => {
            let fs = report.filesystem.as_ref()?.measured()?;
            format!("{:.2} GB ({})", fs.size_gib(), printable(&fs.source))
        }
        _ => {
            let median = report.stats(line)?.median;
            match line {
                Line::RegexPerSecond => format!("{}", median.round() as u64),
                Line::BufferedReads => format!("{median:.2} MB/sec{}", device_suffix(report, line)),
                Line::AverageSeekTime => format!("{median:.2} ms{}", device_suffix(report, line)),
                _ => format!("{median:.2}"),
            }
        }
    };
    Some(format!("{}{value}", label(line)))
}

/// ` (sda, sdb)` when a device line read disks other than the source (ZFS).
fn device_suffix(report: &Report, line: Line) -> String {
    match report.devices(line) {
        Some((devices, true)) => {
            let names: Vec<String> = devices
                .iter()
                .map(|d| {
                    d.file_name().map_or_else(
                        || d.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    )
                })
                .collect();
            format!(" ({})", printable(&names.join(", ")))
        }
        _ => String::new(),
    }
}

fn dns_value(report: &Report, line: Line) -> Option<String> {
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

/// What stderr should say about `line`: why it is missing, or what makes
/// its figure less than clean. `None` when there is nothing to say.
pub fn diagnostic(report: &Report, line: Line) -> Option<String> {
    if let Some((failed, why)) = report.problem(line) {
        let verdict = if failed { "not measured" } else { "skipped" };
        return Some(format!("{}: {verdict}: {why}", line.label()));
    }
    match line {
        Line::DnsExt | Line::DnsInt => dns_diagnostic(line, report.dns(line)?),
        Line::BufferedReads => {
            let runs = report.buffered_reads.as_ref().and_then(Outcome::measured)?;
            let whole = runs.iter().flat_map(|r| &r.each).find(|r| r.reached_end)?;
            Some(format!(
                "{}: the whole of {} ({} bytes) was read before the window ended",
                line.label(),
                whole.device.display(),
                whole.bytes
            ))
        }
        _ => None,
    }
}

/// Queries that got no answer at all, then each server that answered none
/// of its queries: a dead first server costs every query its wait even
/// when a later server answers them all.
fn dns_diagnostic(line: Line, runs: &[DnsFigure]) -> Option<String> {
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
    let dead: Vec<String> = crate::probe::dns::servers_over(runs)
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

/// The whole report as pveperf's text.
pub fn render(report: &Report) -> String {
    Line::ALL
        .iter()
        .filter_map(|l| line(report, *l))
        .map(|l| l + "\n")
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::probe::blockdev::{ReadFigure, SeekFigure};
    use crate::probe::dns::DnsFigure;
    use crate::probe::filesystem::FsInfo;
    use crate::probe::fsync::FsyncFigure;
    use crate::probe::regex::{RegexEngine, RegexFigure};
    use crate::report::Devices;

    pub(crate) fn dns(domain: Option<&str>, answered: u32) -> DnsFigure {
        DnsFigure {
            domain: domain.map(str::to_string),
            servers: vec![crate::probe::dns::ServerStats {
                sent: 101,
                answered,
                answer_time: Duration::from_millis(15) * answered,
                ..crate::probe::dns::ServerStats::new("127.0.0.1:53".parse().unwrap())
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
            diagnostic(&r, Line::FsyncsPerSecond).unwrap(),
            "FSYNCS/SECOND: not measured: filesystem is read-only"
        );
        assert_eq!(
            diagnostic(&r, Line::BufferedReads).unwrap(),
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
        let note = diagnostic(&r, Line::DnsInt).unwrap();
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
            line(&r, Line::BufferedReads).unwrap(),
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
}
