//! Extra network links between network namespaces (the simulated cluster
//! nodes of tests/it/common/netns.rs, or any namespaces a test made), for the
//! cluster network measurements: L2 networks on a bridge of their own,
//! point-to-point veth pairs, per-end MTUs, htb rate limits, a delaying
//! router (this kernel has no netem), and the reference tools (ping,
//! iperf3, the UDP counters) run inside the namespaces.
//!
//! Every address is in 10.232.0.0/16 and exists only inside the
//! namespaces: nothing is added to the machine's own network. Everything
//! [`Links`] makes (namespaces, devices in the nodes' namespaces, router
//! threads and their TAP devices) is removed by `Drop`, also when a test
//! panics. Its namespace names start with [`Links::tag`] and a `-`: the
//! process id and a counter, so parallel tests never share one.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::sh;

static NEXT: AtomicU32 = AtomicU32::new(1);

/// One node's end of a [`Network`].
#[derive(Debug, Clone)]
pub struct End {
    /// The node's index in the namespaces given to [`Links::new`].
    pub node: usize,
    /// The node's namespace.
    pub ns: String,
    /// The node's address on this network, 10.232.<subnet>.<11 + node>.
    pub addr: Ipv4Addr,
    /// The node end's device name (in `ns`).
    pub dev: String,
    /// The namespace of the veth's other end: the bridge's namespace, the
    /// other node's (a pair), or a router's ([`Links::delay`]).
    pub peer_ns: String,
    /// The veth's other end's name (in `peer_ns`).
    pub peer: String,
}

/// An L2 network made by [`Links::add_network`] or [`Links::add_pair`].
#[derive(Debug, Clone)]
pub struct Network {
    /// 10.232.<subnet>.0/24.
    pub subnet: u8,
    /// The bridge's namespace (its bridge is `br0`); `None` for a pair.
    pub bridge_ns: Option<String>,
    /// The nodes on it, in the order given.
    pub ends: Vec<End>,
}

impl Network {
    /// The end of node `node` (its index in [`Links::new`]'s list).
    pub fn end(&self, node: usize) -> &End {
        self.ends
            .iter()
            .find(|e| e.node == node)
            .unwrap_or_else(|| panic!("node {node} is not on 10.232.{}.0/24", self.subnet))
    }

    /// Node `node`'s address on this network.
    pub fn addr(&self, node: usize) -> Ipv4Addr {
        self.end(node).addr
    }
}

/// A look at what a [`Links`] made that outlives it: for checking that
/// its `Drop` removed everything.
#[derive(Debug, Clone)]
pub struct Watch {
    tag: String,
    threads: Arc<AtomicUsize>,
}

impl Watch {
    /// The rig's namespaces that still exist.
    pub fn namespaces(&self) -> Vec<String> {
        Links::leftovers(&self.tag)
    }

    /// The rig's router threads still running.
    pub fn threads(&self) -> usize {
        self.threads.load(Ordering::SeqCst)
    }
}

/// Extra links between namespaces; see the module's documentation.
pub struct Links {
    tag: String,
    nodes: Vec<String>,
    /// Namespaces made here (bridges, routers), deleted by `Drop`.
    namespaces: Vec<String>,
    /// Devices made in the nodes' namespaces (which are not ours).
    node_devices: Vec<(String, String)>,
    /// (namespace, device) with an MTU or a qdisc set: [`Links::delay`]
    /// rebuilds links and would lose them.
    shaped: HashSet<(String, String)>,
    routers: Vec<Router>,
    next_router: u32,
    threads: Arc<AtomicUsize>,
}

impl Links {
    /// Links between these namespaces (which must exist; they are not
    /// removed). Node `i` is `namespaces[i]`; its addresses end in `11 + i`.
    /// For a `TestCluster` (tests/it/common/netns.rs):
    /// `Links::new(&cluster.nodes.iter().map(|n| n.ns.clone()).collect::<Vec<_>>())`.
    pub fn new(namespaces: &[String]) -> Links {
        assert!(namespaces.len() <= 240, "too many nodes");
        Links {
            tag: format!(
                "pvl{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            nodes: namespaces.to_vec(),
            namespaces: Vec::new(),
            node_devices: Vec::new(),
            shaped: HashSet::new(),
            routers: Vec::new(),
            next_router: 1,
            threads: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// See [`Watch`].
    pub fn watch(&self) -> Watch {
        Watch {
            tag: self.tag.clone(),
            threads: Arc::clone(&self.threads),
        }
    }

    /// The namespaces whose names start with `tag` and a `-` that exist.
    pub fn leftovers(tag: &str) -> Vec<String> {
        let list = sh("ip", &["netns", "list"]);
        let prefix = format!("{tag}-");
        list.lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with(&prefix))
            .map(str::to_string)
            .collect()
    }

    fn add_namespace(&mut self, name: &str) -> String {
        let ns = format!("{}-{name}", self.tag);
        sh("ip", &["netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        sh("ip", &["-n", &ns, "link", "set", "lo", "up"]);
        ns
    }

    fn address(subnet: u8, node: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 232, subnet, 11 + node as u8)
    }

    /// A veth `dev` in node `node`'s namespace, addressed and up, whose
    /// other end `peer` goes to `peer_ns` (left down there).
    fn node_veth(&mut self, node: usize, dev: &str, subnet: u8, peer_ns: &str, peer: &str) -> End {
        let ns = self.nodes[node].clone();
        self.node_devices.push((ns.clone(), dev.to_string()));
        sh(
            "ip",
            &[
                "-n", &ns, "link", "add", dev, "type", "veth", "peer", "name", peer, "netns",
                peer_ns,
            ],
        );
        let addr = Self::address(subnet, node);
        sh(
            "ip",
            &["-n", &ns, "addr", "add", &format!("{addr}/24"), "dev", dev],
        );
        sh("ip", &["-n", &ns, "link", "set", dev, "up"]);
        End {
            node,
            ns,
            addr,
            dev: dev.to_string(),
            peer_ns: peer_ns.to_string(),
            peer: peer.to_string(),
        }
    }

    /// A new L2 network 10.232.<subnet>.0/24 joining every node: a bridge
    /// (`br0`, MTU set to 1500 so that it never lowers itself to a port's)
    /// in a namespace of its own, and per node a veth whose node end is
    /// `dev` with address 10.232.<subnet>.<11 + node>/24 and whose bridge
    /// end is `n<node>`.
    pub fn add_network(&mut self, subnet: u8, dev: &str) -> Network {
        let br = self.add_namespace(&format!("b{subnet}"));
        bridge(&br, "br0");
        let mut ends = Vec::new();
        for node in 0..self.nodes.len() {
            let port = format!("n{node}");
            ends.push(self.node_veth(node, dev, subnet, &br, &port));
            sh(
                "ip",
                &["-n", &br, "link", "set", &port, "master", "br0", "up"],
            );
        }
        Network {
            subnet,
            bridge_ns: Some(br),
            ends,
        }
    }

    /// A direct veth between nodes `a` and `b` only (no bridge): `dev` in
    /// both, addressed 10.232.<subnet>.<11 + node>/24.
    pub fn add_pair(&mut self, a: usize, b: usize, subnet: u8, dev: &str) -> Network {
        assert_ne!(a, b);
        let (ns_a, ns_b) = (self.nodes[a].clone(), self.nodes[b].clone());
        // `ip link add` makes the peer straight in b's namespace, so both
        // ends can have the same name.
        let end_a = self.node_veth(a, dev, subnet, &ns_b, dev);
        self.node_devices.push((ns_b.clone(), dev.to_string()));
        let addr_b = Self::address(subnet, b);
        sh(
            "ip",
            &[
                "-n",
                &ns_b,
                "addr",
                "add",
                &format!("{addr_b}/24"),
                "dev",
                dev,
            ],
        );
        sh("ip", &["-n", &ns_b, "link", "set", dev, "up"]);
        let end_b = End {
            node: b,
            ns: ns_b,
            addr: addr_b,
            dev: dev.to_string(),
            peer_ns: ns_a,
            peer: dev.to_string(),
        };
        Network {
            subnet,
            bridge_ns: None,
            ends: vec![end_a, end_b],
        }
    }

    /// Sets the MTU of node `node`'s device `dev` only: the other ends (the
    /// bridge, its ports, the other node of a pair) stay as they are.
    pub fn set_mtu(&mut self, node: usize, dev: &str, mtu: u32) {
        let ns = self.nodes[node].clone();
        sh(
            "ip",
            &[
                "-n",
                &ns,
                "link",
                "set",
                "dev",
                dev,
                "mtu",
                &mtu.to_string(),
            ],
        );
        self.shaped.insert((ns, dev.to_string()));
    }

    /// Caps each direction of every node's link on `net` at `mbit` Mbit/s:
    /// an htb qdisc (`root handle 1: htb default 10`, one class
    /// `1:10 rate ceil {mbit}mbit`, a burst of 64 KiB + 2 frames so that one
    /// GSO super-packet passes whole) on both veth ends of every node. htb
    /// counts Ethernet, IP and TCP headers: TCP goodput is about 0.95 of
    /// the cap.
    pub fn rate_limit(&mut self, net: &Network, mbit: u32) {
        for end in &net.ends {
            for (ns, dev) in [(&end.ns, &end.dev), (&end.peer_ns, &end.peer)] {
                if !self.shaped.insert((ns.clone(), dev.clone())) {
                    // A pair: the other node's end is its own end too.
                    continue;
                }
                htb(ns, dev, mbit);
            }
        }
    }

    /// Puts a delaying router on node `node`'s link on `net`: every frame
    /// to and from `node` waits `delay` in each direction (RTT grows by
    /// 2 × delay). On a pair that is the link between its two nodes; on a
    /// bridge network it is the link between `node` and the bridge (so
    /// `node`'s traffic with every other node on it). L2: addresses and
    /// names stay; the node's veth (and on a pair the other node's) is made
    /// anew, so call this before [`Links::set_mtu`] and
    /// [`Links::rate_limit`] on that link (it panics otherwise).
    ///
    /// The router is a namespace with two TAP devices, each bridged with a
    /// veth to one side; per direction one thread reads frames and stamps
    /// them with their deadline (arrival + `delay`) and another writes them
    /// to the other TAP at their deadline, in order.
    pub fn delay(&mut self, net: &mut Network, node: usize, delay: Duration) {
        let k = self.next_router;
        self.next_router += 1;
        let i = net
            .ends
            .iter()
            .position(|e| e.node == node)
            .unwrap_or_else(|| panic!("node {node} is not on 10.232.{}.0/24", net.subnet));
        let end = net.ends[i].clone();
        for (ns, dev) in [(&end.ns, &end.dev), (&end.peer_ns, &end.peer)] {
            assert!(
                !self.shaped.contains(&(ns.clone(), dev.clone())),
                "delay() rebuilds {dev} in {ns}: call it before set_mtu and rate_limit"
            );
        }
        let r = self.add_namespace(&format!("r{k}"));
        // The old link goes (deleting one end of a veth deletes both).
        sh("ip", &["-n", &end.ns, "link", "del", &end.dev]);
        // Side a: towards `node`; side b: towards the bridge or the other node.
        let a = self.node_veth(node, &end.dev, net.subnet, &r, "va");
        match &net.bridge_ns {
            Some(br) => {
                sh(
                    "ip",
                    &[
                        "-n", br, "link", "add", &end.peer, "type", "veth", "peer", "name", "vb",
                        "netns", &r,
                    ],
                );
                sh(
                    "ip",
                    &["-n", br, "link", "set", &end.peer, "master", "br0", "up"],
                );
            }
            None => {
                let j = 1 - i;
                let other = net.ends[j].clone();
                let b = self.node_veth(other.node, &other.dev, net.subnet, &r, "vb");
                net.ends[j] = b;
            }
        }
        net.ends[i] = a;
        let taps = [tap(&r, "tapa"), tap(&r, "tapb")];
        for (side, tap_name) in [("a", "tapa"), ("b", "tapb")] {
            let br = format!("br{side}");
            bridge(&r, &br);
            sh(
                "ip",
                &["-n", &r, "link", "set", tap_name, "master", &br, "up"],
            );
            sh(
                "ip",
                &[
                    "-n",
                    &r,
                    "link",
                    "set",
                    &format!("v{side}"),
                    "master",
                    &br,
                    "up",
                ],
            );
        }
        let [ta, tb] = taps.map(Arc::new);
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for (from, to) in [(Arc::clone(&ta), Arc::clone(&tb)), (tb, ta)] {
            threads.extend(forward(from, to, delay, &stop, &self.threads));
        }
        self.routers.push(Router { stop, threads });
    }
}

fn bridge(ns: &str, name: &str) {
    sh("ip", &["-n", ns, "link", "add", name, "type", "bridge"]);
    // Set by hand, the bridge keeps its MTU whatever its ports' are.
    sh("ip", &["-n", ns, "link", "set", name, "mtu", "1500", "up"]);
}

/// An htb qdisc on `dev` in `ns` holding its egress to `mbit`.
pub fn htb(ns: &str, dev: &str, mbit: u32) {
    // 64 KiB (a GSO super-packet) + two full frames.
    let burst = (65536 + 2 * 1514).to_string();
    sh(
        "tc",
        &[
            "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10",
        ],
    );
    sh(
        "tc",
        &[
            "-n",
            ns,
            "class",
            "add",
            "dev",
            dev,
            "parent",
            "1:",
            "classid",
            "1:10",
            "htb",
            "rate",
            &format!("{mbit}mbit"),
            "ceil",
            &format!("{mbit}mbit"),
            "burst",
            &burst,
            "cburst",
            &burst,
        ],
    );
}

/// Runs `f` on a thread that joined network namespace `ns` (setns on
/// /run/netns/NS): sockets and TAP devices it makes belong to `ns`, and
/// stay there when used from other threads. The test's own threads never
/// change namespace.
pub fn in_namespace<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let target = File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        // SAFETY: setns on a namespace file this thread opened; the thread
        // ends after `f`, so nothing else runs in that namespace.
        if unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            panic!("setns {path}: {}", std::io::Error::last_os_error());
        }
        f()
    })
    .join()
    .unwrap()
}

/// A TAP device `name` (IFF_TAP | IFF_NO_PI) in namespace `ns`, down,
/// alive while the returned file is open. /dev/net/tun is opened and
/// TUNSETIFF done in [`in_namespace`]: a device is made in the namespace
/// of the thread that opens the file, not the test's own.
fn tap(ns: &str, name: &str) -> File {
    assert!(name.len() < libc::IFNAMSIZ);
    let owned = name.to_string();
    let made = in_namespace(ns, move || -> std::io::Result<File> {
        let tun = File::options()
            .read(true)
            .write(true)
            .open("/dev/net/tun")?;
        // SAFETY: an all-zero ifreq is valid.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (d, s) in req.ifr_name.iter_mut().zip(owned.bytes()) {
            *d = s as libc::c_char;
        }
        req.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: TUNSETIFF reads and writes an ifreq, which `req` is.
        if unsafe { libc::ioctl(tun.as_raw_fd(), libc::TUNSETIFF, &mut req) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(tun)
    });
    made.unwrap_or_else(|e| panic!("cannot make TAP {name:?} in {ns}: {e}"))
}

/// Network namespaces of a test's own, named `<tag>-<i>` (a tag like
/// [`Links::tag`]'s, `pvn` instead of `pvl`), with `lo` up and nothing
/// else: nodes for a [`Links`] without a whole cluster. Deleted (after
/// killing what runs in them) by `Drop`.
pub struct Namespaces {
    pub tag: String,
    pub names: Vec<String>,
}

impl Namespaces {
    pub fn new(count: usize) -> Self {
        let mut made = Namespaces {
            tag: format!(
                "pvn{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            names: Vec::new(),
        };
        for i in 0..count {
            let ns = format!("{}-{i}", made.tag);
            sh("ip", &["netns", "add", &ns]);
            made.names.push(ns.clone());
            sh("ip", &["-n", &ns, "link", "set", "lo", "up"]);
        }
        made
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.names {
            kill_all(ns);
        }
        for ns in self.names.iter().rev() {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

struct Router {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// Counts a running router thread while alive.
struct Running(Arc<AtomicUsize>);

impl Running {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Running(Arc::clone(count))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

type Queue = Arc<(Mutex<VecDeque<(Instant, Vec<u8>)>>, Condvar)>;

/// One direction of a router: a reader that stamps each frame read from
/// `from` with its deadline, a writer that writes it to `to` then.
fn forward(
    from: Arc<File>,
    to: Arc<File>,
    delay: Duration,
    stop: &Arc<AtomicBool>,
    count: &Arc<AtomicUsize>,
) -> [JoinHandle<()>; 2] {
    let queue: Queue = Arc::new((Mutex::new(VecDeque::new()), Condvar::new()));
    let reader = {
        let (queue, stop) = (Arc::clone(&queue), Arc::clone(stop));
        let running = Running::new(count);
        std::thread::spawn(move || {
            let _running = running;
            let mut buf = vec![0u8; 65536];
            let mut fds = [libc::pollfd {
                fd: from.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            while !stop.load(Ordering::Relaxed) {
                // SAFETY: one pollfd, which `fds` is.
                let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, 20) };
                if ready <= 0 {
                    continue;
                }
                let Ok(n) = (&*from).read(&mut buf) else {
                    continue;
                };
                let deadline = Instant::now() + delay;
                let (lock, wake) = &*queue;
                lock.lock()
                    .unwrap()
                    .push_back((deadline, buf[..n].to_vec()));
                wake.notify_one();
            }
        })
    };
    let writer = {
        let stop = Arc::clone(stop);
        let running = Running::new(count);
        std::thread::spawn(move || {
            let _running = running;
            let (lock, wake) = &*queue;
            while !stop.load(Ordering::Relaxed) {
                let next = {
                    let mut q = lock.lock().unwrap();
                    if q.is_empty() {
                        q = wake.wait_timeout(q, Duration::from_millis(20)).unwrap().0;
                    }
                    q.pop_front()
                };
                let Some((deadline, frame)) = next else {
                    continue;
                };
                let now = Instant::now();
                if deadline > now {
                    std::thread::sleep(deadline - now);
                }
                let _ = (&*to).write(&frame);
            }
        })
    };
    [reader, writer]
}

impl Drop for Links {
    fn drop(&mut self) {
        for router in &mut self.routers {
            router.stop.store(true, Ordering::Relaxed);
        }
        // Joining closes the TAPs (the threads hold the last references),
        // which removes them.
        for router in &mut self.routers {
            for t in router.threads.drain(..) {
                let _ = t.join();
            }
        }
        for ns in &self.namespaces {
            kill_all(ns);
        }
        for (ns, dev) in &self.node_devices {
            let _ = Command::new("ip")
                .args(["-n", ns, "link", "del", dev])
                .stderr(Stdio::null())
                .status();
        }
        for ns in self.namespaces.iter().rev() {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn kill_all(ns: &str) {
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

/// Kills and reaps a child when dropped.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ping -n -c COUNT -i INTERVAL ADDR` in `ns`: the round-trip times of
/// the replies that came (lost ones are missing). Intervals under 0.2 s
/// need root.
pub fn ping(ns: &str, addr: Ipv4Addr, count: u32, interval: Duration) -> Vec<Duration> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "ping", "-n"])
        .args(["-c", &count.to_string()])
        .args(["-i", &format!("{:.3}", interval.as_secs_f64())])
        .args(["-W", "2"])
        .arg(addr.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("cannot run ping (run scripts/install-test-deps)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split("time=").nth(1))
        .filter_map(|t| t.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .collect()
}

/// `ping -n -D -i INTERVAL ADDR` in `ns`, running until [`Pinger::stop`]:
/// for comparing a figure with ping's over the very seconds it was
/// measured in.
pub struct Pinger(Option<Child>);

impl Pinger {
    pub fn start(ns: &str, addr: Ipv4Addr, interval: Duration) -> Pinger {
        let child = Command::new("ip")
            .args(["netns", "exec", ns, "ping", "-n", "-D"])
            .args(["-i", &format!("{:.3}", interval.as_secs_f64())])
            .arg(addr.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot run ping (run scripts/install-test-deps)");
        Pinger(Some(child))
    }

    /// Stops ping (SIGINT, as Ctrl-C; `ip netns exec` execs it) and
    /// returns each reply's wall-clock time (`-D`) with its round trip.
    pub fn stop(mut self) -> Vec<(std::time::SystemTime, Duration)> {
        let child = self.0.take().unwrap();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        );
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(ping_line)
            .collect()
    }
}

impl Drop for Pinger {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `[1733340000.123456] 64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.021 ms`
fn ping_line(l: &str) -> Option<(std::time::SystemTime, Duration)> {
    let stamp: f64 = l.strip_prefix('[')?.split(']').next()?.parse().ok()?;
    let ms: f64 = l
        .split("time=")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((
        std::time::UNIX_EPOCH + Duration::from_secs_f64(stamp),
        Duration::from_secs_f64(ms / 1000.0),
    ))
}

/// True when one ping of `payload` bytes with Don't Fragment set
/// (`ping -M do -s PAYLOAD -c 1 -W 1`) from `ns` to `addr` is answered.
/// The IP packet is `payload + 28` bytes.
pub fn ping_df(ns: &str, addr: Ipv4Addr, payload: u32) -> bool {
    Command::new("ip")
        .args([
            "netns", "exec", ns, "ping", "-n", "-M", "do", "-c", "1", "-W", "1",
        ])
        .args(["-s", &payload.to_string()])
        .arg(addr.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("cannot run ping (run scripts/install-test-deps)")
        .success()
}

static NEXT_PORT: AtomicU32 = AtomicU32::new(0);

/// iperf3 from `client_ns` to a one-off server (`iperf3 -s -1 -B ADDR`) in
/// `server_ns` on `server_addr`, `seconds` long with `streams` TCP streams,
/// the server sending when `reverse`: the receiver's bits per second
/// (`end.sum_received.bits_per_second` of `-J`). The server is killed on
/// return.
pub fn iperf3(
    server_ns: &str,
    client_ns: &str,
    server_addr: Ipv4Addr,
    seconds: u32,
    streams: u32,
    reverse: bool,
) -> f64 {
    let port = (5201 + NEXT_PORT.fetch_add(1, Ordering::Relaxed) % 500).to_string();
    let addr = server_addr.to_string();
    let _server = KillOnDrop(
        Command::new("ip")
            .args(["netns", "exec", server_ns, "iperf3", "-s", "-1"])
            .args(["-B", &addr, "-p", &port])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot run iperf3 (run scripts/install-test-deps)"),
    );
    let start = Instant::now();
    let listen = format!("sport = :{port}");
    while sh("ip", &["netns", "exec", server_ns, "ss", "-Hltn", &listen]).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "iperf3 server did not listen"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut client = Command::new("ip");
    client
        .args(["netns", "exec", client_ns, "iperf3", "-J", "-c", &addr])
        .args(["-p", &port, "-t", &seconds.to_string()])
        .args(["-P", &streams.to_string()]);
    if reverse {
        client.arg("-R");
    }
    let out = client.stdin(Stdio::null()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("iperf3 -J: {e}: {text}"));
    doc["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("no end.sum_received.bits_per_second in {text}"))
}

/// `Udp: InDatagrams` of namespace `ns` (its /proc/net/snmp).
pub fn udp_in_datagrams(ns: &str) -> u64 {
    let text = sh("ip", &["netns", "exec", ns, "cat", "/proc/net/snmp"]);
    let mut udp = text.lines().filter(|l| l.starts_with("Udp: "));
    let (names, values) = (udp.next().unwrap(), udp.next().unwrap());
    let i = names
        .split_whitespace()
        .position(|n| n == "InDatagrams")
        .unwrap();
    values.split_whitespace().nth(i).unwrap().parse().unwrap()
}
