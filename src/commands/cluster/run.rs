//! `pveprobe cluster [OPTIONS] [PATH]`: the options checked and made into
//! the request `cluster` takes, run in its session. `cluster --net` is
//! checked here and run by `net` (see [`crate::commands::run`]).

use std::time::Duration;

use super::args::ClusterArgs;
use super::{ClusterReport, ClusterRequest};
use crate::commands::common::requests;
use crate::commands::common::session::Session;
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::sys::interrupt::Interrupt;

/// Whether `cluster` measures the network (`--net`), with the options
/// that belong to one kind of run refused in the other (exit 2).
pub fn wants_net(args: &ClusterArgs) -> Result<bool, Stop> {
    let n = &args.net_options;
    if !args.net && (n.net_throughput || !n.links.is_empty() || n.port.is_some()) {
        return Err(Stop::bad_input(
            "--net-throughput, --link and --port measure the network between the nodes: add --net",
        ));
    }
    if args.net
        && let Some(why) = not_for_net(args)
    {
        return Err(Stop::bad_input(why));
    }
    Ok(args.net)
}

/// The longest a node may take: `--timeout`, or the worst case of
/// what it is asked to run ([`crate::measure::plan::Workload::worst_case`]).
fn node_timeout(args: &ClusterArgs) -> Duration {
    if let Some(secs) = args.timeout {
        return Duration::from_secs_f64(secs);
    }
    // The values parsed here carry the defaults, which are the nodes'.
    let m = &args.forward.measure;
    let default_size = if m.storage.is_some() {
        crate::commands::common::measure_args::VOLUME_SIZE
    } else {
        crate::commands::common::measure_args::WRITE_SIZE
    };
    crate::measure::plan::Workload {
        tests: requests::selected_tests(m),
        duration: m.duration,
        runs: m.runs,
        dns_timeout: m.dns_timeout,
        write_size: m.write_size.unwrap_or(default_size),
        sync_steps: m.sync_jobs.len(),
        sustained: m.sustained,
        cpu_threads: m.cpu_threads.is_some(),
    }
    .worst_case()
}

/// `pveprobe cluster [OPTIONS] [PATH]`.
pub fn cluster(args: &ClusterArgs) -> Ended {
    let reach = requests::reach(&args.reach);
    let req = ClusterRequest {
        reach: &reach,
        path: &args.path,
        storage: args.forward.measure.storage.as_deref(),
        forwarded: args.forwarded(),
        timeout: node_timeout(args),
        parallel: args.parallel,
        save_dir: args.save_dir.as_deref(),
        progress: crate::commands::common::requests::progress(&args.out),
    };
    // Every error of a cluster run is a usage error (2).
    let plan = crate::commands::cluster::plan(&req).map_err(Stop::bad_input)?;
    if args.dry_run {
        print!("{}", plan.dry_run());
        return Ok(Exit::Ok);
    }
    let session = Session::start::<ClusterReport>(crate::commands::common::requests::frame(
        &args.out,
        "pveprobe cluster",
    ))?;
    let report = Work::run(&plan, &Interrupt::default()).map_err(Stop::bad_input)?;
    for p in &report.problems {
        req.progress.say(p);
    }
    let exit = exit_status(&report);
    session.finish(&report, exit)
}

/// What `--net` was given that belongs to the probe's runs (or the other
/// way round), as a usage error: a run measures one or the other.
fn not_for_net(args: &ClusterArgs) -> Option<String> {
    let mut given: Vec<String> = args
        .forwarded()
        .into_iter()
        .filter(|w| w.starts_with("--"))
        .collect();
    if args.path != "/" {
        given.push("PATH".into());
    }
    for (set, name) in [
        (args.save_dir.is_some(), "--save-dir"),
        (args.timeout.is_some(), "--timeout"),
    ] {
        if set {
            given.push(name.into());
        }
    }
    (!given.is_empty()).then(|| {
        format!(
            "--net measures the network between the nodes, not their storage: {} do not apply to it",
            given.join(", ")
        )
    })
}

/// 0: every node answered and measured every line; 1: every node
/// answered, a line failed somewhere (or the run had a problem it
/// said); 4: a node did not answer.
pub fn exit_status(report: &ClusterReport) -> Exit {
    if report.answered() < report.nodes.len() {
        Exit::NodeDidNotAnswer
    } else if !report.problems.is_empty()
        || report
            .nodes
            .iter()
            .any(|n| n.status == super::Status::Partial)
    {
        Exit::NotMeasured
    } else {
        Exit::Ok
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::commands::{Command, Opts};

    /// The node timeout of `pveprobe cluster ARGS`.
    fn timeout(args: &[&str]) -> Duration {
        let mut argv = vec!["pveprobe", "cluster"];
        argv.extend_from_slice(args);
        match Opts::try_parse_from(argv).unwrap().command {
            Some(Command::Cluster(c)) => node_timeout(&c),
            other => panic!("not cluster: {other:?}"),
        }
    }

    #[test]
    fn timeout_follows_the_tests() {
        // pveperf's defaults: 4 windows of 3 s, DNS 2 × (3 + 2) s.
        assert_eq!(timeout(&[]), Duration::from_secs(60 + 3 * 22));
        assert_eq!(
            timeout(&["--tests", "cpu,fsync", "--duration", "0.5"]),
            Duration::from_secs(62)
        );
        assert_eq!(timeout(&["--timeout", "7.5"]), Duration::from_secs_f64(7.5));
        // -x: 5 more windows (SYNC WRITE 4K takes one), the CPU
        // figures' 7 s (3 windows), 4 GiB written at 10 MiB/s.
        assert_eq!(
            timeout(&["-x"]),
            Duration::from_secs(60 + 3 * (22 + 15 + 9) + 4 * 1024 / 10 + 1)
        );
        // --cpu-threads: the CPU figures twice.
        assert_eq!(
            timeout(&["--tests", "cpu-bench", "--cpu-threads", "4"]),
            Duration::from_secs(60 + 3 * 18)
        );
    }
}
