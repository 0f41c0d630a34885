//! The seam between the probe and the host's `/proc`, `/sys` and `/etc`.
//!
//! What the probe reads of `/proc`, `/sys` and `/etc` to learn about the
//! host goes through [`Host`], so tests can point it at a captured fixture
//! tree instead of `/`. PVE's own configs (`/etc/pve`: storage.cfg, VM
//! configs, corosync.conf, datacenter.cfg) and run directories (QMP
//! sockets) are read from the directory a command is given
//! (`--pve-config`, `--qmp-dir`), which tests point at a tree of their
//! own; [`read_capped`] bounds every such read.

use std::io;
use std::path::{Path, PathBuf};

pub const PROC_CPUINFO: &str = "/proc/cpuinfo";
pub const PROC_MOUNTINFO: &str = "/proc/self/mountinfo";
/// The host name pveperf prints and results record.
pub const PROC_HOSTNAME: &str = "/proc/sys/kernel/hostname";
pub const PROC_DROP_CACHES: &str = "/proc/sys/vm/drop_caches";
pub const ETC_RESOLV_CONF: &str = "/etc/resolv.conf";
/// dpkg's status file: the installed packages and their versions.
pub const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// The most of one host file read: far above any real /proc, /sys or
/// config file (mountinfo of 10,000 mounts is about 1.5 MiB), and a bound
/// on memory when a file is endless (`/dev/zero`) or hostile.
pub const MAX_HOST_FILE: u64 = 16 << 20;

/// Drops the page cache, dentries and inodes (`3` into drop_caches), as
/// pveperf does before each disk test. Fails when not root.
pub fn drop_caches(host: &Host) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(host.path(PROC_DROP_CACHES))?;
    file.write_all(b"3\n")
}

/// Reads at most `limit` bytes of `path` as text (invalid UTF-8 replaced).
pub fn read_capped(path: &Path, limit: u64) -> io::Result<String> {
    use std::io::Read;
    // Room for a /proc or /sys file whole at once: the kernel gives them
    // no size, and read_to_end would probe them 32 bytes first, then
    // double (7 reads of a process's status, 2 with this).
    let mut bytes = Vec::with_capacity(8192);
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Where host files are read from: `/` on a real host, a fixture tree in tests.
#[derive(Debug, Clone)]
pub struct Host {
    root: PathBuf,
}

impl Host {
    /// The running host.
    pub fn real() -> Self {
        Self::with_root("/")
    }

    /// A host whose files live below `root` (a captured fixture tree).
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn is_real(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The path of the host file `abs` (an absolute path such as `/proc/cpuinfo`).
    pub fn path(&self, abs: impl AsRef<Path>) -> PathBuf {
        let abs = abs.as_ref();
        match abs.strip_prefix("/") {
            Ok(rel) => self.root.join(rel),
            Err(_) => self.root.join(abs),
        }
    }

    /// Resolves every symlink in the host path `abs` (sysfs links are
    /// relative, so fixture trees resolve like `/sys`). Returns the resolved
    /// host path, absolute as seen from the host; a tree whose link leaves
    /// the root (`sys -> /sys` in a test tree) resolves to that real path.
    pub fn resolve(&self, abs: impl AsRef<Path>) -> Option<PathBuf> {
        let root = std::fs::canonicalize(&self.root).ok()?;
        let real = std::fs::canonicalize(self.path(abs)).ok()?;
        match real.strip_prefix(&root) {
            Ok(rel) => Some(Path::new("/").join(rel)),
            Err(_) => Some(real),
        }
    }

    /// The name a host symlink points to (its last component), e.g. a driver's.
    pub fn link_name(&self, abs: impl AsRef<Path>) -> Option<String> {
        let target = std::fs::read_link(self.path(abs)).ok()?;
        target.file_name().map(|n| n.to_string_lossy().into_owned())
    }

    /// A host file's first line, trimmed; `None` when missing or empty.
    pub fn read_value(&self, abs: impl AsRef<Path>) -> Option<String> {
        let text = self.read(abs).ok()?;
        let value = text.lines().next().unwrap_or("").trim();
        (!value.is_empty()).then(|| value.to_string())
    }

    /// The names in a host directory, sorted; empty when it is missing.
    pub fn list(&self, abs: impl AsRef<Path>) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(abs))
            .map(|dir| {
                dir.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    pub fn exists(&self, abs: impl AsRef<Path>) -> bool {
        self.path(abs).exists()
    }

    /// Reads a host file as text, at most [`MAX_HOST_FILE`] bytes of it;
    /// invalid UTF-8 is replaced, never an error.
    pub fn read(&self, abs: impl AsRef<Path>) -> io::Result<String> {
        read_capped(&self.path(abs), MAX_HOST_FILE)
    }

    /// Reads a binary host file (a VPD page), at most [`MAX_HOST_FILE`]
    /// bytes of it; `None` when it cannot be read.
    pub fn read_bytes(&self, abs: impl AsRef<Path>) -> Option<Vec<u8>> {
        use std::io::Read;
        let mut bytes = Vec::new();
        std::fs::File::open(self.path(abs))
            .and_then(|f| f.take(MAX_HOST_FILE).read_to_end(&mut bytes))
            .ok()?;
        Some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_symlinks_inside_the_root() {
        let root = tempfile::tempdir().unwrap();
        let devices = root
            .path()
            .join("sys/devices/pci0000:00/0000:00:17.0/ata1/block/sda");
        std::fs::create_dir_all(&devices).unwrap();
        std::fs::create_dir_all(root.path().join("sys/class/block")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/pci0000:00/0000:00:17.0/ata1/block/sda",
            root.path().join("sys/class/block/sda"),
        )
        .unwrap();
        std::fs::write(devices.join("size"), "  2048 \n").unwrap();
        let host = Host::with_root(root.path());
        assert_eq!(
            host.resolve("/sys/class/block/sda"),
            Some(PathBuf::from(
                "/sys/devices/pci0000:00/0000:00:17.0/ata1/block/sda"
            ))
        );
        assert_eq!(
            host.link_name("/sys/class/block/sda").as_deref(),
            Some("sda")
        );
        assert_eq!(
            host.read_value("/sys/class/block/sda/size").as_deref(),
            Some("2048")
        );
        assert_eq!(host.list("/sys/class/block"), vec!["sda"]);
        assert_eq!(host.resolve("/sys/class/block/nope"), None);
        assert!(host.list("/nope").is_empty());
    }

    #[test]
    fn reads_are_capped() {
        let text = read_capped(Path::new("/dev/zero"), 1000).unwrap();
        assert_eq!(text.len(), 1000);
    }

    #[test]
    fn maps_absolute_paths_below_the_root() {
        let host = Host::with_root("/tmp/fx");
        assert_eq!(
            host.path(PROC_CPUINFO),
            PathBuf::from("/tmp/fx/proc/cpuinfo")
        );
        assert!(!host.is_real());
        assert_eq!(
            Host::real().path(PROC_CPUINFO),
            PathBuf::from("/proc/cpuinfo")
        );
    }
}
