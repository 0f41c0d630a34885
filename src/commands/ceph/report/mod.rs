//! The ceph command's document: each OSD's place, devices, latencies and
//! bench; each pool's settings and bench jobs; the hints that read them
//! together ([`hints`]). Plain data in; text ([`text`]), JSON, CSV,
//! metrics and `--plot` ([`formats`]) out.

mod formats;
pub mod hints;
mod text;

pub use formats::CSV_HEADER;

use serde::{Deserialize, Serialize};

use crate::model::hint::Hint;

use super::{BenchFigure, CephRequest, ClusterView, PoolJob};
use hints::{drags_pool, hints, slow_in_class, unhealthy};

/// The document's `kind`.
pub const KIND: &str = "ceph";
/// Its schema's version: a change that breaks a reader counts it up.
pub const SCHEMA_VERSION: u32 = 1;
/// An OSD below its device class's median by more than this share is marked `!`.
pub const SLOW_SHARE: f64 = 1.0 / 3.0;
/// Commit latency this many times its class's median (and 5 ms above it) is far above.
pub const LATENCY_FACTOR: f64 = 3.0;
/// Ceph's default `mon_osd_nearfull_ratio`, in percent.
pub const NEARFULL_PCT: f64 = 85.0;
/// 4 KiB writes a second below which an OSD on flash is no datacenter SSD's.
pub const FLASH_SMALL_IOPS: f64 = 1000.0;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OsdResult {
    pub id: i64,
    pub host: Option<String>,
    pub device_class: Option<String>,
    pub status: Option<String>,
    pub objectstore: Option<String>,
    /// The data device (`/dev/sdb`) and whether it spins.
    pub data_device: Option<String>,
    pub data_rotational: Option<bool>,
    /// Whether the DB has a device of its own, that device, and whether it spins.
    pub dedicated_db: Option<bool>,
    pub db_device: Option<String>,
    pub db_rotational: Option<bool>,
    /// Disks below the OSD as Ceph names them.
    pub devices: Vec<String>,
    pub device_ids: Option<String>,
    pub commit_ms: Option<f64>,
    pub apply_ms: Option<f64>,
    /// Percent of the OSD used.
    pub utilization: Option<f64>,
    /// `ceph tell osd.N bench`: 1 GiB in 4 MiB writes.
    pub bench_4m: Option<BenchFigure>,
    /// The same in 4 KiB writes, within the OSD's limit.
    pub bench_4k: Option<BenchFigure>,
    /// A disk below it whose model has a published one-job 4 KiB synced
    /// write figure (matched on Ceph's `device_ids`).
    #[serde(default)]
    pub published: Option<PublishedSync>,
    /// SMART health of its disks (smartctl on the OSD's node).
    #[serde(default)]
    pub health: Vec<crate::model::storage::Health>,
    /// Its disks' links (SATA, SAS, USB, the controller's PCIe), each with
    /// its disk's name, read in sysfs on the OSD's node.
    #[serde(default)]
    pub links: Vec<(String, crate::model::storage::Link)>,
    /// Marked `!`: its bench is more than a third below its class's median.
    pub slow: bool,
    /// Its node's load when read (before the benches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_load: Option<crate::model::host::NodeLoad>,
    /// The slowest mean of its operations in a pool job (ten or more), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_op_ms: Option<f64>,
    /// Marked `*`: in a pool job its operations were far slower than its
    /// class's peers' (see `hints::drags_pool`).
    #[serde(default)]
    pub drags: bool,
    pub errors: Vec<String>,
}

/// A published SYNC WRITE 4K row for an OSD's disk model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PublishedSync {
    /// The disk as Ceph names it (`sdb`).
    pub disk: String,
    /// The model as the source names it.
    pub model: String,
    pub iops: f64,
    pub source: String,
}

/// The first disk of `device_ids` (`sdb=MODEL_SERIAL,sdc=...`) with a published row.
pub fn published_of(device_ids: &str) -> Option<PublishedSync> {
    device_ids.split(',').find_map(|pair| {
        let (disk, id) = pair.split_once('=')?;
        let (model, iops, source, _) = crate::syncverdict::published::row_for(id)?;
        Some(PublishedSync {
            disk: disk.trim().to_string(),
            model: model.into(),
            iops,
            source: source.into(),
        })
    })
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolResult {
    pub name: String,
    pub kind: String,
    pub size: Option<i64>,
    pub min_size: Option<i64>,
    pub pg_num: Option<i64>,
    /// The PG count the autoscaler wants, when it differs.
    pub pg_num_wanted: Option<i64>,
    pub autoscale_mode: Option<String>,
    pub applications: Vec<String>,
    /// Made by this run (`--scratch-pool`) and deleted after it.
    #[serde(default)]
    pub scratch: bool,
    pub jobs: Vec<PoolJob>,
    pub errors: Vec<String>,
}

impl PoolResult {
    /// A pool as the cluster describes it, before its benches.
    pub fn of(p: &pveprobe_parse::ceph::Pool, view: &super::ClusterView) -> PoolResult {
        let auto = view.autoscale.iter().find(|a| a.pool == p.name);
        PoolResult {
            name: p.name.clone(),
            kind: p.kind.clone(),
            size: p.size,
            min_size: p.min_size,
            pg_num: p.pg_num,
            pg_num_wanted: auto
                .filter(|a| a.would_adjust)
                .and_then(|a| a.pg_num_final)
                .filter(|n| Some(*n) != p.pg_num),
            autoscale_mode: p.autoscale_mode.clone(),
            applications: p.applications.clone(),
            ..PoolResult::default()
        }
    }

    /// How `compare` names the pool: a scratch pool by what it is, as its
    /// name changes from run to run.
    pub fn instance(&self) -> String {
        if self.scratch {
            SCRATCH_INSTANCE.into()
        } else {
            self.name.clone()
        }
    }
}

/// `compare`'s name for a run's scratch pool.
pub const SCRATCH_INSTANCE: &str = "scratch pool";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CephReport {
    pub schema_version: u32,
    /// Always `ceph`: how `compare` knows the document.
    pub kind: String,
    pub pveprobe_version: String,
    /// When the run started (RFC 3339).
    pub timestamp: String,
    /// The namespace and scratch image name the run used.
    pub run_id: String,
    pub fsid: Option<String>,
    pub health: Option<String>,
    /// Seconds of each rados bench run.
    pub seconds: u32,
    pub osds: Vec<OsdResult>,
    pub pools: Vec<PoolResult>,
    /// Ceph's public and cluster networks on this node, then on the other
    /// nodes that hold OSDs (`node` set).
    #[serde(default)]
    pub networks: Vec<super::network::CephLink>,
    pub hints: Vec<Hint>,
    /// What the cluster's tools could not tell.
    pub notes: Vec<String>,
    /// What could not be removed.
    pub left_behind: Vec<String>,
    pub interrupted_by: Option<i32>,
}

impl crate::results::Stored for CephReport {
    const KIND: Option<&'static str> = Some(KIND);
    const SCHEMA_VERSION: u32 = SCHEMA_VERSION;

    fn schema_version(&self) -> u32 {
        self.schema_version
    }

    fn results(self) -> Vec<crate::results::Named> {
        let who = self.fsid.as_deref().map(|f| format!("Ceph {f}"));
        vec![crate::results::Named::new(who, self.as_result())]
    }
}

impl CephReport {
    /// The cluster as read, before any bench.
    pub fn from_view(req: &CephRequest, view: &ClusterView) -> Self {
        let osds = view
            .tree
            .iter()
            .map(|t| {
                let m = view.metadata.iter().find(|m| m.id == t.id);
                let perf = view.perf.iter().find(|p| p.id == t.id);
                OsdResult {
                    id: t.id,
                    host: t
                        .host
                        .clone()
                        .or_else(|| m.and_then(|m| m.hostname.clone())),
                    device_class: t.device_class.clone(),
                    status: t.status.clone(),
                    objectstore: m.and_then(|m| m.objectstore.clone()),
                    data_device: m.and_then(|m| m.bdev_dev_node.clone()),
                    data_rotational: m.and_then(|m| m.bdev_rotational),
                    dedicated_db: m.and_then(|m| m.dedicated_db),
                    db_device: m.and_then(|m| m.db_dev_node.clone()),
                    db_rotational: m.and_then(|m| m.db_rotational),
                    devices: m.map(|m| m.devices.clone()).unwrap_or_default(),
                    device_ids: m.and_then(|m| m.device_ids.clone()),
                    published: m
                        .and_then(|m| m.device_ids.as_deref())
                        .and_then(published_of),
                    commit_ms: perf.map(|p| p.commit_ms),
                    apply_ms: perf.map(|p| p.apply_ms),
                    utilization: view.df.iter().find(|d| d.id == t.id).map(|d| d.utilization),
                    ..OsdResult::default()
                }
            })
            .collect();
        // A scratch pool's run benches that pool alone (added once made).
        let chosen = if req.scratch_pool {
            Vec::new()
        } else {
            super::chosen_pools(req, view).unwrap_or_default()
        };
        let pools = chosen
            .into_iter()
            .map(|p| PoolResult::of(p, view))
            .collect();
        CephReport {
            schema_version: SCHEMA_VERSION,
            kind: KIND.into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: jiff::Timestamp::now().to_string(),
            run_id: req.run_id.clone(),
            fsid: view.fsid.clone(),
            health: view.health.clone(),
            seconds: req.seconds,
            osds,
            pools,
            networks: Vec::new(),
            hints: Vec::new(),
            notes: view.notes.clone(),
            left_behind: Vec::new(),
            interrupted_by: None,
        }
    }

    /// Marks the slow OSDs and makes the hints, once the figures are in.
    pub fn finish(&mut self) {
        let marks: Vec<bool> = self
            .osds
            .iter()
            .map(|o| slow_in_class(o, &self.osds).is_some())
            .collect();
        let drags: Vec<bool> = self
            .osds
            .iter()
            .map(|o| drags_pool(o, &self.osds, &self.pools).is_some())
            .collect();
        for ((o, slow), drags) in self.osds.iter_mut().zip(marks).zip(drags) {
            o.slow = slow;
            o.drags = drags;
            o.pool_op_ms = self
                .pools
                .iter()
                .flat_map(|p| &p.jobs)
                .flat_map(|j| &j.osds)
                .filter(|x| x.id == o.id && x.ops >= hints::DRAG_MIN_OPS)
                .filter_map(|x| x.op_ms)
                .reduce(f64::max);
        }
        self.hints = hints(self);
    }
}

impl CephReport {
    /// The figures as a result `compare` ranks: each OSD's two benches
    /// (`ceph_osd_bench_4m` for `osd.3`) and each pool job
    /// (`ceph_rados_write_4m` for `rbd`): MiB/s for 4 MiB blocks, IOPS for 4 KiB.
    fn as_result(&self) -> crate::output::result::JsonReport {
        use crate::figure::Figure;
        use crate::output::result::{JsonReport, XFigure};
        let entry = |key: String, instance: String, f: &BenchFigure, clients: Vec<String>| {
            let figure = Figure::from_key(&key)?;
            let value = if figure.unit() == "IOPS" {
                f.iops
            } else {
                f.mib_s
            };
            Some(XFigure {
                key,
                instance: Some(instance),
                label: figure.label().into(),
                unit: figure.unit().into(),
                value,
                samples: Vec::new(),
                facts: crate::figure::projection::Facts::Ceph(
                    crate::figure::projection::ceph::CephFacts { clients },
                ),
            })
        };
        let mut extended = Vec::new();
        for o in &self.osds {
            let name = format!("osd.{}", o.id);
            for (key, f) in [
                ("ceph_osd_bench_4m", &o.bench_4m),
                ("ceph_osd_bench_4k", &o.bench_4k),
            ] {
                extended.extend(
                    f.as_ref()
                        .and_then(|f| entry(key.into(), name.clone(), f, Vec::new())),
                );
            }
        }
        for p in &self.pools {
            for j in &p.jobs {
                // From several clients: an entry of its own, never ranked
                // against the one-client figure (see `Method::Clients`).
                let instance = if j.clients.is_empty() {
                    p.instance()
                } else {
                    format!("{} from clients", p.instance())
                };
                let clients = j.clients.iter().map(|c| c.node.clone()).collect();
                extended.extend(entry(
                    format!("ceph_{}", j.key),
                    instance,
                    &j.figure,
                    clients,
                ));
            }
        }
        let name = format!("Ceph {}", self.fsid.as_deref().unwrap_or("cluster"));
        JsonReport::of_figures(
            name,
            (&self.pveprobe_version, &self.timestamp),
            extended,
            self.interrupted_by,
        )
    }
}

#[cfg(test)]
mod clients_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Document as _;
    use hints::*;

    fn osd(id: i64, class: &str, mib_s: f64) -> OsdResult {
        OsdResult {
            id,
            device_class: Some(class.into()),
            bench_4m: Some(BenchFigure {
                mib_s,
                ..BenchFigure::default()
            }),
            commit_ms: Some(2.0),
            ..OsdResult::default()
        }
    }

    fn codes(osds: Vec<OsdResult>, pools: Vec<PoolResult>) -> Vec<(String, String)> {
        let mut r = CephReport {
            schema_version: SCHEMA_VERSION,
            kind: KIND.into(),
            pveprobe_version: String::new(),
            timestamp: String::new(),
            run_id: "pveprobe-t".into(),
            fsid: None,
            health: None,
            seconds: 10,
            osds,
            pools,
            networks: Vec::new(),
            hints: Vec::new(),
            notes: Vec::new(),
            left_behind: Vec::new(),
            interrupted_by: None,
        };
        r.finish();
        r.hints.into_iter().map(|h| (h.code, h.subject)).collect()
    }

    #[test]
    fn an_osd_a_third_below_its_class_is_marked_and_named() {
        let all = vec![
            osd(0, "ssd", 500.0),
            osd(1, "ssd", 480.0),
            osd(2, "ssd", 300.0),
            osd(3, "hdd", 100.0),
        ];
        assert_eq!(
            codes(all.clone(), vec![]),
            [("osd-slow".into(), "osd.2".into())]
        );
        // Memstore OSDs copy memory in their bench: no disk to judge.
        let memstore: Vec<OsdResult> = all
            .iter()
            .cloned()
            .map(|mut o| {
                o.objectstore = Some("memstore".into());
                o
            })
            .collect();
        assert!(codes(memstore, vec![]).is_empty());
        // 0.7 of the median is within a third.
        let near = vec![
            osd(0, "ssd", 500.0),
            osd(1, "ssd", 480.0),
            osd(2, "ssd", 340.0),
        ];
        assert!(codes(near, vec![]).is_empty());
        // Two of a class: no median to be below.
        assert!(codes(vec![osd(0, "ssd", 500.0), osd(1, "ssd", 100.0)], vec![]).is_empty());
        // The other class is not compared with.
        let mixed = vec![
            osd(0, "ssd", 500.0),
            osd(1, "ssd", 480.0),
            osd(2, "ssd", 490.0),
            osd(3, "hdd", 100.0),
        ];
        assert!(codes(mixed, vec![]).is_empty());
    }

    #[test]
    fn commit_latency_far_above_the_class_is_named() {
        let mut all = vec![
            osd(0, "hdd", 100.0),
            osd(1, "hdd", 100.0),
            osd(2, "hdd", 100.0),
        ];
        all[2].commit_ms = Some(40.0);
        assert!(
            codes(all.clone(), vec![]).contains(&("osd-commit-latency".into(), "osd.2".into()))
        );
        all[2].commit_ms = Some(6.0);
        assert!(codes(all, vec![]).is_empty(), "3x but only 4 ms above");
    }

    #[test]
    fn an_hdd_osd_without_its_db_on_flash_is_named() {
        let mut o = osd(0, "hdd", 100.0);
        o.data_rotational = Some(true);
        o.dedicated_db = Some(false);
        assert_eq!(
            codes(vec![o.clone()], vec![])[0].0,
            "hdd-osd-without-flash-db"
        );
        o.dedicated_db = Some(true);
        o.db_rotational = Some(false);
        assert!(codes(vec![o.clone()], vec![]).is_empty());
        o.db_rotational = Some(true);
        assert_eq!(codes(vec![o], vec![]).len(), 1);
    }

    #[test]
    fn slow_small_writes_on_flash_and_a_full_osd_are_named() {
        let mut o = osd(0, "ssd", 400.0);
        o.bench_4k = Some(BenchFigure {
            iops: 350.0,
            ..BenchFigure::default()
        });
        o.utilization = Some(91.0);
        let c = codes(vec![o.clone()], vec![]);
        assert!(c.iter().any(|(c, _)| c == "osd-small-writes-slow"));
        assert!(c.iter().any(|(c, _)| c == "osd-near-full"));
        o.bench_4k.as_mut().unwrap().iops = 20000.0;
        o.utilization = Some(40.0);
        assert!(codes(vec![o], vec![]).is_empty());
    }

    #[test]
    fn pools_below_size_3_or_min_size_2_and_off_pg_counts_are_named() {
        let pool = |size, min, wanted| PoolResult {
            name: "rbd".into(),
            kind: "replicated".into(),
            size: Some(size),
            min_size: Some(min),
            pg_num: Some(32),
            pg_num_wanted: wanted,
            ..PoolResult::default()
        };
        assert_eq!(
            codes(vec![], vec![pool(2, 1, None)])[0].0,
            "pool-redundancy-low"
        );
        assert_eq!(
            codes(vec![], vec![pool(3, 1, None)])[0].0,
            "pool-redundancy-low"
        );
        assert!(codes(vec![], vec![pool(3, 2, None)]).is_empty());
        assert_eq!(
            codes(vec![], vec![pool(3, 2, Some(128))])[0].0,
            "pool-pg-count"
        );
        let mut ec = pool(2, 1, None);
        ec.kind = "erasure".into();
        assert!(codes(vec![], vec![ec]).is_empty());
    }

    #[test]
    fn every_job_and_osd_bench_is_a_figure_compare_knows() {
        use crate::figure::Figure;
        let keys: Vec<String> = super::super::RADOS_JOBS
            .iter()
            .map(|j| j.0)
            .chain(super::super::RBD_JOBS.iter().map(|j| j.0))
            .map(|k| format!("ceph_{k}"))
            .chain(["ceph_osd_bench_4m".into(), "ceph_osd_bench_4k".into()])
            .collect();
        for k in &keys {
            assert!(Figure::from_key(k).is_some(), "{k} is no figure");
        }
        assert_eq!(keys.len(), Figure::CEPH.len());
    }

    #[test]
    fn the_metrics_have_each_osds_figures_in_base_units() {
        let mut o = osd(3, "ssd", 512.0);
        o.host = Some("pve 1".into());
        o.bench_4k = Some(BenchFigure {
            iops: 2000.0,
            ..BenchFigure::default()
        });
        o.utilization = Some(40.0);
        let r = CephReport {
            schema_version: SCHEMA_VERSION,
            kind: KIND.into(),
            pveprobe_version: String::new(),
            timestamp: "2026-12-04T15:00:00Z".into(),
            run_id: "pveprobe-t".into(),
            fsid: Some("f".into()),
            health: None,
            seconds: 10,
            osds: vec![o],
            pools: vec![],
            networks: vec![],
            hints: vec![],
            notes: vec![],
            left_behind: vec![],
            interrupted_by: None,
        };
        let prom = r.prometheus();
        assert!(
            prom.contains("# TYPE pveprobe_ceph_osd_bench_4m_bytes_per_second gauge"),
            "{prom}"
        );
        assert!(
            prom.contains("pveprobe_ceph_osd_bench_4m_bytes_per_second{osd=\"osd.3\",host=\"pve 1\",class=\"ssd\"} 536870912"),
            "{prom}"
        );
        assert!(prom.contains("pveprobe_ceph_osd_commit_latency_seconds{osd=\"osd.3\",host=\"pve 1\",class=\"ssd\"} 0.002"), "{prom}");
        assert!(
            prom.contains(
                "pveprobe_ceph_osd_used_ratio{osd=\"osd.3\",host=\"pve 1\",class=\"ssd\"} 0.4"
            ),
            "{prom}"
        );
        let influx = r.influx();
        assert_eq!(
            influx,
            "pveprobe_ceph,class=ssd,fsid=f,host=pve\\ 1,object=ceph,osd=osd.3 bench_4m_mib_per_s=512,bench_4k_iops=2000,commit_ms=2,used_pct=40 1796396400000000000\n"
        );
    }

    #[test]
    fn a_slow_or_shared_ceph_network_is_named() {
        use super::super::network::CephLink;
        let link = |speed, shares: Option<&str>| CephLink {
            kind: "public".into(),
            network: "10.10.10.0/24".into(),
            interface: Some("ens1".into()),
            speed_mbps: speed,
            shares_corosync: shares.map(String::from),
            node: None,
        };
        let hint_codes = |l: CephLink| {
            let mut out = Vec::new();
            out.extend(network_slow(&l).map(|h| h.code));
            out.extend(network_shares_corosync(&l).map(|h| h.code));
            out
        };
        assert_eq!(hint_codes(link(Some(1000), None)), ["ceph-network-slow"]);
        assert!(hint_codes(link(Some(25000), None)).is_empty());
        assert!(
            hint_codes(link(None, None)).is_empty(),
            "no speed: nothing said"
        );
        assert_eq!(
            hint_codes(link(Some(10000), Some("interface ens1"))),
            ["ceph-network-shares-corosync"]
        );
        // Another node's link is named with its node.
        let mut other = link(Some(1000), None);
        other.node = Some("pve2".into());
        assert_eq!(
            network_slow(&other).unwrap().subject,
            "public network 10.10.10.0/24 on pve2"
        );
    }

    #[test]
    fn a_disk_model_published_without_plp_is_named_from_cephs_device_ids() {
        let p =
            published_of("sda=INTEL_SSDPEDMD400G4_CVFT0000,sdb=Samsung_SSD_850_EVO_500GB_S21HNXAG")
                .unwrap();
        assert_eq!(
            (p.disk.as_str(), p.model.as_str(), p.iops),
            ("sda", "Intel DC P3700", 75162.0)
        );
        let mut o = osd(0, "ssd", 400.0);
        o.published = published_of("sdb=Samsung_SSD_850_EVO_500GB_S21HNXAG");
        assert_eq!(o.published.as_ref().unwrap().iops, 339.0);
        let c = codes(vec![o.clone()], vec![]);
        assert_eq!(
            c,
            [("osd-small-writes-slow".to_string(), "osd.0".to_string())]
        );
        o.published = published_of("sda=INTEL_SSDPEDMD400G4_CVFT0000");
        assert!(codes(vec![o], vec![]).is_empty());
        assert_eq!(published_of("vdb=35a15532-8b56-4f83-9"), None);
    }

    #[test]
    fn a_failing_disk_below_an_osd_is_named() {
        use crate::model::storage::Health;
        let mut o = osd(0, "hdd", 100.0);
        o.health = vec![Health {
            source: "smartctl /dev/sdb".into(),
            passed: Some(true),
            pending_sectors: Some(8),
            ..Health::default()
        }];
        let c = codes(vec![o.clone()], vec![]);
        assert_eq!(c, [("osd-disk-unhealthy".to_string(), "osd.0".to_string())]);
        o.health[0].pending_sectors = Some(0);
        assert!(codes(vec![o.clone()], vec![]).is_empty());
        o.health[0].passed = Some(false);
        assert_eq!(codes(vec![o], vec![]).len(), 1);
    }

    #[test]
    fn a_disk_link_below_what_both_ends_can_do_is_named() {
        use crate::model::storage::Link;
        let mut o = osd(0, "ssd", 500.0);
        let sata = |current: &str, ceiling: f64| Link {
            kind: "SATA".into(),
            at: "ata2".into(),
            current: current.into(),
            ceiling_mb_s: ceiling,
            capable: Some("6.0 Gb/s".into()),
            capable_mb_s: Some(600.0),
            capable_by: Some("the disk and the port".into()),
        };
        o.links = vec![("sdb".into(), sata("3.0 Gb/s", 300.0))];
        let c = codes(vec![o.clone()], vec![]);
        assert_eq!(
            c,
            [("osd-link-below-capability".to_string(), "osd.0".to_string())]
        );
        o.links = vec![("sdb".into(), sata("6.0 Gb/s", 600.0))];
        assert!(
            codes(vec![o], vec![]).is_empty(),
            "at full rate: nothing said"
        );
    }

    #[test]
    fn the_csv_has_a_row_per_osd_bench_and_pool_job() {
        let mut r = CephReport {
            schema_version: SCHEMA_VERSION,
            kind: KIND.into(),
            pveprobe_version: String::new(),
            timestamp: "t".into(),
            run_id: "pveprobe-t".into(),
            fsid: Some("f".into()),
            health: None,
            seconds: 10,
            osds: vec![osd(0, "ssd", 500.0)],
            pools: vec![PoolResult {
                name: "rbd".into(),
                jobs: vec![PoolJob {
                    key: "rados_write_4m".into(),
                    label: "RADOS WRITE 4M".into(),
                    figure: BenchFigure {
                        mib_s: 456.5,
                        threads: 16,
                        ..BenchFigure::default()
                    },
                    osds: Vec::new(),
                    clients: Vec::new(),
                }],
                ..PoolResult::default()
            }],
            networks: vec![],
            hints: vec![],
            notes: vec![],
            left_behind: vec![],
            interrupted_by: None,
        };
        r.finish();
        let text = r.csv(true);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert_eq!(rows[0], CSV_HEADER.join(","));
        assert!(
            rows[3].contains("pool rbd,rados_write_4m,0,16,456.500"),
            "{text}"
        );
        assert_eq!(r.csv(false).lines().count(), 3);
    }

    /// osd.3 twenty times its peers in the one job.
    fn slow_pool() -> PoolResult {
        pool_seen(&[
            (0, 10.0, false),
            (1, 12.0, false),
            (2, 11.0, false),
            (3, 230.0, false),
        ])
    }

    /// A pool of one job in which each OSD served its operations at `ms`.
    fn pool_seen(ms: &[(i64, f64, bool)]) -> PoolResult {
        use crate::commands::ceph::drag::OsdInJob;
        PoolResult {
            name: "rbd".into(),
            size: Some(3),
            min_size: Some(2),
            jobs: vec![PoolJob {
                key: "rados_write_4m".into(),
                label: "RADOS WRITE 4M".into(),
                figure: BenchFigure::default(),
                osds: ms
                    .iter()
                    .map(|&(id, op, slow_ops)| OsdInJob {
                        id,
                        ops: if id == 9 { 9 } else { 40 },
                        op_ms: Some(op),
                        subop_w_ms: Some(op * 0.9),
                        slow_ops,
                        ..OsdInJob::default()
                    })
                    .collect(),
                clients: Vec::new(),
            }],
            ..PoolResult::default()
        }
    }

    #[test]
    fn an_osd_slow_in_the_pool_is_named_though_its_bench_is_not() {
        let all = || (0..4).map(|i| osd(i, "ssd", 500.0)).collect::<Vec<_>>();
        // osd.3's operations took 20 times its peers': its disk benches
        // as fast as theirs, so only the new hint names it.
        let slow = pool_seen(&[
            (0, 10.0, false),
            (1, 12.0, false),
            (2, 11.0, false),
            (3, 230.0, false),
        ]);
        assert_eq!(
            codes(all(), vec![slow.clone()]),
            [("osd-drags-pool".into(), "osd.3".into())]
        );
        let mut osds = all();
        osds[3].host = Some("pve3".into());
        osds[3].node_load = Some(crate::model::host::NodeLoad {
            load1: 11.0,
            cpus: 4,
            cpu_pressure_pct: Some(42.0),
        });
        let mut r = CephReport {
            osds,
            pools: vec![slow],
            ..CephReport::default()
        };
        r.finish();
        assert_eq!(
            r.osds.iter().map(|o| o.drags).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        let said = &r.hints[0].message;
        assert!(
            said.starts_with("in pool rbd's RADOS WRITE 4M its operations took 230.0 ms on average where the ssd OSDs' median was 11.5 ms"),
            "{said}"
        );
        assert!(
            said.contains("its writes for other OSDs 207.0 ms"),
            "{said}"
        );
        assert!(said.contains("its own bench is not slow"), "{said}");
        assert!(
            said.contains("its node pve3: load 11.0 on 4 CPUs, tasks waited for a CPU 42% of the last minute (busy"),
            "{said}"
        );
        assert!(r.text().contains("*osd.3"), "{}", r.text());
        // Healthy: within three times the median (and 5 ms of it) is no drag.
        let fine = pool_seen(&[
            (0, 10.0, false),
            (1, 12.0, false),
            (2, 11.0, false),
            (3, 16.0, false),
        ]);
        assert!(codes(all(), vec![fine]).is_empty());
        // Slow operations Ceph reported name an OSD whatever its mean.
        let reported = pool_seen(&[(0, 10.0, false), (1, 12.0, false), (2, 11.0, true)]);
        assert_eq!(
            codes(all(), vec![reported]),
            [("osd-drags-pool".into(), "osd.2".into())]
        );
        // A mean of fewer than ten operations is not judged.
        let few = pool_seen(&[
            (0, 10.0, false),
            (1, 12.0, false),
            (2, 11.0, false),
            (9, 900.0, false),
        ]);
        let mut with_nine = all();
        with_nine.push(osd(9, "ssd", 500.0));
        assert!(codes(with_nine, vec![few]).is_empty());
        // Two OSDs of a class: which one is slow? None named.
        let two = vec![osd(0, "ssd", 500.0), osd(1, "ssd", 500.0)];
        assert!(codes(two, vec![pool_seen(&[(0, 10.0, false), (1, 300.0, false)])]).is_empty());
        // A slow disk is named by both.
        let mut benches = all();
        benches[3].bench_4m.as_mut().unwrap().mib_s = 100.0;
        let both = codes(
            benches,
            vec![pool_seen(&[
                (0, 10.0, false),
                (1, 12.0, false),
                (2, 11.0, false),
                (3, 230.0, false),
            ])],
        );
        assert!(
            both.contains(&("osd-slow".into(), "osd.3".into())),
            "{both:?}"
        );
        assert!(
            both.contains(&("osd-drags-pool".into(), "osd.3".into())),
            "{both:?}"
        );
    }

    #[test]
    fn an_osds_view_of_each_job_is_in_the_csv_and_the_metrics() {
        let mut osds: Vec<OsdResult> = (0..4).map(|i| osd(i, "ssd", 500.0)).collect();
        osds[3].host = Some("pve3".into());
        let mut r = CephReport {
            osds,
            pools: vec![pool_seen(&[
                (0, 10.0, false),
                (1, 12.0, false),
                (2, 11.0, false),
                (3, 230.0, false),
            ])],
            ..CephReport::default()
        };
        r.finish();
        let csv = r.csv(false);
        assert!(csv.contains(",osd.3,in_rbd_rados_write_4m,"), "{csv}");
        assert!(csv.contains(",230.000,"), "{csv}");
        let prom = r.prometheus();
        assert!(
            prom.contains(
                "pveprobe_ceph_osd_drags_pool{osd=\"osd.3\",host=\"pve3\",class=\"ssd\"} 1\n"
            ),
            "{prom}"
        );
        assert!(
            prom.contains("pveprobe_ceph_osd_pool_op_latency_seconds{osd=\"osd.3\",host=\"pve3\",class=\"ssd\"} 0.23\n"),
            "{prom}"
        );
    }

    #[test]
    fn a_drag_in_one_job_must_be_large_and_a_scratch_pool_is_the_runs() {
        let all = || (0..4).map(|i| osd(i, "ssd", 500.0)).collect::<Vec<_>>();
        // Far in one job only (4.8x, 12 ms beyond): a moment's queue on a
        // busy node, not named; the same in two jobs is the OSD's.
        let once = pool_seen(&[
            (0, 3.0, false),
            (1, 3.3, false),
            (2, 3.5, false),
            (3, 15.7, false),
        ]);
        assert!(codes(all(), vec![once.clone()]).is_empty());
        let mut twice = once.clone();
        twice.jobs.push(PoolJob {
            key: "rbd_write_4k".into(),
            label: "RBD RAND WRITE 4K".into(),
            ..once.jobs[0].clone()
        });
        assert_eq!(
            codes(all(), vec![twice]),
            [("osd-drags-pool".into(), "osd.3".into())]
        );
        // A scratch pool is gone after the run: named as the run's.
        let mut scratch = slow_pool();
        scratch.scratch = true;
        scratch.name = "pveprobe-x".into();
        let mut r = CephReport {
            osds: all(),
            pools: vec![scratch],
            ..CephReport::default()
        };
        r.finish();
        assert!(
            r.hints[0]
                .message
                .starts_with("in the run's scratch pool's RADOS WRITE 4M"),
            "{:?}",
            r.hints
        );
    }
}
