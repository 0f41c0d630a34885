use super::*;
use std::path::Path;

use crate::figure::projection::Facts;
use crate::figure::projection::io::{IoFacts, SeqWriteFacts};
use crate::figure::{self, Better};
use crate::output::plot;
use crate::output::result::JsonReport;
use crate::output::result::XFigure;
use crate::output::result::testing::per_key;

fn fixture() -> JsonReport {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/pve1.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// pve1.json with SEQ WRITE, RANDOM READ 4K QD32 and MIXED at known numbers.
fn with_x(seq_write: f64, qd32: f64, mixed: (f64, f64)) -> JsonReport {
    let mut doc = fixture();
    let io = |key: &str, read: f64, write: Option<f64>| XFigure {
        key: key.into(),
        value: read,
        facts: Facts::Io(IoFacts {
            engine: "io_uring".into(),
            read_iops: read,
            write_iops: write,
            ..IoFacts::default()
        }),
        ..XFigure::default()
    };
    doc.extended = vec![
        XFigure {
            key: "seq_write".into(),
            value: seq_write,
            samples: vec![seq_write; 3],
            facts: zeros(false),
            ..XFigure::default()
        },
        io("rand_read_4k_qd32", qd32, None),
        io("mixed_70_30_4k_qd16", mixed.0, Some(mixed.1)),
    ];
    doc
}

/// SEQ WRITE's facts: zeros or incompressible data.
fn zeros(zeros: bool) -> Facts {
    let data = if zeros { "zeros" } else { "incompressible" };
    Facts::SeqWrite(SeqWriteFacts { data: data.into() })
}

/// An I/O figure run on psync.
fn psync(f: &mut XFigure) {
    let Facts::Io(io) = &mut f.facts else {
        panic!("{} is no I/O figure", f.key)
    };
    io.engine = "psync".into();
}

fn input(name: &str, doc: JsonReport) -> Input {
    Input {
        name: name.into(),
        doc,
    }
}

fn row<'a>(t: &'a Table, key: &str) -> &'a Row {
    t.rows
        .iter()
        .find(|r| r.key == key)
        .unwrap_or_else(|| panic!("no row {key}"))
}

#[test]
fn extended_figures_are_ranked_in_compare_and_by_baseline() {
    let before = with_x(400.0, 80_000.0, (7000.0, 3000.0));
    let after = with_x(200.0, 80_000.0, (7000.0, 1500.0));
    let t = table(&[input("a", before.clone()), input("b", after.clone())]);
    let verdict = |key: &str| row(&t, key).cells[1].verdict;
    assert_eq!(verdict("seq_write"), Some(Verdict::Worse));
    assert_eq!(verdict("rand_read_4k_qd32"), Some(Verdict::Same));
    assert_eq!(verdict("mixed_70_30_4k_qd16"), Some(Verdict::Same));
    assert_eq!(verdict("mixed_70_30_4k_qd16_write"), Some(Verdict::Worse));
    assert_eq!(
        row(&t, "mixed_70_30_4k_qd16_write").label,
        "MIXED 70/30 4K QD16 (write)"
    );
    assert_eq!(row(&t, "seq_write").cells[1].ratio, Some(0.5));
    // Print order: pveperf's lines, then the extended ones.
    let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
    let pos = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert!(
        pos("fsyncs_per_second") < pos("seq_write")
            && pos("seq_write") < pos("mixed_70_30_4k_qd16")
    );
    let text = render_text(&t);
    assert!(
        text.lines()
            .any(|l| l.starts_with("MIXED 70/30 4K QD16 (write)  IOPS")),
        "{text}"
    );

    let worse: Vec<String> = regressions(&before, &after, 20.0)
        .into_iter()
        .map(|r| r.label)
        .collect();
    assert_eq!(worse, ["SEQ WRITE", "MIXED 70/30 4K QD16 (write)"]);
    // The other way round nothing got worse.
    assert!(regressions(&after, &before, 20.0).is_empty());
    // A QD32 regression is caught as well.
    let slow = with_x(400.0, 20_000.0, (7000.0, 3000.0));
    let worse = regressions(&before, &slow, 20.0);
    assert_eq!(worse.len(), 1);
    assert_eq!(worse[0].label, "RANDOM READ 4K QD32");
    assert_eq!(worse[0].ratio, 0.25);
}

#[test]
fn a_pair_measured_another_way_is_marked_and_not_ranked() {
    let a = with_x(400.0, 80_000.0, (7000.0, 3000.0));
    // Another I/O engine for QD32, zeros for SEQ WRITE, the rust regex engine.
    let mut b = with_x(100.0, 10_000.0, (7000.0, 3000.0));
    b.extended[0].facts = zeros(true);
    psync(&mut b.extended[1]);
    b.settings.regex_engine = "rust".into();
    let regex = figure::Figure::RegexPerSecond;
    let mut fig = b.figures.get(regex).unwrap().clone();
    fig.value *= 5.0;
    b.figures.set(regex, Some(fig));
    let t = table(&[input("a", a.clone()), input("b", b.clone())]);
    let cell = |key: &str| row(&t, key).cells[1].clone();
    assert_eq!(cell("seq_write").verdict, Some(Verdict::Unlike));
    assert_eq!(
        cell("seq_write").unlike,
        Some(Unlike {
            what: "data",
            first: "incompressible".into(),
            this: "zeros".into()
        })
    );
    assert_eq!(cell("rand_read_4k_qd32").unlike.unwrap().what, "I/O engine");
    assert_eq!(
        cell("regex_per_second").unlike.unwrap().what,
        "regex engine"
    );
    // MIXED ran on the same engine: still ranked.
    assert_eq!(cell("mixed_70_30_4k_qd16").verdict, Some(Verdict::Same));
    assert!(
        regressions(&a, &b, 20.0).is_empty(),
        "nothing measured alike got worse"
    );
    // A perl-engine baseline against a rust-engine run a fifth of it:
    // not a regression (it was a false exit 3).
    let mut slow = a.clone();
    slow.settings.regex_engine = "rust".into();
    let mut fig = slow.figures.get(regex).unwrap().clone();
    fig.value /= 5.0;
    slow.figures.set(regex, Some(fig));
    assert!(regressions(&a, &slow, 20.0).is_empty());
    slow.settings.regex_engine = "perl".into();
    assert_eq!(regressions(&a, &slow, 20.0)[0].label, "REGEX/SECOND");
    let text = render_text(&t);
    assert!(
        text.contains(
            "unlike: RANDOM READ 4K QD32: I/O engine io_uring in [1], psync in [2]; not ranked"
        ),
        "{text}"
    );
    // Another window: BUFFERED READS is not ranked, FSYNCS/SECOND still is.
    let mut short = fixture();
    short.settings.duration_s = 0.5;
    let t = table(&[input("a", fixture()), input("b", short)]);
    assert_eq!(
        row(&t, "buffered_reads").cells[1]
            .unlike
            .as_ref()
            .unwrap()
            .what,
        "window"
    );
    assert_ne!(
        row(&t, "fsyncs_per_second").cells[1].verdict,
        Some(Verdict::Unlike)
    );
}

/// RANDOM WRITE into a preallocated file (fio's way, since pveprobe
/// preallocates) against a result that wrote over a laid-out file (no
/// `write_blocks`: results from before): not ranked; two new results
/// are.
#[test]
fn random_writes_into_unwritten_and_written_blocks_are_unlike() {
    let with_write = |iops: f64, blocks: Option<&str>| {
        let mut doc = fixture();
        doc.extended = vec![XFigure {
            key: "rand_write_4k_qd1".into(),
            value: iops,
            facts: Facts::Io(IoFacts {
                engine: "io_uring".into(),
                write_iops: Some(iops),
                write_blocks: blocks.map(str::to_string),
                ..IoFacts::default()
            }),
            ..XFigure::default()
        }];
        doc
    };
    let old = with_write(6932.0, None);
    let new = with_write(12_330.0, Some("unwritten"));
    let t = table(&[input("old", old.clone()), input("new", new.clone())]);
    let cell = row(&t, "rand_write_4k_qd1").cells[1].clone();
    assert_eq!(cell.verdict, Some(Verdict::Unlike));
    assert_eq!(
        cell.unlike,
        Some(Unlike {
            what: "blocks written into",
            first: "written".into(),
            this: "unwritten".into()
        })
    );
    let newer = with_write(6000.0, Some("unwritten"));
    let t = table(&[input("new", new), input("newer", newer)]);
    assert_eq!(
        row(&t, "rand_write_4k_qd1").cells[1].verdict,
        Some(Verdict::Worse)
    );
}

/// pve1, pve2 and pve3 of fixtures/results, as `compare` reads them.
fn fixtures() -> Vec<Input> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results");
    ["pve1.json", "pve2.json", "pve3-single-run.json"]
        .iter()
        .map(|f| Readers::new(Vec::new()).load(&dir.join(f)).unwrap())
        .collect()
}

fn panel<'a>(panels: &'a [plot::Panel], title: &str) -> &'a plot::Panel {
    panels
        .iter()
        .find(|p| p.title == title)
        .unwrap_or_else(|| panic!("no panel {title}"))
}

#[test]
fn panels_have_a_bar_per_file_its_runs_and_worse_cells_as_outliers() {
    let t = table(&fixtures());
    let panels = panels(&t);
    assert_eq!(
        panels.iter().map(|p| p.title.as_str()).collect::<Vec<_>>(),
        t.rows.iter().map(|r| r.label.as_str()).collect::<Vec<_>>()
    );
    let fsyncs = panel(&panels, "FSYNCS/SECOND");
    assert_eq!(
        (fsyncs.unit.as_str(), fsyncs.better),
        ("1/s", Some(Better::Higher))
    );
    let names: Vec<&str> = fsyncs.bars.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "[1] pve1 (pve1.json)",
            "[2] pve2 (pve2.json)",
            "[3] pve3 (pve3-single-run.json)"
        ]
    );
    let each = |p: &plot::Panel| {
        p.bars
            .iter()
            .map(|b| (b.value, b.text.clone(), b.runs, b.outlier))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        each(fsyncs),
        [
            (
                Some(3050.0),
                "3050.00".into(),
                Some((3000.0, 3100.0)),
                false
            ),
            (Some(1010.0), "1010.00".into(), Some((1000.0, 1020.0)), true),
            // One run: no whisker.
            (Some(1010.0), "1010.00".into(), None, true),
        ]
    );
    // Less is better for the seek time; pve2's 505 MiB/s against 510 is
    // within the runs' noise, pve3's single run is not.
    let seek = panel(&panels, "AVERAGE SEEK TIME");
    assert_eq!(seek.better, Some(Better::Lower));
    let reads: Vec<bool> = panel(&panels, "BUFFERED READS")
        .bars
        .iter()
        .map(|b| b.outlier)
        .collect();
    assert_eq!(reads, [false, false, true]);
    let hd = panel(&panels, "HD SIZE");
    assert!(hd.better.is_none() && hd.bars.iter().all(|b| !b.outlier));

    let svg = plot_svg(&t).unwrap();
    let all = crate::output::plot::tests::shapes(&svg);
    assert!(all.iter().any(|s| s.text == "pveprobe compare: 3 results"));
    let hatched = all
        .iter()
        .filter(|s| s.tag == "rect" && s.fill == plot::OUTLIER_FILL)
        .count();
    let worse = t
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .filter(|c| c.verdict == Some(Verdict::Worse))
        .count();
    assert_eq!(hatched, worse);
    // The table's JSON is unchanged: runs and directions stay out.
    let json = crate::output::json(&t, false);
    assert!(!json.contains("runs") && !json.contains("better"), "{json}");
}

#[test]
fn inline_bars_are_drawn_only_when_asked() {
    let t = table(&fixtures());
    let plain = render_text_with(&t, false);
    assert_eq!(plain, render_text(&t));
    // U+2581..U+258F: the lower and left eighths, the full block between.
    let blocks = |text: &str| {
        text.chars()
            .filter(|c| ('\u{2581}'..='\u{258F}').contains(c))
            .count()
    };
    assert_eq!(blocks(&plain), 0);
    let bars = render_text_with(&t, true);
    assert_eq!(bars.lines().count(), plain.lines().count());
    let line = |text: &str, label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap()
            .to_string()
    };
    // 3050 is the row's largest: a full bar; 1010 is 21 of its 64 eighths.
    let fsyncs = line(&bars, "FSYNCS/SECOND");
    assert!(
        fsyncs.contains("3050.00  ████████    1010.00  ██▋       0.331  worse"),
        "{fsyncs}"
    );
    assert!(fsyncs.ends_with("0.331  worse"), "{fsyncs}");
    // Columns stay aligned: [2]'s value ends where its heading does.
    let header = line(&bars, "figure");
    let end = |l: &str, what: &str| l[..l.find(what).unwrap() + what.len()].chars().count();
    assert_eq!(end(&header, "[2]"), end(&fsyncs, "1010.00"));
    assert!(blocks(&bars) > 0);
}

#[test]
fn a_figure_measured_per_key_has_a_row_per_key() {
    let mut a = with_x(400.0, 80_000.0, (7000.0, 3000.0));
    let mut b = a.clone();
    let qd32 = "rand_read_4k_qd32";
    per_key(&mut a, qd32, &[("jobs=1", 100.0), ("jobs=4", 400.0)]);
    per_key(&mut b, qd32, &[("jobs=1", 100.0), ("jobs=4", 150.0)]);
    let t = table(&[input("a", a.clone()), input("b", b.clone())]);
    assert_eq!(
        row(&t, "rand_read_4k_qd32[jobs=1]").cells[1].verdict,
        Some(Verdict::Same)
    );
    assert_eq!(
        row(&t, "rand_read_4k_qd32[jobs=4]").cells[1].verdict,
        Some(Verdict::Worse)
    );
    let worse = regressions(&a, &b, 20.0);
    assert_eq!(worse.len(), 1);
    assert_eq!(worse[0].label, "RANDOM READ 4K QD32 [jobs=4]");
}

/// compare's text (with and without bars) and CSV of the fixture
/// results, and of two results with extended figures, pinned.
#[test]
fn outputs_of_fixed_results_are_pinned() {
    let t = table(&fixtures());
    crate::model::testutil::assert_snapshot("compare.txt", &render_text(&t));
    crate::model::testutil::assert_snapshot("compare-bars.txt", &render_text_with(&t, true));
    crate::model::testutil::assert_snapshot("compare.csv", &render_csv(&t));
    let mut b = with_x(200.0, 10_000.0, (7000.0, 1500.0));
    psync(&mut b.extended[1]);
    let x = table(&[
        input("a", with_x(400.0, 80_000.0, (7000.0, 3000.0))),
        input("b", b),
    ]);
    crate::model::testutil::assert_snapshot("compare-x.txt", &render_text(&x));
    crate::model::testutil::assert_snapshot("compare-x.csv", &render_csv(&x));
}
