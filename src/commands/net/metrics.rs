//! The network matrix as metrics: a subject per link, pair and way
//! (labels `link`, `from`, `to`), its throughput figures and the secure
//! migration channel's with ssh's CPU, and each pair's round trips on its
//! forward way. Both formats from one list (`output::metrics::gauges`).

use super::report::{NetReport, PairResult};
use crate::model::net::Way;
use crate::output::metrics::gauges::{self, Gauge, Subject};

const MIB: f64 = 1048576.0;

/// One way of a pair.
fn subject(p: &PairResult, way: Way) -> Subject {
    let (from, to) = p.ends(way);
    let mut gauges = Vec::new();
    if way == Way::Forward {
        gauges.extend(latency(p));
    }
    gauges.extend(throughput(p, way));
    Subject {
        labels: vec![
            ("link", p.link.clone()),
            ("from", from.to_string()),
            ("to", to.to_string()),
        ],
        gauges,
    }
}

/// The pair's round trips.
fn latency(p: &PairResult) -> Vec<Gauge> {
    let mut gauges = Vec::new();
    if let Some(l) = p.latency.as_ref().filter(|l| l.received > 0) {
        gauges.push(Gauge::new(
            (
                "rtt_p50_seconds",
                "Round trip of UDP datagrams, median, seconds (lower is better)",
            ),
            l.p50_ms / 1000.0,
            ("rtt_p50_ms", l.p50_ms),
        ));
        gauges.push(Gauge::new(
            (
                "rtt_p99_seconds",
                "Round trip of UDP datagrams, p99, seconds (lower is better)",
            ),
            l.p99_ms / 1000.0,
            ("rtt_p99_ms", l.p99_ms),
        ));
        gauges.push(Gauge::new(
            ("loss_ratio", "Probes lost, share (lower is better)"),
            l.loss_percent() / 100.0,
            ("loss_percent", l.loss_percent()),
        ));
    }
    gauges
}

/// One way's TCP figures and its secure channel.
fn throughput(p: &PairResult, way: Way) -> Vec<Gauge> {
    let mut gauges = Vec::new();
    for (one, name, field) in [
        (
            true,
            (
                "tcp_1_stream_bytes_per_second",
                "One TCP stream (insecure migration's path), bytes per second (higher is better)",
            ),
            "tcp_1_stream_mbit_per_s",
        ),
        (
            false,
            (
                "tcp_streams_bytes_per_second",
                "Several TCP streams at once, bytes per second (higher is better)",
            ),
            "tcp_streams_mbit_per_s",
        ),
    ] {
        if let Some(t) = p.tcp(way, one) {
            gauges.push(Gauge::new(
                name,
                t.mbit_per_s * 1e6 / 8.0,
                (field, t.mbit_per_s),
            ));
        }
    }
    if let Some(s) = p.secure_way(way) {
        gauges.push(Gauge::new(
            (
                "migration_secure_bytes_per_second",
                "One stream through ssh as a secure migration, bytes per second (higher is better)",
            ),
            s.mib_per_s * MIB,
            ("migration_secure_mib_per_s", s.mib_per_s),
        ));
        if let Some(i) = p.insecure_mib(way) {
            gauges.push(Gauge::new(
                ("migration_insecure_bytes_per_second", "One plain TCP stream as an insecure migration, bytes per second (higher is better)"),
                i * MIB,
                ("migration_insecure_mib_per_s", i),
            ));
        }
        for (v, name, field) in [
            (
                s.ssh_cpu_percent,
                (
                    "migration_ssh_cpu_ratio",
                    "ssh's share of one core on the sending node during the secure stream",
                ),
                "migration_ssh_cpu_percent",
            ),
            (
                s.sshd_cpu_percent,
                (
                    "migration_sshd_cpu_ratio",
                    "sshd's share of one core on the receiving node during the secure stream",
                ),
                "migration_sshd_cpu_percent",
            ),
        ] {
            if let Some(v) = v {
                gauges.push(Gauge::new(name, v / 100.0, (field, v)));
            }
        }
    }
    gauges
}

fn subjects(report: &NetReport, influx: bool) -> Vec<Subject> {
    report
        .pairs
        .iter()
        .filter(|p| p.status.measured())
        .flat_map(|p| [subject(p, Way::Forward), subject(p, Way::Back)])
        .filter(|s| !s.gauges.is_empty())
        .map(|mut s| {
            if influx {
                s.labels
                    .push(("cluster", report.cluster.clone().unwrap_or_default()));
            }
            s
        })
        .collect()
}

/// InfluxDB lines (measurement `pveprobe_net`, the run's time) or
/// Prometheus gauges (`pveprobe_net_*`, base units).
pub fn metrics(report: &NetReport, format: crate::output::Format) -> String {
    match format {
        crate::output::Format::Influx => gauges::influx(
            "pveprobe_net",
            &subjects(report, true),
            report.timestamp.as_deref().unwrap_or(""),
        ),
        _ => gauges::prometheus("pveprobe_net", &subjects(report, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::commands::net::report::tests::{
        migration_pair, one_stream, report_of, secure_stream,
    };
    use crate::model::net::{SecureStream, mib_per_s};

    #[test]
    fn each_way_carries_its_figures_and_the_secure_channel() {
        let mut p = migration_pair();
        p.throughput.push(one_stream(Way::Back, 8000.0));
        p.secure.push(SecureStream {
            ssh_cpu_percent: Some(99.0),
            ..secure_stream(Way::Back, 300.0)
        });
        let mut r = report_of(vec![p]);
        r.timestamp = Some("2026-12-06T05:00:00Z".into());
        let prom = metrics(&r, crate::output::Format::Prometheus);
        assert!(
            prom.contains("pveprobe_net_migration_secure_bytes_per_second{link=\"migration\",from=\"pve2\",to=\"pve1\"} 314572800"),
            "{prom}"
        );
        assert!(prom.contains("pveprobe_net_migration_ssh_cpu_ratio{link=\"migration\",from=\"pve2\",to=\"pve1\"} 0.99"), "{prom}");
        let insecure = mib_per_s(8000.0) * MIB;
        assert!(prom.contains(&format!("pveprobe_net_migration_insecure_bytes_per_second{{link=\"migration\",from=\"pve2\",to=\"pve1\"}} {insecure}")), "{prom}");
        assert!(
            prom.contains(
                "pveprobe_net_rtt_p50_seconds{link=\"migration\",from=\"pve1\",to=\"pve2\"}"
            ),
            "{prom}"
        );
        let influx = metrics(&r, crate::output::Format::Influx);
        assert!(
            influx.lines().any(|l| l
                .starts_with("pveprobe_net,cluster=testc,from=pve2,link=migration,to=pve1 ")
                && l.contains("migration_secure_mib_per_s=300")
                && l.ends_with(" 1796533200000000000")),
            "{influx}"
        );
    }
}
