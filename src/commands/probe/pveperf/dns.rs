//! DNS EXT and DNS INT: mean milliseconds per A query for fresh random
//! names, against the name servers of resolv.conf, as pveperf measures them.
//!
//! The test stops after 101 queries or once the window has passed (checked
//! after each answer or timeout, as pveperf does). How a query waits for
//! its answer is the [`Schedule`]:
//!
//! - [`Schedule::Bounded`] (pveprobe's default): each server in file order,
//!   on a connected socket, for at most `timeout`; a closed port is known
//!   at once ("refused"); the line never runs longer than the window plus
//!   one timeout. Answers are matched by source, id and question.
//! - [`Schedule::Pveperf`]: Net::DNS's UDP send loop with pveperf's
//!   arguments (`retrans => 0, retry => 1`, so one round of one second):
//!   each server in turn gets a fresh unconnected socket and `1 s / number
//!   of servers` to answer, while the sockets of the servers asked before
//!   it keep listening; a packet that is not the answer (no QR bit, another
//!   id) restarts the wait; an answer whose rcode is neither NOERROR nor
//!   NXDOMAIN moves on to the next server. An unconnected socket never
//!   learns that a port is closed, so a dead server costs its whole share.
//!
//! Garbage, stale or spoofed replies are ignored, never counted; each
//! server's own counts are kept, so a dead first server is named rather
//! than hidden in the mean.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::AsFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hickory_proto::op::{Message, MessageType, OpCode, Query};
use hickory_proto::rr::{Name, RecordType};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use rand::RngExt;

use crate::error::{IoContext, ProbeError};
use crate::measure::window::Window;
use crate::model::dns::{DnsFigure, Schedule, ServerStats};
use crate::sys::interrupt::Interrupt;
use pveprobe_parse::dns::{is_answer, netdns_accepts};

/// pveperf stops once more than 100 queries were sent.
pub const MAX_QUERIES: u32 = 101;
/// How long one wait on the socket lasts before the interrupt flag is checked.
const POLL_SLICE: Duration = Duration::from_millis(50);
/// Net::DNS's one round with pveperf's `retrans => 0` (`retrans || 1` seconds),
/// shared among the servers.
pub const NETDNS_ROUND: Duration = Duration::from_secs(1);
/// Net::DNS reads at most this many bytes of a UDP reply (PACKETSZ).
const NETDNS_PACKETSZ: usize = 512;

/// Names for DNS EXT: `test<random>.nonexistent<time><random>.com`, one
/// domain per run and a fresh first label per query.
pub fn external_names() -> impl FnMut() -> String {
    let mut rng = rand::rng();
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let domain = format!("nonexistent{unix}{}.com", rng.random_range(0..1_000_000u32));
    move || format!("test{}.{domain}", rng.random_range(0..1_000_000u32))
}

/// Names for DNS INT: `test<random>.<domain>`.
pub fn internal_names(domain: &str) -> impl FnMut() -> String + use<> {
    let mut rng = rand::rng();
    let domain = domain.to_string();
    move || format!("test{}.{domain}", rng.random_range(0..1_000_000u32))
}

/// A UDP socket bound to any address of `addr`'s family.
fn udp_socket(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    let local: SocketAddr = match addr {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    UdpSocket::bind(local)
}

fn connect(addr: SocketAddr) -> Result<UdpSocket, ProbeError> {
    let socket = udp_socket(addr).context(|| format!("cannot open a UDP socket for {addr}"))?;
    socket
        .connect(addr)
        .context(|| format!("cannot reach name server {addr}"))?;
    Ok(socket)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    Answered,
    TimedOut,
    Refused,
}

fn encode_query(name: &Name, id: u16) -> Result<Vec<u8>, ProbeError> {
    let mut msg = Message::new(id, MessageType::Query, OpCode::Query);
    msg.metadata.recursion_desired = true;
    msg.add_query(Query::query(name.clone(), RecordType::A));
    msg.to_vec()
        .map_err(|e| ProbeError::Unavailable(format!("cannot encode a DNS query: {e}")))
}

/// A poll timeout of at least `wait`, rounded up to whole milliseconds.
fn poll_timeout(wait: Duration) -> PollTimeout {
    let ms = wait.as_micros().div_ceil(1000).clamp(1, 60_000) as u16;
    PollTimeout::from(ms)
}

/// One query in the bounded schedule: each server in turn, connected.
fn ask(
    socket: &UdpSocket,
    stats: &mut ServerStats,
    query: &[u8],
    id: u16,
    name: &Name,
    until: Instant,
    interrupt: &Interrupt,
) -> Result<Reply, ProbeError> {
    let sent = Instant::now();
    stats.sent += 1;
    let refused = |stats: &mut ServerStats| {
        stats.refused += 1;
        Ok(Reply::Refused)
    };
    match socket.send(query) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return refused(stats),
        Err(e) => return Err(ProbeError::io(format!("cannot send to {}", stats.addr), e)),
    }
    let mut buf = [0u8; 4096];
    loop {
        interrupt.check()?;
        let now = Instant::now();
        if now >= until {
            return Ok(Reply::TimedOut);
        }
        let wait = (until - now).min(POLL_SLICE).max(Duration::from_millis(1));
        socket
            .set_read_timeout(Some(wait))
            .context(|| "setting a socket timeout".into())?;
        match socket.recv(&mut buf) {
            Ok(n) if is_answer(&buf[..n], id, name) => {
                stats.answered += 1;
                stats.answer_time += sent.elapsed();
                return Ok(Reply::Answered);
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => return refused(stats),
            Err(e) => {
                return Err(ProbeError::io(
                    format!("cannot receive from {}", stats.addr),
                    e,
                ));
            }
        }
    }
}

/// One query in the pveperf schedule: Net::DNS's `_send_udp` with one
/// round (retry 1) of one second (retrans 0 counts as 1) shared by the
/// servers. Stops early at `hard_stop`, which only a flood of unaccepted
/// packets can reach.
fn ask_as_netdns(
    servers: &mut [ServerStats],
    query: &[u8],
    id: u16,
    hard_stop: Instant,
    interrupt: &Interrupt,
) -> Result<Reply, ProbeError> {
    let share = NETDNS_ROUND / servers.len().max(1) as u32;
    // The sockets of the servers asked so far: (server, socket, sent at).
    let mut asked: Vec<(usize, UdpSocket, Instant)> = Vec::with_capacity(servers.len());
    let mut buf = [0u8; NETDNS_PACKETSZ];
    let mut fallback = false;
    for index in 0..servers.len() {
        let addr = servers[index].addr;
        // Net::DNS skips a server whose socket cannot be made.
        let Ok(socket) = udp_socket(addr) else {
            continue;
        };
        servers[index].sent += 1;
        if socket.send_to(query, addr).is_err() {
            // Net::DNS notes the error and waits all the same.
            servers[index].refused += 1;
        }
        asked.push((index, socket, Instant::now()));
        let mut deadline = Instant::now() + share;
        loop {
            interrupt.check()?;
            let now = Instant::now();
            let until = deadline.min(hard_stop);
            if now >= until {
                break;
            }
            let mut fds: Vec<PollFd> = asked
                .iter()
                .map(|(_, s, _)| PollFd::new(s.as_fd(), PollFlags::POLLIN))
                .collect();
            let ready = match poll(&mut fds, poll_timeout((until - now).min(POLL_SLICE))) {
                Ok(n) => n,
                Err(nix::errno::Errno::EINTR) => 0,
                Err(e) => return Err(ProbeError::io("poll on DNS sockets", e.into())),
            };
            if ready == 0 {
                continue;
            }
            let Some(first) = fds.iter().position(|fd| {
                fd.revents()
                    .is_some_and(|r| r.intersects(PollFlags::POLLIN | PollFlags::POLLERR))
            }) else {
                continue;
            };
            drop(fds);
            let (server, socket, sent) = &asked[first];
            let received = match socket.recv_from(&mut buf) {
                Ok((n, _)) => netdns_accepts(&buf[..n], id),
                Err(_) => None,
            };
            match received {
                Some(ends_query) => {
                    servers[*server].answered += 1;
                    servers[*server].answer_time += sent.elapsed();
                    if ends_query {
                        return Ok(Reply::Answered);
                    }
                    // SERVFAIL, REFUSED...: Net::DNS keeps it and asks the next server.
                    fallback = true;
                    break;
                }
                // Not the answer: Net::DNS waits its whole share again.
                None => deadline = Instant::now() + share,
            }
        }
    }
    Ok(if fallback {
        Reply::Answered
    } else {
        Reply::TimedOut
    })
}

/// Runs the query loop against `servers` with names from `next_name`.
/// `timeout` is the bounded schedule's wait per server; the pveperf
/// schedule waits as Net::DNS does.
pub fn measure(
    servers: &[SocketAddr],
    domain: Option<&str>,
    mut next_name: impl FnMut() -> String,
    length: Duration,
    timeout: Duration,
    schedule: Schedule,
    interrupt: &Interrupt,
) -> Result<DnsFigure, ProbeError> {
    if servers.is_empty() {
        return Err(ProbeError::Unavailable("no name server to ask".into()));
    }
    let connected = match schedule {
        Schedule::Bounded => servers
            .iter()
            .map(|a| connect(*a))
            .collect::<Result<Vec<_>, _>>()?,
        Schedule::Pveperf => Vec::new(),
    };
    let timeout = match schedule {
        Schedule::Bounded => timeout,
        Schedule::Pveperf => NETDNS_ROUND,
    };
    let mut rng = rand::rng();
    let mut figure = DnsFigure {
        domain: domain.map(str::to_string),
        servers: servers.iter().map(|a| ServerStats::new(*a)).collect(),
        queries: 0,
        answered: 0,
        timed_out: 0,
        refused: 0,
        elapsed: Duration::ZERO,
        timeout,
    };
    let window = Window::start(length);
    let hard_stop = window.end() + timeout;
    loop {
        let text = next_name();
        // A search domain may end in a dot; the query name is absolute either way.
        let fqdn = format!("{}.", text.trim_end_matches('.'));
        let name = Name::from_ascii(&fqdn).map_err(|e| {
            ProbeError::Unavailable(format!("cannot query {text:?}: not a valid DNS name ({e})"))
        })?;
        let id: u16 = rng.random();
        let query = encode_query(&name, id)?;
        let reply = match schedule {
            Schedule::Bounded => {
                let mut reply = Reply::TimedOut;
                for (socket, stats) in connected.iter().zip(figure.servers.iter_mut()) {
                    let until = (Instant::now() + timeout).min(hard_stop);
                    reply = ask(socket, stats, &query, id, &name, until, interrupt)?;
                    if reply == Reply::Answered {
                        break;
                    }
                }
                reply
            }
            Schedule::Pveperf => {
                ask_as_netdns(&mut figure.servers, &query, id, hard_stop, interrupt)?
            }
        };
        figure.queries += 1;
        match reply {
            Reply::Answered => figure.answered += 1,
            Reply::TimedOut => figure.timed_out += 1,
            Reply::Refused => figure.refused += 1,
        }
        if figure.queries >= MAX_QUERIES || window.is_over() || Instant::now() >= hard_stop {
            break;
        }
    }
    figure.elapsed = window.elapsed();
    Ok(figure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_waits_at_least_the_time_left() {
        assert_eq!(poll_timeout(Duration::from_micros(1)).as_millis(), Some(1));
        assert_eq!(
            poll_timeout(Duration::from_micros(1001)).as_millis(),
            Some(2)
        );
        assert_eq!(
            poll_timeout(Duration::from_millis(50)).as_millis(),
            Some(50)
        );
    }

    #[test]
    fn names_look_like_pveperf_names() {
        let mut ext = external_names();
        let (a, b) = (ext(), ext());
        let re = regex::Regex::new(r"^test\d{1,6}\.nonexistent\d+\.com$").unwrap();
        assert!(re.is_match(&a) && re.is_match(&b), "{a} {b}");
        assert_eq!(
            a.split_once('.').unwrap().1,
            b.split_once('.').unwrap().1,
            "one domain per run"
        );
        let mut int = internal_names("pve.example");
        assert!(int().ends_with(".pve.example"));
    }
}
