//! `pveprobe storages`: this node's storages listed in its session.

use super::args::StoragesArgs;
use super::{StorageList, StoragesRequest};
use crate::commands::common::requests;
use crate::commands::common::session::Session;
use crate::commands::common::work::Work;
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};
use crate::sys::interrupt::Interrupt;

/// `pveprobe storages`.
pub fn storages(args: &StoragesArgs) -> Ended {
    let req = StoragesRequest {
        pve_config: args.pve_config.clone(),
        progress: requests::progress(&args.out),
    };
    let session = Session::start::<StorageList>(requests::frame(&args.out, "pveprobe storages"))?;
    // A read of config takes no signal handlers: Ctrl-C ends it as any
    // program. The node's storage.cfg unreadable: nothing to list (2).
    let list = Work::run(&req, &Interrupt::default()).map_err(Stop::bad_input)?;
    session.finish(&list, Exit::Ok)
}
