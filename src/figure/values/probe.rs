//! The values of the probe's figures: pveperf's eight lines, `-x`'s I/O,
//! sync and sustained figures, and the CPU figures of
//! proxmox-backup-client's benchmark.

use super::super::Figure;
use super::super::spec::{Aggregate, Better, Field, Value};
use Aggregate::{Max, Sum};
use Better::{Higher, Lower};
use Figure as F;

/// A value that is a figure's `value`.
pub(in crate::figure) const fn main(
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

pub(in crate::figure) const CPU_BOGOMIPS: [Value; 1] = [main(
    F::CpuBogomips,
    "cpu_bogomips",
    "cpu_bogomips",
    ("BOGOMIPS", ""),
    Some(Higher),
    None,
)];
pub(in crate::figure) const REGEX: [Value; 1] = [main(
    F::RegexPerSecond,
    "regex_per_second",
    "regex_iterations_per_3s",
    ("REGEX", "per 3 s"),
    Some(Higher),
    None,
)];
pub(in crate::figure) const HD_SIZE: [Value; 1] = [main(
    F::HdSize,
    "hd_size",
    "hd_size_gib",
    ("HD SIZE", "GiB"),
    None,
    None,
)];
pub(in crate::figure) const READS: [Value; 1] = [main(
    F::BufferedReads,
    "buffered_reads",
    "buffered_reads_mib_per_s",
    ("READS", "MB/s"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const SEEK: [Value; 1] = [main(
    F::AverageSeekTime,
    "average_seek_time",
    "average_seek_time_ms",
    ("SEEK", "ms"),
    Some(Lower),
    Some(Max),
)];
pub(in crate::figure) const FSYNCS: [Value; 1] = [main(
    F::FsyncsPerSecond,
    "fsyncs_per_second",
    "fsyncs_per_s",
    ("FSYNCS", "per s"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const DNS_EXT: [Value; 1] = [main(
    F::DnsExt,
    "dns_ext",
    "dns_ext_ms",
    ("DNS EXT", "ms"),
    Some(Lower),
    Some(Max),
)];
pub(in crate::figure) const DNS_INT: [Value; 2] = [
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
pub(in crate::figure) const SEQ_WRITE: [Value; 1] = [main(
    F::SeqWrite,
    "seq_write",
    "seq_write_mib_per_s",
    ("SEQ WRITE", "MB/s"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const SEQ_READ: [Value; 1] = [main(
    F::SeqReadDirect,
    "seq_read_direct",
    "seq_read_direct_mib_per_s",
    ("SEQ READ", "MB/s"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const QD1: [Value; 1] = [main(
    F::RandRead4kQd1,
    "rand_read_4k_qd1",
    "rand_read_4k_qd1_iops",
    ("4K QD1", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const QD32: [Value; 1] = [main(
    F::RandRead4kQd32,
    "rand_read_4k_qd32",
    "rand_read_4k_qd32_iops",
    ("4K QD32", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const WQD1: [Value; 1] = [main(
    F::RandWrite4kQd1,
    "rand_write_4k_qd1",
    "rand_write_4k_qd1_iops",
    ("W 4K QD1", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const WQD32: [Value; 1] = [main(
    F::RandWrite4kQd32,
    "rand_write_4k_qd32",
    "rand_write_4k_qd32_iops",
    ("W 4K QD32", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const MIXED: [Value; 2] = [
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
pub(in crate::figure) const fn more(
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

pub(in crate::figure) const SYNC_WRITE: [Value; 4] = [
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
pub(in crate::figure) const SYNC_JOBS: [Value; 1] = [main(
    F::SyncWriteJobs,
    "sync_write_4k_jobs",
    "sync_write_4k_jobs_iops",
    ("SYNC JOBS", "IOPS"),
    Some(Higher),
    Some(Sum),
)];
pub(in crate::figure) const SYNC_PEAK: [Value; 3] = [
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

pub(in crate::figure) const SUSTAINED: [Value; 4] = [
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
pub(in crate::figure) const fn cpu(
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

pub(in crate::figure) const SHA256: [Value; 4] = cpu_values!(F::Sha256, "sha256", "SHA256");
pub(in crate::figure) const COMPRESS: [Value; 4] =
    cpu_values!(F::ZstdCompress, "zstd_compress", "COMPRESS");
pub(in crate::figure) const DECOMPRESS: [Value; 4] =
    cpu_values!(F::ZstdDecompress, "zstd_decompress", "DECOMPR");
pub(in crate::figure) const AES: [Value; 4] = cpu_values!(F::Aes256Gcm, "aes_256_gcm", "AES-GCM");
pub(in crate::figure) const VERIFY: [Value; 4] = cpu_values!(F::Verify, "verify", "VERIFY");
