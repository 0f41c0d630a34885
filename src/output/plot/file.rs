//! Where a picture goes: a file created without following a symbolic
//! link, checked before anything runs and replaced only once the picture
//! is drawn.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::PlotError;
use crate::error::describe;

/// Why `--plot FILE` cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum SvgFileError {
    /// The last component is a symbolic link: as root in a shared
    /// directory (/tmp) following it would overwrite whatever it names.
    #[error("--plot {}: is a symbolic link; not following it (name the file itself)", path.display())]
    Symlink { path: PathBuf },
    /// A FIFO, a device, a socket: no place for a picture.
    #[error("--plot {}: not a regular file", path.display())]
    NotRegular { path: PathBuf },
    #[error("cannot write {}: {}", path.display(), describe(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why a picture was not saved: not drawn, or not written.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("--plot {}: {source}", path.display())]
    Draw { path: PathBuf, source: PlotError },
    #[error(transparent)]
    Write(#[from] SvgFileError),
}

/// A file opened for a picture: created if missing (mode 0644 less the
/// umask), its old content kept until [`SvgFile::write`], so a run that
/// fails or is interrupted leaves an earlier picture as it was.
#[derive(Debug)]
pub struct SvgFile {
    file: File,
    path: PathBuf,
}

impl SvgFile {
    /// Opens `path` for writing: `O_NOFOLLOW` refuses a symbolic link as
    /// its last component, and `O_NONBLOCK` keeps a FIFO without a reader
    /// from hanging the open (it is then refused as not a regular file).
    /// Callers open it before a run, so a FILE that cannot be written
    /// costs no measurement.
    pub fn create(path: &Path) -> Result<Self, SvgFileError> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|source| match source.raw_os_error() {
                Some(libc::ELOOP) => SvgFileError::Symlink { path: path.into() },
                Some(libc::ENXIO) => SvgFileError::NotRegular { path: path.into() },
                _ => SvgFileError::Io {
                    path: path.into(),
                    source,
                },
            })?;
        let meta = file.metadata().map_err(|source| SvgFileError::Io {
            path: path.into(),
            source,
        })?;
        if !meta.is_file() {
            return Err(SvgFileError::NotRegular { path: path.into() });
        }
        Ok(SvgFile {
            file,
            path: path.into(),
        })
    }

    /// The path it was opened as, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes a picture as it was drawn and says where it went; a
    /// picture that could not be drawn leaves the file as it was.
    pub fn save(self, drawn: Result<String, PlotError>) -> Result<PathBuf, SaveError> {
        let path = self.path.clone();
        match drawn {
            Ok(svg) => self.write(&svg).map(|()| path).map_err(SaveError::from),
            Err(source) => Err(SaveError::Draw { path, source }),
        }
    }

    /// Replaces the file's content with `svg`.
    pub fn write(mut self, svg: &str) -> Result<(), SvgFileError> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.write_all(svg.as_bytes()))
            .and_then(|()| self.file.flush())
            .map_err(|source| SvgFileError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_created_or_replaced_only_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.svg");
        let file = SvgFile::create(&path).unwrap();
        assert_eq!(file.path(), path);
        assert_eq!(std::fs::read(&path).unwrap(), b"", "created, empty");
        file.write("<svg>long</svg>").unwrap();
        let file = SvgFile::create(&path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "<svg>long</svg>",
            "kept until written"
        );
        file.write("<svg/>").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<svg/>");
        // Saved as drawn, or kept when nothing could be drawn.
        let file = SvgFile::create(&path).unwrap();
        let err = file.save(Err(PlotError::Empty("no figure"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("--plot {}: nothing to plot: no figure", path.display())
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<svg/>");
        let file = SvgFile::create(&path).unwrap();
        assert_eq!(file.save(Ok("<svg>2</svg>".into())).unwrap(), path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<svg>2</svg>");
    }

    #[test]
    fn symlinks_fifos_directories_and_missing_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("plot.svg");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = SvgFile::create(&link).unwrap_err();
        assert!(matches!(err, SvgFileError::Symlink { .. }), "{err}");
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        // A dangling link is refused too, and nothing is created behind it.
        let dangling = dir.path().join("dangling.svg");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(matches!(
            SvgFile::create(&dangling),
            Err(SvgFileError::Symlink { .. })
        ));
        assert!(!dir.path().join("nowhere").exists());

        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(matches!(
            SvgFile::create(&fifo),
            Err(SvgFileError::NotRegular { .. })
        ));

        let err = SvgFile::create(dir.path()).unwrap_err();
        assert!(err.to_string().ends_with("Is a directory"), "{err}");
        let missing = dir.path().join("no/such/plot.svg");
        let err = SvgFile::create(&missing).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot write {}: No such file or directory",
                missing.display()
            )
        );
    }
}
