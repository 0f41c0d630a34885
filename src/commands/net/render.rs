//! The network matrix for people (text) and spreadsheets (CSV): a row
//! per link and pair of nodes, then the hints and knet's statistics.

use std::fmt::Write as _;

use super::report::{NetReport, PairResult};
use crate::figure::projection::{Context, Project};
use crate::figure::{Figure, Value};
use crate::model::net::Way;

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// A pair's readings of the network's values, in the list's order: what
/// its projection gives for each, or `None`.
fn readings(p: &PairResult) -> Vec<(&'static Value, Option<f64>)> {
    let context = Context::default();
    Figure::NETWORK
        .iter()
        .flat_map(|f| {
            let entry = p.project(*f, &context).entries.into_iter().next();
            f.spec()
                .values
                .iter()
                .map(move |v| (v, entry.as_ref().and_then(|e| e.reading(v.field))))
        })
        .collect()
}

/// One row's cells: the round trips' values one to a column, each figure
/// measured each way as `a->b/b->a`, with the list's decimals.
fn cells(p: &PairResult, streams: u32, secure_column: bool) -> Vec<String> {
    let mut row = vec![p.link.clone(), format!("{}-{}", p.a.node, p.b.node)];
    if !p.status.measured() {
        row.push(format!(
            "{}{}",
            p.status.word(),
            p.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        ));
        return row;
    }
    let read = readings(p);
    let cell = |key: &str| {
        read.iter()
            .find(|(v, _)| v.key == key)
            .and_then(|(v, x)| x.map(|x| v.format(x)))
    };
    for key in [
        "net_rtt",
        "net_rtt_p99",
        "net_rtt_max",
        "net_jitter",
        "net_loss",
    ] {
        row.push(cell(key).unwrap_or_else(|| "-".into()));
    }
    row.push(format!("{}/{}", opt(p.a.mtu), opt(p.b.mtu)));
    let each_way = |figure: Figure| {
        let forward = figure.spec().values[0].key;
        let back = figure.spec().values[1].key;
        cell(forward).map_or_else(
            || "-".to_string(),
            |f| format!("{f}/{}", cell(back).unwrap_or_else(|| "-".into())),
        )
    };
    row.push(each_way(Figure::NetPathMtu));
    row.push(each_way(Figure::NetTcp));
    row.push(if streams > 1 {
        each_way(Figure::NetTcpStreams)
    } else {
        "-".into()
    });
    if secure_column {
        row.push(each_way(Figure::NetMigrationSecure));
    }
    let flags = if p.hints.is_empty() { "" } else { "!" };
    row.push(flags.into());
    row
}

/// The matrix, its hints, and the nodes' knet statistics.
pub fn text(report: &NetReport) -> String {
    let mut out = matrix(report);
    out.push_str(&migration(report));
    out.push_str(&moves(report));
    out.push_str(&findings(report));
    out.push_str(&knet(report));
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The title line and the matrix of pairs.
fn matrix(report: &NetReport) -> String {
    let s = &report.settings;
    let secure_column = report.pairs.iter().any(|p| !p.secure.is_empty());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "NETWORK {}: {} nodes, {} links; {} probes per pair at {}/s{}",
        report.cluster.as_deref().unwrap_or("(no cluster name)"),
        report.nodes.len(),
        report.links.len(),
        s.count,
        s.rate_pps,
        if s.throughput {
            format!(", TCP {} s per run, 1 and {} streams", s.seconds, s.streams)
        } else {
            String::new()
        }
    );
    let head: Vec<String> = [
        "LINK",
        "PAIR",
        "RTT p50",
        "p99",
        "max ms",
        "JITTER",
        "LOSS %",
        "MTU a/b",
        "PATH MTU ->/<-",
        "TCP 1 ->/<-",
        &format!("TCP {} ->/<-", s.streams),
        "SECURE ->/<-",
        "",
    ]
    .iter()
    .filter(|h| secure_column || **h != "SECURE ->/<-")
    .map(|h| h.to_string())
    .collect();
    let rows: Vec<Vec<String>> = std::iter::once(head)
        .chain(
            report
                .pairs
                .iter()
                .map(|p| cells(p, s.streams, secure_column)),
        )
        .collect();
    out.push_str(&crate::output::table::render(&rows, |_| {
        crate::output::table::Align::Left
    }));
    out.push_str(
        "(ms: round trips of UDP datagrams; MTU a/b: both ends' interfaces; PATH MTU: largest IP packet that crossed with DF set, a->b/b->a; TCP: Mbit/s a->b/b->a",
    );
    out.push_str(if secure_column {
        "; SECURE: MiB/s a->b/b->a of one stream through ssh, as a secure migration)\n"
    } else {
        ")\n"
    });
    out
}

/// Each way of the migration link's pairs: secure and insecure side by
/// side in MiB/s, what capped the secure one, ssh's CPU and cipher.
fn migration(report: &NetReport) -> String {
    let mut out = String::new();
    let pairs: Vec<_> = report
        .pairs
        .iter()
        .filter(|p| !p.secure.is_empty())
        .collect();
    if pairs.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nMIGRATION (one stream each way, as a VM's memory moves; secure: through ssh as qemu-server opens it; insecure: plain TCP; this cluster migrates {}{})",
        report.migration_type.as_deref().unwrap_or("secure"),
        if report.links.iter().any(|l| l.cluster_addresses) {
            ", over the nodes' cluster addresses: datacenter.cfg names no migration network"
        } else {
            ""
        }
    );
    for p in pairs {
        for s in &p.secure {
            let (from, to) = p.ends(s.way);
            let insecure = p.insecure_mib(s.way);
            let gain = insecure
                .filter(|_| s.mib_per_s > 0.0)
                .map(|i| format!(" ({:.1}x)", i / s.mib_per_s))
                .unwrap_or_default();
            let cap = match p.cap(s) {
                super::migration::Cap::Cpu {
                    node,
                    what,
                    percent,
                    ..
                } => format!("capped by {what}'s CPU ({percent:.0}% of a core on {node})"),
                super::migration::Cap::Link => "capped by the link".into(),
                super::migration::Cap::Unknown => "cap unclear".into(),
            };
            let pct = |v: Option<f64>| v.map_or_else(|| "?".into(), |v| format!("{v:.0}%"));
            let cipher = match (s.cipher.as_deref(), s.mac.as_deref()) {
                (Some(c), Some(m)) if m != "<implicit>" => format!("{c} with {m}"),
                (Some(c), _) => c.to_string(),
                (None, _) => "cipher unknown".into(),
            };
            let speed = s
                .cipher_mib_per_s
                .map(|v| format!(", {v:.0} MiB/s on one core of {from}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} {from}->{to}: secure {}, insecure {}{gain}: {cap}; ssh {} of a core on {from}, sshd {} on {to}; {cipher}{speed}",
                p.link,
                mib(s.mib_per_s),
                insecure.map_or_else(|| "-".into(), mib),
                pct(s.ssh_cpu_percent),
                pct(s.sshd_cpu_percent),
            );
        }
    }
    out
}

/// Each node's largest running VMs and how long each would take to move.
fn moves(report: &NetReport) -> String {
    let mut out = String::new();
    if report.moves.is_empty() {
        return out;
    }
    out.push_str(
        "\nMOVES (each node's largest running VMs; memory counted once: a busy VM's memory changes while it moves and is sent again, at a rate not guessed here; local disks always through ssh)\n",
    );
    let t = |s: Option<f64>| s.map_or_else(|| "-".into(), crate::model::human::duration);
    for m in &report.moves {
        let name = m
            .name
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let disks = if m.local_disk_bytes > 0 {
            format!(
                " and {:.1} GiB of local disks",
                m.local_disk_bytes as f64 / f64::from(1u32 << 30)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  VM {}{name}, {:.1} GiB memory{disks}: {}->{} secure {}, insecure {}, the link's TCP {}",
            m.vmid,
            m.memory_mib as f64 / 1024.0,
            m.from,
            m.to,
            t(m.secure_seconds),
            t(m.insecure_seconds),
            t(m.link_seconds),
        );
    }
    out
}

/// The migration path as a picture: a panel per pair and way with its
/// secure, insecure and link figures (MiB/s); a secure bar that ssh's CPU
/// capped is marked.
pub fn picture(report: &NetReport) -> Result<String, crate::output::plot::PlotError> {
    use crate::output::plot::{Bar, Panel, PlotError, panels_svg};
    let mut panels = Vec::new();
    for p in report.pairs.iter().filter(|p| !p.secure.is_empty()) {
        for s in &p.secure {
            let (from, to) = p.ends(s.way);
            let link = p
                .tcp(s.way, false)
                .map(|t| (t.streams, crate::model::net::mib_per_s(t.mbit_per_s)));
            let bar = |name: String, value: Option<f64>, outlier: bool| Bar {
                text: value.map_or_else(|| "-".into(), |v| format!("{v:.0}")),
                name,
                value,
                runs: None,
                outlier,
            };
            let cpu = matches!(p.cap(s), super::migration::Cap::Cpu { .. });
            panels.push(Panel {
                title: format!("{} {from}->{to}", p.link),
                unit: "MiB/s".into(),
                better: Some(crate::figure::Better::Higher),
                bars: vec![
                    bar("secure".into(), Some(s.mib_per_s), cpu),
                    bar("insecure".into(), p.insecure_mib(s.way), false),
                    bar(
                        link.map_or_else(|| "link".into(), |(n, _)| format!("link, {n} streams")),
                        link.map(|l| l.1),
                        false,
                    ),
                ],
            });
        }
    }
    if panels.is_empty() {
        return Err(PlotError::Empty(
            "no migration path was measured (the migration link, with --net-throughput)",
        ));
    }
    panels_svg(
        &format!(
            "Migration path of {}: one stream each way",
            report.cluster.as_deref().unwrap_or("the nodes")
        ),
        "secure capped by ssh's CPU",
        &panels,
    )
}

/// MiB/s with a decimal below 100.
fn mib(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1} MiB/s")
    } else {
        format!("{v:.0} MiB/s")
    }
}

/// The hints, the links without throughput, and the nodes that did not answer.
fn findings(report: &NetReport) -> String {
    let s = &report.settings;
    let mut out = String::new();
    let pair_hints = report.pairs.iter().flat_map(|p| &p.hints);
    let hints: Vec<_> = report.hints.iter().chain(pair_hints).collect();
    if !hints.is_empty() {
        out.push_str("\nHINTS\n");
        for h in hints {
            let _ = writeln!(out, "  {h}");
        }
    }
    let skipped: Vec<String> = report
        .pairs
        .iter()
        .filter(|_| s.throughput)
        .filter_map(|p| {
            p.throughput_skipped
                .as_ref()
                .map(|w| format!("{}: {w}", p.link))
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !skipped.is_empty() {
        out.push_str("\nNO THROUGHPUT\n");
        for w in skipped {
            let _ = writeln!(out, "  {w}");
        }
    }
    let down: Vec<_> = report
        .nodes
        .iter()
        .filter(|n| !n.status.answered())
        .collect();
    if !down.is_empty() {
        out.push_str("\nNODES\n");
        for n in down {
            let _ = writeln!(
                out,
                "  {}: {}: {}",
                n.name,
                n.status.word(),
                n.detail.as_deref().unwrap_or("")
            );
        }
    }
    out
}

/// The nodes' knet statistics, as each node sees its links.
fn knet(report: &NetReport) -> String {
    let mut out = String::new();
    let knet: Vec<_> = report
        .nodes
        .iter()
        .filter_map(|n| Some((n, n.knet.as_ref()?)))
        .collect();
    if !knet.is_empty() {
        out.push_str("\nKNET (corosync-cmapctl -m stats, as each node sees its links)\n");
        // knet names nodes by corosync's nodeid.
        let name_of = |id: u32| {
            report
                .nodes
                .iter()
                .find(|n| n.corosync_nodeid == Some(id))
                .map_or_else(|| format!("node {id}"), |n| n.name.clone())
        };
        for (n, k) in knet {
            for l in &k.links {
                let _ = writeln!(
                    out,
                    "  {} -> {} link {}: {}, latency ave/max {}/{} us, down {} times, mtu {}",
                    n.name,
                    name_of(l.node_id),
                    l.link,
                    match l.connected {
                        Some(true) => "connected",
                        Some(false) => "NOT connected",
                        None => "?",
                    },
                    opt(l.latency_ave_us),
                    opt(l.latency_max_us),
                    opt(l.down_count),
                    opt(l.mtu)
                );
            }
        }
    }
    out
}

/// The CSV columns before the figures' and after them; the figures'
/// are the network values' columns of the list, in its order.
pub const CSV_BEFORE: [&str; 9] = [
    "link",
    "kind",
    "a",
    "b",
    "a_address",
    "b_address",
    "status",
    "a_mtu",
    "b_mtu",
];
pub const CSV_AFTER: [&str; 2] = ["tcp_n_streams", "hints"];

/// The CSV header.
pub fn csv_header() -> Vec<&'static str> {
    let figures = Figure::NETWORK
        .iter()
        .flat_map(|f| f.spec().values.iter().map(|v| v.column));
    CSV_BEFORE
        .into_iter()
        .chain(figures)
        .chain(CSV_AFTER)
        .collect()
}

/// One row per link and pair.
pub fn csv(report: &NetReport, header: bool) -> String {
    let mut records = Vec::new();
    let int = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    for p in &report.pairs {
        let mut record = vec![
            p.link.clone(),
            p.kind.word().into(),
            p.a.node.clone(),
            p.b.node.clone(),
            p.a.address.map(|a| a.to_string()).unwrap_or_default(),
            p.b.address.map(|a| a.to_string()).unwrap_or_default(),
            p.status.word().into(),
            int(p.a.mtu),
            int(p.b.mtu),
        ];
        record.extend(
            readings(p)
                .into_iter()
                .map(|(_, x)| x.map(|x| x.to_string()).unwrap_or_default()),
        );
        record.push(
            p.tcp(Way::Forward, false)
                .map(|t| t.streams.to_string())
                .unwrap_or_default(),
        );
        record.push(crate::model::hint::csv_cell(&p.hints));
        records.push(record);
    }
    crate::output::csv::table(header.then(csv_header), records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::net::links::LinkKind;
    use crate::commands::net::report::PairStatus;
    use crate::commands::net::report::tests::{end, migration_pair, pair, report_of};

    fn report() -> NetReport {
        let mut ok = pair(
            "corosync0",
            LinkKind::Corosync,
            end("pve1", "eth1", 1500),
            end("pve2", "eth1", 1400),
        );
        ok.hints = ok.hints_of();
        let mut away = pair(
            "migration",
            LinkKind::Migration,
            end("pve1", "eth2", 1500),
            end("pve3", "eth2", 1500),
        );
        away.status = PairStatus::NotOnLink;
        away.detail = Some("pve3 has no address in 10.2.0.0/24".into());
        let mut fast = migration_pair();
        fast.throughput = vec![crate::commands::net::report::tests::one_stream(
            Way::Forward,
            941.4,
        )];
        // Through ssh, at the link's 112 MiB/s, ssh mostly idle.
        fast.secure = vec![crate::model::net::SecureStream {
            cipher: Some("aes128-gcm@openssh.com".into()),
            mac: Some("<implicit>".into()),
            ssh_cpu_percent: Some(31.0),
            sshd_cpu_percent: Some(24.5),
            cipher_mib_per_s: Some(4110.0),
            aes_ni: Some(true),
            ..crate::commands::net::report::tests::secure_stream(Way::Forward, 110.2)
        }];
        let mut r = report_of(vec![ok, away, fast]);
        r.moves = vec![crate::model::net::Move {
            vmid: 100,
            name: Some("db1".into()),
            from: "pve1".into(),
            to: "pve2".into(),
            link: "migration".into(),
            memory_mib: 16384,
            local_disk_bytes: 32 << 30,
            secure_seconds: Some(446.0),
            insecure_seconds: Some(443.0),
            link_seconds: Some(438.0),
        }];
        r.hints = vec![crate::model::hint::Hint::new(
            "corosync-shares-network",
            "pve1",
            "corosync shares interface eth0 with migration traffic (migration)",
        )];
        r.figures = Vec::new();
        r
    }

    #[test]
    fn the_matrix_has_a_row_per_link_and_pair_then_the_hints() {
        let text = text(&report());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("NETWORK testc: 0 nodes"), "{text}");
        assert!(
            lines[1].starts_with("LINK") && lines[1].contains("TCP 4 ->/<-"),
            "{text}"
        );
        let row = lines[2];
        assert!(row.starts_with("corosync0  pve1-pve2"), "{row}");
        for cell in [
            "0.050",
            "0.100",
            "0.200",
            "0.010",
            "0.0",
            "1500/1400",
            "1500/1500",
            "!",
        ] {
            assert!(row.split_whitespace().any(|c| c == cell), "{cell} in {row}");
        }
        assert!(
            lines[3].contains("pve1-pve3") && lines[3].contains("not on link: pve3 has no address"),
            "{text}"
        );
        assert!(lines[4].contains("941/-"), "{text}");
        let hints = text.split("HINTS\n").nth(1).unwrap();
        assert!(
            hints.starts_with("  [corosync-shares-network] pve1: corosync shares interface eth0"),
            "{text}"
        );
        assert!(
            hints.contains("corosync0 pve1-pve2: MTU mismatch"),
            "{text}"
        );
        assert!(
            text.contains("NO THROUGHPUT") || !text.contains("corosync0: "),
            "{text}"
        );
    }

    #[test]
    fn csv_is_a_row_per_link_and_pair() {
        let text = csv(&report(), true);
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        assert_eq!(header, csv_header());
        // The figures' columns are the list's.
        for v in Figure::NETWORK.iter().flat_map(|f| f.spec().values) {
            assert!(header.iter().any(|h| h == v.column), "{}", v.column);
        }
        let rows: Vec<std::collections::BTreeMap<String, String>> = r
            .records()
            .map(|r| {
                header
                    .iter()
                    .cloned()
                    .zip(r.unwrap().iter().map(str::to_string))
                    .collect()
            })
            .collect();
        assert_eq!(rows.len(), 3);
        let cells = |row: usize, columns: &[&str]| -> Vec<String> {
            columns.iter().map(|c| rows[row][*c].clone()).collect()
        };
        assert_eq!(
            cells(0, &["link", "kind", "a", "b"]),
            ["corosync0", "corosync", "pve1", "pve2"]
        );
        assert_eq!(
            cells(
                0,
                &[
                    "a_mtu",
                    "b_mtu",
                    "net_path_mtu_bytes",
                    "net_path_mtu_back_bytes"
                ]
            ),
            ["1500", "1400", "1500", "1500"]
        );
        assert!(rows[0]["hints"].contains("MTU mismatch"));
        assert_eq!(rows[1]["status"], "not on link");
        assert_eq!(
            rows[1]["net_rtt_p50_ms"], "",
            "no figures of a pair not measured"
        );
        assert_eq!(rows[2]["net_tcp_mbit_per_s"], "941.4");
    }

    /// The matrix, its CSV and its JSON document of a fixed report, pinned.
    #[test]
    fn the_picture_has_a_panel_per_way_and_marks_a_cpu_bound_secure_bar() {
        use crate::output::plot::tests::{panel, png, shapes};
        let mut r = report();
        // pve1->pve2 as `report()` has it (at the link); a way back capped
        // by ssh: 300 MiB/s at 99%, 9,400 Mbit/s plain.
        let fast = &mut r.pairs[2];
        fast.throughput
            .push(crate::commands::net::report::tests::one_stream(
                Way::Back,
                9400.0,
            ));
        let mut back = fast.secure[0].clone();
        back.way = Way::Back;
        back.mib_per_s = 300.0;
        back.ssh_cpu_percent = Some(99.0);
        fast.secure.push(back);
        let svg = picture(&r).unwrap();
        png(&svg).unwrap();
        let all = shapes(&svg);
        for title in ["migration pve1->pve2", "migration pve2->pve1"] {
            let texts: Vec<String> = panel(&all, title)
                .iter()
                .filter(|s| s.tag == "text")
                .map(|s| s.text.clone())
                .collect();
            for name in ["secure", "insecure"] {
                assert!(texts.iter().any(|t| t == name), "{title}: {texts:?}");
            }
        }
        let marked = |title: &str| {
            panel(&all, title)
                .iter()
                .any(|s| s.tag == "text" && s.text.ends_with('!'))
        };
        assert!(marked("migration pve2->pve1"));
        assert!(!marked("migration pve1->pve2"));
        // Nothing measured: said, not drawn.
        r.pairs.iter_mut().for_each(|p| p.secure.clear());
        assert!(picture(&r).is_err());
    }

    #[test]
    fn outputs_of_a_fixed_report_are_pinned() {
        let mut r = report();
        r.figures = crate::commands::net::report::figures(&r.pairs);
        crate::model::testutil::assert_snapshot("net.txt", &text(&r));
        crate::model::testutil::assert_snapshot("net.csv", &csv(&r, true));
        crate::model::testutil::assert_snapshot("net.json", &crate::output::json(&r, true));
    }
}
