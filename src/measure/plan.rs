//! The tests `--tests` can choose and what each costs: how many windows a
//! run takes, how much it writes, and the I/O jobs of the extended device
//! and file tests. One table, read by the run (the jobs) and by the
//! cluster's timeout estimate (the windows and writes).

use std::collections::BTreeSet;
use std::time::Duration;

use crate::figure::Figure;
use crate::measure::engine::JobParams;
use crate::model::choice::Choice;

/// The tests `--tests` can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Test {
    /// CPU BOGOMIPS
    Cpu,
    /// REGEX/SECOND
    Regex,
    /// BUFFERED READS
    Read,
    /// AVERAGE SEEK TIME
    Seek,
    /// FSYNCS/SECOND
    Fsync,
    /// DNS EXT and DNS INT
    Dns,
    /// SEQ WRITE (extended)
    Seqwrite,
    /// SEQ READ DIRECT (extended)
    Seqread,
    /// RANDOM READ 4K QD1 and QD32 (extended)
    Randread,
    /// MIXED 70/30 4K QD16 (extended)
    Mixed,
    /// SYNC WRITE 4K (extended; with --sync-jobs also its scaling)
    Syncwrite,
    /// Proxmox Backup's CPU figures: SHA256, ZSTD COMPRESS and DECOMPRESS,
    /// AES-256-GCM, VERIFY (extended)
    CpuBench,
    /// RANDOM WRITE 4K QD1 and QD32 (a --storage scratch volume, or a
    /// file; asked for by name, not part of -x)
    Randwrite,
    /// SUSTAINED WRITE (`--sustained SECS`; not part of -x)
    Sustained,
}

/// The CPU benchmark's windows, in windows of `--duration`: PBS's 7 s
/// (1 s each, compression 3 s) at its default of 3 s. `--cpu-threads`
/// runs them all a second time.
pub const CPU_BENCH_WINDOWS: f64 = 7.0 / 3.0;

/// `--sustained`: seconds when `--tests sustained` asks without it.
pub const SUSTAINED_SECS: f64 = 60.0;

/// `--sustained`'s file when `--write-size` is not given: larger than
/// the write caches it is meant to run past.
pub const SUSTAINED_BYTES: u64 = 8 << 30;

/// `--cpu-threads N`: at most this many.
pub const CPU_THREADS_MAX: u32 = 1024;

/// SYNC WRITE 4K: each job's file, written in full before the timed
/// writes overwrite it at random (fio's `--overwrite=1 --size`).
pub const SYNC_FILE_BYTES: u64 = 64 << 20;

/// What the options ask to run, before the defaults apply.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked<'a> {
    /// `--tests`; empty: the default tests.
    pub tests: &'a [Test],
    /// `-x`.
    pub extended: bool,
    /// `--sync-jobs`, `--cpu-threads` and `--sustained` given.
    pub sync_jobs: bool,
    pub cpu_threads: bool,
    pub sustained: bool,
}

impl Asked<'_> {
    /// The tests to run: `--tests`, else `default`; `-x` adds the extended
    /// tests, and `--sync-jobs`, `--cpu-threads` and `--sustained` their own.
    pub fn select(&self, default: &[Test]) -> BTreeSet<Test> {
        let mut tests: BTreeSet<Test> = if self.tests.is_empty() {
            default.iter().copied().collect()
        } else {
            self.tests.iter().copied().collect()
        };
        if self.extended {
            tests.extend(Test::EXTENDED);
        }
        for (given, test) in [
            (self.sync_jobs, Test::Syncwrite),
            (self.cpu_threads, Test::CpuBench),
            (self.sustained, Test::Sustained),
        ] {
            if given {
                tests.insert(test);
            }
        }
        tests
    }
}

/// The disk speed the worst case assumes for the files the tests write.
pub const SLOW_DISK_BYTES_PER_S: f64 = 10.0 * 1024.0 * 1024.0;

/// A run's size, for the longest it may take: the tests and the options
/// that make them longer.
#[derive(Debug, Clone)]
pub struct Workload {
    pub tests: BTreeSet<Test>,
    /// `--duration`, in seconds.
    pub duration: f64,
    pub runs: u32,
    /// `--dns-timeout`, in seconds.
    pub dns_timeout: f64,
    /// `--write-size` (or its default) in bytes.
    pub write_size: u64,
    /// `--sync-jobs`: how many counts of jobs.
    pub sync_steps: usize,
    /// `--sustained`, in seconds.
    pub sustained: Option<f64>,
    /// `--cpu-threads` given.
    pub cpu_threads: bool,
}

impl Workload {
    /// The longest a run may take: 60 s plus three times its windows (and
    /// DNS timeouts), plus its files written at [`SLOW_DISK_BYTES_PER_S`].
    pub fn worst_case(&self) -> Duration {
        let (duration, runs) = (self.duration, f64::from(self.runs));
        let mut windowed = 0.0;
        let mut written = 0.0;
        for test in &self.tests {
            let cost = test.cost();
            windowed += f64::from(cost.windows_per_run) * runs * duration
                + f64::from(cost.windows) * duration
                + f64::from(cost.dns_lines_per_run) * runs * (duration + self.dns_timeout);
            written += f64::from(cost.writes) * self.write_size as f64;
        }
        // Each --sync-jobs step is one more window.
        if self.tests.contains(&Test::Syncwrite) {
            windowed += self.sync_steps as f64 * duration;
        }
        if self.tests.contains(&Test::Sustained) {
            windowed += self.sustained.unwrap_or(SUSTAINED_SECS);
        }
        // --cpu-threads runs the CPU figures a second time.
        if self.cpu_threads {
            windowed += f64::from(Test::CpuBench.cost().windows) * duration;
        }
        let secs = 60.0 + 3.0 * windowed + written / SLOW_DISK_BYTES_PER_S;
        Duration::from_secs_f64(secs.ceil())
    }
}

/// What one test costs: windows of `--duration`, DNS lines (a window plus
/// one `--dns-timeout` each) and multiples of `--write-size` written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Windows each of `--runs` takes.
    pub windows_per_run: u32,
    /// Windows taken once, whatever `--runs` says.
    pub windows: u32,
    /// DNS lines each of `--runs` measures.
    pub dns_lines_per_run: u32,
    /// Multiples of `--write-size` written.
    pub writes: u32,
    /// The I/O jobs, one window each (the extended device and file tests).
    pub jobs: &'static [JobParams],
}

const FREE: Cost = Cost {
    windows_per_run: 0,
    windows: 0,
    dns_lines_per_run: 0,
    writes: 0,
    jobs: &[],
};

impl Test {
    /// pveperf's six tests, the default of `--tests`.
    pub const PVEPERF: [Test; 6] = [
        Test::Cpu,
        Test::Regex,
        Test::Read,
        Test::Seek,
        Test::Fsync,
        Test::Dns,
    ];

    /// The extended tests of `-x`.
    pub const EXTENDED: [Test; 6] = [
        Test::Seqwrite,
        Test::Seqread,
        Test::Randread,
        Test::Mixed,
        Test::Syncwrite,
        Test::CpuBench,
    ];

    /// Tests only `--tests` (or a scratch volume) asks for.
    pub const OPT_IN: [Test; 2] = [Test::Randwrite, Test::Sustained];

    /// Every test, in `--tests`'s order: pveperf's, `-x`'s, the opt-in ones.
    pub const ALL: [Test; 14] = {
        let mut all = [Test::Cpu; 14];
        let mut i = 0;
        while i < 14 {
            all[i] = match i {
                0..6 => Test::PVEPERF[i],
                6..12 => Test::EXTENDED[i - 6],
                _ => Test::OPT_IN[i - 12],
            };
            i += 1;
        }
        all
    };

    /// The tests a `--storage` run makes on a scratch volume unless
    /// `--tests` says: pveperf's disk lines, and the writes a volume takes.
    pub const ON_VOLUME: [Test; 7] = [
        Test::Read,
        Test::Seek,
        Test::Fsync,
        Test::Seqwrite,
        Test::Randread,
        Test::Randwrite,
        Test::Syncwrite,
    ];

    /// The name `--tests` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Test::Cpu => "cpu",
            Test::Regex => "regex",
            Test::Read => "read",
            Test::Seek => "seek",
            Test::Fsync => "fsync",
            Test::Dns => "dns",
            Test::Seqwrite => "seqwrite",
            Test::Seqread => "seqread",
            Test::Randread => "randread",
            Test::Mixed => "mixed",
            Test::Syncwrite => "syncwrite",
            Test::CpuBench => "cpu-bench",
            Test::Randwrite => "randwrite",
            Test::Sustained => "sustained",
        }
    }

    /// The figures it measures (`--sync-jobs` adds SYNC WRITE 4K's
    /// scaling, JOBS and PEAK).
    pub const fn figures(self) -> &'static [Figure] {
        use Figure as F;
        match self {
            Test::Cpu => &[F::CpuBogomips],
            Test::Regex => &[F::RegexPerSecond],
            Test::Read => &[F::BufferedReads],
            Test::Seek => &[F::AverageSeekTime],
            Test::Fsync => &[F::FsyncsPerSecond],
            Test::Dns => &[F::DnsExt, F::DnsInt],
            Test::Seqwrite => &[F::SeqWrite],
            Test::Seqread => &[F::SeqReadDirect],
            Test::Randread => &[F::RandRead4kQd1, F::RandRead4kQd32],
            Test::Mixed => &[F::Mixed],
            Test::Syncwrite => &[F::SyncWrite4k],
            Test::CpuBench => &Figure::CPU_BENCH,
            Test::Randwrite => &[F::RandWrite4kQd1, F::RandWrite4kQd32],
            Test::Sustained => &[F::SustainedWrite],
        }
    }

    /// What `--help` adds after its figures' labels.
    const fn note(self) -> &'static str {
        match self {
            Test::Cpu | Test::Regex | Test::Read | Test::Seek | Test::Fsync | Test::Dns => "",
            Test::Seqwrite | Test::Seqread | Test::Randread | Test::Mixed => " (extended)",
            Test::Syncwrite => " (extended; --sync-jobs adds its scaling)",
            Test::CpuBench => {
                " (extended; as proxmox-backup-client benchmark; --cpu-threads adds all-thread figures)"
            }
            Test::Randwrite => {
                " (a --storage scratch volume's device, or a file of --write-size in PATH; not in -x)"
            }
            Test::Sustained => {
                " (--sustained SECS, default 60: a long sequential write; not in -x)"
            }
        }
    }

    /// The lines it measures, as `--help` lists them: its figures' labels.
    pub fn lines(self) -> &'static str {
        static LINES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
            Test::ALL
                .iter()
                .map(|t| {
                    let labels: Vec<&str> = t.figures().iter().map(|f| f.label()).collect();
                    let list = match labels.as_slice() {
                        [one, two] => format!("{one} and {two}"),
                        all => all.join(", "),
                    };
                    list + t.note()
                })
                .collect()
        });
        let index = Test::ALL.iter().position(|t| *t == self).unwrap_or(0);
        &LINES[index]
    }

    /// What one test costs (see [`Cost`]).
    pub const fn cost(self) -> Cost {
        match self {
            Test::Cpu => FREE,
            Test::Regex | Test::Read | Test::Seek | Test::Fsync => Cost {
                windows_per_run: 1,
                ..FREE
            },
            // DNS EXT and DNS INT, each a window plus one --dns-timeout.
            Test::Dns => Cost {
                dns_lines_per_run: 2,
                ..FREE
            },
            // Three back-to-back files of --write-size, as fast as the disk.
            Test::Seqwrite => Cost { writes: 3, ..FREE },
            Test::Seqread => Cost {
                windows: 1,
                jobs: &[JobParams::SEQ_READ_DIRECT],
                ..FREE
            },
            Test::Randread => Cost {
                windows: 2,
                jobs: &[JobParams::RAND_READ_4K_QD1, JobParams::RAND_READ_4K_QD32],
                ..FREE
            },
            // The file is written first, then the job runs on it.
            Test::Mixed => Cost {
                windows: 1,
                writes: 1,
                jobs: &[JobParams::MIXED],
                ..FREE
            },
            // One job for one window (each --sync-jobs step one more);
            // its file is small (SYNC_FILE_BYTES).
            Test::Syncwrite => Cost { windows: 1, ..FREE },
            // CPU_BENCH_WINDOWS, rounded up.
            Test::CpuBench => Cost { windows: 3, ..FREE },
            // Both jobs (on a path, into a preallocated file: nothing
            // written first).
            Test::Randwrite => Cost {
                windows: 2,
                jobs: &[JobParams::RAND_WRITE_4K_QD1, JobParams::RAND_WRITE_4K_QD32],
                ..FREE
            },
            // --sustained's seconds (the cluster adds them).
            Test::Sustained => FREE,
        }
    }
}

impl Choice for Test {
    const ALL: &'static [Self] = &Test::ALL;

    fn name(self) -> &'static str {
        Test::name(self)
    }

    fn help(self) -> &'static str {
        self.lines()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each figure of a probe run belongs to one test (HD SIZE to none:
    /// every run has it; SYNC WRITE 4K's scaling comes with --sync-jobs).
    #[test]
    fn each_figure_is_measured_by_one_test() {
        use crate::figure::Group;
        for f in Figure::ALL {
            let by: Vec<Test> = Test::ALL
                .into_iter()
                .filter(|t| t.figures().contains(&f))
                .collect();
            let expected = usize::from(
                matches!(f.group(), Group::Pveperf | Group::Extended)
                    && !matches!(
                        f,
                        Figure::HdSize | Figure::SyncWriteJobs | Figure::SyncWritePeak
                    ),
            );
            assert_eq!(by.len(), expected, "{f:?}: {by:?}");
        }
        assert_eq!(Test::Dns.lines(), "DNS EXT and DNS INT");
        assert_eq!(
            Test::Randread.lines(),
            "RANDOM READ 4K QD1 and RANDOM READ 4K QD32 (extended)"
        );
    }

    #[test]
    fn all_is_pveperfs_then_the_extended_each_once() {
        let joined: Vec<Test> = Test::PVEPERF
            .into_iter()
            .chain(Test::EXTENDED)
            .chain(Test::OPT_IN)
            .collect();
        assert_eq!(joined, Test::ALL);
        let mut sorted = Test::ALL;
        sorted.sort();
        assert_eq!(sorted, Test::ALL, "ALL is in the enum's order");
    }

    #[test]
    fn each_job_takes_one_window_and_only_extended_tests_have_jobs() {
        for test in Test::ALL {
            let cost = test.cost();
            if !cost.jobs.is_empty() {
                assert_eq!(cost.windows as usize, cost.jobs.len(), "{test:?}");
            }
            if Test::PVEPERF.contains(&test) {
                assert!(cost.jobs.is_empty() && cost.writes == 0 && cost.windows == 0);
            }
        }
    }

    #[test]
    fn the_default_applies_only_without_tests_and_the_options_add_theirs() {
        let none = Asked::default();
        assert_eq!(
            none.select(&Test::PVEPERF),
            Test::PVEPERF.into_iter().collect()
        );
        let x = Asked {
            tests: &[Test::Fsync],
            extended: true,
            sustained: true,
            ..Asked::default()
        };
        let mut want: BTreeSet<Test> = Test::EXTENDED.into_iter().collect();
        want.extend([Test::Fsync, Test::Sustained]);
        assert_eq!(x.select(&Test::PVEPERF), want);
        let jobs = Asked {
            tests: &[Test::Cpu],
            sync_jobs: true,
            cpu_threads: true,
            ..Asked::default()
        };
        assert_eq!(
            jobs.select(&[Test::Read]),
            [Test::Cpu, Test::Syncwrite, Test::CpuBench]
                .into_iter()
                .collect()
        );
    }
}
