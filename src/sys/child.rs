//! Running a helper program once (zpool and zfs, ceph, perl, ssh, PVE's
//! tools, smartctl) one way, [`run`]: by name with its arguments, without
//! a shell, stdin from /dev/null or the bytes given, stdout and stderr
//! read on threads up to a cap (a chatty program never blocks on a full
//! pipe, nor fills memory), stopped after a time limit or once the
//! interrupt flag rises (SIGKILL, or SIGTERM and a grace first). A process
//! the program left behind holding the pipes open (ssh's ControlMaster, a
//! ProxyCommand) costs at most [`PIPE_GRACE`]. Every caller says how in
//! one [`ChildOptions`], and is told why the program did not do its work
//! as a [`ToolFailure`], which it maps into its own error at the call.
//! A program talked to while it runs is `sys::conversation`'s.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::sys::interrupt::Interrupt;

/// The most of each stream that is kept; the rest is read and dropped.
pub const OUTPUT_CAP: u64 = 16 << 20;
/// How long the output is waited for after the program ended.
pub const PIPE_GRACE: Duration = Duration::from_secs(2);
/// How often the program is looked at while it runs.
const POLL: Duration = Duration::from_millis(10);

/// How a program ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finished {
    /// The exit status, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it (our kill after the limit, among others).
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// We killed it after the time limit.
    pub timed_out: bool,
    /// We killed it because this signal reached the probe.
    pub interrupted: Option<i32>,
    pub elapsed: Duration,
}

impl Finished {
    /// True when it exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// The first line of its stderr, trimmed: what a tool says went wrong.
    pub fn first_error_line(&self) -> String {
        String::from_utf8_lossy(&self.stderr)
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string()
    }

    /// What it printed on stdout, as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// How it ended, in words: `exit status 2`, `signal 9`.
    pub fn status_words(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("signal {sig}"),
            (None, None) => "an unknown status".into(),
        }
    }
}

/// How a program is run: its time limit and the rest, each with the
/// default most callers want.
#[derive(Debug, Clone, Copy)]
pub struct ChildOptions<'a> {
    /// Stopped once this has passed.
    pub limit: Duration,
    /// Stopped once this rises; `None`: it runs to its end or its limit
    /// (a cleanup that must finish).
    pub interrupt: Option<&'a Interrupt>,
    /// When stopped, SIGTERM and this long to end by itself before SIGKILL;
    /// zero: SIGKILL at once.
    pub grace: Duration,
    /// What it reads on stdin (then end of file); `None`: /dev/null.
    pub stdin: Option<&'a [u8]>,
    /// Variables set for it, beside the probe's environment.
    pub env: &'a [(&'a str, &'a str)],
    /// The most of each stream that is kept.
    pub cap: u64,
    /// A process group of its own, so the Ctrl-C meant for the probe lets
    /// the call finish (within its limit) before the probe cleans up.
    pub own_group: bool,
    /// Any exit status is an answer the caller reads (ssh's 255, a node's
    /// pveprobe's 1): not a [`ToolFailure::Failed`].
    pub any_status: bool,
}

impl ChildOptions<'_> {
    /// Run for at most `limit`, nothing else asked.
    pub const fn limit(limit: Duration) -> Self {
        ChildOptions {
            limit,
            interrupt: None,
            grace: Duration::ZERO,
            stdin: None,
            env: &[],
            cap: OUTPUT_CAP,
            own_group: false,
            any_status: false,
        }
    }
}

impl<'a> ChildOptions<'a> {
    /// Also stopped once `interrupt` rises.
    pub fn interrupt(self, interrupt: &'a Interrupt) -> Self {
        ChildOptions {
            interrupt: Some(interrupt),
            ..self
        }
    }

    /// Stopped with SIGTERM and `grace` before SIGKILL.
    pub fn grace(self, grace: Duration) -> Self {
        ChildOptions { grace, ..self }
    }

    /// With `env` set.
    pub fn env(self, env: &'a [(&'a str, &'a str)]) -> Self {
        ChildOptions { env, ..self }
    }

    /// Reading `stdin`.
    pub fn stdin(self, stdin: &'a [u8]) -> Self {
        ChildOptions {
            stdin: Some(stdin),
            ..self
        }
    }

    /// Keeping at most `cap` bytes of each stream.
    pub fn cap(self, cap: u64) -> Self {
        ChildOptions { cap, ..self }
    }

    /// In a process group of its own.
    pub fn own_group(self) -> Self {
        ChildOptions {
            own_group: true,
            ..self
        }
    }

    /// Its exit status read by the caller, whatever it is.
    pub fn any_status(self) -> Self {
        ChildOptions {
            any_status: true,
            ..self
        }
    }
}

fn reader(mut pipe: impl Read + Send + 'static, cap: u64) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut pipe).take(cap).read_to_end(&mut buf);
        // Drain the rest so the program never blocks on a full pipe.
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        let _ = tx.send(buf);
    });
    rx
}

/// Runs `cmd` as `opts` says, until it ends or is stopped; `Err` when it
/// cannot be started.
fn wait_for(cmd: &mut Command, opts: &ChildOptions) -> std::io::Result<Finished> {
    use std::os::unix::process::CommandExt;
    let start = Instant::now();
    if opts.own_group {
        cmd.process_group(0);
    }
    let mut child = cmd
        .envs(opts.env.iter().copied())
        .stdin(if opts.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let (Some(bytes), Some(mut pipe)) = (opts.stdin, child.stdin.take()) {
        let bytes = bytes.to_vec();
        // On a thread: a program that reads nothing never blocks the wait.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    let (limit, interrupt, grace) = (opts.limit, opts.interrupt, opts.grace);
    let out = reader(child.stdout.take().expect("piped"), opts.cap);
    let err = reader(child.stderr.take().expect("piped"), opts.cap);
    let mut timed_out = false;
    let mut interrupted = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {
                interrupted = interrupt.and_then(Interrupt::signal);
                timed_out = start.elapsed() >= limit;
                if timed_out || interrupted.is_some() {
                    break stop(&mut child, grace);
                }
                std::thread::sleep(POLL);
            }
            Err(_) => break None,
        }
    };
    let elapsed = start.elapsed();
    let collect = |rx: mpsc::Receiver<Vec<u8>>| rx.recv_timeout(PIPE_GRACE).unwrap_or_default();
    Ok(Finished {
        code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stdout: collect(out),
        stderr: collect(err),
        timed_out,
        interrupted,
        elapsed,
    })
}

/// Why a program run by [`run`] did not do its work.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolFailure {
    /// It could not be started; `missing` when it is not on PATH.
    #[error("{}", if *missing { "not installed" } else { why.as_str() })]
    NotStarted { missing: bool, why: String },
    /// It ran past its time limit and was stopped.
    #[error("did not answer within its time limit")]
    TimedOut,
    /// It was stopped because this signal reached the probe.
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
    /// It exited otherwise than with 0: how, and its first line on
    /// stderr (else its stdout) that says why.
    #[error("{status}: {message}")]
    Failed { status: String, message: String },
}

/// Runs `program` with `args`, no shell, as `opts` says: what it printed
/// when it exited with 0 (with [`ChildOptions::any_status`], whatever its
/// status), else why it did no work.
pub fn run<S: AsRef<std::ffi::OsStr>>(
    program: impl AsRef<std::ffi::OsStr>,
    args: &[S],
    opts: &ChildOptions,
) -> Result<Finished, ToolFailure> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let done = wait_for(&mut cmd, opts).map_err(|e| ToolFailure::NotStarted {
        missing: e.kind() == std::io::ErrorKind::NotFound,
        why: crate::error::describe(&e),
    })?;
    if let Some(signal) = done.interrupted {
        return Err(ToolFailure::Interrupted(signal));
    }
    if done.timed_out {
        return Err(ToolFailure::TimedOut);
    }
    if !done.success() && !opts.any_status {
        let message = match done.first_error_line() {
            // Nothing on stderr: its first line on stdout (a JSON
            // document's whole text would be no message).
            line if line.is_empty() => String::from_utf8_lossy(&done.stdout)
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .to_string(),
            line => line,
        };
        return Err(ToolFailure::Failed {
            status: done.status_words(),
            message,
        });
    }
    Ok(done)
}

/// Why a call of one of PVE's tools did not do its work, with the command
/// it was: what `pvesm`, `qm` and `pvesh` calls return, each mapped at
/// its call by [`PveToolError::of`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PveToolError {
    /// Not on PATH: `needs` says what needs it.
    #[error("{program} not found: {needs} ({why})")]
    NotFound {
        program: String,
        needs: &'static str,
        why: String,
    },
    #[error("{command} failed ({status}): {message}")]
    Failed {
        command: String,
        status: String,
        message: String,
    },
    #[error("{command} took longer than {} s and was stopped", .limit.as_secs())]
    TimedOut { command: String, limit: Duration },
}

impl PveToolError {
    /// `program args`'s failure (run for at most `limit`) in PVE's words;
    /// `needs` names what needs the program, for a host without it.
    pub fn of<S: AsRef<str>>(
        program: &str,
        args: &[S],
        limit: Duration,
        needs: &'static str,
        failure: ToolFailure,
    ) -> Self {
        let words: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        let command = || format!("{program} {}", words.join(" "));
        match failure {
            ToolFailure::NotStarted { missing: true, why } => PveToolError::NotFound {
                program: program.into(),
                needs,
                why,
            },
            ToolFailure::NotStarted { why, .. } => PveToolError::Failed {
                command: command(),
                status: "not started".into(),
                message: why,
            },
            ToolFailure::Interrupted(signal) => PveToolError::Failed {
                command: command(),
                status: format!("interrupted by signal {signal}"),
                message: String::new(),
            },
            ToolFailure::TimedOut => PveToolError::TimedOut {
                command: command(),
                limit,
            },
            ToolFailure::Failed { status, message } => PveToolError::Failed {
                command: command(),
                status,
                message,
            },
        }
    }
}

/// SIGTERM, up to `grace` for the program to end, then SIGKILL.
fn stop(child: &mut std::process::Child, grace: Duration) -> Option<std::process::ExitStatus> {
    if !grace.is_zero()
        && let Ok(pid) = i32::try_from(child.id())
    {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(POLL);
        }
    }
    let _ = child.kill();
    child.wait().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, opts: &ChildOptions) -> Result<Finished, ToolFailure> {
        run("/bin/sh", &["-c", script], opts)
    }

    #[test]
    fn collects_both_streams_and_the_status() {
        let opts = ChildOptions::limit(Duration::from_secs(10)).any_status();
        let f = sh("echo out; echo err >&2; exit 3", &opts).unwrap();
        assert_eq!((f.code, f.signal, f.timed_out), (Some(3), None, false));
        assert_eq!(f.stdout, b"out\n");
        assert_eq!(f.first_error_line(), "err");
        assert_eq!(f.status_words(), "exit status 3");
        assert!(!f.success());
    }

    #[test]
    fn kills_after_the_limit_and_on_interrupt() {
        let started = Instant::now();
        let err = sh(
            "exec sleep 30",
            &ChildOptions::limit(Duration::from_millis(100)),
        );
        assert_eq!(err.unwrap_err(), ToolFailure::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
        let flag = Interrupt::default();
        flag.raise(15);
        let err = sh(
            "exec sleep 30",
            &ChildOptions::limit(Duration::from_secs(60)).interrupt(&flag),
        );
        assert_eq!(err.unwrap_err(), ToolFailure::Interrupted(15));
    }

    #[test]
    fn a_graceful_stop_lets_the_program_finish_its_way_out() {
        // The trap runs on SIGTERM and writes a file; SIGKILL would not.
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("undone");
        let flag = Interrupt::default();
        let raiser = flag.clone();
        // Raised once the shell has set its trap.
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            raiser.raise(2);
        });
        let script = format!(
            "trap 'kill $!; : > {}; exit 0' TERM; sleep 30 & wait",
            mark.display()
        );
        let err = sh(
            &script,
            &ChildOptions::limit(Duration::from_secs(60))
                .interrupt(&flag)
                .grace(Duration::from_secs(10)),
        );
        assert_eq!(err.unwrap_err(), ToolFailure::Interrupted(2));
        assert!(mark.exists());
        // One that ignores SIGTERM is killed after the grace.
        let started = Instant::now();
        let err = sh(
            "trap '' TERM; while :; do sleep 0.05; done",
            &ChildOptions::limit(Duration::from_millis(100)).grace(Duration::from_millis(300)),
        );
        assert_eq!(err.unwrap_err(), ToolFailure::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn output_is_capped_and_a_flood_does_not_block() {
        // 32 MiB on stdout: the program finishes, we keep the cap.
        let f = sh(
            "head -c 33554432 /dev/zero",
            &ChildOptions::limit(Duration::from_secs(60)),
        )
        .unwrap();
        assert!(f.success(), "{f:?}");
        assert_eq!(f.stdout.len() as u64, OUTPUT_CAP);
        // A cap of the caller's own.
        let f = sh(
            "head -c 100000 /dev/zero",
            &ChildOptions::limit(Duration::from_secs(60)).cap(1000),
        )
        .unwrap();
        assert_eq!(f.stdout.len(), 1000);
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let err = run(
            "/nonexistent/program",
            &["x"],
            &ChildOptions::limit(Duration::from_secs(1)),
        );
        assert!(matches!(
            err,
            Err(ToolFailure::NotStarted { missing: true, .. })
        ));
    }

    #[test]
    fn stdin_and_env_reach_the_program() {
        let f = sh(
            "tr a-z A-Z; echo \"$GREETING\"",
            &ChildOptions::limit(Duration::from_secs(10))
                .stdin(b"abc\n")
                .env(&[("GREETING", "hello")]),
        )
        .unwrap();
        assert_eq!(f.stdout, b"ABC\nhello\n");
        // A program that reads none of a large stdin still ends.
        let big = vec![b'x'; 1 << 20];
        let f = sh(
            "exit 0",
            &ChildOptions::limit(Duration::from_secs(10)).stdin(&big),
        )
        .unwrap();
        assert!(f.success());
    }

    #[test]
    fn a_tool_says_why_it_did_no_work() {
        let opts = ChildOptions::limit(Duration::from_secs(10));
        let err = sh("echo why >&2; exit 2", &opts).unwrap_err();
        assert_eq!(err.to_string(), "exit status 2: why");
        let err = sh("echo said; exit 1", &opts).unwrap_err();
        assert_eq!(err.to_string(), "exit status 1: said");
    }

    #[test]
    fn a_pve_tool_failure_names_its_command() {
        let limit = Duration::from_secs(3);
        let of = |f| PveToolError::of("qm", &["start", "9000"], limit, "this needs Proxmox VE", f);
        let missing = ToolFailure::NotStarted {
            missing: true,
            why: "No such file or directory".into(),
        };
        assert_eq!(
            of(missing).to_string(),
            "qm not found: this needs Proxmox VE (No such file or directory)"
        );
        assert_eq!(
            of(ToolFailure::TimedOut).to_string(),
            "qm start 9000 took longer than 3 s and was stopped"
        );
    }
}
