//! `/etc/pve/datacenter.cfg`: the cluster-wide options, of which the probe
//! needs the migration network.
//!
//! PVE reads the file with `PVE::JSONSchema::parse_config` and then
//! `parse_datacenter_config` (pve-cluster `src/PVE/DataCenterConfig.pm`):
//!
//! - Each line is trimmed; empty lines and lines starting with `#` are
//!   skipped. Others are `KEY: VALUE`, the key running to the first `:`
//!   (`^(\S+?):\s*(.*)$`). A later line of the same key replaces an
//!   earlier one. Lines of another shape and unknown keys are passed over.
//! - `migration` is a property string: items split at `,`, each `KEY=VALUE`
//!   or a bare value for the default key `type`. `type` is `secure` or
//!   `insecure`, `network` a CIDR. So `migration: insecure`,
//!   `migration: type=secure,network=10.1.2.0/24` and
//!   `migration: insecure,network=10.1.2.0/24` all occur.
//! - The older `migration_unsecure: 1` means `type` `insecure` (`0`:
//!   `secure`), unless `migration` names a type itself, which wins.
//!
//! A `migration` value PVE would refuse (a malformed CIDR, an unknown type
//! or key, a key given twice) is an error naming its line.

use super::{is_blank, quote};
use crate::cidr::{Cidr, CidrError};

/// Larger input is refused: a datacenter.cfg is a few hundred bytes.
pub const MAX_BYTES: usize = 1 << 20;

/// What the probe needs of datacenter.cfg.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatacenterCfg {
    /// `migration: network=`: the network migrations use, when set.
    pub migration_network: Option<Cidr>,
    /// `migration: type=` (or the legacy `migration_unsecure`): `secure`
    /// or `insecure`. PVE's default, when absent, is `secure`.
    pub migration_type: Option<String>,
}

/// datacenter.cfg that PVE would refuse.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum DatacenterError {
    #[error("datacenter.cfg is {bytes} bytes, more than the {MAX_BYTES} read")]
    TooLarge { bytes: usize },
    #[error("datacenter.cfg line {line}: migration network: {source}")]
    BadNetwork {
        line: usize,
        #[source]
        source: CidrError,
    },
    #[error("datacenter.cfg line {line}: migration: {reason}")]
    BadMigration { line: usize, reason: String },
}

/// Reads datacenter.cfg.
pub fn parse(text: &str) -> Result<DatacenterCfg, DatacenterError> {
    if text.len() > MAX_BYTES {
        return Err(DatacenterError::TooLarge { bytes: text.len() });
    }
    let mut migration: Option<(usize, &str)> = None;
    let mut unsecure: Option<(usize, &str)> = None;
    for (index, raw) in text.split('\n').enumerate() {
        let line = raw.trim_matches(is_blank);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.is_empty() || key.contains(is_blank) {
            continue;
        }
        let value = value.trim_start_matches(is_blank);
        match key {
            "migration" => migration = Some((index + 1, value)),
            "migration_unsecure" => unsecure = Some((index + 1, value)),
            _ => {}
        }
    }
    let mut cfg = DatacenterCfg::default();
    if let Some((line, value)) = migration {
        let bad = |reason: String| DatacenterError::BadMigration { line, reason };
        for item in value.split(',') {
            let (key, val) = match item.split_once('=') {
                Some((k, v)) => (k, v),
                None => ("type", item),
            };
            match key {
                "type" => {
                    if cfg.migration_type.is_some() {
                        return Err(bad("type given twice".into()));
                    }
                    if val != "secure" && val != "insecure" {
                        return Err(bad(format!(
                            "type {:?} is neither secure nor insecure",
                            quote(val)
                        )));
                    }
                    cfg.migration_type = Some(val.to_string());
                }
                "network" => {
                    if cfg.migration_network.is_some() {
                        return Err(bad("network given twice".into()));
                    }
                    let cidr = val
                        .parse()
                        .map_err(|source| DatacenterError::BadNetwork { line, source })?;
                    cfg.migration_network = Some(cidr);
                }
                _ => return Err(bad(format!("unknown key {:?}", quote(key)))),
            }
        }
    }
    if cfg.migration_type.is_none()
        && let Some((line, value)) = unsecure
    {
        let insecure = parse_boolean(value).ok_or_else(|| DatacenterError::BadMigration {
            line,
            reason: format!("migration_unsecure {:?} is no boolean", quote(value)),
        })?;
        cfg.migration_type = Some(if insecure { "insecure" } else { "secure" }.to_string());
    }
    Ok(cfg)
}

/// `PVE::JSONSchema::parse_boolean`.
fn parse_boolean(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testutil::fixture("pve/datacenter-cfg", name)
    }

    fn cfg(network: Option<&str>, kind: Option<&str>) -> DatacenterCfg {
        DatacenterCfg {
            migration_network: network.map(|n| n.parse().unwrap()),
            migration_type: kind.map(str::to_string),
        }
    }

    #[test]
    fn migration_network_as_the_gui_writes_it() {
        assert_eq!(
            parse(&fixture("migration-network.cfg")),
            Ok(cfg(Some("10.1.2.0/24"), Some("secure")))
        );
    }

    #[test]
    fn insecure_default_key_form() {
        assert_eq!(
            parse(&fixture("insecure.cfg")),
            Ok(cfg(Some("10.40.0.0/24"), Some("insecure")))
        );
        assert_eq!(
            parse("migration: insecure\n"),
            Ok(cfg(None, Some("insecure")))
        );
        assert_eq!(
            parse("migration: network=fd00:40::/64\n"),
            Ok(cfg(Some("fd00:40::/64"), None))
        );
    }

    #[test]
    fn legacy_migration_unsecure() {
        assert_eq!(
            parse(&fixture("legacy-unsecure.cfg")),
            Ok(cfg(None, Some("insecure")))
        );
        assert_eq!(
            parse("migration_unsecure: 0\n"),
            Ok(cfg(None, Some("secure")))
        );
        // The new key's type wins; without one, the old key still counts.
        assert_eq!(
            parse("migration_unsecure: 1\nmigration: secure\n"),
            Ok(cfg(None, Some("secure")))
        );
        assert_eq!(
            parse("migration_unsecure: 1\nmigration: network=10.0.0.0/8\n"),
            Ok(cfg(Some("10.0.0.0/8"), Some("insecure")))
        );
    }

    #[test]
    fn no_migration_settings() {
        assert_eq!(parse(&fixture("keyboard-only.cfg")), Ok(cfg(None, None)));
        assert_eq!(parse(""), Ok(cfg(None, None)));
    }

    #[test]
    fn every_fixture_is_tested_here() {
        let names = crate::testutil::fixture_names("pve/datacenter-cfg");
        assert_eq!(
            names,
            [
                "bad-network.cfg",
                "insecure.cfg",
                "keyboard-only.cfg",
                "legacy-unsecure.cfg",
                "migration-network.cfg",
            ]
        );
    }

    #[test]
    fn malformed_values_name_their_line() {
        assert_eq!(
            parse(&fixture("bad-network.cfg")),
            Err(DatacenterError::BadNetwork {
                line: 2,
                source: CidrError::PrefixTooLong {
                    prefix: 34,
                    bits: 32
                }
            })
        );
        for (text, line) in [
            ("migration: type=fast\n", 1),
            ("\nmigration: secure,type=insecure\n", 2),
            ("migration: network=10.0.0.0/8,network=10.0.0.0/8\n", 1),
            ("migration: secure,speed=10\n", 1),
            ("migration: secure,\n", 1),
            ("migration:\n", 1),
            ("migration_unsecure: maybe\n", 1),
        ] {
            match parse(text) {
                Err(DatacenterError::BadMigration { line: l, .. }) => {
                    assert_eq!(l, line, "{text:?}")
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
        assert!(matches!(
            parse("migration: network=10.0.0.0\\8\n"),
            Err(DatacenterError::BadNetwork { line: 1, .. })
        ));
    }

    #[test]
    fn lines_as_perl_reads_them() {
        // Comments, blanks, CRLF, an indented key, a later line winning,
        // lines of another shape passed over.
        let text = "# comment\n  migration: type=secure,network=10.0.0.0/8\r\nnot a key line\nmigration:secure,network=10.9.0.0/16\n";
        assert_eq!(parse(text), Ok(cfg(Some("10.9.0.0/16"), Some("secure"))));
        assert_eq!(
            parse(&"#".repeat(MAX_BYTES + 1)),
            Err(DatacenterError::TooLarge {
                bytes: MAX_BYTES + 1
            })
        );
    }
}
