//! `pveprobe storages` and `--storage ID|all`: the arguments made into the
//! storages command's plain request; each storage's run is the probe's,
//! its lines printed as they are measured ([`Lines`]).

use std::io::Write;

use super::probe::{Prepared, finish, lines_to_stdout, measure, prepare};
use super::session::{Frame, Session};
use crate::cli::{ProbeArgs, StoragesArgs};
use crate::error::Ended;
use crate::error::exit::Exit;
use crate::measure::window::Interrupt;
use crate::model::pve::PveTarget;
use crate::probe::plan::Test;
use crate::probe::report::Report;
use crate::probe::schedule::Config;
use crate::storages::{self, AllReport, StorageList, StoragesRequest};

/// `pveprobe storages`.
pub fn storages(args: &StoragesArgs) -> Ended {
    let session =
        Session::start::<StorageList>(Frame::new("pveprobe storages", args.output_format, None))?;
    let list = storages::list(&args.pve_config)?;
    session.finish(&list, Exit::Ok)
}

/// The request: which storage, and the tests a storage run makes unless
/// `--tests` says (pveperf's disk lines, and -x's; on a volume its writes too).
fn request(args: &ProbeArgs, which: &str) -> StoragesRequest {
    let disk = [Test::Read, Test::Seek, Test::Fsync];
    let with_writes = [
        Test::Read,
        Test::Seek,
        Test::Fsync,
        Test::Seqwrite,
        Test::Randread,
        Test::Randwrite,
        Test::Syncwrite,
    ];
    let asked = args.measure.asked();
    StoragesRequest {
        which: which.to_string(),
        pve_config: args.pve_config.clone(),
        config: args.config(),
        on_path: asked.select(&disk),
        on_volume: asked.select(&with_writes),
        volume_bytes: args.measure.write_size.unwrap_or(crate::cli::VOLUME_SIZE),
    }
}

/// The probe's runs on storages, printed as the probe prints them.
struct Lines<'a> {
    args: &'a ProbeArgs,
    prep: &'a Prepared<'a>,
}

impl storages::ProbeRunner for Lines<'_> {
    fn interrupt(&self) -> &Interrupt {
        self.prep.interrupt()
    }

    /// `STORAGE: ...` before the lines, where they go to stdout; then the run.
    fn run(&mut self, config: &Config, target: &PveTarget) -> Report {
        if lines_to_stdout(self.args) {
            let line = format!("{:<19}{}", "STORAGE:", target.describe());
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", crate::model::printable(&line));
            let _ = out.flush();
        }
        measure(self.args, config, self.prep.interrupt())
    }

    /// A blank line between two storages' lines.
    fn measured(&mut self, _report: &Report) {
        if lines_to_stdout(self.args) {
            println!();
        }
    }
}

/// `--storage ID|all`.
pub(super) fn probe(args: &ProbeArgs, which: &str) -> Ended {
    let req = request(args, which);
    let plan = storages::plan(&req)?;
    let prep = prepare(
        args,
        &format!("pid {}, --storage {which}", std::process::id()),
        None,
    )?;
    let mut lines = Lines { args, prep: &prep };
    if which != "all" {
        let mut report = plan.probe_one(&req, &mut lines)?;
        report.waited_for_probe = prep.waited();
        return finish(args, &report, prep);
    }
    let (mut all, exit) = plan.probe_all(&req, &mut lines)?;
    all.lines_printed = lines_to_stdout(args);
    all.csv_header = prep.session.csv_header;
    prep.session.finish::<AllReport>(&all, exit)
}
