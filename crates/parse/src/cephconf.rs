//! `/etc/pve/ceph.conf`: the public and cluster networks of a
//! hyper-converged Ceph.
//!
//! `pveceph init` writes the file (through `PVE::Cluster::write_ceph_config`,
//! `\t KEY = VALUE` lines under `[SECTION]` headers) and links
//! `/etc/ceph/ceph.conf` to it; Ceph reads it with its INI parser
//! (`ConfFile` in ceph `src/common/ConfUtils.cc`). Followed here:
//!
//! - `[NAME]` starts a section; `KEY = VALUE` lines belong to it. Blank
//!   lines and lines starting with `#` or `;` are skipped, and a `#` or `;`
//!   after a value starts a comment too. Surrounding double quotes of a
//!   value are dropped.
//! - Keys are compared as Ceph normalizes them: blanks, `-` and `_` are
//!   one and the same, runs of them count as one, and case is ignored. So
//!   `public network`, `public_network` and `Public-Network` are one key.
//!   A later line of a key replaces an earlier one.
//! - `public_network` and `cluster_network` hold one or more CIDRs,
//!   separated by commas or blanks.
//!
//! Only `[global]` is read (PVE writes the networks there; a per-daemon
//! override is not the cluster's network). A network that is no CIDR is
//! an error naming its line; so is a line that is none of the above.

use super::{is_blank, quote};
use crate::cidr::{Cidr, CidrError};

/// Larger input is refused: PVE's ceph.conf is about a KiB.
pub const MAX_BYTES: usize = 1 << 20;
/// More networks than this in one key are refused.
pub const MAX_NETWORKS: usize = 64;

/// The networks of `[global]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CephConf {
    /// `public_network`: where monitors and clients talk to the OSDs.
    pub public_networks: Vec<Cidr>,
    /// `cluster_network`: OSD replication and heartbeats; empty when Ceph
    /// uses the public network for these too.
    pub cluster_networks: Vec<Cidr>,
}

/// ceph.conf that Ceph would refuse, or a network that is no CIDR.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CephConfError {
    #[error("ceph.conf is {bytes} bytes, more than the {MAX_BYTES} read")]
    TooLarge { bytes: usize },
    #[error("ceph.conf line {line}: {key}: {source}")]
    BadNetwork {
        line: usize,
        key: &'static str,
        #[source]
        source: CidrError,
    },
    #[error("ceph.conf line {line}: {key} lists more than {MAX_NETWORKS} networks")]
    TooManyNetworks { line: usize, key: &'static str },
    #[error("ceph.conf line {line}: neither a section nor a key: {text:?}")]
    BadLine { line: usize, text: String },
}

/// Reads ceph.conf.
pub fn parse(text: &str) -> Result<CephConf, CephConfError> {
    if text.len() > MAX_BYTES {
        return Err(CephConfError::TooLarge { bytes: text.len() });
    }
    let mut conf = CephConf::default();
    let mut in_global = false;
    for (index, raw) in text.split('\n').enumerate() {
        let no = index + 1;
        let line = raw.trim_matches(is_blank);
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some((name, after)) = rest.split_once(']') else {
                return Err(bad_line(no, line));
            };
            let after = after.trim_matches(is_blank);
            if !after.is_empty() && !after.starts_with(['#', ';']) {
                return Err(bad_line(no, line));
            }
            in_global = name.trim_matches(is_blank) == "global";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(bad_line(no, line));
        };
        if !in_global {
            continue;
        }
        let (key, target) = match normalize_key(key).as_str() {
            "public_network" => ("public_network", &mut conf.public_networks),
            "cluster_network" => ("cluster_network", &mut conf.cluster_networks),
            _ => continue,
        };
        *target = networks(no, key, value)?;
    }
    Ok(conf)
}

/// Ceph's key spelling: lowercase, blanks, `-` and `_` as one `_`, none at
/// either end.
pub fn normalize_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut pending = false;
    for c in key.chars() {
        if c == '_' || c == '-' || is_blank(c) {
            pending = true;
            continue;
        }
        if pending && !out.is_empty() {
            out.push('_');
        }
        pending = false;
        out.extend(c.to_lowercase());
    }
    out
}

fn networks(line: usize, key: &'static str, value: &str) -> Result<Vec<Cidr>, CephConfError> {
    let value = match value.find(['#', ';']) {
        Some(at) => &value[..at],
        None => value,
    };
    let value = value.trim_matches(is_blank);
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    let mut out = Vec::new();
    for item in value.split(|c: char| c == ',' || is_blank(c)) {
        if item.is_empty() {
            continue;
        }
        if out.len() == MAX_NETWORKS {
            return Err(CephConfError::TooManyNetworks { line, key });
        }
        let cidr =
            item.parse()
                .map_err(|source| CephConfError::BadNetwork { line, key, source })?;
        out.push(cidr);
    }
    Ok(out)
}

fn bad_line(line: usize, text: &str) -> CephConfError {
    CephConfError::BadLine {
        line,
        text: quote(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testutil::fixture("pve/ceph-conf", name)
    }

    fn nets(list: &[&str]) -> Vec<Cidr> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    #[test]
    fn hyperconverged_as_pveceph_init_writes_it() {
        assert_eq!(
            parse(&fixture("hyperconverged.conf")),
            Ok(CephConf {
                public_networks: nets(&["10.20.0.0/24"]),
                cluster_networks: nets(&["10.30.0.0/24"]),
            })
        );
    }

    #[test]
    fn public_network_only() {
        assert_eq!(
            parse(&fixture("public-only.conf")),
            Ok(CephConf {
                public_networks: nets(&["10.20.0.0/24"]),
                cluster_networks: vec![],
            })
        );
    }

    #[test]
    fn spaced_keys_and_two_networks() {
        assert_eq!(
            parse(&fixture("spaced-keys.conf")),
            Ok(CephConf {
                public_networks: nets(&["10.20.0.0/24", "10.21.0.0/24"]),
                cluster_networks: nets(&["10.30.0.0/24", "fd00:30::/64"]),
            })
        );
    }

    #[test]
    fn every_fixture_is_tested_here() {
        let names = crate::testutil::fixture_names("pve/ceph-conf");
        assert_eq!(
            names,
            [
                "hyperconverged.conf",
                "public-only.conf",
                "spaced-keys.conf"
            ]
        );
    }

    #[test]
    fn keys_normalize_as_in_ceph() {
        for k in [
            "public network",
            "public_network",
            "Public-Network",
            " public  __network ",
            "PUBLIC\tNETWORK",
        ] {
            assert_eq!(normalize_key(k), "public_network", "{k:?}");
        }
        assert_eq!(normalize_key("publicnetwork"), "publicnetwork");
    }

    #[test]
    fn only_global_counts() {
        let text = "[osd.1]\npublic_network = 10.9.0.0/24\n[global]\ncluster network = 10.30.0.0/24\n[client]\npublic network = 10.8.0.0/24\n[ global ]\npublic network = 10.20.0.0/24 ; main\n";
        assert_eq!(
            parse(text),
            Ok(CephConf {
                public_networks: nets(&["10.20.0.0/24"]),
                cluster_networks: nets(&["10.30.0.0/24"]),
            })
        );
        // Keys before any section, and a later line replacing an earlier.
        let text = "public_network = 10.1.0.0/16\n[global]\npublic_network = 10.1.0.0/16\npublic_network = \"10.2.0.0/16\"\n";
        assert_eq!(parse(text).unwrap().public_networks, nets(&["10.2.0.0/16"]));
    }

    #[test]
    fn errors_name_their_line() {
        assert_eq!(
            parse("[global]\n\tpublic_network = 10.20.0.0/24,10.21.0/24\n"),
            Err(CephConfError::BadNetwork {
                line: 2,
                key: "public_network",
                source: CidrError::BadAddress("10.21.0".into())
            })
        );
        assert_eq!(
            parse("[global]\nfsid\n"),
            Err(CephConfError::BadLine {
                line: 2,
                text: "fsid".into()
            })
        );
        assert!(matches!(
            parse("[global\n"),
            Err(CephConfError::BadLine { line: 1, .. })
        ));
        let many = format!("[global]\ncluster_network = {}\n", "10.0.0.0/8,".repeat(65));
        assert_eq!(
            parse(&many),
            Err(CephConfError::TooManyNetworks {
                line: 2,
                key: "cluster_network"
            })
        );
        assert_eq!(
            parse(&";".repeat(MAX_BYTES + 1)),
            Err(CephConfError::TooLarge {
                bytes: MAX_BYTES + 1
            })
        );
        // A bad network outside [global] is not read, so no error.
        assert_eq!(
            parse("[osd]\ncluster_network = x\n"),
            Ok(CephConf::default())
        );
    }
}
