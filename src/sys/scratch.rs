//! The probe's private scratch directory inside PATH.
//!
//! Created with `mkdirat(2)` (which fails rather than follow or reuse an
//! existing name) under an unpredictable name, mode 0700, then opened with
//! `O_NOFOLLOW | O_DIRECTORY` and checked to be ours. Files are made only
//! through that directory's descriptor with `O_NOFOLLOW`, so a symlink
//! planted by another user cannot redirect a write. Everything created is
//! tracked and removed by [`ScratchDir::remove`] (or [`ScratchDir::finish`]),
//! or by `Drop` on any other path out.
//!
//! The directory itself is removed by name, so first it is checked to still
//! be ours (same device and inode as the descriptor): a directory that
//! someone moved away, or put in its place, is never removed by mistake.
//! What could not be removed comes back from [`ScratchDir::finish`] beside
//! the test's result (and a directory found moved at creation as
//! [`ProbeError::LeftBehind`]); the run keeps it in its report, so an
//! interrupted run does not claim a clean exit.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, open, openat};
use nix::sys::stat::{Mode, SFlag, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, geteuid, unlinkat};
use rand::RngExt;

use crate::error::{IoContext, ProbeError};

const NAME_PREFIX: &str = "pveprobe.";

/// An unpredictable name for a private directory: `pveprobe.` and 16 hex digits.
pub fn random_name() -> String {
    format!("{NAME_PREFIX}{:016x}", rand::rng().random::<u64>())
}

/// Whether `name` is one [`random_name`] makes.
pub fn is_random_name(name: &str) -> bool {
    name.strip_prefix(NAME_PREFIX).is_some_and(|hex| {
        hex.len() == 16
            && hex
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    })
}

/// Removes what helpers killed by SIGKILL left in `parent` (`/run`, where
/// net-migrate and net-sink keep their sockets; a SIGKILL leaves no chance
/// to clean up): each directory of [`random_name`]'s, ours, untouched for
/// `older_than` (longer than any helper lives), holding only UNIX sockets;
/// one holding anything else is left untouched. The names removed.
pub fn sweep_stale(parent: &Path, older_than: std::time::Duration) -> Vec<String> {
    let Ok(mut parent_dir) = nix::dir::Dir::open(
        parent,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    let now = std::time::SystemTime::now();
    let mut removed = Vec::new();
    for name in entry_names(&mut parent_dir) {
        let Some(name) = name.to_str().ok().filter(|n| is_random_name(n)) else {
            continue;
        };
        let Ok(st) = fstatat(&parent_dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) else {
            continue;
        };
        let age = now.duration_since(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(st.st_mtime.max(0) as u64),
        );
        if SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT != SFlag::S_IFDIR
            || st.st_uid != geteuid().as_raw()
            || age.map_or(true, |a| a < older_than)
        {
            continue;
        }
        let Ok(mut dir) = nix::dir::Dir::openat(
            &parent_dir,
            name,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let inside = entry_names(&mut dir);
        let socket = |f: &std::ffi::CString| {
            fstatat(&dir, f.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW).is_ok_and(|st| {
                SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFSOCK
            })
        };
        // Anything but a socket inside: not a helper's, left untouched.
        if !inside.iter().all(socket) {
            continue;
        }
        for f in &inside {
            let _ = unlinkat(&dir, f.as_c_str(), UnlinkatFlags::NoRemoveDir);
        }
        if unlinkat(&parent_dir, name, UnlinkatFlags::RemoveDir).is_ok() {
            removed.push(name.to_string());
        }
    }
    removed
}

/// Removes `name` in `parent` and everything under it: each entry
/// unlinked, a directory emptied the same way first; a symlink is removed,
/// never followed.
fn remove_tree<Fd: AsFd>(parent: Fd, name: &str) -> nix::Result<()> {
    let mut dir = nix::dir::Dir::openat(
        parent.as_fd(),
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    for entry in entry_names(&mut dir) {
        match unlinkat(&dir, entry.as_c_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(Errno::EISDIR) => match entry.to_str() {
                Ok(sub) => remove_tree(&dir, sub)?,
                Err(_) => return Err(Errno::EINVAL),
            },
            Err(e) => return Err(e),
        }
    }
    unlinkat(parent, name, UnlinkatFlags::RemoveDir)
}

/// The names in `dir`, but `.` and `..`.
fn entry_names(dir: &mut nix::dir::Dir) -> Vec<std::ffi::CString> {
    dir.iter()
        .flatten()
        .map(|e| e.file_name().to_owned())
        .filter(|n| ![&b"."[..], b".."].contains(&n.to_bytes()))
        .collect()
}

#[derive(Debug)]
pub struct ScratchDir {
    parent: OwnedFd,
    parent_path: PathBuf,
    name: String,
    dir: OwnedFd,
    files: BTreeSet<String>,
    /// Directories made inside, removed whole (`datastore`'s chunk store).
    dirs: BTreeSet<String>,
    removed: bool,
}

impl ScratchDir {
    /// Creates a fresh private directory inside `parent`.
    pub fn create(parent_path: &Path) -> Result<Self, ProbeError> {
        let parent = open(
            parent_path,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .context(|| format!("cannot open {}", parent_path.display()))?;
        let name = loop {
            let name = random_name();
            match mkdirat(&parent, name.as_str(), Mode::S_IRWXU) {
                Ok(()) => break name,
                Err(Errno::EEXIST) => continue,
                Err(e) => {
                    return Err(ProbeError::io(
                        format!("cannot create a directory in {}", parent_path.display()),
                        e.into(),
                    ));
                }
            }
        };
        Self::opened(parent, parent_path, name)
    }

    /// Creates the private directory `name` (one of [`random_name`]'s,
    /// chosen by the probe on another node) inside `parent`; refused if
    /// anything has that name already.
    pub fn create_named(parent_path: &Path, name: &str) -> Result<Self, ProbeError> {
        if !is_random_name(name) {
            return Err(ProbeError::Unavailable(format!(
                "{name:?} is no name of pveprobe's private directories"
            )));
        }
        let parent = open(
            parent_path,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .context(|| format!("cannot open {}", parent_path.display()))?;
        mkdirat(&parent, name, Mode::S_IRWXU).map_err(|e| {
            ProbeError::io(
                format!("cannot create {}/{name}", parent_path.display()),
                e.into(),
            )
        })?;
        Self::opened(parent, parent_path, name.to_string())
    }

    /// The directory `name` just made in `parent`, opened and checked ours.
    fn opened(parent: OwnedFd, parent_path: &Path, name: String) -> Result<Self, ProbeError> {
        let opened = openat(
            &parent,
            name.as_str(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        );
        let dir = match opened {
            Ok(dir) => dir,
            Err(e) => {
                let _ = unlinkat(&parent, name.as_str(), UnlinkatFlags::RemoveDir);
                return Err(ProbeError::io(
                    format!("cannot open {}/{name}", parent_path.display()),
                    e.into(),
                ));
            }
        };
        let mut scratch = Self {
            parent,
            parent_path: parent_path.to_path_buf(),
            name,
            dir,
            files: BTreeSet::new(),
            dirs: BTreeSet::new(),
            removed: false,
        };
        let st = fstat(&scratch.dir).context(|| format!("stat {}", scratch.path().display()))?;
        let is_dir = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
        if !is_dir || st.st_uid != geteuid().as_raw() || st.st_mode & 0o077 != 0 {
            // What is there now is someone else's: leave it alone. Ours was
            // moved away empty before it could be opened.
            scratch.removed = true;
            let what = format!(
                "{} was replaced by someone else while it was being created; not using it, \
                 not removing what is there now (the empty directory pveprobe made was moved away)",
                scratch.path().display()
            );
            return Err(ProbeError::LeftBehind(what));
        }
        Ok(scratch)
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> PathBuf {
        self.parent_path.join(&self.name)
    }

    /// Counts `name`, which something else makes in the directory (a
    /// socket ssh binds), among the files removed with it.
    pub fn adopt(&mut self, name: &str) {
        self.files.insert(name.to_string());
    }

    /// Makes the directory `name` inside, mode 0700, and opens it
    /// (`O_NOFOLLOW`): what is made under it is removed with it, whole,
    /// never following a symlink.
    pub fn create_dir(&mut self, name: &str) -> Result<OwnedFd, ProbeError> {
        mkdirat(&self.dir, name, Mode::S_IRWXU)
            .context(|| format!("cannot create {}/{name}", self.path().display()))?;
        self.dirs.insert(name.to_string());
        openat(
            &self.dir,
            name,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .context(|| format!("cannot open {}/{name}", self.path().display()))
    }

    /// Creates (or truncates) `name` in the directory for writing, mode 0600.
    pub fn create_file(&mut self, name: &str) -> Result<File, ProbeError> {
        if !self.files.contains(name) {
            self.files.insert(name.to_string());
        }
        let fd = openat(
            &self.dir,
            name,
            OFlag::O_WRONLY
                | OFlag::O_CREAT
                | OFlag::O_TRUNC
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC,
            Mode::S_IRUSR | Mode::S_IWUSR,
        )
        .context(|| format!("cannot create {}/{name}", self.path().display()))?;
        Ok(File::from(fd))
    }

    /// Opens `name` (made earlier by [`ScratchDir::create_file`]) for
    /// writing in place, with `O_DSYNC` when `dsync` (each write returns
    /// once durable).
    pub fn open_write(&mut self, name: &str, dsync: bool) -> Result<File, ProbeError> {
        let mut flags = OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        if dsync {
            flags |= OFlag::O_DSYNC;
        }
        openat(&self.dir, name, flags, Mode::empty())
            .map(File::from)
            .context(|| format!("cannot open {}/{name}", self.path().display()))
    }

    /// Opens `name` (made earlier by [`ScratchDir::create_file`]) for reading
    /// and writing with O_DIRECT, or without it where the filesystem refuses
    /// it (tmpfs); says which.
    pub fn open_rw(&mut self, name: &str) -> Result<(File, bool), ProbeError> {
        let flags = OFlag::O_RDWR | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        match openat(&self.dir, name, flags | OFlag::O_DIRECT, Mode::empty()) {
            Ok(fd) => {
                // Drop the file's cached pages (as fio's invalidate=1): direct
                // I/O over cached pages makes the kernel flush and invalidate
                // them on every write.
                let _ = nix::fcntl::posix_fadvise(
                    &fd,
                    0,
                    0,
                    nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
                );
                Ok((File::from(fd), true))
            }
            Err(Errno::EINVAL) => openat(&self.dir, name, flags, Mode::empty())
                .map(|fd| (File::from(fd), false))
                .context(|| format!("cannot open {}/{name}", self.path().display())),
            Err(e) => Err(ProbeError::io(
                format!("cannot open {}/{name}", self.path().display()),
                e.into(),
            )),
        }
    }

    /// Removes every file made and the directory itself.
    pub fn remove(mut self) -> Result<(), ProbeError> {
        self.remove_all()
    }

    /// Removes everything, then returns the test's `result` and what
    /// could not be removed. A failure to remove is never lost behind the
    /// test's own error; only an interrupt goes first (the caller keeps
    /// what was left from the second value).
    pub fn finish<T>(
        mut self,
        result: Result<T, ProbeError>,
    ) -> (Result<T, ProbeError>, Option<String>) {
        let removed = self.remove_all();
        let left = removed
            .as_ref()
            .err()
            .map(|e| format!("{} ({e})", self.path().display()));
        let result = match (result, removed) {
            (Ok(value), Ok(())) => Ok(value),
            (Ok(_), Err(e)) | (Err(e), Ok(())) => Err(e),
            (Err(e @ ProbeError::Interrupted(_)), Err(_)) => Err(e),
            (Err(e), Err(r)) => Err(ProbeError::LeftBehind(format!("{e}; then {r}"))),
        };
        (result, left)
    }

    /// Where the directory is now, as the kernel names it (it may have
    /// been moved), for messages.
    fn current_path(&self) -> String {
        std::fs::read_link(format!("/proc/self/fd/{}", self.dir.as_raw_fd()))
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "an unknown place".into())
    }

    /// Removes the directory by name if that name is still our directory.
    fn remove_dir(&self) -> Result<(), ProbeError> {
        let ours = fstat(&self.dir).context(|| format!("stat {}", self.path().display()))?;
        if ours.st_nlink == 0 {
            // Someone removed it already (PATH deleted during the run).
            return Ok(());
        }
        match fstatat(
            &self.parent,
            self.name.as_str(),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        ) {
            Ok(there) if (there.st_dev, there.st_ino) == (ours.st_dev, ours.st_ino) => {}
            Ok(_) | Err(Errno::ENOENT) => {
                return Err(ProbeError::Unavailable(format!(
                    "{} was moved by someone else during the run; not removing what is there now; \
                     its files were removed, the empty directory is now {}",
                    self.path().display(),
                    self.current_path()
                )));
            }
            Err(e) => {
                return Err(ProbeError::io(
                    format!("cannot remove {}", self.path().display()),
                    e.into(),
                ));
            }
        }
        match unlinkat(
            self.parent.as_fd(),
            self.name.as_str(),
            UnlinkatFlags::RemoveDir,
        ) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(ProbeError::io(
                format!("cannot remove {}", self.path().display()),
                e.into(),
            )),
        }
    }

    fn remove_all(&mut self) -> Result<(), ProbeError> {
        if self.removed {
            return Ok(());
        }
        let mut first_error = None;
        for name in &self.files {
            match unlinkat(&self.dir, name.as_str(), UnlinkatFlags::NoRemoveDir) {
                Ok(()) | Err(Errno::ENOENT) => {}
                Err(e) => {
                    first_error.get_or_insert_with(|| {
                        ProbeError::io(
                            format!("cannot remove {}/{name}", self.path().display()),
                            e.into(),
                        )
                    });
                }
            }
        }
        for name in &self.dirs {
            match remove_tree(&self.dir, name.as_str()) {
                Ok(()) | Err(Errno::ENOENT) => {}
                Err(e) => {
                    first_error.get_or_insert_with(|| {
                        ProbeError::io(
                            format!("cannot remove {}/{name}", self.path().display()),
                            e.into(),
                        )
                    });
                }
            }
        }
        if let Err(e) = self.remove_dir() {
            first_error.get_or_insert(e);
        }
        self.removed = true;
        match first_error {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

/// What a scratch directory dropped unremoved could not remove (its
/// `Drop`, where no caller is left to tell): taken and said by `main` as
/// the command ends ([`left_behind`]); a layer never prints.
static LEFT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// What the scratch directories dropped so far could not remove.
pub fn left_behind() -> Vec<String> {
    std::mem::take(&mut *LEFT.lock().unwrap_or_else(|e| e.into_inner()))
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Err(e) = self.remove_all() {
            LEFT.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(e.to_string());
        }
    }
}

/// `bytes` of `file` preallocated (fallocate(2), mode 0), or where the
/// filesystem does not support that, its size set (a sparse file).
pub fn preallocate(file: &std::fs::File, bytes: u64) -> std::io::Result<()> {
    use nix::fcntl::{FallocateFlags, fallocate};
    match fallocate(file, FallocateFlags::empty(), 0, bytes as libc::off_t) {
        Ok(()) => Ok(()),
        Err(nix::errno::Errno::EOPNOTSUPP) => file.set_len(bytes),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_directories_of_ours_holding_sockets_are_swept() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        let made = |name: &str, socket: bool, file: bool, hours_old: u64| {
            let d = p.join(name);
            std::fs::create_dir(&d).unwrap();
            if socket {
                drop(std::os::unix::net::UnixListener::bind(d.join("s")).unwrap());
            }
            if file {
                std::fs::write(d.join("note"), "x").unwrap();
            }
            let then =
                std::time::SystemTime::now() - std::time::Duration::from_secs(hours_old * 3600);
            std::fs::File::open(&d).unwrap().set_modified(then).unwrap();
            name.to_string()
        };
        let old = made(&random_name(), true, false, 3);
        let empty = made(&random_name(), false, false, 3);
        let young = made(&random_name(), true, false, 0);
        let with_file = made(&random_name(), true, true, 3);
        let other = made("pveprobe.not-ours", true, false, 3);
        let link = random_name();
        std::os::unix::fs::symlink(p.join(&with_file), p.join(&link)).unwrap();
        let mut swept = sweep_stale(p, std::time::Duration::from_secs(2 * 3600));
        swept.sort();
        let mut want = vec![old.clone(), empty.clone()];
        want.sort();
        assert_eq!(swept, want);
        for kept in [&young, &with_file, &other, &link] {
            assert!(p.join(kept).exists(), "{kept} was swept");
        }
        assert!(p.join(&young).join("s").exists());
        assert!(p.join(&with_file).join("note").exists());
        assert!(
            p.join(&with_file).join("s").exists(),
            "its socket was removed"
        );
        assert!(sweep_stale(&p.join("nonexistent"), std::time::Duration::ZERO).is_empty());
    }
    use std::io::Write;

    #[test]
    fn creates_private_directory_and_removes_everything() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        let path = scratch.path();
        assert!(
            path.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(NAME_PREFIX)
        );
        let mode = std::fs::metadata(&path).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o700
        );
        scratch.create_file("a").unwrap().write_all(b"x").unwrap();
        scratch.create_file("a").unwrap();
        scratch.create_file("b").unwrap();
        assert_eq!(std::fs::read_dir(&path).unwrap().count(), 2);
        scratch.remove().unwrap();
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn drop_removes_too() {
        let parent = tempfile::tempdir().unwrap();
        {
            let mut scratch = ScratchDir::create(parent.path()).unwrap();
            scratch.create_file("x").unwrap();
        }
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn never_follows_a_planted_symlink() {
        let parent = tempfile::tempdir().unwrap();
        let target = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        std::os::unix::fs::symlink(
            target.path().join("victim"),
            scratch.path().join("tf_0.dat"),
        )
        .unwrap();
        let err = scratch.create_file("tf_0.dat").unwrap_err();
        assert!(err.to_string().contains("tf_0.dat"), "{err}");
        assert!(!target.path().join("victim").exists());
        scratch.remove().unwrap();
    }

    #[test]
    fn a_directory_moved_away_is_not_removed_by_name() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        scratch.create_file("tf_0.dat").unwrap();
        // Someone moves ours away and puts their own directory at its name.
        let moved = parent.path().join("moved");
        std::fs::rename(scratch.path(), &moved).unwrap();
        std::fs::create_dir(scratch.path()).unwrap();
        std::fs::write(scratch.path().join("theirs"), "x").unwrap();
        let path = scratch.path();
        let (result, left) = scratch.finish(Ok(()));
        let err = result.unwrap_err().to_string();
        assert_eq!(left, Some(format!("{} ({err})", path.display())));
        assert!(err.contains("was moved by someone else"), "{err}");
        assert!(err.contains(&moved.display().to_string()), "{err}");
        // Theirs is untouched; ours was emptied.
        let path = parent.path().read_dir().unwrap().count();
        assert_eq!(path, 2);
        assert_eq!(std::fs::read_dir(&moved).unwrap().count(), 0);
    }

    #[test]
    fn a_directory_removed_by_someone_else_is_no_error() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        scratch.create_file("tf_0.dat").unwrap();
        std::fs::remove_dir_all(scratch.path()).unwrap();
        let (result, left) = scratch.finish(Ok(7));
        assert_eq!(result.unwrap(), 7);
        assert_eq!(left, None);
    }

    #[test]
    fn finish_keeps_both_errors() {
        let parent = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(parent.path()).unwrap();
        scratch.create_file("a").unwrap();
        // A directory the removal cannot unlink as a file.
        std::fs::remove_file(scratch.path().join("a")).unwrap();
        std::fs::create_dir(scratch.path().join("a")).unwrap();
        let err = scratch
            .finish::<()>(Err(ProbeError::Unavailable("the test failed".into())))
            .0
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("the test failed; then cannot remove "),
            "{err}"
        );
        std::fs::remove_dir_all(
            parent.path().join(
                std::fs::read_dir(parent.path())
                    .unwrap()
                    .next()
                    .unwrap()
                    .unwrap()
                    .file_name(),
            ),
        )
        .unwrap();
    }
}
