//! The probe in the guest: a private directory made on the filesystem of
//! the measured disk (`mktemp -d`, mode 0700), the static probe copied
//! into it through the agent, run there with `guest-exec`, its JSON read
//! from its captured output, and the directory removed on every way out
//! (the [`InGuest`] guard's drop): success, failure, an interrupt, an
//! agent that stops answering (then the note names what was left).

use std::time::{Duration, Instant};

use super::{Agent, ExecStatus, QgaError};
use crate::sys::interrupt::Interrupt;

/// What the copy and the run need of the agent.
pub const NEEDED: [&str; 6] = [
    "guest-exec",
    "guest-exec-status",
    "guest-file-open",
    "guest-file-write",
    "guest-file-close",
    "guest-get-fsinfo",
];

/// Bytes per `guest-file-write` (base64 makes each message a third larger).
const CHUNK: usize = 1 << 20;

/// How often a running command is asked for its status.
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Agent(#[from] QgaError),
    #[error("in the guest, {what} failed: {why}")]
    Failed { what: String, why: String },
    #[error("in the guest, {what} ran longer than {secs:.0} s")]
    TooLong { what: String, secs: f64 },
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

/// The private directory in the guest and the probe running in it.
pub struct InGuest<'a> {
    agent: &'a mut Agent,
    pub dir: String,
    running: Option<i64>,
    /// What the cleanup could not remove, for the report.
    pub left: Option<String>,
    cleaned: bool,
}

/// Runs `path args` in the guest to its end, at most `limit`; its status.
fn run_to_end(
    agent: &mut Agent,
    path: &str,
    args: &[&str],
    limit: Duration,
    interrupt: Option<&Interrupt>,
    running: &mut Option<i64>,
) -> Result<ExecStatus, RemoteError> {
    let what = || format!("{path} {}", args.join(" "));
    let pid = agent.exec(path, args)?;
    *running = Some(pid);
    let start = Instant::now();
    loop {
        let status = agent.exec_status(pid)?;
        if status.exited {
            *running = None;
            return Ok(status);
        }
        if let Some(sig) = interrupt.and_then(Interrupt::signal) {
            return Err(RemoteError::Interrupted(sig));
        }
        if start.elapsed() > limit {
            return Err(RemoteError::TooLong {
                what: what(),
                secs: limit.as_secs_f64(),
            });
        }
        std::thread::sleep(POLL);
    }
}

fn succeeded(status: &ExecStatus, what: &str) -> Result<(), RemoteError> {
    match (status.exitcode, status.signal) {
        (Some(0), None) => Ok(()),
        (code, signal) => {
            let why = match signal {
                Some(s) => format!("killed by signal {s}"),
                None => format!("exit status {}", code.unwrap_or(-1)),
            };
            let err = status.stderr();
            let err = err.trim();
            Err(RemoteError::Failed {
                what: what.into(),
                why: if err.is_empty() {
                    why
                } else {
                    format!("{why}: {err}")
                },
            })
        }
    }
}

/// Whether `dir` is what `mktemp -d TEMPLATE` makes: the template with its
/// X's replaced by letters and digits, nothing else (it is what the
/// cleanup's rm -rf removes).
fn made_by_mktemp(template: &str, dir: &str) -> bool {
    let prefix = template.trim_end_matches('X');
    dir.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == template.len() - prefix.len()
            && rest.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

impl<'a> InGuest<'a> {
    /// `mktemp -d PARENT/.pveprobe.XXXXXXXXXX` in the guest.
    pub fn create(agent: &'a mut Agent, parent: &str) -> Result<Self, RemoteError> {
        let template = format!("{}/.pveprobe.XXXXXXXXXX", parent.trim_end_matches('/'));
        let mut none = None;
        let status = run_to_end(
            agent,
            "mktemp",
            &["-d", &template],
            Duration::from_secs(30),
            None,
            &mut none,
        )?;
        succeeded(&status, "mktemp -d")?;
        let dir = String::from_utf8_lossy(&status.stdout()).trim().to_string();
        let made = made_by_mktemp(&template, &dir);
        if !made {
            return Err(RemoteError::Failed {
                what: "mktemp -d".into(),
                why: format!("it gave {dir:?}"),
            });
        }
        Ok(InGuest {
            agent,
            dir,
            running: None,
            left: None,
            cleaned: false,
        })
    }

    /// The agent, for what else is asked of the guest meanwhile.
    pub fn agent(&mut self) -> &mut Agent {
        self.agent
    }

    /// The probe's path in the guest.
    pub fn probe_path(&self) -> String {
        format!("{}/pveprobe", self.dir)
    }

    /// Copies `binary` in and makes it executable for its owner only.
    pub fn install(&mut self, binary: &[u8]) -> Result<(), RemoteError> {
        let path = self.probe_path();
        self.agent.write_file(&path, binary, CHUNK)?;
        let status = run_to_end(
            self.agent,
            "chmod",
            &["0700", &path],
            Duration::from_secs(30),
            None,
            &mut self.running,
        )?;
        succeeded(&status, "chmod")
    }

    /// Runs the probe with `args` to its end (at most `limit`); its stdout.
    pub fn run(
        &mut self,
        args: &[&str],
        limit: Duration,
        interrupt: &Interrupt,
    ) -> Result<Vec<u8>, RemoteError> {
        let path = self.probe_path();
        let status = run_to_end(
            self.agent,
            &path,
            args,
            limit,
            Some(interrupt),
            &mut self.running,
        )?;
        succeeded(&status, "the probe")?;
        if status.out_truncated {
            return Err(RemoteError::Failed {
                what: "the probe".into(),
                why: "its output was cut short by the agent".into(),
            });
        }
        Ok(status.stdout())
    }

    /// Stops the probe if it still runs (SIGTERM: it removes its own files,
    /// then SIGKILL after 10 s), then removes the directory. Each step
    /// within the agent's time limit; what is left is kept in `left`.
    pub fn clean(&mut self) {
        if self.cleaned {
            return;
        }
        self.cleaned = true;
        // The stream may hold a half-read reply of a command given up on.
        if self.agent.sync().is_err() {
            self.left = Some(format!("{} (the guest agent stopped answering)", self.dir));
            return;
        }
        if let Some(pid) = self.running.take() {
            let pid_s = pid.to_string();
            let mut none = None;
            let _ = run_to_end(
                self.agent,
                "kill",
                &["-TERM", &pid_s],
                Duration::from_secs(10),
                None,
                &mut none,
            );
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                match self.agent.exec_status(pid) {
                    Ok(s) if !s.exited => std::thread::sleep(POLL),
                    _ => break,
                }
            }
            let _ = run_to_end(
                self.agent,
                "kill",
                &["-KILL", &pid_s],
                Duration::from_secs(10),
                None,
                &mut none,
            );
        }
        let mut none = None;
        let removed = run_to_end(
            self.agent,
            "rm",
            &["-rf", "--", &self.dir],
            Duration::from_secs(60),
            None,
            &mut none,
        )
        .and_then(|s| succeeded(&s, "rm -rf"));
        if let Err(e) = removed {
            self.left = Some(format!("{} ({e})", self.dir));
        }
    }
}

/// The cleanup runs on every way out; the caller takes `left` after
/// [`InGuest::clean`] to report it.
impl Drop for InGuest<'_> {
    fn drop(&mut self) {
        self.clean();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_mktemp_makes_is_taken_for_the_directory() {
        let t = "/mnt/data/.pveprobe.XXXXXXXXXX";
        assert!(made_by_mktemp(t, "/mnt/data/.pveprobe.a1B2c3D4e5"));
        assert!(!made_by_mktemp(t, "/mnt/data/.pveprobe.a1B2c3D4e"));
        assert!(!made_by_mktemp(t, "/mnt/data/.pveprobe.a1B2c/../.."));
        assert!(!made_by_mktemp(t, "/mnt/data/.pveprobe.a1B2c3D4e5\n/"));
        assert!(!made_by_mktemp(t, "/"));
        assert!(!made_by_mktemp(t, ""));
    }
}
