//! `pveprobe net-migrate`: one way of the secure migration channel, from
//! the source node, opened as qemu-server opens it. qemu-server 9.2.6's
//! `PVE/QemuMigrate.pm` forks the tunnel with pve-guest-common's
//! `PVE::Tunnel::fork_ssh_tunnel`: `[@$rem_ssh, '-o ExitOnForwardFailure=yes',
//! '-L', "$sock:$sock", '/usr/sbin/qm', 'mtunnel']`, where `$rem_ssh` is
//! pve-cluster 9.1.6's `PVE::SSHInfo::ssh_info_to_command`: `/usr/bin/ssh
//! -e none -o BatchMode=yes -o HostKeyAlias=NODE`, with `-o
//! UserKnownHostsFile=/etc/pve/nodes/NODE/ssh_known_hosts -o
//! GlobalKnownHostsFile=none` where that file exists, and `root@IP`, the
//! target's address in the migration network. QEMU then writes the VM's
//! state into the forwarded UNIX socket: one stream.
//!
//! Here the same ssh (and `-v`, which only makes ssh say the cipher it
//! negotiated) runs `pveprobe net-sink` on the target instead of `qm
//! mtunnel`, one stream of `--seconds` goes through the forward, the sink
//! counts it, and ssh's CPU is read here and sshd's there. Then the
//! cipher's speed on one core of this node. Both sockets live in private
//! directories of `/run`, removed on every way out.

use std::io::{Read, Write};
use std::net::IpAddr;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::sink::{self, DONE_PREFIX, READY_PREFIX, RUN_DIR, SOCKET, SinkStats};
use super::wire::{self, Direction};
use crate::model::net::{SecureStream, Way};
use crate::nodes::remote;
use crate::sys::conversation::{self, Conversation};
use crate::sys::scratch::{ScratchDir, random_name};

/// What `net-migrate` prints, on one line after this prefix.
pub const ANSWER_PREFIX: &str = "pveprobe-net-migrate";

/// The ssh client PVE runs (an absolute path, as PVE's).
pub const SSH: &str = "/usr/bin/ssh";

/// What the source node is asked.
#[derive(Debug, Clone)]
pub struct MigrateOptions {
    /// The target's node name (ssh's `HostKeyAlias`, its known_hosts).
    pub node: String,
    /// The target's address in the migration network.
    pub to: IpAddr,
    /// Which way of the pair this is, as the report names it.
    pub way: Way,
    pub seconds: u32,
    /// `/etc/pve`.
    pub pve_config: PathBuf,
    /// How the target runs pveprobe (`--remote-command`'s words).
    pub remote: Vec<String>,
    /// How long ssh may take to connect and start the sink.
    pub connect: Duration,
}

/// The stream, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigrateAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<SecureStream>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// PVE's ssh command with the migration tunnel's forward of `local` to
/// `remote` (the UNIX sockets), as the module's head quotes it; `verbose`
/// adds `-v` before the destination.
pub fn pve_ssh(
    node: &str,
    ip: IpAddr,
    known_hosts: Option<&Path>,
    local: &Path,
    remote: &Path,
    verbose: bool,
) -> Vec<String> {
    let mut argv: Vec<String> = vec![
        SSH.into(),
        "-e".into(),
        "none".into(),
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        format!("HostKeyAlias={node}"),
    ];
    if let Some(file) = known_hosts {
        argv.extend([
            "-o".into(),
            format!("UserKnownHostsFile={}", file.display()),
            "-o".into(),
            "GlobalKnownHostsFile=none".into(),
        ]);
    }
    argv.extend([
        // One word, as fork_ssh_tunnel passes it.
        "-o ExitOnForwardFailure=yes".into(),
        "-L".into(),
        format!("{}:{}", local.display(), remote.display()),
    ]);
    if verbose {
        argv.push("-v".into());
    }
    argv.push(format!("root@{ip}"));
    argv
}

/// The cipher and MAC ssh negotiated one way (`client->server` or
/// `server->client`), of what `ssh -v` says:
/// `debug1: kex: client->server cipher: aes128-gcm@openssh.com MAC: <implicit> compression: none`.
pub fn negotiated(said: &str, way: &str) -> Option<(String, String)> {
    said.lines().find_map(|line| {
        let rest = line.split_once("kex: ")?.1.strip_prefix(way)?;
        let rest = rest.strip_prefix(" cipher: ")?;
        let (cipher, rest) = rest.split_once(" MAC: ")?;
        let mac = rest.split(" compression:").next()?;
        let ok = |w: &str| !w.is_empty() && !w.contains(char::is_whitespace);
        (ok(cipher) && ok(mac)).then(|| (cipher.to_string(), mac.to_string()))
    })
}

/// OpenSSL's EVP cipher behind an ssh cipher name (`chacha20-poly1305` is
/// OpenSSH's own construction on the same ChaCha20 and Poly1305).
fn evp(ssh_cipher: &str) -> Option<openssl::symm::Cipher> {
    use openssl::symm::Cipher;
    Some(match ssh_cipher {
        "aes128-gcm@openssh.com" => Cipher::aes_128_gcm(),
        "aes256-gcm@openssh.com" => Cipher::aes_256_gcm(),
        "chacha20-poly1305@openssh.com" => Cipher::chacha20_poly1305(),
        "aes128-ctr" => Cipher::aes_128_ctr(),
        "aes192-ctr" => Cipher::aes_192_ctr(),
        "aes256-ctr" => Cipher::aes_256_ctr(),
        _ => return None,
    })
}

/// The cipher's speed on one core, MiB/s: 16 KiB blocks encrypted for
/// `window`, as `openssl speed -evp CIPHER` measures its largest block.
pub fn cipher_speed(ssh_cipher: &str, window: Duration) -> Option<f64> {
    let cipher = evp(ssh_cipher)?;
    let key = vec![0x5a; cipher.key_len()];
    let iv = cipher.iv_len().map(|n| vec![0xa5; n]);
    let mut c =
        openssl::symm::Crypter::new(cipher, openssl::symm::Mode::Encrypt, &key, iv.as_deref())
            .ok()?;
    const BLOCK: usize = 16 << 10;
    let data = vec![0u8; BLOCK];
    let mut out = vec![0u8; BLOCK + cipher.block_size()];
    let start = Instant::now();
    let mut bytes = 0u64;
    while start.elapsed() < window {
        for _ in 0..16 {
            c.update(&data, &mut out).ok()?;
            bytes += BLOCK as u64;
        }
    }
    Some(bytes as f64 / f64::from(1u32 << 20) / start.elapsed().as_secs_f64())
}

/// Whether this node's CPU has AES-NI.
fn aes_ni() -> Option<bool> {
    let text = crate::sys::host::Host::real().read("/proc/cpuinfo").ok()?;
    let flags = pveprobe_parse::cpuinfo::crypto_flags(&text);
    Some(flags.iter().any(|f| f == "aes"))
}

/// One stream through the secure channel to `opts.node`, or why not.
pub fn migrate(opts: &MigrateOptions, stop: &AtomicBool) -> Result<SecureStream, String> {
    crate::sys::scratch::sweep_stale(Path::new(RUN_DIR), sink::STALE_AFTER);
    let mut local = ScratchDir::create(Path::new(RUN_DIR)).map_err(|e| e.to_string())?;
    local.adopt(SOCKET);
    let local_socket = local.path().join(SOCKET);
    let remote_name = random_name();
    let remote_socket = Path::new(RUN_DIR).join(&remote_name).join(SOCKET);
    let known = opts
        .pve_config
        .join("nodes")
        .join(&opts.node)
        .join("ssh_known_hosts");
    let known = known.is_file().then_some(known);
    let argv = pve_ssh(
        &opts.node,
        opts.to,
        known.as_deref(),
        &local_socket,
        &remote_socket,
        true,
    );
    let window = Duration::from_secs(u64::from(opts.seconds));
    let lifetime = opts.connect + window + Duration::from_secs(30);
    let line = remote::timed_line(
        &opts.remote,
        &[
            "net-sink".into(),
            "--name".into(),
            remote_name,
            "--lifetime".into(),
            lifetime.as_secs().to_string(),
        ],
        lifetime + Duration::from_secs(5),
    );
    let streamed = through(opts, &argv, &line, &local_socket, stop);
    let (streamed, _) = local.finish(streamed.map_err(crate::error::ProbeError::Unavailable));
    let mut stream = streamed.map_err(|e| e.to_string())?;
    stream.command = argv;
    if let Some(cipher) = &stream.cipher {
        stream.cipher_mib_per_s = cipher_speed(cipher, Duration::from_millis(500));
    }
    stream.aes_ni = aes_ni();
    Ok(stream)
}

/// The longest line the sink says.
const MAX_LINE: usize = 64 << 10;

/// Starts the ssh, streams through its forward, reads both ends' counts.
fn through(
    opts: &MigrateOptions,
    argv: &[String],
    line: &str,
    local_socket: &Path,
    stop: &AtomicBool,
) -> Result<SecureStream, String> {
    let (tx, rx) = mpsc::channel();
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).arg(line);
    let conversation = Conversation::start(&mut cmd, 0, MAX_LINE, tx)
        .map_err(|e| format!("cannot run {SSH}: {}", crate::error::describe(&e)))?;
    let ssh_pid = conversation.id();
    let failed = |conversation: Conversation, why: &str| -> String {
        let said = conversation.finish(Duration::from_secs(2)).stderr;
        let text = String::from_utf8_lossy(&said);
        match text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.starts_with("debug"))
        {
            Some(l) => format!("{why}: ssh said: {}", l.trim()),
            None => why.to_string(),
        }
    };
    let ready_by = Instant::now() + opts.connect + Duration::from_secs(15);
    if let Err(why) = conversation::line_after(&rx, READY_PREFIX, ready_by, stop) {
        let why = match why {
            "timed out" => "the target's sink was not ready in time",
            "stopped" => "stopped",
            _ => "ssh ended before the target's sink was ready",
        };
        return Err(failed(conversation, why));
    }
    let sent = send(local_socket, opts.seconds, ssh_pid, stop);
    let (bytes, seconds, ssh_cpu, ssh_wait) = match sent {
        Ok(s) => s,
        Err(e) => return Err(failed(conversation, &format!("the stream: {e}"))),
    };
    let done = conversation::line_after(
        &rx,
        DONE_PREFIX,
        Instant::now() + Duration::from_secs(10),
        stop,
    );
    let stats: Option<SinkStats> = done.ok().and_then(|j| serde_json::from_str(&j).ok());
    let finished = conversation.finish(Duration::from_secs(5));
    let said = String::from_utf8_lossy(&finished.stderr);
    let (cipher, mac) = negotiated(&said, "client->server").unzip();
    Ok(SecureStream {
        way: opts.way,
        mib_per_s: if seconds > 0.0 {
            bytes as f64 / f64::from(1u32 << 20) / seconds
        } else {
            0.0
        },
        bytes,
        seconds,
        cipher,
        mac,
        ssh_cpu_percent: ssh_cpu,
        sshd_cpu_percent: stats.as_ref().and_then(|s| s.sshd_cpu_percent),
        ssh_wait_percent: ssh_wait,
        sshd_wait_percent: stats.and_then(|s| s.sshd_wait_percent),
        cipher_mib_per_s: None,
        aes_ni: None,
        command: Vec::new(),
    })
}

/// Connects to ssh's end of the forward (ssh made it before starting the
/// sink) and uploads for `seconds`: the bytes and seconds the sink
/// counted, and ssh's share of a core meanwhile.
fn send(
    local_socket: &Path,
    seconds: u32,
    ssh_pid: u32,
    stop: &AtomicBool,
) -> std::io::Result<(u64, f64, Option<f64>, Option<f64>)> {
    let mut conn = UnixStream::connect(local_socket)?;
    let window = Duration::from_secs(u64::from(seconds));
    conn.set_write_timeout(Some(Duration::from_secs(15)))?;
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let before = sink::cpu_seconds(ssh_pid);
    let waited = sink::run_queue_wait(ssh_pid);
    let started = Instant::now();
    conn.write_all(&wire::stream_header(
        Direction::Upload,
        window.as_millis() as u32,
    ))?;
    let buf = vec![0u8; 128 << 10];
    while started.elapsed() < window {
        if stop.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("stopped"));
        }
        conn.write_all(&buf)?;
    }
    conn.shutdown(std::net::Shutdown::Write)?;
    let mut reply = [0u8; wire::UPLOAD_REPLY];
    conn.read_exact(&mut reply)?;
    let wall = started.elapsed().as_secs_f64();
    let after = sink::cpu_seconds(ssh_pid);
    let wait = sink::share(waited, sink::run_queue_wait(ssh_pid), wall);
    let bytes = u64::from_be_bytes(reply[..8].try_into().expect("8 bytes"));
    let nanos = u64::from_be_bytes(reply[8..].try_into().expect("8 bytes"));
    let cpu = sink::share(before.map(|b| b.0), after.map(|a| a.0), wall);
    Ok((bytes, nanos as f64 / 1e9, cpu, wait))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_pves_with_its_tunnel() {
        let argv = pve_ssh(
            "pve2",
            "10.10.10.2".parse().unwrap(),
            Some(Path::new("/etc/pve/nodes/pve2/ssh_known_hosts")),
            Path::new("/run/pveprobe.0123456789abcdef/migrate.sock"),
            Path::new("/run/pveprobe.fedcba9876543210/migrate.sock"),
            false,
        );
        // ssh_info_to_command, then fork_ssh_tunnel's words, in order.
        assert_eq!(
            argv,
            [
                "/usr/bin/ssh",
                "-e",
                "none",
                "-o",
                "BatchMode=yes",
                "-o",
                "HostKeyAlias=pve2",
                "-o",
                "UserKnownHostsFile=/etc/pve/nodes/pve2/ssh_known_hosts",
                "-o",
                "GlobalKnownHostsFile=none",
                "-o ExitOnForwardFailure=yes",
                "-L",
                "/run/pveprobe.0123456789abcdef/migrate.sock:/run/pveprobe.fedcba9876543210/migrate.sock",
                "root@10.10.10.2",
            ]
        );
        // Without the cluster's known_hosts (PVE before 8.1's per-node
        // files): no known-hosts options; -v before the destination.
        let v6 = pve_ssh(
            "pve3",
            "fd00::3".parse().unwrap(),
            None,
            Path::new("/a"),
            Path::new("/b"),
            true,
        );
        assert!(!v6.iter().any(|w| w.contains("KnownHosts")));
        assert_eq!(v6[v6.len() - 2..], ["-v", "root@fd00::3"]);
    }

    #[test]
    fn the_cipher_is_read_from_ssh_v() {
        // OpenSSH 9.2p1 (Debian 12's 1:9.2p1-2+deb12u10) to its own sshd
        // on 127.0.0.1, `ssh -v -c aes128-gcm@openssh.com`: the lines as
        // printed, but the server->client cipher as the default run says.
        let said = "debug1: kex: algorithm: sntrup761x25519-sha512\n\
                    debug1: kex: host key algorithm: ssh-ed25519\n\
                    debug1: kex: server->client cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none\n\
                    debug1: kex: client->server cipher: aes128-gcm@openssh.com MAC: <implicit> compression: none\n\
                    debug1: expecting SSH2_MSG_KEX_ECDH_REPLY\n";
        assert_eq!(
            negotiated(said, "client->server"),
            Some(("aes128-gcm@openssh.com".into(), "<implicit>".into()))
        );
        assert_eq!(
            negotiated(said, "server->client").unwrap().0,
            "chacha20-poly1305@openssh.com"
        );
        let ctr = "debug1: kex: client->server cipher: aes256-ctr MAC: hmac-sha2-256-etm@openssh.com compression: none";
        assert_eq!(
            negotiated(ctr, "client->server"),
            Some(("aes256-ctr".into(), "hmac-sha2-256-etm@openssh.com".into()))
        );
        for bad in [
            "",
            "debug1: kex: client->server cipher:  MAC: x",
            "kex: client->server",
        ] {
            assert_eq!(negotiated(bad, "client->server"), None, "{bad:?}");
        }
    }

    #[test]
    fn every_cipher_ssh_offers_by_default_has_a_speed() {
        for c in [
            "chacha20-poly1305@openssh.com",
            "aes128-ctr",
            "aes192-ctr",
            "aes256-ctr",
            "aes128-gcm@openssh.com",
            "aes256-gcm@openssh.com",
        ] {
            let speed = cipher_speed(c, Duration::from_millis(20)).unwrap();
            assert!(speed > 1.0, "{c}: {speed} MiB/s");
        }
        assert_eq!(cipher_speed("3des-cbc", Duration::from_millis(20)), None);
    }
}
