//! `pveprobe net-serve`: the far end of a link's measurement. Bound to the
//! link's address only, it answers latency and path-MTU datagrams and
//! takes or sends TCP streams, for one peer address only, at a bounded
//! packet rate, and exits on its own: when its stdin ends (the ssh
//! connection that started it closed), when told to stop, or after a
//! hard lifetime. Nothing is installed and nothing keeps running.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::sockopt;
use super::wire::{self, Direction, Msg, PacketKind};

/// The longest a responder may be asked to live.
pub const MAX_LIFETIME: Duration = Duration::from_secs(3600);
/// The longest one TCP stream may be asked to send for.
pub const MAX_STREAM: Duration = Duration::from_secs(120);

/// What the responder is told.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The link's address on this node: nothing else is bound.
    pub bind: IpAddr,
    /// 0: any free port (the same number for UDP and TCP).
    pub port: u16,
    /// The only address answered.
    pub peer: IpAddr,
    /// Exits after this long, whatever else happens.
    pub lifetime: Duration,
    /// Datagrams answered per second at most; more are read and dropped.
    pub max_pps: u32,
}

/// What it says when it is ready, on one line of stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    pub port: u16,
    /// The bound address's interface and its MTU.
    pub dev: Option<String>,
    pub mtu: Option<u32>,
}

pub const READY_PREFIX: &str = "pveprobe-net-serve ready";
pub const DONE_PREFIX: &str = "pveprobe-net-serve done";

impl Ready {
    pub fn line(&self) -> String {
        format!(
            "{READY_PREFIX} port={} dev={} mtu={}",
            self.port,
            self.dev.as_deref().unwrap_or("-"),
            self.mtu.map_or("-".into(), |m| m.to_string())
        )
    }

    /// `None` for any other line.
    pub fn parse(line: &str) -> Option<Ready> {
        let rest = line.trim().strip_prefix(READY_PREFIX)?;
        let mut ready = Ready {
            port: 0,
            dev: None,
            mtu: None,
        };
        for word in rest.split_whitespace() {
            let (k, v) = word.split_once('=')?;
            match (k, v) {
                (_, "-") => {}
                ("port", v) => ready.port = v.parse().ok()?,
                ("dev", v) => ready.dev = Some(v.to_string()),
                ("mtu", v) => ready.mtu = Some(v.parse().ok()?),
                _ => {}
            }
        }
        (ready.port != 0).then_some(ready)
    }
}

/// What it did, on its last line of stdout (`done` and JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServeStats {
    /// Datagrams from the peer.
    pub datagrams: u64,
    /// Of them, answered.
    pub answered: u64,
    /// Of them, dropped over the packet rate.
    pub over_rate: u64,
    /// The most datagrams from the peer in any one second.
    pub peak_per_second: u64,
    /// Datagrams and connections from other addresses (ignored, closed).
    pub strangers: u64,
    pub streams: u64,
    /// Why it stopped: `stdin closed`, `lifetime`, `stopped`.
    pub ended: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot bind {addr}: {}", crate::error::describe(source))]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot find a free port for both UDP and TCP on {0}")]
    NoPort(IpAddr),
    #[error("{0}")]
    Socket(std::io::Error),
}

/// Binds TCP and UDP on the same port of `bind`.
fn bind_both(bind: IpAddr, port: u16) -> Result<(TcpListener, UdpSocket), ServeError> {
    for _ in 0..20 {
        let tcp_addr = SocketAddr::new(bind, port);
        let tcp = TcpListener::bind(tcp_addr).map_err(|source| ServeError::Bind {
            addr: tcp_addr,
            source,
        })?;
        let chosen = tcp.local_addr().map_err(ServeError::Socket)?.port();
        let udp_addr = SocketAddr::new(bind, chosen);
        match UdpSocket::bind(udp_addr) {
            Ok(udp) => return Ok((tcp, udp)),
            Err(e) if port == 0 && e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(source) => {
                return Err(ServeError::Bind {
                    addr: udp_addr,
                    source,
                });
            }
        }
    }
    Err(ServeError::NoPort(bind))
}

/// Serves until `stop` is set or the lifetime ends; `ready` is called
/// once the sockets are bound.
pub fn serve(
    opts: &ServeOptions,
    stop: &Arc<AtomicBool>,
    ready: impl FnOnce(&Ready),
) -> Result<ServeStats, ServeError> {
    let (tcp, udp) = bind_both(opts.bind, opts.port)?;
    let port = udp.local_addr().map_err(ServeError::Socket)?.port();
    sockopt::set_dont_fragment(&udp, opts.bind).map_err(ServeError::Socket)?;
    // Never blocks: [`Pace::wait`] waits, with ppoll(2).
    udp.set_nonblocking(true).map_err(ServeError::Socket)?;
    tcp.set_nonblocking(true).map_err(ServeError::Socket)?;
    let ifaces = crate::nodes::iface::interfaces().unwrap_or_default();
    let iface = crate::nodes::iface::holding(&ifaces, opts.bind);
    let own_mtu = iface.and_then(|i| i.mtu).unwrap_or(0);
    ready(&Ready {
        port,
        dev: iface.map(|i| i.name.clone()),
        mtu: iface.and_then(|i| i.mtu),
    });

    let deadline = Instant::now() + opts.lifetime.min(MAX_LIFETIME);
    let strangers = Arc::new(AtomicU64::new(0));
    let streams = Arc::new(AtomicU64::new(0));
    let mut stats = ServeStats::default();
    std::thread::scope(|s| {
        s.spawn(|| accept_loop(&tcp, opts.peer, stop, deadline, &strangers, &streams));
        stats = datagram_loop(&udp, opts, own_mtu, stop, deadline, &strangers);
        stop.store(true, Ordering::SeqCst);
    });
    stats.strangers = strangers.load(Ordering::SeqCst);
    stats.streams = streams.load(Ordering::SeqCst);
    Ok(stats)
}

fn datagram_loop(
    udp: &UdpSocket,
    opts: &ServeOptions,
    own_mtu: u32,
    stop: &AtomicBool,
    deadline: Instant,
    strangers: &AtomicU64,
) -> ServeStats {
    let mut stats = ServeStats::default();
    let mut buf = vec![0u8; wire::MAX_DATAGRAM];
    let mut second = Instant::now();
    let mut this_second = 0u64;
    let mut pace = Pace::default();
    loop {
        if stop.load(Ordering::SeqCst) {
            stats.ended = "stopped".into();
            break;
        }
        if Instant::now() >= deadline {
            stats.ended = "lifetime".into();
            break;
        }
        pace.wait(udp);
        let (n, from) = match udp.recv_from(&mut buf) {
            Ok(got) => got,
            // Nothing yet, or an ICMP error of an earlier send (a too-big
            // answer): go on.
            Err(_) => continue,
        };
        if from.ip() != opts.peer {
            strangers.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let now = Instant::now();
        stats.datagrams += 1;
        if now.duration_since(second) >= Duration::from_secs(1) {
            second = now;
            this_second = 0;
        }
        this_second += 1;
        stats.peak_per_second = stats.peak_per_second.max(this_second);
        if this_second > u64::from(opts.max_pps) {
            stats.over_rate += 1;
            continue;
        }
        let sent = if wire::echo_reply_in_place(&mut buf[..n]) {
            // Answered first, its bookkeeping after: nothing but the
            // reply between a probe and its answer.
            let sent = udp.send_to(&buf[..n], from);
            pace.arrived(now);
            sent
        } else {
            let Some(msg) = Msg::decode(&buf[..n]) else {
                continue;
            };
            let (reply, len) = match msg.kind {
                PacketKind::MtuProbe => (
                    Msg {
                        kind: PacketKind::MtuAck,
                        size: n as u32,
                        ..msg
                    },
                    wire::HEADER,
                ),
                PacketKind::MtuAsk => (
                    Msg {
                        kind: PacketKind::MtuBack,
                        ..msg
                    },
                    (msg.size as usize).clamp(wire::HEADER, wire::MAX_DATAGRAM - 100),
                ),
                _ => continue,
            };
            udp.send_to(&reply.encode(len), from)
        };
        match sent {
            Ok(_) => stats.answered += 1,
            Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => {
                // Too big for this end's own interface: say so, with its MTU.
                let too_big = Msg {
                    kind: PacketKind::MtuTooBig,
                    seq: Msg::decode(&buf[..n]).map_or(0, |m| m.seq),
                    size: own_mtu,
                };
                if udp.send_to(&too_big.encode(wire::HEADER), from).is_ok() {
                    stats.answered += 1;
                }
            }
            Err(_) => {}
        }
    }
    stats
}

/// How the responder waits for the next latency probe. They come at a
/// steady pace (`net-probe` sends one every 1/rate s): between them it
/// sleeps in recv, and from just before the next one is due it polls
/// without sleeping for a few milliseconds, so that a round trip holds the
/// link and both network stacks, not this thread's wake-up (tens of
/// microseconds on an idle or virtual CPU, which ping's in-kernel answer
/// never pays). At most [`POLL_AFTER`] + [`POLL_BEFORE`] of polling per
/// probe: a few percent of one core while probes come, none otherwise.
#[derive(Debug, Default)]
struct Pace {
    last: Option<Instant>,
    gap: Option<Duration>,
}

/// Polling starts this long before a probe is due...
const POLL_BEFORE: Duration = Duration::from_millis(1);
/// ...and goes on this long after.
const POLL_AFTER: Duration = Duration::from_millis(2);
/// Probes further apart than this are not paced (nothing is polled for).
const MAX_GAP: Duration = Duration::from_millis(200);
/// The longest sleep in recv before the loop looks at its stop flag.
const IDLE_WAIT: Duration = Duration::from_millis(50);

impl Pace {
    fn arrived(&mut self, now: Instant) {
        self.gap = self.last.map(|l| now - l).filter(|g| *g <= MAX_GAP);
        self.last = Some(now);
    }

    /// Returns when a datagram may be waiting: at once while a probe is
    /// due (polling), otherwise when one comes, polling is to start or
    /// [`IDLE_WAIT`] has passed (to the microsecond, with ppoll(2)).
    fn wait(&self, udp: &UdpSocket) {
        match self.sleep(Instant::now()) {
            Some(wait) => sockopt::wait_readable(udp, wait),
            None => std::hint::spin_loop(),
        }
    }

    /// How long to sleep at `now` waiting for a datagram; `None`: not at
    /// all, a probe is due.
    fn sleep(&self, now: Instant) -> Option<Duration> {
        match self.last.zip(self.gap).map(|(l, g)| l + g) {
            Some(due) if now + POLL_BEFORE >= due && now <= due + POLL_AFTER => None,
            Some(due) if now + POLL_BEFORE < due => Some((due - POLL_BEFORE - now).min(IDLE_WAIT)),
            _ => Some(IDLE_WAIT),
        }
    }
}

fn accept_loop(
    tcp: &TcpListener,
    peer: IpAddr,
    stop: &AtomicBool,
    deadline: Instant,
    strangers: &AtomicU64,
    streams: &AtomicU64,
) {
    std::thread::scope(|s| {
        while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
            match tcp.accept() {
                Ok((conn, from)) => {
                    if from.ip() != peer {
                        strangers.fetch_add(1, Ordering::Relaxed);
                        drop(conn);
                        continue;
                    }
                    streams.fetch_add(1, Ordering::Relaxed);
                    s.spawn(move || {
                        let _ = stream(conn, stop, deadline);
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
}

/// One TCP stream: reads what the probe uploads and answers with the count,
/// or sends for the asked time.
fn stream(mut conn: TcpStream, stop: &AtomicBool, deadline: Instant) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    conn.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut header = [0u8; wire::STREAM_HEADER];
    conn.read_exact(&mut header)?;
    let Some((direction, millis)) = wire::parse_stream_header(&header) else {
        return Ok(());
    };
    let window = Duration::from_millis(u64::from(millis)).min(MAX_STREAM);
    let mut buf = vec![0u8; 128 << 10];
    match direction {
        Direction::Upload => {
            let going = || !stop.load(Ordering::Relaxed) && Instant::now() < deadline;
            let Some((bytes, took)) = wire::drain(&mut conn, &mut buf, going)? else {
                return Ok(());
            };
            let nanos = took.as_nanos() as u64;
            let mut reply = [0u8; wire::UPLOAD_REPLY];
            reply[..8].copy_from_slice(&bytes.to_be_bytes());
            reply[8..].copy_from_slice(&nanos.to_be_bytes());
            conn.write_all(&reply)?;
        }
        Direction::Download => {
            let end = Instant::now() + window;
            while Instant::now() < end.min(deadline) && !stop.load(Ordering::Relaxed) {
                conn.write_all(&buf)?;
            }
            conn.shutdown(std::net::Shutdown::Write)?;
            // Until the probe has read it all and closes.
            let _ = conn.read(&mut buf[..1]);
        }
    }
    Ok(())
}

/// Sets `stop` when stdin ends: the ssh connection that started the
/// responder has closed.
pub fn stop_on_stdin_eof(stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut sink = [0u8; 256];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        stop.store(true, Ordering::SeqCst);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_round_trips() {
        let r = Ready {
            port: 40123,
            dev: Some("eth1".into()),
            mtu: Some(1400),
        };
        assert_eq!(Ready::parse(&r.line()), Some(r));
        let none = Ready {
            port: 5,
            dev: None,
            mtu: None,
        };
        assert_eq!(Ready::parse(&none.line()), Some(none));
        assert_eq!(Ready::parse("pveprobe-net-serve ready port=0"), None);
        assert_eq!(Ready::parse("Last login: yesterday"), None);
    }
}

#[cfg(test)]
mod lifetime_tests {
    use super::*;

    #[test]
    fn it_ends_after_its_lifetime_with_nobody_asking() {
        let stop = Arc::new(AtomicBool::new(false));
        let opts = ServeOptions {
            bind: "127.0.0.1".parse().unwrap(),
            port: 0,
            peer: "127.0.0.1".parse().unwrap(),
            lifetime: Duration::from_millis(300),
            max_pps: 10,
        };
        let start = Instant::now();
        let stats = serve(&opts, &stop, |_| {}).unwrap();
        assert_eq!(stats.ended, "lifetime");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        // A taken port is an error naming it.
        let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let err = serve(&ServeOptions { port, ..opts }, &stop, |_| {}).unwrap_err();
        assert!(
            err.to_string().contains(&format!("127.0.0.1:{port}")),
            "{err}"
        );
    }

    #[test]
    fn the_pace_follows_the_probes() {
        let mut pace = Pace::default();
        pace.arrived(Instant::now());
        assert_eq!(pace.gap, None, "one probe has no pace");
        std::thread::sleep(Duration::from_millis(20));
        pace.arrived(Instant::now());
        let gap = pace.gap.unwrap();
        assert!(
            gap >= Duration::from_millis(20) && gap <= MAX_GAP,
            "{gap:?}"
        );
        pace.last = Some(Instant::now() - Duration::from_secs(1));
        pace.arrived(Instant::now());
        assert_eq!(pace.gap, None, "a second's pause is no pace");
        // Probes 20 ms apart, the last at t0: sleep until 1 ms before the
        // next is due, then poll until 2 ms after; then sleep again.
        let t0 = Instant::now();
        pace.last = Some(t0);
        pace.gap = Some(Duration::from_millis(20));
        let ms = Duration::from_millis;
        assert_eq!(pace.sleep(t0), Some(ms(19)));
        assert_eq!(pace.sleep(t0 + ms(18)), Some(ms(1)));
        assert_eq!(pace.sleep(t0 + ms(19)), None);
        assert_eq!(pace.sleep(t0 + ms(22)), None);
        assert_eq!(pace.sleep(t0 + ms(23)), Some(IDLE_WAIT));
        // Far apart: never more than IDLE_WAIT, to look at the stop flag.
        pace.gap = Some(ms(150));
        assert_eq!(pace.sleep(t0), Some(IDLE_WAIT));
        // No pace: sleep.
        pace.gap = None;
        assert_eq!(pace.sleep(t0 + ms(20)), Some(IDLE_WAIT));
    }
}
