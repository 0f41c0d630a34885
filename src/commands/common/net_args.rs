//! The options of the network measurement between nodes, which `net`
//! and `cluster --net` both take, and its manual.

use std::path::PathBuf;

use clap::Args;

pub const NET_AFTER_HELP: &str = "\
NETWORK
  For every pair of nodes, on every cluster link: each corosync link of
  /etc/pve/corosync.conf (corosync0, corosync1, ... from the nodes' ringN_addr),
  the migration path (migration: the network of /etc/pve/datacenter.cfg's
  `migration: network=`, else the nodes' cluster addresses of the members
  list, where PVE migrates without one; a node whose cluster address is a
  corosync address is left out there), Ceph's public and cluster networks
  of /etc/pve/ceph.conf (ceph-public, ceph-cluster), and each --link
  NAME=CIDR (a known link's name moves it: --link migration=CIDR). Pairs
  run one at a time, each link in turn, so they do not disturb each other.

  On each pair, pveprobe starts its own responder on the second node over
  ssh (`pveprobe net-serve`, bound to that node's address on the link only,
  answering only the first node's address, gone when its ssh connection
  closes and after a hard lifetime; nothing is installed), then measures
  from the first node (`pveprobe net-probe`):
    RTT       UDP round trips (corosync's transport): --net-count probes at
              --net-rate per second at most; p50, p99 and max in ms
    JITTER    mean absolute difference of consecutive round trips, ms
    LOSS      probes without an answer within 1 s, percent
    PATH MTU  the largest IP packet that crosses with Don't Fragment set,
              each way, against both ends' interface MTUs
    TCP       (--net-throughput only) Mbit/s each way over one stream and
              over --net-streams streams, --net-seconds each, as the
              receiving end counts (as iperf3's receiver line)
  Where corosync-cmapctl exists, knet's own statistics of each node's links
  (`corosync-cmapctl -m stats`) are shown too: they cost no traffic.

MIGRATION
  With --net-throughput, the migration link also gets the channel a
  migration uses, one stream each way for --net-seconds:
    SECURE    MiB/s through ssh as qemu-server opens it: PVE's own ssh
              command (BatchMode, HostKeyAlias, the node's ssh_known_hosts
              in /etc/pve) to the target's address on the link, forwarding
              a UNIX socket (-L), run from the sending node; with the cipher
              ssh negotiated, ssh's and sshd's share of a core, and the
              cipher's speed on one core (OpenSSL)
    insecure  one plain TCP stream (the TCP 1 figure): insecure migration's
              path, QEMU to QEMU
  The MIGRATION section names what caps the secure stream (ssh's core, or
  the link); MOVES gives each node's three largest running VMs (memory and
  local disks from their configs) and how long each would take to move at
  each figure. Memory counts once: a busy VM's dirty-page rate is not
  guessed. Storage migration always goes through ssh.

SAFETY
  Filling a corosync link can cost corosync its token: on an HA cluster the
  nodes that lose it are fenced (rebooted). So on corosync links pveprobe
  only sends latency and MTU probes, at most --net-rate (<= 100) small
  datagrams per second. Throughput runs only with --net-throughput, only on
  links that are not corosync's; --net-throughput with a corosync link named
  in --link is refused, and so is --parallel with --net-throughput when a
  throughput link shares an interface with corosync.

HINTS
  Against the Proxmox VE documentation: corosync latency (p99) above 5 ms
  (the docs' limit; above about 10 ms a cluster of more than three nodes is
  unlikely to stay stable), jitter above 1 ms, any loss, corosync sharing an
  interface or subnet with storage or migration traffic, a path MTU below an
  end's interface MTU or ends with different MTUs, and throughput one way
  below 80% of the other; and migration-secure-cpu-bound: the secure channel
  capped by ssh's CPU while one plain stream is 1.5 times faster or more
  (insecure migration sends memory unencrypted: a dedicated, isolated
  migration network only; otherwise a faster cipher, or AES-NI).

FIREWALL
  The responder listens on a free port chosen at start (UDP and TCP, the
  same number), or on --port. With the PVE firewall on, allow it between the
  nodes, e.g. in /etc/pve/firewall/cluster.fw:
    IN ACCEPT -source +cluster_nodes -p udp -dport 5405:5412 (corosync's own)
    IN ACCEPT -source 10.10.10.0/24 -p tcp -dport 9765
    IN ACCEPT -source 10.10.10.0/24 -p udp -dport 9765
  and run with --port 9765.

EXIT STATUS
  0    every link of every pair measured
  1    a link could not be measured on some pair (the matrix says why)
  2    bad usage, unreadable configuration, a refused --net-throughput
  3    --baseline: a figure is worse than the baseline by more than --tolerance
  4    a node did not answer

EXAMPLES
  pveprobe cluster --net
  pveprobe net pve1 pve2 pve3
  pveprobe cluster --net --net-throughput --link migration
  pveprobe net pve1 pve2 --link storage=10.40.0.0/24 --net-throughput
  pveprobe cluster --net --output-format json --output net.json
  pveprobe compare net-before.json net-after.json
  pveprobe cluster --net --net-throughput --baseline net-before.json";

/// What `--net` measures and how.
#[derive(Debug, Clone, Args)]
pub struct NetOptions {
    /// Also TCP throughput each way, on links that are not corosync's
    /// (never on a corosync link: see SAFETY)
    #[arg(long, help_heading = "Network")]
    pub net_throughput: bool,

    /// Only these links (corosync0, migration, ceph-public, ...), or one
    /// more link NAME=CIDR (the nodes' addresses in CIDR; a known link's
    /// name, such as migration, puts that link there); repeatable
    #[arg(long = "link", value_name = "LINK", help_heading = "Network")]
    pub links: Vec<String>,

    /// Latency probes per pair and link
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000), help_heading = "Network")]
    pub net_count: u32,

    /// Latency and MTU probes per second at most (a bound for corosync's sake)
    #[arg(long, value_name = "PPS", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100), help_heading = "Network")]
    pub net_rate: u32,

    /// Seconds of each throughput run (per way and stream count)
    #[arg(long, value_name = "SECS", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=60), help_heading = "Network")]
    pub net_seconds: u32,

    /// TCP streams at once for the second throughput run
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64), help_heading = "Network")]
    pub net_streams: u32,

    /// The responders' port (UDP and TCP) instead of a free one: for the
    /// PVE firewall
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..), help_heading = "Network")]
    pub port: Option<u16>,

    /// Compare with an earlier JSON matrix of these nodes (each figure per
    /// link and pair); exit 3 when one is worse by more than --tolerance
    #[arg(long, value_name = "FILE", help_heading = "Network")]
    pub baseline: Option<PathBuf>,

    /// How much worse than --baseline a figure may be, in percent
    #[arg(long, value_name = "PCT", default_value_t = 20.0, value_parser = crate::commands::common::measure_args::parse_percent, help_heading = "Network")]
    pub tolerance: f64,

    /// Read corosync.conf, datacenter.cfg and ceph.conf from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", hide = true, default_value = crate::pvestorage::ETC_PVE)]
    pub pve_config: PathBuf,
}
