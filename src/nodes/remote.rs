//! Running pveprobe on a node through the system's OpenSSH client: the
//! command line (quoted for the node's shell), the ssh arguments, a run
//! bounded in time, and what its exit status and output mean.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::members::Node;
use crate::output::result::JsonReport;
use crate::sys::child::{ChildOptions, Finished, ToolFailure};

/// The program every node is reached with.
pub const SSH: &str = "ssh";

/// What `timeout` on the node waits after its SIGTERM before SIGKILL.
pub const KILL_AFTER_S: u64 = 10;
/// How much longer than the node's own timeout the local ssh may run
/// (connecting, the kill-after, the answer's way back).
pub const LOCAL_GRACE: Duration = Duration::from_secs(KILL_AFTER_S + 5);

/// One word for a POSIX shell, quoted by shlex where the shell would
/// read it otherwise. A word ends at a NUL, as it does in an argv.
pub fn shell_quote(word: &str) -> String {
    let word = word.split('\0').next().unwrap_or_default();
    shlex::try_quote(word).map_or_else(|_| "''".into(), |q| q.into_owned())
}

/// Words joined by spaces, each quoted: what the node's shell splits back
/// into exactly these words.
pub fn shell_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How to reach the nodes.
#[derive(Debug, Clone)]
pub struct Ssh {
    pub user: String,
    pub connect_timeout: u32,
    /// `ssh -F FILE`.
    pub config: Option<PathBuf>,
    /// `ssh -o OPTION` each.
    pub options: Vec<String>,
    /// Where Proxmox VE keeps each node's own known_hosts
    /// (`/etc/pve/nodes`, beside `.members`); used for a node whose file exists.
    pub pve_nodes_dir: Option<PathBuf>,
}

impl Ssh {
    /// A node's known_hosts as PVE keeps it, when it exists.
    pub fn known_hosts(&self, node: &Node) -> Option<PathBuf> {
        let file = self
            .pve_nodes_dir
            .as_ref()?
            .join(&node.name)
            .join("ssh_known_hosts");
        file.is_file().then_some(file)
    }

    /// `ssh [OPTIONS] -- ADDRESS REMOTE_LINE`: batch mode (no prompt ever),
    /// no terminal, no stdin, no escape character; the admin's
    /// `--ssh-option`s come before the host key options, so they can
    /// replace them.
    pub fn argv(&self, node: &Node, remote_line: &str) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![SSH.into()];
        argv.extend(self.args(node, remote_line, false));
        argv
    }

    /// ssh's arguments (after [`SSH`]) for `remote_line` on `node`; with
    /// `stdin`, the remote command's stdin is ours (no `-n`): it ends when
    /// we close it or ssh's connection goes, which is how `net-serve`
    /// knows to exit.
    pub fn args(&self, node: &Node, remote_line: &str, stdin: bool) -> Vec<OsString> {
        let mut argv: Vec<OsString> = Vec::new();
        let opt = |argv: &mut Vec<OsString>, o: String| {
            argv.push("-o".into());
            argv.push(o.into());
        };
        if let Some(config) = &self.config {
            argv.push("-F".into());
            argv.push(config.into());
        }
        opt(&mut argv, "BatchMode=yes".into());
        opt(
            &mut argv,
            format!("ConnectTimeout={}", self.connect_timeout),
        );
        for o in &self.options {
            opt(&mut argv, o.clone());
        }
        if node.address != node.name {
            opt(&mut argv, format!("HostKeyAlias={}", node.name));
        }
        if let Some(file) = self.known_hosts(node) {
            opt(&mut argv, format!("UserKnownHostsFile={}", file.display()));
            opt(&mut argv, "GlobalKnownHostsFile=none".into());
        }
        for flag in ["-T", "-n", "-e", "none", "-l"] {
            if !(stdin && flag == "-n") {
                argv.push(flag.into());
            }
        }
        argv.push(self.user.clone().into());
        argv.push("--".into());
        argv.push(node.address.clone().into());
        argv.push(remote_line.into());
        argv
    }
}

/// The command line the node's shell runs: `timeout -k 10 SECS COMMAND...
/// --output-format json [FORWARDED...] -- PATH` (no PATH with --storage),
/// every word quoted. The node's `timeout` ends a hung probe there too
/// (pveprobe removes its files and frees its scratch volume on SIGTERM),
/// not only the local ssh.
pub fn remote_line(
    command: &[String],
    forwarded: &[String],
    path: Option<&str>,
    timeout: Duration,
) -> String {
    let secs = timeout.as_secs_f64().ceil().max(1.0) as u64;
    let mut words: Vec<String> = vec![
        "timeout".into(),
        "-k".into(),
        KILL_AFTER_S.to_string(),
        secs.to_string(),
    ];
    words.extend(command.iter().cloned());
    words.extend(["--output-format".into(), "json".into()]);
    words.extend(forwarded.iter().cloned());
    if let Some(path) = path {
        words.extend(["--".into(), path.to_string()]);
    }
    shell_line(&words)
}

/// `timeout -k 5 SECS COMMAND... ARGS...`, quoted: a helper subcommand
/// on a node (`net-serve`, `net-migrate`, ...), ended there by the node's
/// `timeout` however its ssh fares.
pub fn timed_line(command: &[String], args: &[String], limit: Duration) -> String {
    let mut words: Vec<String> = vec![
        "timeout".into(),
        "-k".into(),
        "5".into(),
        limit.as_secs().max(1).to_string(),
    ];
    words.extend(command.iter().cloned());
    words.extend(args.iter().cloned());
    shell_line(&words)
}

/// An argv as one line a person can paste into a shell.
pub fn display_argv(argv: &[OsString]) -> String {
    let words: Vec<String> = argv
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    shell_line(&words)
}

/// How ssh ran (through `sys::child::run` with [`ssh_opts`]): what it
/// printed and how it ended, or why it did not.
pub type Ran = Result<Finished, ToolFailure>;

/// How ssh is run to a node: killed (SIGKILL) when it runs longer than
/// `limit`; any exit status is the node's answer, which [`classify`]
/// reads.
pub fn ssh_opts(limit: Duration) -> ChildOptions<'static> {
    ChildOptions::limit(limit).any_status()
}

/// This pveprobe with `words`, to be talked to as it runs: here (this
/// very program) when `there` is `None`, else on `there`'s node over ssh
/// (its stdin ours), its line made by `line` of the cluster's remote
/// command and `words` ([`timed_line`] or [`shell_line`]'s).
pub fn pveprobe_command(
    words: &[String],
    there: Option<(&super::Reach, &Node)>,
    line: impl Fn(&[String], &[String]) -> String,
) -> Result<Command, String> {
    let Some((reach, node)) = there else {
        let me = std::env::current_exe().map_err(|e| format!("which program am I: {e}"))?;
        let mut cmd = Command::new(me);
        cmd.args(words);
        return Ok(cmd);
    };
    let line = line(&reach.remote_command, words);
    let mut cmd = Command::new(SSH);
    cmd.args(reach.ssh(&[]).args(node, &line, true));
    Ok(cmd)
}

/// What became of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Answered; every line measured.
    Ok,
    /// Answered; a line could not be measured there (its pveprobe exited 1).
    Partial,
    /// pmxcfs lists the node as offline: not contacted.
    Offline,
    /// ssh could not connect (refused, timed out, no route, unknown name).
    Unreachable,
    /// ssh connected but could not log in or run (key refused, host key
    /// unknown or changed, another ssh error).
    SshRefused,
    /// The node's shell found no pveprobe (or could not execute it).
    NoPveprobe,
    /// The node took longer than the timeout.
    Timeout,
    /// The node's pveprobe is another version.
    Version,
    /// The node's pveprobe said nothing that parses as its JSON result.
    BadOutput,
    /// The node's pveprobe failed (bad PATH there, a signal, ...).
    Error,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Partial => "partial",
            Status::Offline => "offline",
            Status::Unreachable => "unreachable",
            Status::SshRefused => "ssh refused",
            Status::NoPveprobe => "no pveprobe",
            Status::Timeout => "timeout",
            Status::Version => "version",
            Status::BadOutput => "bad output",
            Status::Error => "error",
        }
    }

    /// The node gave a result.
    pub fn answered(self) -> bool {
        matches!(self, Status::Ok | Status::Partial)
    }
}

/// A node's outcome: its status, why, and its result when it answered.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeOutcome {
    pub status: Status,
    /// One line on what happened, for the table (none when ok).
    pub detail: Option<String>,
    pub result: Option<JsonReport>,
    /// The result as the node printed it (for `--save-dir`).
    pub raw: Option<String>,
}

impl NodeOutcome {
    pub fn failed(status: Status, detail: impl Into<String>) -> Self {
        Self {
            status,
            detail: Some(detail.into()),
            result: None,
            raw: None,
        }
    }
}

/// The line of `text` that says what went wrong: the first `error:` line
/// (clap's usage errors end with a hint line), else the last line that
/// says something, without ssh's warnings; at most 300 characters.
pub fn last_line(text: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.starts_with("error:"))
        .or_else(|| lines.iter().rev().find(|l| !l.starts_with("Warning:")))
        .or(lines.last())
        .map(|l| l.chars().take(300).collect())
}

fn ssh_failure(stderr: &[u8]) -> NodeOutcome {
    let line = last_line(stderr).unwrap_or_else(|| "ssh failed and said nothing".into());
    let unreachable = [
        "Connection refused",
        "Connection timed out",
        "timed out",
        "No route to host",
        "Network is unreachable",
        "Could not resolve hostname",
        "Name or service not known",
        "Connection closed by remote host",
        "Connection reset",
    ]
    .iter()
    .any(|s| line.contains(s));
    let status = if unreachable {
        Status::Unreachable
    } else {
        Status::SshRefused
    };
    NodeOutcome::failed(status, line)
}

/// What a node's run means, from how ssh ended and what it printed.
/// `timeout` is the node's timeout; `version` our own.
pub fn classify(run: &Ran, timeout: Duration, version: &str) -> NodeOutcome {
    classify_with(run, timeout, version, &|stdout, code| {
        parse_result(stdout, code, version)
    })
}

/// As [`classify`], with what a node's exit status 0 or 1 means given by
/// `answered` (its stdout and that status): for commands other than the probe.
pub fn classify_with(
    ran: &Ran,
    timeout: Duration,
    version: &str,
    answered: &dyn Fn(&[u8], i32) -> NodeOutcome,
) -> NodeOutcome {
    let secs = timeout.as_secs_f64().ceil();
    let run = match ran {
        Ok(run) => run,
        Err(ToolFailure::TimedOut) => {
            return NodeOutcome::failed(
                Status::Timeout,
                format!(
                    "no answer within {secs:.0} s (+{} s grace); ssh was killed",
                    LOCAL_GRACE.as_secs()
                ),
            );
        }
        Err(ToolFailure::NotStarted { why, .. }) => {
            return NodeOutcome::failed(Status::Error, format!("cannot run {SSH}: {why}"));
        }
        Err(e) => return NodeOutcome::failed(Status::Error, format!("{SSH}: {e}")),
    };
    let stderr_line = || last_line(&run.stderr);
    match run.code {
        None => NodeOutcome::failed(
            Status::Error,
            format!("ssh was killed by signal {}", run.signal.unwrap_or(0)),
        ),
        // timeout(1): 124 after its SIGTERM, 137 (128 + SIGKILL) after -k.
        Some(124 | 137) => NodeOutcome::failed(
            Status::Timeout,
            format!("still running after {secs:.0} s; stopped on the node"),
        ),
        Some(255) => ssh_failure(&run.stderr),
        Some(code @ (126 | 127)) => NodeOutcome::failed(
            Status::NoPveprobe,
            format!(
                "{} (exit status {code}); install pveprobe {version} there or give --remote-command",
                stderr_line().unwrap_or_else(|| "command not found".into())
            ),
        ),
        Some(code @ (0 | 1)) => answered(&run.stdout, code),
        Some(code @ (129 | 130 | 143)) => NodeOutcome::failed(
            Status::Error,
            format!("interrupted by signal {} on the node", code - 128),
        ),
        // The options were checked here with the same parser: a node that
        // refuses them runs another pveprobe.
        Some(2) if stderr_line().is_some_and(|l| l.starts_with("error: unexpected argument")) => {
            NodeOutcome::failed(
                Status::Version,
                format!(
                    "the node's pveprobe does not take these options, so it is another version than {version}: {}",
                    stderr_line().unwrap_or_default()
                ),
            )
        }
        Some(code) => NodeOutcome::failed(
            Status::Error,
            format!(
                "{} (exit status {code})",
                stderr_line().unwrap_or_else(|| "pveprobe failed and said nothing".into())
            ),
        ),
    }
}

/// A node's JSON result, checked for its version before its shape, so an
/// older pveprobe is named as such rather than as bad output.
fn parse_result(stdout: &[u8], code: i32, version: &str) -> NodeOutcome {
    let text = String::from_utf8_lossy(stdout);
    let bad = |why: String| NodeOutcome::failed(Status::BadOutput, why);
    let value: serde_json::Value = match serde_json::from_str(text.trim()) {
        Ok(v) => v,
        Err(e) if text.trim().is_empty() => {
            return bad(format!("printed nothing (exit status {code}): {e}"));
        }
        Err(e) => {
            let start: String = text.trim().chars().take(40).collect();
            return bad(format!("not JSON: {e} (output starts {start:?})"));
        }
    };
    match value.get("pveprobe_version").and_then(|v| v.as_str()) {
        Some(theirs) => {
            if let Some(why) = version_differs(theirs, version) {
                return NodeOutcome::failed(Status::Version, why);
            }
        }
        None => return bad("JSON without pveprobe_version: not a pveprobe result".into()),
    }
    match serde_json::from_value::<JsonReport>(value) {
        Ok(doc) => {
            let failed: Vec<String> = doc
                .not_measured
                .iter()
                .filter(|n| n.failed)
                .map(|n| format!("{}: {}", n.label, n.reason))
                .collect();
            let (status, detail) = if code == 0 && failed.is_empty() {
                (Status::Ok, None)
            } else if failed.is_empty() {
                (Status::Partial, Some(format!("exit status {code}")))
            } else {
                (
                    Status::Partial,
                    Some(format!("not measured: {}", failed.join("; "))),
                )
            };
            NodeOutcome {
                status,
                detail,
                result: Some(doc),
                raw: Some(text.trim().to_string()),
            }
        }
        Err(e) => bad(format!("not a pveprobe result: {e}")),
    }
}

/// Where `--save-dir` keeps a node's result.
pub fn saved_path(dir: &Path, node: &Node) -> PathBuf {
    dir.join(format!("{}.json", node.name))
}

/// Why a node's answer cannot be taken when it names another version.
pub fn other_version(theirs: &str) -> Option<String> {
    version_differs(theirs, env!("CARGO_PKG_VERSION"))
}

fn version_differs(theirs: &str, ours: &str) -> Option<String> {
    (theirs != ours).then(|| {
        format!(
            "pveprobe {theirs} on the node, {ours} here: install the same version on every node"
        )
    })
}

/// What a node's pveprobe printed as JSON of type `T`, or how its run
/// failed (status and why), in the words of `cluster`'s table; a result
/// whose `pveprobe_version` is not this one's fails as `version`.
pub fn answer<T: serde::de::DeserializeOwned>(
    run: &Ran,
    limit: Duration,
    what: &str,
) -> Result<T, (Status, Option<String>)> {
    let parsed = std::cell::RefCell::new(None);
    let ours = env!("CARGO_PKG_VERSION");
    let outcome = classify_with(run, limit, ours, &|stdout, _| {
        // A result that names its version is checked for it first: another
        // pveprobe's is named as such, not as bad output.
        let doc = serde_json::from_slice::<serde_json::Value>(stdout).ok();
        let theirs = doc
            .as_ref()
            .map(|d| d.get("pveprobe_version").and_then(|v| v.as_str()));
        if let Some(Some(theirs)) = theirs
            && let Some(why) = other_version(theirs)
        {
            return NodeOutcome::failed(Status::Version, why);
        }
        match serde_json::from_slice::<T>(stdout) {
            Ok(v) => {
                *parsed.borrow_mut() = Some(v);
                NodeOutcome {
                    status: Status::Ok,
                    detail: None,
                    result: None,
                    raw: None,
                }
            }
            // JSON of another shape that names no version: another pveprobe.
            Err(e) if theirs == Some(None) => NodeOutcome::failed(
                Status::Version,
                format!(
                    "{what} answered JSON without pveprobe_version ({e}): another pveprobe than {ours}; install the same version on every node"
                ),
            ),
            Err(e) => NodeOutcome::failed(Status::BadOutput, format!("{what} said no JSON: {e}")),
        }
    });
    match parsed.into_inner() {
        Some(v) if outcome.status == Status::Ok => Ok(v),
        _ => Err((outcome.status, outcome.detail)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What /bin/sh makes of a line: its words, one per line of printf.
    fn sh_words(line: &str) -> Vec<String> {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("for w in {line}; do printf '%s\\0' \"$w\"; done"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        text.split_terminator('\0').map(str::to_string).collect()
    }

    #[test]
    fn quoting_survives_a_real_shell() {
        let words = [
            "plain",
            "/var/lib/vz",
            "it's",
            "two words",
            "$(touch /tmp/pveprobe-pwned)",
            "`id`",
            "$HOME",
            "*",
            "a\\b",
            "line\nbreak",
            "'",
            "''",
            "-n",
            "semi;colon|pipe&amp",
            "tab\there",
            "ümlaut",
            "",
        ];
        assert_eq!(sh_words(&shell_line(&words)), words);
        assert!(!Path::new("/tmp/pveprobe-pwned").exists());
        assert_eq!(shell_quote("--duration"), "--duration");
        assert_eq!(shell_quote("it's"), r#""it's""#);
        assert_eq!(
            shell_quote("a\0b"),
            "a",
            "a word ends at a NUL, as in an argv"
        );
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn the_remote_line_is_timeout_pveprobe_json_and_the_path_last() {
        let forwarded = vec!["--tests".to_string(), "cpu,fsync".to_string()];
        let command: Vec<String> = ["sudo", "-n", "/opt/pveprobe"].map(String::from).into();
        let line = remote_line(
            &command,
            &forwarded,
            Some("/mnt/it's here"),
            Duration::from_secs_f64(61.2),
        );
        assert_eq!(
            line,
            r#"timeout -k 10 62 sudo -n /opt/pveprobe --output-format json --tests 'cpu,fsync' -- "/mnt/it's here""#
        );
        assert_eq!(
            sh_words(&line).last().map(String::as_str),
            Some("/mnt/it's here")
        );
        // --storage: the storage, no PATH.
        let storage = vec!["--storage".to_string(), "local-lvm".to_string()];
        let line = remote_line(
            &["pveprobe".into()],
            &storage,
            None,
            Duration::from_secs(60),
        );
        assert_eq!(
            line,
            "timeout -k 10 60 pveprobe --output-format json --storage local-lvm"
        );
    }

    fn node(name: &str, address: &str) -> Node {
        Node {
            name: name.into(),
            address: address.into(),
            online: Some(true),
            id: Some(1),
        }
    }

    #[test]
    fn ssh_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let kh = dir.path().join("pve1/ssh_known_hosts");
        std::fs::create_dir_all(kh.parent().unwrap()).unwrap();
        std::fs::write(&kh, "pve1 ssh-ed25519 AAAA\n").unwrap();
        let ssh = Ssh {
            user: "root".into(),
            connect_timeout: 7,
            config: Some("/etc/test ssh.conf".into()),
            options: vec!["Port=2222".into()],
            pve_nodes_dir: Some(dir.path().into()),
        };
        let argv: Vec<String> = ssh
            .argv(&node("pve1", "192.0.2.11"), "timeout -k 10 60 pveprobe")
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let kh_opt = format!("UserKnownHostsFile={}", kh.display());
        assert_eq!(
            argv,
            [
                "ssh",
                "-F",
                "/etc/test ssh.conf",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=7",
                "-o",
                "Port=2222",
                "-o",
                "HostKeyAlias=pve1",
                "-o",
                &kh_opt,
                "-o",
                "GlobalKnownHostsFile=none",
                "-T",
                "-n",
                "-e",
                "none",
                "-l",
                "root",
                "--",
                "192.0.2.11",
                "timeout -k 10 60 pveprobe",
            ]
        );
        // No own known_hosts, reached by name: neither alias nor file.
        let plain = ssh.argv(&node("web1", "web1"), "x");
        let text = display_argv(&plain);
        assert!(
            !text.contains("HostKeyAlias") && !text.contains("KnownHosts"),
            "{text}"
        );
        assert!(text.ends_with("-l root -- web1 x"), "{text}");
    }

    fn finished(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ok(Finished {
            code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..Finished::default()
        })
    }

    fn result_json(version: &str, failed_line: bool) -> String {
        let mut doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/pve1.json"),
            )
            .unwrap(),
        )
        .unwrap();
        doc["pveprobe_version"] = version.into();
        if failed_line {
            doc["not_measured"] = serde_json::json!([{
                "key": "buffered_reads", "label": "BUFFERED READS", "failed": true,
                "reason": "cannot open /dev/sda: Permission denied"
            }]);
        }
        doc.to_string()
    }

    /// How a node's run is classified, with a 60 s limit and version 0.1.0 here.
    fn status(f: Ran) -> NodeOutcome {
        classify(&f, Duration::from_secs(60), "0.1.0")
    }

    #[test]
    fn an_answer_of_another_version_is_named_so_not_bad_output() {
        #[derive(Debug, serde::Deserialize)]
        struct Answer {
            #[allow(dead_code)]
            pveprobe_version: String,
            n: u32,
        }
        let ours = env!("CARGO_PKG_VERSION");
        let limit = Duration::from_secs(60);
        let got = answer::<Answer>(
            &finished(
                0,
                &format!("{{\"pveprobe_version\":\"{ours}\",\"n\":3}}"),
                "",
            ),
            limit,
            "x",
        );
        assert_eq!(got.unwrap().n, 3);
        // Another version, whatever its shape.
        let (status, detail) = answer::<Answer>(
            &finished(0, "{\"pveprobe_version\":\"0.0.9\",\"other\":true}", ""),
            limit,
            "x",
        )
        .unwrap_err();
        assert_eq!(status, Status::Version);
        assert!(detail.unwrap().starts_with("pveprobe 0.0.9 on the node"));
        // Another shape without a version: an older pveprobe.
        let (status, detail) =
            answer::<Answer>(&finished(0, "{\"n\":3}", ""), limit, "x").unwrap_err();
        assert_eq!(status, Status::Version);
        assert!(detail.unwrap().contains("without pveprobe_version"));
        // Not JSON: bad output.
        let (status, _) = answer::<Answer>(&finished(0, "Segfault\n", ""), limit, "x").unwrap_err();
        assert_eq!(status, Status::BadOutput);
    }

    #[test]
    fn a_result_becomes_ok_partial_version_or_bad_output() {
        let v = "0.1.0";
        let ok = status(finished(0, &result_json(v, false), ""));
        assert_eq!((ok.status, ok.detail.as_deref()), (Status::Ok, None));
        assert!(ok.result.is_some() && ok.raw.is_some());

        let partial = status(finished(
            1,
            &result_json(v, true),
            "pveprobe: BUFFERED READS: ...",
        ));
        assert_eq!(partial.status, Status::Partial);
        assert_eq!(
            partial.detail.as_deref(),
            Some("not measured: BUFFERED READS: cannot open /dev/sda: Permission denied")
        );

        let old = status(finished(0, &result_json("0.0.9", false), ""));
        assert_eq!(old.status, Status::Version);
        assert!(
            old.detail
                .unwrap()
                .starts_with("pveprobe 0.0.9 on the node, 0.1.0 here")
        );
        assert!(old.result.is_none());

        let garbage = status(finished(0, "Segmentation fault\n", ""));
        assert_eq!(garbage.status, Status::BadOutput);
        assert!(garbage.detail.unwrap().contains("\"Segmentation fault\""));
        assert_eq!(status(finished(0, "", "")).status, Status::BadOutput);
        assert_eq!(
            status(finished(0, "{\"a\":1}", "")).status,
            Status::BadOutput
        );
        let cut = result_json(v, false);
        assert_eq!(
            status(finished(0, &cut[..cut.len() / 2], "")).status,
            Status::BadOutput
        );
    }

    #[test]
    fn a_missing_pveprobe_is_named() {
        let missing = status(finished(
            127,
            "",
            "bash: line 1: pveprobe: command not found\n",
        ));
        assert_eq!(missing.status, Status::NoPveprobe);
        assert!(
            missing
                .detail
                .unwrap()
                .starts_with("bash: line 1: pveprobe: command not found (exit status 127)")
        );
        let not_exec = status(finished(
            126,
            "",
            "timeout: failed to run command '/opt/p': Permission denied\n",
        ));
        assert_eq!(not_exec.status, Status::NoPveprobe);
    }

    #[test]
    fn ssh_failures_are_unreachable_or_refused() {
        for (stderr, want) in [
            (
                "ssh: connect to host 192.0.2.13 port 22: Connection refused\r\n",
                Status::Unreachable,
            ),
            (
                "ssh: connect to host 192.0.2.13 port 22: Connection timed out\n",
                Status::Unreachable,
            ),
            (
                "ssh: connect to host 192.0.2.13 port 22: No route to host\n",
                Status::Unreachable,
            ),
            (
                "ssh: Could not resolve hostname pve9: Name or service not known\n",
                Status::Unreachable,
            ),
            (
                "root@192.0.2.13: Permission denied (publickey).\n",
                Status::SshRefused,
            ),
            (
                "Warning: Permanently added 'x'\nHost key verification failed.\n",
                Status::SshRefused,
            ),
            ("", Status::SshRefused),
        ] {
            let o = status(finished(255, "", stderr));
            assert_eq!(o.status, want, "{stderr:?}");
            assert!(!o.detail.unwrap().is_empty());
        }
    }

    #[test]
    fn a_node_past_its_limit_timed_out() {
        let hung = status(finished(124, "", ""));
        assert_eq!(hung.status, Status::Timeout);
        assert_eq!(
            hung.detail.as_deref(),
            Some("still running after 60 s; stopped on the node")
        );
        assert_eq!(status(finished(137, "", "")).status, Status::Timeout);
        let killed = status(Err(ToolFailure::TimedOut));
        assert_eq!(killed.status, Status::Timeout);
    }

    #[test]
    fn errors_and_usage_keep_their_words() {
        let clap = "error: unexpected argument '--io-engine' found\n\n  tip: to pass '--io-engine' as a value, use '-- --io-engine'\n\nUsage: pveprobe [OPTIONS] [PATH]\n\nFor more information, try '--help'.\n";
        // (exit status, stderr, status, how the detail ends)
        let cases = [
            (
                2,
                "pveprobe: /var/tmp/x: No such file or directory\n",
                Status::Error,
                "pveprobe: /var/tmp/x: No such file or directory (exit status 2)",
            ),
            (143, "", Status::Error, ""),
            (
                2,
                clap,
                Status::Version,
                "0.1.0: error: unexpected argument '--io-engine' found",
            ),
            (
                2,
                "error: invalid value 'x' for '--runs <N>'\n\nFor more information, try '--help'.\n",
                Status::Error,
                "error: invalid value 'x' for '--runs <N>' (exit status 2)",
            ),
        ];
        for (code, stderr, want, ends) in cases {
            let o = status(finished(code, "", stderr));
            assert_eq!(o.status, want, "{stderr}");
            assert!(o.detail.unwrap_or_default().ends_with(ends), "{stderr}");
        }
        let no_ssh = status(Err(ToolFailure::NotStarted {
            missing: true,
            why: "No such file or directory".into(),
        }));
        assert_eq!(no_ssh.status, Status::Error);
    }

    #[test]
    fn ssh_is_killed_past_its_limit_and_any_status_is_its_answer() {
        use crate::sys::child;
        let start = std::time::Instant::now();
        let hung = child::run(
            "sh",
            &["-c", "echo started; exec sleep 30"],
            &ssh_opts(Duration::from_millis(300)),
        );
        assert_eq!(hung, Err(ToolFailure::TimedOut));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(status(hung).status, Status::Timeout);

        let f = child::run(
            "sh",
            &["-c", "echo out; echo err >&2; exit 3"],
            &ssh_opts(Duration::from_secs(10)),
        )
        .unwrap();
        assert_eq!(f.code, Some(3));
        assert_eq!(
            (f.stdout.as_slice(), f.stderr.as_slice()),
            (&b"out\n"[..], &b"err\n"[..])
        );

        let missing = child::run(
            "/nonexistent/ssh",
            &[""; 0],
            &ssh_opts(Duration::from_secs(1)),
        );
        let o = status(missing);
        assert_eq!(o.status, Status::Error);
        assert!(o.detail.unwrap().contains("cannot run ssh"));
    }
}
