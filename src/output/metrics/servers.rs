//! The external metric servers the admin set up in PVE
//! (`/etc/pve/status.cfg`, `parse::statuscfg`), sent to as PVE's own
//! `pvestatd` sends (pve-manager `PVE/Status/InfluxDB.pm`, `Graphite.pm`,
//! `Plugin.pm`):
//!
//! - InfluxDB over UDP: line protocol in datagrams of at most the MTU less
//!   50 bytes, a line never split;
//! - InfluxDB over HTTP(S): a POST of the lines to the v2 API,
//!   `PROTO://SERVER:PORT/PREFIX/api/v2/write?org=ORG&bucket=BUCKET`, with
//!   `Authorization: Token TOKEN` where a token is set (status.cfg's
//!   `token`, or the one PVE's GUI keeps in
//!   `/etc/pve/priv/metricserver/ID.pw`), at most `max-body-size` bytes a
//!   request, `timeout` seconds each, the certificate checked unless
//!   `verify-certificate 0`. An InfluxDB before 1.8 has no v2 API: on a
//!   404 the server is written through the v1 API instead,
//!   `/PREFIX/write?db=BUCKET` (PVE would fail there);
//! - Graphite over TCP (a connection each interval, as PVE) or UDP
//!   (datagrams as InfluxDB's): `PATH.OBJECT.KEY VALUE SECONDS` lines.
//!
//! A server that fails is said once, and again when it answers again; the
//! others are sent to all the while.

use std::io::Write as _;
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use std::path::Path;
use std::time::Duration;

use pveprobe_parse::statuscfg::{self, GraphiteProto, InfluxProto, Kind, MetricServer};

use crate::sys::host::Host;

/// Where PVE keeps the token its GUI sets for server ID.
pub const TOKEN_DIR: &str = "priv/metricserver";

/// What is sent each interval: InfluxDB lines, and Graphite lines under
/// a root path.
pub struct Payload<'a> {
    pub influx: &'a str,
    pub graphite: &'a dyn Fn(&str) -> String,
}

/// One server and how it fares.
struct Target {
    server: MetricServer,
    token: Option<String>,
    /// A v1 InfluxDB (no `/api/v2/write`): written through `/write?db=`.
    v1: bool,
    failing: bool,
}

/// The servers of status.cfg that PVE sends to.
pub struct Servers {
    targets: Vec<Target>,
}

/// Why status.cfg could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ServersError {
    #[error("{path}: {why}")]
    Config { path: String, why: String },
}

impl Servers {
    /// The enabled servers of `PVE_DIR/status.cfg`, their tokens, and
    /// what PVE would warn of in it.
    pub fn from_pve_dir(
        host: &Host,
        pve_dir: &Path,
    ) -> Result<(Servers, Vec<String>), ServersError> {
        let path = pve_dir.join("status.cfg");
        let failed = |why: String| ServersError::Config {
            path: path.display().to_string(),
            why,
        };
        let text = crate::sys::host::read_capped(&host.path(&path), statuscfg::MAX_BYTES as u64)
            .map_err(|e| failed(crate::error::describe(&e)))?;
        let cfg = statuscfg::parse(&text).map_err(|e| failed(e.to_string()))?;
        let notes = cfg
            .warnings
            .iter()
            .map(|w| format!("{}: {w}", path.display()))
            .collect();
        let targets = cfg
            .enabled()
            .map(|s| {
                let token = match &s.kind {
                    Kind::InfluxDb { token: Some(t), .. } => Some(t.clone()),
                    Kind::InfluxDb { .. } => host
                        .read(pve_dir.join(TOKEN_DIR).join(format!("{}.pw", s.id)))
                        .ok()
                        .map(|t| t.trim().to_string())
                        .filter(|t| !t.is_empty()),
                    _ => None,
                };
                Target {
                    server: s.clone(),
                    token,
                    v1: false,
                    failing: false,
                }
            })
            .collect();
        Ok((Servers { targets }, notes))
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// `influxdb udp 127.0.0.1:8089`, each server's.
    pub fn describe(&self) -> Vec<String> {
        self.targets.iter().map(|t| describe(&t.server)).collect()
    }

    /// One interval to every server; what changed (a server failing, or
    /// answering again) said.
    pub fn send(&mut self, payload: &Payload) -> Vec<String> {
        let mut notes = Vec::new();
        for t in &mut self.targets {
            let sent = send_one(t, payload);
            match (sent, t.failing) {
                (Err(why), false) => {
                    notes.push(format!(
                        "metric server {} ({}): {why}; the others and the record go on",
                        t.server.id,
                        describe(&t.server)
                    ));
                    t.failing = true;
                }
                (Ok(()), true) => {
                    notes.push(format!("metric server {}: answers again", t.server.id));
                    t.failing = false;
                }
                _ => {}
            }
        }
        notes
    }
}

fn describe(s: &MetricServer) -> String {
    let proto = match &s.kind {
        Kind::InfluxDb { proto, .. } => format!("influxdb {proto:?}"),
        Kind::Graphite { proto, .. } => format!("graphite {proto:?}"),
        Kind::Other(name) => name.clone(),
    };
    format!(
        "{} {}:{}",
        proto.to_lowercase(),
        s.server.as_deref().unwrap_or(""),
        s.port.map_or(String::new(), |p| p.to_string())
    )
}

fn send_one(t: &mut Target, payload: &Payload) -> Result<(), String> {
    let s = &t.server;
    let host = s.server.as_deref().unwrap_or_default();
    let timeout = Duration::from_secs(s.timeout_s.max(1));
    match &s.kind {
        Kind::InfluxDb {
            proto: InfluxProto::Udp,
            ..
        } => udp(host, s.port.unwrap_or(8089), s.mtu, payload.influx),
        Kind::InfluxDb {
            proto,
            organization,
            bucket,
            api_path_prefix,
            max_body_size,
            verify_certificate,
            ..
        } => {
            let scheme = if *proto == InfluxProto::Https {
                "https"
            } else {
                "http"
            };
            let base = format!(
                "{scheme}://{}:{}{}",
                bracket(host),
                s.port.unwrap_or(8086),
                prefix(api_path_prefix.as_deref())
            );
            let agent = agent(timeout, *verify_certificate);
            for body in batches(payload.influx, *max_body_size as usize) {
                if !t.v1 {
                    let url = format!("{base}api/v2/write?org={organization}&bucket={bucket}");
                    match post(&agent, &url, t.token.as_deref(), body)? {
                        404 => t.v1 = true,
                        code if (200..300).contains(&code) => continue,
                        code => return Err(format!("HTTP {code} from {url}")),
                    }
                }
                let url = format!("{base}write?db={bucket}");
                match post(&agent, &url, t.token.as_deref(), body)? {
                    code if (200..300).contains(&code) => {}
                    code => return Err(format!("HTTP {code} from {url}")),
                }
            }
            Ok(())
        }
        Kind::Graphite { proto, path } => {
            let lines = (payload.graphite)(path);
            let port = s.port.unwrap_or(2003);
            match proto {
                GraphiteProto::Udp => udp(host, port, s.mtu, &lines),
                GraphiteProto::Tcp => {
                    let addr = (host, port)
                        .to_socket_addrs()
                        .map_err(|e| e.to_string())?
                        .next()
                        .ok_or("no address")?;
                    let mut c =
                        TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
                    c.set_write_timeout(Some(timeout))
                        .map_err(|e| e.to_string())?;
                    c.write_all(lines.as_bytes()).map_err(|e| e.to_string())
                }
            }
        }
        Kind::Other(name) => Err(format!("{name}: not sent to")),
    }
}

/// An IPv6 address in brackets, as a URL has it.
fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// PVE's `api-path-prefix`: `/`, or `/WORDS/`.
fn prefix(p: Option<&str>) -> String {
    match p.map(|p| p.trim_matches('/')) {
        Some(p) if !p.is_empty() => format!("/{p}/"),
        _ => "/".into(),
    }
}

fn agent(timeout: Duration, verify: bool) -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::NativeTls)
        .disable_verification(!verify)
        .build();
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .tls_config(tls)
        .build()
        .into()
}

fn post(agent: &ureq::Agent, url: &str, token: Option<&str>, body: &str) -> Result<u16, String> {
    let mut req = agent
        .post(url)
        .header("Content-Type", "text/plain; charset=utf-8");
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Token {t}"));
    }
    req.send(body)
        .map(|r| r.status().as_u16())
        .map_err(|e| format!("{url}: {e}"))
}

/// `text`'s lines in batches of at most `max` bytes (a longer line alone).
fn batches(text: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        if end > start && end - start + line.len() > max {
            out.push(&text[start..end]);
            start = end;
        }
        end += line.len();
    }
    if end > start {
        out.push(&text[start..end]);
    }
    out
}

/// `text` to HOST:PORT in datagrams of at most the MTU less 50 bytes (PVE's
/// room for an IPv6 and UDP header), a line never split.
fn udp(host: &str, port: u16, mtu: u32, text: &str) -> Result<(), String> {
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let bind = if addr.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let sock = UdpSocket::bind(bind).map_err(|e| e.to_string())?;
    for d in batches(text, (mtu as usize).saturating_sub(50).max(64)) {
        sock.send_to(d.as_bytes(), addr)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_whole_lines_within_the_size() {
        let text = "a 1\nbb 2\nccc 3\n";
        assert_eq!(batches(text, 9), ["a 1\nbb 2\n", "ccc 3\n"]);
        assert_eq!(batches(text, 2), ["a 1\n", "bb 2\n", "ccc 3\n"]);
        assert_eq!(batches(text, 1000), [text]);
        assert!(batches("", 10).is_empty());
    }

    #[test]
    fn the_prefix_and_an_ipv6_host_are_written_as_pve_writes_them() {
        assert_eq!(prefix(None), "/");
        assert_eq!(prefix(Some("/")), "/");
        assert_eq!(prefix(Some("influx")), "/influx/");
        assert_eq!(prefix(Some("//a/b//")), "/a/b/");
        assert_eq!(bracket("::1"), "[::1]");
        assert_eq!(bracket("10.0.0.1"), "10.0.0.1");
    }
}
