//! The network matrix for people (text) and spreadsheets (CSV): a row
//! per link and pair of nodes, then the hints and knet's statistics.

use std::fmt::Write as _;

use super::report::{NetReport, PairResult};
use crate::model::net::Way;

fn ms(v: f64) -> String {
    format!("{v:.3}")
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn mbit(p: &PairResult, one: bool) -> String {
    match (p.tcp(Way::Forward, one), p.tcp(Way::Back, one)) {
        (None, None) => "-".into(),
        (f, b) => format!(
            "{}/{}",
            f.map_or("-".into(), |t| format!("{:.0}", t.mbit_per_s)),
            b.map_or("-".into(), |t| format!("{:.0}", t.mbit_per_s))
        ),
    }
}

/// One row's cells.
fn cells(p: &PairResult, streams: u32) -> Vec<String> {
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
    match &p.latency {
        Some(l) => row.extend([
            ms(l.p50_ms),
            ms(l.p99_ms),
            ms(l.max_ms),
            ms(l.jitter_ms),
            format!("{:.1}", l.loss_percent()),
        ]),
        None => row.extend(std::iter::repeat_n("-".to_string(), 5)),
    }
    row.push(format!("{}/{}", opt(p.a.mtu), opt(p.b.mtu)));
    row.push(match &p.path_mtu {
        Some(m) => format!("{}/{}", opt(m.forward), opt(m.back)),
        None => "-".into(),
    });
    row.push(mbit(p, true));
    row.push(if streams > 1 {
        mbit(p, false)
    } else {
        "-".into()
    });
    let flags = if p.hints.is_empty() { "" } else { "!" };
    row.push(flags.into());
    row
}

/// The matrix, its hints, and the nodes' knet statistics.
pub fn text(report: &NetReport) -> String {
    let s = &report.settings;
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
        "",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let rows: Vec<Vec<String>> = std::iter::once(head)
        .chain(report.pairs.iter().map(|p| cells(p, s.streams)))
        .collect();
    out.push_str(&crate::table::render(&rows, |_| crate::table::Align::Left));
    out.push_str(
        "(ms: round trips of UDP datagrams; MTU a/b: both ends' interfaces; PATH MTU: largest IP packet that crossed with DF set, a->b/b->a; TCP: Mbit/s a->b/b->a)\n",
    );
    let pair_hints: Vec<String> = report
        .pairs
        .iter()
        .flat_map(|p| {
            p.hints
                .iter()
                .map(move |h| format!("{}: {h}", p.instance()))
        })
        .collect();
    if !report.hints.is_empty() || !pair_hints.is_empty() {
        out.push_str("\nHINTS\n");
        for h in report.hints.iter().chain(&pair_hints) {
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
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The CSV header.
pub const CSV_HEADER: [&str; 22] = [
    "link",
    "kind",
    "a",
    "b",
    "a_address",
    "b_address",
    "status",
    "rtt_p50_ms",
    "rtt_p99_ms",
    "rtt_max_ms",
    "jitter_ms",
    "loss_percent",
    "a_mtu",
    "b_mtu",
    "path_mtu_forward",
    "path_mtu_back",
    "tcp_1_forward_mbit_per_s",
    "tcp_1_back_mbit_per_s",
    "tcp_n_forward_mbit_per_s",
    "tcp_n_back_mbit_per_s",
    "tcp_n_streams",
    "hints",
];

/// One row per link and pair.
pub fn csv(report: &NetReport) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(CSV_HEADER);
    let num = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let int = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    for p in &report.pairs {
        let measured = p.status.measured();
        let l = p.latency.as_ref().filter(|_| measured);
        let m = p.path_mtu.as_ref().filter(|_| measured);
        let t = |way, one| p.tcp(way, one).map(|t| t.mbit_per_s);
        let record = vec![
            p.link.clone(),
            p.kind.word().into(),
            p.a.node.clone(),
            p.b.node.clone(),
            p.a.address.map(|a| a.to_string()).unwrap_or_default(),
            p.b.address.map(|a| a.to_string()).unwrap_or_default(),
            p.status.word().into(),
            num(l.map(|l| l.p50_ms)),
            num(l.map(|l| l.p99_ms)),
            num(l.map(|l| l.max_ms)),
            num(l.map(|l| l.jitter_ms)),
            num(l.map(|l| l.loss_percent())),
            int(p.a.mtu),
            int(p.b.mtu),
            int(m.and_then(|m| m.forward)),
            int(m.and_then(|m| m.back)),
            num(t(Way::Forward, true)),
            num(t(Way::Back, true)),
            num(t(Way::Forward, false)),
            num(t(Way::Back, false)),
            p.tcp(Way::Forward, false)
                .map(|t| t.streams.to_string())
                .unwrap_or_default(),
            p.hints.join("; "),
        ];
        let _ = w.write_record(record);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::links::LinkKind;
    use crate::net::report::PairStatus;
    use crate::net::report::tests::{end, pair, report_of};

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
        let mut fast = pair(
            "migration",
            LinkKind::Migration,
            end("pve1", "eth2", 1500),
            end("pve2", "eth2", 1500),
        );
        fast.throughput = vec![crate::model::net::Throughput {
            way: Way::Forward,
            streams: 1,
            mbit_per_s: 941.4,
            bytes: 1,
            seconds: 1.0,
        }];
        let mut r = report_of(vec![ok, away, fast]);
        r.hints =
            vec!["pve1: corosync shares interface eth0 with migration traffic (migration)".into()];
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
            hints.starts_with("  pve1: corosync shares interface eth0"),
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
        let text = csv(&report());
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        assert_eq!(r.headers().unwrap().len(), CSV_HEADER.len());
        let rows: Vec<Vec<String>> = r
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(&rows[0][0..4], ["corosync0", "corosync", "pve1", "pve2"]);
        assert_eq!(&rows[0][12..16], ["1500", "1400", "1500", "1500"]);
        assert!(rows[0][21].contains("MTU mismatch"));
        assert_eq!(&rows[1][6], "not on link");
        assert_eq!(&rows[1][7], "", "no figures of a pair not measured");
        assert_eq!(&rows[2][16], "941.4");
    }

    /// The matrix, its CSV and its JSON document of a fixed report, pinned.
    #[test]
    fn outputs_of_a_fixed_report_are_pinned() {
        let mut r = report();
        r.figures = crate::net::report::figures(&r.pairs);
        crate::testutil::assert_snapshot("net.txt", &text(&r));
        crate::testutil::assert_snapshot("net.csv", &csv(&r));
        crate::testutil::assert_snapshot("net.json", &crate::output::json(&r, true));
    }
}
