//! The probe's report made into its JSON document,
//! [`crate::output::result::JsonReport`]: one entry per figure, projected
//! once, with why a line has none.

use super::{Outcome, ProbeReport};
use crate::figure::Figure;
use crate::figure::Group;
use crate::output::result::{
    Figures, JsonFigure, JsonFilesystem, JsonReport, NotMeasured, SCHEMA_VERSION, XFigure,
};

impl ProbeReport {
    /// The run as its JSON document.
    pub fn to_json(&self) -> JsonReport {
        let report = self;
        let mut figures = Figures::default();
        let mut not_measured = Vec::new();
        let mut extended = Vec::new();
        for line in Figure::ALL {
            // Projected once: a measured figure's problem is its
            // projection's (a dead DNS line), another's its outcome's.
            let (entries, problem) = match report.projection(line) {
                Some(p) => (p.entries, p.failed.map(|why| (true, why))),
                None => (Vec::new(), report.problem(line)),
            };
            if line.group() == Group::Pveperf {
                figures.set(
                    line,
                    entries
                        .into_iter()
                        .next()
                        .and_then(|e| JsonFigure::of(line, e)),
                );
            } else {
                extended.extend(entries.into_iter().map(|e| XFigure::of(line, e)));
            }
            if let Some((failed, reason)) = problem {
                not_measured.push(NotMeasured {
                    key: line.key().to_string(),
                    label: line.label().to_string(),
                    failed,
                    reason,
                });
            }
        }
        JsonReport {
            schema_version: SCHEMA_VERSION,
            pveprobe_version: env!("CARGO_PKG_VERSION").to_string(),
            timestamp: report
                .started
                .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string()),
            path: report.path.display().to_string(),
            settings: report.settings.clone(),
            host: report.host.clone().unwrap_or_default(),
            filesystem: report
                .filesystem
                .as_ref()
                .and_then(Outcome::measured)
                .map(|fs| JsonFilesystem {
                    source: fs.source.clone(),
                    fstype: fs.fstype.clone(),
                    mount_point: fs.mount_point.display().to_string(),
                    size_bytes: fs.total_bytes,
                    available_bytes: fs.avail_bytes,
                    read_only: fs.read_only,
                    options: fs.options.clone(),
                }),
            figures,
            storage: report.storage.clone(),
            extended,
            not_measured,
            notes: report.notes.clone(),
            interrupted_by_signal: report.interrupted_by,
            left_behind: report.left_behind.clone(),
            waited_for_probe: report.waited_for_probe.clone(),
            pve_storage: report.pve_storage.clone(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::commands::probe::report::text::tests::{fsync, full_report};
    use crate::model::host::HostInfo;
    use crate::model::latency::Latency;
    use crate::output::result::Settings;

    /// The known-numbers report with a fixed time, host and settings.
    pub(crate) fn known_report() -> ProbeReport {
        let mut r = full_report();
        r.started = Some("2026-11-29T12:00:00Z".parse().unwrap());
        r.settings = Settings {
            duration_s: 3.0,
            runs: 3,
            regex_engine: "perl".into(),
            dns_timeout_s: 2.0,
            fsync_order: "pveperf".into(),
            dns_schedule: "bounded".into(),
        };
        r.host = Some(HostInfo {
            hostname: Some("pve1".into()),
            cpu_model: Some("AMD EPYC 9754 128-Core Processor".into()),
            sockets: Some(1),
            cores: Some(128),
            threads: Some(256),
            memory_bytes: Some(1 << 40),
            kernel: Some("6.8.12-4-pve".into()),
            os_release: Some("Debian GNU/Linux 12 (bookworm)".into()),
            pve_manager: Some("8.3.1".into()),
            cpu_crypto_flags: vec!["aes".into(), "sha_ni".into(), "vaes".into()],
            cpu_governor: Some("performance".into()),
        });
        let mut latency = Latency::default();
        for us in [400u64, 500, 600, 700, 5000] {
            latency.record(Duration::from_micros(us));
        }
        let mut runs = vec![fsync(400), fsync(440), fsync(420)];
        runs[0].latency = Some(latency);
        r.fsync = Some(Outcome::Measured(runs));
        r.seek = Some(Outcome::Skipped(
            "rpool/data (zfs) is not a block device".into(),
        ));
        r.buffered_reads = Some(Outcome::Skipped(
            "rpool/data (zfs) is not a block device".into(),
        ));
        r.notes.push(
            "page cache not dropped (not root): disk figures may come partly from memory".into(),
        );
        // The extended figures, with known numbers.
        known_io(&mut r.extended);
        known_sync_and_more(&mut r.extended);
        r
    }

    /// SEQ WRITE, the device tests and MIXED, with known numbers.
    fn known_io(x: &mut crate::commands::probe::report::Extended) {
        use crate::model::io::IoStats;
        use crate::model::latency::Latency;
        let io = |reads: u64, writes: u64, block: usize, depth: usize| {
            let mut read_latency = Latency::default();
            let mut write_latency = Latency::default();
            for us in [80u64, 100, 120, 400] {
                read_latency.record(Duration::from_micros(us));
                if writes > 0 {
                    write_latency.record(Duration::from_micros(us * 2));
                }
            }
            crate::model::testutil::io_stats(
                (reads, writes),
                (block, depth),
                read_latency,
                write_latency,
            )
        };
        let w = |mib: u64| crate::model::io::SeqWriteFigure {
            bytes: mib << 20,
            elapsed: Duration::from_secs(1),
            zero_data: false,
        };
        let one = |s: IoStats| {
            Outcome::Measured(crate::model::Devices {
                each: vec![s],
                named: false,
            })
        };
        x.seq_write = Some(Outcome::Measured(vec![w(400), w(420), w(380)]));
        x.seq_read = Some(one(io(1000, 0, 1 << 20, 8)));
        x.rand_read_qd1 = Some(one(io(20_000, 0, 4096, 1)));
        x.rand_read_qd32 = Some(one(io(160_000, 0, 4096, 32)));
        x.mixed = Some(Outcome::Measured(crate::model::io::MixedFigure {
            stats: io(14_000, 6_000, 4096, 16),
            direct: true,
            file_bytes: 1 << 30,
        }));
    }

    /// SYNC WRITE 4K and its scaling, SUSTAINED WRITE and PBS's CPU
    /// figures, with known numbers.
    fn known_sync_and_more(x: &mut crate::commands::probe::report::Extended) {
        use crate::model::latency::Latency;
        use crate::model::sync::{
            FlushVerdict, SyncMode, SyncResult, SyncScaling, SyncWriteFigure, VerdictKind,
        };
        let sync = |jobs: u32, writes: u64| {
            let mut latency = Latency::default();
            for us in [300u64, 350, 400, 2500] {
                latency.record(Duration::from_micros(us));
            }
            SyncWriteFigure {
                jobs,
                mode: SyncMode::Fdatasync,
                file_bytes: 64 << 20,
                writes,
                elapsed: Duration::from_secs(3),
                latency,
                cpu: Duration::from_millis(writes / 50),
            }
        };
        x.sync_write = Some(Outcome::Measured(SyncResult {
            figure: sync(1, 7200),
            verdict: FlushVerdict {
                kind: VerdictKind::Plausible,
                reason: "sda solid state: no bound on commits a second".into(),
            },
            published: Vec::new(),
            reference: crate::syncverdict::reference(
                Some(&crate::model::storage::Storage {
                    disks: vec![crate::model::storage::Disk {
                        name: "sda".into(),
                        model: Some("INTEL SSDSC2KB480G8".into()),
                        rotational: Some(false),
                        transport: Some("SATA".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                None,
                2400.0,
            ),
        }));
        x.sync_scaling = Some(Outcome::Measured(SyncScaling {
            steps: vec![sync(1, 7200), sync(2, 13_500), sync(4, 14_100)],
        }));
        x.sustained = Some(Outcome::Measured(
            crate::model::sustained::SustainedFigure {
                bytes_per_second: [900u64, 880, 870, 400, 210, 200]
                    .iter()
                    .map(|m| m << 20)
                    .collect(),
                window: Duration::from_secs(6),
                elapsed: Duration::from_secs(6),
                file_bytes: 8 << 30,
                direct: true,
            },
        ));
        x.cpu_bench = Some(Outcome::Measured(cpu_bench(&[
            (2022.0, &[1900.0, 1800.0]),
            (752.0, &[700.0, 690.0]),
            (1198.0, &[1100.0, 1150.0]),
            (3645.0, &[3000.0, 3100.0]),
            (758.0, &[700.0, 710.0]),
        ])));
    }

    /// PBS's operations in order, each `(MB/s alone, MB/s of each thread)`,
    /// over one-second windows (ZSTD COMPRESS three).
    pub(crate) fn cpu_bench(each: &[(f64, &[f64])]) -> crate::model::cpubench::CpuBench {
        use crate::model::cpubench::{CpuBench, CpuOp, CpuOpFigure, CpuThroughput, MB};
        let t = |mb: f64, window: Duration| CpuThroughput {
            bytes: (mb * MB * window.as_secs_f64()) as u64,
            elapsed: window,
        };
        CpuBench {
            ops: CpuOp::ALL
                .into_iter()
                .zip(each)
                .map(|(op, (alone, threads))| CpuOpFigure {
                    op,
                    window: op.pbs_window(),
                    single: t(*alone, op.pbs_window()),
                    threads: threads.iter().map(|mb| t(*mb, op.pbs_window())).collect(),
                })
                .collect(),
        }
    }

    use crate::model::testutil::assert_snapshot;

    pub(crate) fn validate(doc: &str) {
        let schema = crate::model::testutil::schema("report");
        let validator = jsonschema::validator_for(&schema).unwrap();
        let instance: serde_json::Value = serde_json::from_str(doc).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "schema violations: {errors:#?}");
    }

    #[test]
    fn json_of_known_numbers_is_pinned_and_valid() {
        let text = crate::output::json(&known_report().to_json(), true);
        assert_snapshot("report.json", &text);
        validate(&text);
        let empty = ProbeReport {
            settings: known_report().settings,
            ..ProbeReport::new("/".into())
        };
        validate(&crate::output::json(&empty.to_json(), false));
    }

    #[test]
    fn json_reads_back_into_the_same_document() {
        let text = crate::output::json(&known_report().to_json(), false);
        let doc: JsonReport = serde_json::from_str(&text).unwrap();
        assert_eq!(doc, known_report().to_json());
        assert_eq!(
            doc.figures.get(Figure::FsyncsPerSecond).unwrap().value,
            210.0
        );
        assert_eq!(doc.not_measured.len(), 2);
        assert!(!doc.not_measured[0].failed);
    }

    /// The schema names every figure of the list, and nothing else.
    #[test]
    fn schema_knows_the_list_of_figures() {
        let schema = crate::model::testutil::schema("report");
        let names = crate::model::testutil::enum_names;
        let of = |group: Group, f: fn(Figure) -> &'static str| -> Vec<String> {
            Figure::ALL
                .into_iter()
                .filter(|x| x.group() == group)
                .map(|x| f(x).to_string())
                .collect()
        };
        let defs = &schema["$defs"];
        assert_eq!(names(&defs["key"]), of(Group::Pveperf, Figure::key));
        let x = &defs["xfigure"]["properties"];
        assert_eq!(names(&x["key"]), of(Group::Extended, Figure::key));
        assert_eq!(names(&x["label"]), of(Group::Extended, Figure::label));
        for f in Figure::PVEPERF {
            let props = &schema["properties"]["figures"]["properties"][f.key()];
            assert!(
                props.is_object(),
                "figures.{} is not in the schema",
                f.key()
            );
        }
    }

    #[test]
    fn schema_rejects_a_wrong_document() {
        let mut doc: serde_json::Value =
            serde_json::from_str(&crate::output::json(&known_report().to_json(), false)).unwrap();
        doc["figures"]["fsyncs_per_second"]["unit"] = "MB/s".into();
        let schema = crate::model::testutil::schema("report");
        assert!(!jsonschema::validator_for(&schema).unwrap().is_valid(&doc));
    }
}
