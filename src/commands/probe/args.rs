//! The probe's arguments, `pveprobe [OPTIONS] [PATH]`, and its manual:
//! the help text says what each figure means and how it relates to
//! pveperf's.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

use crate::commands::common::measure_args::MeasureArgs;

pub const ABOUT: &str = "Host probe for Proxmox VE and Debian: a drop-in for pveperf";

pub const LONG_ABOUT: &str = "\
Host probe for Proxmox VE and Debian: a drop-in for pveperf.

`pveprobe PATH` prints pveperf's eight lines, in pveperf's order and format,
for the filesystem that holds PATH (default /), e.g. /var/lib/vz. Figures go
to stdout, diagnostics to stderr. Each timed test runs until more than
--duration seconds have passed.";

pub const AFTER_LONG_HELP: &str = "\
THE FIGURES
  CPU BOGOMIPS       Sum of the BogoMIPS of all CPUs in /proc/cpuinfo (0.00 on
                     architectures that report none, such as s390x, ppc64le).
  REGEX/SECOND       Iterations of pveperf's regex loop (random number + Unix
                     time matched against (.+)123.?123) in a 3-second window,
                     not per second, as pveperf counts. It runs pveperf's own
                     loop in the host's Perl, on pveperf's scale (pve-docs:
                     above 300000 is good). --regex-engine rust, or a host
                     without perl, counts with Rust's regex engine instead:
                     3 to 7 times pveperf's figure, and stderr says so.
  HD SIZE            Size of the filesystem holding PATH in GiB (printed as
                     \"GB\", as df -P and pveperf do) and its source as df shows
                     it: /dev/mapper/pve-root, rpool/data, tmpfs.
  BUFFERED READS     Sequential buffered 2 MiB reads of the source block device
                     from its start, page cache dropped first, in MiB/s (printed
                     \"MB/sec\"); the measurement of hdparm -t. Read-only.
  AVERAGE SEEK TIME  Mean time of one O_DIRECT read of a logical block (512 or
                     4096 bytes) at a random offset of the whole device, in ms;
                     the measurement of ioping -D. Read-only.
  FSYNCS/SECOND      pveperf's loop with pveperf's system calls in pveperf's
                     order: open (create, truncate), fsync, write 4001 bytes,
                     close, over 300 files in a private directory inside PATH
                     that is removed afterwards, also on Ctrl-C. The fsync
                     commits a file its open just emptied, not the data written
                     after it; -v says what that means on the filesystem at
                     hand; -x's SYNC WRITE 4K measures synced writes as a
                     database makes them.
                     pve-docs ask for more than 200.
  DNS EXT            Mean ms per A query for a random name under a nonexistent
                     .com domain, over UDP to the name servers of resolv.conf;
                     --dns-schedule says how a query waits for its answer.
  DNS INT            The same for random names in resolv.conf's search domain,
                     printed in parentheses.

  BUFFERED READS and AVERAGE SEEK TIME need a source under /dev (not tmpfs or a
  ZFS dataset) and root. With the default DNS schedule a name server that does
  not answer costs at most --dns-timeout per query, one that never answers gives
  \"timeout\", and stderr names a server that answered none of its queries.

  With -x (or --tests cpu-bench) the CPU figures of proxmox-backup-client
  benchmark follow: SHA256, ZSTD COMPRESS and DECOMPRESS (level 1), AES-256-GCM
  (a backup chunk's encryption) and VERIFY (a compressed chunk decompressed and
  hashed), done as PBS does them on its 1 MiB buffer with the same libraries
  (OpenSSL, zstd), on one thread, in MB/s of 10^6 bytes and as a percentage of
  PBS's reference machine (AMD Ryzen 7 2700X). Each runs for 1 s (compression
  3 s) at --duration 3, scaled with it. --cpu-threads N|all also runs them on
  N threads at once, which takes that CPU from running guests for about 7 s.

DIFFERENCES FROM PVEPERF
  Measured side by side with pveperf's loops on the same loop devices
  (bench/vs-pveperf): BOGOMIPS and HD SIZE are identical, FSYNCS/SECOND and
  BUFFERED READS agree within the runs' noise. Where pveprobe differs:
  REGEX/SECOND       The same loop in the host's Perl, on pveperf's scale; only
                     --regex-engine rust, or a host without perl, counts 3 to 7
                     times pveperf's figure (stderr says so).
  CPU BOGOMIPS       The key is matched in any case, as pveperf does since
                     pve-manager 9.2.10; older pveperf prints 0.00 on arm64.
  BUFFERED READS     A device read to its end before the window ends is not
                     read further (pveperf goes on timing empty reads, which
                     lowers its figure). On ZFS the pool's data disks are read;
                     pveperf, and the name pveperf, omit the line.
  AVERAGE SEEK TIME  O_DIRECT reads of one logical block over the whole device;
                     pveperf reads 512 bytes buffered within the filesystem's
                     size, which readahead and the page cache can flatter.
  DNS EXT, DNS INT   The default --dns-schedule bounded asks glibc's first three
                     name servers in turn, each for at most --dns-timeout, on
                     connected sockets (a closed port is known at once), and
                     takes DNS INT's domain as glibc does (the first of the last
                     search or domain line). pveperf, --dns-schedule pveperf and
                     the name pveperf give each query one second shared by every
                     nameserver line (one dead server of one costs 1000 ms a
                     query, of two 500 ms) and print DNS INT only for a search
                     line with exactly one domain. pveperf's figure also holds
                     Perl's time to build and decode each packet (0.46 ms a
                     query against a server on loopback; pveprobe 0.02 ms).
  unreadable device  pveperf dies (\"unable to open HD\") and prints no FSYNCS or
                     DNS line; pveprobe prints the other lines, says why on
                     stderr and exits 1 (0 under the name pveperf).

OUTPUT
  --output-format text (default) prints exactly pveperf's lines; -v adds each
  figure's runs (min, max, spread), per-operation latency percentiles of the
  seek and fsync loops, and the pve-docs guidance. json and json-pretty give
  every sample and the host's fingerprint (schema: docs/report.schema.json);
  csv gives one row per run with a fixed header, for spreadsheets:
    pveprobe --runs 3 --output-format csv --output fleet.csv --append /var/lib/vz
  influx writes InfluxDB line protocol as PVE's metric server does
  (measurement pveprobe, tags object=nodes,host=NODE), prometheus the text
  format node_exporter's textfile collector reads (pveprobe_* gauges in
  base units). compare --plot and cluster --plot draw their tables as SVG;
  --sustained SECS --plot FILE draws a long write's seconds.
  `pveprobe compare A.json B.json ...` puts results side by side with ratios
  to the first, the -x figures included; a difference within the runs'
  spread is marked \"noise\", a figure measured another way (regex engine,
  fsync order, DNS schedule, window, data pattern, I/O engine, sync mode,
  CPU threads, sustained seconds, blocks written into) \"unlike\" and not
  ranked, also by --baseline.
  `pveprobe cluster PATH` runs the probe on every node of a Proxmox VE cluster
  through ssh and prints one row per node (see pveprobe cluster --help).

WHY A FIGURE IS WHAT IT IS (-v, and JSON always)
  Below the figures, -v names the storage stack under PATH and, per leaf
  disk, what is read (never written) on the same run:
  - its links from sysfs: the SATA link (ata_link sata_spd against the
    port's hw_sata_spd_limit), the SAS phy (negotiated_linkrate against
    maximum_linkrate_hw), the USB port (speed, version), the controller's
    PCIe link (current_link_speed/width against the device's and its slot's
    max_link_speed/width), each with the most payload it carries;
    BUFFERED READS and SEQ READ DIRECT say what share of it they reached;
  - its health, from `smartctl --json=c --nocheck=standby --xall DEVICE`
    (smartmontools; a sleeping disk is not woken, nothing is written, no
    self-test is started; behind a RAID controller the disks smartctl
    --scan-open finds); without smartctl one line says so;
  - its temperature and thermal counters (hwmon, smartctl) before the first
    timed test and after the last.
  Hints name a cause, each with a stable code in JSON (docs/hints.md):
  link-below-capability, interface-bound, throttled, pending-sectors,
  reallocated-sectors, crc-errors, worn, spare-low, critical-warning, ...

EXIT STATUS
  0    every requested line that applies was measured
  1    a line could not be measured (reason on stderr)
  2    bad usage, PATH missing or not a directory, or another probe measuring
       on this host with --no-wait (nothing was created)
  3    --baseline: a figure is worse than the baseline by more than --tolerance
  4    cluster: a node did not answer
  130, 143, 129
       interrupted by SIGINT, SIGTERM or SIGHUP; files made were removed

EXAMPLES
  pveprobe /var/lib/vz
  pveprobe --regex-engine rust /              REGEX/SECOND without perl's loop
  pveprobe --tests read,seek,fsync /mnt/new   only the disk lines
  pveprobe --resolv-conf /tmp/resolv.conf --dns-timeout 0.5
  pveprobe --dns-schedule pveperf /           DNS waits as pveperf's
  pveprobe --runs 3 -v /var/lib/vz            spread and latency of 3 runs
  pveprobe --tests cpu-bench --cpu-threads all   PBS's CPU figures, all cores
  pveprobe storages                           this node's PVE storages, how each is measured
  pveprobe --storage local-lvm                a scratch volume on local-lvm: allocated,
                                              prefilled, measured, freed
  pveprobe --storage all --output-format csv  every storage of the node, a row each
  pveprobe --output-format json --output node1.json /var/lib/vz
  pveprobe compare node1.json node2.json
  pveprobe cluster --parallel /mnt/pve/cephfs  every node at once, with sums
  pveprobe ceph --dry-run                     what a Ceph bench would run and write
  pveprobe ceph --yes                         each OSD's and pool's bench, the slow OSD named
  pveprobe --baseline node1.json --tolerance 15 /var/lib/vz   (exit 3 if worse)";

#[derive(Debug, Args)]
#[command(mut_args(worded(&[
    ("plot", "With --sustained: also draw its throughput per second as an SVG picture in FILE"),
])))]
pub struct ProbeArgs {
    /// Directory on the filesystem to test (a directory named like a
    /// subcommand: write ./compare)
    #[arg(default_value = "/", value_name = "PATH", conflicts_with = "storage")]
    pub path: PathBuf,

    #[command(flatten)]
    pub measure: MeasureArgs,

    #[command(flatten)]
    pub out: OutputArgs,

    /// After the pveperf lines, show runs, latency percentiles, pve-docs guidance, the storage stack, its links, health and heat, and hints
    #[arg(short, long)]
    pub verbose: bool,

    /// Compare with an earlier JSON result of this host; exit 3 when a
    /// figure is worse by more than --tolerance
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// How much worse than --baseline a figure may be, in percent
    #[arg(long, value_name = "PCT", default_value_t = 20.0, value_parser = crate::commands::common::measure_args::parse_percent)]
    pub tolerance: f64,

    /// When another probe is measuring on this host, exit (status 2)
    /// instead of waiting for it: two at once halve each other's figures
    #[arg(long)]
    pub no_wait: bool,

    /// Read /proc and /sys below DIR instead of / (tests, captured host trees)
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,

    /// Read storage.cfg and .vmlist from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", hide = true, default_value = crate::pvestorage::ETC_PVE)]
    pub pve_config: PathBuf,
}
