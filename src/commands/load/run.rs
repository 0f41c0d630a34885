//! `load`'s hidden parts run: `load-worker` as a worker VM's `/init`, and
//! `load-initramfs`, which writes a worker's initramfs to a new file.

use std::io::BufWriter;

use super::args::{LoadInitramfsArgs, LoadWorkerArgs};
use super::initramfs::{self, InitramfsSpec};
use crate::error::exit::Exit;
use crate::error::{Ended, Stop};

/// `pveprobe load-worker`: returns only when this is no worker VM.
pub fn load_worker(args: &LoadWorkerArgs) -> Ended {
    super::worker::main(&args.port).map_err(Stop::bad_input)?;
    Ok(Exit::Ok)
}

/// `pveprobe load-initramfs --out FILE`.
pub fn load_initramfs(args: &LoadInitramfsArgs) -> Ended {
    let release = match &args.release {
        Some(r) => r.clone(),
        None => nix::sys::utsname::uname()
            .map_err(|e| Stop::not_measured(format!("uname: {e}")))?
            .release()
            .to_string_lossy()
            .into_owned(),
    };
    let spec = InitramfsSpec {
        probe: args.probe.clone(),
        modules: args.modules.join(&release),
        extra: args.with.clone(),
    };
    // A new file, never one that is there (nor a link to one).
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.out)
        .map_err(|e| {
            Stop::bad_input(format!(
                "cannot create {}: {}",
                args.out.display(),
                crate::error::describe(&e)
            ))
        })?;
    let built = initramfs::build(&spec, &mut BufWriter::new(file)).map_err(|e| {
        let _ = std::fs::remove_file(&args.out);
        Stop::not_measured(e)
    })?;
    eprintln!(
        "pveprobe: {}: {} bytes; modules of {release}: {}{}",
        args.out.display(),
        built.bytes,
        built.modules.len(),
        if built.built_in.is_empty() {
            String::new()
        } else {
            format!(" ({} built in)", built.built_in.join(", "))
        }
    );
    Ok(Exit::Ok)
}
