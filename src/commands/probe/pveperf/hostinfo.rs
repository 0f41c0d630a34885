//! The host fingerprint that goes with every JSON and CSV result: enough
//! to know what was measured when rows from many nodes meet in one sheet.
//! Everything is read from files through the [`Host`] seam, but for the
//! physical cores of a real host whose sysfs has no topology, which
//! [`crate::sys::cpus::physical`] (num_cpus) counts.

use std::collections::BTreeSet;

use crate::model::host::HostInfo;
use crate::sys::host::{Host, PROC_HOSTNAME};
use pveprobe_parse::{cpuinfo, hostfacts};

pub const PROC_OSRELEASE: &str = "/proc/sys/kernel/osrelease";
pub const PROC_MEMINFO: &str = "/proc/meminfo";
pub const ETC_OS_RELEASE: &str = "/etc/os-release";
pub const USR_LIB_OS_RELEASE: &str = "/usr/lib/os-release";
pub const SYS_CPU: &str = "/sys/devices/system/cpu";
pub const CPU0_GOVERNOR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";

fn trimmed(text: std::io::Result<String>) -> Option<String> {
    text.ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// Sockets, cores and threads from sysfs CPU topology.
fn topology(host: &Host) -> Option<(u32, u32, u32)> {
    let dir = std::fs::read_dir(host.path(SYS_CPU)).ok()?;
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    let mut threads = 0u32;
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(index) = name.strip_prefix("cpu") else {
            continue;
        };
        if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let read = |file: &str| -> Option<i64> {
            trimmed(host.read(format!("{SYS_CPU}/{name}/topology/{file}")))?
                .parse()
                .ok()
        };
        let Some(core) = read("core_id") else {
            continue;
        };
        let package = read("physical_package_id").unwrap_or(0);
        threads += 1;
        packages.insert(package);
        cores.insert((package, core));
    }
    (threads > 0).then_some((packages.len() as u32, cores.len() as u32, threads))
}

pub fn host_info(host: &Host) -> HostInfo {
    // One parse of cpuinfo for its processors, model and flags.
    let cpu = cpuinfo::facts(
        &host
            .read(crate::sys::host::PROC_CPUINFO)
            .unwrap_or_default(),
    );
    let (sockets, cores, threads) = match topology(host) {
        Some((s, c, t)) => (Some(s), Some(c), Some(t)),
        None => {
            let processors = cpu.processors as u32;
            // Without sysfs's topology (a container's /sys), this host's
            // own cores are still known; a captured tree's are not.
            let cores = host.is_real().then(|| crate::sys::cpus::physical() as u32);
            (None, cores, (processors > 0).then_some(processors))
        }
    };
    let os_release = host
        .read(ETC_OS_RELEASE)
        .or_else(|_| host.read(USR_LIB_OS_RELEASE))
        .unwrap_or_default();
    HostInfo {
        hostname: trimmed(host.read(PROC_HOSTNAME)),
        cpu_model: cpu.model,
        sockets,
        cores,
        threads,
        memory_bytes: host
            .read(PROC_MEMINFO)
            .ok()
            .and_then(|m| pveprobe_parse::memory::meminfo(&m))
            .map(|m| m.total),
        kernel: trimmed(host.read(PROC_OSRELEASE)),
        os_release: hostfacts::os_pretty_name(&os_release),
        pve_manager: host
            .read(crate::sys::host::DPKG_STATUS)
            .ok()
            .and_then(|s| hostfacts::installed_version(&s, "pve-manager")),
        cpu_crypto_flags: cpu.crypto_flags,
        cpu_governor: trimmed(host.read(CPU0_GOVERNOR)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_fixture_host() {
        let root = tempfile::tempdir().unwrap();
        let put = |path: &str, text: &str| {
            let p = root.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put(PROC_HOSTNAME, "pve1\n");
        put(PROC_OSRELEASE, "6.8.12-4-pve\n");
        put(
            PROC_MEMINFO,
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/fixtures/hosts/this-vm/proc/meminfo"
            ))
            .unwrap(),
        );
        put(
            ETC_OS_RELEASE,
            "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
        );
        put(
            crate::sys::host::DPKG_STATUS,
            "Package: pve-manager\nStatus: install ok installed\nVersion: 8.3.1\n",
        );
        put(
            "/proc/cpuinfo",
            "processor : 0\nmodel name : Test CPU\nflags : fpu aes sse2 sha_ni\n",
        );
        put(CPU0_GOVERNOR, "schedutil\n");
        // Two sockets, two cores each, hyperthreads on socket 0 core 0.
        for (cpu, package, core) in [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1), (4, 0, 0)] {
            put(
                &format!("{SYS_CPU}/cpu{cpu}/topology/core_id"),
                &format!("{core}\n"),
            );
            put(
                &format!("{SYS_CPU}/cpu{cpu}/topology/physical_package_id"),
                &format!("{package}\n"),
            );
        }
        put(&format!("{SYS_CPU}/cpufreq/x"), "");
        let info = host_info(&Host::with_root(root.path()));
        assert_eq!(
            info,
            HostInfo {
                hostname: Some("pve1".into()),
                cpu_model: Some("Test CPU".into()),
                sockets: Some(2),
                cores: Some(4),
                threads: Some(5),
                // MemTotal of the capture.
                memory_bytes: Some(24_683_784 * 1024),
                kernel: Some("6.8.12-4-pve".into()),
                os_release: Some("Debian GNU/Linux 12 (bookworm)".into()),
                pve_manager: Some("8.3.1".into()),
                cpu_crypto_flags: vec!["aes".into(), "sha_ni".into()],
                cpu_governor: Some("schedutil".into()),
            }
        );
    }

    #[test]
    fn an_empty_host_gives_an_empty_fingerprint() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            host_info(&Host::with_root(root.path())),
            HostInfo::default()
        );
    }
}
