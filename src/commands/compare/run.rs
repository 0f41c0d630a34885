//! `pveprobe compare FILE...`: the results read, ranked in one table,
//! written in its session (with `--plot`'s panels).

use super::args::CompareArgs;
use crate::commands::common::session::{Frame, Session};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::output;
use crate::results::{self, Input, Readers, Table};

/// `pveprobe compare FILE...`, reading each file with `readers`.
pub fn compare(args: &CompareArgs, readers: &Readers) -> Ended {
    const COMMAND: &str = "pveprobe compare";
    output::check::<Table>(args.output_format, COMMAND).map_err(Stop::bad_input)?;
    // A cluster document gives one input per node that answered.
    let inputs: Vec<Input> = args
        .files
        .iter()
        .map(|f| readers.read(f))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Stop::bad_input)?
        .into_iter()
        .flatten()
        .collect();
    let session = Session::start::<Table>(Frame {
        plot: args.plot.as_deref(),
        ..Frame::new(COMMAND, args.output_format, None)
    })?;
    session.finish(&results::table(&inputs), Exit::Ok)
}
