//! `pveprobe compare FILE...`: the results read, ranked in one table,
//! written in its session (with `--plot`'s panels).

use super::CompareRequest;
use super::args::CompareArgs;
use crate::commands::common::requests;
use crate::commands::common::session::Session;
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::output;
use crate::results::{Readers, Table};
use crate::sys::interrupt::Interrupt;

/// `pveprobe compare FILE...`, reading each file with `readers`.
pub fn compare(args: &CompareArgs, readers: &Readers) -> Ended {
    const COMMAND: &str = "pveprobe compare";
    output::check::<Table>(args.out.output_format, COMMAND).map_err(Stop::bad_input)?;
    let req = CompareRequest {
        files: &args.files,
        readers,
    };
    // Files read before the session: a file that cannot be read opens no
    // `--plot` file (2). Reading takes no signal handlers.
    let table = Work::run(&req, &Interrupt::default()).map_err(Stop::bad_input)?;
    let session = Session::start::<Table>(requests::frame(&args.out, COMMAND))?;
    session.finish(&table, Exit::Ok)
}
