//! Test rigs: loop devices, filesystems, mounts and a DNS server on
//! loopback, all made by the tests and torn down by `Drop`.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use hickory_proto::op::{Message, MessageType, OpCode, Query};
use hickory_proto::rr::{Name, RecordType};

pub mod ceph;
pub mod cgroup;
pub mod faultfs;
pub mod netlinks;
pub mod netns;
pub mod pve;
pub mod smartctl;
pub mod zfs;

pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// True when the environment says this is CI (`CI` set, and not to `false`
/// or empty), where every test must run.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Every `.rs` file below `dir` (a folder of this repository), with its text.
pub fn rust_files(dir: &str) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    out.sort();
    out
}

/// A function of a source file as rustfmt lays it out: its name, the
/// attributes and doc lines above it, and its lines from `fn` to the
/// first line after that is its indentation and a closing brace.
pub struct Function<'a> {
    pub name: String,
    pub attrs: Vec<&'a str>,
    /// 0-based, of the `fn` line.
    pub start: usize,
    pub body: &'a [&'a str],
}

/// The functions with a body of more than one line in `lines`.
pub fn functions<'a>(lines: &'a [&'a str]) -> Vec<Function<'a>> {
    let decl = regex::Regex::new(r"^(\s*)(?:pub(?:\([a-z]+\))? )?(?:const )?(?:unsafe )?fn (\w+)")
        .unwrap();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = decl.captures(line) else {
            continue;
        };
        // A declaration without a body, or a body on one line.
        let head = lines[i..(i + 30).min(lines.len())].join("\n");
        let (brace, semi) = (head.find('{'), head.find(';'));
        if semi.is_some_and(|s| brace.is_none_or(|b| s < b)) || line.trim_end().ends_with('}') {
            continue;
        }
        let close = format!("{}}}", &c[1]);
        let Some(end) = lines[i + 1..].iter().position(|l| *l == close) else {
            continue;
        };
        let attrs = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
            .collect();
        out.push(Function {
            name: c[2].to_string(),
            attrs,
            start: i,
            body: &lines[i..i + end + 2],
        });
    }
    out
}

/// Whether `/proc/misc` lists the device-mapper driver's control device.
pub fn lists_device_mapper(misc: &str) -> bool {
    misc.lines()
        .any(|l| l.split_whitespace().nth(1) == Some("device-mapper"))
}

/// Whether `dmsetup version`'s output names the kernel driver's version.
pub fn reports_dm_driver(output: &str) -> bool {
    output.lines().any(|l| l.starts_with("Driver version:"))
}

/// Whether the running kernel has device-mapper: `/proc/misc` lists it, or
/// `dmsetup version` reaches its driver. Never the device node, which
/// libdevmapper creates by itself.
pub fn kernel_has_device_mapper() -> bool {
    if std::fs::read_to_string("/proc/misc").is_ok_and(|m| lists_device_mapper(&m)) {
        return true;
    }
    Command::new("dmsetup")
        .arg("version")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| reports_dm_driver(&String::from_utf8_lossy(&o.stdout)))
}

/// Whether the running kernel has md: it makes `/proc/mdstat` then.
pub fn kernel_has_md() -> bool {
    Path::new("/proc/mdstat").exists()
}

/// The running test's name, as the runner names it (`storage::stack::...`):
/// libtest runs each test on a thread of that name.
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("a test")
        .to_string()
}

/// False (after saying so on stderr) when the test needs root and we are
/// not, or when PVEPROBE_TEST_UNPRIVILEGED is set: debian/rules sets it, so
/// a package build makes no loop devices, mounts or servers, even as root.
/// Under CI a test that needs root and is not root fails instead: CI runs
/// as root, and a skip there would pass without testing anything.
///
/// Every test that calls it is also `#[ignore = "needs root: ..."]`, so a
/// run without root counts it among the ignored in its summary;
/// `scripts/test` runs them as root (`--include-ignored`).
pub fn root_or_skip() -> bool {
    let test = test_name();
    if !is_root() {
        assert!(
            !in_ci(),
            "{test} needs root (loop devices, mounts, port 53) and CI is set: CI runs the suite as root, so this would pass untested"
        );
        eprintln!("SKIPPED {test}: needs root (loop devices, mounts, port 53); CI runs it as root");
        return false;
    }
    if std::env::var_os("PVEPROBE_TEST_UNPRIVILEGED").is_some() {
        eprintln!("SKIPPED {test}: needs root; PVEPROBE_TEST_UNPRIVILEGED is set");
        return false;
    }
    true
}

/// Whether `tool` is a program on PATH (as a command would find it).
pub fn on_path(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Fails the running test unless every one of `tools` is on PATH:
/// `packages` names what installs them. Every test that calls it is also
/// `#[ignore = "needs ...: ..."]`, so a run that does not ask for the
/// ignored tests counts it among them; one that asks for it
/// (`--include-ignored`, as `scripts/test` does as root and always under
/// CI) and lacks a tool fails, under CI or not: a test that cannot run is
/// never counted as passed.
pub fn needs_tools(tools: &[&str], packages: &str) {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !on_path(t)).collect();
    assert!(
        missing.is_empty(),
        "{} needs {} on PATH (Debian's {packages}; scripts/install-test-deps installs them){}",
        test_name(),
        missing.join(", "),
        if in_ci() { "; CI is set" } else { "" }
    );
}

/// Makes `cmd`'s process refuse io_uring_setup(2) with EPERM, as a
/// container's seccomp profile does: a filter in the child alone, so no
/// other process on the machine is touched (`kernel.io_uring_disabled`
/// would switch io_uring off for all of them).
pub fn refuse_io_uring(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let filter = [
        // The system call's number (seccomp_data.nr, offset 0).
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        // io_uring_setup: the next instruction, else skip it.
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: libc::SYS_io_uring_setup as u32,
        },
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: the closure only makes two system calls on data it owns; both
    // are async-signal-safe, as pre_exec requires.
    unsafe {
        cmd.pre_exec(move || {
            let program = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0,
                    &program as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Runs a set-up command and panics with its output when it fails.
pub fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (run scripts/install-test-deps): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A directory for a test's files, removed at the end (mode 0755 so `nobody` can enter).
pub fn workdir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("pveprobe-test.")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    dir
}

/// A loop device over a sparse backing file.
pub struct LoopDevice {
    pub dev: PathBuf,
    _backing: tempfile::NamedTempFile,
}

#[derive(Default, Clone, Copy)]
pub struct LoopOptions {
    pub sector_size: Option<u32>,
    pub partitions: bool,
}

impl LoopDevice {
    pub fn new(size_mib: u64, options: LoopOptions) -> Self {
        let backing = tempfile::Builder::new()
            .prefix("pveprobe-loop.")
            .tempfile_in("/var/tmp")
            .unwrap();
        backing.as_file().set_len(size_mib << 20).unwrap();
        let sector = options.sector_size.map(|s| s.to_string());
        let mut args = vec!["--find", "--show"];
        if let Some(s) = &sector {
            args.extend(["--sector-size", s]);
        }
        if options.partitions {
            args.push("-P");
        }
        let path = backing.path().to_str().unwrap().to_string();
        args.push(&path);
        let dev = PathBuf::from(sh("losetup", &args));
        Self {
            dev,
            _backing: backing,
        }
    }

    pub fn path(&self) -> &str {
        self.dev.to_str().unwrap()
    }

    /// The backing file.
    pub fn backing(&self) -> &Path {
        self._backing.path()
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// Makes a filesystem (`ext4`, `xfs`, `btrfs`) on `dev` with extra mkfs args.
pub fn mkfs(fstype: &str, dev: &str, extra: &[&str]) {
    let program = format!("mkfs.{fstype}");
    let force = if fstype == "ext4" { "-F" } else { "-f" };
    let mut args = vec!["-q", force];
    args.extend_from_slice(extra);
    args.push(dev);
    sh(&program, &args);
}

/// A mounted filesystem, unmounted on drop.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    pub fn new(dev: &str, options: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("pveprobe-mnt.")
            .tempdir_in("/var/tmp")
            .unwrap();
        // The mounted root has the filesystem's own mode (0755 from mkfs).
        sh("mount", &["-o", options, dev, dir.path().to_str().unwrap()]);
        Self { dir }
    }

    /// A tmpfs of `size_mib` MiB (files in memory: fsync does nothing).
    pub fn tmpfs(size_mib: u64) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("pveprobe-mnt.")
            .tempdir_in("/var/tmp")
            .unwrap();
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size_mib}m,mode=0755"),
                "pveprobe-tmpfs",
                dir.path().to_str().unwrap(),
            ],
        );
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Entries in the mount's root other than `lost+found`.
    pub fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "lost+found")
            .collect()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let dir = self.dir.path();
        if !Command::new("umount")
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success())
        {
            let _ = Command::new("umount").arg("-l").arg(dir).status();
        }
    }
}

/// An ext4 filesystem on a fresh loop device, mounted.
pub struct Ext4 {
    pub mount: Mount,
    pub device: LoopDevice,
}

impl Ext4 {
    pub fn new(
        size_mib: u64,
        loop_options: LoopOptions,
        mkfs_extra: &[&str],
        mount_options: &str,
    ) -> Self {
        let device = LoopDevice::new(size_mib, loop_options);
        mkfs("ext4", device.path(), mkfs_extra);
        let mount = Mount::new(device.path(), mount_options);
        Self { mount, device }
    }
}

/// The probe binary.
/// The binary, without the host-wide lock: tests run probes side by side
/// on purpose (tests/it/cli/lock.rs tests the lock with a file of its own).
pub fn pveprobe() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pveprobe"));
    cmd.stdin(Stdio::null()).env(NO_LOCK.0, NO_LOCK.1);
    cmd
}

/// The environment that switches the host-wide lock off.
pub const NO_LOCK: (&str, &str) = ("PVEPROBE_LOCK", "off");

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A file of `fixtures/`, by its path below it.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// A file of `fixtures/` as text.
pub fn read_fixture(rel: &str) -> String {
    let path = fixture(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The JSON document a run printed on stdout (its stdout and stderr when it is none).
/// The codes of a report's `hints` array, in its order.
pub fn hint_codes(hints: &serde_json::Value) -> Vec<&str> {
    hints
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["code"].as_str().unwrap())
        .collect()
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// `pveprobe compare --output-format json` of a run's document and a
/// changed copy of it, both written to `dir`: the table.
pub fn compare_with_copy(
    dir: &Path,
    doc: &serde_json::Value,
    copy: &serde_json::Value,
) -> serde_json::Value {
    let (first, second) = (dir.join("first.json"), dir.join("second.json"));
    std::fs::write(&first, doc.to_string()).unwrap();
    std::fs::write(&second, copy.to_string()).unwrap();
    let out = pveprobe()
        .args(["compare", "--output-format", "json"])
        .args([&first, &second])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    json(&out)
}

/// Fails when a run's stderr shows a panic.
pub fn no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
}

/// pveperf's line formats, one regular expression per label.
pub const LINE_FORMATS: [(&str, &str); 8] = [
    ("CPU BOGOMIPS", r"^CPU BOGOMIPS:      \d+\.\d\d$"),
    ("REGEX/SECOND", r"^REGEX/SECOND:      \d+$"),
    ("HD SIZE", r"^HD SIZE:           \d+\.\d\d GB \(.+\)$"),
    ("BUFFERED READS", r"^BUFFERED READS:    \d+\.\d\d MB/sec$"),
    ("AVERAGE SEEK TIME", r"^AVERAGE SEEK TIME: \d+\.\d\d ms$"),
    ("FSYNCS/SECOND", r"^FSYNCS/SECOND:     \d+\.\d\d$"),
    ("DNS EXT", r"^DNS EXT:           \d+\.\d\d ms$"),
    ("DNS INT", r"^DNS INT:           \d+\.\d\d ms \(.+\)$"),
];

/// Checks every stdout line against its pveperf format and pveperf's
/// order; returns label -> text after the padding.
pub fn pveperf_lines(text: &str) -> BTreeMap<String, String> {
    let mut seen = BTreeMap::new();
    let mut last_index = None;
    for line in text.lines() {
        let (label, _) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("no label in {line:?}"));
        let index = LINE_FORMATS
            .iter()
            .position(|(l, _)| *l == label)
            .unwrap_or_else(|| panic!("unknown line {line:?}"));
        let re = regex::Regex::new(LINE_FORMATS[index].1).unwrap();
        assert!(
            re.is_match(line),
            "{line:?} does not match pveperf's format {}",
            LINE_FORMATS[index].1
        );
        assert!(
            last_index < Some(index),
            "{label} out of pveperf's order in:\n{text}"
        );
        last_index = Some(index);
        seen.insert(label.to_string(), line[19..].to_string());
    }
    seen
}

/// The number at the start of a line's value.
pub fn figure(lines: &BTreeMap<String, String>, label: &str) -> f64 {
    let value = lines
        .get(label)
        .unwrap_or_else(|| panic!("no {label} line in {lines:?}"));
    value.split_whitespace().next().unwrap().parse().unwrap()
}

/// Waits for `child` at most `limit`; kills it and panics if it runs longer.
pub fn wait_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

static NEXT_ADDRESS: AtomicU8 = AtomicU8::new(1);

/// A loopback address of this test process's own, so parallel tests and
/// test binaries never share a DNS server.
pub fn loopback_address() -> Ipv4Addr {
    let n = NEXT_ADDRESS.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    Ipv4Addr::new(127, 53, (pid % 250) as u8 + 1, n)
}

/// dnsmasq on a loopback address, port 53, answering only from local data:
/// every name is NXDOMAIN (there is no upstream and no hosts file).
pub struct Dnsmasq {
    pub addr: Ipv4Addr,
    child: Child,
}

impl Dnsmasq {
    pub fn start() -> Self {
        let addr = loopback_address();
        let child = Command::new("dnsmasq")
            .args([
                "--keep-in-foreground",
                "--conf-file=/dev/null",
                "--no-resolv",
                "--no-hosts",
                "--no-poll",
                "--bind-interfaces",
                "--port=53",
                "--pid-file",
                "--user=root",
                "--log-facility=/dev/null",
                "--local=/#/",
            ])
            .arg(format!("--listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start dnsmasq (run scripts/install-test-deps)");
        let server = Self { addr, child };
        assert_eq!(server.wait_ready(), Some(3), "dnsmasq must answer NXDOMAIN");
        server
    }

    /// Sends one query until dnsmasq answers; returns its response code.
    fn wait_ready(&self) -> Option<u8> {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut msg = Message::new(77, MessageType::Query, OpCode::Query);
        msg.add_query(Query::query(
            Name::from_ascii("ready.probe.test.").unwrap(),
            RecordType::A,
        ));
        let query = msg.to_vec().unwrap();
        let mut buf = [0u8; 512];
        for _ in 0..50 {
            let _ = socket.send_to(&query, SocketAddr::from((self.addr, 53)));
            if let Ok(4..) = socket.recv(&mut buf) {
                return Some(buf[3] & 0x0f);
            }
        }
        None
    }
}

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A "name server" that reads queries and never answers.
pub struct SilentServer {
    pub addr: Ipv4Addr,
    _socket: UdpSocket,
}

impl SilentServer {
    pub fn start() -> Self {
        let addr = loopback_address();
        let socket = UdpSocket::bind((addr, 53)).unwrap();
        Self {
            addr,
            _socket: socket,
        }
    }
}

/// Writes a resolv.conf for the tests (never the host's own).
pub fn resolv_conf(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("resolv.conf");
    std::fs::write(&path, text).unwrap();
    path
}

/// Checks a JSON result against docs/report.schema.json.
pub fn validate_schema(doc: &serde_json::Value) {
    validate_against(doc, "docs/report.schema.json");
}

/// Checks `doc` against the JSON schema in `file` (relative to the project).
pub fn validate_against(doc: &serde_json::Value, file: &str) {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

/// How a [`Responder`] answers each query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A proper NXDOMAIN answer.
    Proper,
    /// A proper answer with response code SERVFAIL.
    ServFail,
    /// Random bytes.
    Garbage,
    /// The first half of a proper answer.
    Truncated,
    /// A proper answer with another query id.
    WrongId,
    /// A proper answer for another name.
    WrongName,
    /// A proper answer, sent from another loopback address.
    OtherAddress,
    /// Garbage, a wrong id and an answer from another address, then a
    /// proper answer: only the last one may count.
    NoiseThenProper,
}

/// A UDP name server of the test's own on a loopback address, port 53,
/// that answers as told; stops when dropped.
pub struct Responder {
    pub addr: std::net::IpAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn nxdomain_for(query: &Message) -> Message {
    let mut r = Message::new(query.metadata.id, MessageType::Response, OpCode::Query);
    r.metadata.response_code = hickory_proto::op::ResponseCode::NXDomain;
    r.metadata.recursion_desired = query.metadata.recursion_desired;
    for q in &query.queries {
        r.add_query(q.clone());
    }
    r
}

impl Responder {
    pub fn start(answer: Answer) -> Self {
        Self::start_on(std::net::IpAddr::V4(loopback_address()), answer)
    }

    pub fn start_on(addr: std::net::IpAddr, answer: Answer) -> Self {
        let socket = UdpSocket::bind((addr, 53)).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        // "Another address": a second socket on the next loopback address.
        let other = match addr {
            std::net::IpAddr::V4(v4) => {
                let o = v4.octets();
                Some(UdpSocket::bind((Ipv4Addr::new(o[0], o[1], o[2], o[3] ^ 0x80), 53)).unwrap())
            }
            std::net::IpAddr::V6(_) => None,
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            let mut garbage = move |n: usize| -> Vec<u8> {
                (0..n)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed as u8
                    })
                    .collect()
            };
            while !flag.load(Ordering::Relaxed) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                let Ok(query) = Message::from_vec(&buf[..n]) else {
                    continue;
                };
                let proper = nxdomain_for(&query).to_vec().unwrap();
                let mut wrong_id = nxdomain_for(&query);
                wrong_id.metadata.id = query.metadata.id.wrapping_add(1);
                let wrong_id = wrong_id.to_vec().unwrap();
                let mut wrong_name = nxdomain_for(&query);
                wrong_name.queries.clear();
                wrong_name.add_query(Query::query(
                    Name::from_ascii("other.example.").unwrap(),
                    RecordType::A,
                ));
                let wrong_name = wrong_name.to_vec().unwrap();
                let send = |bytes: &[u8]| {
                    let _ = socket.send_to(bytes, from);
                };
                match answer {
                    Answer::Proper => send(&proper),
                    Answer::ServFail => {
                        let mut failed = nxdomain_for(&query);
                        failed.metadata.response_code = hickory_proto::op::ResponseCode::ServFail;
                        send(&failed.to_vec().unwrap());
                    }
                    Answer::Garbage => send(&garbage(40)),
                    Answer::Truncated => send(&proper[..proper.len() / 2]),
                    Answer::WrongId => send(&wrong_id),
                    Answer::WrongName => send(&wrong_name),
                    Answer::OtherAddress => {
                        let _ = other.as_ref().unwrap().send_to(&proper, from);
                    }
                    Answer::NoiseThenProper => {
                        send(&garbage(40));
                        send(&wrong_id);
                        send(&wrong_name);
                        if let Some(o) = &other {
                            let _ = o.send_to(&proper, from);
                        }
                        send(&proper[..proper.len() / 2]);
                        send(&proper);
                    }
                }
            }
        });
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
