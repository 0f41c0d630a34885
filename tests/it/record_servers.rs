//! `record --metric-servers`: each interval sent to the servers of a
//! status.cfg as PVE's own pvestatd sends, to Debian's real InfluxDB 1.6
//! (its UDP listener, and its HTTP API, which has only v1's `/write`) and
//! Graphite's carbon-cache (TCP and UDP), each started by the test on
//! loopback in a private directory and queried back; and, as InfluxDB 1.6
//! has no v2 API, the v2 request (URL, token, body) checked by a listener
//! of the test's own against InfluxData's documented API
//! (https://docs.influxdata.com/influxdb/v2/api/#operation/PostWrite:
//! `POST /api/v2/write?org=&bucket=`, `Authorization: Token`, line
//! protocol in the body).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{needs_tools, pveprobe, stderr, stdout, workdir};

/// A port free on loopback now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server the test started, stopped on every way out.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} not ready in 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One HTTP/1.1 exchange on loopback: the status line's code and the body.
fn http(port: u16, method: &str, path: &str) -> (u16, String) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    c.read_to_string(&mut text).unwrap();
    let code = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

fn influxd(dir: &Path) -> (Daemon, u16, u16) {
    let (http_port, udp_port, rpc) = (free_port(), free_port(), free_port());
    let conf = dir.join("influxdb.conf");
    let d = dir.display();
    std::fs::write(
        &conf,
        format!(
            "reporting-disabled = true\nbind-address = \"127.0.0.1:{rpc}\"\n\
             [meta]\n  dir = \"{d}/meta\"\n\
             [data]\n  dir = \"{d}/data\"\n  wal-dir = \"{d}/wal\"\n  query-log-enabled = false\n\
             [http]\n  enabled = true\n  bind-address = \"127.0.0.1:{http_port}\"\n  log-enabled = false\n\
             [monitor]\n  store-enabled = false\n\
             [continuous_queries]\n  enabled = false\n\
             [[udp]]\n  enabled = true\n  bind-address = \"127.0.0.1:{udp_port}\"\n  database = \"proxmox\"\n  batch-size = 10\n  batch-timeout = \"100ms\"\n"
        ),
    )
    .unwrap();
    let child = Command::new("influxd")
        .arg("-config")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("influxd.log")).unwrap())
        .spawn()
        .unwrap();
    let d = Daemon(child);
    until("influxd", || {
        TcpStream::connect(("127.0.0.1", http_port)).is_ok()
            && http(http_port, "GET", "/ping").0 == 204
    });
    (d, http_port, udp_port)
}

fn carbon(dir: &Path) -> (Daemon, u16, u16) {
    let (line, udp, pickle, query) = (free_port(), free_port(), free_port(), free_port());
    let d = dir.display();
    std::fs::write(
        dir.join("storage-schemas.conf"),
        "[all]\npattern = .*\nretentions = 1s:1h\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("carbon.conf"),
        format!(
            "[cache]\nSTORAGE_DIR = {d}/storage/\nLOCAL_DATA_DIR = {d}/storage/whisper/\n\
             WHITELISTS_DIR = {d}/storage/lists/\nCONF_DIR = {d}/\nLOG_DIR = {d}/log/\nPID_DIR = {d}/\n\
             ENABLE_LOGROTATION = False\nUSER =\nMAX_CACHE_SIZE = inf\nMAX_UPDATES_PER_SECOND = 10000\n\
             MAX_CREATES_PER_MINUTE = inf\nLINE_RECEIVER_INTERFACE = 127.0.0.1\nLINE_RECEIVER_PORT = {line}\n\
             ENABLE_UDP_LISTENER = True\nUDP_RECEIVER_INTERFACE = 127.0.0.1\nUDP_RECEIVER_PORT = {udp}\n\
             PICKLE_RECEIVER_INTERFACE = 127.0.0.1\nPICKLE_RECEIVER_PORT = {pickle}\n\
             CACHE_QUERY_INTERFACE = 127.0.0.1\nCACHE_QUERY_PORT = {query}\nLOG_UPDATES = False\n\
             WHISPER_AUTOFLUSH = True\n"
        ),
    )
    .unwrap();
    for sub in ["storage/whisper", "storage/lists", "log"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let child = Command::new("carbon-cache")
        .arg(format!("--config={d}/carbon.conf"))
        .arg(format!("--pidfile={d}/carbon.pid"))
        .arg(format!("--logdir={d}/log"))
        .args(["--nodaemon", "start"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("carbon.err")).unwrap())
        .spawn()
        .unwrap();
    let c = Daemon(child);
    until("carbon-cache", || {
        TcpStream::connect(("127.0.0.1", line)).is_ok()
    });
    (c, line, udp)
}

/// What a v2 client sent: each request's line and headers, and its body.
type Requests = Arc<Mutex<Vec<(String, Vec<String>, String)>>>;

/// A listener that answers every request 204, as InfluxDB 2's write does.
fn v2_listener() -> (u16, Requests) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let got: Requests = Arc::default();
    let keep = got.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { return };
            let keep = keep.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(c.try_clone().unwrap());
                let mut w = c;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut headers = Vec::new();
                    loop {
                        let mut h = String::new();
                        r.read_line(&mut h).unwrap();
                        if h.trim().is_empty() {
                            break;
                        }
                        headers.push(h.trim().to_string());
                    }
                    let len: usize = headers
                        .iter()
                        .find_map(|h| {
                            h.to_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    let mut body = vec![0; len];
                    r.read_exact(&mut body).unwrap();
                    keep.lock().unwrap().push((
                        line.trim().to_string(),
                        headers,
                        String::from_utf8(body).unwrap(),
                    ));
                    w.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
                        .unwrap();
                }
            });
        }
    });
    (port, got)
}

/// Points of `pveprobe_top`'s node line in database `db`.
fn node_points(http_port: u16, db: &str) -> usize {
    node_field(http_port, db, "count", "iowait_pct")
        .and_then(|n| n.as_u64())
        .unwrap_or(0) as usize
}

/// `how` (InfluxQL's count, last, ...) of `field` of `pveprobe_top`'s
/// node line in database `db`.
fn node_field(http_port: u16, db: &str, how: &str, field: &str) -> Option<serde_json::Value> {
    let (code, body) = http(
        http_port,
        "GET",
        &format!(
            "/query?db={db}&q=SELECT%20{how}(%22{field}%22)%20FROM%20%22pveprobe_top%22%20WHERE%20%22object%22%3D%27top_node%27"
        ),
    );
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v.pointer("/results/0/series/0/values/0/1").cloned()
}

/// The values of a whisper file (None left out).
fn whisper_points(file: &Path) -> usize {
    if !file.exists() {
        return 0;
    }
    let from = jiff::Timestamp::now().as_second() - 600;
    let out = Command::new("whisper-fetch")
        .arg(format!("--from={from}"))
        .arg(file)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.ends_with("None"))
        .count()
}

#[test]
#[ignore = "needs Debian's influxdb and graphite-carbon (scripts/install-test-deps; scripts/test runs it)"]
fn each_interval_reaches_influxdb_and_graphite_as_pve_sends_and_v2_as_documented() {
    needs_tools(
        &["influxd", "carbon-cache", "whisper-fetch"],
        "influxdb, graphite-carbon",
    );
    let dir = workdir();
    let d = dir.path();
    for sub in ["influx", "carbon", "pve/priv/metricserver", "qmp"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    let (_influxd, influx_http, influx_udp) = influxd(&d.join("influx"));
    let (code, body) = http(influx_http, "POST", "/query?q=CREATE%20DATABASE%20pvehttp");
    assert_eq!(code, 200, "{body}");
    let (_carbon, graphite_tcp, graphite_udp) = carbon(&d.join("carbon"));
    let (v2_port, v2) = v2_listener();
    std::fs::write(
        d.join("pve/status.cfg"),
        format!(
            "influxdb: udp\n\tserver 127.0.0.1\n\tport {influx_udp}\n\n\
             influxdb: v1http\n\tserver 127.0.0.1\n\tport {influx_http}\n\tinfluxdbproto http\n\tbucket pvehttp\n\n\
             influxdb: v2\n\tserver 127.0.0.1\n\tport {v2_port}\n\tinfluxdbproto http\n\torganization myorg\n\tbucket mybucket\n\tapi-path-prefix influx\n\n\
             graphite: gtcp\n\tserver 127.0.0.1\n\tport {graphite_tcp}\n\tproto tcp\n\n\
             graphite: gudp\n\tserver 127.0.0.1\n\tport {graphite_udp}\n\tpath pveudp\n\n\
             influxdb: off\n\tserver 127.0.0.1\n\tport 9\n\tdisable 1\n"
        ),
    )
    .unwrap();
    std::fs::write(d.join("pve/priv/metricserver/v2.pw"), "s3cret-token\n").unwrap();
    let out = pveprobe()
        .args([
            "record",
            "--metric-servers",
            "--interval",
            "1",
            "--count",
            "3",
            "--dir",
        ])
        .arg(d.join("store"))
        .arg("--pve-dir")
        .arg(d.join("pve"))
        .arg("--qmp-dir")
        .arg(d.join("qmp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("sending each interval to influxdb udp 127.0.0.1"),
        "{err}"
    );
    assert!(
        !err.contains("127.0.0.1:9"),
        "a disabled server was sent to: {err}"
    );
    assert!(!err.contains("metric server"), "a server failed: {err}");
    assert!(stdout(&out).contains("3 interval(s) recorded"));

    // InfluxDB 1.6 over UDP and over HTTP (its v1 API, after the v2 404):
    // every interval's node line, the first included.
    until("the UDP points", || {
        node_points(influx_http, "proxmox") >= 3
    });
    assert_eq!(node_points(influx_http, "proxmox"), 3);
    assert_eq!(node_points(influx_http, "pvehttp"), 3);
    let (_, tags) = http(
        influx_http,
        "GET",
        "/query?db=proxmox&q=SHOW%20TAG%20VALUES%20FROM%20pveprobe_top%20WITH%20KEY%20%3D%20%22object%22",
    );
    assert!(
        tags.contains("top_node") && tags.contains("top_disk"),
        "{tags}"
    );
    // The node against its guests rides on the node line: its available
    // memory in every interval, between nothing and the node's RAM.
    let count = node_field(influx_http, "proxmox", "count", "memory_available_mib");
    assert_eq!(count.and_then(|n| n.as_u64()), Some(3));
    let total_mib = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap()
        / 1024.0;
    let available = node_field(influx_http, "proxmox", "last", "memory_available_mib")
        .and_then(|n| n.as_f64())
        .unwrap();
    assert!(
        available > 0.0 && available <= total_mib,
        "{available} MiB of {total_mib}"
    );

    // The v2 request as InfluxData documents it.
    let reqs = v2.lock().unwrap().clone();
    assert_eq!(reqs.len(), 3, "{reqs:?}");
    for (line, headers, body) in &reqs {
        assert_eq!(
            line,
            "POST /influx/api/v2/write?org=myorg&bucket=mybucket HTTP/1.1"
        );
        // Header names are case-insensitive (RFC 9110); the value is not.
        assert!(
            headers.iter().any(|h| h
                .split_once(':')
                .is_some_and(|(n, v)| n.eq_ignore_ascii_case("authorization")
                    && v.trim() == "Token s3cret-token")),
            "{headers:?}"
        );
        let parsed: Vec<_> = influxdb_line_protocol::parse_lines(body).collect();
        assert!(!parsed.is_empty());
        for p in parsed {
            let p = p.unwrap_or_else(|e| panic!("{e}: {body}"));
            assert_eq!(p.series.measurement.as_str(), "pveprobe_top");
            assert!(p.timestamp.is_some());
        }
    }

    // Graphite over TCP (root `proxmox`, PVE's default) and UDP (`pveudp`).
    let node = crate::common::sh("hostname", &[])
        .split('.')
        .next()
        .unwrap()
        .to_string();
    for root in ["proxmox", "pveudp"] {
        for figure in ["iowait_pct", "memory_available_mib"] {
            let file = d
                .join("carbon/storage/whisper")
                .join(root)
                .join("nodes")
                .join(&node)
                .join(format!("pveprobe_top/{figure}.wsp"));
            until(&format!("{}", file.display()), || {
                whisper_points(&file) >= 3
            });
            assert_eq!(whisper_points(&file), 3, "{}", file.display());
        }
    }
}

#[test]
fn a_server_that_fails_is_said_once_and_the_record_goes_on() {
    let dir = workdir();
    let d = dir.path();
    std::fs::create_dir_all(d.join("pve")).unwrap();
    std::fs::create_dir_all(d.join("qmp")).unwrap();
    // A port nothing listens on.
    let port = free_port();
    std::fs::write(
        d.join("pve/status.cfg"),
        format!("graphite: down\n\tserver 127.0.0.1\n\tport {port}\n\tproto tcp\n"),
    )
    .unwrap();
    let out = pveprobe()
        .args([
            "record",
            "--metric-servers",
            "--interval",
            "1",
            "--count",
            "3",
            "--dir",
        ])
        .arg(d.join("store"))
        .arg("--pve-dir")
        .arg(d.join("pve"))
        .arg("--qmp-dir")
        .arg(d.join("qmp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).matches("metric server down").count(),
        1,
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("3 interval(s) recorded"));
    // Without a status.cfg, --metric-servers is refused before anything.
    let none = pveprobe()
        .args(["record", "--metric-servers", "--count", "1", "--dir"])
        .arg(d.join("store2"))
        .arg("--pve-dir")
        .arg(d.join("nowhere"))
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(stderr(&none).contains("status.cfg"), "{}", stderr(&none));
}
