//! The report of a run from several clients: its text, CSV, metrics and
//! the entries `compare` ranks.

use super::*;
use crate::commands::ceph::clients::wire::ClientFigure;
use crate::output::Document as _;

fn figure(mib_s: f64, iops: f64) -> BenchFigure {
    BenchFigure {
        block: 4 << 20,
        threads: 16,
        seconds: 3.0,
        ops: iops * 3.0,
        mib_s,
        iops,
        avg_lat_ms: Some(20.0),
        max_lat_ms: Some(80.0),
        per_second: vec![mib_s; 3],
    }
}

fn client(node: &str, mib_s: f64) -> ClientFigure {
    ClientFigure {
        node: node.into(),
        figure: Some(figure(mib_s, mib_s / 4.0)),
        skew_ms: Some(4.0),
        link: Some(crate::commands::ceph::network::CephLink {
            kind: "public".into(),
            network: "10.0.0.0/24".into(),
            interface: Some("vmbr1".into()),
            speed_mbps: Some(10000),
            shares_corosync: None,
            node: None,
        }),
        error: None,
    }
}

/// One pool: RADOS WRITE 4M from this node alone, then from three nodes
/// (pve3 given up on).
fn report() -> CephReport {
    let job = |clients: Vec<ClientFigure>, f: BenchFigure| PoolJob {
        key: "rados_write_4m".into(),
        label: "RADOS WRITE 4M".into(),
        figure: f,
        osds: Vec::new(),
        clients,
    };
    let clients = vec![
        client("pve1", 300.0),
        client("pve2", 200.0),
        ClientFigure {
            node: "pve3".into(),
            error: Some("gave no answer within 60 s of its 10 s: given up on".into()),
            ..ClientFigure::default()
        },
    ];
    let total = crate::commands::ceph::clients::total(&clients).unwrap();
    CephReport {
        schema_version: SCHEMA_VERSION,
        kind: KIND.into(),
        timestamp: "2026-12-05T09:00:00Z".into(),
        run_id: "pveprobe-pve1-1-2".into(),
        fsid: Some("f".into()),
        pools: vec![PoolResult {
            name: "rbd".into(),
            jobs: vec![job(Vec::new(), figure(250.0, 62.5)), job(clients, total)],
            ..PoolResult::default()
        }],
        ..CephReport::default()
    }
}

#[test]
fn the_text_puts_each_total_beside_the_one_client_job_and_a_line_per_client() {
    let text = report().text();
    assert!(
        text.contains("FROM 3 CLIENTS AT ONCE (pve1, pve2, pve3); their benches started within 0 ms of each other"),
        "{text}"
    );
    let total = text
        .lines()
        .filter(|l| l.trim_start().starts_with("RADOS WRITE 4M"))
        .nth(1)
        .unwrap();
    assert!(total.contains("500.0"), "{total}");
    assert!(total.contains("one client 250.0 MiB/s: x2.00"), "{total}");
    let pve2 = text.lines().find(|l| l.contains("  pve2")).unwrap();
    assert!(
        pve2.contains("200.0") && pve2.contains("vmbr1 10000 Mb/s, started +4 ms"),
        "{pve2}"
    );
    let pve3 = text.lines().find(|l| l.contains("pve3 ")).unwrap();
    assert!(pve3.contains("not measured: gave no answer"), "{pve3}");
}

#[test]
fn the_csv_has_the_total_and_each_clients_row() {
    let csv = report().csv(false);
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows.iter()
            .any(|r| r.contains(",pool rbd,rados_write_4m,") && r.contains(",250.000,")),
        "{csv}"
    );
    assert!(
        rows.iter()
            .any(|r| r.contains(",pool rbd from 3 clients,rados_write_4m,")
                && r.contains(",500.000,")),
        "{csv}"
    );
    assert!(rows.iter().any(|r| r.contains(",pool rbd client pve2,rados_write_4m,") && r.contains(",200.000,")), "{csv}");
    // The client without a figure has its row, empty.
    assert!(
        rows.iter()
            .any(|r| r.contains(",pool rbd client pve3,rados_write_4m,,,,")),
        "{csv}"
    );
}

#[test]
fn the_metrics_have_each_pool_job_and_each_clients_part() {
    let prom = report().prometheus();
    assert!(
        prom.contains("pveprobe_ceph_pool_bytes_per_second{pool=\"rbd\",job=\"rados_write_4m\",clients=\"1\",client=\"total\"} 262144000"),
        "{prom}"
    );
    assert!(
        prom.contains("pveprobe_ceph_pool_bytes_per_second{pool=\"rbd\",job=\"rados_write_4m\",clients=\"3\",client=\"pve2\"} 209715200"),
        "{prom}"
    );
    assert!(!prom.contains("client=\"pve3\""), "{prom}");
    let influx = report().influx();
    assert!(
        influx.contains("object=ceph_pool") && influx.contains("client=pve1"),
        "{influx}"
    );
}

#[test]
fn a_job_from_several_clients_is_an_entry_of_its_own_that_says_which() {
    use crate::figure::{Figure, Method};
    let result = report().as_result();
    let write = Figure::from_key("ceph_rados_write_4m").unwrap();
    let alone = result.method(write, Some("rbd"), Method::Clients);
    assert_eq!(alone.as_deref(), Some("one client"));
    let many = result.method(write, Some("rbd from clients"), Method::Clients);
    assert_eq!(many.as_deref(), Some("3 clients: pve1, pve2, pve3"));
    let values: Vec<f64> = result.extended.iter().map(|x| x.value).collect();
    assert_eq!(values, [250.0, 500.0]);
}

#[test]
fn two_runs_from_other_clients_are_unlike() {
    use crate::figure::Figure;
    let a = report().as_result();
    let mut other = report();
    other.pools[0].jobs[1].clients.truncate(2);
    let b = other.as_result();
    let value = &Figure::from_key("ceph_rados_write_4m")
        .unwrap()
        .spec()
        .values[0];
    let unlike = crate::results::unlike(value, Some("rbd from clients"), &a, &b).unwrap();
    assert_eq!(unlike.what, "clients");
    assert_eq!(unlike.this, "2 clients: pve1, pve2");
    // The one-client jobs of both are alike.
    assert!(crate::results::unlike(value, Some("rbd"), &a, &b).is_none());
}
