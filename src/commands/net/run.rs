//! `pveprobe net NODE...`, `cluster --net` and the network's hidden
//! helpers: the options made into the request `net` takes, run in its
//! session.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::args::{NetArgs, NetInfoArgs, NetMigrateArgs, NetProbeArgs, NetServeArgs, NetSinkArgs};
use super::options::Options;
use super::report::NetReport;
use super::{NetError, NetRequest};
use crate::commands::common::net_args::NetOptions;
use crate::commands::common::output_args::OutputArgs;
use crate::commands::common::reach_args::ReachArgs;
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, Session};
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::results::Readers;
use crate::sys::interrupt::Interrupt;

/// The network options as plain data.
fn options(args: &NetOptions) -> Options {
    Options {
        net_throughput: args.net_throughput,
        links: args.links.clone(),
        net_count: args.net_count,
        net_rate: args.net_rate,
        net_seconds: args.net_seconds,
        net_streams: args.net_streams,
        port: args.port,
        pve_config: args.pve_config.clone(),
    }
}

/// A network run in its session: the format and the baseline checked
/// first, then the plan.
fn net_run(frame: Frame, req: &NetRequest, dry_run: bool, readers: &Readers) -> Ended {
    if frame.plot.is_some() && !req.opts.net_throughput {
        return Err(Stop::bad_input(
            "--plot draws the migration path, which --net-throughput measures",
        ));
    }
    let session = Session::start::<NetReport>(frame)?;
    let baseline = req
        .baseline
        .map(|b| readers.load(b))
        .transpose()
        .map_err(Stop::bad_input)?;
    let plan = super::plan(req).map_err(stop)?;
    if dry_run {
        print!("{}", plan.dry_run());
        return Ok(Exit::Ok);
    }
    let report = Work::run(&plan, &Interrupt::default()).map_err(stop)?;
    let mut exit = exit_status(&report);
    if let Some(base) = baseline {
        let current = crate::results::Input {
            name: "this run".into(),
            doc: report.as_result(),
        };
        let (table, worse) = crate::results::against_baseline(base, current, req.tolerance);
        req.progress.say("compared with the baseline:");
        req.progress.block(&table);
        worse.iter().for_each(|w| req.progress.say(w));
        if !worse.is_empty() {
            exit = Exit::WorseThanBaseline;
        }
    }
    session.finish(&report, exit)
}

/// `pveprobe net NODE...`.
/// `readers` read `--baseline`'s file.
pub fn net(args: &NetArgs, readers: &Readers) -> Ended {
    let frame = crate::commands::common::requests::frame(&args.out, "pveprobe net");
    net_run(
        frame,
        &NetRequest {
            reach: &requests::reach(&args.reach),
            opts: &options(&args.net_options),
            only: Some(&args.pair_nodes),
            parallel: args.parallel,
            baseline: args.net_options.baseline.as_deref(),
            tolerance: args.net_options.tolerance,
            progress: crate::commands::common::requests::progress(&args.out),
        },
        args.dry_run,
        readers,
    )
}

/// What `cluster --net` asks of the network: every pair of the cluster's
/// nodes (`cluster`'s own options are checked by its `run` before this).
pub struct AcrossCluster<'a> {
    pub reach: &'a ReachArgs,
    pub net_options: &'a NetOptions,
    pub parallel: bool,
    pub dry_run: bool,
    pub out: &'a OutputArgs,
}

/// `pveprobe cluster --net`.
pub fn across_cluster(asked: &AcrossCluster, readers: &Readers) -> Ended {
    let frame = crate::commands::common::requests::frame(asked.out, "pveprobe cluster --net");
    net_run(
        frame,
        &NetRequest {
            reach: &requests::reach(asked.reach),
            opts: &options(asked.net_options),
            only: None,
            parallel: asked.parallel,
            baseline: asked.net_options.baseline.as_deref(),
            tolerance: asked.net_options.tolerance,
            progress: crate::commands::common::requests::progress(asked.out),
        },
        asked.dry_run,
        readers,
    )
}

/// `pveprobe net-serve` (hidden): the far end of a network measurement.
pub fn net_serve(args: &NetServeArgs) -> Ended {
    serve_main(&super::serve::ServeOptions {
        bind: args.bind,
        port: args.port,
        peer: args.peer,
        lifetime: std::time::Duration::from_secs(args.lifetime),
        max_pps: args.max_rate,
    })
}

/// A flag raised by SIGTERM, SIGINT and SIGHUP, and when stdin ends (the
/// ssh connection that started the helper closed).
fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    super::serve::stop_on_stdin_eof(Arc::clone(&stop));
    stop
}

/// `pveprobe net-migrate` (hidden): one way of the secure migration
/// channel from this node; its answer as one JSON line.
pub fn net_migrate(args: &NetMigrateArgs) -> Ended {
    let stop = stop_flag();
    let remote = if args.remote.is_empty() {
        vec!["pveprobe".to_string()]
    } else {
        args.remote.clone()
    };
    let opts = super::migrate::MigrateOptions {
        node: args.node.clone(),
        to: args.to,
        way: if args.way == "back" {
            crate::model::net::Way::Back
        } else {
            crate::model::net::Way::Forward
        },
        seconds: args.seconds,
        pve_config: args.pve_config.clone(),
        remote,
        connect: std::time::Duration::from_secs(u64::from(args.connect_timeout)),
    };
    let answer = match super::migrate::migrate(&opts, &stop) {
        Ok(stream) => super::migrate::MigrateAnswer {
            stream: Some(stream),
            error: None,
        },
        Err(why) => super::migrate::MigrateAnswer {
            stream: None,
            error: Some(why),
        },
    };
    println!(
        "{} {}",
        super::migrate::ANSWER_PREFIX,
        serde_json::to_string(&answer).expect("plain data")
    );
    Ok(if answer.error.is_none() {
        Exit::Ok
    } else {
        Exit::NotMeasured
    })
}

/// `pveprobe net-sink` (hidden): the target's end of `net-migrate`.
pub fn net_sink(args: &NetSinkArgs) -> Ended {
    let stop = stop_flag();
    let ready = || {
        println!("{}", super::sink::READY_PREFIX);
        let _ = std::io::Write::flush(&mut std::io::stdout());
    };
    match super::sink::sink(
        Path::new(super::sink::RUN_DIR),
        &args.name,
        std::time::Duration::from_secs(args.lifetime),
        &stop,
        ready,
    ) {
        Ok(stats) => {
            println!(
                "{} {}",
                super::sink::DONE_PREFIX,
                serde_json::to_string(&stats).expect("plain data")
            );
            Ok(Exit::Ok)
        }
        Err(e) => Err(Stop::not_measured(format!("net-sink: {e}"))),
    }
}

/// `pveprobe net-serve`: serves until its stdin ends, it is told to stop
/// (SIGTERM, SIGINT, SIGHUP) or its lifetime is over; prints its ready
/// line, then its counts.
fn serve_main(opts: &super::serve::ServeOptions) -> Ended {
    let stop = stop_flag();
    let ready = |r: &super::serve::Ready| {
        println!("{}", r.line());
        let _ = std::io::Write::flush(&mut std::io::stdout());
    };
    match super::serve::serve(opts, &stop, ready) {
        Ok(stats) => {
            println!(
                "{} {}",
                super::serve::DONE_PREFIX,
                serde_json::to_string(&stats).expect("plain data")
            );
            Ok(Exit::Ok)
        }
        Err(e) => Err(Stop::not_measured(format!("net-serve: {e}"))),
    }
}

/// `pveprobe net-probe` (hidden): the measuring end; the result as JSON.
pub fn net_probe(args: &NetProbeArgs) -> Ended {
    let result = super::probe::probe(&super::probe::ProbeOptions {
        from: args.from,
        to: args.to,
        count: args.count,
        rate_pps: args.rate,
        mtu: args.mtu,
        throughput: args
            .throughput_seconds
            .map(|s| (std::time::Duration::from_secs(u64::from(s)), args.streams)),
    });
    println!("{}", serde_json::to_string(&result).expect("plain data"));
    Ok(if result.errors.is_empty() {
        Exit::Ok
    } else {
        Exit::NotMeasured
    })
}

/// `pveprobe net-info` (hidden): this node's interfaces and knet statistics.
pub fn net_info(args: &NetInfoArgs) -> Ended {
    match super::facts::facts(&args.qmp_dir) {
        Ok(f) => {
            println!("{}", serde_json::to_string(&f).expect("plain data"));
            Ok(Exit::Ok)
        }
        Err(e) => Err(Stop::not_measured(format!(
            "net-info: cannot list the interfaces: {}",
            crate::error::describe(&e)
        ))),
    }
}

/// A usage error (exit status 2), but for a result that cannot be written.
fn stop(why: NetError) -> Stop {
    match why {
        NetError::Output(_) => Stop::not_measured(why),
        _ => Stop::bad_input(why),
    }
}

/// 0: every pair of every link measured; 1: some not; 4: a node did
/// not answer.
pub fn exit_status(report: &NetReport) -> Exit {
    if report.nodes.iter().any(|n| !n.status.answered()) {
        Exit::NodeDidNotAnswer
    } else if report.pairs.iter().any(|p| {
        p.status != super::report::PairStatus::Ok
            && p.status != super::report::PairStatus::NotOnLink
    }) {
        Exit::NotMeasured
    } else {
        Exit::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::commands::net::report::tests::{migration_pair, report_of, secure_stream};
    use crate::model::net::Way;

    fn with_secure(mib: f64) -> NetReport {
        let mut p = migration_pair();
        p.secure.push(secure_stream(Way::Forward, mib));
        let mut r = report_of(vec![p]);
        r.figures = super::super::report::figures(&r.pairs);
        r
    }

    #[test]
    fn a_secure_figure_worse_than_the_baseline_is_named() {
        let base = |mib| crate::results::Input {
            name: "before.json".into(),
            doc: with_secure(mib).as_result(),
        };
        let now = || crate::results::Input {
            name: "this run".into(),
            doc: with_secure(300.0).as_result(),
        };
        let (table, worse) = crate::results::against_baseline(base(500.0), now(), 20.0);
        assert_eq!(worse.len(), 1, "{table}");
        assert!(
            worse[0].starts_with("NET MIGRATION SECURE [migration pve1-pve2] is worse than the baseline by more than 20%: 300.00 against 500.00"),
            "{worse:?}"
        );
        let (table, worse) = crate::results::against_baseline(base(320.0), now(), 20.0);
        assert!(worse.is_empty(), "{table}");
    }
}
