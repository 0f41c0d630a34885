//! ZFS's text output: a pool's layout from `zpool status -P -L` (any
//! OpenZFS version) and a dataset's properties from `zfs get -H`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vdev {
    /// `data`, `logs`, `cache`, `spares`, `special` or `dedup`.
    pub class: String,
    /// `mirror-0`, `raidz2-0`, `draid1:...`, or the device itself for a single-disk vdev.
    pub name: String,
    /// The leaf devices, as zpool prints them (`/dev/sda3`).
    pub devices: Vec<String>,
}

impl Vdev {
    /// `mirror`, `raidz2`, `draid2`, or `disk`.
    pub fn kind(&self) -> String {
        if self.name.starts_with('/') || !self.name.contains('-') {
            return "disk".into();
        }
        let kind = self.name.split(['-', ':']).next().unwrap_or(&self.name);
        if kind == "raidz" {
            "raidz1".into()
        } else {
            kind.to_string()
        }
    }
}

/// Text that is no `zpool status` output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read the output of zpool status: {0}")]
pub struct StatusError(pub String);

/// Parses `zpool status -P -L POOL` (text output of any OpenZFS version).
pub fn parse_status(text: &str) -> Result<PoolStatus, StatusError> {
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
                None => return Err(StatusError(format!("device {name} outside any vdev"))),
            },
        }
    }
    let pool = pool.ok_or_else(|| StatusError("no 'pool:' line".into()))?;
    if !in_config {
        return Err(StatusError("no 'config:' section".into()));
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

/// `zpool get -Hp -o value ashift POOL`: a block size exponent, 9 to 16,
/// or 0 (ZFS chose per vdev from the disks); anything else is `None`.
pub fn parse_ashift(text: &str) -> Option<u32> {
    let n: u32 = text.trim().parse().ok()?;
    (n == 0 || (9..=16).contains(&n)).then_some(n)
}

/// A scrub or resilver under way, from `zpool status`'s `scan:` lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scan {
    pub pool: String,
    /// `scrub` or `resilver`.
    pub kind: String,
    /// How far it is, %.
    pub done_pct: Option<f64>,
    /// How fast it issues (`3.23G/s`; OpenZFS before 0.8: how fast it scans).
    pub rate: Option<String>,
    /// What zpool estimates is left (`1 days 18:56:16`, `0h46m`).
    pub to_go: Option<String>,
}

/// Every scrub and resilver in progress in `zpool status` output (any
/// number of pools, any OpenZFS version); a paused, canceled or finished
/// one is none.
pub fn scans(text: &str) -> Vec<Scan> {
    let mut out: Vec<Scan> = Vec::new();
    let mut pool = String::new();
    let mut current: Option<Scan> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(p) = trimmed.strip_prefix("pool:") {
            out.extend(current.take());
            pool = p.trim().to_string();
            continue;
        }
        if let Some(scan) = trimmed.strip_prefix("scan:") {
            out.extend(current.take());
            let scan = scan.trim();
            current = ["scrub", "resilver"]
                .into_iter()
                .find(|k| scan.starts_with(&format!("{k} in progress")))
                .map(|k| Scan {
                    pool: pool.clone(),
                    kind: k.to_string(),
                    done_pct: None,
                    rate: None,
                    to_go: None,
                });
            continue;
        }
        let Some(scan) = current.as_mut() else {
            continue;
        };
        // The scan's lines end where the next field begins.
        if trimmed.is_empty() || trimmed.ends_with(':') || trimmed.starts_with("config:") {
            out.extend(current.take());
            continue;
        }
        for part in trimmed.split(", ") {
            if let Some(p) = part.strip_suffix("% done") {
                scan.done_pct = p.trim().parse().ok().filter(|v: &f64| v.is_finite());
            } else if let Some(left) = part.strip_suffix(" to go") {
                scan.to_go = Some(left.trim().to_string());
            } else if let Some((_, rate)) = part.split_once(" issued at ") {
                scan.rate = Some(rate.trim().to_string());
            } else if let Some((_, rate)) = part.split_once(" at ") {
                scan.rate.get_or_insert_with(|| rate.trim().to_string());
            }
        }
    }
    out.extend(current);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn ashift_as_zpool_get_prints_it() {
        assert_eq!(parse_ashift("12\n"), Some(12));
        assert_eq!(parse_ashift("9"), Some(9));
        assert_eq!(parse_ashift("0\n"), Some(0));
        assert_eq!(parse_ashift("8"), None);
        assert_eq!(parse_ashift("-"), None);
        assert_eq!(parse_ashift("ashift 12"), None);
    }

    use super::*;

    #[test]
    fn a_scrub_in_progress_as_openzfs_2_2_prints_it() {
        let s = scans(&crate::testutil::fixture("zfs-status", "scrub-2.2.txt"));
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].pool.as_str(), s[0].kind.as_str()),
            ("backup2", "scrub")
        );
        assert_eq!(s[0].done_pct, Some(34.79));
        assert_eq!(s[0].rate.as_deref(), Some("3.23G/s"));
        assert_eq!(s[0].to_go.as_deref(), Some("1 days 18:56:16"));
    }

    #[test]
    fn a_resilver_in_0_8_and_in_0_6_and_a_finished_scrub() {
        let s = scans(&crate::testutil::fixture("zfs-status", "resilver-0.8.txt"));
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].pool.as_str(), s[0].kind.as_str()), ("vz", "resilver"));
        assert_eq!(s[0].done_pct, Some(66.46));
        assert_eq!(s[0].rate.as_deref(), Some("444M/s"));
        assert_eq!(s[0].to_go.as_deref(), Some("0 days 01:24:38"));
        // Two pools: one resilvers (the old two-line form), one scrubbed long ago.
        let s = scans(&crate::testutil::fixture("zfs-status", "two-pools-0.6.txt"));
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(
            (s[0].pool.as_str(), s[0].kind.as_str()),
            ("tank", "resilver")
        );
        assert_eq!(s[0].done_pct, Some(0.39));
        assert_eq!(s[0].rate.as_deref(), Some("126M/s"));
        assert_eq!(s[0].to_go.as_deref(), Some("0h46m"));
        for file in ["zfs-raidz2-log-cache", "zfs-mirror-partitions"] {
            let dir = format!("storage/{file}/zfs");
            let name = if file.contains("raidz2") {
                "zpool-status-tank.txt"
            } else {
                "zpool-status-rpool.txt"
            };
            assert!(scans(&crate::testutil::fixture(&dir, name)).is_empty());
        }
        let paused = "  pool: p\n  scan: scrub paused since Mon Jan  1 00:00:00 2024\nconfig:\n";
        assert!(scans(paused).is_empty());
    }

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
        assert!(matches!(parse_status(""), Err(StatusError(_))));
        assert!(matches!(parse_status("  pool: x\n"), Err(StatusError(_))));
        assert!(matches!(
            parse_status("  pool: x\nconfig:\n\t    /dev/sda ONLINE\n"),
            Err(StatusError(_))
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
}
