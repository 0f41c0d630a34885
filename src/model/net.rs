//! What one link's measurement between two nodes found: round trips,
//! the largest datagram that crosses each way, TCP throughput each way.
//! Plain data; `net::probe` measures it, `net::run` puts the pairs
//! together, `net::report` holds them with their hints and `net::render`
//! writes the matrix.

use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

/// Round trips of UDP datagrams (corosync's transport), as milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rtt {
    pub sent: u32,
    pub received: u32,
    /// The pace the probes were sent at, per second.
    pub rate_pps: u32,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The mean absolute difference of consecutive round trips.
    pub jitter_ms: f64,
}

impl Rtt {
    /// From round trips in the order they were sent (`None`: lost).
    pub fn of(rtts: &[Option<std::time::Duration>], rate_pps: u32) -> Rtt {
        let got: Vec<f64> = rtts
            .iter()
            .flatten()
            .map(|d| d.as_secs_f64() * 1000.0)
            .collect();
        let mut sorted = got.clone();
        sorted.sort_by(f64::total_cmp);
        let pct = |p: f64| crate::model::stats::nearest_rank(&sorted, p).unwrap_or(0.0);
        let jitter = if got.len() >= 2 {
            got.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f64>() / (got.len() - 1) as f64
        } else {
            0.0
        };
        Rtt {
            sent: rtts.len() as u32,
            received: got.len() as u32,
            rate_pps,
            min_ms: sorted.first().copied().unwrap_or(0.0),
            mean_ms: crate::model::stats::mean(&got).unwrap_or(0.0),
            p50_ms: pct(50.0),
            p90_ms: pct(90.0),
            p99_ms: pct(99.0),
            max_ms: sorted.last().copied().unwrap_or(0.0),
            jitter_ms: jitter,
        }
    }

    /// Percent of probes that got no answer.
    pub fn loss_percent(&self) -> f64 {
        if self.sent == 0 {
            return 0.0;
        }
        f64::from(self.sent - self.received) * 100.0 / f64::from(self.sent)
    }
}

/// The largest IP packet (bytes, headers included, as an MTU counts them)
/// that crossed with Don't Fragment set, each way; `None`: not even the
/// smallest tried crossed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathMtu {
    /// From the measuring end to the responder.
    pub forward: Option<u32>,
    /// From the responder back.
    pub back: Option<u32>,
    /// The largest size tried (the measuring end's interface MTU).
    pub tried_up_to: u32,
}

/// Which way data flowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Way {
    /// From the measuring end (node A) to the responder (node B).
    Forward,
    Back,
}

/// TCP throughput one way over one or more streams at once, as the
/// receiving end counted it (as iperf3's receiver line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    pub way: Way,
    pub streams: u32,
    /// 10^6 bits per second.
    pub mbit_per_s: f64,
    pub bytes: u64,
    pub seconds: f64,
}

/// One way of the secure migration channel: one stream through ssh, as
/// qemu-server opens it (PVE's ssh options, `-L` to a UNIX socket on the
/// target), as the receiving end counted it; with what capped it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecureStream {
    pub way: Way,
    /// MiB (2^20 bytes) a second, as PVE's migration log counts.
    pub mib_per_s: f64,
    pub bytes: u64,
    pub seconds: f64,
    /// The cipher and MAC ssh negotiated the stream's way (`<implicit>`
    /// for an AEAD cipher's MAC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// `ssh`'s share of one core on the sending node over the stream, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_cpu_percent: Option<f64>,
    /// `sshd`'s (the session's process) on the receiving node, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_cpu_percent: Option<f64>,
    /// Their share of the stream's time waiting for a CPU (their threads'
    /// run-queue wait: the node's cores busy, or a CPU limit holding
    /// them), %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_wait_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_wait_percent: Option<f64>,
    /// The cipher's speed on one core of the sending node (OpenSSL's EVP,
    /// as `openssl speed -evp`), MiB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher_mib_per_s: Option<f64>,
    /// Whether the sending node's CPU has AES-NI (`aes` in /proc/cpuinfo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aes_ni: Option<bool>,
    /// The ssh command as run (without the remote command).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}

/// One VM moving one way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Move {
    pub vmid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where it runs, and where it would go.
    pub from: String,
    pub to: String,
    pub link: String,
    pub memory_mib: u64,
    /// Its disks on storages that are not shared (storage.cfg).
    pub local_disk_bytes: u64,
    /// Seconds at each figure, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_seconds: Option<f64>,
    /// At the link's TCP figure (its streams at once, else one stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_seconds: Option<f64>,
}

/// Mbit/s (10^6 bits) as MiB/s (2^20 bytes), as PVE's migration log counts.
pub fn mib_per_s(mbit_per_s: f64) -> f64 {
    mbit_per_s * 1e6 / 8.0 / f64::from(1u32 << 20)
}

/// What `pveprobe net-probe` prints: one link between two nodes, measured
/// from one of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    pub from: IpAddr,
    pub to: SocketAddr,
    /// The measuring end's interface and MTU.
    pub dev: Option<String>,
    pub mtu: Option<u32>,
    pub latency: Option<Rtt>,
    pub path_mtu: Option<PathMtu>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throughput: Vec<Throughput>,
    /// Datagrams sent in all (latency and MTU probes).
    pub datagrams: u64,
    pub seconds: f64,
    /// What could not be measured, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn round_trips_make_percentiles_jitter_and_loss() {
        let ms = |m: u64| Some(Duration::from_millis(m));
        let rtt = Rtt::of(&[ms(1), ms(3), None, ms(2), ms(10)], 50);
        assert_eq!((rtt.sent, rtt.received), (5, 4));
        assert_eq!(rtt.loss_percent(), 20.0);
        assert_eq!((rtt.min_ms, rtt.p50_ms, rtt.max_ms), (1.0, 2.0, 10.0));
        assert_eq!(rtt.p99_ms, 10.0);
        // |3-1| + |2-3| + |10-2| over 3.
        assert!((rtt.jitter_ms - 11.0 / 3.0).abs() < 1e-9);
        let none = Rtt::of(&[None, None], 50);
        assert_eq!(
            (none.loss_percent(), none.p50_ms, none.jitter_ms),
            (100.0, 0.0, 0.0)
        );
    }
}
