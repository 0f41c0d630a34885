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
    /// The AES and SHA instruction-set flags `/proc/cpuinfo` lists
    /// (`parse::cpuinfo::CRYPTO_FLAGS`): what the CPU figures use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_crypto_flags: Vec<String>,
    /// cpu0's cpufreq governor; `None` without cpufreq (most VMs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_governor: Option<String>,
}

/// CPU BOGOMIPS: the sum of `/proc/cpuinfo`'s `bogomips` over the CPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bogomips(pub f64);

/// A wait for another probe on the same host before measuring (see
/// `lock`), as JSON records it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Waited {
    pub seconds: f64,
    /// The probe that held the lock, as it described itself.
    pub holder: String,
}

/// A node's load, as its kernel says.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeLoad {
    /// The 1-minute load average.
    pub load1: f64,
    /// CPUs online.
    pub cpus: usize,
    /// Share of the last minute some task waited for a CPU (PSI), percent.
    pub cpu_pressure_pct: Option<f64>,
}
