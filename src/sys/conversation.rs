//! A conversation with a child program in lines: what we send on its
//! stdin, what it says on its stdout, line by line as it says it, into a
//! channel several conversations share; its stderr kept up to a cap. The
//! child runs in a process group of its own, so the Ctrl-C meant for the
//! probe reaches the probe alone, which then ends the conversation its
//! own way (`load`'s node agents, told to clean up). Dropped unfinished,
//! it is killed.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::child::{Finished, OUTPUT_CAP, PIPE_GRACE};

/// What a conversation's reader sends: which conversation, and its next
/// line (without the newline), or `None` once its stdout closed.
pub type Heard = (usize, Option<String>);

pub struct Conversation {
    child: Child,
    stdin: Option<ChildStdin>,
    stderr: Option<mpsc::Receiver<Vec<u8>>>,
    started: Instant,
    ended: bool,
}

impl Conversation {
    /// Starts `cmd`; its lines go to `heard` as `(id, line)`; a line
    /// longer than `max_line` bytes is cut there.
    pub fn start(
        cmd: &mut Command,
        id: usize,
        max_line: usize,
        heard: mpsc::Sender<Heard>,
    ) -> std::io::Result<Conversation> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match (&mut lines)
                    .take(max_line as u64)
                    .read_until(b'\n', &mut line)
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&line);
                        let text = text.trim_end_matches(['\n', '\r']).to_string();
                        if heard.send((id, Some(text))).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = heard.send((id, None));
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut stderr).take(OUTPUT_CAP).read_to_end(&mut buf);
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            let _ = tx.send(buf);
        });
        Ok(Conversation {
            child,
            stdin,
            stderr: Some(rx),
            started: Instant::now(),
            ended: false,
        })
    }

    /// The child's process ID.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends `line` (with its newline); `Err` once the child stopped reading.
    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        stdin.write_all(line.as_bytes())?;
        stdin.flush()
    }

    /// Closes its stdin: it reads the end of its input.
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits up to `limit` for it to end, then kills it; how it ended.
    pub fn finish(mut self, limit: Duration) -> Finished {
        self.close();
        let until = Instant::now() + limit;
        let mut timed_out = false;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(None) => {
                    timed_out = true;
                    let _ = self.child.kill();
                    break self.child.wait().ok();
                }
                Err(_) => break None,
            }
        };
        self.ended = true;
        let stderr = self
            .stderr
            .take()
            .and_then(|rx| rx.recv_timeout(PIPE_GRACE).ok())
            .unwrap_or_default();
        Finished {
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            stdout: Vec::new(),
            stderr,
            timed_out,
            interrupted: None,
            elapsed: self.started.elapsed(),
        }
    }
}

impl Conversation {
    /// Closes its stdin and lets it run on to its end unwatched (a child
    /// still cleaning up, which a kill would cut short); it is nobody's
    /// once the probe exits.
    pub fn release(mut self) {
        self.close();
        self.ended = true;
    }
}

impl Drop for Conversation {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits on `rx` for a line that starts with `prefix` and returns the rest
/// of it, trimmed; `Err` once `stop` is raised (`"stopped"`), the
/// conversation ended (`"ended"`) or `until` passed (`"timed out"`). The
/// waiter of a conversation asked one thing at a time.
pub fn line_after(
    rx: &mpsc::Receiver<Heard>,
    prefix: &str,
    until: Instant,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<String, &'static str> {
    loop {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            return Err("stopped");
        }
        let left = until
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(200));
        match rx.recv_timeout(left) {
            Ok((_, Some(line))) => {
                if let Some(rest) = line.trim().strip_prefix(prefix) {
                    return Ok(rest.trim().to_string());
                }
            }
            Ok((_, None)) | Err(mpsc::RecvTimeoutError::Disconnected) => return Err("ended"),
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= until => {
                return Err("timed out");
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// How [`listen`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listened {
    /// What was waited for came.
    Done,
    /// The time was up first.
    Deadline,
    /// A signal came first.
    Signal,
    /// Every conversation's output ended first: nothing more can come.
    Silent,
}

/// Hands each line heard on `rx` to `hear` (with `state`) until `done`
/// holds, `until` passes, a signal comes (when `interrupt` is given) or
/// every conversation has ended; looks every 100 ms. The one waiter of
/// the commands that talk to several children at once (`load`'s node
/// agents, `ceph --clients`' clients).
pub fn listen<S>(
    rx: &mpsc::Receiver<Heard>,
    until: Instant,
    interrupt: Option<&super::interrupt::Interrupt>,
    state: &mut S,
    done: impl Fn(&S) -> bool,
    mut hear: impl FnMut(&mut S, Heard),
) -> Listened {
    loop {
        if done(state) {
            return Listened::Done;
        }
        if interrupt.is_some_and(|i| i.signal().is_some()) {
            return Listened::Signal;
        }
        let now = Instant::now();
        if now >= until {
            return Listened::Deadline;
        }
        match rx.recv_timeout((until - now).min(Duration::from_millis(100))) {
            Ok(heard) => hear(state, heard),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return if done(state) {
                    Listened::Done
                } else {
                    Listened::Silent
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_ends_when_done_at_the_deadline_or_when_all_are_silent() {
        let (tx, rx) = mpsc::channel::<Heard>();
        tx.send((0, Some("a".into()))).unwrap();
        tx.send((1, Some("b".into()))).unwrap();
        // Until `n` lines came, for up to `ms`.
        let wait = |got: &mut Vec<String>, n: usize, ms: u64| {
            let until = Instant::now() + Duration::from_millis(ms);
            listen(
                &rx,
                until,
                None,
                got,
                |g| g.len() == n,
                |g, (_, l)| g.extend(l),
            )
        };
        let mut got: Vec<String> = Vec::new();
        assert_eq!(wait(&mut got, 2, 5000), Listened::Done);
        assert_eq!(got, ["a", "b"]);
        assert_eq!(wait(&mut got, 3, 150), Listened::Deadline);
        drop(tx);
        let at = Instant::now();
        assert_eq!(wait(&mut got, 3, 5000), Listened::Silent);
        assert!(at.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn lines_both_ways_then_the_end_and_its_status() {
        let (tx, rx) = mpsc::channel();
        let mut cmd = Command::new("/bin/sh");
        cmd.args([
            "-c",
            "echo hello; read a; echo \"got $a\"; read b; echo err >&2; exit 3",
        ]);
        let mut c = Conversation::start(&mut cmd, 7, 1024, tx).unwrap();
        assert_eq!(rx.recv().unwrap(), (7, Some("hello".into())));
        c.send("one\n").unwrap();
        assert_eq!(rx.recv().unwrap(), (7, Some("got one".into())));
        let done = c.finish(Duration::from_secs(10));
        assert_eq!(rx.recv().unwrap(), (7, None));
        assert_eq!((done.code, done.timed_out), (Some(3), false));
        assert_eq!(done.first_error_line(), "err");
    }

    #[test]
    fn a_child_that_does_not_end_is_killed_and_long_lines_are_cut() {
        let (tx, rx) = mpsc::channel();
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", "echo 0123456789; trap '' TERM; exec sleep 30"]);
        let c = Conversation::start(&mut cmd, 0, 4, tx).unwrap();
        assert_eq!(rx.recv().unwrap(), (0, Some("0123".into())));
        let done = c.finish(Duration::from_millis(200));
        assert!(done.timed_out && done.signal == Some(9), "{done:?}");
    }
}
