//! What the binary does between parsed options and an exit status: each
//! command's arguments made into its plain request (the only code that
//! sees clap, with `cli`), run in its [`session`], its document written.
//! One file per command; `session` is what every command needs around
//! its work.

use crate::cli::{Command, Opts};
use crate::error::Ended;

mod ceph;
mod cluster;
mod compare;
mod guest;
mod probe;
pub mod pveperf;
mod qualify;
pub mod session;
mod storages;

/// Every command: the options parsed, the exit status to return or the
/// [`crate::error::Stop`] that `main` prints.
pub fn run(opts: &Opts) -> Ended {
    match &opts.command {
        Some(Command::Compare(args)) => compare::compare(args),
        Some(Command::Cluster(args)) => cluster::cluster(args),
        Some(Command::Storages(args)) => storages::storages(args),
        Some(Command::Net(args)) => cluster::net(args),
        Some(Command::NetServe(args)) => cluster::net_serve(args),
        Some(Command::NetProbe(args)) => cluster::net_probe(args),
        Some(Command::NetInfo) => cluster::net_info(),
        Some(Command::Qualify(args)) => qualify::qualify(args),
        Some(Command::Guest(args)) => guest::guest(args),
        Some(Command::Ceph(args)) => ceph::ceph(args),
        Some(Command::CephNodeInfo(args)) => ceph::node_info(args),
        Some(Command::GuestSide(args)) => guest::guest_side(args),
        None => match &opts.probe.measure.storage {
            Some(which) => storages::probe(&opts.probe, which),
            None => probe::probe(&opts.probe),
        },
    }
}
