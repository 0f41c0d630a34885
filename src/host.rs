//! The seam between the probe and the host's `/proc`, `/sys` and config files.
//!
//! Every file the probe reads to learn about the host goes through [`Host`],
//! so tests can point it at a captured fixture tree instead of `/`.

use std::io;
use std::path::{Path, PathBuf};

pub const PROC_CPUINFO: &str = "/proc/cpuinfo";
pub const PROC_MOUNTINFO: &str = "/proc/self/mountinfo";
pub const PROC_DROP_CACHES: &str = "/proc/sys/vm/drop_caches";
pub const ETC_RESOLV_CONF: &str = "/etc/resolv.conf";

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

    /// Reads a host file as text; invalid UTF-8 is replaced, never an error.
    pub fn read(&self, abs: impl AsRef<Path>) -> io::Result<String> {
        let bytes = std::fs::read(self.path(abs))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
