//! `pveprobe cluster`: the options of a whole-cluster run. The probe
//! options it forwards to every node are `Option`s so that only those the
//! admin gave travel: each node's pveprobe applies its own defaults.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{OutputFormat, parse_seconds, parse_size, parser};
use crate::extended::engine::EngineChoice;
use crate::probe::dns::Schedule;
use crate::probe::regex::RegexEngine;
use crate::run::Test;

/// Where pmxcfs publishes the cluster's membership on every PVE node.
pub const ETC_PVE_MEMBERS: &str = "/etc/pve/.members";

pub(super) const CLUSTER_AFTER_HELP: &str = "\
MEMBERS
  On a Proxmox VE node the members come from /etc/pve/.members (pmxcfs's
  view: name, id, online flag, IP address). Offline members are listed, not
  contacted. Every other member is reached as root@IP with HostKeyAlias set
  to its name, so the cluster's known_hosts entries by node name apply; where
  /etc/pve/nodes/NODE/ssh_known_hosts exists it is the known_hosts file, as
  for Proxmox VE's own ssh calls. The node running the command is reached
  through ssh too. --nodes and --nodes-file name the nodes of a fleet that
  is no PVE cluster.

HOW NODES ARE RUN
  Each node runs `timeout -k 10 SECS pveprobe --output-format json [OPTIONS]
  -- PATH` through `ssh -o BatchMode=yes`; every word is quoted for the
  node's shell, so PATH and option values reach pveprobe as given. Default:
  one node at a time, so nodes do not disturb each other on shared storage.
  --parallel starts all nodes together and adds each figure's aggregate: the
  sum of BUFFERED READS, FSYNCS/SECOND and the extended MB/s and IOPS
  figures (what the nodes got at once), the worst of the latencies.

THE TABLE
  One row per node, one column per figure, then each figure's median and
  spread ((max - min) / median) over the nodes that answered. A value marked
  ! is an outlier: worse than the median of the other nodes by more than a
  third (below 2/3 of it where more is better, above 3/2 of it where less is
  better). A node that did not answer has a row that says why: offline,
  unreachable, ssh refused, no pveprobe, timeout, version (another pveprobe
  version on the node), bad output (no JSON), error (the node's pveprobe
  failed).

EXIT STATUS
  0    every node answered and measured every line
  1    every node answered; a line could not be measured on some node
  2    bad usage, unreadable members or nodes list (nothing was run)
  4    a node did not answer

EXAMPLES
  pveprobe cluster --dry-run /var/lib/vz
  pveprobe cluster --tests read,seek,fsync /mnt/pve/cephfs
  pveprobe cluster --parallel -x --write-size 256M /mnt/pve/nfs
  pveprobe cluster --output-format csv --output cluster.csv --save-dir results/ /
  pveprobe compare results/*.json
  pveprobe cluster --nodes web1,web2=192.0.2.12 --tests cpu,regex,fsync /srv";

/// `pveprobe cluster [OPTIONS] [PATH]`.
#[derive(Debug, Args)]
#[command(after_long_help = CLUSTER_AFTER_HELP)]
pub struct ClusterArgs {
    /// Directory to test on every node (it must exist on each of them)
    #[arg(default_value = "/", value_name = "PATH")]
    pub path: String,

    /// pmxcfs's members list to read the nodes from
    #[arg(long, value_name = "FILE", default_value = ETC_PVE_MEMBERS, help_heading = "Nodes")]
    pub members: PathBuf,

    /// The nodes, instead of the members list: NAME or NAME=ADDRESS, comma-separated
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        conflicts_with = "nodes_file",
        help_heading = "Nodes"
    )]
    pub nodes: Vec<String>,

    /// The nodes, one per line: NAME or NAME ADDRESS; # starts a comment
    #[arg(long, value_name = "FILE", help_heading = "Nodes")]
    pub nodes_file: Option<PathBuf>,

    /// List what would run on which node, and run nothing
    #[arg(long, help_heading = "Nodes")]
    pub dry_run: bool,

    /// Run all nodes at once, started together, and add the aggregates
    #[arg(long, help_heading = "Nodes")]
    pub parallel: bool,

    /// Longest a node may take, in seconds [default: from the tests and
    /// their windows, at least 60; --dry-run shows it]
    #[arg(long, value_name = "SECS", value_parser = parse_timeout, help_heading = "Nodes")]
    pub timeout: Option<f64>,

    /// The command that runs pveprobe on the nodes, split at spaces
    #[arg(
        long,
        value_name = "COMMAND",
        default_value = "pveprobe",
        help_heading = "Nodes"
    )]
    pub remote_command: String,

    /// User ssh logs in as
    #[arg(
        long,
        value_name = "USER",
        default_value = "root",
        help_heading = "ssh"
    )]
    pub ssh_user: String,

    /// Seconds ssh waits for a node to accept the connection
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=600), help_heading = "ssh")]
    pub connect_timeout: u32,

    /// Read ssh's configuration from FILE (ssh -F FILE)
    #[arg(long, value_name = "FILE", help_heading = "ssh")]
    pub ssh_config: Option<PathBuf>,

    /// An ssh option (ssh -o OPTION), e.g. Port=2222; repeatable
    #[arg(long = "ssh-option", value_name = "OPTION", help_heading = "ssh")]
    pub ssh_options: Vec<String>,

    /// text (the table), json, json-pretty or csv (one row per node, then the
    /// median, spread and aggregate rows)
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        default_value_t = OutputFormat::Text,
        hide_possible_values = true,
        help_heading = "Output"
    )]
    pub output_format: OutputFormat,

    /// Write the table to FILE instead of stdout
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,

    /// Also keep each node's JSON result as DIR/NODE.json, for pveprobe compare
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub save_dir: Option<PathBuf>,

    /// Length of each timed test in seconds [node's default: 3]
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, help_heading = "Forwarded to every node")]
    pub duration: Option<f64>,

    /// Comma-separated tests to run [node's default: all but the extended]
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parser::<Test>(),
        help_heading = "Forwarded to every node"
    )]
    pub tests: Vec<Test>,

    /// Run each timed test N times; figures are the medians
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100), help_heading = "Forwarded to every node")]
    pub runs: Option<u32>,

    /// Regex engine for REGEX/SECOND
    #[arg(
        long,
        value_name = "ENGINE",
        value_parser = parser::<RegexEngine>(),
        help_heading = "Forwarded to every node"
    )]
    pub regex_engine: Option<RegexEngine>,

    /// Name servers and search domain: a FILE on each node, as given
    #[arg(long, value_name = "FILE", help_heading = "Forwarded to every node")]
    pub resolv_conf: Option<String>,

    /// Longest wait for one DNS answer, in seconds
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, help_heading = "Forwarded to every node")]
    pub dns_timeout: Option<f64>,

    /// How DNS queries wait: bounded, or pveperf (Net::DNS's schedule)
    #[arg(
        long,
        value_name = "SCHEDULE",
        value_parser = parser::<Schedule>(),
        help_heading = "Forwarded to every node"
    )]
    pub dns_schedule: Option<Schedule>,

    /// Also run the extended tests
    #[arg(short = 'x', long, help_heading = "Forwarded to every node")]
    pub extended: bool,

    /// Bytes SEQ WRITE writes per run and MIXED's file size, e.g. 256M
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Forwarded to every node")]
    pub write_size: Option<u64>,

    /// SEQ WRITE writes zeros like dd if=/dev/zero
    #[arg(long, help_heading = "Forwarded to every node")]
    pub zero_data: bool,

    /// I/O engine of the extended tests
    #[arg(
        long,
        value_name = "ENGINE",
        value_parser = parser::<EngineChoice>(),
        help_heading = "Forwarded to every node"
    )]
    pub io_engine: Option<EngineChoice>,

    /// Do not record per-operation latency
    #[arg(long, help_heading = "Forwarded to every node")]
    pub no_latency: bool,
}

/// A per-node timeout: a positive number of seconds, at most a day.
fn parse_timeout(text: &str) -> Result<f64, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(secs.is_finite() && (1.0..=86_400.0).contains(&secs)) {
        return Err(format!(
            "{text} must be at least 1 and at most 86400 seconds"
        ));
    }
    Ok(secs)
}

/// What a node's pveprobe defaults to, for the timeout estimate.
const NODE_DURATION_S: f64 = 3.0;
const NODE_DNS_TIMEOUT_S: f64 = 2.0;
const NODE_WRITE_SIZE: u64 = 1 << 30;
/// The disk speed the timeout assumes for SEQ WRITE's and MIXED's files.
const SLOW_DISK_BYTES_PER_S: f64 = 10.0 * 1024.0 * 1024.0;

impl ClusterArgs {
    /// The probe options every node gets, as pveprobe's arguments: only
    /// those given here.
    pub fn forwarded(&self) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        let mut push = |flag: &str, value: Option<String>| {
            args.push(flag.to_string());
            args.extend(value);
        };
        if let Some(d) = self.duration {
            push("--duration", Some(d.to_string()));
        }
        if !self.tests.is_empty() {
            let names: Vec<String> = self.tests.iter().map(|t| t.name().to_string()).collect();
            push("--tests", Some(names.join(",")));
        }
        if let Some(n) = self.runs {
            push("--runs", Some(n.to_string()));
        }
        if let Some(e) = self.regex_engine {
            push("--regex-engine", Some(e.name().to_string()));
        }
        if let Some(f) = &self.resolv_conf {
            push("--resolv-conf", Some(f.clone()));
        }
        if let Some(t) = self.dns_timeout {
            push("--dns-timeout", Some(t.to_string()));
        }
        if let Some(s) = self.dns_schedule {
            push("--dns-schedule", Some(s.name().to_string()));
        }
        if self.extended {
            push("--extended", None);
        }
        if let Some(bytes) = self.write_size {
            push("--write-size", Some(bytes.to_string()));
        }
        if self.zero_data {
            push("--zero-data", None);
        }
        if let Some(e) = self.io_engine {
            push("--io-engine", Some(e.name().to_string()));
        }
        if self.no_latency {
            push("--no-latency", None);
        }
        args
    }

    /// The longest a node may take: `--timeout`, or 60 s plus three times
    /// the requested windows (and DNS timeouts), plus the extended tests'
    /// files written at 10 MiB/s.
    pub fn node_timeout(&self) -> Duration {
        if let Some(secs) = self.timeout {
            return Duration::from_secs_f64(secs);
        }
        let duration = self.duration.unwrap_or(NODE_DURATION_S);
        let runs = f64::from(self.runs.unwrap_or(1));
        let dns_timeout = self.dns_timeout.unwrap_or(NODE_DNS_TIMEOUT_S);
        let mut tests: Vec<Test> = if self.tests.is_empty() {
            Test::PVEPERF.to_vec()
        } else {
            self.tests.clone()
        };
        if self.extended {
            tests.extend(Test::EXTENDED);
        }
        tests.sort();
        tests.dedup();
        let mut windowed = 0.0;
        let mut written = 0.0;
        let write_size = self.write_size.unwrap_or(NODE_WRITE_SIZE) as f64;
        for test in tests {
            let cost = test.cost();
            windowed += f64::from(cost.windows_per_run) * runs * duration
                + f64::from(cost.windows) * duration
                + f64::from(cost.dns_lines_per_run) * runs * (duration + dns_timeout);
            written += f64::from(cost.writes) * write_size;
        }
        let secs = 60.0 + 3.0 * windowed + written / SLOW_DISK_BYTES_PER_S;
        Duration::from_secs_f64(secs.ceil())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Command, Opts};

    fn cluster(args: &[&str]) -> ClusterArgs {
        let mut argv = vec!["pveprobe", "cluster"];
        argv.extend_from_slice(args);
        match Opts::try_parse_from(argv).unwrap().command {
            Some(Command::Cluster(c)) => *c,
            other => panic!("not cluster: {other:?}"),
        }
    }

    #[test]
    fn forwards_only_what_was_given() {
        let none = cluster(&[]);
        assert!(none.forwarded().is_empty());
        assert_eq!(none.path, "/");
        assert_eq!(none.members, PathBuf::from("/etc/pve/.members"));
        let all = cluster(&[
            "--duration",
            "0.2",
            "--tests",
            "cpu,fsync,fsynclat",
            "--runs",
            "3",
            "--regex-engine",
            "perl",
            "--resolv-conf",
            "/etc/my resolv.conf",
            "--dns-timeout",
            "0.5",
            "--dns-schedule",
            "pveperf",
            "-x",
            "--write-size",
            "256M",
            "--zero-data",
            "--io-engine",
            "io-uring",
            "--no-latency",
            "/var/tmp",
        ]);
        assert_eq!(
            all.forwarded(),
            [
                "--duration",
                "0.2",
                "--tests",
                "cpu,fsync,fsynclat",
                "--runs",
                "3",
                "--regex-engine",
                "perl",
                "--resolv-conf",
                "/etc/my resolv.conf",
                "--dns-timeout",
                "0.5",
                "--dns-schedule",
                "pveperf",
                "--extended",
                "--write-size",
                "268435456",
                "--zero-data",
                "--io-engine",
                "io-uring",
                "--no-latency",
            ]
        );
        assert_eq!(all.path, "/var/tmp");
        // What is forwarded parses as a probe's options.
        let mut argv = vec!["pveprobe".to_string()];
        argv.extend(all.forwarded());
        let probe = Opts::try_parse_from(argv).unwrap().probe;
        assert_eq!(probe.write_size, 256 << 20);
        assert_eq!(probe.duration, 0.2);
    }

    #[test]
    fn timeout_follows_the_tests() {
        // pveperf's defaults: 4 windows of 3 s, DNS 2 × (3 + 2) s.
        assert_eq!(
            cluster(&[]).node_timeout(),
            Duration::from_secs(60 + 3 * 22)
        );
        assert_eq!(
            cluster(&["--tests", "cpu,fsync", "--duration", "0.5"]).node_timeout(),
            Duration::from_secs(62)
        );
        assert_eq!(
            cluster(&["--timeout", "7.5"]).node_timeout(),
            Duration::from_secs_f64(7.5)
        );
        // -x: 5 more windows (FSYNC LATENCY runs its own loop), 4 GiB
        // written at 10 MiB/s.
        assert_eq!(
            cluster(&["-x"]).node_timeout(),
            Duration::from_secs(60 + 3 * (22 + 15) + 4 * 1024 / 10 + 1)
        );
        for bad in ["0", "0.5", "-1", "nan", "86401", "x"] {
            let argv = ["pveprobe", "cluster", "--timeout", bad];
            assert!(Opts::try_parse_from(argv).is_err(), "{bad}");
        }
    }

    #[test]
    fn nodes_and_nodes_file_exclude_each_other() {
        let c = cluster(&["--nodes", "a,b=192.0.2.2", "--parallel", "/x"]);
        assert_eq!(c.nodes, ["a", "b=192.0.2.2"]);
        assert!(c.parallel);
        let argv = ["pveprobe", "cluster", "--nodes", "a", "--nodes-file", "f"];
        assert!(Opts::try_parse_from(argv).is_err());
    }
}
