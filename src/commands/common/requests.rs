//! The shared argument groups made into the plain data the work takes:
//! the output arguments into the session's frame and the progress, the
//! nodes to reach (`cluster`, `net`, `ceph`) and the tests a probe run
//! makes (the probe, `--storage`, `cluster`).

use std::collections::BTreeSet;

use super::measure_args::MeasureArgs;
use super::output_args::OutputArgs;
use super::reach_args::ReachArgs;
use super::session::Frame;
use super::source_args::SourceArgs;
use crate::measure::plan::{Asked, Test};
use crate::nodeio::read::Sources;
use crate::nodes::Reach;
use crate::output::progress::Progress;

/// The session's frame for `command`: what to write, where, and how.
pub fn frame<'a>(out: &'a OutputArgs, command: &'static str) -> Frame<'a> {
    Frame {
        append: out.append,
        plot: out.plot.as_deref(),
        ..Frame::new(command, out.output_format, out.output.as_deref())
    }
}

/// The progress a long command shows: none with `--quiet`, nor when a
/// machine-readable document goes to the terminal.
pub fn progress(out: &OutputArgs) -> Progress {
    Progress::for_command(out.quiet, out.output_format, out.output.as_deref())
}

/// Where `top` and `record` read the node: PVE's places, or the tests'
/// stand-ins.
pub fn sources(args: &SourceArgs) -> Sources {
    Sources {
        qmp_dir: args.qmp_dir.clone(),
        pve_dir: args.pve_dir.clone(),
        jobs: crate::nodeio::jobs::JobSources {
            tasks_file: args.tasks_file.clone(),
            replication_state: args.replication_state.clone(),
            zfs_kstat: args.zfs_kstat.clone(),
            ceph_conf: args.pve_dir.join("ceph.conf"),
        },
        ..crate::nodeio::default_sources()
    }
}

/// How to reach the cluster's nodes.
pub fn reach(args: &ReachArgs) -> Reach {
    Reach {
        members: args.members.clone(),
        nodes: args.nodes.clone(),
        nodes_file: args.nodes_file.clone(),
        remote_command: args.remote_command.0.clone(),
        ssh_user: args.ssh_user.clone(),
        connect_timeout: args.connect_timeout,
        ssh_config: args.ssh_config.clone(),
        ssh_options: args.ssh_options.clone(),
    }
}

/// What the options ask to run, for [`Asked::select`].
pub fn asked(args: &MeasureArgs) -> Asked<'_> {
    Asked {
        tests: &args.tests,
        extended: args.extended,
        sync_jobs: !args.sync_jobs.is_empty(),
        cpu_threads: args.cpu_threads.is_some(),
        sustained: args.sustained.is_some(),
    }
}

/// The tests to run: `--tests` (pveperf's six when not given), and the
/// extended ones with `-x`.
pub fn selected_tests(args: &MeasureArgs) -> BTreeSet<Test> {
    asked(args).select(&Test::PVEPERF)
}
