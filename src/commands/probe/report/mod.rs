//! What a probe run found, as plain data. The renderers (`text`, `json`,
//! `csv`, `verbose`) read a [`ProbeReport`]; no probe knows how it is shown, and
//! what each figure is (key, label, unit, direction) comes from
//! [`crate::figure`].

pub mod json;

use crate::output::result::Settings;
use crate::output::{csv, metrics};

pub mod text;
pub mod verbose;

use std::path::PathBuf;

use crate::figure::Figure;
use crate::figure::projection::Facts;
use crate::figure::projection::{Context, Project, Projection};
use crate::model::Devices;
use crate::model::blockdev::{ReadFigure, SeekFigure};
use crate::model::cpubench::{CpuBench, CpuOpFigure};
use crate::model::dns::DnsFigure;
use crate::model::filesystem::FsInfo;
use crate::model::fsync::FsyncFigure;
use crate::model::hint::Hint;
use crate::model::host::{Bogomips, HostInfo};
use crate::model::io::{IoStats, MixedFigure, SeqWriteFigure};
use crate::model::pve::PveTarget;
use crate::model::regex::RegexFigure;
use crate::model::storage::Storage;
use crate::model::sustained::SustainedFigure;
use crate::model::sync::{SyncResult, SyncScaling};

/// The result of one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    Measured(T),
    /// Does not apply here, as pveperf would omit it (a source that is not
    /// a block device, no search domain). Not an error.
    Skipped(String),
    /// Applies but could not be measured; the run exits with status 1.
    Failed(String),
}

impl<T> Outcome<T> {
    pub fn measured(&self) -> Option<&T> {
        match self {
            Outcome::Measured(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed(_))
    }
}

impl Outcome<()> {
    /// A figure-less outcome (skipped or failed) for a line of another type.
    pub fn retype<T>(&self) -> Outcome<T> {
        match self {
            Outcome::Measured(()) | Outcome::Skipped(_) => {
                Outcome::Skipped(self.reason().to_string())
            }
            Outcome::Failed(why) => Outcome::Failed(why.clone()),
        }
    }

    /// Why there is no figure (empty for a measured one).
    pub fn reason(&self) -> &str {
        match self {
            Outcome::Measured(()) => "",
            Outcome::Skipped(why) | Outcome::Failed(why) => why,
        }
    }
}

/// What a probe run writes, in every format: the report and its JSON
/// form, made once. Text is pveperf's lines (unless they went to stdout
/// as they were measured) and `-v`'s details; JSON, CSV and the metrics
/// formats (`influx`, `prometheus`) come from the JSON form.
#[derive(Debug)]
pub struct ProbeDocument<'a> {
    pub report: &'a ProbeReport,
    pub json: crate::output::result::JsonReport,
    /// `-v`: the details after the lines.
    pub verbose: bool,
    /// The lines are on stdout already: the text is the rest.
    pub lines_printed: bool,
}

impl<'a> ProbeDocument<'a> {
    pub fn new(report: &'a ProbeReport) -> Self {
        ProbeDocument {
            report,
            json: report.to_json(),
            verbose: false,
            lines_printed: false,
        }
    }
}

impl serde::Serialize for ProbeDocument<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl crate::output::Document for ProbeDocument<'_> {
    const PICTURE: bool = true;

    fn text(&self) -> String {
        let mut out = if self.lines_printed {
            String::new()
        } else {
            text::render(self.report)
        };
        if self.verbose {
            out.push_str(&verbose::render(&self.json));
        }
        out
    }

    fn csv(&self, header: bool) -> String {
        csv::render(&self.json, header)
    }

    fn csv_header() -> Option<Vec<&'static str>> {
        Some(csv::header())
    }

    /// SUSTAINED WRITE's seconds, of a run that measured it and was not
    /// interrupted.
    fn picture(&self) -> Option<Result<String, crate::output::plot::PlotError>> {
        if self.report.interrupted_by.is_some() {
            return None;
        }
        let s = self.report.extended.sustained.as_ref()?.measured()?;
        let title = format!("SUSTAINED WRITE on {}", self.report.path.display());
        Some(crate::output::plot::seconds_svg(&title, s.series()))
    }

    /// The run's result, named by the host it records.
    fn metrics(&self, format: crate::output::Format) -> String {
        metrics::render(format, &[metrics::MetricsSource::of(&self.json)])
    }
}

/// Everything one run measured. `None` marks a line that was not requested
/// (or not reached before an interrupt). Timed tests hold one sample per run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeReport {
    pub path: PathBuf,
    pub cpu_bogomips: Option<Outcome<Bogomips>>,
    pub regex: Option<Outcome<Vec<RegexFigure>>>,
    pub filesystem: Option<Outcome<FsInfo>>,
    pub buffered_reads: Option<Outcome<Vec<Devices<ReadFigure>>>>,
    pub seek: Option<Outcome<Vec<Devices<SeekFigure>>>>,
    pub fsync: Option<Outcome<Vec<FsyncFigure>>>,
    pub dns_ext: Option<Outcome<Vec<DnsFigure>>>,
    pub dns_int: Option<Outcome<Vec<DnsFigure>>>,
    /// Things the admin should know that belong to no single line.
    pub notes: Vec<String>,
    /// How the run was made.
    pub settings: Settings,
    /// When the run started.
    pub started: Option<jiff::Timestamp>,
    /// What was measured: the host's fingerprint.
    pub host: Option<HostInfo>,
    /// What stands behind PATH: layers, disks, controllers, ZFS.
    pub storage: Option<Storage>,
    /// The `-x` figures.
    pub extended: Extended,
    /// The signal that cut the run short, if one did.
    pub interrupted_by: Option<i32>,
    /// What the run made and could not remove, with why.
    pub left_behind: Vec<String>,
    /// How long the run waited for another probe on this host first.
    pub waited_for_probe: Option<crate::model::host::Waited>,
    /// `--storage`: the PVE storage measured, and how.
    pub pve_storage: Option<PveTarget>,
}

/// A run a signal cut short, and the cleanup it did.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {name}; {cleanup}")]
pub struct Interrupted {
    pub signal: i32,
    name: &'static str,
    cleanup: String,
}

impl ProbeReport {
    /// An interrupted run's end, after the cleanup it says.
    pub fn interrupted(&self) -> Result<(), Interrupted> {
        let Some(signal) = self.interrupted_by else {
            return Ok(());
        };
        Err(Interrupted {
            signal,
            name: nix::sys::signal::Signal::try_from(signal)
                .map(|s| s.as_str())
                .unwrap_or("signal"),
            cleanup: self.cleanup(),
        })
    }

    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            ..Self::default()
        }
    }

    /// What was measured for a figure, as its model type shows it: the
    /// one place that knows which field of the report holds which figure.
    /// `None`: not requested (or not reached before an interrupt).
    pub fn outcome(&self, figure: Figure) -> Option<Outcome<&dyn Project>> {
        fn view<T: Project>(o: &Option<Outcome<T>>) -> Option<Outcome<&dyn Project>> {
            Some(match o.as_ref()? {
                Outcome::Measured(m) => Outcome::Measured(m as &dyn Project),
                Outcome::Skipped(why) => Outcome::Skipped(why.clone()),
                Outcome::Failed(why) => Outcome::Failed(why.clone()),
            })
        }
        let x = &self.extended;
        match figure {
            Figure::CpuBogomips => view(&self.cpu_bogomips),
            Figure::RegexPerSecond => view(&self.regex),
            Figure::HdSize => view(&self.filesystem),
            Figure::BufferedReads => view(&self.buffered_reads),
            Figure::AverageSeekTime => view(&self.seek),
            Figure::FsyncsPerSecond => view(&self.fsync),
            Figure::DnsExt => view(&self.dns_ext),
            Figure::DnsInt => view(&self.dns_int),
            Figure::SeqWrite => view(&x.seq_write),
            Figure::SeqReadDirect => view(&x.seq_read),
            Figure::RandRead4kQd1 => view(&x.rand_read_qd1),
            Figure::RandRead4kQd32 => view(&x.rand_read_qd32),
            Figure::RandWrite4kQd1 => view(&x.rand_write_qd1),
            Figure::RandWrite4kQd32 => view(&x.rand_write_qd32),
            Figure::Mixed => view(&x.mixed),
            Figure::SyncWrite4k => view(&x.sync_write),
            Figure::SyncWriteJobs | Figure::SyncWritePeak => view(&x.sync_scaling),
            Figure::Sha256
            | Figure::ZstdCompress
            | Figure::ZstdDecompress
            | Figure::Aes256Gcm
            | Figure::Verify => view(&x.cpu_bench),
            Figure::SustainedWrite => view(&x.sustained),
            // A probe run measures no link: the network's figures are the
            // network report's (net::report).
            Figure::NetRtt
            | Figure::NetJitter
            | Figure::NetLoss
            | Figure::NetPathMtu
            | Figure::NetTcp
            | Figure::NetTcpStreams
            | Figure::NetMigrationSecure => None,
            // Nor a device written in full: those are `qualify`'s (model::qualify).
            Figure::DiskSync1
            | Figure::DiskSync5
            | Figure::DiskSync10
            | Figure::DiskRandWrite4kQd1
            | Figure::DiskRandWrite4kQd32
            | Figure::DiskRandRead4kQd1
            | Figure::DiskRandRead4kQd32
            | Figure::DiskSeqRead1mQd8
            | Figure::DiskSeqWrite1mQd8
            | Figure::DiskSustained => None,
            // Nor a VM's disk from inside: those are `guest`'s (guest::report).
            Figure::GuestSeqRead1mQd8
            | Figure::GuestSeqWrite1mQd8
            | Figure::GuestRandRead4kQd1
            | Figure::GuestRandRead4kQd32
            | Figure::GuestRandWrite4kQd1
            | Figure::GuestRandWrite4kQd32
            | Figure::GuestSyncWrite4k => None,
            // Nor a Ceph cluster: those are `ceph`'s (ceph::report).
            Figure::CephOsdBench4m
            | Figure::CephOsdBench4k
            | Figure::CephRadosWrite4m
            | Figure::CephRadosSeq4m
            | Figure::CephRadosRand4m
            | Figure::CephRadosWrite4kT1
            | Figure::CephRadosWrite4k
            | Figure::CephRbdWrite4k
            | Figure::CephRbdRead4k => None,
            // Nor many guests at once: those are `load`'s (load::report).
            Figure::LoadIops
            | Figure::LoadThroughput
            | Figure::LoadWriteP99
            | Figure::LoadVmFairness
            | Figure::LoadTargetIops => None,
            // Nor a datastore's calls: those are `datastore`'s (datastore::report).
            Figure::DatastoreCreate
            | Figure::DatastoreIngest
            | Figure::DatastoreKnown
            | Figure::DatastoreRestore
            | Figure::DatastoreVerify
            | Figure::DatastoreGcMark
            | Figure::DatastoreGcSweepDirs
            | Figure::DatastoreGcSweep => None,
        }
    }

    /// What the run knows of the projections: the scratch volume, the
    /// devices read in place of the source.
    fn context(&self) -> Context<'_> {
        Context {
            on_volume: self.on_volume(),
            read_devices: self
                .storage
                .as_ref()
                .map_or(&[][..], |s| s.read_devices.as_slice()),
            storage: self.storage.as_ref(),
        }
    }

    /// Adds the hints only a measured run gives: a read that reached its
    /// interface's ceiling (`interface-bound`), a disk that throttled
    /// between the first timed test and the last (`throttled`, whose
    /// sentences are returned: the run notes them too).
    pub fn add_measured_hints(&mut self) -> Vec<String> {
        let mut found = Vec::new();
        for figure in [Figure::BufferedReads, Figure::SeqReadDirect] {
            let Some(p) = self.projection(figure) else {
                continue;
            };
            for entry in &p.entries {
                let share = match &entry.facts {
                    Facts::Device(f) => f.interface.as_ref(),
                    Facts::Io(f) => f.interface.as_ref(),
                    _ => None,
                };
                if let Some(s) = share.filter(|s| s.bound()) {
                    found.push(Hint::new(
                        "interface-bound",
                        &s.disk,
                        format!(
                            "{} reached {:.0}% of what its {} carries ({:.0} MB/s): the interface, not the \
                             disk, set the figure; the disk may be faster on a faster link",
                            figure.label(),
                            s.share * 100.0,
                            s.link,
                            s.ceiling_mb_s
                        ),
                    ));
                }
            }
        }
        let throttled: Vec<Hint> = self
            .storage
            .iter()
            .flat_map(|s| &s.disks)
            .filter_map(|d| {
                let heat = d.heat.as_ref()?;
                let moved = heat.throttling();
                if moved.is_empty() {
                    return None;
                }
                let temps = match (heat.before.temperature_c, heat.after.temperature_c) {
                    (Some(a), Some(b)) => format!(", {a:.0} -> {b:.0} °C"),
                    _ => String::new(),
                };
                Some(Hint::new(
                    "throttled",
                    &d.name,
                    format!(
                        "throttled during the run ({}{temps}): the figures measured on it are below the disk's \
                         cool speed; cool it (airflow, a heatsink) and measure again",
                        moved.join(", ")
                    ),
                ))
            })
            .collect();
        let notes = throttled.iter().map(Hint::sentence).collect();
        found.extend(throttled);
        if let Some(storage) = &mut self.storage {
            storage.hints.extend(found);
        }
        notes
    }

    /// A measured figure's projection; `None` when it was not measured.
    pub fn projection(&self, figure: Figure) -> Option<Projection> {
        match self.outcome(figure)? {
            Outcome::Measured(m) => Some(m.project(figure, &self.context())),
            _ => None,
        }
    }

    /// The reason a figure is missing, with whether that is a failure.
    pub fn problem(&self, figure: Figure) -> Option<(bool, String)> {
        match self.outcome(figure)? {
            Outcome::Failed(why) => Some((true, why)),
            Outcome::Skipped(why) => Some((false, why)),
            Outcome::Measured(m) => m
                .project(figure, &self.context())
                .failed
                .map(|why| (true, why)),
        }
    }

    /// The DNS runs of a DNS line.
    pub fn dns(&self, line: Figure) -> Option<&[DnsFigure]> {
        let outcome = match line {
            Figure::DnsExt => &self.dns_ext,
            Figure::DnsInt => &self.dns_int,
            _ => return None,
        };
        outcome
            .as_ref()
            .and_then(Outcome::measured)
            .map(Vec::as_slice)
    }

    /// True when no run of a DNS line got any answer: it has no figure.
    pub fn dns_dead(&self, line: Figure) -> bool {
        self.dns(line)
            .is_some_and(crate::figure::projection::dns::dead)
    }

    /// True when the run measured a `--storage` scratch volume's device.
    pub fn on_volume(&self) -> bool {
        self.filesystem
            .as_ref()
            .and_then(Outcome::measured)
            .is_some_and(|f| f.fstype == crate::model::filesystem::VOLUME)
    }

    /// How an interrupted run ends its message: the files were removed, or
    /// what is left and where.
    pub fn cleanup(&self) -> String {
        if self.left_behind.is_empty() {
            "stopped and removed the files it made".into()
        } else {
            format!(
                "stopped, but could not remove: {}",
                self.left_behind.join("; ")
            )
        }
    }

    /// True when a requested figure that applies could not be measured.
    pub fn any_failed(&self) -> bool {
        Figure::ALL
            .iter()
            .any(|f| self.problem(*f).is_some_and(|(failed, _)| failed))
    }
}

/// The `-x` figures. `None` marks a figure that was not requested.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extended {
    pub seq_write: Option<Outcome<Vec<SeqWriteFigure>>>,
    pub seq_read: Option<Outcome<Devices<IoStats>>>,
    pub rand_read_qd1: Option<Outcome<Devices<IoStats>>>,
    pub rand_read_qd32: Option<Outcome<Devices<IoStats>>>,
    /// RANDOM WRITE 4K QD1 and QD32: on a scratch volume's device, or on
    /// a file in PATH (one "device", not named).
    pub rand_write_qd1: Option<Outcome<Devices<IoStats>>>,
    pub rand_write_qd32: Option<Outcome<Devices<IoStats>>>,
    pub mixed: Option<Outcome<MixedFigure>>,
    /// SYNC WRITE 4K, one job, judged.
    pub sync_write: Option<Outcome<SyncResult>>,
    /// `--sync-jobs`: SYNC WRITE 4K JOBS and PEAK.
    pub sync_scaling: Option<Outcome<SyncScaling>>,
    /// PBS's CPU figures (SHA256 to VERIFY).
    pub cpu_bench: Option<Outcome<CpuBench>>,
    /// `--sustained`: SUSTAINED WRITE.
    pub sustained: Option<Outcome<SustainedFigure>>,
}

impl Extended {
    /// A CPU figure, where it was measured.
    pub fn cpu(&self, figure: Figure) -> Option<&CpuOpFigure> {
        self.cpu_bench
            .as_ref()?
            .measured()?
            .get(crate::figure::projection::cpu::op(figure)?)
    }

    /// `--sync-jobs`'s steps, where they were measured.
    pub fn scaling(&self) -> Option<&SyncScaling> {
        self.sync_scaling.as_ref()?.measured()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::text::tests::{dns, stats};
    use super::*;
    use crate::model::cpubench::CpuOp;
    use crate::model::io::Engine;
    use crate::model::latency::Latency;

    #[test]
    fn cpu_figures_and_pbs_operations_are_in_the_same_order() {
        let squash = |s: &str| s.replace('_', "");
        for (f, op) in Figure::CPU_BENCH.into_iter().zip(CpuOp::ALL) {
            assert!(
                squash(f.key()).ends_with(&squash(op.pbs_key())),
                "{f:?} {op:?}"
            );
        }
    }

    /// BUFFERED READS at 94% of its one disk's SATA 3.0 Gb/s link: its
    /// facts and `-v` say so, and the run's hints gain `interface-bound`;
    /// on a 6.0 Gb/s link the same figure is 47% and gets no hint.
    #[test]
    fn a_read_at_its_links_ceiling_is_interface_bound() {
        use crate::model::storage::{Disk, Link};
        let with_link = |gbps: f64| {
            let mut r = super::text::tests::full_report();
            let disk = Disk {
                name: "sda".into(),
                links: vec![Link {
                    kind: "SATA".into(),
                    at: "ata1".into(),
                    current: format!("{gbps:.1} Gb/s"),
                    ceiling_mb_s: gbps * 100.0,
                    capable: None,
                    capable_mb_s: None,
                    capable_by: None,
                }],
                ..Disk::default()
            };
            r.storage = Some(Storage {
                disks: vec![disk],
                ..Storage::default()
            });
            r.buffered_reads = Some(Outcome::Measured(vec![crate::model::Devices {
                each: vec![crate::model::blockdev::ReadFigure {
                    device: "/dev/sda".into(),
                    bytes: 3 * (270 << 20),
                    elapsed: Duration::from_secs(3),
                    reached_end: false,
                }],
                named: false,
            }]));
            r.add_measured_hints();
            r
        };
        let slow = with_link(3.0);
        let p = slow.projection(Figure::BufferedReads).unwrap();
        let Facts::Device(f) = &p.entries[0].facts else {
            panic!("BUFFERED READS has device facts");
        };
        let share = f.interface.as_ref().unwrap();
        assert!((share.share - 0.944).abs() < 0.001, "{share:?}");
        let hints = &slow.storage.as_ref().unwrap().hints;
        assert_eq!(hints.len(), 1, "{hints:?}");
        assert_eq!(hints[0].code, "interface-bound");
        assert!(
            hints[0]
                .sentence()
                .starts_with("sda: BUFFERED READS reached 94% of what its SATA 3.0 Gb/s link")
        );
        let json = serde_json::to_value(&slow.storage).unwrap();
        assert_eq!(json["hints"][0]["code"], "interface-bound");
        assert_eq!(json["hints"][0]["subject"], "sda");
        let fast = with_link(6.0);
        assert!(fast.storage.as_ref().unwrap().hints.is_empty());
    }

    /// The text, with `-v`'s details, of the known-numbers report, pinned.
    #[test]
    fn text_of_known_numbers_is_pinned() {
        use crate::output::Document;
        let report = crate::commands::probe::report::json::tests::known_report();
        let mut doc = crate::commands::probe::report::ProbeDocument::new(&report);
        doc.verbose = true;
        crate::model::testutil::assert_snapshot("report.txt", &doc.text());
        let diagnostics: Vec<String> = Figure::ALL
            .iter()
            .filter_map(|f| text::diagnostic(&report, *f))
            .collect();
        crate::model::testutil::assert_snapshot("report.stderr", &diagnostics.join("\n"));
    }

    /// A report of the device lines: two named leaf disks (one read to its
    /// end), seek latencies, the random writes, a psync fallback, a dead
    /// DNS server, on a scratch volume; all its outputs pinned.
    #[test]
    fn outputs_of_a_device_report_are_pinned() {
        use crate::output::{Document, Format};
        let mut r = crate::commands::probe::report::json::tests::known_report();
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
        let mut doc = crate::commands::probe::report::ProbeDocument::new(&r);
        doc.verbose = true;
        crate::model::testutil::assert_snapshot("devices.txt", &doc.text());
        crate::model::testutil::assert_snapshot("devices.json", &crate::output::json(&doc, true));
        crate::model::testutil::assert_snapshot("devices.csv", &doc.csv(true));
        crate::model::testutil::assert_snapshot("devices.prom", &doc.metrics(Format::Prometheus));
        crate::model::testutil::assert_snapshot("devices.influx", &doc.metrics(Format::Influx));
        let diagnostics: Vec<String> = Figure::ALL
            .iter()
            .filter_map(|f| text::diagnostic(&r, *f))
            .collect();
        crate::model::testutil::assert_snapshot("devices.stderr", &diagnostics.join("\n"));
    }
}
