//! A ZFS dataset for the tests without ZFS: a `--sysroot` whose mountinfo
//! puts dataset testpool/data on a plain directory, the real /sys, and fake
//! `zpool` and `zfs` commands on PATH.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use super::{pveprobe, workdir};

/// A `zfs` script that gives the dataset's properties, `sync` as given.
pub fn zfs_properties(sync: &str) -> String {
    format!(
        "#!/bin/sh\ncase \"$*\" in *testpool/data*) ;; *) exit 9 ;; esac\nprintf 'sync\\t{sync}\\ncompression\\tlz4\\nrecordsize\\t128K\\nprimarycache\\tall\\n'\n"
    )
}

/// A --sysroot tree whose mountinfo puts ZFS dataset testpool/data on
/// `path`, with the real /sys, and fake zpool/zfs commands.
pub struct ZfsRig {
    _dir: tempfile::TempDir,
    pub sysroot: PathBuf,
    pub bin: PathBuf,
    pub path: PathBuf,
}

impl ZfsRig {
    /// The rig with `zfs` saying the dataset has sync=standard.
    pub fn new(zpool_script: &str) -> Self {
        Self::with_zfs(zpool_script, &zfs_properties("standard"))
    }

    /// The rig with `zpool` and `zfs` running the scripts given.
    pub fn with_zfs(zpool_script: &str, zfs_script: &str) -> Self {
        let dir = workdir();
        let path = dir.path().join("data");
        std::fs::create_dir(&path).unwrap();
        let sysroot = dir.path().join("root");
        std::fs::create_dir_all(sysroot.join("proc/self")).unwrap();
        std::os::unix::fs::symlink("/sys", sysroot.join("sys")).unwrap();
        std::fs::write(
            sysroot.join("proc/self/mountinfo"),
            format!(
                "22 1 0:30 / / rw,relatime shared:1 - zfs testpool/ROOT rw,xattr,noacl\n\
                 90 22 0:31 / {} rw,relatime shared:40 - zfs testpool/data rw,xattr,noacl\n",
                path.display()
            ),
        )
        .unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let write_tool = |tool: &str, script: &str| {
            let file = bin.join(tool);
            std::fs::write(&file, script).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        write_tool("zpool", zpool_script);
        write_tool("zfs", zfs_script);
        Self {
            _dir: dir,
            sysroot,
            bin,
            path,
        }
    }

    pub fn probe(&self, args: &[&str]) -> std::process::Output {
        pveprobe()
            .args(args)
            .arg("--sysroot")
            .arg(&self.sysroot)
            .arg(&self.path)
            .env(
                "PATH",
                format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", self.bin.display()),
            )
            .output()
            .unwrap()
    }
}
