//! Host files kept open and read again from their start: a `/proc` or
//! `/sys` file the kernel renders anew on each read (a process's `stat`, a
//! thread's `schedstat`, a cgroup's `cpu.stat`), read every interval
//! without its path's lookup, its open and its close. A recorder at 10 s
//! reads half a dozen of them for each guest each interval.
//!
//! A kept file also stays the file it was: a process's, once the process
//! is gone, fails to read (`ESRCH`) rather than read the process that has
//! its PID now. How many are held is bounded (half the process's open
//! file limit, counted across the process); past it a file is opened for
//! each read, as [`Host::read`] does.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::host::{Host, MAX_HOST_FILE, read_capped};

/// Files held open now, by every [`KeptFile`].
static HELD: AtomicUsize = AtomicUsize::new(0);

/// How many may be held: half the soft limit on open files.
fn budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
            .map(|(soft, _)| usize::try_from(soft / 2).unwrap_or(usize::MAX))
            .unwrap_or(256)
    })
}

/// One host file, opened at its first read and kept open while it reads.
#[derive(Debug)]
pub struct KeptFile {
    path: PathBuf,
    file: Option<File>,
}

impl KeptFile {
    /// Host file `abs`; nothing is opened yet.
    pub fn new(host: &Host, abs: impl AsRef<Path>) -> Self {
        KeptFile {
            path: host.path(abs),
            file: None,
        }
    }

    /// The file's text now (invalid UTF-8 replaced, at most
    /// [`MAX_HOST_FILE`] bytes). A failed read lets the file go: the next
    /// read opens its path again.
    pub fn read(&mut self) -> io::Result<String> {
        if self.file.is_none() {
            if HELD.fetch_add(1, Ordering::Relaxed) >= budget() {
                HELD.fetch_sub(1, Ordering::Relaxed);
                return read_capped(&self.path, MAX_HOST_FILE);
            }
            match File::open(&self.path) {
                Ok(f) => self.file = Some(f),
                Err(e) => {
                    HELD.fetch_sub(1, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        let read = from_start(self.file.as_ref().expect("opened above"));
        if read.is_err() {
            self.let_go();
        }
        read
    }

    fn let_go(&mut self) {
        if self.file.take().is_some() {
            HELD.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for KeptFile {
    fn drop(&mut self) {
        self.let_go();
    }
}

/// A file whole from offset 0. A read that fills less than it asked is
/// the end: so the kernel's seq_file (behind /proc and cgroup files)
/// and a regular file answer, so a small file takes one read.
fn from_start(f: &File) -> io::Result<String> {
    let mut bytes = vec![0; 8192];
    let mut len = 0;
    loop {
        match f.read_at(&mut bytes[len..], len as u64) {
            Ok(n) => {
                len += n;
                if len < bytes.len() || len as u64 >= MAX_HOST_FILE {
                    break;
                }
                bytes.resize(len * 2, 0);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(len.min(MAX_HOST_FILE as usize));
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_proc_file_reads_anew_each_time() {
        // This thread's schedstat: its run time grows between reads of
        // the one open file.
        let host = Host::real();
        let tid = nix::unistd::gettid();
        let mut k = KeptFile::new(&host, format!("/proc/self/task/{tid}/schedstat"));
        let run = |t: String| t.split_whitespace().next().unwrap().parse::<u64>().unwrap();
        let a = run(k.read().unwrap());
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(20) {
            std::hint::black_box(0);
        }
        let b = run(k.read().unwrap());
        assert!(b > a, "{a} then {b}");
        assert!(k.file.is_some(), "held open");
    }

    #[test]
    fn a_large_file_is_read_whole_and_a_missing_one_fails() {
        let dir = tempfile::tempdir().unwrap();
        let text = "x".repeat(20_000) + "end\n";
        std::fs::write(dir.path().join("big"), &text).unwrap();
        let host = Host::with_root(dir.path());
        let mut k = KeptFile::new(&host, "/big");
        assert_eq!(k.read().unwrap(), text);
        std::fs::write(dir.path().join("big"), "short\n").unwrap();
        // Rewritten in place (truncated): the open file reads the new text.
        assert_eq!(k.read().unwrap(), "short\n");
        let mut gone = KeptFile::new(&host, "/none");
        assert!(gone.read().is_err());
        assert!(gone.file.is_none());
    }

    #[test]
    fn a_processs_file_fails_once_the_process_is_gone() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let mut k = KeptFile::new(&Host::real(), format!("/proc/{}/stat", child.id()));
        assert!(k.read().unwrap().contains("(sleep)"));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(k.read().is_err(), "a gone process's stat read");
        assert!(k.file.is_none(), "let go");
    }
}
