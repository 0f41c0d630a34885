//! Each OSD's own bench: `ceph tell osd.N bench` with its defaults and a
//! 4 KiB run within the OSD's own limit, a few OSDs at a time.

use super::*;

/// One figure of a bench: what it moved, how fast, how long each operation took.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BenchFigure {
    /// Bytes per operation.
    pub block: u64,
    pub threads: u32,
    pub seconds: f64,
    pub ops: f64,
    /// MiB/s (rados bench's "MB/sec").
    pub mib_s: f64,
    pub iops: f64,
    /// Milliseconds, where the tool says.
    pub avg_lat_ms: Option<f64>,
    pub max_lat_ms: Option<f64>,
    /// Each second: MiB/s in it.
    #[serde(default)]
    pub per_second: Vec<f64>,
}

/// One OSD's bench with `bytes` in `block` writes.
fn osd_bench(
    tools: &CephTools,
    id: i64,
    bytes: u64,
    block: u64,
    limit: Duration,
) -> Result<BenchFigure, CephError> {
    let target = format!("osd.{id}");
    let (b, s) = (bytes.to_string(), block.to_string());
    let c = tools.call(
        "ceph",
        &["tell", &target, "bench", &b, &s, "-f", "json"],
        limit,
        true,
    );
    let text = c.answer(child::run(c.program, &c.argv, &c.opts))?;
    let r = parse::osd_bench(&text)?;
    Ok(BenchFigure {
        block,
        threads: 1,
        seconds: r.elapsed_sec,
        ops: if block > 0 {
            r.bytes_written / block as f64
        } else {
            0.0
        },
        mib_s: r.bytes_per_sec / 1048576.0,
        iops: r.iops,
        ..BenchFigure::default()
    })
}

/// The OSD's own limit on its small-block bench, in bytes of 4 KiB writes.
fn small_bench_bytes(tools: &CephTools, id: i64) -> Result<u64, CephError> {
    let target = format!("osd.{id}");
    let get = |key: &str| -> Result<u64, CephError> {
        let c = tools.call(
            "ceph",
            &["tell", &target, "config", "get", key, "-f", "json"],
            READ_LIMIT,
            true,
        );
        let text = c.answer(child::run(c.program, &c.argv, &c.opts))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| CephOutputError::NotJson {
                what: "ceph tell config get",
                why: e.to_string(),
            })?;
        v.get(key)
            .and_then(parse::num)
            .map(|x| x as u64)
            .ok_or(CephError::Output(CephOutputError::Shape {
                what: "ceph tell config get",
                expected: "the key's value",
            }))
    };
    let iops = get("osd_bench_small_size_max_iops")?;
    let secs = get("osd_bench_duration")?;
    Ok((iops * secs).max(1) * SMALL)
}

/// Results of one OSD's two benches.
#[derive(Debug, Default)]
pub struct OsdBenches {
    pub large: Option<BenchFigure>,
    pub small: Option<BenchFigure>,
    pub errors: Vec<String>,
}

/// Benches `osds`, `parallel` at a time (an interrupt stops the next ones).
pub fn bench_osds(
    tools: &CephTools,
    osds: &[i64],
    parallel: usize,
    limit: Duration,
) -> Vec<(i64, OsdBenches)> {
    let mut out = Vec::new();
    for chunk in osds.chunks(parallel.max(1)) {
        if tools.interrupt.signal().is_some() {
            break;
        }
        let done: Vec<(i64, OsdBenches)> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|&id| {
                    s.spawn(move || {
                        tools.progress.step(&format!("osd.{id}: ceph tell osd.{id} bench (1 GiB in 4 MiB writes), then 4 KiB writes"));
                        let mut r = OsdBenches::default();
                        match osd_bench(tools, id, 1 << 30, OBJECT, limit) {
                            Ok(f) => r.large = Some(f),
                            Err(e) => r.errors.push(e.to_string()),
                        }
                        if tools.interrupt.signal().is_none() {
                            match small_bench_bytes(tools, id).and_then(|bytes| osd_bench(tools, id, bytes, SMALL, limit)) {
                                Ok(f) => r.small = Some(f),
                                Err(e) => r.errors.push(e.to_string()),
                            }
                        }
                        (id, r)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("an OSD bench does not panic"))
                .collect()
        });
        out.extend(done);
    }
    out
}
