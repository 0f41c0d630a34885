//! `pveprobe compare FILE...`: the results read, ranked in one table,
//! written in its session (with `--plot`'s panels).

use super::session::{Frame, Session};
use crate::cli::CompareArgs;
use crate::compare::{self, Input, Table};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::output;

/// `pveprobe compare FILE...`.
pub fn compare(args: &CompareArgs) -> Ended {
    const COMMAND: &str = "pveprobe compare";
    output::check::<Table>(args.output_format, COMMAND).map_err(Stop::bad_input)?;
    // A cluster document gives one input per node that answered.
    let inputs: Result<Vec<Input>, _> = args
        .files
        .iter()
        .map(|f| crate::cluster::render::compare_inputs(f))
        .collect::<Result<Vec<_>, _>>()
        .map(|each| each.into_iter().flatten().collect());
    let inputs = inputs.map_err(Stop::bad_input)?;
    let session = Session::start::<Table>(Frame {
        plot: args.plot.as_deref(),
        ..Frame::new(COMMAND, args.output_format, None)
    })?;
    let table = compare::table(&inputs);
    session.finish(&table, Exit::Ok)
}
