//! Fills a `pveprobe record` store with DAYS of intervals ending now, made
//! by the recorder's own writer (`store::Writer`, `nodeio::recorded`) from
//! real intervals (a `top --record` file, a JSON line each), so
//! `bench/record-cost` can time `top --worst --since 7d` over a week of a
//! real node's store without waiting a week. Each interval is one of the
//! given ones in turn, its figures varied (a deterministic jitter), with
//! a five-minute episode of IO delay every six hours.
//!
//!     cargo run --release --example record-fill -- top.jsonl STORE DAYS [INTERVAL_S]

use anyhow::{Context, bail};
use pveprobe::nodeio::recorded;
use pveprobe::nodeio::sample::TopSample;
use pveprobe::store::{Limits, Writer};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [samples, store, days, rest @ ..] = args.as_slice() else {
        bail!("usage: record-fill SAMPLES.jsonl STORE DAYS [INTERVAL_S]");
    };
    let interval: i64 = rest.first().map_or(Ok(10), |s| s.parse())?;
    let days: i64 = days.parse()?;
    let given: Vec<TopSample> = std::fs::read_to_string(samples)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("a line that is no interval of top")?;
    if given.is_empty() {
        bail!("{samples}: no interval");
    }
    let limits = Limits {
        retain_days: days as u32 + 1,
        max_bytes: u64::MAX,
        free_share: 1.0,
    };
    let mut w = Writer::open(std::path::Path::new(store), limits)?;
    let end = jiff::Timestamp::now().as_second();
    let n = days * 86_400 / interval;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut jitter = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        0.5 + (x % 1000) as f64 / 1000.0
    };
    for i in 0..n {
        let t = end - (n - i) * interval;
        let mut s = given[i as usize % given.len()].clone();
        s.timestamp = jiff::Timestamp::from_second(t)?.to_string();
        let episode = t % 21_600 < 300;
        for g in &mut s.guests {
            g.read_iops *= jitter();
            g.write_iops *= jitter();
            g.write_ms = g
                .write_ms
                .map(|m| m * jitter() * if episode { 20.0 } else { 1.0 });
        }
        for d in &mut s.disks {
            d.util_pct = (d.util_pct * jitter()).min(100.0);
        }
        s.pressure.iowait_pct = Some(if episode {
            40.0 * jitter()
        } else {
            2.0 * jitter()
        });
        s.pressure.io_full_pct = s.pressure.io_full_pct.map(|p| p * jitter());
        let (summary, payload) = recorded::encode(&s);
        w.append(t * 1_000_000, summary, &payload)?;
    }
    eprintln!("record-fill: {n} intervals over {days} days in {store}");
    Ok(())
}
