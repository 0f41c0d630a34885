//! The values of the other commands' figures: the cluster network's (per
//! link and pair), `qualify`'s disk figures, `guest`'s and `ceph`'s, and
//! the constructors of their specs.

use super::super::Figure;
use super::super::spec::{Aggregate, Better, Field, Group, Kind, Method, Runs, Spec, Value};
use super::probe::*;
use Aggregate::{Max, Sum};
use Better::{Higher, Lower};
use Figure as F;
use Group::{Ceph, Guest, Network, Qualify};

/// A network figure's value measured each way: the forward one (the
/// figure's `value`, from the node measuring) and the one back.
pub(in crate::figure) const fn each_way(
    figure: Figure,
    key: &'static str,
    column: &'static str,
    short: (&'static str, &'static str),
    better: Option<Better>,
) -> [Value; 2] {
    let back_key = match figure {
        F::NetPathMtu => "net_path_mtu_back",
        F::NetTcp => "net_tcp_back",
        F::NetMigrationSecure => "net_migration_secure_back",
        _ => "net_tcp_streams_back",
    };
    let back_column = match figure {
        F::NetPathMtu => "net_path_mtu_back_bytes",
        F::NetTcp => "net_tcp_back_mbit_per_s",
        F::NetMigrationSecure => "net_migration_secure_back_mib_per_s",
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

pub(in crate::figure) const NET_RTT: [Value; 3] = [
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
pub(in crate::figure) const NET_JITTER: [Value; 1] = [main(
    F::NetJitter,
    "net_jitter",
    "net_jitter_ms",
    ("JITTER", "ms"),
    Some(Lower),
    Some(Max),
)];
pub(in crate::figure) const NET_LOSS: [Value; 1] = [main(
    F::NetLoss,
    "net_loss",
    "net_loss_percent",
    ("LOSS", "%"),
    Some(Lower),
    Some(Max),
)];
pub(in crate::figure) const NET_MTU: [Value; 2] = each_way(
    F::NetPathMtu,
    "net_path_mtu",
    "net_path_mtu_bytes",
    ("PATH MTU", "bytes"),
    None,
);
pub(in crate::figure) const NET_TCP: [Value; 2] = each_way(
    F::NetTcp,
    "net_tcp",
    "net_tcp_mbit_per_s",
    ("TCP 1", "Mbit/s"),
    Some(Higher),
);
pub(in crate::figure) const NET_MIGRATION_SECURE: [Value; 2] = each_way(
    F::NetMigrationSecure,
    "net_migration_secure",
    "net_migration_secure_mib_per_s",
    ("SECURE", "MiB/s"),
    Some(Higher),
);
pub(in crate::figure) const NET_TCP_STREAMS: [Value; 2] = each_way(
    F::NetTcpStreams,
    "net_tcp_streams",
    "net_tcp_streams_mbit_per_s",
    ("TCP N", "Mbit/s"),
    Some(Higher),
);

/// The settings that change a CPU figure: its windows scale with
/// `--duration`, and `--cpu-threads` decides the threads' values.
pub(in crate::figure) const CPU_TEST: &[Method] = &[Method::Window, Method::CpuThreads];

/// The settings that change an I/O test's figure.
pub(in crate::figure) const IO_TEST: &[Method] = &[Method::Window, Method::IoEngine];
pub(in crate::figure) const RANDOM_WRITE: &[Method] =
    &[Method::Window, Method::IoEngine, Method::WriteBlocks];

pub(in crate::figure) const fn spec(
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
pub(in crate::figure) const fn disk(
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

pub(in crate::figure) const DISK_SYNC_1: [Value; 4] = {
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
pub(in crate::figure) const DISK_SYNC_5: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_SYNC_10: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_RW1: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_RW32: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_RR1: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_RR32: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_SR: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_SW: [Value; 3] = disk(
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
pub(in crate::figure) const DISK_SUSTAINED: [Value; 4] = [
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
pub(in crate::figure) const fn qualify(
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
pub(in crate::figure) const fn guest(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    values: &'static [Value],
) -> Spec {
    per_subject(key, label, unit, Guest, "disk", values)
}

/// A figure measured once per subject (a VM disk, an OSD, a pool), in
/// whole units.
pub(in crate::figure) const fn per_subject(
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
pub(in crate::figure) const fn one_value(
    figure: Figure,
    key: &'static str,
    column: &'static str,
    short: &'static str,
    unit: &'static str,
) -> [Value; 1] {
    [main(figure, key, column, (short, unit), Some(Higher), None)]
}

pub(in crate::figure) const GUEST_SR: [Value; 1] = one_value(
    F::GuestSeqRead1mQd8,
    "guest_seq_read_1m_qd8",
    "guest_seq_read_1m_qd8_mib_per_s",
    "GUEST SEQ R",
    "MB/s",
);
pub(in crate::figure) const GUEST_SW: [Value; 1] = one_value(
    F::GuestSeqWrite1mQd8,
    "guest_seq_write_1m_qd8",
    "guest_seq_write_1m_qd8_mib_per_s",
    "GUEST SEQ W",
    "MB/s",
);
pub(in crate::figure) const GUEST_RR1: [Value; 1] = one_value(
    F::GuestRandRead4kQd1,
    "guest_rand_read_4k_qd1",
    "guest_rand_read_4k_qd1_iops",
    "GUEST R QD1",
    "IOPS",
);
pub(in crate::figure) const GUEST_RR32: [Value; 1] = one_value(
    F::GuestRandRead4kQd32,
    "guest_rand_read_4k_qd32",
    "guest_rand_read_4k_qd32_iops",
    "GUEST R QD32",
    "IOPS",
);
pub(in crate::figure) const GUEST_RW1: [Value; 1] = one_value(
    F::GuestRandWrite4kQd1,
    "guest_rand_write_4k_qd1",
    "guest_rand_write_4k_qd1_iops",
    "GUEST W QD1",
    "IOPS",
);
pub(in crate::figure) const GUEST_RW32: [Value; 1] = one_value(
    F::GuestRandWrite4kQd32,
    "guest_rand_write_4k_qd32",
    "guest_rand_write_4k_qd32_iops",
    "GUEST W QD32",
    "IOPS",
);
pub(in crate::figure) const GUEST_SYNC: [Value; 1] = one_value(
    F::GuestSyncWrite4k,
    "guest_sync_write_4k",
    "guest_sync_write_4k_iops",
    "GUEST SYNC",
    "IOPS",
);

/// A `ceph` figure: per OSD (`osd.3`) or per pool, by Ceph's own tools.
pub(in crate::figure) const fn ceph(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    per: &'static str,
    values: &'static [Value],
) -> Spec {
    Spec {
        facts: Kind::Ceph,
        methods: &[Method::Clients],
        ..per_subject(key, label, unit, Ceph, per, values)
    }
}

pub(in crate::figure) const CEPH_OSD_4M: [Value; 1] = one_value(
    F::CephOsdBench4m,
    "ceph_osd_bench_4m",
    "ceph_osd_bench_4m_mib_per_s",
    "OSD BENCH",
    "MB/s",
);
pub(in crate::figure) const CEPH_OSD_4K: [Value; 1] = one_value(
    F::CephOsdBench4k,
    "ceph_osd_bench_4k",
    "ceph_osd_bench_4k_iops",
    "OSD BENCH 4K",
    "IOPS",
);
pub(in crate::figure) const CEPH_RW4M: [Value; 1] = one_value(
    F::CephRadosWrite4m,
    "ceph_rados_write_4m",
    "ceph_rados_write_4m_mib_per_s",
    "RADOS W 4M",
    "MB/s",
);
pub(in crate::figure) const CEPH_RS4M: [Value; 1] = one_value(
    F::CephRadosSeq4m,
    "ceph_rados_seq_4m",
    "ceph_rados_seq_4m_mib_per_s",
    "RADOS SEQ 4M",
    "MB/s",
);
pub(in crate::figure) const CEPH_RR4M: [Value; 1] = one_value(
    F::CephRadosRand4m,
    "ceph_rados_rand_4m",
    "ceph_rados_rand_4m_mib_per_s",
    "RADOS RAND 4M",
    "MB/s",
);
pub(in crate::figure) const CEPH_RW4K1: [Value; 1] = one_value(
    F::CephRadosWrite4kT1,
    "ceph_rados_write_4k_t1",
    "ceph_rados_write_4k_t1_iops",
    "RADOS W 4K T1",
    "IOPS",
);
pub(in crate::figure) const CEPH_RW4K: [Value; 1] = one_value(
    F::CephRadosWrite4k,
    "ceph_rados_write_4k",
    "ceph_rados_write_4k_iops",
    "RADOS W 4K",
    "IOPS",
);
pub(in crate::figure) const CEPH_RBDW: [Value; 1] = one_value(
    F::CephRbdWrite4k,
    "ceph_rbd_write_4k",
    "ceph_rbd_write_4k_iops",
    "RBD W 4K",
    "IOPS",
);
pub(in crate::figure) const CEPH_RBDR: [Value; 1] = one_value(
    F::CephRbdRead4k,
    "ceph_rbd_read_4k",
    "ceph_rbd_read_4k_iops",
    "RBD R 4K",
    "IOPS",
);

/// A network figure: per link and pair of nodes, the median of none
/// (one measurement each), `--net-count` and `--net-rate` shape the
/// round trips, `--net-seconds` and `--net-streams` the throughput.
pub(in crate::figure) const fn net(
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
