//! What a figure is: its group, its values (each with its key, CSV
//! column, unit, direction and aggregate), how many runs it keeps, and
//! the settings that change what it means ([`Spec`]).

use serde::{Deserialize, Serialize};

use super::Figure;

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
    /// `load`'s: the cluster under many worker VMs at once, per phase, in
    /// the load document; no probe run has them.
    Load,
    /// `datastore`'s: PBS's calls replayed on a datastore's storage, in
    /// the datastore document; no probe run has them.
    Datastore,
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
    /// The figure's `workload` (`load`): the job every worker ran (block
    /// size, mix, random share, workers and depth).
    Workload,
    /// The figure's `clients` (`ceph`): a pool job from this node alone or
    /// from several nodes at once (`--clients`), and which.
    Clients,
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
            Method::Workload => "workload",
            Method::Clients => "clients",
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
    /// A `load` figure: the workload, the read latency.
    Load,
    /// A `ceph` figure: the nodes a pool job ran from.
    Ceph,
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
