//! A real one-node Ceph cluster from Debian's packages, in userspace, in a
//! private directory: one monitor, one manager and three memstore OSDs
//! (ceph-mon, ceph-mgr, ceph-osd run in the foreground as the test's
//! children, on a free loopback port, cephx off), a replicated pool `rbd`
//! of size 1 for RBD images. Started in about ten seconds; stopped, and
//! its directory removed, when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::workdir;

/// The pool the rig makes for RBD images.
pub const POOL: &str = "rbd";
/// OSDs the rig starts.
pub const OSDS: usize = 3;

pub struct Cluster {
    pub dir: tempfile::TempDir,
    daemons: Vec<Child>,
    /// The network namespace everything runs in (`ip netns exec`), if not this one.
    netns: Option<String>,
}

/// How the rig is laid out beyond the default.
#[derive(Default)]
pub struct Layout<'a> {
    /// BlueStore OSDs, OSD N's block file in `block_dirs[N]`; empty: memstore.
    pub block_dirs: &'a [&'a std::path::Path],
    /// Every daemon and tool in this network namespace.
    pub netns: Option<String>,
    /// OSD N runs under host name H (a UTS namespace of its own): Ceph
    /// places it on host H, as if it ran on that node.
    pub hosts: Vec<(usize, String)>,
    /// ceph.conf's `public_network`, instead of 127.0.0.0/8.
    pub public_network: Option<String>,
    /// The monitor's address, instead of 127.0.0.1 (one every daemon's
    /// namespace reaches).
    pub mon_ip: Option<String>,
    /// OSD N runs in network namespace NS instead (made with `--mkfs` in
    /// the rig's): an OSD on another node's network.
    pub osd_netns: Vec<(usize, String)>,
}

/// Fails the test unless Ceph's daemons and tools are installed
/// (scripts/install-test-deps); the test is `#[ignore]`d for them.
pub fn needs_ceph() {
    super::needs_tools(
        &["ceph-mon", "ceph-mgr", "ceph-osd", "ceph", "rados", "rbd"],
        "ceph-mon, ceph-mgr, ceph-osd and ceph-common",
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn uuid() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/uuid")
        .unwrap()
        .trim()
        .to_string()
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The last 20 lines of a daemon's log, for a failure message.
fn log_tail(path: &std::path::Path) -> String {
    match std::fs::read_to_string(path) {
        Ok(log) => {
            let lines: Vec<&str> = log.lines().collect();
            lines[lines.len().saturating_sub(20)..].join("\n")
        }
        Err(e) => format!("({}: {e})", path.display()),
    }
}

impl Cluster {
    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("ceph.conf")
    }

    /// `program`, in the rig's namespace and under `hostname` if given.
    fn command(&self, program: &str, hostname: Option<&str>) -> Command {
        self.command_in(self.netns.as_deref(), program, hostname)
    }

    /// `program` in network namespace `netns` (this one's if none).
    fn command_in(&self, netns: Option<&str>, program: &str, hostname: Option<&str>) -> Command {
        let mut words: Vec<String> = Vec::new();
        if let Some(ns) = netns {
            words.extend(["ip", "netns", "exec", ns].map(String::from));
        }
        if let Some(h) = hostname {
            words.extend(
                [
                    "unshare",
                    "--uts",
                    "sh",
                    "-c",
                    "hostname \"$1\" && shift && exec \"$@\"",
                    "sh",
                    h,
                ]
                .map(String::from),
            );
        }
        words.push(program.into());
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]);
        cmd
    }

    fn tool(&self, program: &str, args: &[&str]) -> Command {
        let mut cmd = self.command(program, None);
        cmd.arg("-c")
            .arg(self.conf())
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    /// `ceph ARGS`, which must succeed; its stdout.
    pub fn ceph(&self, args: &[&str]) -> String {
        ok(
            self.tool("ceph", args).output().unwrap(),
            &format!("ceph {args:?}"),
        )
    }

    /// `rados ARGS`, which must succeed; its stdout.
    pub fn rados(&self, args: &[&str]) -> String {
        ok(
            self.tool("rados", args).output().unwrap(),
            &format!("rados {args:?}"),
        )
    }

    /// `rbd ARGS`, which must succeed; its stdout.
    pub fn rbd(&self, args: &[&str]) -> String {
        ok(
            self.tool("rbd", args).output().unwrap(),
            &format!("rbd {args:?}"),
        )
    }

    /// Every object of `pool`, in every namespace, as `NAMESPACE\tNAME`.
    pub fn objects(&self, pool: &str) -> Vec<String> {
        self.rados(&["-p", pool, "ls", "--all"])
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    fn spawn(&mut self, program: &str, args: &[&str]) {
        self.spawn_as(program, args, None);
    }

    fn spawn_as(&mut self, program: &str, args: &[&str], hostname: Option<&str>) {
        let netns = self.netns.clone();
        self.spawn_in(netns.as_deref(), program, args, hostname);
    }

    fn spawn_in(
        &mut self,
        netns: Option<&str>,
        program: &str,
        args: &[&str],
        hostname: Option<&str>,
    ) {
        let log = std::fs::File::create(
            self.dir
                .path()
                .join(format!("{program}.{}.out", self.daemons.len())),
        )
        .unwrap();
        let child = self
            .command_in(netns, program, hostname)
            .arg("-c")
            .arg(self.conf())
            .args(args)
            .arg("-f")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{program} starts: {e}"));
        self.daemons.push(child);
    }

    fn wait_for(&self, what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(
                start.elapsed() < limit,
                "the rig's {what} within {limit:?}; logs in {}",
                self.dir.path().display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn start() -> Cluster {
        Cluster::start_with(&[])
    }

    /// With `block_dirs`, three BlueStore OSDs instead, OSD N's block file
    /// (2 GiB) in `block_dirs[N]` (a FUSE filesystem that delays flushes
    /// makes that OSD slow), none with a device class (the three are one
    /// class).
    pub fn start_with(block_dirs: &[&std::path::Path]) -> Cluster {
        Cluster::start_laid_out(Layout {
            block_dirs,
            ..Layout::default()
        })
    }

    pub fn start_laid_out(layout: Layout) -> Cluster {
        let block_dirs = layout.block_dirs;
        // A monitor that does not answer within 20 s is made again on
        // another port: once in a CI run none answered, and every client
        // waited 300 s (its log was gone with the rig; a port taken between
        // its pick and ceph-mon's bind is one way that happens).
        let mut attempt = 0;
        let (mut c, d) = loop {
            attempt += 1;
            let dir = workdir();
            let d = dir.path().to_path_buf();
            std::fs::create_dir_all(d.join("run")).unwrap();
            std::fs::create_dir_all(d.join("log")).unwrap();
            let fsid = uuid();
            let port = free_port();
            let p = d.display();
            let public = layout.public_network.as_deref().unwrap_or("127.0.0.0/8");
            let mon_ip = layout.mon_ip.as_deref().unwrap_or("127.0.0.1");
            // The OSDs report and the mgr folds their stats every second (5 s by
            // default): the placement groups read active 4 s sooner. The
            // monitor starts however full the host's disk is: by default it
            // exits (ENOSPC) when its data's filesystem has 5% or less free,
            // and a CI machine's disk can be that full; its data here is
            // a few MiB.
            std::fs::write(
                d.join("ceph.conf"),
                format!(
                    "[global]\n\
                     fsid = {fsid}\n\
                     mon_host = v2:{mon_ip}:{port}\n\
                     auth_cluster_required = none\n\
                     auth_service_required = none\n\
                     auth_client_required = none\n\
                     keyring = {p}/keyring\n\
                     run_dir = {p}/run\n\
                     log_file = {p}/log/$name.log\n\
                     admin_socket = {p}/run/$name.asok\n\
                     pid_file = {p}/run/$name.pid\n\
                     osd_pool_default_size = 1\n\
                     osd_pool_default_min_size = 1\n\
                     mon_allow_pool_size_one = true\n\
                     osd_pool_default_pg_autoscale_mode = warn\n\
                     mon_allow_pool_delete = false\n\
                     osd_crush_chooseleaf_type = 0\n\
                     ms_bind_msgr1 = false\n\
                     public_network = {public}\n\
                     mon_data = {p}/$name\n\
                     mgr_data = {p}/$name\n\
                     osd_data = {p}/$name\n\
                     osd_objectstore = memstore\n\
                     memstore_device_bytes = 1073741824\n\
                     osd_memory_target = 536870912\n\
                     mgr_initial_modules =\n\
                     mgr_stats_period = 1\n\
                     osd_mon_report_interval = 1\n\
                     mon_data_avail_crit = 0\n\
                     mon_data_avail_warn = 0\n"
                ),
            )
            .unwrap();
            if !block_dirs.is_empty() {
                let mut conf = std::fs::read_to_string(d.join("ceph.conf"))
                    .unwrap()
                    .replace("osd_objectstore = memstore", "osd_objectstore = bluestore");
                conf += "bluestore_block_create = true\n\
                         bluestore_block_size = 2147483648\n\
                         bluestore_fsck_on_mkfs = false\n\
                         bluestore_cache_size = 134217728\n\
                         osd_class_update_on_start = false\n";
                for (i, b) in block_dirs.iter().enumerate() {
                    conf += &format!(
                        "[osd.{i}]\nbluestore_block_path = {}/osd{i}.block\n",
                        b.display()
                    );
                }
                std::fs::write(d.join("ceph.conf"), conf).unwrap();
            }
            let keyring = d.join("keyring");
            let k = keyring.to_str().unwrap();
            ok(
                Command::new("ceph-authtool")
                    .args([
                        "--create-keyring",
                        k,
                        "--gen-key",
                        "-n",
                        "mon.",
                        "--cap",
                        "mon",
                        "allow *",
                    ])
                    .output()
                    .unwrap(),
                "ceph-authtool",
            );
            let monmap = d.join("monmap");
            ok(
                Command::new("monmaptool")
                    .args([
                        "--create",
                        "--fsid",
                        &fsid,
                        "--addv",
                        "a",
                        &format!("[v2:{mon_ip}:{port}]"),
                    ])
                    .arg(&monmap)
                    .output()
                    .unwrap(),
                "monmaptool",
            );
            // In the rig's namespace: the monitor looks for its address there.
            let mut mkfs = match &layout.netns {
                Some(ns) => {
                    let mut cmd = Command::new("ip");
                    cmd.args(["netns", "exec", ns, "ceph-mon"]);
                    cmd
                }
                None => Command::new("ceph-mon"),
            };
            ok(
                mkfs.arg("-c")
                    .arg(d.join("ceph.conf"))
                    .args(["--mkfs", "-i", "a", "--monmap"])
                    .arg(&monmap)
                    .args(["--keyring", k])
                    .output()
                    .unwrap(),
                "ceph-mon --mkfs",
            );
            let mut c = Cluster {
                dir,
                daemons: Vec::new(),
                netns: layout.netns.clone(),
            };
            c.spawn("ceph-mon", &["-i", "a"]);
            let answers = c
                .tool("ceph", &["--connect-timeout", "20", "mon", "stat"])
                .output()
                .is_ok_and(|o| o.status.success());
            if answers {
                break (c, d);
            }
            // A monitor that exited will not answer on another port either:
            // say why it exited (its log goes with the rig).
            let exited = c.daemons[0].try_wait().ok().flatten();
            assert!(
                exited.is_none() && attempt < 3,
                "the rig's monitor did not answer ({}); its log ends:\n{}",
                match exited {
                    Some(status) => format!("it exited, {status}"),
                    None => format!("{attempt} ports tried"),
                },
                log_tail(&d.join("ceph-mon.0.out")) + "\n" + &log_tail(&d.join("log/mon.a.log"))
            );
        };
        c.spawn("ceph-mgr", &["-i", "x"]);
        // The OSDs made one after the other, started together.
        for i in 0..OSDS {
            let id = i.to_string();
            let osd_uuid = uuid();
            c.ceph(&["osd", "new", &osd_uuid, &id]);
            std::fs::create_dir_all(d.join(format!("osd.{i}"))).unwrap();
            ok(
                c.tool("ceph-osd", &["-i", &id, "--mkfs", "--osd-uuid", &osd_uuid])
                    .output()
                    .unwrap(),
                "ceph-osd --mkfs",
            );
            let host = layout
                .hosts
                .iter()
                .find(|(n, _)| *n == i)
                .map(|(_, h)| h.as_str());
            match layout.osd_netns.iter().find(|(n, _)| *n == i) {
                Some((_, ns)) => c.spawn_in(Some(ns), "ceph-osd", &["-i", &id], host),
                None => c.spawn_as("ceph-osd", &["-i", &id], host),
            }
        }
        c.wait_for("OSDs up", Duration::from_secs(60), || {
            let stat: serde_json::Value =
                serde_json::from_str(&c.ceph(&["osd", "stat", "-f", "json"])).unwrap();
            stat["num_up_osds"].as_u64() == Some(OSDS as u64)
        });
        c.ceph(&["osd", "pool", "create", POOL, "8"]);
        c.ceph(&["osd", "pool", "application", "enable", POOL, "rbd"]);
        c.wait_for("placement groups active", Duration::from_secs(60), || {
            let stat: serde_json::Value =
                serde_json::from_str(&c.ceph(&["pg", "stat", "-f", "json"])).unwrap();
            let s = &stat["pg_summary"];
            let total = s["num_pgs"].as_u64().unwrap_or(0);
            let active: u64 = s["num_pg_by_state"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|st| st["name"].as_str().is_some_and(|n| n.starts_with("active")))
                .filter_map(|st| st["num"].as_u64())
                .sum();
            total > 0 && active == total
        });
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGTERM (the daemons' clean stop), then SIGKILL after 1 s: the
        // rig's files go with it, and a daemon that lingers (one always
        // did, 5 s a rig) has nothing to keep.
        for d in &self.daemons {
            let _ = Command::new("kill").arg(d.id().to_string()).status();
        }
        let start = Instant::now();
        for d in &mut self.daemons {
            while d.try_wait().ok().flatten().is_none() && start.elapsed() < Duration::from_secs(1)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}
