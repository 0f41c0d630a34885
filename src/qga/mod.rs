//! The QEMU guest agent, spoken directly on PVE's socket
//! (`/var/run/qemu-server/VMID.qga`): JSON commands, one reply per line,
//! after `guest-sync-delimited` has set the stream straight (a 0xFF byte
//! resets the agent's parser and precedes its answer). Every command has a
//! time limit; an agent that does not answer within it is given up on.
//!
//! [`inguest`]: the probe in a guest, in a private directory made and
//! removed through the agent (`guest`, and `load --vms`).

pub mod inguest;

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The largest reply read (guest-exec-status carries at most 16 MiB of
/// output in base64).
const MAX_REPLY: usize = 24 << 20;

#[derive(Debug, thiserror::Error)]
pub enum QgaError {
    #[error("cannot connect to the guest agent's socket {path}: {source}")]
    Connect {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the guest agent did not answer {command} within {secs} s")]
    Timeout { command: String, secs: f64 },
    #[error("the guest agent's socket failed during {command}: {source}")]
    Io {
        command: String,
        source: std::io::Error,
    },
    #[error("the guest agent refused {command}: {desc} ({class})")]
    Refused {
        command: String,
        class: String,
        desc: String,
    },
    #[error("the guest agent's answer to {command} is not QGA's: {why}")]
    Protocol { command: String, why: String },
}

/// A connection to one guest's agent.
pub struct Agent {
    stream: UnixStream,
    /// Each command's time limit.
    limit: Duration,
    buf: Vec<u8>,
    /// A command was given up on: its late reply may still come, so the
    /// next command first synchronises.
    stale: bool,
}

/// A command the agent has and whether it is enabled (`qemu-ga -b` blocks).
#[derive(Debug, Clone, Deserialize)]
pub struct AgentCommand {
    pub name: String,
    pub enabled: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Info {
    pub version: String,
    pub supported_commands: Vec<AgentCommand>,
}

impl Info {
    /// Those of `needed` the agent lacks or has blocked.
    pub fn missing<'a>(&self, needed: &[&'a str]) -> Vec<&'a str> {
        needed
            .iter()
            .copied()
            .filter(|n| {
                !self
                    .supported_commands
                    .iter()
                    .any(|c| c.name == *n && c.enabled)
            })
            .collect()
    }
}

/// `guest-get-osinfo`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct OsInfo {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub pretty_name: Option<String>,
    #[serde(default)]
    pub kernel_release: Option<String>,
    #[serde(default)]
    pub machine: Option<String>,
}

/// A PCI address of `guest-get-fsinfo`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PciAddr {
    pub domain: i64,
    pub bus: i64,
    pub slot: i64,
    pub function: i64,
}

/// One disk under a guest filesystem.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct FsDisk {
    #[serde(default)]
    pub bus_type: String,
    #[serde(default)]
    pub bus: i64,
    #[serde(default)]
    pub target: i64,
    #[serde(default)]
    pub unit: i64,
    #[serde(default)]
    pub serial: Option<String>,
    #[serde(default)]
    pub dev: Option<String>,
    #[serde(default)]
    pub pci_controller: Option<PciAddr>,
}

/// One mounted filesystem of `guest-get-fsinfo`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Filesystem {
    pub name: String,
    pub mountpoint: String,
    #[serde(rename = "type")]
    pub fstype: String,
    #[serde(default)]
    pub total_bytes: Option<u64>,
    #[serde(default)]
    pub used_bytes: Option<u64>,
    #[serde(default)]
    pub disk: Vec<FsDisk>,
}

/// `guest-exec-status`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ExecStatus {
    pub exited: bool,
    #[serde(default)]
    pub exitcode: Option<i64>,
    #[serde(default)]
    pub signal: Option<i64>,
    #[serde(default)]
    pub out_data: Option<String>,
    #[serde(default)]
    pub err_data: Option<String>,
    #[serde(default)]
    pub out_truncated: bool,
}

impl ExecStatus {
    fn decode(data: &Option<String>) -> Vec<u8> {
        data.as_deref()
            .and_then(|d| B64.decode(d).ok())
            .unwrap_or_default()
    }

    pub fn stdout(&self) -> Vec<u8> {
        Self::decode(&self.out_data)
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&Self::decode(&self.err_data)).into_owned()
    }
}

impl Agent {
    /// Connects and synchronises (`guest-sync-delimited`).
    pub fn connect(path: &Path, limit: Duration) -> Result<Self, QgaError> {
        let stream = UnixStream::connect(path).map_err(|source| QgaError::Connect {
            path: path.to_path_buf(),
            source,
        })?;
        let mut agent = Agent {
            stream,
            limit,
            buf: Vec::new(),
            stale: false,
        };
        agent.sync()?;
        Ok(agent)
    }

    /// The time limit of each command from now on.
    pub fn set_limit(&mut self, limit: Duration) {
        self.limit = limit;
    }

    fn timeout(&mut self, command: &str) -> QgaError {
        self.stale = true;
        QgaError::Timeout {
            command: command.into(),
            secs: self.limit.as_secs_f64(),
        }
    }

    fn send(&mut self, command: &str, bytes: &[u8], deadline: Instant) -> Result<(), QgaError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.timeout(command));
        }
        self.stream
            .set_write_timeout(Some(left))
            .and_then(|_| self.stream.write_all(bytes))
            .map_err(|source| match source.kind() {
                ErrorKind::WouldBlock | ErrorKind::TimedOut => self.timeout(command),
                _ => QgaError::Io {
                    command: command.into(),
                    source,
                },
            })
    }

    /// Reads until `stop` finds where a reply ends in the buffer.
    fn read_until(
        &mut self,
        command: &str,
        deadline: Instant,
        stop: impl Fn(&[u8]) -> Option<usize>,
    ) -> Result<Vec<u8>, QgaError> {
        let mut chunk = [0u8; 64 << 10];
        loop {
            if let Some(end) = stop(&self.buf) {
                return Ok(self.buf.drain(..end).collect());
            }
            if self.buf.len() > MAX_REPLY {
                return Err(QgaError::Protocol {
                    command: command.into(),
                    why: format!("a reply longer than {} MiB", MAX_REPLY >> 20),
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.timeout(command));
            }
            self.stream
                .set_read_timeout(Some(left))
                .map_err(|source| QgaError::Io {
                    command: command.into(),
                    source,
                })?;
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return Err(QgaError::Io {
                        command: command.into(),
                        source: std::io::Error::new(
                            ErrorKind::UnexpectedEof,
                            "the agent closed the socket",
                        ),
                    });
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(self.timeout(command));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(QgaError::Io {
                        command: command.into(),
                        source,
                    });
                }
            }
        }
    }

    /// `guest-sync-delimited` with a fresh id: whatever the agent had half
    /// parsed, and any reply a command given up on left in the stream, is
    /// skipped up to the 0xFF that precedes the answer with our id.
    pub fn sync(&mut self) -> Result<(), QgaError> {
        const COMMAND: &str = "guest-sync-delimited";
        let deadline = Instant::now() + self.limit;
        let id: u32 = rand::random::<u32>() & 0x7fff_ffff;
        let mut msg = vec![0xFF];
        msg.extend_from_slice(
            json!({"execute": COMMAND, "arguments": {"id": id}})
                .to_string()
                .as_bytes(),
        );
        self.send(COMMAND, &msg, deadline)?;
        loop {
            // Skip to the delimiter, then read its line.
            self.read_until(COMMAND, deadline, |b| {
                b.iter().position(|&c| c == 0xFF).map(|i| i + 1)
            })?;
            let line = self.read_until(COMMAND, deadline, |b| {
                b.iter().position(|&c| c == b'\n').map(|i| i + 1)
            })?;
            let reply: Value = serde_json::from_slice(&line).map_err(|e| QgaError::Protocol {
                command: COMMAND.into(),
                why: e.to_string(),
            })?;
            if reply.get("return").and_then(Value::as_u64) == Some(u64::from(id)) {
                self.stale = false;
                return Ok(());
            }
        }
    }

    /// One command and its `return`, within the time limit.
    pub fn call<T: DeserializeOwned>(
        &mut self,
        command: &str,
        arguments: Value,
    ) -> Result<T, QgaError> {
        if self.stale {
            self.sync()?;
        }
        let deadline = Instant::now() + self.limit;
        let msg = if arguments.is_null() {
            json!({ "execute": command })
        } else {
            json!({ "execute": command, "arguments": arguments })
        };
        self.send(command, msg.to_string().as_bytes(), deadline)?;
        let line = self.read_until(command, deadline, |b| {
            b.iter().position(|&c| c == b'\n').map(|i| i + 1)
        })?;
        let line: &[u8] = line.strip_prefix(&[0xFF]).unwrap_or(&line);
        let reply: Value = serde_json::from_slice(line).map_err(|e| QgaError::Protocol {
            command: command.into(),
            why: e.to_string(),
        })?;
        if let Some(err) = reply.get("error") {
            let text = |k: &str| err.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            return Err(QgaError::Refused {
                command: command.into(),
                class: text("class"),
                desc: text("desc"),
            });
        }
        let ret = reply
            .get("return")
            .cloned()
            .ok_or_else(|| QgaError::Protocol {
                command: command.into(),
                why: "neither return nor error".into(),
            })?;
        serde_json::from_value(ret).map_err(|e| QgaError::Protocol {
            command: command.into(),
            why: e.to_string(),
        })
    }

    pub fn info(&mut self) -> Result<Info, QgaError> {
        self.call("guest-info", Value::Null)
    }

    pub fn osinfo(&mut self) -> Result<OsInfo, QgaError> {
        self.call("guest-get-osinfo", Value::Null)
    }

    pub fn fsinfo(&mut self) -> Result<Vec<Filesystem>, QgaError> {
        self.call("guest-get-fsinfo", Value::Null)
    }

    /// Starts `path` with `args` in the guest, its output captured; its pid.
    /// The guest's clock: nanoseconds since the epoch (`guest-get-time`).
    pub fn time(&mut self) -> Result<i64, QgaError> {
        self.call("guest-get-time", json!({}))
    }

    pub fn exec(&mut self, path: &str, args: &[&str]) -> Result<i64, QgaError> {
        #[derive(Deserialize)]
        struct Pid {
            pid: i64,
        }
        let pid: Pid = self.call(
            "guest-exec",
            json!({"path": path, "arg": args, "capture-output": true}),
        )?;
        Ok(pid.pid)
    }

    pub fn exec_status(&mut self, pid: i64) -> Result<ExecStatus, QgaError> {
        self.call("guest-exec-status", json!({ "pid": pid }))
    }

    /// Writes `bytes` to a new file `path` in the guest, in chunks.
    pub fn write_file(&mut self, path: &str, bytes: &[u8], chunk: usize) -> Result<(), QgaError> {
        let handle: i64 = self.call("guest-file-open", json!({"path": path, "mode": "w"}))?;
        let written = (|| {
            for piece in bytes.chunks(chunk.max(1)) {
                #[derive(Deserialize)]
                struct Count {
                    count: usize,
                }
                let c: Count = self.call(
                    "guest-file-write",
                    json!({"handle": handle, "buf-b64": B64.encode(piece)}),
                )?;
                if c.count != piece.len() {
                    return Err(QgaError::Protocol {
                        command: "guest-file-write".into(),
                        why: format!("wrote {} of {} bytes", c.count, piece.len()),
                    });
                }
            }
            Ok(())
        })();
        let closed: Result<Value, QgaError> =
            self.call("guest-file-close", json!({ "handle": handle }));
        written.and(closed.map(|_| ()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    /// A peer that answers the sync with stale bytes first, then the next
    /// command late: the agent gives up on it, and the command after
    /// synchronises again, so the late reply is not taken for its answer.
    #[test]
    fn a_late_reply_is_skipped_by_the_next_commands_sync() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let sync_reply = |s: &mut UnixStream, buf: &mut [u8]| {
            let n = s.read(buf).unwrap();
            assert_eq!(buf[0], 0xFF, "a sync first");
            let msg: Value = serde_json::from_slice(&buf[1..n]).unwrap();
            let id = msg["arguments"]["id"].as_u64().unwrap();
            s.write_all(&[0xFF]).unwrap();
            s.write_all(format!("{{\"return\": {id}}}\n").as_bytes())
                .unwrap();
        };
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 4096];
            s.write_all(
                b"{\"error\": {\"class\": \"GenericError\", \"desc\": \"stray\"}}\ngarbage\n",
            )
            .unwrap();
            sync_reply(&mut s, &mut buf);
            // guest-info, answered after the agent gave up on it.
            let _ = s.read(&mut buf).unwrap();
            std::thread::sleep(Duration::from_millis(500));
            s.write_all(b"{\"return\": {\"version\": \"late\", \"supported_commands\": []}}\n")
                .unwrap();
            sync_reply(&mut s, &mut buf);
            let _ = s.read(&mut buf).unwrap();
            s.write_all(b"{\"return\": {\"version\": \"7.2\", \"supported_commands\": []}}\n")
                .unwrap();
        });
        let mut agent = Agent::connect(&path, Duration::from_millis(300)).unwrap();
        let r = agent.info();
        assert!(matches!(r, Err(QgaError::Timeout { .. })), "{r:?}");
        std::thread::sleep(Duration::from_millis(400));
        agent.set_limit(Duration::from_secs(10));
        assert_eq!(agent.info().unwrap().version, "7.2");
        peer.join().unwrap();
    }

    #[test]
    fn what_an_agent_lacks_or_blocks() {
        let info: Info = serde_json::from_value(json!({
            "version": "7.2",
            "supported_commands": [
                {"name": "guest-exec", "enabled": false, "success-response": true},
                {"name": "guest-file-open", "enabled": true, "success-response": true}
            ]
        }))
        .unwrap();
        assert_eq!(
            info.missing(&["guest-exec", "guest-file-open", "guest-file-write"]),
            ["guest-exec", "guest-file-write"]
        );
    }
}
