//! The benches' output: `ceph tell osd.N bench` (JSON), `rados bench
//! --format json` (after its `hints = N` line) and `rbd bench` (text).

use serde_json::Value;

use super::*;

/// `ceph tell osd.N bench`: what the OSD wrote to its own store.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OsdBench {
    pub bytes_written: f64,
    pub blocksize: f64,
    pub elapsed_sec: f64,
    pub bytes_per_sec: f64,
    pub iops: f64,
}

/// `ceph tell osd.N bench ... -f json`.
pub fn osd_bench(text: &str) -> Result<OsdBench, CephOutputError> {
    const WHAT: &str = "ceph tell osd bench";
    let whole = json(WHAT, text)?;
    // Crimson's OSD wraps the same figures in `osd_bench_results` (ceph
    // commit ee84f8970ab5, "crimson: Add support for bench osd command").
    let doc = whole.get("osd_bench_results").unwrap_or(&whole);
    let get = |k| field(doc, k);
    match (
        get("bytes_written"),
        get("elapsed_sec"),
        get("bytes_per_sec"),
    ) {
        (Some(bytes_written), Some(elapsed_sec), Some(bytes_per_sec)) => Ok(OsdBench {
            bytes_written,
            blocksize: get("blocksize").unwrap_or(0.0),
            elapsed_sec,
            bytes_per_sec,
            // Older releases print no iops: it is the rate in blocks.
            iops: get("iops").unwrap_or_else(|| match get("blocksize") {
                Some(b) if b > 0.0 => finite(bytes_per_sec / b),
                _ => 0.0,
            }),
        }),
        _ => Err(CephOutputError::Shape {
            what: WHAT,
            expected: "bytes_written, elapsed_sec and bytes_per_sec",
        }),
    }
}

/// One second of a `rados bench` run.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RadosSecond {
    pub sec: f64,
    /// Operations finished up to this second.
    pub finished: f64,
    /// MB/s (of 2^20 bytes) in this second.
    pub cur_bw: f64,
    /// Seconds, of the last operation and the mean so far.
    pub last_lat: f64,
    pub avg_lat: f64,
}

/// `rados bench --format json`: a write, seq or rand run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RadosBench {
    pub seconds: Vec<RadosSecond>,
    pub total_time_run: f64,
    /// Writes or reads made.
    pub ops: f64,
    /// Bytes per operation.
    pub op_size: f64,
    /// MB/s of 2^20 bytes, as rados bench prints it.
    pub bandwidth: f64,
    pub average_iops: f64,
    /// Seconds.
    pub average_latency: f64,
    pub max_latency: f64,
    pub min_latency: f64,
    pub stddev_latency: Option<f64>,
    /// The object names' prefix (write runs): `benchmark_data_HOST_PID`.
    pub object_prefix: Option<String>,
}

/// `rados bench ... --format json` (with its `hints = N` line first).
pub fn rados_bench(text: &str) -> Result<RadosBench, CephOutputError> {
    const WHAT: &str = "rados bench";
    // Without --no-cleanup, a write run prints its cleanup's lines on
    // stdout in the middle of its JSON, before the closing `]` of `datas`.
    let cleaned: String;
    let text = match text.find("Cleaning up (deleting benchmark objects)") {
        Some(at) => {
            let rest = &text[at..];
            let end = rest
                .find("Clean up completed and total clean up time :")
                .and_then(|c| rest[c..].find('\n').map(|n| c + n + 1))
                .unwrap_or(rest.len());
            cleaned = format!("{}{}", &text[..at], &rest[end..]);
            &cleaned
        }
        None => text,
    };
    let doc = json(WHAT, text)?;
    let g = |k| field(&doc, k);
    let ops = g("total_writes_made").or(g("total_reads_made"));
    let (Some(total_time_run), Some(ops), Some(bandwidth)) =
        (g("total_time_run"), ops, g("bandwidth"))
    else {
        return Err(CephOutputError::Shape {
            what: WHAT,
            expected: "total_time_run, total_writes_made or total_reads_made, and bandwidth",
        });
    };
    let seconds = doc
        .get("datas")
        .and_then(Value::as_array)
        .map(|d| {
            d.iter()
                .filter_map(|s| {
                    Some(RadosSecond {
                        sec: field(s, "sec")?,
                        finished: field(s, "finished").unwrap_or(0.0),
                        cur_bw: field(s, "cur_bw").unwrap_or(0.0),
                        last_lat: field(s, "last_lat").unwrap_or(0.0),
                        avg_lat: field(s, "avg_lat").unwrap_or(0.0),
                    })
                })
                // Second 0 is the run's start: nothing finished yet.
                .filter(|s| s.sec > 0.0)
                .collect()
        })
        .unwrap_or_default();
    Ok(RadosBench {
        seconds,
        total_time_run,
        ops,
        op_size: g("write_size")
            .or(g("read_size"))
            .or(g("op_size"))
            .unwrap_or(0.0),
        bandwidth,
        // Computed when absent or nonsense (a negative stddev shows the
        // fields are not always sound).
        average_iops: g("average_iops")
            .filter(|x| *x >= 0.0)
            .unwrap_or(if total_time_run > 0.0 {
                ops / total_time_run
            } else {
                0.0
            }),
        average_latency: g("average_latency").unwrap_or(0.0),
        max_latency: g("max_latency").unwrap_or(0.0),
        min_latency: g("min_latency").unwrap_or(0.0),
        stddev_latency: g("stddev_latency").filter(|x| *x >= 0.0),
        object_prefix: string(&doc, "object_prefix"),
    })
}

/// One second of an `rbd bench` run.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RbdSecond {
    pub sec: f64,
    pub ops: f64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
}

/// `rbd bench`'s summary and seconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RbdBench {
    pub seconds: Vec<RbdSecond>,
    pub elapsed: f64,
    pub ops: f64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
}

/// `12 MiB/s`, `9.8 KiB/s`, `1.2 GiB/s`, `512 B/s` (Ceph's `byte_u_t`).
fn rate(words: &[&str]) -> Option<f64> {
    let (n, unit) = match words {
        [n, unit, ..] => (word(n)?, *unit),
        _ => return None,
    };
    let mult = match unit.trim_end_matches("/s") {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0f64.powi(4),
        "PiB" => 1024.0f64.powi(5),
        _ => return None,
    };
    Some(n * mult).filter(|x| x.is_finite())
}

/// `rbd bench --io-type ...` as it prints it: a line per second
/// (`  SEC OPS OPS/SEC BYTES/SEC`) and the summary
/// `elapsed: 12  ops: 65536  ops/sec: 5419.1  bytes/sec: 21 MiB/s`.
pub fn rbd_bench(text: &str) -> Result<RbdBench, CephOutputError> {
    const WHAT: &str = "rbd bench";
    if text.len() > MAX_BYTES {
        return Err(CephOutputError::TooLarge {
            what: WHAT,
            bytes: text.len(),
        });
    }
    let mut out = RbdBench::default();
    let mut summary = false;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"elapsed:") {
            let after = |key: &str| {
                let i = words.iter().position(|w| *w == key)?;
                words.get(i + 1).and_then(|w| word(w))
            };
            let bytes = words
                .iter()
                .position(|w| *w == "bytes/sec:")
                .and_then(|i| rate(&words[i + 1..]));
            if let (Some(elapsed), Some(ops), Some(ops_per_sec), Some(bytes_per_sec)) =
                (after("elapsed:"), after("ops:"), after("ops/sec:"), bytes)
            {
                (out.elapsed, out.ops, out.ops_per_sec, out.bytes_per_sec) =
                    (elapsed, ops, ops_per_sec, bytes_per_sec);
                summary = true;
            }
        } else if let [sec, ops, per_sec, rest @ ..] = words.as_slice()
            && let (Some(sec), Some(ops), Some(ops_per_sec), Some(bytes_per_sec)) =
                (word(sec), word(ops), word(per_sec), rate(rest))
        {
            out.seconds.push(RbdSecond {
                sec,
                ops,
                ops_per_sec,
                bytes_per_sec,
            });
        }
    }
    if summary {
        Ok(out)
    } else {
        Err(CephOutputError::Shape {
            what: WHAT,
            expected: "a line `elapsed: S ops: N ops/sec: X bytes/sec: Y`",
        })
    }
}
