//! What Ceph's own tools print, as `pveprobe ceph` reads it: `ceph osd
//! tree`, `osd metadata`, `osd perf`, `osd df`, `osd pool ls detail` and
//! `osd pool autoscale-status` with `-f json`, `ceph tell osd.N bench`,
//! `rados bench --format json` and `rbd bench` (text: it has no JSON),
//! `ceph tell osd.N perf dump` and `ceph health detail`'s slow ops ([`perf`]).
//!
//! Read leniently, as the formats moved between releases:
//!
//! - Numbers may come as JSON numbers or as strings holding one (`rados
//!   bench` prints every figure as a string; `ceph tell osd.N bench` as
//!   numbers). Both are taken; anything else is no number.
//! - `rados bench --format json` prints `hints = N` on a line of its own
//!   before the JSON (Pacific to Reef): text before the first `{` is
//!   skipped.
//! - `osd perf`'s list sits under `osdstats.osd_perf_infos` from Nautilus
//!   on, at the top level before; both are read.
//! - `osd metadata` gives every value as a string; BlueStore's keys
//!   (`bluestore_bdev_*`, `bluefs_dedicated_db`, `bluefs_db_*`) are absent
//!   for memstore and filestore OSDs.
//!
//! Every parser returns an error naming what it expected when the text is
//! no JSON of that shape; a field missing from an item leaves it `None`.

mod bench;
mod perf;

use serde_json::Value;

pub use bench::{
    OsdBench, RadosBench, RadosSecond, RbdBench, RbdSecond, osd_bench, rados_bench, rbd_bench,
};
pub use perf::{OsdCounters, TimeAvg, perf_dump, slow_ops_osds};

/// Larger input is refused: a 1,000-OSD cluster's metadata is a few MiB.
pub const MAX_BYTES: usize = 64 << 20;

/// Output that is no JSON of the expected shape.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CephOutputError {
    #[error("{what}: the output is {bytes} bytes, more than the {MAX_BYTES} read")]
    TooLarge { what: &'static str, bytes: usize },
    #[error("{what}: no JSON: {why}")]
    NotJson { what: &'static str, why: String },
    #[error("{what}: {expected} expected")]
    Shape {
        what: &'static str,
        expected: &'static str,
    },
}

fn json(what: &'static str, text: &str) -> Result<Value, CephOutputError> {
    if text.len() > MAX_BYTES {
        return Err(CephOutputError::TooLarge {
            what,
            bytes: text.len(),
        });
    }
    // `hints = 1` (rados bench) and any other line before the document.
    let start = text
        .find(['{', '['])
        .ok_or_else(|| CephOutputError::NotJson {
            what,
            why: format!("{:?}", crate::quote(text.trim())),
        })?;
    serde_json::from_str(&text[start..]).map_err(|e| CephOutputError::NotJson {
        what,
        why: e.to_string(),
    })
}

/// `x`, or 0 where a division overflowed.
fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

/// A word as a finite number.
fn word(w: &str) -> Option<f64> {
    w.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A number given as a number or as a string holding one.
pub fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
    .filter(|x| x.is_finite())
}

fn field(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(num)
}

fn string(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn int(v: &Value, key: &str) -> Option<i64> {
    let x = field(v, key)?;
    (x.fract() == 0.0 && x.abs() < 1e15).then_some(x as i64)
}

/// A flag given as `"1"`/`"0"`, `1`/`0` or `true`/`false`.
fn flag(v: &Value, key: &str) -> Option<bool> {
    field(v, key).map(|x| x != 0.0)
}

/// A device type (`hdd`, `ssd`, `nvme`) as whether it spins.
fn spins(v: &Value, key: &str) -> Option<bool> {
    match string(v, key)?.as_str() {
        "hdd" => Some(true),
        "ssd" | "nvme" => Some(false),
        _ => None,
    }
}

/// The list a command printed: its document (`key` None) or the
/// document's member `key`; `expected` says which, for the error.
fn items(
    what: &'static str,
    text: &str,
    key: Option<&str>,
    expected: &'static str,
) -> Result<Vec<Value>, CephOutputError> {
    let doc = json(what, text)?;
    let found = match key {
        Some(k) => doc.get(k).cloned(),
        None => Some(doc),
    };
    match found {
        Some(Value::Array(a)) => Ok(a),
        _ => Err(CephOutputError::Shape { what, expected }),
    }
}

fn list<'a>(
    v: &'a Value,
    what: &'static str,
    expected: &'static str,
) -> Result<&'a Vec<Value>, CephOutputError> {
    v.as_array()
        .ok_or(CephOutputError::Shape { what, expected })
}

/// An OSD in `ceph osd tree`: its host is the `host` bucket that lists it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TreeOsd {
    pub id: i64,
    pub name: String,
    pub device_class: Option<String>,
    pub host: Option<String>,
    /// `up` or `down`.
    pub status: Option<String>,
    pub crush_weight: Option<f64>,
    pub reweight: Option<f64>,
}

/// `ceph osd tree -f json`: its OSDs, in id order.
pub fn osd_tree(text: &str) -> Result<Vec<TreeOsd>, CephOutputError> {
    let nodes = items(
        "ceph osd tree",
        text,
        Some("nodes"),
        "an object with a nodes list",
    )?;
    let mut host_of = std::collections::HashMap::new();
    for n in &nodes {
        if n.get("type").and_then(Value::as_str) == Some("host") {
            let name = string(n, "name").unwrap_or_default();
            for child in n
                .get("children")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(id) = child.as_i64() {
                    host_of.insert(id, name.clone());
                }
            }
        }
    }
    let mut osds: Vec<TreeOsd> = nodes
        .iter()
        .filter(|n| n.get("type").and_then(Value::as_str) == Some("osd"))
        .filter_map(|n| {
            let id = int(n, "id")?;
            Some(TreeOsd {
                id,
                name: string(n, "name").unwrap_or_else(|| format!("osd.{id}")),
                device_class: string(n, "device_class"),
                host: host_of.get(&id).cloned(),
                status: string(n, "status"),
                crush_weight: field(n, "crush_weight"),
                reweight: field(n, "reweight"),
            })
        })
        .collect();
    osds.sort_by_key(|o| o.id);
    osds.dedup_by_key(|o| o.id);
    Ok(osds)
}

/// One OSD's `ceph osd metadata`: where its data, DB and WAL live.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OsdMetadata {
    pub id: i64,
    pub hostname: Option<String>,
    /// `bluestore`, `filestore`, `memstore`.
    pub objectstore: Option<String>,
    /// The data device's node (`/dev/dm-3`) and its type (`hdd`, `ssd`).
    pub bdev_dev_node: Option<String>,
    pub bdev_type: Option<String>,
    pub bdev_rotational: Option<bool>,
    /// Whether the DB (RocksDB) has a device of its own, and that device's kind.
    pub dedicated_db: Option<bool>,
    pub db_rotational: Option<bool>,
    pub db_dev_node: Option<String>,
    pub dedicated_wal: Option<bool>,
    pub wal_rotational: Option<bool>,
    /// The kernel names of the disks below it (`sda,nvme0n1`), as Ceph found them.
    pub devices: Vec<String>,
    /// `MODEL_SERIAL` per device (`sda=WDC_WD4000_XXXX`).
    pub device_ids: Option<String>,
    pub ceph_version: Option<String>,
}

/// `ceph osd metadata -f json`: every OSD's metadata, in id order.
pub fn osd_metadata(text: &str) -> Result<Vec<OsdMetadata>, CephOutputError> {
    const WHAT: &str = "ceph osd metadata";
    let doc = json(WHAT, text)?;
    // `ceph osd metadata N` gives one object, without N gives a list.
    let items: Vec<&Value> = match &doc {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => vec![&doc],
        _ => {
            return Err(CephOutputError::Shape {
                what: WHAT,
                expected: "a list of objects",
            });
        }
    };
    let mut out: Vec<OsdMetadata> = items
        .into_iter()
        .filter_map(|m| {
            Some(OsdMetadata {
                id: int(m, "id")?,
                hostname: string(m, "hostname"),
                objectstore: string(m, "osd_objectstore"),
                // Nautilus on: `*_dev_node` and `*_rotational`; before,
                // `*_partition_path` and `*_type` (hdd, ssd, nvme) only.
                bdev_dev_node: string(m, "bluestore_bdev_dev_node")
                    .or_else(|| string(m, "bluestore_bdev_partition_path")),
                bdev_type: string(m, "bluestore_bdev_type"),
                bdev_rotational: flag(m, "bluestore_bdev_rotational")
                    .or_else(|| spins(m, "bluestore_bdev_type"))
                    .or_else(|| flag(m, "rotational")),
                dedicated_db: flag(m, "bluefs_dedicated_db"),
                db_rotational: flag(m, "bluefs_db_rotational")
                    .or_else(|| spins(m, "bluefs_db_type")),
                db_dev_node: string(m, "bluefs_db_dev_node")
                    .or_else(|| string(m, "bluefs_db_partition_path")),
                dedicated_wal: flag(m, "bluefs_dedicated_wal"),
                wal_rotational: flag(m, "bluefs_wal_rotational")
                    .or_else(|| spins(m, "bluefs_wal_type")),
                devices: string(m, "devices")
                    .map(|d| {
                        d.split(',')
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default(),
                device_ids: string(m, "device_ids").filter(|s| !s.is_empty()),
                ceph_version: string(m, "ceph_version_short").or(string(m, "ceph_version")),
            })
        })
        .collect();
    out.sort_by_key(|o| o.id);
    Ok(out)
}

/// An OSD's latencies from `ceph osd perf`, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OsdPerf {
    pub id: i64,
    pub commit_ms: f64,
    pub apply_ms: f64,
}

/// `ceph osd perf -f json`: each OSD's commit and apply latency.
pub fn osd_perf(text: &str) -> Result<Vec<OsdPerf>, CephOutputError> {
    const WHAT: &str = "ceph osd perf";
    let doc = json(WHAT, text)?;
    let infos = doc
        .pointer("/osdstats/osd_perf_infos")
        .or_else(|| doc.get("osd_perf_infos"))
        .ok_or(CephOutputError::Shape {
            what: WHAT,
            expected: "osdstats.osd_perf_infos",
        })?;
    let mut out: Vec<OsdPerf> = list(infos, WHAT, "a list in osd_perf_infos")?
        .iter()
        .filter_map(|i| {
            let s = i.get("perf_stats")?;
            // The nanosecond fields are exact where present (Mimic on).
            let ms = |key: &str| {
                field(s, &format!("{key}_latency_ns"))
                    .map(|ns| ns / 1e6)
                    .or_else(|| field(s, &format!("{key}_latency_ms")))
            };
            Some(OsdPerf {
                id: int(i, "id")?,
                commit_ms: ms("commit")?,
                apply_ms: ms("apply").unwrap_or(0.0),
            })
        })
        .collect();
    out.sort_by_key(|o| o.id);
    Ok(out)
}

/// An OSD's fill from `ceph osd df`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OsdDf {
    pub id: i64,
    /// Percent used.
    pub utilization: f64,
    pub kb: f64,
    pub kb_avail: f64,
}

/// `ceph osd df -f json`: each OSD's use.
pub fn osd_df(text: &str) -> Result<Vec<OsdDf>, CephOutputError> {
    let nodes = items(
        "ceph osd df",
        text,
        Some("nodes"),
        "an object with a nodes list",
    )?;
    Ok(nodes
        .iter()
        .filter_map(|n| {
            Some(OsdDf {
                id: int(n, "id")?,
                utilization: field(n, "utilization")?,
                kb: field(n, "kb").unwrap_or(0.0),
                kb_avail: field(n, "kb_avail").unwrap_or(0.0),
            })
        })
        .collect())
}

/// A pool from `ceph osd pool ls detail`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pool {
    pub id: i64,
    pub name: String,
    /// `replicated` or `erasure`.
    pub kind: String,
    pub size: Option<i64>,
    pub min_size: Option<i64>,
    pub pg_num: Option<i64>,
    pub autoscale_mode: Option<String>,
    /// `rbd`, `cephfs`, `rgw`, `mgr_devicehealth`, `mgr`.
    pub applications: Vec<String>,
}

/// `ceph osd pool ls detail -f json`.
pub fn pools(text: &str) -> Result<Vec<Pool>, CephOutputError> {
    Ok(
        items("ceph osd pool ls detail", text, None, "a list of pools")?
            .iter()
            .filter_map(|p| {
                Some(Pool {
                    id: int(p, "pool_id").or_else(|| int(p, "pool"))?,
                    name: string(p, "pool_name")?,
                    // pg_pool_t: TYPE_REPLICATED 1, TYPE_ERASURE 3.
                    kind: match int(p, "type") {
                        Some(3) => "erasure".into(),
                        _ => "replicated".into(),
                    },
                    size: int(p, "size"),
                    min_size: int(p, "min_size"),
                    pg_num: int(p, "pg_num"),
                    autoscale_mode: string(p, "pg_autoscale_mode"),
                    applications: p
                        .get("application_metadata")
                        .and_then(Value::as_object)
                        .map(|m| m.keys().cloned().collect())
                        .unwrap_or_default(),
                })
            })
            .collect(),
    )
}

/// A pool's room from `ceph df`: what clients can still write to it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PoolSpace {
    pub pool: String,
    /// Bytes a client can still write (after replication and the full ratio).
    pub max_avail: f64,
    pub stored: f64,
}

/// `ceph df -f json`: each pool's MAX AVAIL.
pub fn df_pools(text: &str) -> Result<Vec<PoolSpace>, CephOutputError> {
    let pools = items(
        "ceph df",
        text,
        Some("pools"),
        "an object with a pools list",
    )?;
    Ok(pools
        .iter()
        .filter_map(|p| {
            let stats = p.get("stats")?;
            Some(PoolSpace {
                pool: string(p, "name")?,
                max_avail: field(stats, "max_avail")?,
                stored: field(stats, "stored").unwrap_or(0.0),
            })
        })
        .collect())
}

/// What the autoscaler would do with a pool's placement groups.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Autoscale {
    pub pool: String,
    pub pg_num: Option<i64>,
    /// The count it wants (`pg_num_final`).
    pub pg_num_final: Option<i64>,
    /// Whether it would change the count (it does with mode `on`, it warns with `warn`).
    pub would_adjust: bool,
    pub mode: Option<String>,
}

/// `ceph osd pool autoscale-status -f json`.
pub fn autoscale_status(text: &str) -> Result<Vec<Autoscale>, CephOutputError> {
    Ok(items(
        "ceph osd pool autoscale-status",
        text,
        None,
        "a list of pools",
    )?
    .iter()
    .filter_map(|p| {
        Some(Autoscale {
            pool: string(p, "pool_name")?,
            pg_num: int(p, "pg_num_target"),
            pg_num_final: int(p, "pg_num_final"),
            would_adjust: flag(p, "would_adjust").unwrap_or(false),
            mode: string(p, "pg_autoscale_mode"),
        })
    })
    .collect())
}

/// Each placement group's state (`active+clean`, `creating+peering`...)
/// from `ceph pg ls-by-pool POOL -f json` (`{"pg_stats": [...]}`; before
/// Nautilus a bare list).
pub fn pg_states(text: &str) -> Result<Vec<String>, CephOutputError> {
    const WHAT: &str = "ceph pg ls-by-pool";
    let list = match json(WHAT, text)? {
        Value::Array(a) => a,
        _ => items(
            WHAT,
            text,
            Some("pg_stats"),
            "an object with a pg_stats list",
        )?,
    };
    Ok(list.iter().filter_map(|p| string(p, "state")).collect())
}

/// One option's value from `ceph tell mon.X config get OPTION -f json`
/// (`{"OPTION": "VALUE"}`).
pub fn config_value(text: &str, option: &str) -> Result<String, CephOutputError> {
    const WHAT: &str = "ceph tell config get";
    string(&json(WHAT, text)?, option).ok_or(CephOutputError::Shape {
        what: WHAT,
        expected: "an object with the option's value",
    })
}

/// What the cluster does besides serving clients, from `ceph status -f
/// json`: placement groups recovering, backfilling and scrubbing, and how
/// fast it recovers.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClusterActivity {
    /// `HEALTH_OK`, `HEALTH_WARN`, `HEALTH_ERR`.
    pub health: Option<String>,
    /// PGs recovering now, and waiting to.
    pub recovering_pgs: u64,
    pub recovery_wait_pgs: u64,
    /// PGs backfilling now, and waiting to.
    pub backfilling_pgs: u64,
    pub backfill_wait_pgs: u64,
    /// PGs scrubbing now (deep scrubs among them).
    pub scrubbing_pgs: u64,
    pub deep_scrubbing_pgs: u64,
    /// Recovery's rate (bytes/s) and the share of objects degraded or
    /// misplaced, where Ceph reports them.
    pub recovering_bytes_per_sec: Option<f64>,
    pub degraded_ratio: Option<f64>,
    pub misplaced_ratio: Option<f64>,
}

impl ClusterActivity {
    /// Whether recovery, backfill or a scrub runs now.
    pub fn busy(&self) -> bool {
        self.recovering_pgs + self.backfilling_pgs + self.scrubbing_pgs > 0
    }
}

/// `ceph status -f json` (`{"health": {"status": ...}, "pgmap":
/// {"pgs_by_state": [{"state_name", "count"}], ...}}`).
pub fn cluster_activity(text: &str) -> Result<ClusterActivity, CephOutputError> {
    const WHAT: &str = "ceph status";
    let doc = json(WHAT, text)?;
    let pgmap = doc.get("pgmap").ok_or(CephOutputError::Shape {
        what: WHAT,
        expected: "an object with a pgmap",
    })?;
    let mut a = ClusterActivity {
        health: doc.get("health").and_then(|h| string(h, "status")),
        recovering_bytes_per_sec: field(pgmap, "recovering_bytes_per_sec"),
        degraded_ratio: field(pgmap, "degraded_ratio"),
        misplaced_ratio: field(pgmap, "misplaced_ratio"),
        ..ClusterActivity::default()
    };
    for s in pgmap
        .get("pgs_by_state")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(state) = string(s, "state_name") else {
            continue;
        };
        let n = int(s, "count").unwrap_or(0).max(0) as u64;
        let has = |w: &str| state.split('+').any(|p| p == w);
        let adds = [
            (has("recovering"), &mut a.recovering_pgs),
            (has("recovery_wait"), &mut a.recovery_wait_pgs),
            (has("backfilling"), &mut a.backfilling_pgs),
            (has("backfill_wait"), &mut a.backfill_wait_pgs),
            (has("scrubbing"), &mut a.scrubbing_pgs),
            (has("scrubbing") && has("deep"), &mut a.deep_scrubbing_pgs),
        ];
        for (yes, count) in adds {
            if yes {
                *count = count.saturating_add(n);
            }
        }
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::fixture;

    fn pacific(name: &str) -> String {
        fixture("ceph/pacific", name)
    }

    #[test]
    fn a_recovering_cluster_and_a_healthy_one() {
        let a = cluster_activity(&pacific("status-recovering.json")).unwrap();
        assert_eq!(a.recovering_pgs, 1);
        assert_eq!(a.recovery_wait_pgs, 31);
        assert_eq!((a.backfilling_pgs, a.scrubbing_pgs), (0, 0));
        assert!(a.busy());
        assert!(a.recovering_bytes_per_sec.unwrap() > 0.0);
        assert!(a.degraded_ratio.unwrap() > 0.5);
        let h = cluster_activity(&pacific("status-healthy.json")).unwrap();
        assert!(!h.busy());
        assert_eq!(h.recovering_bytes_per_sec, None);
        assert!(cluster_activity("{}").is_err());
        assert!(cluster_activity("no json").is_err());
    }

    #[test]
    fn a_deep_scrub_counts_as_a_scrub() {
        let a = cluster_activity(&pacific("status-deep-scrubbing.json")).unwrap();
        assert!(a.scrubbing_pgs > 0, "{a:?}");
        assert_eq!(a.deep_scrubbing_pgs, a.scrubbing_pgs);
        assert!(a.busy());
        let made = r#"{"pgmap": {"pgs_by_state": [
            {"state_name": "active+remapped+backfilling", "count": 3},
            {"state_name": "active+remapped+backfill_wait", "count": 9},
            {"state_name": "active+clean+scrubbing", "count": 2},
            {"state_name": "active+clean", "count": -4}]}}"#;
        let a = cluster_activity(made).unwrap();
        assert_eq!((a.backfilling_pgs, a.backfill_wait_pgs), (3, 9));
        assert_eq!((a.scrubbing_pgs, a.deep_scrubbing_pgs), (2, 0));
    }

    #[test]
    fn the_tree_gives_each_osd_its_host_and_class() {
        let osds = osd_tree(&pacific("osd-tree.json")).unwrap();
        assert_eq!(osds.iter().map(|o| o.id).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(osds.iter().all(|o| o.host.as_deref() == Some("vm")));
        assert!(
            osds.iter()
                .all(|o| o.device_class.as_deref() == Some("hdd"))
        );
        assert_eq!(osds[1].status.as_deref(), Some("up"));
    }

    #[test]
    fn metadata_of_a_memstore_osd_has_no_bluestore_devices() {
        let m = osd_metadata(&pacific("osd-metadata.json")).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].objectstore.as_deref(), Some("memstore"));
        assert_eq!(m[0].dedicated_db, None);
        assert_eq!(m[0].hostname.as_deref(), Some("vm"));
        assert!(m[0].ceph_version.as_deref().unwrap().starts_with("16.2"));
    }

    #[test]
    fn reef_metadata_of_one_osd_gives_its_bluestore_devices() {
        let m = osd_metadata(&fixture("ceph/reef", "osd-metadata-0.json")).unwrap();
        assert_eq!(m.len(), 1);
        let m = &m[0];
        assert_eq!(m.objectstore.as_deref(), Some("bluestore"));
        assert_eq!(m.bdev_dev_node.as_deref(), Some("/dev/sdb"));
        assert_eq!(
            (m.bdev_rotational, m.dedicated_db),
            (Some(true), Some(false))
        );
        assert_eq!(m.devices, ["sdb"]);
        assert_eq!(m.ceph_version.as_deref(), Some("18.2.4"));
        // Before Nautilus: partition paths and types only.
        let old = r#"[{"id":20,"bluestore_bdev_partition_path":"/dev/dm-0","bluestore_bdev_type":"hdd","bluefs_dedicated_db":"1","bluefs_db_type":"ssd","bluefs_db_partition_path":"/dev/dm-1","devices":"vde,vdd"}]"#;
        let m = &osd_metadata(old).unwrap()[0];
        assert_eq!(m.bdev_dev_node.as_deref(), Some("/dev/dm-0"));
        assert_eq!(
            (m.bdev_rotational, m.db_rotational),
            (Some(true), Some(false))
        );
        assert_eq!(m.db_dev_node.as_deref(), Some("/dev/dm-1"));
        assert_eq!(m.devices, ["vde", "vdd"]);
    }

    #[test]
    fn perf_reads_nanoseconds_and_both_layouts() {
        let p = osd_perf(&pacific("osd-perf.json")).unwrap();
        assert_eq!(p.len(), 3);
        let old = r#"{"osd_perf_infos":[{"id":4,"perf_stats":{"commit_latency_ms":12,"apply_latency_ms":3}}]}"#;
        assert_eq!(
            osd_perf(old).unwrap(),
            [OsdPerf {
                id: 4,
                commit_ms: 12.0,
                apply_ms: 3.0
            }]
        );
        let ns = r#"{"osdstats":{"osd_perf_infos":[{"id":1,"perf_stats":{"commit_latency_ms":2,"apply_latency_ms":2,"commit_latency_ns":2500000,"apply_latency_ns":2500000}}]}}"#;
        assert_eq!(osd_perf(ns).unwrap()[0].commit_ms, 2.5);
        assert!(osd_perf("{}").is_err());
    }

    #[test]
    fn pools_give_size_min_size_and_application() {
        let p = pools(&pacific("osd-pool-ls-detail.json")).unwrap();
        let bench = p.iter().find(|p| p.name == "bench").unwrap();
        assert_eq!(
            (bench.size, bench.min_size, bench.pg_num),
            (Some(1), Some(1), Some(32))
        );
        assert_eq!(bench.applications, ["rbd"]);
        assert_eq!(bench.kind, "replicated");
        let a = autoscale_status(&pacific("osd-pool-autoscale-status.json")).unwrap();
        assert!(a.iter().any(|a| a.pool == "bench"));
        let df = osd_df(&pacific("osd-df.json")).unwrap();
        assert_eq!(df.len(), 3);
        assert!(
            df.iter()
                .all(|d| d.utilization > 0.0 && d.utilization < 100.0)
        );
    }

    #[test]
    fn df_gives_each_pools_room() {
        let d = df_pools(&pacific("df.json")).unwrap();
        let bench = d.iter().find(|p| p.pool == "bench").unwrap();
        assert_eq!(bench.max_avail, 9180424192.0);
        assert!(df_pools("{}").is_err());
    }

    #[test]
    fn the_osd_bench_gives_bytes_and_iops() {
        let b = osd_bench(&pacific("tell-osd-bench.json")).unwrap();
        assert_eq!((b.bytes_written, b.blocksize), (1073741824.0, 4194304.0));
        let small = osd_bench(&pacific("tell-osd-bench-4k.json")).unwrap();
        assert_eq!(small.blocksize, 4096.0);
        assert!(small.iops > 0.0);
        // Without iops (Luminous): the rate in blocks.
        let b = osd_bench(
            r#"{"bytes_written":4096,"blocksize":4096,"elapsed_sec":1,"bytes_per_sec":8192}"#,
        )
        .unwrap();
        assert_eq!(b.iops, 2.0);
        // Crimson's OSD: the same figures inside osd_bench_results.
        let c = osd_bench(&fixture("ceph/crimson", "tell-osd-bench.json")).unwrap();
        assert_eq!((c.bytes_written, c.iops), (1073741824.0, 512.0));
    }

    #[test]
    fn placement_group_states_and_a_monitors_option_are_read() {
        let states = pg_states(&pacific("pg-ls-by-pool.json")).unwrap();
        assert!(!states.is_empty());
        assert!(states.iter().all(|s| s.starts_with("active")), "{states:?}");
        assert_eq!(
            pg_states(r#"[{"pgid":"1.0","state":"creating+peering"}]"#).unwrap(),
            ["creating+peering"]
        );
        assert!(pg_states(r#"{"pg_ready":true}"#).is_err());
        let v = config_value(
            &pacific("tell-mon-config-get.json"),
            "mon_allow_pool_delete",
        )
        .unwrap();
        assert_eq!(v, "false");
        assert!(config_value("{}", "mon_allow_pool_delete").is_err());
    }

    #[test]
    fn rados_bench_skips_the_hints_line_and_reads_strings() {
        let w = rados_bench(&pacific("rados-bench-write-4m.txt")).unwrap();
        assert_eq!((w.ops, w.op_size), (245.0, 4194304.0));
        assert_eq!(w.seconds.len(), 2, "second 0 is left out");
        assert!(w.bandwidth > 0.0 && w.average_latency > 0.0);
        assert_eq!(w.object_prefix.as_deref(), Some("benchmark_data_vm_23665"));
        let seq = rados_bench(&pacific("rados-bench-seq.txt")).unwrap();
        assert_eq!(seq.ops, 245.0);
        let rand = rados_bench(&pacific("rados-bench-rand.txt")).unwrap();
        assert!(rand.average_iops > 0.0);
        // A run without --no-cleanup: its cleanup's lines cut the JSON.
        let small = rados_bench(&pacific("rados-bench-write-4k.txt")).unwrap();
        assert_eq!(small.op_size, 4096.0);
        assert!(!small.seconds.is_empty() && small.ops > 1000.0);
        assert!(rados_bench("hints = 1\n").is_err());
        assert!(rados_bench("hints = 1\n{\"datas\":[]}").is_err());
    }

    #[test]
    fn rbd_bench_reads_seconds_and_the_summary_with_units() {
        let b = rbd_bench(&pacific("rbd-bench-write-4k.txt")).unwrap();
        assert_eq!(b.seconds.len(), 10);
        assert_eq!((b.elapsed, b.ops), (153.0, 524288.0));
        assert_eq!(b.bytes_per_sec, 13.0 * 1024.0 * 1024.0);
        assert_eq!(b.seconds[0].bytes_per_sec, 46.0 * 1024.0 * 1024.0);
        let small = "elapsed: 2   ops: 10   ops/sec: 5   bytes/sec: 9.8 KiB/s\n";
        assert_eq!(rbd_bench(small).unwrap().bytes_per_sec, 9.8 * 1024.0);
        assert!(rbd_bench("bench  type write\n").is_err());
    }

    #[test]
    fn numbers_come_as_numbers_or_strings() {
        assert_eq!(num(&Value::from("1.5")), Some(1.5));
        assert_eq!(num(&Value::from(2)), Some(2.0));
        assert_eq!(num(&Value::from("nan")), None);
        assert_eq!(num(&Value::Null), None);
    }
}
