//! The list of figures, in print order, each with its spec: the one
//! place a figure is declared ([`crate::figure::Figure`] comes from it),
//! and what the list answers (the network's figures, the probe's values).

use super::spec::{Group, Kind, Method, Runs, Spec, Value};
use super::values::datastore::*;
use super::values::load::*;
use super::values::others::*;
use super::values::probe::*;
use Figure as F;
use Group::{Extended, Pveperf};

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
    NetMigrationSecure => net(
        "net_migration_secure",
        "NET MIGRATION SECURE",
        "MiB/s",
        &NET_MIGRATION_SECURE,
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
    LoadIops => load("load_iops", "LOAD IOPS", "IOPS", "phase", &LOAD_IOPS, 0),
    LoadThroughput => load("load_throughput", "LOAD THROUGHPUT", "MiB/s", "phase", &LOAD_MIB_S, 1),
    LoadWriteP99 => load("load_write_p99", "LOAD WRITE P99", "ms", "phase", &LOAD_WRITE_P99, 3),
    LoadVmFairness => load("load_vm_fairness", "LOAD VM FAIRNESS", "share", "phase", &LOAD_FAIRNESS, 2),
    LoadTargetIops => load("load_target_iops", "LOAD IOPS WITHIN TARGET", "IOPS", "target", &LOAD_TARGET, 0),
    DatastoreCreate => datastore("datastore_create", "DATASTORE CREATE", "dirs/s", "run", &DS_CREATE),
    DatastoreIngest => datastore("datastore_ingest", "DATASTORE INGEST", "MiB/s", "sync_level", &DS_INGEST),
    DatastoreKnown => datastore("datastore_known", "DATASTORE KNOWN CHUNK", "chunks/s", "run", &DS_KNOWN),
    DatastoreRestore => datastore("datastore_restore", "DATASTORE RESTORE", "MiB/s", "in_flight", &DS_RESTORE),
    DatastoreVerify => datastore("datastore_verify", "DATASTORE VERIFY", "MiB/s", "readers", &DS_VERIFY),
    DatastoreGcMark => datastore("datastore_gc_mark", "DATASTORE GC MARK", "chunks/s", "run", &DS_MARK),
    DatastoreGcSweepDirs => datastore("datastore_gc_sweep_dirs", "DATASTORE GC SWEEP DIRS", "dirs/s", "run", &DS_SWEEP_DIRS),
    DatastoreGcSweep => datastore("datastore_gc_sweep", "DATASTORE GC SWEEP", "chunks/s", "run", &DS_SWEEP),
}

impl Figure {
    /// The cluster network's figures (`cluster --net`, `net`), in print order.
    pub const NETWORK: [Figure; 7] = [
        F::NetRtt,
        F::NetJitter,
        F::NetLoss,
        F::NetPathMtu,
        F::NetTcp,
        F::NetTcpStreams,
        F::NetMigrationSecure,
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

    /// `load`'s figures: each phase's totals, then the best within a
    /// latency target.
    pub const LOAD: [Figure; 5] = [
        F::LoadIops,
        F::LoadThroughput,
        F::LoadWriteP99,
        F::LoadVmFairness,
        F::LoadTargetIops,
    ];

    /// `datastore`'s figures, in print order.
    pub const DATASTORE: [Figure; 8] = [
        F::DatastoreCreate,
        F::DatastoreIngest,
        F::DatastoreKnown,
        F::DatastoreRestore,
        F::DatastoreVerify,
        F::DatastoreGcMark,
        F::DatastoreGcSweepDirs,
        F::DatastoreGcSweep,
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
