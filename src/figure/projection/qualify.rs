//! The projection of `qualify`'s tests: each figure's JSON entry (the
//! facts its kind carries elsewhere: a sync test's, an I/O test's, a long
//! write's with its cliff) and its text line.

use super::io::IoFacts;
use super::sustained::SustainedFacts;
use super::sync::SyncFacts;
use super::{Context, Entry, Facts, Project, Projection, ms};
use crate::figure::Figure;
use crate::model::io::IoStats;
use crate::model::latency::LatencySummary;
use crate::model::qualify::{DiskTest, QualifyMeasured, cliff};
use crate::model::sync::SyncWriteFigure;

/// What `sync_mode` records for the paper's test: the device opened
/// O_SYNC, as fio's `--sync=1`.
pub const OSYNC: &str = "osync";

/// The test behind a figure of the I/O kind.
pub fn test_of(figure: Figure) -> Option<DiskTest> {
    Some(match figure {
        Figure::DiskRandWrite4kQd1 => DiskTest::RandWrite4kQd1,
        Figure::DiskRandWrite4kQd32 => DiskTest::RandWrite4kQd32,
        Figure::DiskRandRead4kQd1 => DiskTest::RandRead4kQd1,
        Figure::DiskRandRead4kQd32 => DiskTest::RandRead4kQd32,
        Figure::DiskSeqRead1mQd8 => DiskTest::SeqRead1mQd8,
        Figure::DiskSeqWrite1mQd8 => DiskTest::SeqWrite1mQd8,
        _ => return None,
    })
}

/// The count of jobs behind a sync figure.
pub fn jobs_of(figure: Figure) -> Option<u32> {
    match figure {
        Figure::DiskSync1 => Some(1),
        Figure::DiskSync5 => Some(5),
        Figure::DiskSync10 => Some(10),
        _ => None,
    }
}

/// `mean 0.080 ms, p50 0.070 ms, p99 0.150 ms, max 2.100 ms`.
fn latency_words(l: &LatencySummary) -> String {
    format!(
        "mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(l.mean_us),
        ms(l.p50_us),
        ms(l.p99_us),
        ms(l.max_us)
    )
}

fn sync_projection(f: &SyncWriteFigure, mut facts: SyncFacts) -> Projection {
    facts.sync_mode = OSYNC.into();
    let flushes = facts
        .verdict
        .as_ref()
        .map(|v| format!("; flushes: {} ({})", v.kind.words(), v.reason))
        .unwrap_or_default();
    let latency = f
        .latency
        .summary()
        .map(|l| format!("; {}", latency_words(&l)))
        .unwrap_or_default();
    let mb = f.iops() * 4096.0 / 1e6;
    let line = format!(
        "{:.0} IOPS, {mb:.2} MB/s ({} x 4 KiB sequential O_SYNC writes at queue depth 1{latency}){flushes}",
        f.iops(),
        crate::model::sync::jobs_words(f.jobs),
    );
    Projection {
        entries: vec![Entry::once(f.iops(), Facts::Sync(facts))],
        line: Some(line),
        ..Projection::default()
    }
}

fn io_projection(figure: Figure, test: DiskTest, s: &IoStats) -> Projection {
    let Some(mut facts) = IoFacts::of(&[s]) else {
        return Projection::default();
    };
    let (block, depth, reads, random) = test.shape();
    let sequential = !random;
    let value = match (reads, sequential) {
        (true, true) => s.read_mib_per_sec(),
        (false, true) => s.write_iops() * block as f64 / f64::from(1u32 << 20),
        (true, false) => s.read_iops(),
        (false, false) => s.write_iops(),
    };
    let latency = if reads {
        facts.latency
    } else {
        // A write test's p99 is its writes'.
        let w = facts.write_latency.take();
        facts.latency = w;
        w
    };
    if !reads {
        facts.write_blocks = Some("device".into());
    }
    let unit = if sequential { "MB/sec" } else { "IOPS" };
    let words = latency
        .map(|l| format!("; {}", latency_words(&l)))
        .unwrap_or_default();
    let engine = super::io::engine_note(s);
    let value_text = if sequential {
        format!("{value:.2}")
    } else {
        format!("{value:.0}")
    };
    Projection {
        entries: vec![Entry::once(value, Facts::Io(facts))],
        line: Some(format!(
            "{value_text} {unit} ({} KiB O_DIRECT {}, queue depth {depth}, {engine}{words})",
            block / 1024,
            if sequential { "sequential" } else { "random" },
        )),
        diagnostic: super::io::fallback(figure, s),
        failed: None,
    }
}

impl Project for QualifyMeasured {
    fn project(&self, figure: Figure, context: &Context) -> Projection {
        if let Some(jobs) = jobs_of(figure) {
            if jobs == 1 {
                return self
                    .sync_one
                    .as_ref()
                    .map_or_else(Projection::default, |r| {
                        let facts = SyncFacts {
                            verdict: Some(r.verdict.clone()),
                            reference: r.reference.clone(),
                            published: r.published.clone(),
                            ..SyncFacts::of(&r.figure)
                        };
                        sync_projection(&r.figure, facts)
                    });
            }
            return self
                .sync_more
                .iter()
                .find(|f| f.jobs == jobs)
                .map_or_else(Projection::default, |f| {
                    sync_projection(f, SyncFacts::of(f))
                });
        }
        if let Some(test) = test_of(figure) {
            return self
                .io
                .iter()
                .find(|(t, _)| *t == test)
                .map_or_else(Projection::default, |(t, s)| io_projection(figure, *t, s));
        }
        let Some(s) = self
            .sustained
            .as_ref()
            .filter(|_| figure == Figure::DiskSustained)
        else {
            return Projection::default();
        };
        let mut p = s.project(figure, context);
        let found = cliff(&s.series());
        for e in &mut p.entries {
            if let Facts::Sustained(SustainedFacts { cliff: c, .. }) = &mut e.facts {
                *c = found;
            }
        }
        let secs = s.bytes_per_second.len();
        let stretch = crate::model::sustained::STRETCH.min(secs);
        let cliff_words = match found {
            Some(c) => format!(
                "; the cache ran out at {} s, after {:.1} GiB: {:.0} -> {:.0} MB/sec",
                c.second,
                c.written_before_mib / 1024.0,
                c.before_mib_per_s,
                c.after_mib_per_s
            ),
            None => "; no cliff: it held within 60% of its first seconds".into(),
        };
        p.line = Some(format!(
            "{:.2} MB/sec over {secs} s (first {stretch} s {:.2}, last {stretch} s {:.2}; 1 MiB O_DIRECT sequential writes{cliff_words})",
            s.mean(),
            s.first().unwrap_or(0.0),
            s.last().unwrap_or(0.0),
        ));
        p
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    use crate::model::latency::Latency;
    use crate::model::sustained::SustainedFigure;
    use crate::model::sync::SyncMode;

    fn stats(reads: u64, writes: u64, block: usize, depth: usize) -> IoStats {
        let mut l = Latency::default();
        l.record(Duration::from_micros(100));
        l.record(Duration::from_micros(300));
        let of = |n: u64| if n > 0 { l.clone() } else { Latency::default() };
        crate::model::testutil::io_stats((reads, writes), (block, depth), of(reads), of(writes))
    }

    #[test]
    fn each_figure_reads_its_own_test() {
        let m = QualifyMeasured {
            sync_one: None,
            sync_more: vec![SyncWriteFigure {
                jobs: 5,
                mode: SyncMode::Dsync,
                file_bytes: 1 << 30,
                writes: 20_000,
                elapsed: Duration::from_secs(2),
                latency: Latency::default(),
                cpu: Duration::ZERO,
            }],
            io: vec![
                (DiskTest::RandWrite4kQd32, stats(0, 100_000, 4096, 32)),
                (DiskTest::SeqRead1mQd8, stats(2048, 0, 1 << 20, 8)),
            ],
            sustained: Some(SustainedFigure {
                bytes_per_second: [900u64, 900, 900, 100, 100, 100].map(|m| m << 20).to_vec(),
                window: Duration::from_secs(6),
                elapsed: Duration::from_secs(6),
                file_bytes: 1 << 30,
                direct: true,
            }),
        };
        let ctx = Context::default();
        assert_eq!(m.project(Figure::DiskSync1, &ctx), Projection::default());
        let five = m.project(Figure::DiskSync5, &ctx);
        assert_eq!(five.value(), Some(10_000.0));
        let facts = serde_json::to_value(&five.entries[0].facts).unwrap();
        assert_eq!(facts["sync_mode"], "osync");
        assert_eq!(facts["jobs"], 5);
        assert!(
            five.line
                .unwrap()
                .starts_with("10000 IOPS, 40.96 MB/s (5 jobs")
        );
        let w = m.project(Figure::DiskRandWrite4kQd32, &ctx);
        assert_eq!(w.value(), Some(50_000.0));
        let wf = serde_json::to_value(&w.entries[0].facts).unwrap();
        assert_eq!(
            wf["latency"]["count"], 2,
            "a write test's latency is its writes'"
        );
        assert_eq!(
            m.project(Figure::DiskSeqRead1mQd8, &ctx).value(),
            Some(1024.0)
        );
        assert_eq!(m.project(Figure::DiskRandRead4kQd1, &ctx).value(), None);
        let s = m.project(Figure::DiskSustained, &ctx);
        let sf = serde_json::to_value(&s.entries[0].facts).unwrap();
        assert_eq!(sf["cliff"]["second"], 3);
        assert!(
            s.line
                .unwrap()
                .contains("the cache ran out at 3 s, after 2.6 GiB: 900 -> 100")
        );
    }
}
