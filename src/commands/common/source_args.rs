//! Where `top` and `record` read the node: PVE's places, or the tests'
//! stand-ins (hidden options).

use std::path::PathBuf;

use clap::Args;

/// Where a run reads the node (the tests' stand-ins; hidden).
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// Where the VMs' QMP sockets are (tests)
    #[arg(long, value_name = "DIR", default_value = crate::pvevm::qmp::RUN_DIR, hide = true)]
    pub qmp_dir: PathBuf,

    /// Read the guests' configs from DIR instead of /etc/pve (tests)
    #[arg(long, value_name = "DIR", default_value = crate::pvestorage::ETC_PVE, hide = true)]
    pub pve_dir: PathBuf,

    /// PVE's active task list (tests)
    #[arg(long, value_name = "FILE", default_value = crate::nodeio::jobs::TASKS_FILE, hide = true)]
    pub tasks_file: PathBuf,

    /// PVE's replication state (tests)
    #[arg(long, value_name = "FILE", default_value = crate::nodeio::jobs::REPLICATION_STATE, hide = true)]
    pub replication_state: PathBuf,

    /// Present when ZFS is loaded (tests)
    #[arg(long, value_name = "DIR", default_value = crate::nodeio::jobs::ZFS_KSTAT, hide = true)]
    pub zfs_kstat: PathBuf,
}
