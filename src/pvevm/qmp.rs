//! QEMU's monitor (QMP) on PVE's socket, `/var/run/qemu-server/VMID.qmp`,
//! asked as qemu-server asks it: connect, read the greeting, leave
//! capability negotiation (`qmp_capabilities`), ask, close at once. The
//! socket serves one client at a time and `pvestatd`, `qm` and the GUI
//! need it too: a socket whose greeting does not come at once is busy
//! (another client holds it) and is left alone, never waited on.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pveprobe_parse::qmp::{self as parse, DriveStats, Message};

/// How long a greeting may take before the socket counts as busy.
pub const GREETING_WITHIN: Duration = Duration::from_millis(200);
/// How long one command may take once connected.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);
/// The longest line read.
const MAX_LINE: u64 = 4 << 20;

/// Where PVE keeps its VMs' sockets.
pub const RUN_DIR: &str = "/var/run/qemu-server";

#[derive(Debug, thiserror::Error)]
pub enum QmpError {
    #[error("busy: another client holds the socket")]
    Busy,
    #[error("cannot connect: {0}")]
    Connect(std::io::Error),
    #[error("no answer within {} s", ANSWER_WITHIN.as_secs())]
    Timeout,
    #[error("{0}")]
    Io(std::io::Error),
    #[error("QEMU refused {command}: {desc}")]
    Refused { command: String, desc: String },
    #[error(transparent)]
    Answer(#[from] parse::QmpError),
    #[error("not QMP: {0}")]
    Protocol(String),
}

/// What one visit to a VM's socket read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Visit {
    pub stats: Vec<DriveStats>,
    /// What a VM keeps while it runs, when asked for (the first visit).
    pub facts: Option<VmFacts>,
    /// The memory its balloon leaves the guest now, bytes (`query-balloon`);
    /// none without a balloon device, or when not asked.
    pub balloon: Option<u64>,
    /// What the guest's balloon driver reported, where it reports.
    pub guest: Option<parse::GuestStats>,
}

/// What a VM keeps while it runs: each drive's file (`query-block`), each
/// vCPU's index and host thread (`query-cpus-fast`), the memory it was
/// given (`query-memory-size-summary`), bytes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VmFacts {
    pub files: Vec<(String, String)>,
    pub vcpus: Vec<(u32, u32)>,
    pub memory: Option<u64>,
}

/// The balloon device as qemu-server names it (`-device
/// virtio-balloon-pci,id=balloon0`), whose `guest-stats` it polls every 2 s.
const BALLOON: &str = "/machine/peripheral/balloon0";

/// The socket of VM `vmid` in `dir`.
pub fn socket(dir: &Path, vmid: u32) -> PathBuf {
    dir.join(format!("{vmid}.qmp"))
}

/// One visit: the drives' counters, with `balloon` the balloon and the
/// guest's report, with `facts` what the VM keeps while it runs; the
/// connection closed before it returns.
pub fn visit(path: &Path, facts: bool, balloon: bool) -> Result<Visit, QmpError> {
    let stream = UnixStream::connect(path).map_err(QmpError::Connect)?;
    stream
        .set_read_timeout(Some(GREETING_WITHIN))
        .map_err(QmpError::Io)?;
    stream
        .set_write_timeout(Some(ANSWER_WITHIN))
        .map_err(QmpError::Io)?;
    let mut reader = BufReader::new(stream.try_clone().map_err(QmpError::Io)?);
    let mut writer = stream;
    let greeting =
        read_message(&mut reader, Instant::now() + GREETING_WITHIN).map_err(|e| match e {
            QmpError::Timeout => QmpError::Busy,
            e => e,
        })?;
    if !matches!(greeting, Message::Greeting) {
        return Err(QmpError::Protocol("no greeting".into()));
    }
    // (The reader's clone shares the socket and its options.)
    writer
        .set_read_timeout(Some(ANSWER_WITHIN))
        .map_err(QmpError::Io)?;
    // Every question in one write, the answers read in order: QEMU
    // answers a client's commands one after another, and one exchange
    // costs this process (and QEMU) two context switches, whatever it
    // carries. The balloon's device may be missing (refused: none).
    let guest_stats = serde_json::json!({"path": BALLOON, "property": "guest-stats"});
    let mut asked: Vec<(&str, Option<serde_json::Value>)> =
        vec![("qmp_capabilities", None), ("query-blockstats", None)];
    if balloon {
        asked.extend([("query-balloon", None), ("qom-get", Some(guest_stats))]);
    }
    if facts {
        asked.extend([
            ("query-block", None),
            ("query-cpus-fast", None),
            ("query-memory-size-summary", None),
        ]);
    }
    let mut answers = exchange(&mut reader, &mut writer, asked)?.into_iter();
    let mut next = || answers.next().expect("an answer a question");
    next()?;
    let stats = parse::blockstats(&next()?)?;
    let (balloon, guest) = if balloon {
        let actual = optional(next())?
            .map(|a| parse::balloon_actual(&a))
            .transpose()?;
        let guest = optional(next())?
            .map(|a| parse::guest_stats(&a))
            .transpose()?
            .filter(|g| actual.is_some() && g.last_update > 0);
        (actual, guest)
    } else {
        (None, None)
    };
    let facts = if facts {
        Some(VmFacts {
            files: parse::block_files(&next()?)?,
            vcpus: parse::vcpu_threads(&next()?)?,
            memory: optional(next())?
                .map(|a| parse::memory_size(&a))
                .transpose()?,
        })
    } else {
        None
    };
    Ok(Visit {
        stats,
        facts,
        balloon,
        guest,
    })
}

/// An answer QEMU may refuse for want of the device (no balloon, an older
/// QEMU): refused is none, any other failure stays one.
fn optional(answer: Result<String, QmpError>) -> Result<Option<String>, QmpError> {
    match answer {
        Ok(a) => Ok(Some(a)),
        Err(QmpError::Refused { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Sends the commands (each with its arguments) in one write; each one's
/// `return` value as JSON text or QEMU's refusal, in order (events read
/// past). A failure to talk (no answer in time, the socket closed) fails
/// them all.
fn exchange(
    reader: &mut BufReader<UnixStream>,
    writer: &mut UnixStream,
    commands: Vec<(&str, Option<serde_json::Value>)>,
) -> Result<Vec<Result<String, QmpError>>, QmpError> {
    let mut out = String::new();
    for (command, arguments) in &commands {
        let mut message = serde_json::json!({ "execute": command });
        if let Some(a) = arguments {
            message["arguments"] = a.clone();
        }
        out += &format!("{message}\r\n");
    }
    writer.write_all(out.as_bytes()).map_err(QmpError::Io)?;
    let until = Instant::now() + ANSWER_WITHIN;
    let mut answers = Vec::with_capacity(commands.len());
    for (command, _) in &commands {
        loop {
            match read_message(reader, until)? {
                Message::Answer(r) => answers.push(Ok(r)),
                Message::Refused(desc) => answers.push(Err(QmpError::Refused {
                    command: (*command).into(),
                    desc,
                })),
                // An event ({"event": ...}): not an answer.
                Message::Greeting | Message::Other => continue,
            }
            break;
        }
    }
    Ok(answers)
}

/// The next message, by `until`.
fn read_message(reader: &mut BufReader<UnixStream>, until: Instant) -> Result<Message, QmpError> {
    let mut line = Vec::new();
    loop {
        if Instant::now() >= until {
            return Err(QmpError::Timeout);
        }
        line.clear();
        match std::io::Read::take(&mut *reader, MAX_LINE).read_until(b'\n', &mut line) {
            Ok(0) => return Err(QmpError::Protocol("the socket closed".into())),
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                if text.trim().is_empty() {
                    continue;
                }
                return parse::message(text.trim()).map_err(|e| QmpError::Protocol(e.to_string()));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(QmpError::Timeout);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(QmpError::Io(e)),
        }
    }
}
