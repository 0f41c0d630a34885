//! A simulated Proxmox VE cluster on this machine: one network namespace
//! per node, joined by veth pairs to a bridge in a namespace of its own
//! (10.231.7.0/24, which exists only inside those namespaces: nothing is
//! added to the machine's own network), each node running its own OpenSSH
//! server with its own host key, host name (a UTS namespace) and PATH, a
//! `.members` as pmxcfs writes it and per-node known_hosts as PVE keeps
//! them. Everything it makes (namespaces, sshd and whatever runs in the
//! namespaces, keys, files) is removed by `Drop`, also when a test panics.

use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::common::{sh, wait_within};

/// How a simulated node behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Runs this build's pveprobe.
    Good,
    /// pmxcfs lists it as offline; the machine is off (no network, no sshd).
    Offline,
    /// Online in `.members`, but nothing listens on port 22.
    NoSshd,
    /// sshd runs but does not accept the test key.
    KeyRefused,
    /// sshd runs, but no pveprobe is on the node's PATH.
    NoPveprobe,
    /// pveprobe never ends (a script that sleeps).
    Hangs,
    /// pveprobe answers as version 0.0.1.
    OldVersion,
    /// "pveprobe" prints something that is no JSON.
    Garbage,
    /// The machine hangs: its sshd is stopped (SIGSTOP), so connections
    /// are accepted by the kernel and never answered.
    Frozen,
}

pub struct TestNode {
    pub name: String,
    pub addr: Ipv4Addr,
    pub ns: String,
    pub behaviour: Behaviour,
    sshd: Option<Child>,
}

pub struct TestCluster {
    pub dir: tempfile::TempDir,
    pub nodes: Vec<TestNode>,
    switch: String,
    /// Every namespace made, for the teardown.
    namespaces: Vec<String>,
    tag: String,
}

static NEXT: AtomicU32 = AtomicU32::new(1);

/// `ip netns` names of this process's clusters start with this.
pub fn ns_prefix() -> String {
    format!("pvp{}-", std::process::id())
}

/// The namespaces of the cluster tagged `tag` ([`TestCluster::tag`]) that
/// still exist. Only that cluster's: tests run in parallel, and another
/// test's cluster may be up at the time.
pub fn leftover_namespaces(tag: &str) -> Vec<String> {
    let list = sh("ip", &["netns", "list"]);
    let prefix = format!("{tag}-");
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn script(path: &Path, text: &str) {
    write(path, text);
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn keygen(path: &Path) -> String {
    sh(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "pveprobe-test",
            "-f",
            path.to_str().unwrap(),
        ],
    );
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    // "ssh-ed25519 AAAA... comment" -> "ssh-ed25519 AAAA..."
    public
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

impl TestCluster {
    /// What this cluster's namespace names start with (then a `-`).
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Builds the nodes, in order, at 10.231.7.11, .12, ...
    pub fn new(nodes: &[(&str, Behaviour)]) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("pveprobe-cluster.")
            .tempdir_in("/var/tmp")
            .unwrap();
        let tag = format!("{}{}", ns_prefix(), NEXT.fetch_add(1, Ordering::Relaxed));
        let mut cluster = Self {
            dir,
            nodes: Vec::new(),
            switch: format!("{tag}-sw"),
            namespaces: Vec::new(),
            tag: tag.clone(),
        };
        // sshd's privilege separation directory, which the package makes
        // only when its service starts.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let d = cluster.dir.path().to_path_buf();
        let client_key = keygen(&d.join("id_ed25519"));
        let other_key = keygen(&d.join("other_ed25519"));
        write(&d.join("authorized_keys"), &format!("{client_key}\n"));
        write(&d.join("authorized_keys_other"), &format!("{other_key}\n"));
        write(
            &d.join("ssh_config"),
            &format!(
                "IdentityFile {0}/id_ed25519\nIdentitiesOnly yes\nStrictHostKeyChecking yes\n\
                 UserKnownHostsFile /dev/null\nGlobalKnownHostsFile /dev/null\n\
                 ControlMaster no\nLogLevel ERROR\n",
                d.display()
            ),
        );

        cluster.add_namespace(&cluster.switch.clone());
        let sw = cluster.switch.clone();
        sh("ip", &["-n", &sw, "link", "add", "br0", "type", "bridge"]);
        sh("ip", &["-n", &sw, "link", "set", "br0", "up"]);

        let mut members = Vec::new();
        let mut fleet_known_hosts = String::new();
        for (i, (name, behaviour)) in nodes.iter().enumerate() {
            let addr = Ipv4Addr::new(10, 231, 7, 11 + i as u8);
            let ns = format!("{tag}-{name}");
            cluster.add_namespace(&ns);
            let node_dir = d.join(name);
            std::fs::create_dir_all(node_dir.join("bin")).unwrap();
            let host_key = keygen(&node_dir.join("host_key"));
            let pve_node = d.join("pve/nodes").join(name);
            std::fs::create_dir_all(&pve_node).unwrap();
            write(
                &pve_node.join("ssh_known_hosts"),
                &format!("{name} {host_key}\n"),
            );
            let _ = writeln!(fleet_known_hosts, "{name} {host_key}");
            let online = u8::from(*behaviour != Behaviour::Offline);
            members.push(format!(
                "  \"{name}\": {{ \"id\": {}, \"online\": {online}, \"ip\": \"{addr}\"}}",
                i + 1
            ));
            if *behaviour != Behaviour::Offline {
                let veth = format!("p{i}");
                sh(
                    "ip",
                    &[
                        "-n", &ns, "link", "add", "eth0", "type", "veth", "peer", "name", &veth,
                        "netns", &sw,
                    ],
                );
                sh(
                    "ip",
                    &[
                        "-n",
                        &ns,
                        "addr",
                        "add",
                        &format!("{addr}/24"),
                        "dev",
                        "eth0",
                    ],
                );
                sh("ip", &["-n", &ns, "link", "set", "eth0", "up"]);
                sh(
                    "ip",
                    &["-n", &sw, "link", "set", &veth, "master", "br0", "up"],
                );
            }
            cluster.nodes.push(TestNode {
                name: name.to_string(),
                addr,
                ns,
                behaviour: *behaviour,
                sshd: None,
            });
            cluster.install_pveprobe(i);
            if !matches!(behaviour, Behaviour::Offline | Behaviour::NoSshd) {
                cluster.start_sshd(i);
            }
            if *behaviour == Behaviour::Frozen {
                let pid = cluster.nodes[i].sshd.as_ref().unwrap().id();
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGSTOP,
                )
                .unwrap();
            }
        }
        write(&d.join("known_hosts"), &fleet_known_hosts);
        let first = nodes.first().map_or("", |n| n.0);
        write(
            &d.join("pve/.members"),
            &format!(
                "{{\n\"nodename\": \"{first}\",\n\"version\": 5,\n\"cluster\": {{ \"name\": \"testc\", \"version\": 3, \"nodes\": {}, \"quorate\": 1 }},\n\"nodelist\": {{\n{}\n  }}\n}}\n",
                nodes.len(),
                members.join(",\n")
            ),
        );
        cluster
    }

    fn add_namespace(&mut self, ns: &str) {
        sh("ip", &["netns", "add", ns]);
        self.namespaces.push(ns.to_string());
        sh("ip", &["-n", ns, "link", "set", "lo", "up"]);
    }

    fn bin(&self, i: usize) -> PathBuf {
        self.dir.path().join(&self.nodes[i].name).join("bin")
    }

    /// What `pveprobe` is on the node's PATH.
    fn install_pveprobe(&self, i: usize) {
        let real = env!("CARGO_BIN_EXE_pveprobe");
        let target = self.bin(i).join("pveprobe");
        match self.nodes[i].behaviour {
            Behaviour::Good
            | Behaviour::KeyRefused
            | Behaviour::NoSshd
            | Behaviour::Offline
            | Behaviour::Frozen => std::os::unix::fs::symlink(real, &target).unwrap(),
            Behaviour::NoPveprobe => {}
            Behaviour::Hangs => script(&target, "#!/bin/sh\nexec sleep 600\n"),
            Behaviour::OldVersion => script(
                &target,
                &format!(
                    "#!/bin/sh\n'{real}' \"$@\" | sed 's/\"pveprobe_version\":\"[^\"]*\"/\"pveprobe_version\":\"0.0.1\"/'\n"
                ),
            ),
            Behaviour::Garbage => script(
                &target,
                "#!/bin/sh\necho 'Segmentation fault (core dumped) {'\n",
            ),
        }
    }

    fn start_sshd(&mut self, i: usize) {
        let d = self.dir.path();
        let node = &self.nodes[i];
        let node_dir = d.join(&node.name);
        let keys = if node.behaviour == Behaviour::KeyRefused {
            "authorized_keys_other"
        } else {
            "authorized_keys"
        };
        // Only the node's own bin (and the system's) on its PATH; no
        // pveprobe installed on this machine can stand in for a missing one.
        let path = format!("{}:/usr/bin:/bin", node_dir.join("bin").display());
        let config = node_dir.join("sshd_config");
        write(
            &config,
            &format!(
                "ListenAddress 0.0.0.0\nPort 22\nHostKey {host_key}\nPidFile none\n\
                 AuthorizedKeysFile {keys}\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes no\nSetEnv PATH={path} PVEPROBE_LOCK={lock} PVEPROBE_RECORD_DIR={record} PVEPROBE_QMP_DIR={qmp}\nSubsystem sftp internal-sftp\nLogLevel INFO\n",
                host_key = node_dir.join("host_key").display(),
                keys = d.join(keys).display(),
                // Each node is a host of its own: its own lock.
                lock = node_dir.join("pveprobe.lock").display(),
                // And its own record (top --worst --cluster).
                record = node_dir.join("record").display(),
                // And its own running VMs (net-info's, for the moves).
                qmp = node_dir.join("qemu-server").display(),
            ),
        );
        let log_path = node_dir.join("sshd.log");
        let log = std::fs::File::create(&log_path).unwrap();
        // The node's root reaches the other nodes as PVE's root does (its
        // key, no options of its own: net's migration channel runs PVE's
        // ssh command there): /etc/ssh/ssh_config is the rig's in the
        // node's own mount namespace, which its sessions inherit.
        let client = node_dir.join("ssh_client_config");
        write(
            &client,
            &format!(
                "Host *\n  IdentityFile {}/id_ed25519\n  IdentitiesOnly yes\n  LogLevel ERROR\n",
                d.display()
            ),
        );
        let child = Command::new("ip")
            .args(["netns", "exec", &node.ns, "unshare", "--uts", "--mount", "sh", "-c"])
            .arg(
                "mount --bind \"$3\" /etc/ssh/ssh_config && hostname \"$1\" && exec /usr/sbin/sshd -D -e -f \"$2\"",
            )
            .args(["sh", &node.name])
            .arg(&config)
            .arg(&client)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("cannot start sshd (run scripts/install-test-deps)");
        self.nodes[i].sshd = Some(child);
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            if text.contains("Server listening on") {
                break;
            }
            let exited = self.nodes[i].sshd.as_mut().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none() && start.elapsed() < Duration::from_secs(10),
                "sshd of {} did not start: {exited:?}\n{text}",
                self.nodes[i].name
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn members(&self) -> PathBuf {
        self.dir.path().join("pve/.members")
    }

    /// `pveprobe cluster` from the first node, as an admin on it would,
    /// with the test's ssh key; killed (and the test failed) after 3 min.
    pub fn run(&self, args: &[&str]) -> (Output, Duration) {
        let mut cmd = self.command(args);
        let start = Instant::now();
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read while it runs: a full pipe must not stall it.
        let out = std::thread::scope(|s| {
            let mut stdout = child.stdout.take().unwrap();
            let mut stderr = child.stderr.take().unwrap();
            let o = s.spawn(move || {
                let mut v = Vec::new();
                std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
                v
            });
            let e = s.spawn(move || {
                let mut v = Vec::new();
                std::io::Read::read_to_end(&mut stderr, &mut v).unwrap();
                v
            });
            let status = wait_within(&mut child, Duration::from_secs(180));
            Output {
                status,
                stdout: o.join().unwrap(),
                stderr: e.join().unwrap(),
            }
        });
        (out, start.elapsed())
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.pveprobe_on(0, "cluster");
        cmd.args(args);
        cmd
    }

    /// `pveprobe SUBCOMMAND` on node `node` (in its network namespace),
    /// reaching the others as an admin would: pmxcfs's members, the test's
    /// ssh key, a 3 s connect timeout. Arguments go after these.
    pub fn pveprobe_on(&self, node: usize, subcommand: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.nodes[node].ns])
            .arg(env!("CARGO_BIN_EXE_pveprobe"))
            .arg(subcommand)
            .arg("--members")
            .arg(self.members())
            .arg("--ssh-config")
            .arg(self.dir.path().join("ssh_config"))
            .args(["--connect-timeout", "3"])
            .stdin(Stdio::null());
        cmd
    }

    /// The processes in a node's namespace.
    pub fn pids(&self, node: &str) -> Vec<u32> {
        let n = self.nodes.iter().find(|n| n.name == node).unwrap();
        sh("ip", &["netns", "pids", &n.ns])
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    }

    pub fn sshd_pid(&self, node: &str) -> Option<u32> {
        let n = self.nodes.iter().find(|n| n.name == node).unwrap();
        n.sshd.as_ref().map(Child::id)
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            if let Some(mut sshd) = node.sshd.take() {
                let _ = sshd.kill();
                let _ = sshd.wait();
            }
        }
        // Whatever still runs inside the namespaces (sessions sshd left).
        for ns in &self.namespaces {
            if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
                for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                    if let Ok(pid) = pid.parse::<i32>() {
                        let _ = nix::sys::signal::kill(
                            nix::unistd::Pid::from_raw(pid),
                            nix::sys::signal::Signal::SIGKILL,
                        );
                    }
                }
            }
        }
        for ns in self.namespaces.iter().rev() {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
