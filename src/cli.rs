//! The command line. The help text is the user's manual: it says what
//! each figure means and how it relates to pveperf's.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::host::{ETC_RESOLV_CONF, Host};
use crate::probe::regex::RegexEngine;
use crate::run::{Config, Test};

const ABOUT: &str = "Host probe for Proxmox VE and Debian: a drop-in for pveperf";

const LONG_ABOUT: &str = "\
Host probe for Proxmox VE and Debian: a drop-in for pveperf.

`pveprobe PATH` prints pveperf's eight lines, in pveperf's order and format,
for the filesystem that holds PATH (default /), e.g. /var/lib/vz. Figures go
to stdout, diagnostics to stderr. Each timed test runs until more than
--duration seconds have passed.";

const AFTER_LONG_HELP: &str = "\
THE FIGURES
  CPU BOGOMIPS       Sum of the BogoMIPS of all CPUs in /proc/cpuinfo (0.00 on
                     architectures that report none, such as s390x, ppc64le).
  REGEX/SECOND       Iterations of pveperf's regex loop (random number + Unix
                     time matched against (.+)123.?123) in a 3-second window,
                     not per second, as pveperf counts. With the default rust
                     engine the figure is about 3.4 times pveperf's (Rust's
                     regex engine is faster than Perl's); --regex-engine perl
                     runs pveperf's own loop in the host's Perl for figures on
                     pveperf's scale (pve-docs: above 300000 is good).
  HD SIZE            Size of the filesystem holding PATH in GiB (printed as
                     \"GB\", as df -P and pveperf do) and its source as df shows
                     it: /dev/mapper/pve-root, rpool/data, tmpfs.
  BUFFERED READS     Sequential buffered 2 MiB reads of the source block device
                     from its start, page cache dropped first, in MiB/s (printed
                     \"MB/sec\"); the measurement of hdparm -t. Read-only.
  AVERAGE SEEK TIME  Mean time of one O_DIRECT read of a logical block (512 or
                     4096 bytes) at a random offset of the whole device, in ms;
                     the measurement of ioping -D. pveperf's buffered reads could
                     be flattered by the cache; these cannot. Read-only.
  FSYNCS/SECOND      pveperf's loop: create/truncate, write 4001 bytes, fsync,
                     close, over 300 files in a private directory inside PATH
                     that is removed afterwards, also on Ctrl-C. pve-docs ask
                     for more than 200.
  DNS EXT            Mean ms per A query for a random name under a nonexistent
                     .com domain, to the nameservers of resolv.conf, UDP.
  DNS INT            The same for random names in resolv.conf's first search
                     domain, printed in parentheses.

  BUFFERED READS and AVERAGE SEEK TIME need a source under /dev (not tmpfs or a
  ZFS dataset) and root. A name server that does not answer costs at most
  --dns-timeout per query; one that never answers gives \"timeout\".

EXIT STATUS
  0    every requested line that applies was measured
  1    a line could not be measured (reason on stderr)
  2    bad usage, or PATH missing or not a directory (nothing was created)
  130, 143, 129
       interrupted by SIGINT, SIGTERM or SIGHUP; files made were removed

EXAMPLES
  pveprobe /var/lib/vz
  pveprobe --regex-engine perl /              figures on pveperf's scale
  pveprobe --tests read,seek,fsync /mnt/new   only the disk lines
  pveprobe --resolv-conf /tmp/resolv.conf --dns-timeout 0.5";

#[derive(Debug, Parser)]
#[command(name = "pveprobe", version, about = ABOUT, long_about = LONG_ABOUT, after_long_help = AFTER_LONG_HELP)]
pub struct Opts {
    /// Directory on the filesystem to test
    #[arg(default_value = "/", value_name = "PATH")]
    pub path: PathBuf,

    /// Length of each timed test in seconds; REGEX/SECOND is scaled to 3 s
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = parse_seconds)]
    pub duration: f64,

    /// Comma-separated tests to run (HD SIZE is always printed)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub tests: Vec<Test>,

    /// Regex engine for REGEX/SECOND: perl gives figures on pveperf's scale
    #[arg(long, value_name = "ENGINE", value_enum, default_value_t = RegexEngine::Rust)]
    pub regex_engine: RegexEngine,

    /// Read name servers and the search domain from FILE
    #[arg(long, value_name = "FILE", default_value = ETC_RESOLV_CONF)]
    pub resolv_conf: PathBuf,

    /// Longest wait for one DNS answer, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = parse_seconds)]
    pub dns_timeout: f64,
}

/// A positive, finite number of seconds, at most one hour.
fn parse_seconds(text: &str) -> Result<f64, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
        return Err(format!(
            "{text} must be more than 0 and at most 3600 seconds"
        ));
    }
    Ok(secs)
}

impl Opts {
    /// The run's configuration on the real host.
    pub fn into_config(self) -> Config {
        let tests: BTreeSet<Test> = if self.tests.is_empty() {
            Test::ALL.into_iter().collect()
        } else {
            self.tests.into_iter().collect()
        };
        Config {
            path: self.path,
            window: Duration::from_secs_f64(self.duration),
            tests,
            regex_engine: self.regex_engine,
            resolv_conf: self.resolv_conf,
            dns_timeout: Duration::from_secs_f64(self.dns_timeout),
            host: Host::real(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Opts::command().debug_assert();
    }

    #[test]
    fn defaults_match_pveperf() {
        let config = Opts::parse_from(["pveprobe"]).into_config();
        assert_eq!(config.path, PathBuf::from("/"));
        assert_eq!(config.window, Duration::from_secs(3));
        assert_eq!(config.tests.len(), 6);
        assert_eq!(config.regex_engine, RegexEngine::Rust);
        assert_eq!(config.resolv_conf, PathBuf::from("/etc/resolv.conf"));
    }

    #[test]
    fn parses_test_lists_and_rejects_bad_seconds() {
        let opts = Opts::parse_from([
            "pveprobe",
            "--tests",
            "fsync,dns",
            "--duration",
            "0.5",
            "/x",
        ]);
        let config = opts.into_config();
        assert_eq!(
            config.tests.into_iter().collect::<Vec<_>>(),
            vec![Test::Fsync, Test::Dns]
        );
        assert_eq!(config.window, Duration::from_millis(500));
        for bad in ["0", "-1", "nan", "inf", "abc", "3601"] {
            assert!(
                Opts::try_parse_from(["pveprobe", "--duration", bad]).is_err(),
                "{bad}"
            );
        }
        assert!(Opts::try_parse_from(["pveprobe", "--tests", "cpu,bogus"]).is_err());
        assert!(Opts::try_parse_from(["pveprobe", "a", "b"]).is_err());
    }
}
