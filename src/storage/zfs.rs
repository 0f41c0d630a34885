//! ZFS: a dataset's pool layout from `zpool status -P -L` and its
//! properties from `zfs get`. ZFS has no file interface for vdevs, so this
//! is the one place pveprobe runs a command: without a shell, with fixed
//! arguments (the pool and dataset names come from mountinfo and are passed
//! as single arguments), and with a timeout.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::model::storage::Vdev;

/// How long `zpool` or `zfs` may take before it counts as hanging.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(10);

/// The dataset properties that explain figures.
pub const PROPERTIES: [&str; 4] = ["sync", "compression", "recordsize", "primarycache"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolStatus {
    pub pool: String,
    pub state: Option<String>,
    pub vdevs: Vec<Vdev>,
}

impl PoolStatus {
    /// The devices that hold the pool's data (not log, cache, spare or special).
    pub fn data_devices(&self) -> Vec<String> {
        self.vdevs
            .iter()
            .filter(|v| v.class == "data")
            .flat_map(|v| v.devices.iter().cloned())
            .collect()
    }

    /// `mirror (sda3, sdb3); logs: nvme0n1p1; cache: nvme0n1p2`.
    pub fn layout(&self) -> String {
        let short = |d: &str| d.rsplit('/').next().unwrap_or(d).to_string();
        let mut parts: Vec<String> = Vec::new();
        for class in ["data", "special", "dedup", "logs", "cache", "spares"] {
            let vdevs: Vec<String> = self
                .vdevs
                .iter()
                .filter(|v| v.class == class)
                .map(|v| match v.kind().as_str() {
                    "disk" => short(&v.devices.join(", ")),
                    kind => format!(
                        "{kind} ({})",
                        v.devices
                            .iter()
                            .map(|d| short(d))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })
                .collect();
            if vdevs.is_empty() {
                continue;
            }
            let text = vdevs.join(" + ");
            parts.push(if class == "data" {
                text
            } else {
                format!("{class}: {text}")
            });
        }
        parts.join("; ")
    }
}

const CLASSES: [&str; 5] = ["logs", "cache", "spares", "special", "dedup"];
const GROUPS: [&str; 6] = ["mirror", "raidz", "draid", "replacing", "spare", "indirect"];

fn is_group(name: &str) -> bool {
    GROUPS
        .iter()
        .any(|g| name.starts_with(g) && name[g.len()..].starts_with(['-', '1', '2', '3', ':']))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZfsError {
    #[error("{0} is not installed (package zfsutils-linux); cannot see the pool's disks")]
    Missing(&'static str),
    #[error("{tool} did not answer within {} s", TOOL_TIMEOUT.as_secs())]
    Timeout { tool: &'static str },
    #[error("{tool} failed: {message}")]
    Failed { tool: &'static str, message: String },
    #[error("cannot read the output of zpool status: {0}")]
    Parse(String),
}

/// Parses `zpool status -P -L POOL` (text output of any OpenZFS version).
pub fn parse_status(text: &str) -> Result<PoolStatus, ZfsError> {
    let mut pool = None;
    let mut state = None;
    let mut vdevs: Vec<Vdev> = Vec::new();
    let mut in_config = false;
    let mut class = "data".to_string();
    for line in text.lines() {
        let trimmed = line.trim();
        if !in_config {
            if let Some(v) = trimmed.strip_prefix("pool:") {
                pool = Some(v.trim().to_string());
            } else if let Some(v) = trimmed.strip_prefix("state:") {
                state = Some(v.trim().to_string());
            } else if trimmed == "config:" {
                in_config = true;
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with("NAME") {
            continue;
        }
        if trimmed.starts_with("errors:") {
            break;
        }
        // Depth: the spaces after the leading tab, two per level.
        let indent =
            line.trim_start_matches('\t').len() - line.trim_start_matches('\t').trim_start().len();
        let depth = indent / 2;
        let name = trimmed
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        match depth {
            0 if Some(&name) == pool.as_ref() => class = "data".into(),
            0 if CLASSES.contains(&name.as_str()) => class = name,
            0 => {}
            1 if is_group(&name) => vdevs.push(Vdev {
                class: class.clone(),
                name,
                devices: Vec::new(),
            }),
            1 => vdevs.push(Vdev {
                class: class.clone(),
                name: name.clone(),
                devices: vec![name],
            }),
            _ if is_group(&name) => {}
            _ => match vdevs.last_mut() {
                Some(group) => group.devices.push(name),
                None => return Err(ZfsError::Parse(format!("device {name} outside any vdev"))),
            },
        }
    }
    let pool = pool.ok_or_else(|| ZfsError::Parse("no 'pool:' line".into()))?;
    if !in_config {
        return Err(ZfsError::Parse("no 'config:' section".into()));
    }
    Ok(PoolStatus { pool, state, vdevs })
}

/// Parses `zfs get -H -o property,value ...` (tab-separated).
pub fn parse_properties(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(p, _)| PROPERTIES.contains(&p.trim()))
        .map(|(p, v)| (p.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Runs a ZFS tool (found on PATH) with fixed arguments and a timeout.
pub fn run_tool(tool: &'static str, args: &[&str]) -> Result<String, ZfsError> {
    let mut cmd = Command::new(tool);
    cmd.args(args).env("LC_ALL", "C");
    let done = crate::child::run(&mut cmd, TOOL_TIMEOUT, None).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ZfsError::Missing(tool),
        _ => ZfsError::Failed {
            tool,
            message: crate::error::describe(&e),
        },
    })?;
    if done.timed_out {
        return Err(ZfsError::Timeout { tool });
    }
    if !done.success() {
        return Err(ZfsError::Failed {
            tool,
            message: format!("{}: {}", done.status_words(), done.first_error_line()),
        });
    }
    Ok(String::from_utf8_lossy(&done.stdout).into_owned())
}

/// The pool's layout; `Err` says why it could not be learned.
pub fn pool_status(pool: &str) -> Result<PoolStatus, ZfsError> {
    parse_status(&run_tool("zpool", &["status", "-P", "-L", pool])?)
}

pub fn dataset_properties(dataset: &str) -> Result<BTreeMap<String, String>, ZfsError> {
    let list = PROPERTIES.join(",");
    Ok(parse_properties(&run_tool(
        "zfs",
        &["get", "-H", "-o", "property,value", &list, dataset],
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIRROR_WITH_EXTRAS: &str = "  pool: rpool
 state: ONLINE
  scan: scrub repaired 0B in 00:01:23 with 0 errors on Sun Nov 10 00:25:24 2024
config:

\tNAME           STATE     READ WRITE CKSUM
\trpool          ONLINE       0     0     0
\t  mirror-0     ONLINE       0     0     0
\t    /dev/sda3  ONLINE       0     0     0
\t    /dev/sdb3  ONLINE       0     0     0
\tspecial
\t  mirror-1     ONLINE       0     0     0
\t    /dev/nvme0n1p3  ONLINE   0     0     0
\t    /dev/nvme1n1p3  ONLINE   0     0     0
\tlogs
\t  /dev/nvme0n1p1  ONLINE       0     0     0
\tcache
\t  /dev/nvme0n1p2  ONLINE       0     0     0
\tspares
\t  /dev/sdc     AVAIL

errors: No known data errors
";

    #[test]
    fn parses_classes_groups_and_single_disks() {
        let status = parse_status(MIRROR_WITH_EXTRAS).unwrap();
        assert_eq!(status.pool, "rpool");
        assert_eq!(status.state.as_deref(), Some("ONLINE"));
        assert_eq!(status.data_devices(), ["/dev/sda3", "/dev/sdb3"]);
        assert_eq!(status.vdevs.len(), 5);
        assert_eq!(status.vdevs[1].class, "special");
        assert_eq!(status.vdevs[2].devices, ["/dev/nvme0n1p1"]);
        assert_eq!(
            status.layout(),
            "mirror (sda3, sdb3); special: mirror (nvme0n1p3, nvme1n1p3); logs: nvme0n1p1; cache: nvme0n1p2; spares: sdc"
        );
    }

    #[test]
    fn nested_replacing_vdevs_keep_their_disks_in_the_top_vdev() {
        let text = "  pool: tank\n state: DEGRADED\nconfig:\n\n\tNAME\tSTATE\n\ttank  DEGRADED\n\t  raidz2-0  DEGRADED\n\t    /dev/sda  ONLINE\n\t    replacing-1  DEGRADED\n\t      /dev/sdb  FAULTED\n\t      /dev/sdf  ONLINE\n\t    /dev/sdc  ONLINE\n";
        let status = parse_status(text).unwrap();
        assert_eq!(status.vdevs.len(), 1);
        assert_eq!(status.vdevs[0].kind(), "raidz2");
        assert_eq!(
            status.data_devices(),
            ["/dev/sda", "/dev/sdb", "/dev/sdf", "/dev/sdc"]
        );
    }

    #[test]
    fn rejects_what_is_not_zpool_status() {
        assert!(matches!(parse_status(""), Err(ZfsError::Parse(_))));
        assert!(matches!(
            parse_status("  pool: x\n"),
            Err(ZfsError::Parse(_))
        ));
        assert!(matches!(
            parse_status("  pool: x\nconfig:\n\t    /dev/sda ONLINE\n"),
            Err(ZfsError::Parse(_))
        ));
    }

    #[test]
    fn vdev_kinds() {
        let v = |name: &str| Vdev {
            class: "data".into(),
            name: name.into(),
            devices: vec![],
        };
        assert_eq!(v("mirror-0").kind(), "mirror");
        assert_eq!(v("raidz-0").kind(), "raidz1");
        assert_eq!(v("raidz3-1").kind(), "raidz3");
        assert_eq!(v("draid2:4d:10c:1s-0").kind(), "draid2");
        assert_eq!(v("/dev/sda").kind(), "disk");
    }

    #[test]
    fn properties_from_zfs_get() {
        let props = parse_properties(
            "sync\tdisabled\ncompression\tlz4\nrecordsize\t128K\nprimarycache\tall\nother\tx\nbroken\n",
        );
        assert_eq!(props.len(), 4);
        assert_eq!(props["sync"], "disabled");
        assert_eq!(props["recordsize"], "128K");
    }

    #[test]
    fn a_missing_tool_is_named() {
        let err = run_tool("zpool-that-does-not-exist-here", &[]).unwrap_err();
        assert_eq!(err, ZfsError::Missing("zpool-that-does-not-exist-here"));
    }
}
