//! `pveprobe cluster`, `net` and the network's hidden helpers: the options
//! checked and turned into the requests `cluster` and `net` take, run in
//! their session.

use super::session::{Frame, Session};
use crate::cli::{ClusterArgs, NetArgs, NetProbeArgs, NetServeArgs};
use crate::cluster::ClusterReport;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::net::report::NetReport;

/// `pveprobe cluster [OPTIONS] [PATH]`, and `cluster --net`.
pub fn cluster(args: &ClusterArgs) -> Ended {
    let n = &args.net_options;
    if !args.net && (n.net_throughput || !n.links.is_empty() || n.port.is_some()) {
        return Err(Stop::bad_input(
            "--net-throughput, --link and --port measure the network between the nodes: add --net",
        ));
    }
    let reach = args.reach.to_reach();
    if args.net {
        if let Some(why) = not_for_net(args) {
            return Err(Stop::bad_input(why));
        }
        let frame = Frame::new(
            "pveprobe cluster --net",
            args.output_format,
            args.output.as_deref(),
        );
        return net_run(
            frame,
            &crate::net::NetRequest {
                reach: &reach,
                opts: &args.net_options.to_options(),
                only: None,
                parallel: args.parallel,
            },
            args.dry_run,
        );
    }
    let req = crate::cluster::ClusterRequest {
        reach: &reach,
        path: &args.path,
        storage: args.forward.measure.storage.as_deref(),
        forwarded: args.forwarded(),
        timeout: args.node_timeout(),
        parallel: args.parallel,
        save_dir: args.save_dir.as_deref(),
    };
    let plan = crate::cluster::plan(&req)?;
    if args.dry_run {
        print!("{}", plan.dry_run());
        return Ok(Exit::Ok);
    }
    let session = Session::start::<ClusterReport>(Frame {
        plot: args.plot.as_deref(),
        ..Frame::new(
            "pveprobe cluster",
            args.output_format,
            args.output.as_deref(),
        )
    })?;
    let (report, problems) = plan.run()?;
    for p in &problems {
        eprintln!("pveprobe: {p}");
    }
    let exit = match report.exit_status() {
        Exit::Ok if !problems.is_empty() => Exit::NotMeasured,
        status => status,
    };
    session.finish(&report, exit)
}

/// A network run in its session: the format checked first, then the plan.
fn net_run(frame: Frame, req: &crate::net::NetRequest, dry_run: bool) -> Ended {
    let session = Session::start::<NetReport>(frame)?;
    let plan = crate::net::plan(req).map_err(crate::net::stop)?;
    if dry_run {
        print!("{}", plan.dry_run());
        return Ok(Exit::Ok);
    }
    let report = plan.run().map_err(crate::net::stop)?;
    let exit = report.exit_status();
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
        (args.plot.is_some(), "--plot"),
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

/// `pveprobe net NODE...`.
pub fn net(args: &NetArgs) -> Ended {
    let frame = Frame::new("pveprobe net", args.output_format, args.output.as_deref());
    net_run(
        frame,
        &crate::net::NetRequest {
            reach: &args.reach.to_reach(),
            opts: &args.net_options.to_options(),
            only: Some(&args.pair_nodes),
            parallel: args.parallel,
        },
        args.dry_run,
    )
}

/// `pveprobe net-serve` (hidden): the far end of a network measurement.
pub fn net_serve(args: &NetServeArgs) -> Ended {
    crate::net::serve_main(&args.to_options())
}

/// `pveprobe net-probe` (hidden): the measuring end.
pub fn net_probe(args: &NetProbeArgs) -> Ended {
    Ok(crate::net::probe_main(&args.to_options()))
}

/// `pveprobe net-info` (hidden): this node's interfaces and knet statistics.
pub fn net_info() -> Ended {
    crate::net::info_main()
}
