//! A Proxmox VE for the tests on a machine without one: an /etc/pve with
//! storage.cfg and .vmlist, and the fake `pvesm` of tests/fake/pvesm on
//! PATH, whose volumes are real loop devices over sparse files. Dropping
//! the rig unmounts and detaches whatever the fake left behind.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{pveprobe, workdir};

/// The environment variable naming the fake's state directory.
pub const STATE_ENV: &str = "PVEPROBE_FAKE_PVESM_DIR";

/// A fake PVE: `<tmp>/etc-pve` (storage.cfg, .vmlist), `<tmp>/bin/pvesm`
/// (a symlink to tests/fake/pvesm) and `<tmp>/state` (the fake's state).
pub struct FakePve {
    _dir: tempfile::TempDir,
    pve_dir: PathBuf,
    bin: PathBuf,
    state: PathBuf,
}

impl FakePve {
    /// The fake script itself, tests/fake/pvesm.
    pub fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/pvesm")
    }

    /// Writes etc-pve/storage.cfg and an empty etc-pve/.vmlist. No
    /// storage is in `pvesm status` until [`FakePve::set_status`].
    pub fn new(storage_cfg: &str) -> Self {
        let dir = workdir();
        // The state directory's real path: the loop devices' backing files
        // are named by it in /sys.
        let root = dir.path().canonicalize().unwrap();
        let pve_dir = root.join("etc-pve");
        let bin = root.join("bin");
        let state = root.join("state");
        for d in [&pve_dir, &bin, &state] {
            std::fs::create_dir(d).unwrap();
        }
        let script = Self::script();
        assert!(
            std::fs::metadata(&script)
                .unwrap_or_else(|e| panic!("{}: {e}", script.display()))
                .permissions()
                .mode()
                & 0o111
                != 0,
            "{} is not executable",
            script.display()
        );
        std::os::unix::fs::symlink(&script, bin.join("pvesm")).unwrap();
        std::fs::write(pve_dir.join("storage.cfg"), storage_cfg).unwrap();
        let fake = Self {
            _dir: dir,
            pve_dir,
            bin,
            state,
        };
        fake.set_vmlist(r#"{"version":1,"ids":{}}"#);
        fake
    }

    /// Replaces etc-pve/.vmlist.
    pub fn set_vmlist(&self, json: &str) {
        std::fs::write(self.pve_dir.join(".vmlist"), json).unwrap();
    }

    /// The storages `pvesm status` shows (and alloc, path and free know):
    /// (id, type, status, total KiB, used KiB, available KiB); status is
    /// `active`, `inactive` or `disabled`.
    pub fn set_status(&self, rows: &[(&str, &str, &str, u64, u64, u64)]) {
        let text: String = rows
            .iter()
            .map(|(id, kind, status, total, used, avail)| {
                format!("{id} {kind} {status} {total} {used} {avail}\n")
            })
            .collect();
        std::fs::write(self.state.join("status"), text).unwrap();
    }

    /// The fake /etc/pve (for `--pve-config`).
    pub fn pve_dir(&self) -> &Path {
        &self.pve_dir
    }

    /// The fake's state directory (PVEPROBE_FAKE_PVESM_DIR).
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// Where mount-on-alloc mounts volume `name`.
    pub fn mount_point(&self, name: &str) -> PathBuf {
        self.state.join("mnt").join(name)
    }

    /// The probe with the fake `pvesm` first on PATH; no arguments yet
    /// (not even `--pve-config`).
    pub fn command(&self) -> Command {
        let mut cmd = pveprobe();
        self.env(&mut cmd);
        cmd
    }

    /// Puts the fake `pvesm` first on `cmd`'s PATH and names its state
    /// directory.
    pub fn env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/sbin:/usr/bin:/sbin:/bin".into());
        cmd.env("PATH", format!("{}:{path}", self.bin.display()))
            .env(STATE_ENV, &self.state)
    }

    /// Every call of the fake so far, its arguments split on spaces.
    pub fn calls(&self) -> Vec<Vec<String>> {
        let text = match std::fs::read_to_string(self.state.join("calls.log")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => panic!("calls.log: {e}"),
        };
        text.lines()
            .map(|line| {
                if line.is_empty() {
                    Vec::new()
                } else {
                    line.split(' ').map(str::to_string).collect()
                }
            })
            .collect()
    }

    /// The volumes allocated now, "STORAGE:NAME", sorted.
    pub fn volumes(&self) -> Vec<String> {
        let mut found = Vec::new();
        let Ok(storages) = std::fs::read_dir(self.state.join("volumes")) else {
            return found;
        };
        for storage in storages {
            let storage = storage.unwrap();
            for volume in std::fs::read_dir(storage.path()).unwrap() {
                found.push(format!(
                    "{}:{}",
                    storage.file_name().to_string_lossy(),
                    volume.unwrap().file_name().to_string_lossy()
                ));
            }
        }
        found.sort();
        found
    }

    /// The loop devices ("/dev/loopN") whose backing file is in the state
    /// directory, sorted.
    pub fn loop_devices(&self) -> Vec<String> {
        loop_devices_under(&self.state)
    }

    /// Makes `pvesm alloc` or `pvesm free` fail with `message` (on
    /// stderr, exit 255) until [`FakePve::clear_fail`].
    pub fn fail(&self, what: &str, message: &str) {
        std::fs::write(self.state.join(fail_file(what)), message).unwrap();
    }

    pub fn clear_fail(&self, what: &str) {
        remove_if_there(&self.state.join(fail_file(what)));
    }

    /// From now on `pvesm alloc` puts ext4 on the new device and mounts it
    /// on [`FakePve::mount_point`]: a device in use.
    pub fn mount_on_alloc(&self) {
        std::fs::write(self.state.join("mount-on-alloc"), "").unwrap();
    }

    /// From now on `pvesm alloc` takes `secs` seconds more, after making
    /// the volume (a slow storage: a signal can reach the probe meanwhile).
    pub fn delay_alloc(&self, secs: f64) {
        std::fs::write(self.state.join("alloc-delay"), secs.to_string()).unwrap();
    }

    /// From now on `pvesm path` prints `path`, whatever the volume.
    pub fn override_path(&self, path: &str) {
        std::fs::write(self.state.join("path-override"), path).unwrap();
    }
}

fn fail_file(what: &str) -> String {
    assert!(
        what == "alloc" || what == "free",
        "the fake pvesm fails only alloc or free, not {what:?}"
    );
    format!("fail-{what}")
}

fn remove_if_there(path: &Path) {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            panic!("{}: {e}", path.display())
        }
        _ => {}
    }
}

/// The loop devices ("/dev/loopN") whose backing file is under `dir` (a
/// real path), from /sys/block/loop*/loop/backing_file, sorted.
pub fn loop_devices_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return found;
    };
    for entry in entries {
        let dev = format!("/dev/{}", entry.unwrap().file_name().to_string_lossy());
        if backing_file(&dev).is_some_and(|back| back.starts_with(dir)) {
            found.push(dev);
        }
    }
    found.sort();
    found
}

/// The backing file of loop device `dev` ("/dev/loopN"), if it has one.
pub fn backing_file(dev: &str) -> Option<PathBuf> {
    let name = dev.strip_prefix("/dev/")?;
    if !name.starts_with("loop") {
        return None;
    }
    let back = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let back = back.trim_end_matches('\n');
    Some(PathBuf::from(
        back.strip_suffix(" (deleted)").unwrap_or(back),
    ))
}

/// Mount points under `dir` (a real path), deepest first, from
/// /proc/self/mountinfo.
fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut found: Vec<PathBuf> = info
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape_mountinfo(field)))
        .filter(|p| p.starts_with(dir))
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    found
}

/// Undoes mountinfo's octal escapes (`\040` for a space, and so on).
fn unescape_mountinfo(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..=i + 3]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let octal = std::str::from_utf8(&bytes[i + 1..=i + 3]).unwrap();
            out.push(u8::from_str_radix(octal, 8).unwrap());
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Drop for FakePve {
    fn drop(&mut self) {
        for mount in mounts_under(&self.state) {
            if !Command::new("umount")
                .arg(&mount)
                .status()
                .is_ok_and(|s| s.success())
            {
                let _ = Command::new("umount").arg("-l").arg(&mount).status();
            }
        }
        // Only devices whose backing file is ours: checked again just
        // before each detach, so a device reused meanwhile is left alone.
        for dev in loop_devices_under(&self.state) {
            if backing_file(&dev).is_some_and(|back| back.starts_with(&self.state)) {
                let _ = Command::new("losetup").arg("-d").arg(&dev).status();
            }
        }
    }
}
