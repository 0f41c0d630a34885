//! `pveprobe cluster --net` and `pveprobe net NODE...`: each node's
//! interfaces first (`net-info`), then every link of every pair of nodes:
//! a responder started on one node over ssh (`net-serve`), the
//! measurement run from the other (`net-probe`), the responder stopped by
//! closing its ssh connection. One pair at a time unless `--parallel`.

use std::net::{IpAddr, SocketAddr};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::facts::NodeFacts;
use super::links::{self, LinkDef, LinkKind};
use super::options::{MAX_LINE, SLACK};
use super::report::{End, NetNode, NetSettings, PairResult, PairStatus};
use super::serve::{DONE_PREFIX, Ready, ServeStats};
use crate::model::hint::Hint;
use crate::model::net::ProbeResult;
use crate::nodes::members::Node;
use crate::nodes::remote::{self, Ssh, Status};
use crate::sys::child;
use crate::sys::conversation::{Conversation, Heard};

/// How the pairs are run.
pub struct Runner<'a> {
    pub ssh: &'a Ssh,
    /// `--remote-command`'s words.
    pub command: Vec<String>,
    pub opts: &'a super::options::Options,
    pub progress: &'a crate::output::progress::Progress,
}

impl Runner<'_> {
    pub(super) fn line(&self, limit: Duration, args: &[String]) -> String {
        remote::timed_line(&self.command, args, limit)
    }

    /// A node's interfaces and knet statistics.
    pub fn node_facts(&self, node: &Node) -> (NetNode, Option<NodeFacts>) {
        let mut out = NetNode {
            name: node.name.clone(),
            address: node.address.clone(),
            status: Status::Offline,
            detail: Some("offline in pmxcfs's members list: not contacted".into()),
            corosync_nodeid: None,
            interfaces: Vec::new(),
            knet: None,
        };
        if !node.contacted() {
            return (out, None);
        }
        let limit = Duration::from_secs(20);
        let line = self.line(limit, &["net-info".into()]);
        let run = child::run(
            remote::SSH,
            &self.ssh.args(node, &line, false),
            &remote::ssh_opts(limit + SLACK),
        );
        let version = env!("CARGO_PKG_VERSION");
        let (facts, (status, detail)) = match remote::answer::<NodeFacts>(&run, limit, "net-info") {
            Ok(f) if f.pveprobe_version == version => (Some(f), (Status::Ok, None)),
            Ok(f) => (
                None,
                (
                    Status::Version,
                    Some(format!(
                        "the node runs pveprobe {}, this is {version}",
                        f.pveprobe_version
                    )),
                ),
            ),
            // An older pveprobe has no net-info: it is another version.
            Err((Status::Error, _))
                if run.as_ref().is_ok_and(|f| {
                    String::from_utf8_lossy(&f.stderr).contains("unrecognized subcommand")
                }) =>
            {
                (
                    None,
                    (
                        Status::Version,
                        Some(format!(
                            "the node's pveprobe has no net-info: it is another version than {version}"
                        )),
                    ),
                )
            }
            Err(failed) => (None, failed),
        };
        out.status = status;
        out.detail = detail;
        if let Some(f) = &facts {
            out.interfaces = f.interfaces.clone();
            out.knet = f.knet.clone();
            if let Some(e) = &f.knet_error {
                out.detail = Some(e.clone());
            }
        }
        (out, facts)
    }

    /// How long the measuring end may take.
    fn probe_limit(&self, throughput: bool) -> Duration {
        let o = self.opts;
        let latency = f64::from(o.net_count) / f64::from(o.net_rate) + 1.0;
        // Two binary searches of about 11 steps, each tried twice, paced.
        let mtu = 2.0 * 12.0 * 2.0 * (0.25 + 1.0 / f64::from(o.net_rate));
        let tcp = if throughput {
            let runs = if o.net_streams > 1 { 4.0 } else { 2.0 };
            runs * (f64::from(o.net_seconds) + 5.0)
        } else {
            0.0
        };
        Duration::from_secs_f64((latency + mtu + tcp).ceil()) + SLACK
    }

    /// One link between two nodes: the responder on `b`, the measurement from `a`.
    pub fn pair(&self, link: &LinkDef, a: End, b: End, throughput: bool) -> PairResult {
        let start = Instant::now();
        let mut result = PairResult::new(&link.name, link.kind, a, b, PairStatus::Ok);
        let (Some(addr_a), Some(addr_b)) = (result.a.address, result.b.address) else {
            return result;
        };

        let limit = self.probe_limit(throughput);
        let lifetime = limit + SLACK + Duration::from_secs(u64::from(self.ssh.connect_timeout));
        let serve_args = self.serve_args(addr_a, addr_b, lifetime);
        let serve_argv = self.ssh.args(
            &result.b.node(),
            &self.line(lifetime + SLACK, &serve_args),
            true,
        );
        let responder = match Responder::start(
            &serve_argv,
            Duration::from_secs(u64::from(self.ssh.connect_timeout)) + SLACK,
        ) {
            Ok(r) => r,
            Err(why) => {
                result.status = PairStatus::NoResponder;
                result.detail = Some(format!("{}: {why}", result.b.node));
                result.seconds = start.elapsed().as_secs_f64();
                return result;
            }
        };
        result.b.dev = result.b.dev.take().or(responder.ready.dev.clone());
        result.b.mtu = result.b.mtu.or(responder.ready.mtu);
        let probe_args = self.probe_args(
            addr_a,
            SocketAddr::new(addr_b, responder.ready.port),
            throughput,
        );
        let line = self.line(limit, &probe_args);
        let run = child::run(
            remote::SSH,
            &self.ssh.args(&result.a.node(), &line, false),
            &remote::ssh_opts(limit + SLACK),
        );
        let probed = remote::answer::<ProbeResult>(&run, limit, "net-probe");
        result.responder = responder.stop();
        read_probe(&mut result, probed);
        if throughput && link.kind == LinkKind::Migration && result.status.measured() {
            let channel = super::secure::Channel {
                ssh: self.ssh,
                command: &self.command,
                opts: self.opts,
            };
            super::secure::secure(&channel, &mut result, addr_a, addr_b);
        }
        result.seconds = start.elapsed().as_secs_f64();
        result
    }

    /// `net-serve`'s arguments: bound to `b`, answering `a` only.
    fn serve_args(
        &self,
        a: std::net::IpAddr,
        b: std::net::IpAddr,
        lifetime: Duration,
    ) -> Vec<String> {
        let o = self.opts;
        vec![
            "net-serve".to_string(),
            "--bind".into(),
            b.to_string(),
            "--peer".into(),
            a.to_string(),
            "--port".into(),
            o.port.unwrap_or(0).to_string(),
            "--lifetime".into(),
            lifetime.as_secs().to_string(),
            "--max-rate".into(),
            o.net_rate.to_string(),
        ]
    }

    /// `net-probe`'s arguments: from `a` to the responder at `to`.
    fn probe_args(&self, a: std::net::IpAddr, to: SocketAddr, throughput: bool) -> Vec<String> {
        let o = self.opts;
        let mut args = vec![
            "net-probe".to_string(),
            "--from".into(),
            a.to_string(),
            "--to".into(),
            to.to_string(),
            "--count".into(),
            o.net_count.to_string(),
            "--rate".into(),
            o.net_rate.to_string(),
            "--mtu".into(),
        ];
        if throughput {
            args.extend([
                "--throughput-seconds".into(),
                o.net_seconds.to_string(),
                "--streams".into(),
                o.net_streams.to_string(),
            ]);
        }
        args
    }
}

/// What the measuring end said, into the pair's result.
fn read_probe(result: &mut PairResult, probed: Result<ProbeResult, (Status, Option<String>)>) {
    match probed {
        Err((status, detail)) => {
            result.status = PairStatus::Failed;
            result.detail = Some(format!(
                "{} ({}): {}",
                result.a.node,
                status.word(),
                detail.unwrap_or_default()
            ));
        }
        Ok(probe) => {
            result.a.dev = result.a.dev.take().or(probe.dev.clone());
            result.a.mtu = result.a.mtu.or(probe.mtu);
            if probe
                .latency
                .as_ref()
                .is_some_and(|l| l.sent > 0 && l.received == 0)
            {
                result.status = PairStatus::NoAnswer;
                result.detail = Some(format!(
                    "{}'s responder answered none of {} probes",
                    result.b.node,
                    probe.latency.as_ref().map_or(0, |l| l.sent)
                ));
            } else if !probe.errors.is_empty() {
                result.status = PairStatus::Partial;
                result.detail = Some(probe.errors.join("; "));
            }
            result.latency = probe.latency;
            result.path_mtu = probe.path_mtu;
            result.throughput = probe.throughput;
        }
    }
}

/// A running `net-serve` on a node, through its ssh: a conversation
/// (`sys::conversation`) whose first line says it is ready and whose last
/// says what it counted.
struct Responder {
    conversation: Conversation,
    lines: mpsc::Receiver<Heard>,
    ready: Ready,
}

impl Responder {
    /// Starts it and waits for its ready line.
    fn start(args: &[std::ffi::OsString], wait: Duration) -> Result<Responder, String> {
        let program = remote::SSH;
        let (tx, lines) = mpsc::channel();
        let conversation =
            Conversation::start(Command::new(program).args(args), 0, MAX_LINE, tx)
                .map_err(|e| format!("cannot run ssh: {}", crate::error::describe(&e)))?;
        let failed = |conversation: Conversation, why: &str| -> String {
            let said = conversation.finish(Duration::ZERO).stderr;
            match String::from_utf8_lossy(&said)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
            {
                Some(l) => format!("{why}: {}", l.trim()),
                None => why.to_string(),
            }
        };
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok((_, Some(line))) => {
                    if let Some(ready) = Ready::parse(&line) {
                        return Ok(Responder {
                            conversation,
                            lines,
                            ready,
                        });
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(failed(
                        conversation,
                        &format!(
                            "the responder was not ready within {:.0} s",
                            wait.as_secs_f64()
                        ),
                    ));
                }
                Ok((_, None)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(failed(conversation, "the responder did not start"));
                }
            }
        }
    }

    /// Closes its stdin (it exits, and its ssh with it) and reads what it counted.
    fn stop(mut self) -> Option<ServeStats> {
        self.conversation.close();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut stats = None;
        while let Ok((_, Some(line))) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if let Some(json) = line.trim().strip_prefix(DONE_PREFIX) {
                stats = serde_json::from_str(json.trim()).ok();
                break;
            }
        }
        self.conversation
            .finish(deadline.saturating_duration_since(Instant::now()));
        stats
    }
}

/// The node's end of a link, before measuring.
pub fn end_of(
    link: &LinkDef,
    node: &Node,
    corosync: Option<&pveprobe_parse::corosync::CorosyncConf>,
    facts: Option<&NodeFacts>,
) -> (End, Option<String>) {
    let ifaces = facts.map(|f| f.interfaces.as_slice());
    let mut end = End {
        node: node.name.clone(),
        node_address: node.address.clone(),
        ..End::default()
    };
    match links::address(link, node, corosync, ifaces) {
        Ok(ip) => {
            end.address = Some(ip);
            if let Some(i) = ifaces.and_then(|i| crate::nodes::iface::holding(i, ip)) {
                end.dev = Some(i.name.clone());
                end.mtu = i.mtu;
            }
            (end, None)
        }
        Err(why) => (end, Some(why)),
    }
}

/// The corosync addresses of a node (all its links).
pub fn corosync_addresses(
    node: &str,
    corosync: Option<&pveprobe_parse::corosync::CorosyncConf>,
) -> Vec<IpAddr> {
    corosync
        .and_then(|c| c.node(node))
        .map(|n| {
            n.addresses
                .values()
                .filter_map(|a| a.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Each node's interfaces (`net-info`), in order.
pub fn gather(runner: &Runner, nodes: &[Node]) -> (Vec<NetNode>, Vec<Option<NodeFacts>>) {
    nodes
        .iter()
        .map(|node| {
            let (n, f) = runner.node_facts(node);
            runner
                .progress
                .step(&format!("{}: {}", node.name, n.status.word()));
            (n, f)
        })
        .unzip()
}

/// Measures every link of every pair; `nodes` are those chosen, in order,
/// with what [`gather`] found. Also the cluster-wide hints.
pub fn measure(
    runner: &Runner,
    nodes: &[Node],
    net_nodes: &[NetNode],
    facts: &[Option<NodeFacts>],
    link_defs: &[LinkDef],
    corosync: Option<&pveprobe_parse::corosync::CorosyncConf>,
    parallel: bool,
) -> (Vec<PairResult>, Vec<Hint>) {
    let tell = |what: &str| runner.progress.step(what);
    let mut hints = Vec::new();
    // Corosync sharing an interface or subnet with bulk traffic.
    for (i, node) in nodes.iter().enumerate() {
        let Some(f) = &facts[i] else { continue };
        let coro = corosync_addresses(&node.name, corosync);
        for link in link_defs.iter().filter(|l| l.kind.is_bulk()) {
            if let Ok(ip) = links::address(link, node, corosync, Some(&f.interfaces))
                && let Some(how) = crate::nodes::iface::shares_with(ip, &coro, &f.interfaces)
            {
                hints.push(Hint::new(
                    "corosync-shares-network",
                    node.name.clone(),
                    format!(
                        "corosync shares {how} with {} traffic ({}); the PVE docs want corosync on a network of its own",
                        link.kind.word(),
                        link.name
                    ),
                ));
            }
        }
    }
    let mut jobs = Vec::new();
    for link in link_defs {
        for i in 0..nodes.len() {
            for j in i + 1..nodes.len() {
                jobs.push((link, i, j));
            }
        }
    }
    let total = jobs.len();
    let one = |(k, (link, i, j)): (usize, &(&LinkDef, usize, usize))| -> PairResult {
        let (link, i, j) = (*link, *i, *j);
        let (a, why_a) = end_of(link, &nodes[i], corosync, facts[i].as_ref());
        let (b, why_b) = end_of(link, &nodes[j], corosync, facts[j].as_ref());
        let down = [(i, &a), (j, &b)]
            .into_iter()
            .find(|(x, _)| !net_nodes[*x].status.answered())
            .map(|(x, e)| format!("{} {}", e.node, net_nodes[x].status.word()));
        let throughput = runner.opts.net_throughput && link.kind != LinkKind::Corosync;
        let mut r = PairResult::new(
            &link.name,
            link.kind,
            a.clone(),
            b.clone(),
            PairStatus::NotOnLink,
        );
        if let Some(why) = down {
            r.status = PairStatus::NodeDown;
            r.detail = Some(why);
        } else if let Some(why) = why_a.or(why_b) {
            r.detail = Some(why);
        } else {
            tell(&format!(
                "{} {}-{}: measuring ({} of {total})",
                link.name,
                a.node,
                b.node,
                k + 1
            ));
            r = runner.pair(link, a, b, throughput);
        }
        if r.status.measured() {
            if link.kind == LinkKind::Corosync {
                r.throughput_skipped = Some("corosync link: latency and MTU probes only".into());
            } else if !runner.opts.net_throughput {
                r.throughput_skipped = Some("not asked (--net-throughput)".into());
            }
        }
        r.hints = r.hints_of();
        r
    };
    let pairs = if parallel {
        std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .iter()
                .enumerate()
                .map(|job| s.spawn(move || one(job)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a pair's thread does not panic"))
                .collect()
        })
    } else {
        jobs.iter().enumerate().map(one).collect()
    };
    (pairs, hints)
}

/// Whether `--parallel --net-throughput` is refused: a throughput link
/// that shares an interface with corosync on some node.
pub fn parallel_throughput_refused(
    nodes: &[Node],
    facts: &[Option<NodeFacts>],
    link_defs: &[LinkDef],
    corosync: Option<&pveprobe_parse::corosync::CorosyncConf>,
) -> Option<String> {
    for (node, f) in nodes.iter().zip(facts) {
        let Some(f) = f else { continue };
        let coro = corosync_addresses(&node.name, corosync);
        for link in link_defs.iter().filter(|l| l.kind.is_bulk()) {
            if let Ok(ip) = links::address(link, node, corosync, Some(&f.interfaces))
                && let Some(how) = crate::nodes::iface::shares_with(ip, &coro, &f.interfaces)
            {
                return Some(format!(
                    "{} on {}: corosync shares {how}",
                    link.name, node.name
                ));
            }
        }
    }
    None
}

/// The run's settings, as the report records them.
pub fn settings(opts: &super::options::Options, parallel: bool) -> NetSettings {
    NetSettings {
        count: opts.net_count,
        rate_pps: opts.net_rate,
        throughput: opts.net_throughput,
        seconds: opts.net_seconds,
        streams: opts.net_streams,
        parallel,
        port: opts.port,
    }
}
