//! `pveprobe net NODE...`, `cluster --net` and the network's hidden
//! helpers: the options made into the request `net` takes, run in its
//! session.

use std::path::Path;

use super::args::{NetArgs, NetProbeArgs, NetServeArgs};
use super::report::NetReport;
use super::{NetRequest, Options};
use crate::commands::common::net_args::NetOptions;
use crate::commands::common::reach_args::ReachArgs;
use crate::commands::common::requests;
use crate::commands::common::session::{Frame, Session};
use crate::error::Ended;
use crate::error::exit::Exit;
use crate::output::Format;

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

/// A network run in its session: the format checked first, then the plan.
fn net_run(frame: Frame, req: &NetRequest, dry_run: bool) -> Ended {
    let session = Session::start::<NetReport>(frame)?;
    let plan = super::plan(req).map_err(super::stop)?;
    if dry_run {
        print!("{}", plan.dry_run());
        return Ok(Exit::Ok);
    }
    let report = plan.run().map_err(super::stop)?;
    let exit = exit_status(&report);
    session.finish(&report, exit)
}

/// `pveprobe net NODE...`.
pub fn net(args: &NetArgs) -> Ended {
    let frame = Frame::new("pveprobe net", args.output_format, args.output.as_deref());
    net_run(
        frame,
        &NetRequest {
            reach: &requests::reach(&args.reach),
            opts: &options(&args.net_options),
            only: Some(&args.pair_nodes),
            parallel: args.parallel,
        },
        args.dry_run,
    )
}

/// What `cluster --net` asks of the network: every pair of the cluster's
/// nodes (`cluster`'s own options are checked by its `run` before this).
pub struct AcrossCluster<'a> {
    pub reach: &'a ReachArgs,
    pub net_options: &'a NetOptions,
    pub parallel: bool,
    pub dry_run: bool,
    pub output_format: Format,
    pub output: Option<&'a Path>,
}

/// `pveprobe cluster --net`.
pub fn across_cluster(asked: &AcrossCluster) -> Ended {
    let frame = Frame::new("pveprobe cluster --net", asked.output_format, asked.output);
    net_run(
        frame,
        &NetRequest {
            reach: &requests::reach(asked.reach),
            opts: &options(asked.net_options),
            only: None,
            parallel: asked.parallel,
        },
        asked.dry_run,
    )
}

/// `pveprobe net-serve` (hidden): the far end of a network measurement.
pub fn net_serve(args: &NetServeArgs) -> Ended {
    super::serve_main(&super::serve::ServeOptions {
        bind: args.bind,
        port: args.port,
        peer: args.peer,
        lifetime: std::time::Duration::from_secs(args.lifetime),
        max_pps: args.max_rate,
    })
}

/// `pveprobe net-probe` (hidden): the measuring end.
pub fn net_probe(args: &NetProbeArgs) -> Ended {
    Ok(super::probe_main(&super::probe::ProbeOptions {
        from: args.from,
        to: args.to,
        count: args.count,
        rate_pps: args.rate,
        mtu: args.mtu,
        throughput: args
            .throughput_seconds
            .map(|s| (std::time::Duration::from_secs(u64::from(s)), args.streams)),
    }))
}

/// `pveprobe net-info` (hidden): this node's interfaces and knet statistics.
pub fn net_info() -> Ended {
    super::info_main()
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
