//! The host fingerprint as data: what goes with every JSON and CSV result
//! so rows from many nodes can be told apart (see `probe::hostinfo` for
//! where each field is read).

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostInfo {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub sockets: Option<u32>,
    pub cores: Option<u32>,
    pub threads: Option<u32>,
    pub memory_bytes: Option<u64>,
    pub kernel: Option<String>,
    pub os_release: Option<String>,
    /// The installed pve-manager's version; `None` on plain Debian.
    pub pve_manager: Option<String>,
}
