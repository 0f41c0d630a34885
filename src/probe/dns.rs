//! DNS EXT and DNS INT: mean milliseconds per A query for fresh random
//! names, against the name servers of resolv.conf, as pveperf measures them.
//!
//! Each query gets at most `timeout` per server (servers tried in file
//! order); the test stops after 101 queries or once the window has passed,
//! and never runs longer than the window plus one timeout. Answers are
//! matched by source (a connected socket), id and question; anything else
//! (garbage, stale or spoofed replies) is ignored, not counted.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hickory_proto::op::{Message, MessageType, OpCode, Query};
use hickory_proto::rr::{Name, RecordType};
use rand::RngExt;

use crate::error::{IoContext, ProbeError};
use crate::window::{Interrupt, Window};

/// pveperf stops once more than 100 queries were sent.
pub const MAX_QUERIES: u32 = 101;
/// How long one wait on the socket lasts before the interrupt flag is checked.
const POLL_SLICE: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, PartialEq)]
pub struct DnsFigure {
    /// The search domain queried (DNS INT), or `None` for DNS EXT.
    pub domain: Option<String>,
    pub servers: Vec<SocketAddr>,
    pub queries: u32,
    pub answered: u32,
    pub timed_out: u32,
    pub refused: u32,
    pub elapsed: Duration,
    pub timeout: Duration,
}

impl DnsFigure {
    /// Mean wall-clock milliseconds per query, timeouts included (pveperf's figure).
    pub fn mean_ms(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.elapsed.as_secs_f64() * 1000.0 / f64::from(self.queries)
        }
    }

    /// True when no server answered any query: there is no figure to print.
    pub fn no_answer(&self) -> bool {
        self.answered == 0
    }
}

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

struct Server {
    addr: SocketAddr,
    socket: UdpSocket,
}

fn connect(addr: SocketAddr) -> Result<Server, ProbeError> {
    let local: SocketAddr = match addr {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket =
        UdpSocket::bind(local).context(|| format!("cannot open a UDP socket for {addr}"))?;
    socket
        .connect(addr)
        .context(|| format!("cannot reach name server {addr}"))?;
    Ok(Server { addr, socket })
}

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

/// True when `packet` is the answer to our query `id` for `name`.
pub fn is_answer(packet: &[u8], id: u16, name: &Name) -> bool {
    match Message::from_vec(packet) {
        Ok(msg) => {
            msg.metadata.id == id
                && msg.metadata.message_type == MessageType::Response
                && msg.queries.len() == 1
                && msg.queries[0].name() == name
                && msg.queries[0].query_type() == RecordType::A
        }
        Err(_) => false,
    }
}

fn ask(
    server: &Server,
    query: &[u8],
    id: u16,
    name: &Name,
    until: Instant,
    interrupt: &Interrupt,
) -> Result<Reply, ProbeError> {
    match server.socket.send(query) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return Ok(Reply::Refused),
        Err(e) => return Err(ProbeError::io(format!("cannot send to {}", server.addr), e)),
    }
    let mut buf = [0u8; 4096];
    loop {
        interrupt.check()?;
        let now = Instant::now();
        if now >= until {
            return Ok(Reply::TimedOut);
        }
        let wait = (until - now).min(POLL_SLICE).max(Duration::from_millis(1));
        server
            .socket
            .set_read_timeout(Some(wait))
            .context(|| "setting a socket timeout".into())?;
        match server.socket.recv(&mut buf) {
            Ok(n) if is_answer(&buf[..n], id, name) => return Ok(Reply::Answered),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => return Ok(Reply::Refused),
            Err(e) => {
                return Err(ProbeError::io(
                    format!("cannot receive from {}", server.addr),
                    e,
                ));
            }
        }
    }
}

/// Runs the query loop against `servers` with names from `next_name`.
pub fn measure(
    servers: &[SocketAddr],
    domain: Option<&str>,
    mut next_name: impl FnMut() -> String,
    length: Duration,
    timeout: Duration,
    interrupt: &Interrupt,
) -> Result<DnsFigure, ProbeError> {
    if servers.is_empty() {
        return Err(ProbeError::Unavailable("no name server to ask".into()));
    }
    let sockets = servers
        .iter()
        .map(|a| connect(*a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rng = rand::rng();
    let mut figure = DnsFigure {
        domain: domain.map(str::to_string),
        servers: servers.to_vec(),
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
        let name = Name::from_ascii(format!("{text}.")).map_err(|e| {
            ProbeError::Unavailable(format!("cannot query {text:?}: not a valid DNS name ({e})"))
        })?;
        let id: u16 = rng.random();
        let query = encode_query(&name, id)?;
        let mut reply = Reply::TimedOut;
        for server in &sockets {
            let until = (Instant::now() + timeout).min(hard_stop);
            reply = ask(server, &query, id, &name, until, interrupt)?;
            if matches!(reply, Reply::Answered) {
                break;
            }
        }
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

    fn response_to(query: &[u8]) -> Message {
        let q = Message::from_vec(query).unwrap();
        let mut r = Message::new(q.metadata.id, MessageType::Response, OpCode::Query);
        r.add_query(q.queries[0].clone());
        r
    }

    #[test]
    fn matches_only_our_answer() {
        let name = Name::from_ascii("test1.example.com.").unwrap();
        let query = encode_query(&name, 4242).unwrap();
        let good = response_to(&query).to_vec().unwrap();
        assert!(is_answer(&good, 4242, &name));
        assert!(!is_answer(&good, 4243, &name), "wrong id");
        let other = Name::from_ascii("test2.example.com.").unwrap();
        assert!(!is_answer(&good, 4242, &other), "wrong question");
        assert!(!is_answer(&query, 4242, &name), "a query is not an answer");
        assert!(!is_answer(&good[..5], 4242, &name), "truncated");
        assert!(!is_answer(b"\xff\xff garbage", 4242, &name));
        let upper = Name::from_ascii("TEST1.Example.COM.").unwrap();
        assert!(is_answer(
            &response_to(&encode_query(&upper, 7).unwrap())
                .to_vec()
                .unwrap(),
            7,
            &name
        ));
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

    #[test]
    fn mean_includes_every_query() {
        let f = DnsFigure {
            domain: None,
            servers: vec![],
            queries: 4,
            answered: 3,
            timed_out: 1,
            refused: 0,
            elapsed: Duration::from_millis(2010),
            timeout: Duration::from_secs(2),
        };
        assert!((f.mean_ms() - 502.5).abs() < 1e-9);
        assert!(!f.no_answer());
    }
}
