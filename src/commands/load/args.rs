//! The arguments of `load`'s hidden parts: `load-worker`, a worker VM's
//! `/init`, and `load-initramfs`, which builds what a worker boots.

use std::path::PathBuf;

use clap::Args;

/// `pveprobe load-worker`: a worker VM's `/init`.
#[derive(Debug, Args)]
pub struct LoadWorkerArgs {
    /// The serial port the node listens on (PVE's serial0)
    #[arg(long, value_name = "DEVICE", default_value = "/dev/ttyS0")]
    pub port: PathBuf,
}

/// `pveprobe load-initramfs --out FILE`: a worker VM's initramfs.
#[derive(Debug, Args)]
pub struct LoadInitramfsArgs {
    /// The initramfs to write (a new file)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// The kernel release whose modules go in (default: this node's, uname -r)
    #[arg(long, value_name = "RELEASE")]
    pub release: Option<String>,

    /// Where the releases' modules are
    #[arg(long, value_name = "DIR", default_value = "/lib/modules")]
    pub modules: PathBuf,

    /// The probe that becomes /init: a static pveprobe
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/usr/lib/pveprobe/pveprobe-static"
    )]
    pub probe: PathBuf,

    /// A further file, at its own path (a dynamically linked probe's
    /// libraries and loader, for tests)
    #[arg(long = "with", value_name = "FILE")]
    pub with: Vec<PathBuf>,
}
