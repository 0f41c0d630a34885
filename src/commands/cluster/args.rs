//! `pveprobe cluster`: the options of a whole-cluster run. The measurement
//! options are the probe's
//! ([`crate::commands::common::measure_args::MeasureArgs`]); only those the admin gave
//! travel to the nodes, as typed: each node's pveprobe applies its own
//! defaults.

use std::path::PathBuf;

use clap::Args;

use crate::commands::common::output_args::{OutputArgs, worded};

use crate::commands::common::measure_args::Forwarded;
use crate::commands::common::net_args::NetOptions;
use crate::commands::common::reach_args::ReachArgs;

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

NETWORK (--net)
  --net measures the network between the nodes instead: UDP latency,
  jitter, loss and path MTU for every pair of nodes on every cluster link
  (corosync's, migration, Ceph's, --link NAME=CIDR), TCP throughput with
  --net-throughput on links that are not corosync's. `pveprobe net --help`
  says how, what is safe on corosync links and how to read the matrix;
  `pveprobe net NODE...` measures chosen nodes only.

BACKUP DATASTORES
  `pveprobe datastore PATH --cluster` measures each node's PBS datastore
  path the same way, by PBS's own calls (`pveprobe datastore --help`).

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
  pveprobe cluster --nodes web1,web2=192.0.2.12 --tests cpu,regex,fsync /srv
  pveprobe cluster --net --net-throughput";

/// `pveprobe cluster [OPTIONS] [PATH]`.
#[derive(Debug, Args)]
#[command(after_long_help = CLUSTER_AFTER_HELP)]
#[command(mut_args(worded(&[
    ("quiet", "No progress on stderr (notes, warnings and errors are still said): for cron and scripts. Without it, each node's step is a line"),
    ("output_format", "text (the table), json, json-pretty or csv (one row per node, then the median, spread and aggregate rows), influx or prometheus (each node's figures, labelled with its name; with --net, each link, pair and way)"),
    ("output", "Write the table to FILE instead of stdout"),
    ("plot", "Also draw the table as an SVG picture in FILE: a panel per figure, a bar per node, whiskers for its runs, outliers hatched and marked ! (with --net --net-throughput: the migration path, as net --plot)"),
])))]
pub struct ClusterArgs {
    /// Directory to test on every node (it must exist on each of them);
    /// or --storage ID: that PVE storage on every node (a shared one one
    /// node at a time, or all at once with --parallel to measure contention)
    #[arg(default_value = "/", value_name = "PATH", conflicts_with = "storage")]
    pub path: String,

    /// List what would run on which node, and run nothing
    #[arg(long, help_heading = "Nodes")]
    pub dry_run: bool,

    /// Run all nodes at once, started together, and add the aggregates
    #[arg(long, help_heading = "Nodes")]
    pub parallel: bool,

    /// Longest a node may take, in seconds [default: from the tests and
    /// their windows, at least 60; --dry-run shows it]
    #[arg(long, value_name = "SECS", value_parser = pveprobe_parse::units::seconds_between(1.0, 86_400.0), help_heading = "Nodes")]
    pub timeout: Option<f64>,

    #[command(flatten)]
    pub reach: ReachArgs,

    /// Measure the network between the nodes instead of running the probe:
    /// latency, jitter, loss and path MTU per link and pair of nodes (see
    /// NETWORK below)
    #[arg(long, help_heading = "Network")]
    pub net: bool,

    #[command(flatten)]
    pub net_options: NetOptions,

    #[command(flatten)]
    pub out: OutputArgs,

    /// Also keep each node's JSON result as DIR/NODE.json, for pveprobe compare
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub save_dir: Option<PathBuf>,

    /// The measurement options, and those given for the nodes.
    #[command(flatten, next_help_heading = "Forwarded to every node")]
    pub forward: Forwarded,
}

impl ClusterArgs {
    /// The probe options every node gets, as pveprobe's arguments: only
    /// those given here, as typed.
    pub fn forwarded(&self) -> Vec<String> {
        self.forward.argv()
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, Parser};

    use super::*;
    use crate::commands::common::measure_args::MeasureArgs;
    use crate::commands::{Command, Opts};

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
        assert_eq!(none.reach.members, PathBuf::from("/etc/pve/.members"));
        // In MeasureArgs's order, each option with its value as typed;
        // given the other way round, and -x for --extended.
        let in_order: [&[&str]; 17] = [
            &["--duration", "0.2"],
            &["--tests", "cpu,fsync,syncwrite"],
            &["--regex-engine", "perl"],
            &["--resolv-conf", "/etc/my resolv.conf"],
            &["--dns-timeout", "0.5"],
            &["--dns-schedule", "pveperf"],
            &["--runs", "3"],
            &["--no-latency"],
            &["--extended"],
            &["--write-size", "256M"],
            &["--zero-data"],
            &["--io-engine", "io-uring"],
            &["--sync-mode", "dsync"],
            &["--sync-jobs", "1,2,4"],
            &["--plp", "no"],
            &["--cpu-threads", "all"],
            &["--sustained", "30"],
        ];
        let mut given: Vec<&str> = in_order
            .iter()
            .rev()
            .flat_map(|o| if o[0] == "--extended" { &["-x"] } else { *o })
            .copied()
            .collect();
        given.extend(["--storage", "local-lvm"]);
        let all = cluster(&given);
        assert_eq!(
            all.forwarded(),
            [in_order.concat(), vec!["--storage", "local-lvm"]].concat()
        );
        // --storage instead of a PATH (both: a usage error).
        assert_eq!(all.path, "/");
        assert!(
            Opts::try_parse_from(["pveprobe", "cluster", "--storage", "x", "/var/tmp"]).is_err()
        );
        // Every measurement option was given above, so every one travels
        // (a new one must be added to this test).
        let measure = MeasureArgs::augment_args(clap::Command::new("x"));
        for arg in measure.get_arguments() {
            let long = format!("--{}", arg.get_long().unwrap());
            assert!(all.forwarded().contains(&long), "{long} is not forwarded");
        }
        // What is forwarded parses as a probe's options, with the same values.
        let mut argv = vec!["pveprobe".to_string()];
        argv.extend(all.forwarded());
        let probe = Opts::try_parse_from(argv).unwrap().probe;
        assert_eq!(probe.measure, all.forward.measure);
        assert_eq!(probe.measure.write_size, Some(256 << 20));
        assert_eq!(probe.measure.duration, 0.2);
    }

    #[test]
    fn forwards_values_as_typed_and_refuses_what_is_not_text() {
        let c = cluster(&[
            "--tests",
            "cpu",
            "--tests=dns,read",
            "--duration=1.50",
            "--resolv-conf=-odd,name",
            "--write-size",
            "1g",
        ]);
        assert_eq!(
            c.forwarded(),
            [
                "--duration",
                "1.50",
                "--tests",
                "cpu,dns,read",
                "--resolv-conf=-odd,name",
                "--write-size",
                "1g",
            ]
        );
        let mut argv = vec!["pveprobe".to_string()];
        argv.extend(c.forwarded());
        let probe = Opts::try_parse_from(argv).unwrap().probe;
        assert_eq!(probe.measure, c.forward.measure);
        assert_eq!(probe.measure.resolv_conf, PathBuf::from("-odd,name"));
        // Defaults are not typed, so they do not travel.
        let c = cluster(&["--runs", "1", "--io-engine", "auto"]);
        assert_eq!(c.forwarded(), ["--runs", "1", "--io-engine", "auto"]);

        use std::os::unix::ffi::OsStringExt;
        let bad = std::ffi::OsString::from_vec(b"/etc/r\xffconf".to_vec());
        let argv: Vec<std::ffi::OsString> = vec![
            "pveprobe".into(),
            "cluster".into(),
            "--resolv-conf".into(),
            bad,
        ];
        let err = Opts::try_parse_from(argv).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidUtf8);
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("--resolv-conf"), "{err}");
    }

    #[test]
    fn an_update_forwards_what_its_values_became() {
        let argv = ["pveprobe", "cluster", "--tests", "cpu", "--duration", "1"];
        let mut opts = Opts::try_parse_from(argv).unwrap();
        opts.try_update_from(["pveprobe", "cluster", "--runs", "3", "-x"])
            .unwrap();
        let Some(Command::Cluster(c)) = opts.command else {
            panic!("not cluster")
        };
        // clap's update resets --duration to its default; --tests, which
        // has none, stays.
        assert_eq!(
            c.forwarded(),
            ["--tests", "cpu", "--runs", "3", "--extended"]
        );
        let mut argv = vec!["pveprobe".to_string()];
        argv.extend(c.forwarded());
        let probe = Opts::try_parse_from(argv).unwrap().probe;
        assert_eq!(probe.measure, c.forward.measure);
    }

    #[test]
    fn timeout_refuses_what_is_no_number_of_seconds() {
        for bad in ["0", "0.5", "-1", "nan", "86401", "x"] {
            let argv = ["pveprobe", "cluster", "--timeout", bad];
            assert!(Opts::try_parse_from(argv).is_err(), "{bad}");
        }
    }

    #[test]
    fn nodes_and_nodes_file_exclude_each_other() {
        let c = cluster(&["--nodes", "a,b=192.0.2.2", "--parallel", "/x"]);
        assert_eq!(c.reach.nodes, ["a", "b=192.0.2.2"]);
        assert!(c.parallel);
        let argv = ["pveprobe", "cluster", "--nodes", "a", "--nodes-file", "f"];
        assert!(Opts::try_parse_from(argv).is_err());
    }
}
