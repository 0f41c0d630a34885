//! `/etc/pve/status.cfg`: the external metric servers the admin set up in
//! PVE (Datacenter, Metric Server), read as PVE reads them, so pveprobe
//! sends to the servers PVE sends to, with PVE's defaults.
//!
//! The format is PVE's section config ([`crate::sectionconfig`], the rules
//! of `storage.cfg`), with the metric plugins' own parts, from pve-manager
//! `PVE/Status/Plugin.pm`, `InfluxDB.pm` and `Graphite.pm`:
//!
//! - A header is `TYPE: ID`, or `TYPE:` alone, whose ID is then the type
//!   (`^(\S+):\s*(\S+)?\s*$`). The ID is a config ID
//!   (`^[a-z][a-z0-9_-]+$`, any case); a section with another is skipped
//!   with a warning.
//! - `influxdb` takes `server` and `port` (both required), `mtu`,
//!   `disable`, `organization`, `bucket`, `token`, `influxdbproto` (`udp`,
//!   the default, `http` or `https`), `timeout`, `max-body-size`,
//!   `api-path-prefix` and `verify-certificate`. The token PVE's GUI sets is
//!   kept in `/etc/pve/priv/metricserver/ID.pw`, not here.
//! - `graphite` takes `server` (required), `port` (2003), `mtu`, `proto`
//!   (`udp`, the default, or `tcp`), `timeout` (1 s), `path` (`proxmox`; dot
//!   separated words of letters, digits and inner dashes) and `disable`.
//! - Any other type (`opentelemetry`) is kept by its name, with no
//!   settings read: pveprobe does not send to it.
//! - A key the type does not take, one seen before in the section, a
//!   boolean other than `0` or `1`, an integer out of its range (`port`
//!   1 to 65535, where PVE's schema says 65536, which no socket has; `mtu`
//!   512 to 65536, `timeout` 0 or more, `max-body-size`
//!   1 or more) or an enumeration's other word is ignored with a warning;
//!   a section without a required key is dropped with a warning.

use std::collections::HashSet;

use crate::sectionconfig::{Lines, is_false, parse_header, parse_property, quote};

/// Larger input is refused: PVE's status.cfg is a few hundred bytes.
pub const MAX_BYTES: usize = 1 << 20;
/// More sections than this are refused.
pub const MAX_SECTIONS: usize = 1024;
/// Warnings kept.
pub const MAX_WARNINGS: usize = 256;

/// Which protocol an InfluxDB server is sent to over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfluxProto {
    /// Line protocol datagrams (InfluxDB 1.x's UDP listener).
    Udp,
    /// The v2 HTTP API (`/api/v2/write`), InfluxDB 2.x or 1.8's compatible one.
    Http,
    Https,
}

/// Which protocol a Graphite server is sent to over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphiteProto {
    Udp,
    Tcp,
}

/// What kind of server, with its own settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    InfluxDb {
        proto: InfluxProto,
        /// The v2 API's organization and bucket: PVE's default `proxmox`.
        organization: String,
        bucket: String,
        /// A token written into status.cfg (the API's, not the GUI's).
        token: Option<String>,
        /// Inserted between `host:port/` and `api/v2/`.
        api_path_prefix: Option<String>,
        /// The largest HTTP body, bytes: PVE's default 25,000,000.
        max_body_size: u64,
        verify_certificate: bool,
    },
    Graphite {
        proto: GraphiteProto,
        /// The root of every metric's path: PVE's default `proxmox`.
        path: String,
    },
    /// A type pveprobe does not send to (`opentelemetry`), by its name.
    Other(String),
}

/// One metric server of status.cfg.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricServer {
    pub id: String,
    pub kind: Kind,
    /// `disable 1`: PVE sends it nothing, and neither does pveprobe.
    pub disabled: bool,
    /// Host name or address (`None` for [`Kind::Other`]).
    pub server: Option<String>,
    pub port: Option<u16>,
    /// The largest UDP datagram's MTU: PVE's default 1500.
    pub mtu: u32,
    /// Seconds a TCP or HTTP send may take: PVE's default 1.
    pub timeout_s: u64,
    /// The header's line.
    pub line: usize,
}

/// The file: its servers in order, and what PVE would ignore with a
/// warning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusCfg {
    pub servers: Vec<MetricServer>,
    pub warnings: Vec<String>,
}

impl StatusCfg {
    fn warn(&mut self, line: usize, what: impl FnOnce() -> String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(format!("line {line}: {}", what()));
        }
    }

    /// The servers PVE sends to: those not disabled, of a type pveprobe
    /// sends to.
    pub fn enabled(&self) -> impl Iterator<Item = &MetricServer> {
        self.servers
            .iter()
            .filter(|s| !s.disabled && !matches!(s.kind, Kind::Other(_)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusCfgError {
    #[error("status.cfg is {bytes} bytes; more than {MAX_BYTES} is no PVE file")]
    TooLarge { bytes: usize },
    #[error("status.cfg has more than {MAX_SECTIONS} sections (line {line})")]
    TooManySections { line: usize },
}

/// The keys a type takes.
fn keys(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "influxdb" => Some(&[
            "server",
            "port",
            "mtu",
            "disable",
            "organization",
            "bucket",
            "token",
            "influxdbproto",
            "timeout",
            "max-body-size",
            "api-path-prefix",
            "verify-certificate",
        ]),
        "graphite" => Some(&[
            "server", "port", "mtu", "proto", "timeout", "path", "disable",
        ]),
        _ => None,
    }
}

/// Whether `value` is what `key` takes.
fn check(key: &str, value: Option<&str>) -> Result<(), String> {
    let int = |min: u64, max: u64| -> Result<(), String> {
        let v = value.unwrap_or_default();
        match v.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) && v.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
            _ => Err(format!("value '{v}' is no integer from {min} to {max}")),
        }
    };
    let one_of = |words: &[&str]| -> Result<(), String> {
        let v = value.unwrap_or_default();
        if words.contains(&v) {
            Ok(())
        } else {
            Err(format!("value '{v}' is none of {}", words.join(", ")))
        }
    };
    match key {
        "disable" | "verify-certificate" => match value {
            None | Some("0" | "1") => Ok(()),
            Some(v) => Err(format!("type check ('boolean') failed - got '{v}'")),
        },
        // PVE's schema takes 65536 too, which no socket has.
        "port" => int(1, 65535),
        "mtu" => int(512, 64 * 1024),
        "timeout" => int(0, u64::MAX),
        "max-body-size" => int(1, u64::MAX),
        "influxdbproto" => one_of(&["udp", "http", "https"]),
        "proto" => one_of(&["udp", "tcp"]),
        "path" => match value {
            Some(p) if is_graphite_path(p) => Ok(()),
            _ => Err("value does not look like a valid graphite path".into()),
        },
        _ => match value {
            Some(_) => Ok(()),
            None => Err("no value".into()),
        },
    }
}

/// `^(W\.)*W$`, W a word of letters and digits with inner dashes.
fn is_graphite_path(path: &str) -> bool {
    path.split('.').all(|w| {
        !w.is_empty()
            && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !w.starts_with('-')
            && !w.ends_with('-')
    })
}

/// PVE's config ID: `^[a-z][a-z0-9_-]+$`, any case.
fn is_config_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
}

/// `TYPE: ID`, or `TYPE:` alone (the ID is the type).
fn header(line: &str) -> Option<(String, String)> {
    if let Some((kind, id)) = parse_header(line) {
        return Some((kind.to_ascii_lowercase(), id.to_string()));
    }
    let kind = line.trim_end().strip_suffix(':')?;
    (!kind.is_empty() && !kind.contains(char::is_whitespace) && !line.starts_with(' '))
        .then(|| (kind.to_ascii_lowercase(), kind.to_ascii_lowercase()))
}

/// Reads status.cfg.
pub fn parse(text: &str) -> Result<StatusCfg, StatusCfgError> {
    if text.len() > MAX_BYTES {
        return Err(StatusCfgError::TooLarge { bytes: text.len() });
    }
    let mut cfg = StatusCfg::default();
    let mut lines = Lines::new(text);
    let mut sections = 0usize;
    while let Some((no, line)) = lines.next_content() {
        if is_false(line) {
            continue;
        }
        let Some((kind, id)) = header(line) else {
            cfg.warn(no, || format!("ignore config line: {}", quote(line)));
            continue;
        };
        sections += 1;
        if sections > MAX_SECTIONS {
            return Err(StatusCfgError::TooManySections { line: no });
        }
        if !is_config_id(&id) {
            cfg.warn(no, || {
                format!("skip section '{}': invalid configuration ID", quote(&id))
            });
            lines.skip_section();
            continue;
        }
        let Some(allowed) = keys(&kind) else {
            lines.skip_section();
            cfg.servers.push(MetricServer {
                id,
                kind: Kind::Other(kind),
                disabled: false,
                server: None,
                port: None,
                mtu: 1500,
                timeout_s: 1,
                line: no,
            });
            continue;
        };
        let mut seen = HashSet::new();
        let mut opts: Vec<(&str, Option<&str>)> = Vec::new();
        while let Some((pno, pline)) = lines.next_in_section() {
            let Some((key, value)) = parse_property(pline) else {
                cfg.warn(pno, || {
                    format!("(section '{id}') ignore config line: {}", quote(pline))
                });
                continue;
            };
            // A value refused leaves its key free for a later line, as in PVE.
            let checked = if !allowed.contains(&key) {
                Err("unknown property type".to_string())
            } else if seen.contains(key) {
                Err("duplicate attribute".to_string())
            } else {
                check(key, value)
            };
            match checked {
                Ok(()) => {
                    seen.insert(key);
                    opts.push((key, value));
                }
                Err(why) => cfg.warn(pno, || {
                    format!("(section '{id}') unable to parse value of '{key}': {why}")
                }),
            }
        }
        let get = |k: &str| opts.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        let text = |k: &str| get(k).flatten().map(str::to_string);
        let num = |k: &str| get(k).flatten().and_then(|v| v.parse::<u64>().ok());
        let flag = |k: &str| get(k).map(|v| v != Some("0"));
        let required: &[&str] = if kind == "influxdb" {
            &["server", "port"]
        } else {
            &["server"]
        };
        if let Some(missing) = required.iter().find(|k| get(k).is_none()) {
            cfg.warn(no, || {
                format!("skip section '{id}': missing value for required option '{missing}'")
            });
            continue;
        }
        let server_kind = if kind == "influxdb" {
            Kind::InfluxDb {
                proto: match text("influxdbproto").as_deref() {
                    Some("http") => InfluxProto::Http,
                    Some("https") => InfluxProto::Https,
                    _ => InfluxProto::Udp,
                },
                organization: text("organization").unwrap_or_else(|| "proxmox".into()),
                bucket: text("bucket").unwrap_or_else(|| "proxmox".into()),
                token: text("token"),
                api_path_prefix: text("api-path-prefix"),
                max_body_size: num("max-body-size").unwrap_or(25_000_000),
                verify_certificate: flag("verify-certificate").unwrap_or(true),
            }
        } else {
            Kind::Graphite {
                proto: match text("proto").as_deref() {
                    Some("tcp") => GraphiteProto::Tcp,
                    _ => GraphiteProto::Udp,
                },
                path: text("path").unwrap_or_else(|| "proxmox".into()),
            }
        };
        let default_port = matches!(server_kind, Kind::Graphite { .. }).then_some(2003);
        cfg.servers.push(MetricServer {
            id,
            kind: server_kind,
            disabled: flag("disable").unwrap_or(false),
            server: text("server"),
            port: num("port")
                .and_then(|p| u16::try_from(p).ok())
                .or(default_port),
            mtu: num("mtu")
                .and_then(|m| u32::try_from(m).ok())
                .unwrap_or(1500),
            timeout_s: num("timeout").unwrap_or(1),
            line: no,
        });
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> String {
        crate::testutil::fixture("pve/status-cfg", "documented.cfg")
    }

    #[test]
    fn the_documented_forms_read_with_pves_defaults() {
        let cfg = parse(&fixture()).unwrap();
        let ids: Vec<&str> = cfg.servers.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "influx-udp",
                "influx2",
                "influx18",
                "graphite",
                "carbon-tcp",
                "otel",
                "off"
            ],
            "{cfg:#?}"
        );
        let s = &cfg.servers;
        assert_eq!(s[0].port, Some(8089));
        assert_eq!(s[0].mtu, 1450);
        assert!(matches!(
            &s[0].kind,
            Kind::InfluxDb { proto: InfluxProto::Udp, bucket, .. } if bucket == "proxmox"
        ));
        match &s[1].kind {
            Kind::InfluxDb {
                proto,
                organization,
                bucket,
                api_path_prefix,
                max_body_size,
                verify_certificate,
                ..
            } => {
                assert_eq!(*proto, InfluxProto::Https);
                assert_eq!((organization.as_str(), bucket.as_str()), ("myorg", "pve"));
                assert_eq!(api_path_prefix.as_deref(), Some("influx"));
                assert_eq!(*max_body_size, 25_000_000);
                assert!(!verify_certificate);
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(s[1].timeout_s, 3);
        assert!(matches!(
            &s[2].kind,
            Kind::InfluxDb { proto: InfluxProto::Http, organization, .. } if organization == "proxmox"
        ));
        // `graphite:` alone: its ID is the type; PVE's port and path.
        assert_eq!(s[3].port, Some(2003));
        assert!(matches!(
            &s[3].kind,
            Kind::Graphite { proto: GraphiteProto::Udp, path } if path == "proxmox"
        ));
        assert!(matches!(
            &s[4].kind,
            Kind::Graphite { proto: GraphiteProto::Tcp, path } if path == "pve.cluster-a"
        ));
        assert_eq!(s[4].timeout_s, 2);
        assert_eq!(s[5].kind, Kind::Other("opentelemetry".into()));
        assert!(s[6].disabled);
        let enabled: Vec<&str> = cfg.enabled().map(|s| s.id.as_str()).collect();
        assert_eq!(
            enabled,
            [
                "influx-udp",
                "influx2",
                "influx18",
                "graphite",
                "carbon-tcp"
            ]
        );
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    }

    #[test]
    fn what_pve_ignores_is_ignored_with_a_warning() {
        let text = "influxdb: inf1\n\tserver 10.0.0.1\n\tport 70000\n\tport 8089\n\tdisable yes\n\tpath x\n\n\
                    influxdb: noport\n\tserver 10.0.0.2\n\n\
                    graphite: gra1\n\tserver 10.0.0.3\n\tproto sctp\n\tpath .bad\n\tmtu 100\n\n\
                    graphite: 1bad\n\tserver x\n";
        let cfg = parse(text).unwrap();
        let ids: Vec<&str> = cfg.servers.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["inf1", "gra1"], "{:?}", cfg.warnings);
        assert_eq!(cfg.servers[0].port, Some(8089));
        assert!(!cfg.servers[0].disabled, "`disable yes` does not disable");
        assert!(matches!(
            &cfg.servers[1].kind,
            Kind::Graphite { proto: GraphiteProto::Udp, path } if path == "proxmox"
        ));
        assert_eq!(cfg.servers[1].mtu, 1500);
        assert_eq!(cfg.warnings.len(), 8, "{:#?}", cfg.warnings);
        assert!(cfg.warnings.iter().any(|w| w.contains("'port'")));
        assert!(
            cfg.warnings
                .iter()
                .any(|w| w.contains("required option 'port'"))
        );
        assert!(
            cfg.warnings
                .iter()
                .any(|w| w.contains("invalid configuration ID"))
        );
    }

    #[test]
    fn nothing_is_no_server_and_a_huge_file_is_refused() {
        assert_eq!(parse("").unwrap(), StatusCfg::default());
        assert!(matches!(
            parse(&"#".repeat(MAX_BYTES + 1)),
            Err(StatusCfgError::TooLarge { .. })
        ));
    }
}
