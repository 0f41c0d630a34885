//! The text: pveperf's eight lines, labels padded so values start in
//! column 20, each with pveperf's printf format, then the extended lines
//! from column 27. Existing parsers split at the first `:` and read the
//! float that follows, so this is a contract.

use super::{Figure, Outcome, ProbeReport};
use crate::output::line::label;

/// The stdout line of a figure, or `None` when it has none. With several
/// runs, a pveperf figure is the median.
pub fn line(report: &ProbeReport, figure: Figure) -> Option<String> {
    let value = report.projection(figure)?.line?;
    Some(format!("{}{value}", label(figure)))
}

/// What stderr should say about a figure: why it is missing, or what
/// makes it less than clean (io_uring refused, a device read to its end).
/// `None` when there is nothing to say.
pub fn diagnostic(report: &ProbeReport, line: Figure) -> Option<String> {
    match report.outcome(line)? {
        // Figures of one test say why they are missing once.
        Outcome::Skipped(_) | Outcome::Failed(_) if line.spec().problem_told_by.is_some() => None,
        Outcome::Skipped(why) => Some(format!("{}: skipped: {why}", line.label())),
        Outcome::Failed(why) => Some(format!("{}: not measured: {why}", line.label())),
        Outcome::Measured(_) => report.projection(line)?.diagnostic,
    }
}

/// The whole report as text: pveperf's lines, then the extended ones.
pub fn render(report: &ProbeReport) -> String {
    Figure::ALL
        .iter()
        .filter_map(|l| line(report, *l))
        .map(|l| l + "\n")
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::model::printable;
    use std::time::Duration;

    use super::*;
    use crate::model::Devices;
    use crate::model::blockdev::{ReadFigure, SeekFigure};
    use crate::model::dns::{DnsFigure, ServerStats};
    use crate::model::filesystem::FsInfo;
    use crate::model::fsync::FsyncFigure;
    use crate::model::regex::{RegexEngine, RegexFigure};

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
    pub(crate) fn full_report() -> ProbeReport {
        let mut r = ProbeReport::new("/var/lib/vz".into());
        r.cpu_bogomips = Some(Outcome::Measured(crate::model::host::Bogomips(38401.92)));
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

    use crate::commands::probe::report::Extended;
    use crate::model::io::{Engine, IoStats, MixedFigure, SeqWriteFigure};
    use crate::model::latency::Latency;
    use crate::model::storage::Storage;

    /// An extended line of a report with `x` and ZFS's two leaf disks.
    fn xline(x: &Extended, figure: Figure, names: &[&str]) -> Option<String> {
        let mut r = ProbeReport::new("/".into());
        r.extended = x.clone();
        r.storage = Some(Storage {
            read_devices: names.iter().map(|n| format!("/dev/{n}").into()).collect(),
            ..Default::default()
        });
        line(&r, figure)
    }

    pub(crate) fn stats(reads: u64, writes: u64) -> IoStats {
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
        let mut r = ProbeReport::new("/".into());
        r.extended = x;
        assert_eq!(
            r.projection(Figure::RandRead4kQd32).unwrap().value(),
            Some(1000.0)
        );
        assert!(!r.any_failed());
        r.extended.seq_read = Some(Outcome::Failed("no".into()));
        assert!(r.any_failed());
        assert_eq!(
            diagnostic(&r, Figure::SeqReadDirect).unwrap(),
            "SEQ READ DIRECT: not measured: no"
        );
    }
}
