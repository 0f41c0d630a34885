//! A v1 cgroup a test makes (cpu, cpuset, memory), removed on every way
//! out; never one of the machine's own.

use std::path::{Path, PathBuf};

/// A v1 cgroup of `controller` the test makes, under the one this process
/// is in; what is still in it when it goes is moved back there, and it is
/// removed on every way out.
pub struct Cgroup {
    pub dir: PathBuf,
    pub parent: PathBuf,
}

impl Cgroup {
    pub fn new(controller: &str, name: &str) -> Cgroup {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let path = own
            .lines()
            .find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                controllers
                    .split(',')
                    .any(|c| c == controller)
                    .then(|| path.to_string())
            })
            .unwrap_or_else(|| panic!("no v1 {controller} controller here"));
        let parent = Path::new("/sys/fs/cgroup")
            .join(controller)
            .join(path.trim_start_matches('/'));
        let dir = parent.join(format!("pveprobe-it-{}-{name}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        Cgroup { dir, parent }
    }

    pub fn set(&self, file: &str, value: &str) {
        std::fs::write(self.dir.join(file), value)
            .unwrap_or_else(|e| panic!("{}/{file} = {value}: {e}", self.dir.display()));
    }

    /// Moves process `pid` (all its threads) in.
    pub fn take(&self, pid: u32) {
        self.set("cgroup.procs", &pid.to_string());
    }

    /// Moves process `pid` back out.
    pub fn give_back(&self, pid: u32) {
        std::fs::write(self.parent.join("cgroup.procs"), pid.to_string()).unwrap();
    }

    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.join(file)).unwrap()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if let Ok(procs) = std::fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in procs.lines() {
                let _ = std::fs::write(self.parent.join("cgroup.procs"), pid);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}
