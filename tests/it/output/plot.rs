//! `--plot` through the binary: `compare` on the fixture results and on a
//! cluster document, `cluster` on nodes answered by a stand-in ssh (no
//! root, no network); each SVG parsed as XML, its bars measured, and
//! rendered to PNG with resvg. No root needed.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::common::{fixture, pveprobe, stderr, stdout, workdir};
use pveprobe::output::plot::{BAR_FILL, HATCH_STROKE, OUTLIER_FILL, WHISKER_STROKE};

/// The three fixture results, in compare's order.
fn results() -> [PathBuf; 3] {
    [
        "results/pve1.json",
        "results/pve2.json",
        "results/pve3-single-run.json",
    ]
    .map(fixture)
}

/// An element of the SVG with what the tests look at.
#[derive(Debug, Clone)]
struct Shape {
    tag: String,
    fill: String,
    stroke: String,
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    points: Vec<(f64, f64)>,
    text: String,
    bold: bool,
}

/// Every element in document order; the SVG must be XML.
fn shapes(svg: &str) -> Vec<Shape> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is XML");
    let num = |n: &roxmltree::Node, a: &str| n.attribute(a).map_or(0.0, |v| v.parse().unwrap());
    doc.descendants()
        .filter(|n| n.is_element())
        .map(|n| Shape {
            tag: n.tag_name().name().into(),
            fill: n.attribute("fill").unwrap_or("").into(),
            stroke: n.attribute("stroke").unwrap_or("").into(),
            x: num(&n, "x"),
            y: num(&n, "y"),
            width: num(&n, "width"),
            height: num(&n, "height"),
            points: n
                .attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect(),
            text: n.text().unwrap_or("").trim().into(),
            bold: n.attribute("font-weight") == Some("bold"),
        })
        .collect()
}

/// The panels' titles: bold text, less the picture's title (the first)
/// and the outliers' marked values.
fn titles(all: &[Shape]) -> Vec<String> {
    all.iter()
        .filter(|s| s.tag == "text" && s.bold && !s.text.ends_with('!'))
        .skip(1)
        .map(|s| s.text.clone())
        .collect()
}

/// The elements of the panel titled `title`, to the next panel's title:
/// the picture draws each panel whole, its title first.
fn panel(all: &[Shape], title: &str) -> Vec<Shape> {
    let start = all
        .iter()
        .position(|s| s.tag == "text" && s.bold && s.text == title)
        .unwrap_or_else(|| panic!("no panel {title}"));
    let end = all[start + 1..]
        .iter()
        .position(|s| s.tag == "text" && s.bold && !s.text.ends_with('!'))
        .map_or(all.len(), |i| start + 1 + i);
    all[start..end].to_vec()
}

fn bars(panel: &[Shape]) -> Vec<Shape> {
    panel
        .iter()
        .filter(|s| s.tag == "rect" && (s.fill == BAR_FILL || s.fill == OUTLIER_FILL))
        .cloned()
        .collect()
}

fn whiskers(panel: &[Shape]) -> usize {
    panel
        .iter()
        .filter(|s| s.tag == "polyline" && s.stroke == WHISKER_STROKE)
        .count()
}

/// Bars that carry hatching: a hatch line with every point inside them.
fn hatched(panel: &[Shape]) -> Vec<bool> {
    let hatch: Vec<&Shape> = panel
        .iter()
        .filter(|s| s.tag == "polyline" && s.stroke == HATCH_STROKE)
        .collect();
    bars(panel)
        .iter()
        .map(|b| {
            hatch.iter().any(|h| {
                h.points.iter().all(|&(x, y)| {
                    (b.x..=b.x + b.width).contains(&x) && (b.y..=b.y + b.height).contains(&y)
                })
            })
        })
        .collect()
}

/// `heights` in the ratio of `values`, to a pixel.
fn assert_proportional(heights: &[f64], values: &[f64]) {
    assert_eq!(heights.len(), values.len());
    for (h, v) in heights.iter().zip(values) {
        let expected = heights[0] * v / values[0];
        assert!(
            (h - expected).abs() <= 1.0,
            "{heights:?} against {values:?}"
        );
    }
}

/// `svg` rendered to PNG with resvg, as a viewer would.
pub fn png(svg: &str) -> Vec<u8> {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    opt.fontdb_mut().set_sans_serif_family("DejaVu Sans");
    let tree = resvg::usvg::Tree::from_str(svg, &opt).expect("resvg reads it");
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().unwrap()
}

/// U+2581..U+258F: the block elements of inline bars.
fn blocks(text: &str) -> usize {
    text.chars()
        .filter(|c| ('\u{2581}'..='\u{258F}').contains(c))
        .count()
}

#[test]
fn compare_plot_has_a_panel_per_figure_bars_whiskers_and_marked_outliers() {
    let dir = workdir();
    let plot = dir.path().join("compare.svg");
    let out = pveprobe()
        .arg("compare")
        .arg("--plot")
        .arg(&plot)
        .args(results())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("pveprobe: plot written to {}\n", plot.display())
    );
    // stdout is a pipe: the table has no inline bars.
    assert!(stdout(&out).contains("FSYNCS/SECOND"));
    assert_eq!(blocks(&stdout(&out)), 0);

    let svg = std::fs::read_to_string(&plot).unwrap();
    let all = shapes(&svg);
    // A panel per row of the table, in its order.
    let rows: Vec<String> = stdout(&out)
        .lines()
        .skip_while(|l| !l.starts_with("figure"))
        .skip(1)
        .map(|l| l.split("  ").next().unwrap().trim().to_string())
        .collect();
    assert_eq!(titles(&all), rows);
    assert!(rows.len() >= 7, "{rows:?}");

    let fsyncs = panel(&all, "FSYNCS/SECOND");
    let heights: Vec<f64> = bars(&fsyncs).iter().map(|b| b.height).collect();
    assert_proportional(&heights, &[3050.0, 1010.0, 1010.0]);
    assert_eq!(whiskers(&fsyncs), 2, "pve3 had a single run");
    // [2] and [3] are worse than [1] beyond the noise: hatched and marked.
    assert_eq!(hatched(&fsyncs), [false, true, true]);
    let texts: Vec<&str> = fsyncs.iter().map(|s| s.text.as_str()).collect();
    for t in [
        "1/s · ↑ higher is better",
        "3050.00",
        "1010.00 !",
        "[1] pve1",
        "(pve3-single-run.json)",
    ] {
        assert!(texts.contains(&t), "{t} in {texts:?}");
    }
    // Less is better for the seek time; [2] is worse beyond its noise.
    let seek = panel(&all, "AVERAGE SEEK TIME");
    assert!(seek.iter().any(|s| s.text == "ms · ↓ lower is better"));
    assert_proportional(
        &bars(&seek).iter().map(|b| b.height).collect::<Vec<_>>(),
        &[0.21, 0.41, 0.41],
    );
    // Within the runs' spread is noise, not an outlier.
    assert_eq!(hatched(&panel(&all, "REGEX/SECOND")), [false; 3]);
    assert!(all.iter().any(|s| {
        s.text
            .starts_with("Hatched, outlined in black and marked !: worse than the first file")
    }));
    assert_eq!(&png(&svg)[1..4], b"PNG");
}

#[test]
fn compare_plot_with_json_output_keeps_stdout_json() {
    let dir = workdir();
    let plot = dir.path().join("compare.svg");
    let out = pveprobe()
        .args(["compare", "--output-format", "json", "--plot"])
        .arg(&plot)
        .args(&results()[..2])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["columns"].as_array().unwrap().len(), 2);
    let all = shapes(&std::fs::read_to_string(&plot).unwrap());
    assert_eq!(bars(&panel(&all, "FSYNCS/SECOND")).len(), 2);
}

/// A stand-in for ssh on PATH: answers as the node named after `--` with
/// `nodes/NODE.json`, and leaves `ran` behind to say it was run.
fn fake_ssh(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(dir.join("nodes")).unwrap();
    let ssh = bin.join("ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\nhere=$(dirname \"$0\")\ntouch \"$here/ran\"\n\
         while [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done\n\
         exec cat \"$here/../nodes/$2.json\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (node, file) in ["pve1", "pve2", "pve3"].iter().zip(results()) {
        std::fs::copy(file, dir.join("nodes").join(format!("{node}.json"))).unwrap();
    }
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn cluster_plot_draws_the_nodes_and_compare_reads_the_cluster_document() {
    let dir = workdir();
    let path = fake_ssh(dir.path());
    let (doc, plot) = (
        dir.path().join("cluster.json"),
        dir.path().join("cluster.svg"),
    );
    let out = pveprobe()
        .env("PATH", &path)
        .args([
            "cluster",
            "--nodes",
            "pve1,pve2,pve3",
            "--output-format",
            "json",
        ])
        .arg("--output")
        .arg(&doc)
        .arg("--plot")
        .arg(&plot)
        .arg("/var/lib/vz")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("pveprobe: plot written to {}\n", plot.display())),
        "{}",
        stderr(&out)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    let svg = std::fs::read_to_string(&plot).unwrap();
    let all = shapes(&svg);
    // A panel per column of the table.
    let labels: Vec<String> = report["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["label"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(titles(&all), labels);
    let fsyncs = panel(&all, "FSYNCS/SECOND");
    assert_proportional(
        &bars(&fsyncs).iter().map(|b| b.height).collect::<Vec<_>>(),
        &[3050.0, 1010.0, 1010.0],
    );
    assert_eq!(whiskers(&fsyncs), 2);
    // Outliers as the summary marks them.
    let marked: Vec<bool> = report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            n["outliers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o == "fsyncs_per_s")
        })
        .collect();
    assert_eq!(marked, [false, true, true]);
    assert_eq!(hatched(&fsyncs), marked);
    for name in ["pve1", "pve2", "pve3"] {
        assert!(fsyncs.iter().any(|s| s.text == name), "{name}");
    }
    assert_eq!(&png(&svg)[1..4], b"PNG");

    // The cluster document through compare: a bar per node.
    let again = dir.path().join("again.svg");
    let out = pveprobe()
        .args(["compare", "--plot"])
        .arg(&again)
        .arg(&doc)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = shapes(&std::fs::read_to_string(&again).unwrap());
    let fsyncs = panel(&all, "FSYNCS/SECOND");
    assert_eq!(hatched(&fsyncs), [false, true, true]);
    assert!(fsyncs.iter().any(|s| s.text == "[3] pve3"));
    assert!(fsyncs.iter().any(|s| s.text == "(cluster.json)"));
}

#[test]
fn a_plot_file_that_cannot_be_written_is_refused_before_anything_runs() {
    let dir = workdir();
    let path = fake_ssh(dir.path());
    let ran = dir.path().join("bin/ran");
    let precious = dir.path().join("precious");
    std::fs::write(&precious, "keep").unwrap();
    let link = dir.path().join("plot.svg");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    let missing = dir.path().join("no/such/dir/plot.svg");

    for plot in [&link, &missing] {
        let out = pveprobe()
            .arg("compare")
            .arg("--plot")
            .arg(plot)
            .args(results())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stdout(&out).is_empty(), "no table either");
        let out = pveprobe()
            .env("PATH", &path)
            .args(["cluster", "--nodes", "pve1,pve2", "--plot"])
            .arg(plot)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(!ran.exists(), "no node was run");
    }
    let out = pveprobe()
        .arg("compare")
        .arg("--plot")
        .arg(&link)
        .args(results())
        .output()
        .unwrap();
    assert_eq!(
        stderr(&out),
        format!(
            "pveprobe: --plot {}: is a symbolic link; not following it (name the file itself)\n",
            link.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
    // --dry-run runs nothing and writes nothing.
    let dry = dir.path().join("dry.svg");
    let out = pveprobe()
        .env("PATH", &path)
        .args(["cluster", "--dry-run", "--nodes", "pve1", "--plot"])
        .arg(&dry)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!dry.exists() && !ran.exists());
    // The same cluster with a writable FILE runs its nodes.
    let out = pveprobe()
        .env("PATH", &path)
        .args(["cluster", "--nodes", "pve1", "--plot"])
        .arg(&dry)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dry.exists() && ran.exists());
}

/// What pveprobe with `args` writes to stdout when stdout is a terminal
/// (a pseudo-terminal read here), with `path` as PATH.
fn on_a_terminal(args: &[&std::ffi::OsStr], path: &str) -> String {
    use std::io::Read as _;
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut child = pveprobe()
        .env("PATH", path)
        .args(args)
        .stdout(std::process::Stdio::from(pty.slave))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    drop(child);
    assert!(status.success(), "{args:?}: {status}");
    // With every copy of the terminal's end closed, reading the rest ends
    // in EIO.
    let mut master = std::fs::File::from(pty.master);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = master.read(&mut buf) {
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn on_a_terminal_the_text_tables_have_inline_bars_and_nothing_else_does() {
    let dir = workdir();
    let path = fake_ssh(dir.path());
    let os = |s: &str| std::ffi::OsString::from(s);
    let files: Vec<std::ffi::OsString> = results().map(|p| p.into_os_string()).into();
    let run = |args: &[std::ffi::OsString]| {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        on_a_terminal(&args, &path)
    };

    let mut compare = vec![os("compare")];
    compare.extend(files.iter().cloned());
    let text = run(&compare);
    let fsyncs = text
        .lines()
        .find(|l| l.starts_with("FSYNCS/SECOND"))
        .unwrap();
    assert!(fsyncs.contains("3050.00  ████████"), "{fsyncs}");
    let mut csv = vec![os("compare"), os("--output-format"), os("csv")];
    csv.extend(files.iter().cloned());
    let text = run(&csv);
    assert!(text.contains("fsyncs_per_second"), "{text}");
    assert_eq!(blocks(&text), 0, "{text}");

    let cluster = ["cluster", "--nodes", "pve1,pve2,pve3", "/var/lib/vz"].map(os);
    let text = run(&cluster);
    let pve2 = text.lines().find(|l| l.starts_with("pve2")).unwrap();
    assert!(blocks(pve2) > 0, "{text}");
    // To a file: the table without bars, stdout empty.
    let table = dir.path().join("table.txt");
    let mut to_file = cluster.to_vec();
    to_file.extend([os("--output"), table.clone().into_os_string()]);
    assert_eq!(run(&to_file), "");
    let written = std::fs::read_to_string(&table).unwrap();
    assert!(written.lines().any(|l| l.starts_with("pve2")), "{written}");
    assert_eq!(blocks(&written), 0, "{written}");
}
