//! What `pveprobe ceph` reads of Ceph's tools: `ceph osd tree`,
//! `metadata`, `perf`, `df`, `pool ls detail`, `autoscale-status`,
//! `tell osd.N bench`, `rados bench --format json`, `rbd bench`,
//! `pg ls-by-pool`, `tell mon.X config get`, `tell osd.N perf dump` and
//! `health detail`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::ceph;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(osds) = ceph::osd_tree(&text) {
        assert!(osds.windows(2).all(|w| w[0].id < w[1].id));
    }
    let _ = ceph::osd_metadata(&text);
    if let Ok(perf) = ceph::osd_perf(&text) {
        assert!(perf.iter().all(|p| p.commit_ms.is_finite() && p.apply_ms.is_finite()));
    }
    let _ = ceph::osd_df(&text);
    if let Ok(pools) = ceph::pools(&text) {
        assert!(pools.iter().all(|p| p.kind == "replicated" || p.kind == "erasure"));
    }
    let _ = ceph::autoscale_status(&text);
    if let Ok(d) = ceph::df_pools(&text) {
        assert!(d.iter().all(|p| p.max_avail.is_finite()));
    }
    if let Ok(b) = ceph::osd_bench(&text) {
        assert!(b.iops.is_finite() && b.bytes_per_sec.is_finite());
    }
    if let Ok(r) = ceph::rados_bench(&text) {
        assert!(r.bandwidth.is_finite() && r.average_iops.is_finite());
        assert!(r.seconds.iter().all(|s| s.sec > 0.0));
    }
    let _ = ceph::pg_states(&text);
    let _ = ceph::config_value(&text, "mon_allow_pool_delete");
    if let Ok(c) = ceph::perf_dump(&text) {
        for t in [c.op_w, c.op_r, c.subop_w, c.commit, c.kv_sync].into_iter().flatten() {
            assert!(t.sum_s.is_finite() && t.sum_s >= 0.0);
            assert!(t.mean_ms().is_none_or(f64::is_finite));
        }
    }
    let _ = ceph::slow_ops_osds(&text);
    if let Ok(r) = ceph::rbd_bench(&text) {
        assert!(r.bytes_per_sec.is_finite() && r.ops_per_sec.is_finite());
    }
});
