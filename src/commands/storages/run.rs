//! `pveprobe storages`: this node's storages listed in its session.

use super::StorageList;
use super::args::StoragesArgs;
use crate::commands::common::session::{Frame, Session};
use crate::error::Ended;
use crate::error::exit::Exit;

/// `pveprobe storages`.
pub fn storages(args: &StoragesArgs) -> Ended {
    let session =
        Session::start::<StorageList>(Frame::new("pveprobe storages", args.output_format, None))?;
    let list = super::list(&args.pve_config)?;
    session.finish(&list, Exit::Ok)
}
