//! Every figure pveprobe reports, in print order, and what each one is:
//! its key, label and unit, its CSV columns, which way is better, how it
//! adds up over nodes measured at once, and which settings change what it
//! means. The text lines, the JSON lookup, the CSV header, the cluster
//! table, `compare` and `--baseline` all iterate [`Figure::ALL`] and read
//! [`Figure::spec`]; adding a figure is its entry here and its measurement.
//!
//! The granularity, settled for the figures to come:
//! - a figure has one or more [`Value`]s: MIXED's read and write IOPS are
//!   two values of one figure, as latency percentiles would be; each value
//!   has its own CSV column, direction and aggregate, and is one row of
//!   `compare` and one column of the cluster table;
//! - a figure measured once per key (per job count, per storage, per node
//!   pair, per second of a series) says so in [`Spec::per`]: its JSON
//!   entries carry the key as `instance`, `compare` and `--baseline` rank
//!   each instance, the cluster table has a column per instance found.
//!   The single-run CSV has a fixed header, so it carries no per-key
//!   figure: a summary of one (a peak, a step) is a figure of its own.

pub mod projection;

use serde::{Deserialize, Serialize};

/// Declares the figures, each once, in print order, with its [`Spec`]:
/// the enum, [`Figure::ALL`] and [`Figure::spec`] all come from that one
/// list, so their order cannot drift.
macro_rules! figures {
    ($($figure:ident => $spec:expr,)*) => {
        /// The figures, in the order they print: pveperf's eight, then `-x`'s,
        /// then the network's.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Figure {
            $($figure,)*
        }

        impl Figure {
            /// Every figure, in print order.
            pub const ALL: [Figure; [$(stringify!($figure)),*].len()] = [$(Figure::$figure,)*];

            /// What the figure is.
            pub fn spec(self) -> &'static Spec {
                match self {
                    $(Figure::$figure => {
                        static SPEC: Spec = $spec;
                        &SPEC
                    })*
                }
            }
        }
    };
}

/// Where a figure belongs: pveperf's lines (JSON `figures`, text from
/// column 20) or the extended ones (JSON `extended`, text from column 27).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Pveperf,
    Extended,
    /// The cluster network's (`cluster --net`, `net`): per link and pair of
    /// nodes, in the network document; no probe run has them.
    Network,
    /// `qualify DEVICE`'s: measured on a whole empty device, in the
    /// qualify document; no probe run has them.
    Qualify,
    /// `guest VMID`'s: measured inside a VM on each of its disks, in the
    /// guest document; no probe run has them.
    Guest,
    /// `ceph`'s: measured by Ceph's own tools per OSD and per pool, in the
    /// ceph document; no probe run has them.
    Ceph,
}

/// Which way a value is better, for `compare`, `--baseline` and outliers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// How a value adds up over nodes measured at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    /// Throughput and IOPS: what all nodes got together.
    Sum,
    /// Latency: the worst node's.
    Max,
}

/// Which number of a figure's JSON entry a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `value`: the figure itself (the median of its runs).
    Value,
    /// `write_iops` of an I/O test.
    WriteIops,
    /// `domain` (DNS INT's search domain): text, not ranked.
    Domain,
    /// `latency.p99_us`, in ms.
    P99Ms,
    /// `verdict.kind` (SYNC WRITE 4K's flushes): text, not ranked.
    Verdict,
    /// `reference.percent`: the figure against its device class's band.
    ReferencePercent,
    /// `peak_jobs`: the count of jobs at the peak.
    PeakJobs,
    /// `stops_scaling_at`: the last count of jobs that still gained.
    StopsAt,
    /// `pbs_reference.percent`: a CPU figure against PBS's reference machine.
    PbsPercent,
    /// `threads.mb_per_s`: a CPU figure on `--cpu-threads` threads at once.
    ThreadsMbPerS,
    /// `threads.scaling`: those threads against as many times one thread.
    ThreadScaling,
    /// `first_10s_mib_per_s`: SUSTAINED WRITE's first ten seconds.
    First10s,
    /// `last_10s_mib_per_s`: its last ten seconds.
    Last10s,
    /// `slowest_second.mib_per_s`: its slowest second.
    SlowestSecond,
    /// `latency.max_us`, in ms.
    MaxMs,
    /// `back`: the other way of a figure measured each way (the responder
    /// to the measuring node).
    Back,
}

/// A way of measuring that changes what a figure means: two results that
/// differ in one are not ranked against each other (`unlike`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `settings.regex_engine`: perl runs pveperf's loop, rust 3 to 7 times it.
    RegexEngine,
    /// `settings.fsync_order`: pveperf's (fsync before write) or write-then-fsync.
    FsyncOrder,
    /// `settings.dns_schedule`: bounded waits or Net::DNS's.
    DnsSchedule,
    /// `settings.duration_s`: a longer window reads further into a disk and
    /// fills more of a write-back cache.
    Window,
    /// The figure's `data`: zeros compress and deduplicate, incompressible data does not.
    Data,
    /// The figure's `engine`: io_uring or psync.
    IoEngine,
    /// The figure's `sync_mode`: fdatasync or O_DSYNC.
    SyncMode,
    /// The figure's `threads.count`: `--cpu-threads`.
    CpuThreads,
    /// The figure's `window_s`: `--sustained`'s seconds (a longer write
    /// runs further past the caches).
    Sustained,
    /// The figure's `write_blocks`: RANDOM WRITE into blocks not written
    /// before (a preallocated file, as fio's) or written before (a scratch
    /// volume after its prefill; a file before pveprobe preallocated it).
    WriteBlocks,
}

impl Method {
    /// Whether it changes what a value read from `field` means: the count
    /// of threads changes only the threads' values, not one thread's.
    pub fn applies_to(self, field: Field) -> bool {
        match self {
            Method::CpuThreads => matches!(field, Field::ThreadsMbPerS | Field::ThreadScaling),
            _ => true,
        }
    }

    /// As `compare` names it.
    pub fn name(self) -> &'static str {
        match self {
            Method::RegexEngine => "regex engine",
            Method::FsyncOrder => "fsync order",
            Method::DnsSchedule => "DNS schedule",
            Method::Window => "window",
            Method::Data => "data",
            Method::IoEngine => "I/O engine",
            Method::SyncMode => "sync mode",
            Method::CpuThreads => "CPU threads",
            Method::Sustained => "sustained seconds",
            Method::WriteBlocks => "blocks written into",
        }
    }
}

/// One number of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    /// The figure it belongs to.
    pub figure: Figure,
    /// Its row key in `compare` (the figure's key for its main value).
    pub key: &'static str,
    /// Its CSV column (the unit in the name), also its key in the cluster table.
    pub column: &'static str,
    /// What follows the figure's label in `compare` and the cluster table: ` (p99)`.
    pub suffix: &'static str,
    pub field: Field,
    /// The cluster table's narrow heading and unit.
    pub short: &'static str,
    pub short_unit: &'static str,
    /// `None`: no performance figure (HD SIZE) or text.
    pub better: Option<Better>,
    /// `None`: no meaning summed over nodes (CPU, HD SIZE).
    pub aggregate: Option<Aggregate>,
}

impl Value {
    /// The label in `compare` and the cluster table: `MIXED 70/30 4K QD16 (read)`.
    pub fn label(&self) -> String {
        format!("{}{}", self.figure.spec().label, self.suffix)
    }

    /// Its unit in `compare`: the figure's, or the one of a number derived
    /// from it (a percentage, a ratio, a count of jobs, a p99 in ms).
    pub fn unit(&self) -> &'static str {
        match self.field {
            Field::Value
            | Field::WriteIops
            | Field::ThreadsMbPerS
            | Field::First10s
            | Field::Last10s
            | Field::SlowestSecond
            | Field::Back => self.figure.unit(),
            Field::P99Ms | Field::MaxMs => "ms",
            Field::ReferencePercent | Field::PbsPercent => "%",
            Field::ThreadScaling => "ratio",
            Field::PeakJobs | Field::StopsAt => "jobs",
            Field::Domain | Field::Verdict => "",
        }
    }

    /// `value` for a person: the figure's decimals, or those of the
    /// derived number (a p99 in ms, a percentage, a ratio).
    pub fn format(&self, value: f64) -> String {
        match self.field {
            Field::P99Ms | Field::MaxMs => format!("{value:.3}"),
            Field::ReferencePercent | Field::PbsPercent | Field::PeakJobs | Field::StopsAt => {
                format!("{value:.0}")
            }
            Field::ThreadScaling => format!("{value:.2}"),
            _ => self.figure.spec().format(value),
        }
    }

    /// A number (ranked, summed), not text.
    pub fn is_number(&self) -> bool {
        !matches!(self.field, Field::Domain | Field::Verdict)
    }

    /// True when `b` is better than `a`; `None` when neither is.
    pub fn better_than(&self, b: f64, a: f64) -> Option<bool> {
        if a == b {
            return None;
        }
        match self.better? {
            Better::Higher => Some(b > a),
            Better::Lower => Some(b < a),
        }
    }
}

/// How a figure's runs make its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// The median (what pveperf's lines print with `--runs N`).
    Median,
    /// The mean (SEQ WRITE's three back-to-back runs, as bench.sh averages dd's).
    Mean,
}

impl Runs {
    /// The value of `samples` (one per run); `None` without any.
    pub fn of(self, samples: &[f64]) -> Option<f64> {
        match self {
            Runs::Median => crate::model::stats::median(samples),
            Runs::Mean => crate::model::stats::mean(samples),
        }
    }
}

/// What a figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Its JSON key: `figures.KEY` or `extended[].key`.
    pub key: &'static str,
    /// As the text line prints it, without the colon.
    pub label: &'static str,
    /// The unit of its JSON `value` (pveperf's "GB" is GiB, "MB/sec" MiB/s).
    pub unit: &'static str,
    pub group: Group,
    /// Its numbers, the first being its JSON `value`.
    pub values: &'static [Value],
    /// The settings that change what it means.
    pub methods: &'static [Method],
    /// `Some(what)`: measured once per key (`instance` in JSON), e.g. `jobs`.
    pub per: Option<&'static str>,
    /// How its runs make its value.
    pub runs: Runs,
    /// Decimals a person is shown (`-v`, a line without a format of its
    /// own); 0 rounds to a whole number. pveperf's lines keep pveperf's
    /// formats.
    pub decimals: usize,
    /// The facts its JSON entry carries beside its value (see
    /// `project::Facts`): how a result read back knows them.
    pub facts: Kind,
    /// A figure measured by the same test as the one named, which says
    /// on stderr why neither was measured (SYNC WRITE 4K PEAK's JOBS).
    pub problem_told_by: Option<Figure>,
}

/// Which facts a figure's JSON entry carries (one `project::Facts` each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Its value and runs alone (CPU BOGOMIPS, HD SIZE).
    None,
    Regex,
    /// BUFFERED READS and AVERAGE SEEK TIME: the devices read.
    Device,
    Fsync,
    Dns,
    SeqWrite,
    /// An I/O test: SEQ READ DIRECT, the random reads and writes, MIXED.
    Io,
    /// SYNC WRITE 4K and each count of jobs.
    Sync,
    Peak,
    Cpu,
    Sustained,
    /// A network figure: its round-trip latency or the way back.
    Net,
}

impl Spec {
    /// `value` with the figure's decimals.
    pub fn format(&self, value: f64) -> String {
        match self.decimals {
            0 => format!("{}", value.round() as i64),
            d => format!("{value:.d$}"),
        }
    }
}

use Aggregate::{Max, Sum};
use Better::{Higher, Lower};
use Figure as F;
use Group::{Ceph, Extended, Guest, Network, Pveperf, Qualify};

/// A value that is a figure's `value`.
const fn main(
    figure: Figure,
    key: &'static str,
    column: &'static str,
    short: (&'static str, &'static str),
    better: Option<Better>,
    aggregate: Option<Aggregate>,
) -> Value {
    more(
        figure,
        (key, column, ""),
        Field::Value,
        short,
        better,
        aggregate,
    )
}

const CPU_BOGOMIPS: [Value; 1] = [main(
    F::CpuBogomips,
    "cpu_bogomips",
    "cpu_bogomips",
    ("BOGOMIPS", ""),
    Some(Higher),
    None,
)];
const REGEX: [Value; 1] = [main(
    F::RegexPerSecond,
    "regex_per_second",
    "regex_iterations_per_3s",
    ("REGEX", "per 3 s"),
    Some(Higher),
    None,
)];
const HD_SIZE: [Value; 1] = [main(
    F::HdSize,
    "hd_size",
    "hd_size_gib",
    ("HD SIZE", "GiB"),
    None,
    None,
)];
const READS: [Value; 1] = [main(
    F::BufferedReads,
    "buffered_reads",
    "buffered_reads_mib_per_s",
    ("READS", "MB/s"),
    Some(Higher),
    Some(Sum),
)];
const SEEK: [Value; 1] = [main(
    F::AverageSeekTime,
    "average_seek_time",
    "average_seek_time_ms",
    ("SEEK", "ms"),
    Some(Lower),
    Some(Max),
)];
const FSYNCS: [Value; 1] = [main(
    F::FsyncsPerSecond,
    "fsyncs_per_second",
    "fsyncs_per_s",
    ("FSYNCS", "per s"),
    Some(Higher),
    Some(Sum),
)];
const DNS_EXT: [Value; 1] = [main(
    F::DnsExt,
    "dns_ext",
    "dns_ext_ms",
    ("DNS EXT", "ms"),
    Some(Lower),
    Some(Max),
)];
const DNS_INT: [Value; 2] = [
    main(
        F::DnsInt,
        "dns_int",
        "dns_int_ms",
        ("DNS INT", "ms"),
        Some(Lower),
        Some(Max),
    ),
    Value {
        key: "dns_int_domain",
        column: "dns_int_domain",
        suffix: " (domain)",
        field: Field::Domain,
        short: "DOMAIN",
        short_unit: "",
        better: None,
        aggregate: None,
        ..main(F::DnsInt, "", "", ("", ""), None, None)
    },
];
const SEQ_WRITE: [Value; 1] = [main(
    F::SeqWrite,
    "seq_write",
    "seq_write_mib_per_s",
    ("SEQ WRITE", "MB/s"),
    Some(Higher),
    Some(Sum),
)];
const SEQ_READ: [Value; 1] = [main(
    F::SeqReadDirect,
    "seq_read_direct",
    "seq_read_direct_mib_per_s",
    ("SEQ READ", "MB/s"),
    Some(Higher),
    Some(Sum),
)];
const QD1: [Value; 1] = [main(
    F::RandRead4kQd1,
    "rand_read_4k_qd1",
    "rand_read_4k_qd1_iops",
    ("4K QD1", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
const QD32: [Value; 1] = [main(
    F::RandRead4kQd32,
    "rand_read_4k_qd32",
    "rand_read_4k_qd32_iops",
    ("4K QD32", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
const WQD1: [Value; 1] = [main(
    F::RandWrite4kQd1,
    "rand_write_4k_qd1",
    "rand_write_4k_qd1_iops",
    ("W 4K QD1", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
const WQD32: [Value; 1] = [main(
    F::RandWrite4kQd32,
    "rand_write_4k_qd32",
    "rand_write_4k_qd32_iops",
    ("W 4K QD32", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
const MIXED: [Value; 2] = [
    Value {
        suffix: " (read)",
        ..main(
            F::Mixed,
            "mixed_70_30_4k_qd16",
            "mixed_read_iops",
            ("MIX READ", "IOPS"),
            Some(Higher),
            Some(Sum),
        )
    },
    Value {
        suffix: " (write)",
        field: Field::WriteIops,
        ..main(
            F::Mixed,
            "mixed_70_30_4k_qd16_write",
            "mixed_write_iops",
            ("MIX WRITE", "IOPS"),
            Some(Higher),
            Some(Sum),
        )
    },
];
/// A value of `figure` read from `field`, labelled with `suffix`.
const fn more(
    figure: Figure,
    (key, column, suffix): (&'static str, &'static str, &'static str),
    field: Field,
    (short, short_unit): (&'static str, &'static str),
    better: Option<Better>,
    aggregate: Option<Aggregate>,
) -> Value {
    Value {
        figure,
        key,
        column,
        suffix,
        field,
        short,
        short_unit,
        better,
        aggregate,
    }
}

const SYNC_WRITE: [Value; 4] = [
    main(
        F::SyncWrite4k,
        "sync_write_4k",
        "sync_write_4k_iops",
        ("SYNC 4K", "IOPS"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::SyncWrite4k,
        ("sync_write_4k_p99", "sync_write_4k_p99_ms", " (p99)"),
        Field::P99Ms,
        ("SYNC p99", "ms"),
        Some(Lower),
        Some(Max),
    ),
    more(
        F::SyncWrite4k,
        (
            "sync_write_4k_flushes",
            "sync_write_4k_flushes",
            " (flushes)",
        ),
        Field::Verdict,
        ("FLUSHES", ""),
        None,
        None,
    ),
    // Derived from the IOPS: shown, not ranked a second time.
    more(
        F::SyncWrite4k,
        (
            "sync_write_4k_pct",
            "sync_write_4k_pct_of_class",
            " (% of class)",
        ),
        Field::ReferencePercent,
        ("SYNC %", "of class"),
        None,
        None,
    ),
];
const SYNC_JOBS: [Value; 1] = [main(
    F::SyncWriteJobs,
    "sync_write_4k_jobs",
    "sync_write_4k_jobs_iops",
    ("SYNC JOBS", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
const SYNC_PEAK: [Value; 3] = [
    main(
        F::SyncWritePeak,
        "sync_write_4k_peak",
        "sync_write_4k_peak_iops",
        ("SYNC PEAK", "IOPS"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::SyncWritePeak,
        (
            "sync_write_4k_peak_jobs",
            "sync_write_4k_peak_jobs",
            " (jobs)",
        ),
        Field::PeakJobs,
        ("PEAK AT", "jobs"),
        None,
        None,
    ),
    more(
        F::SyncWritePeak,
        (
            "sync_write_4k_stops_at",
            "sync_write_4k_stops_at_jobs",
            " (stops scaling at)",
        ),
        Field::StopsAt,
        ("STOPS AT", "jobs"),
        None,
        None,
    ),
];

const SUSTAINED: [Value; 4] = [
    main(
        F::SustainedWrite,
        "sustained_write",
        "sustained_write_mib_per_s",
        ("SUSTAINED", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::SustainedWrite,
        (
            "sustained_write_first_10s",
            "sustained_write_first_10s_mib_per_s",
            " (first 10 s)",
        ),
        Field::First10s,
        ("SUST FIRST", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::SustainedWrite,
        (
            "sustained_write_last_10s",
            "sustained_write_last_10s_mib_per_s",
            " (last 10 s)",
        ),
        Field::Last10s,
        ("SUST LAST", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::SustainedWrite,
        (
            "sustained_write_slowest",
            "sustained_write_slowest_second_mib_per_s",
            " (slowest second)",
        ),
        Field::SlowestSecond,
        ("SUST MIN", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
];

/// A CPU figure of PBS's benchmark: MB/s on one thread, its percentage of
/// PBS's reference machine, and with `--cpu-threads` the threads' MB/s
/// together and their scaling. CPU figures do not add up over nodes.
const fn cpu(
    figure: Figure,
    [key, pct, threads, scaling]: [&'static str; 4],
    [column, pct_column, threads_column, scaling_column]: [&'static str; 4],
    short: &'static str,
) -> [Value; 4] {
    [
        main(figure, key, column, (short, "MB/s"), Some(Higher), None),
        more(
            figure,
            (pct, pct_column, " (% of reference)"),
            Field::PbsPercent,
            (short, "% of ref"),
            None,
            None,
        ),
        more(
            figure,
            (threads, threads_column, " (threads)"),
            Field::ThreadsMbPerS,
            (short, "MB/s xN"),
            Some(Higher),
            None,
        ),
        more(
            figure,
            (scaling, scaling_column, " (thread scaling)"),
            Field::ThreadScaling,
            (short, "scale xN"),
            None,
            None,
        ),
    ]
}

/// A CPU figure's four values, named after its key's stem: `sha256`,
/// `sha256_pct`, `sha256_threads`, `sha256_scaling` and the CSV columns
/// `sha256_mb_per_s`, `sha256_pct_of_reference`, `sha256_threads_mb_per_s`,
/// `sha256_thread_scaling`.
macro_rules! cpu_values {
    ($figure:expr, $stem:literal, $short:literal) => {
        cpu(
            $figure,
            [
                $stem,
                concat!($stem, "_pct"),
                concat!($stem, "_threads"),
                concat!($stem, "_scaling"),
            ],
            [
                concat!($stem, "_mb_per_s"),
                concat!($stem, "_pct_of_reference"),
                concat!($stem, "_threads_mb_per_s"),
                concat!($stem, "_thread_scaling"),
            ],
            $short,
        )
    };
}

const SHA256: [Value; 4] = cpu_values!(F::Sha256, "sha256", "SHA256");
const COMPRESS: [Value; 4] = cpu_values!(F::ZstdCompress, "zstd_compress", "COMPRESS");
const DECOMPRESS: [Value; 4] = cpu_values!(F::ZstdDecompress, "zstd_decompress", "DECOMPR");
const AES: [Value; 4] = cpu_values!(F::Aes256Gcm, "aes_256_gcm", "AES-GCM");
const VERIFY: [Value; 4] = cpu_values!(F::Verify, "verify", "VERIFY");

/// A network figure's value measured each way: the forward one (the
/// figure's `value`, from the node measuring) and the one back.
const fn each_way(
    figure: Figure,
    key: &'static str,
    column: &'static str,
    short: (&'static str, &'static str),
    better: Option<Better>,
) -> [Value; 2] {
    let back_key = match figure {
        F::NetPathMtu => "net_path_mtu_back",
        F::NetTcp => "net_tcp_back",
        _ => "net_tcp_streams_back",
    };
    let back_column = match figure {
        F::NetPathMtu => "net_path_mtu_back_bytes",
        F::NetTcp => "net_tcp_back_mbit_per_s",
        _ => "net_tcp_streams_back_mbit_per_s",
    };
    [
        main(figure, key, column, short, better, Some(Sum)),
        more(
            figure,
            (back_key, back_column, " (back)"),
            Field::Back,
            (short.0, "back"),
            better,
            Some(Sum),
        ),
    ]
}

const NET_RTT: [Value; 3] = [
    main(
        F::NetRtt,
        "net_rtt",
        "net_rtt_p50_ms",
        ("RTT", "ms"),
        Some(Lower),
        Some(Max),
    ),
    more(
        F::NetRtt,
        ("net_rtt_p99", "net_rtt_p99_ms", " (p99)"),
        Field::P99Ms,
        ("RTT p99", "ms"),
        Some(Lower),
        Some(Max),
    ),
    more(
        F::NetRtt,
        ("net_rtt_max", "net_rtt_max_ms", " (max)"),
        Field::MaxMs,
        ("RTT max", "ms"),
        Some(Lower),
        Some(Max),
    ),
];
const NET_JITTER: [Value; 1] = [main(
    F::NetJitter,
    "net_jitter",
    "net_jitter_ms",
    ("JITTER", "ms"),
    Some(Lower),
    Some(Max),
)];
const NET_LOSS: [Value; 1] = [main(
    F::NetLoss,
    "net_loss",
    "net_loss_percent",
    ("LOSS", "%"),
    Some(Lower),
    Some(Max),
)];
const NET_MTU: [Value; 2] = each_way(
    F::NetPathMtu,
    "net_path_mtu",
    "net_path_mtu_bytes",
    ("PATH MTU", "bytes"),
    None,
);
const NET_TCP: [Value; 2] = each_way(
    F::NetTcp,
    "net_tcp",
    "net_tcp_mbit_per_s",
    ("TCP 1", "Mbit/s"),
    Some(Higher),
);
const NET_TCP_STREAMS: [Value; 2] = each_way(
    F::NetTcpStreams,
    "net_tcp_streams",
    "net_tcp_streams_mbit_per_s",
    ("TCP N", "Mbit/s"),
    Some(Higher),
);

/// The settings that change a CPU figure: its windows scale with
/// `--duration`, and `--cpu-threads` decides the threads' values.
const CPU_TEST: &[Method] = &[Method::Window, Method::CpuThreads];

/// The settings that change an I/O test's figure.
const IO_TEST: &[Method] = &[Method::Window, Method::IoEngine];
const RANDOM_WRITE: &[Method] = &[Method::Window, Method::IoEngine, Method::WriteBlocks];

const fn spec(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    group: Group,
    values: &'static [Value],
    methods: &'static [Method],
) -> Spec {
    Spec {
        key,
        label,
        unit,
        group,
        values,
        methods,
        per: None,
        runs: Runs::Median,
        decimals: 2,
        facts: Kind::None,
        problem_told_by: None,
    }
}

/// A `qualify` figure's values: its number, and for a latency-bound test
/// its p99 (and max) in ms.
const fn disk(
    figure: Figure,
    [key, p99, max]: [&'static str; 3],
    [column, p99_column, max_column]: [&'static str; 3],
    short: &'static str,
    unit: &'static str,
) -> [Value; 3] {
    [
        main(figure, key, column, (short, unit), Some(Higher), Some(Sum)),
        more(
            figure,
            (p99, p99_column, " (p99)"),
            Field::P99Ms,
            (short, "p99 ms"),
            Some(Lower),
            Some(Max),
        ),
        more(
            figure,
            (max, max_column, " (max)"),
            Field::MaxMs,
            (short, "max ms"),
            Some(Lower),
            Some(Max),
        ),
    ]
}

const DISK_SYNC_1: [Value; 4] = {
    let [v, p99, max] = disk(
        F::DiskSync1,
        [
            "disk_sync_write_4k_1job",
            "disk_sync_write_4k_1job_p99",
            "disk_sync_write_4k_1job_max",
        ],
        [
            "disk_sync_write_4k_1job_iops",
            "disk_sync_write_4k_1job_p99_ms",
            "disk_sync_write_4k_1job_max_ms",
        ],
        "DISK SYNC 1J",
        "IOPS",
    );
    [
        v,
        p99,
        max,
        more(
            F::DiskSync1,
            (
                "disk_sync_write_4k_flushes",
                "disk_sync_write_4k_flushes",
                " (flushes)",
            ),
            Field::Verdict,
            ("FLUSHES", ""),
            None,
            None,
        ),
    ]
};
const DISK_SYNC_5: [Value; 3] = disk(
    F::DiskSync5,
    [
        "disk_sync_write_4k_5jobs",
        "disk_sync_write_4k_5jobs_p99",
        "disk_sync_write_4k_5jobs_max",
    ],
    [
        "disk_sync_write_4k_5jobs_iops",
        "disk_sync_write_4k_5jobs_p99_ms",
        "disk_sync_write_4k_5jobs_max_ms",
    ],
    "DISK SYNC 5J",
    "IOPS",
);
const DISK_SYNC_10: [Value; 3] = disk(
    F::DiskSync10,
    [
        "disk_sync_write_4k_10jobs",
        "disk_sync_write_4k_10jobs_p99",
        "disk_sync_write_4k_10jobs_max",
    ],
    [
        "disk_sync_write_4k_10jobs_iops",
        "disk_sync_write_4k_10jobs_p99_ms",
        "disk_sync_write_4k_10jobs_max_ms",
    ],
    "DISK SYNC 10J",
    "IOPS",
);
const DISK_RW1: [Value; 3] = disk(
    F::DiskRandWrite4kQd1,
    [
        "disk_rand_write_4k_qd1",
        "disk_rand_write_4k_qd1_p99",
        "disk_rand_write_4k_qd1_max",
    ],
    [
        "disk_rand_write_4k_qd1_iops",
        "disk_rand_write_4k_qd1_p99_ms",
        "disk_rand_write_4k_qd1_max_ms",
    ],
    "DISK W QD1",
    "IOPS",
);
const DISK_RW32: [Value; 3] = disk(
    F::DiskRandWrite4kQd32,
    [
        "disk_rand_write_4k_qd32",
        "disk_rand_write_4k_qd32_p99",
        "disk_rand_write_4k_qd32_max",
    ],
    [
        "disk_rand_write_4k_qd32_iops",
        "disk_rand_write_4k_qd32_p99_ms",
        "disk_rand_write_4k_qd32_max_ms",
    ],
    "DISK W QD32",
    "IOPS",
);
const DISK_RR1: [Value; 3] = disk(
    F::DiskRandRead4kQd1,
    [
        "disk_rand_read_4k_qd1",
        "disk_rand_read_4k_qd1_p99",
        "disk_rand_read_4k_qd1_max",
    ],
    [
        "disk_rand_read_4k_qd1_iops",
        "disk_rand_read_4k_qd1_p99_ms",
        "disk_rand_read_4k_qd1_max_ms",
    ],
    "DISK R QD1",
    "IOPS",
);
const DISK_RR32: [Value; 3] = disk(
    F::DiskRandRead4kQd32,
    [
        "disk_rand_read_4k_qd32",
        "disk_rand_read_4k_qd32_p99",
        "disk_rand_read_4k_qd32_max",
    ],
    [
        "disk_rand_read_4k_qd32_iops",
        "disk_rand_read_4k_qd32_p99_ms",
        "disk_rand_read_4k_qd32_max_ms",
    ],
    "DISK R QD32",
    "IOPS",
);
const DISK_SR: [Value; 3] = disk(
    F::DiskSeqRead1mQd8,
    [
        "disk_seq_read_1m_qd8",
        "disk_seq_read_1m_qd8_p99",
        "disk_seq_read_1m_qd8_max",
    ],
    [
        "disk_seq_read_1m_qd8_mib_per_s",
        "disk_seq_read_1m_qd8_p99_ms",
        "disk_seq_read_1m_qd8_max_ms",
    ],
    "DISK SEQ R",
    "MB/s",
);
const DISK_SW: [Value; 3] = disk(
    F::DiskSeqWrite1mQd8,
    [
        "disk_seq_write_1m_qd8",
        "disk_seq_write_1m_qd8_p99",
        "disk_seq_write_1m_qd8_max",
    ],
    [
        "disk_seq_write_1m_qd8_mib_per_s",
        "disk_seq_write_1m_qd8_p99_ms",
        "disk_seq_write_1m_qd8_max_ms",
    ],
    "DISK SEQ W",
    "MB/s",
);
const DISK_SUSTAINED: [Value; 4] = [
    main(
        F::DiskSustained,
        "disk_sustained_write",
        "disk_sustained_write_mib_per_s",
        ("DISK SUST", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::DiskSustained,
        (
            "disk_sustained_write_first_10s",
            "disk_sustained_write_first_10s_mib_per_s",
            " (first 10 s)",
        ),
        Field::First10s,
        ("DISK SUST FIRST", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::DiskSustained,
        (
            "disk_sustained_write_last_10s",
            "disk_sustained_write_last_10s_mib_per_s",
            " (last 10 s)",
        ),
        Field::Last10s,
        ("DISK SUST LAST", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
    more(
        F::DiskSustained,
        (
            "disk_sustained_write_slowest",
            "disk_sustained_write_slowest_second_mib_per_s",
            " (slowest second)",
        ),
        Field::SlowestSecond,
        ("DISK SUST MIN", "MB/s"),
        Some(Higher),
        Some(Sum),
    ),
];

/// A `qualify` figure: measured once on the device (no runs).
const fn qualify(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    values: &'static [Value],
    facts: Kind,
    methods: &'static [Method],
) -> Spec {
    Spec {
        facts,
        decimals: 0,
        ..spec(key, label, unit, Qualify, values, methods)
    }
}

/// A `guest` figure: per VM disk (`scsi0`), measured inside the guest.
const fn guest(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    values: &'static [Value],
) -> Spec {
    per_subject(key, label, unit, Guest, "disk", values)
}

/// A figure measured once per subject (a VM disk, an OSD, a pool), in
/// whole units.
const fn per_subject(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    group: Group,
    per: &'static str,
    values: &'static [Value],
) -> Spec {
    Spec {
        per: Some(per),
        decimals: 0,
        ..spec(key, label, unit, group, values, &[])
    }
}

/// The one value of a `guest` or `ceph` figure: a count where more is better.
const fn one_value(
    figure: Figure,
    key: &'static str,
    column: &'static str,
    short: &'static str,
    unit: &'static str,
) -> [Value; 1] {
    [main(figure, key, column, (short, unit), Some(Higher), None)]
}

const GUEST_SR: [Value; 1] = one_value(
    F::GuestSeqRead1mQd8,
    "guest_seq_read_1m_qd8",
    "guest_seq_read_1m_qd8_mib_per_s",
    "GUEST SEQ R",
    "MB/s",
);
const GUEST_SW: [Value; 1] = one_value(
    F::GuestSeqWrite1mQd8,
    "guest_seq_write_1m_qd8",
    "guest_seq_write_1m_qd8_mib_per_s",
    "GUEST SEQ W",
    "MB/s",
);
const GUEST_RR1: [Value; 1] = one_value(
    F::GuestRandRead4kQd1,
    "guest_rand_read_4k_qd1",
    "guest_rand_read_4k_qd1_iops",
    "GUEST R QD1",
    "IOPS",
);
const GUEST_RR32: [Value; 1] = one_value(
    F::GuestRandRead4kQd32,
    "guest_rand_read_4k_qd32",
    "guest_rand_read_4k_qd32_iops",
    "GUEST R QD32",
    "IOPS",
);
const GUEST_RW1: [Value; 1] = one_value(
    F::GuestRandWrite4kQd1,
    "guest_rand_write_4k_qd1",
    "guest_rand_write_4k_qd1_iops",
    "GUEST W QD1",
    "IOPS",
);
const GUEST_RW32: [Value; 1] = one_value(
    F::GuestRandWrite4kQd32,
    "guest_rand_write_4k_qd32",
    "guest_rand_write_4k_qd32_iops",
    "GUEST W QD32",
    "IOPS",
);
const GUEST_SYNC: [Value; 1] = one_value(
    F::GuestSyncWrite4k,
    "guest_sync_write_4k",
    "guest_sync_write_4k_iops",
    "GUEST SYNC",
    "IOPS",
);

/// A `ceph` figure: per OSD (`osd.3`) or per pool, by Ceph's own tools.
const fn ceph(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    per: &'static str,
    values: &'static [Value],
) -> Spec {
    per_subject(key, label, unit, Ceph, per, values)
}

const CEPH_OSD_4M: [Value; 1] = one_value(
    F::CephOsdBench4m,
    "ceph_osd_bench_4m",
    "ceph_osd_bench_4m_mib_per_s",
    "OSD BENCH",
    "MB/s",
);
const CEPH_OSD_4K: [Value; 1] = one_value(
    F::CephOsdBench4k,
    "ceph_osd_bench_4k",
    "ceph_osd_bench_4k_iops",
    "OSD BENCH 4K",
    "IOPS",
);
const CEPH_RW4M: [Value; 1] = one_value(
    F::CephRadosWrite4m,
    "ceph_rados_write_4m",
    "ceph_rados_write_4m_mib_per_s",
    "RADOS W 4M",
    "MB/s",
);
const CEPH_RS4M: [Value; 1] = one_value(
    F::CephRadosSeq4m,
    "ceph_rados_seq_4m",
    "ceph_rados_seq_4m_mib_per_s",
    "RADOS SEQ 4M",
    "MB/s",
);
const CEPH_RR4M: [Value; 1] = one_value(
    F::CephRadosRand4m,
    "ceph_rados_rand_4m",
    "ceph_rados_rand_4m_mib_per_s",
    "RADOS RAND 4M",
    "MB/s",
);
const CEPH_RW4K1: [Value; 1] = one_value(
    F::CephRadosWrite4kT1,
    "ceph_rados_write_4k_t1",
    "ceph_rados_write_4k_t1_iops",
    "RADOS W 4K T1",
    "IOPS",
);
const CEPH_RW4K: [Value; 1] = one_value(
    F::CephRadosWrite4k,
    "ceph_rados_write_4k",
    "ceph_rados_write_4k_iops",
    "RADOS W 4K",
    "IOPS",
);
const CEPH_RBDW: [Value; 1] = one_value(
    F::CephRbdWrite4k,
    "ceph_rbd_write_4k",
    "ceph_rbd_write_4k_iops",
    "RBD W 4K",
    "IOPS",
);
const CEPH_RBDR: [Value; 1] = one_value(
    F::CephRbdRead4k,
    "ceph_rbd_read_4k",
    "ceph_rbd_read_4k_iops",
    "RBD R 4K",
    "IOPS",
);

/// A network figure: per link and pair of nodes, the median of none
/// (one measurement each), `--net-count` and `--net-rate` shape the
/// round trips, `--net-seconds` and `--net-streams` the throughput.
const fn net(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    values: &'static [Value],
    decimals: usize,
) -> Spec {
    Spec {
        per: Some("link"),
        decimals,
        facts: Kind::Net,
        ..spec(key, label, unit, Network, values, &[])
    }
}

figures! {
    CpuBogomips => spec(
        "cpu_bogomips",
        "CPU BOGOMIPS",
        "bogomips",
        Pveperf,
        &CPU_BOGOMIPS,
        &[],
    ),
    RegexPerSecond => Spec {
        facts: Kind::Regex,
        decimals: 0,
        ..spec(
            "regex_per_second",
            "REGEX/SECOND",
            "iterations/3s",
            Pveperf,
            &REGEX,
            &[Method::RegexEngine],
        )
    },
    HdSize => spec("hd_size", "HD SIZE", "GiB", Pveperf, &HD_SIZE, &[]),
    BufferedReads => Spec { facts: Kind::Device, ..spec(
        "buffered_reads",
        "BUFFERED READS",
        "MiB/s",
        Pveperf,
        &READS,
        &[Method::Window],
    ) },
    AverageSeekTime => Spec {
        facts: Kind::Device,
        decimals: 3,
        ..spec(
            "average_seek_time",
            "AVERAGE SEEK TIME",
            "ms",
            Pveperf,
            &SEEK,
            &[],
        )
    },
    FsyncsPerSecond => Spec { facts: Kind::Fsync, ..spec(
        "fsyncs_per_second",
        "FSYNCS/SECOND",
        "1/s",
        Pveperf,
        &FSYNCS,
        &[Method::FsyncOrder],
    ) },
    DnsExt => Spec {
        facts: Kind::Dns,
        decimals: 3,
        ..spec(
            "dns_ext",
            "DNS EXT",
            "ms",
            Pveperf,
            &DNS_EXT,
            &[Method::DnsSchedule],
        )
    },
    DnsInt => Spec {
        facts: Kind::Dns,
        decimals: 3,
        ..spec(
            "dns_int",
            "DNS INT",
            "ms",
            Pveperf,
            &DNS_INT,
            &[Method::DnsSchedule],
        )
    },
    SeqWrite => Spec {
        facts: Kind::SeqWrite,
        runs: Runs::Mean,
        ..spec(
            "seq_write",
            "SEQ WRITE",
            "MiB/s",
            Extended,
            &SEQ_WRITE,
            &[Method::Data],
        )
    },
    SeqReadDirect => Spec { facts: Kind::Io, ..spec(
        "seq_read_direct",
        "SEQ READ DIRECT",
        "MiB/s",
        Extended,
        &SEQ_READ,
        IO_TEST,
    ) },
    RandRead4kQd1 => Spec {
        facts: Kind::Io,
        decimals: 0,
        ..spec(
            "rand_read_4k_qd1",
            "RANDOM READ 4K QD1",
            "IOPS",
            Extended,
            &QD1,
            IO_TEST,
        )
    },
    RandRead4kQd32 => Spec {
        facts: Kind::Io,
        decimals: 0,
        ..spec(
            "rand_read_4k_qd32",
            "RANDOM READ 4K QD32",
            "IOPS",
            Extended,
            &QD32,
            IO_TEST,
        )
    },
    RandWrite4kQd1 => Spec {
        facts: Kind::Io,
        decimals: 0,
        ..spec(
            "rand_write_4k_qd1",
            "RANDOM WRITE 4K QD1",
            "IOPS",
            Extended,
            &WQD1,
            RANDOM_WRITE,
        )
    },
    RandWrite4kQd32 => Spec {
        facts: Kind::Io,
        decimals: 0,
        ..spec(
            "rand_write_4k_qd32",
            "RANDOM WRITE 4K QD32",
            "IOPS",
            Extended,
            &WQD32,
            RANDOM_WRITE,
        )
    },
    Mixed => Spec {
        facts: Kind::Io,
        decimals: 0,
        ..spec(
            "mixed_70_30_4k_qd16",
            "MIXED 70/30 4K QD16",
            "IOPS",
            Extended,
            &MIXED,
            IO_TEST,
        )
    },
    SyncWrite4k => Spec {
        facts: Kind::Sync,
        decimals: 0,
        ..spec(
            "sync_write_4k",
            "SYNC WRITE 4K",
            "IOPS",
            Extended,
            &SYNC_WRITE,
            &[Method::SyncMode],
        )
    },
    SyncWriteJobs => Spec {
        facts: Kind::Sync,
        per: Some("jobs"),
        decimals: 0,
        ..spec(
            "sync_write_4k_jobs",
            "SYNC WRITE 4K JOBS",
            "IOPS",
            Extended,
            &SYNC_JOBS,
            &[Method::SyncMode],
        )
    },
    SyncWritePeak => Spec {
        facts: Kind::Peak, problem_told_by: Some(F::SyncWriteJobs),
        decimals: 0,
        ..spec(
            "sync_write_4k_peak",
            "SYNC WRITE 4K PEAK",
            "IOPS",
            Extended,
            &SYNC_PEAK,
            &[Method::SyncMode],
        )
    },
    SustainedWrite => Spec { facts: Kind::Sustained, ..spec(
        "sustained_write",
        "SUSTAINED WRITE",
        "MiB/s",
        Extended,
        &SUSTAINED,
        &[Method::Sustained],
    ) },
    Sha256 => Spec { facts: Kind::Cpu, ..spec("sha256", "SHA256", "MB/s", Extended, &SHA256, CPU_TEST) },
    ZstdCompress => Spec { facts: Kind::Cpu, ..spec(
        "zstd_compress",
        "ZSTD COMPRESS",
        "MB/s",
        Extended,
        &COMPRESS,
        CPU_TEST,
    ) },
    ZstdDecompress => Spec { facts: Kind::Cpu, ..spec(
        "zstd_decompress",
        "ZSTD DECOMPRESS",
        "MB/s",
        Extended,
        &DECOMPRESS,
        CPU_TEST,
    ) },
    Aes256Gcm => Spec { facts: Kind::Cpu, ..spec(
        "aes_256_gcm",
        "AES-256-GCM",
        "MB/s",
        Extended,
        &AES,
        CPU_TEST,
    ) },
    Verify => Spec { facts: Kind::Cpu, ..spec("verify", "VERIFY", "MB/s", Extended, &VERIFY, CPU_TEST) },
    NetRtt => net("net_rtt", "NET RTT", "ms", &NET_RTT, 3),
    NetJitter => net("net_jitter", "NET JITTER", "ms", &NET_JITTER, 3),
    NetLoss => net("net_loss", "NET LOSS", "%", &NET_LOSS, 1),
    NetPathMtu => net("net_path_mtu", "NET PATH MTU", "bytes", &NET_MTU, 0),
    NetTcp => net("net_tcp", "NET TCP 1 STREAM", "Mbit/s", &NET_TCP, 0),
    NetTcpStreams => net(
        "net_tcp_streams",
        "NET TCP STREAMS",
        "Mbit/s",
        &NET_TCP_STREAMS,
        0,
    ),
    DiskSync1 => qualify(
        "disk_sync_write_4k_1job",
        "DISK SYNC WRITE 4K 1 JOB",
        "IOPS",
        &DISK_SYNC_1,
        Kind::Sync,
        &[Method::SyncMode],
    ),
    DiskSync5 => qualify(
        "disk_sync_write_4k_5jobs",
        "DISK SYNC WRITE 4K 5 JOBS",
        "IOPS",
        &DISK_SYNC_5,
        Kind::Sync,
        &[Method::SyncMode],
    ),
    DiskSync10 => qualify(
        "disk_sync_write_4k_10jobs",
        "DISK SYNC WRITE 4K 10 JOBS",
        "IOPS",
        &DISK_SYNC_10,
        Kind::Sync,
        &[Method::SyncMode],
    ),
    DiskRandWrite4kQd1 => qualify(
        "disk_rand_write_4k_qd1",
        "DISK RANDOM WRITE 4K QD1",
        "IOPS",
        &DISK_RW1,
        Kind::Io,
        IO_TEST,
    ),
    DiskRandWrite4kQd32 => qualify(
        "disk_rand_write_4k_qd32",
        "DISK RANDOM WRITE 4K QD32",
        "IOPS",
        &DISK_RW32,
        Kind::Io,
        IO_TEST,
    ),
    DiskRandRead4kQd1 => qualify(
        "disk_rand_read_4k_qd1",
        "DISK RANDOM READ 4K QD1",
        "IOPS",
        &DISK_RR1,
        Kind::Io,
        IO_TEST,
    ),
    DiskRandRead4kQd32 => qualify(
        "disk_rand_read_4k_qd32",
        "DISK RANDOM READ 4K QD32",
        "IOPS",
        &DISK_RR32,
        Kind::Io,
        IO_TEST,
    ),
    DiskSeqRead1mQd8 => Spec {
        decimals: 2,
        ..qualify(
            "disk_seq_read_1m_qd8",
            "DISK SEQ READ 1M QD8",
            "MiB/s",
            &DISK_SR,
            Kind::Io,
            IO_TEST,
        )
    },
    DiskSeqWrite1mQd8 => Spec {
        decimals: 2,
        ..qualify(
            "disk_seq_write_1m_qd8",
            "DISK SEQ WRITE 1M QD8",
            "MiB/s",
            &DISK_SW,
            Kind::Io,
            IO_TEST,
        )
    },
    DiskSustained => Spec {
        decimals: 2,
        ..qualify(
            "disk_sustained_write",
            "DISK SUSTAINED WRITE",
            "MiB/s",
            &DISK_SUSTAINED,
            Kind::Sustained,
            &[Method::Sustained],
        )
    },
    GuestSeqRead1mQd8 => guest("guest_seq_read_1m_qd8", "GUEST SEQ READ 1M QD8", "MiB/s", &GUEST_SR),
    GuestSeqWrite1mQd8 => guest("guest_seq_write_1m_qd8", "GUEST SEQ WRITE 1M QD8", "MiB/s", &GUEST_SW),
    GuestRandRead4kQd1 => guest("guest_rand_read_4k_qd1", "GUEST RANDOM READ 4K QD1", "IOPS", &GUEST_RR1),
    GuestRandRead4kQd32 => guest("guest_rand_read_4k_qd32", "GUEST RANDOM READ 4K QD32", "IOPS", &GUEST_RR32),
    GuestRandWrite4kQd1 => guest("guest_rand_write_4k_qd1", "GUEST RANDOM WRITE 4K QD1", "IOPS", &GUEST_RW1),
    GuestRandWrite4kQd32 => guest("guest_rand_write_4k_qd32", "GUEST RANDOM WRITE 4K QD32", "IOPS", &GUEST_RW32),
    GuestSyncWrite4k => guest("guest_sync_write_4k", "GUEST SYNC WRITE 4K", "IOPS", &GUEST_SYNC),
    CephOsdBench4m => ceph("ceph_osd_bench_4m", "CEPH OSD BENCH 4M", "MiB/s", "osd", &CEPH_OSD_4M),
    CephOsdBench4k => ceph("ceph_osd_bench_4k", "CEPH OSD BENCH 4K", "IOPS", "osd", &CEPH_OSD_4K),
    CephRadosWrite4m => ceph("ceph_rados_write_4m", "CEPH RADOS WRITE 4M", "MiB/s", "pool", &CEPH_RW4M),
    CephRadosSeq4m => ceph("ceph_rados_seq_4m", "CEPH RADOS SEQ READ 4M", "MiB/s", "pool", &CEPH_RS4M),
    CephRadosRand4m => ceph("ceph_rados_rand_4m", "CEPH RADOS RAND READ 4M", "MiB/s", "pool", &CEPH_RR4M),
    CephRadosWrite4kT1 => ceph("ceph_rados_write_4k_t1", "CEPH RADOS WRITE 4K 1 THREAD", "IOPS", "pool", &CEPH_RW4K1),
    CephRadosWrite4k => ceph("ceph_rados_write_4k", "CEPH RADOS WRITE 4K", "IOPS", "pool", &CEPH_RW4K),
    CephRbdWrite4k => ceph("ceph_rbd_write_4k", "CEPH RBD RAND WRITE 4K", "IOPS", "pool", &CEPH_RBDW),
    CephRbdRead4k => ceph("ceph_rbd_read_4k", "CEPH RBD RAND READ 4K", "IOPS", "pool", &CEPH_RBDR),
}

impl Figure {
    /// The cluster network's figures (`cluster --net`, `net`), in print order.
    pub const NETWORK: [Figure; 6] = [
        F::NetRtt,
        F::NetJitter,
        F::NetLoss,
        F::NetPathMtu,
        F::NetTcp,
        F::NetTcpStreams,
    ];

    /// PBS's CPU figures, in PBS's order.
    pub const CPU_BENCH: [Figure; 5] = [
        F::Sha256,
        F::ZstdCompress,
        F::ZstdDecompress,
        F::Aes256Gcm,
        F::Verify,
    ];

    /// `qualify`'s figures, in print order.
    pub const QUALIFY: [Figure; 10] = [
        F::DiskSync1,
        F::DiskSync5,
        F::DiskSync10,
        F::DiskRandWrite4kQd1,
        F::DiskRandWrite4kQd32,
        F::DiskRandRead4kQd1,
        F::DiskRandRead4kQd32,
        F::DiskSeqRead1mQd8,
        F::DiskSeqWrite1mQd8,
        F::DiskSustained,
    ];

    /// `guest VMID`'s figures, each the profile's figure of that key
    /// (`guest_` and the profile's key) measured inside the guest.
    pub const GUEST: [Figure; 7] = [
        F::GuestSeqRead1mQd8,
        F::GuestSeqWrite1mQd8,
        F::GuestRandRead4kQd1,
        F::GuestRandRead4kQd32,
        F::GuestRandWrite4kQd1,
        F::GuestRandWrite4kQd32,
        F::GuestSyncWrite4k,
    ];

    /// `ceph`'s figures: each OSD's two benches, then each pool's jobs
    /// (`ceph_` and the job's key).
    pub const CEPH: [Figure; 9] = [
        F::CephOsdBench4m,
        F::CephOsdBench4k,
        F::CephRadosWrite4m,
        F::CephRadosSeq4m,
        F::CephRadosRand4m,
        F::CephRadosWrite4kT1,
        F::CephRadosWrite4k,
        F::CephRbdWrite4k,
        F::CephRbdRead4k,
    ];

    /// pveperf's eight lines, in pveperf's order.
    pub const PVEPERF: [Figure; 8] = [
        F::CpuBogomips,
        F::RegexPerSecond,
        F::HdSize,
        F::BufferedReads,
        F::AverageSeekTime,
        F::FsyncsPerSecond,
        F::DnsExt,
        F::DnsInt,
    ];

    pub fn key(self) -> &'static str {
        self.spec().key
    }

    pub fn label(self) -> &'static str {
        self.spec().label
    }

    pub fn unit(self) -> &'static str {
        self.spec().unit
    }

    pub fn group(self) -> Group {
        self.spec().group
    }

    /// The figure whose JSON key is `key`.
    pub fn from_key(key: &str) -> Option<Figure> {
        Figure::ALL.into_iter().find(|f| f.key() == key)
    }

    /// `-x`'s figures, in print order.
    pub fn extended() -> impl Iterator<Item = Figure> {
        Figure::ALL
            .into_iter()
            .filter(|f| f.group() == Group::Extended)
    }
}

/// Every value of every figure a probe run measures (not the network's
/// or `qualify`'s), in print order: the CSV columns, the cluster table,
/// the metrics.
pub fn values() -> impl Iterator<Item = &'static Value> {
    all_values().filter(|v| matches!(v.figure.group(), Group::Pveperf | Group::Extended))
}

/// Every value of every figure, the network's too: what `compare` ranks.
pub fn all_values() -> impl Iterator<Item = &'static Value> {
    Figure::ALL.into_iter().flat_map(|f| f.spec().values)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn the_table_is_in_print_order_and_its_names_are_unique() {
        for (i, f) in Figure::ALL.into_iter().enumerate() {
            assert_eq!(f as usize, i, "{f:?} is out of place");
            assert_eq!(Figure::from_key(f.key()), Some(f));
            for v in f.spec().values {
                assert_eq!(v.figure, f, "{} belongs to {f:?}", v.column);
            }
            assert_eq!(
                f.spec().values[0].field,
                Field::Value,
                "{f:?}'s first value"
            );
        }
        assert_eq!(&Figure::ALL[..8], &Figure::PVEPERF);
        assert!(Figure::PVEPERF.iter().all(|f| f.group() == Group::Pveperf));
        assert_eq!(Figure::extended().count(), 16);
        assert!(Figure::CPU_BENCH.windows(2).all(|w| w[0] < w[1]));
        let columns: BTreeSet<_> = all_values().map(|v| v.column).collect();
        let keys: BTreeSet<_> = all_values().map(|v| v.key).collect();
        assert_eq!(columns.len(), all_values().count());
        assert_eq!(keys.len(), all_values().count());
        assert!(
            Figure::NETWORK
                .iter()
                .all(|f| f.group() == Group::Network && f.spec().per == Some("link"))
        );
        assert!(values().all(|v| v.figure.group() != Group::Network));
        assert_eq!(
            &Figure::ALL[Figure::ALL.len() - 32..][..6],
            &Figure::NETWORK
        );
        assert_eq!(
            &Figure::ALL[Figure::ALL.len() - 26..][..10],
            &Figure::QUALIFY
        );
        assert!(values().all(|v| v.figure.group() != Group::Qualify));
        assert_eq!(&Figure::ALL[Figure::ALL.len() - 16..][..7], &Figure::GUEST);
        assert!(
            Figure::GUEST
                .iter()
                .all(|f| f.group() == Group::Guest && f.spec().per == Some("disk"))
        );
        assert!(values().all(|v| v.figure.group() != Group::Guest));
        assert_eq!(&Figure::ALL[Figure::ALL.len() - 9..], &Figure::CEPH);
        assert!(
            Figure::CEPH
                .iter()
                .all(|f| f.group() == Group::Ceph && matches!(f.spec().per, Some("osd" | "pool")))
        );
        assert!(values().all(|v| v.figure.group() != Group::Ceph));
        assert_eq!(Figure::from_key("nope"), None);
        assert_eq!(
            Figure::Mixed.spec().values[1].label(),
            "MIXED 70/30 4K QD16 (write)"
        );
    }

    #[test]
    fn runs_make_a_value_and_values_are_shown_with_their_decimals() {
        assert_eq!(Runs::Median.of(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(Runs::Median.of(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(Runs::Mean.of(&[100.0, 200.0, 600.0]), Some(300.0));
        assert_eq!(Runs::Mean.of(&[]), None);
        assert_eq!(Figure::SeqWrite.spec().runs, Runs::Mean);
        assert_eq!(Figure::RegexPerSecond.spec().format(11.5), "12");
        assert_eq!(Figure::AverageSeekTime.spec().format(0.25), "0.250");
        assert_eq!(Figure::FsyncsPerSecond.spec().format(1850.0), "1850.00");
    }

    #[test]
    fn direction_decides_better_and_hd_size_has_none() {
        let fsyncs = &Figure::FsyncsPerSecond.spec().values[0];
        assert_eq!(fsyncs.better_than(2.0, 1.0), Some(true));
        let seek = &Figure::AverageSeekTime.spec().values[0];
        assert_eq!(seek.better_than(2.0, 1.0), Some(false));
        assert_eq!(seek.better_than(1.0, 1.0), None);
        assert_eq!(Figure::HdSize.spec().values[0].better_than(2.0, 1.0), None);
        // Every measured number has a direction; derived ones (a percentage
        // of a band, a count of jobs) and HD SIZE are shown, not ranked.
        let measured = |v: &&Value| {
            matches!(
                v.field,
                Field::Value
                    | Field::WriteIops
                    | Field::P99Ms
                    | Field::ThreadsMbPerS
                    | Field::First10s
                    | Field::Last10s
                    | Field::SlowestSecond
                    | Field::MaxMs
                    | Field::Back
            )
        };
        // A path MTU is the links' setting, not a speed: shown, compared, not ranked.
        for v in all_values()
            .filter(measured)
            .filter(|v| !matches!(v.figure, Figure::HdSize | Figure::NetPathMtu))
        {
            assert!(v.better.is_some(), "{} has no direction", v.column);
        }
    }
}
