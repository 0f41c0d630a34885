//! The probe's private scratch directory inside PATH.
//!
//! Created with `mkdirat(2)` (which fails rather than follow or reuse an
//! existing name) under an unpredictable name, mode 0700, then opened with
//! `O_NOFOLLOW | O_DIRECTORY` and checked to be ours. Files are made only
//! through that directory's descriptor with `O_NOFOLLOW`, so a symlink
//! planted by another user cannot redirect a write. Everything created is
//! tracked and removed by [`ScratchDir::remove`], or by `Drop` on any
//! other path out.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::{Mode, SFlag, fstat, mkdirat};
use nix::unistd::{UnlinkatFlags, geteuid, unlinkat};
use rand::RngExt;

use crate::error::{IoContext, ProbeError};

const NAME_PREFIX: &str = "pveprobe.";

#[derive(Debug)]
pub struct ScratchDir {
    parent: OwnedFd,
    parent_path: PathBuf,
    name: String,
    dir: OwnedFd,
    files: BTreeSet<String>,
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
        let mut rng = rand::rng();
        let name = loop {
            let name = format!("{NAME_PREFIX}{:016x}", rng.random::<u64>());
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
        let scratch = Self {
            parent,
            parent_path: parent_path.to_path_buf(),
            name,
            dir,
            files: BTreeSet::new(),
            removed: false,
        };
        let st = fstat(&scratch.dir).context(|| format!("stat {}", scratch.path().display()))?;
        let is_dir = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
        if !is_dir || st.st_uid != geteuid().as_raw() || st.st_mode & 0o077 != 0 {
            return Err(ProbeError::Unavailable(format!(
                "{} was replaced while it was being created; not using it",
                scratch.path().display()
            )));
        }
        Ok(scratch)
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> PathBuf {
        self.parent_path.join(&self.name)
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
        match unlinkat(
            self.parent.as_fd(),
            self.name.as_str(),
            UnlinkatFlags::RemoveDir,
        ) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => {
                first_error.get_or_insert_with(|| {
                    ProbeError::io(format!("cannot remove {}", self.path().display()), e.into())
                });
            }
        }
        self.removed = true;
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Err(e) = self.remove_all() {
            eprintln!("pveprobe: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
