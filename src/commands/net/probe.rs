//! `pveprobe net-probe`: the measuring end of a link. Sends latency
//! probes at a bounded pace and waits a bounded time for each answer,
//! finds the largest datagram that crosses each way with Don't Fragment
//! set, and (only when asked) runs TCP streams each way for a bounded time.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant, SystemTime};

use super::sockopt;
use super::wire::{self, Direction, Msg, PacketKind};
use crate::model::net::{PathMtu, ProbeResult, Rtt, Throughput, Way};

/// Latency probes per second at most: corosync's own heartbeats are a few
/// per second; this stays far from filling any link.
pub const MAX_RATE: u32 = 100;
/// Latency probes in one run at most.
pub const MAX_COUNT: u32 = 10_000;
/// How long an answer is waited for.
pub const ANSWER_WAIT: Duration = Duration::from_secs(1);
/// How long an MTU probe's answer is waited for, and how often it is tried.
const MTU_WAIT: Duration = Duration::from_millis(250);
const MTU_TRIES: u32 = 2;
/// The smallest IP packet every IPv4 host must take (RFC 791); IPv6's
/// minimum link MTU (RFC 8200).
fn min_packet(ip: IpAddr) -> u32 {
    if ip.is_ipv4() { 576 } else { 1280 }
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// This node's address on the link.
    pub from: IpAddr,
    /// The responder's.
    pub to: SocketAddr,
    pub count: u32,
    pub rate_pps: u32,
    pub mtu: bool,
    /// `Some`: TCP throughput each way, one stream then `streams`, each
    /// for this long.
    pub throughput: Option<(Duration, u32)>,
}

/// Sends datagrams no faster than the pace: each waits for its slot.
struct Pacer {
    interval: Duration,
    next: Instant,
    /// Datagrams that left (a send the local interface refused is none).
    sent: u64,
}

impl Pacer {
    fn new(rate_pps: u32) -> Self {
        Pacer {
            interval: Duration::from_secs(1) / rate_pps.clamp(1, MAX_RATE),
            next: Instant::now(),
            sent: 0,
        }
    }

    /// Sleeps until the next slot is due.
    fn wait(&mut self) {
        let now = Instant::now();
        if self.next > now {
            std::thread::sleep(self.next - now);
        }
        self.next = self.next.max(now) + self.interval;
    }
}

fn udp_socket(opts: &ProbeOptions) -> std::io::Result<UdpSocket> {
    let sock = UdpSocket::bind(SocketAddr::new(opts.from, 0))?;
    sock.connect(opts.to)?;
    sockopt::set_dont_fragment(&sock, opts.from)?;
    Ok(sock)
}

/// Measures the link.
pub fn probe(opts: &ProbeOptions) -> ProbeResult {
    let start = Instant::now();
    let ifaces = crate::nodes::iface::interfaces().unwrap_or_default();
    let iface = crate::nodes::iface::holding(&ifaces, opts.from);
    let mut result = ProbeResult {
        from: opts.from,
        to: opts.to,
        dev: iface.map(|i| i.name.clone()),
        mtu: iface.and_then(|i| i.mtu),
        latency: None,
        path_mtu: None,
        throughput: Vec::new(),
        datagrams: 0,
        seconds: 0.0,
        errors: Vec::new(),
    };
    let mut pacer = Pacer::new(opts.rate_pps);
    match udp_socket(opts) {
        Ok(sock) => {
            if opts.count > 0 {
                match latency(&sock, opts.count.min(MAX_COUNT), &mut pacer) {
                    Ok(rtts) => result.latency = Some(Rtt::of(&rtts, opts.rate_pps)),
                    Err(e) => result
                        .errors
                        .push(format!("latency: {}", crate::error::describe(&e))),
                }
            }
            if opts.mtu {
                let top = result.mtu.unwrap_or(1500);
                result.path_mtu = Some(PathMtu {
                    forward: largest(&sock, opts.from, PacketKind::MtuProbe, top, &mut pacer),
                    back: largest(&sock, opts.from, PacketKind::MtuAsk, top, &mut pacer),
                    tried_up_to: top,
                });
            }
        }
        Err(e) => result.errors.push(format!(
            "cannot send from {} to {}: {}",
            opts.from,
            opts.to,
            crate::error::describe(&e)
        )),
    }
    result.datagrams = pacer.sent;
    if let Some((window, streams)) = opts.throughput {
        let mut counts = vec![1];
        if streams > 1 {
            counts.push(streams);
        }
        for n in counts {
            for way in [Way::Forward, Way::Back] {
                match tcp(opts, way, n, window) {
                    Ok(t) => result.throughput.push(t),
                    Err(e) => result.errors.push(format!(
                        "throughput ({n} stream{}, {}): {}",
                        if n == 1 { "" } else { "s" },
                        way_name(way),
                        crate::error::describe(&e)
                    )),
                }
            }
        }
    }
    result.seconds = start.elapsed().as_secs_f64();
    result
}

fn way_name(way: Way) -> &'static str {
    match way {
        Way::Forward => "forward",
        Way::Back => "back",
    }
}

/// `count` echo probes at the pacer's pace; each round trip, or `None`
/// when no answer came within [`ANSWER_WAIT`].
fn latency(
    sock: &UdpSocket,
    count: u32,
    pacer: &mut Pacer,
) -> std::io::Result<Vec<Option<Duration>>> {
    let n = count as usize;
    let mut sent_at: Vec<Option<Instant>> = vec![None; n];
    let mut sent_wall: Vec<Option<SystemTime>> = vec![None; n];
    stamp_receives(sock);
    let mut rtts: Vec<Option<Duration>> = vec![None; n];
    let mut buf = vec![0u8; wire::MAX_DATAGRAM];
    let mut next = 0usize;
    let mut answered = 0usize;
    let mut last_send = Instant::now();
    loop {
        let now = Instant::now();
        if next < n && now >= pacer.next {
            let msg = Msg {
                kind: PacketKind::Echo,
                seq: next as u32,
                size: wire::ECHO_SIZE as u32,
            }
            .encode(wire::ECHO_SIZE);
            pacer.wait();
            // Taken last before the send, as ping takes its own.
            let wall = SystemTime::now();
            let at = Instant::now();
            // A failed send (an ICMP error from an earlier one) is a loss.
            if sock.send(&msg).is_ok() {
                pacer.sent += 1;
                sent_at[next] = Some(at);
                sent_wall[next] = Some(wall);
            }
            last_send = at;
            next += 1;
            continue;
        }
        let until = if next < n {
            pacer.next
        } else {
            if answered == sent_at.iter().flatten().count() {
                break;
            }
            let end = last_send + ANSWER_WAIT;
            if now >= end {
                break;
            }
            end
        };
        // Waits to the microsecond, so that each probe leaves when it is
        // due: the responder polls for it then.
        sockopt::wait_readable(sock, until.saturating_duration_since(now));
        match recv_stamped(sock, &mut buf) {
            Ok((len, stamp)) => {
                let got = Instant::now();
                if let Some(m) =
                    Msg::decode(&buf[..len]).filter(|m| m.kind == PacketKind::EchoReply)
                {
                    let i = m.seq as usize;
                    if let (Some(Some(at)), Some(slot @ None)) = (sent_at.get(i), rtts.get_mut(i)) {
                        // The kernel's receive time, as ping takes it: our
                        // own wake-up is not the link's.
                        let rtt = stamp
                            .zip(sent_wall[i])
                            .and_then(|(s, w)| s.duration_since(w).ok())
                            .filter(|r| *r <= got - *at)
                            .unwrap_or(got - *at);
                        if rtt <= ANSWER_WAIT {
                            *slot = Some(rtt);
                            answered += 1;
                        }
                    }
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                        | std::io::ErrorKind::ConnectionRefused
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(rtts)
}

/// Asks the kernel for each datagram's receive time (SO_TIMESTAMPNS).
fn stamp_receives(sock: &UdpSocket) {
    use std::os::fd::AsFd;
    let _ = nix::sys::socket::setsockopt(
        &sock.as_fd(),
        nix::sys::socket::sockopt::ReceiveTimestampns,
        &true,
    );
}

/// A datagram and the kernel's receive time of it, when it gave one; at
/// once WouldBlock when none is waiting.
fn recv_stamped(sock: &UdpSocket, buf: &mut [u8]) -> std::io::Result<(usize, Option<SystemTime>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, SockaddrStorage, recvmsg};
    use std::os::fd::AsRawFd;
    let mut iov = [std::io::IoSliceMut::new(buf)];
    let mut space = nix::cmsg_space!(nix::sys::time::TimeSpec);
    let msg = recvmsg::<SockaddrStorage>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_DONTWAIT,
    )
    .map_err(std::io::Error::from)?;
    let mut stamp = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                let d = Duration::new(
                    ts.tv_sec().max(0) as u64,
                    ts.tv_nsec().clamp(0, 999_999_999) as u32,
                );
                stamp = Some(SystemTime::UNIX_EPOCH + d);
            }
        }
    }
    Ok((msg.bytes, stamp))
}

/// Whether a datagram of `ip_size` bytes (IP packet) crosses: sent with
/// DF (`MtuProbe`, forward) or asked for from the responder (`MtuAsk`,
/// back). `Err(mtu)`: an end's own interface cannot send it.
fn crosses(
    sock: &UdpSocket,
    from: IpAddr,
    kind: PacketKind,
    ip_size: u32,
    seq: &mut u32,
    pacer: &mut Pacer,
) -> Result<bool, u32> {
    let payload = (ip_size as usize)
        .saturating_sub(wire::udp_overhead(from))
        .max(wire::HEADER);
    let mut buf = vec![0u8; wire::MAX_DATAGRAM];
    for _ in 0..MTU_TRIES {
        *seq += 1;
        let msg = Msg {
            kind,
            seq: *seq,
            size: payload as u32,
        };
        let len = if kind == PacketKind::MtuProbe {
            payload
        } else {
            wire::HEADER
        };
        pacer.wait();
        match sock.send(&msg.encode(len)) {
            Ok(_) => pacer.sent += 1,
            Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => return Err(ip_size - 1),
            Err(_) => continue,
        }
        let deadline = Instant::now() + MTU_WAIT;
        while let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        {
            if sock.set_read_timeout(Some(left)).is_err() {
                break;
            }
            let Ok(len) = sock.recv(&mut buf) else { break };
            let Some(m) = Msg::decode(&buf[..len]) else {
                continue;
            };
            if m.seq != *seq {
                continue;
            }
            match m.kind {
                PacketKind::MtuAck if kind == PacketKind::MtuProbe => return Ok(true),
                PacketKind::MtuBack if kind == PacketKind::MtuAsk && len >= payload => {
                    return Ok(true);
                }
                PacketKind::MtuTooBig => return Err(m.size),
                _ => {}
            }
        }
    }
    Ok(false)
}

/// The largest IP packet up to `top` that crosses one way; binary search
/// from the smallest every host takes.
fn largest(
    sock: &UdpSocket,
    from: IpAddr,
    kind: PacketKind,
    top: u32,
    pacer: &mut Pacer,
) -> Option<u32> {
    let mut seq = if kind == PacketKind::MtuProbe {
        1 << 20
    } else {
        2 << 20
    };
    let mut hi = top.max(min_packet(from));
    let mut lo = min_packet(from);
    let ask = |size: u32, seq: &mut u32, pacer: &mut Pacer| match crosses(
        sock, from, kind, size, seq, pacer,
    ) {
        Ok(ok) => (ok, None),
        Err(mtu) => (false, Some(mtu)),
    };
    // Most links carry their MTU: one probe says so.
    match ask(hi, &mut seq, pacer) {
        (true, _) => return Some(hi),
        (false, Some(mtu)) if mtu >= lo && mtu < hi => {
            hi = mtu;
            if let (true, _) = ask(hi, &mut seq, pacer) {
                return Some(hi);
            }
        }
        _ => {}
    }
    if !ask(lo, &mut seq, pacer).0 {
        return None;
    }
    // lo crosses, hi does not.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ask(mid, &mut seq, pacer).0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// A TCP connection from `from` (the link's address) to `to`.
fn connect(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use nix::sys::socket::{
        AddressFamily, SockFlag, SockType, SockaddrStorage, bind, connect, socket,
    };
    let family = if from.is_ipv4() {
        AddressFamily::Inet
    } else {
        AddressFamily::Inet6
    };
    let fd: OwnedFd = socket(family, SockType::Stream, SockFlag::SOCK_CLOEXEC, None)?;
    use std::os::fd::AsRawFd;
    bind(
        fd.as_raw_fd(),
        &SockaddrStorage::from(SocketAddr::new(from, 0)),
    )?;
    connect(fd.as_raw_fd(), &SockaddrStorage::from(to))?;
    Ok(TcpStream::from(fd))
}

/// One stream's bytes and seconds, as its receiving end counted them.
fn stream(
    from: IpAddr,
    to: SocketAddr,
    way: Way,
    window: Duration,
    start: &std::sync::Barrier,
) -> std::io::Result<(u64, f64)> {
    let conn = connect(from, to);
    // Every stream passes the barrier, connected or not: none waits for ever.
    start.wait();
    let mut conn = conn?;
    conn.set_read_timeout(Some(window + Duration::from_secs(15)))?;
    conn.set_write_timeout(Some(Duration::from_secs(15)))?;
    let direction = match way {
        Way::Forward => Direction::Upload,
        Way::Back => Direction::Download,
    };
    conn.write_all(&wire::stream_header(direction, window.as_millis() as u32))?;
    let mut buf = vec![0u8; 128 << 10];
    match direction {
        Direction::Upload => {
            let end = Instant::now() + window;
            while Instant::now() < end {
                conn.write_all(&buf)?;
            }
            conn.shutdown(std::net::Shutdown::Write)?;
            let mut reply = [0u8; wire::UPLOAD_REPLY];
            conn.read_exact(&mut reply)?;
            let bytes = u64::from_be_bytes(reply[..8].try_into().unwrap());
            let nanos = u64::from_be_bytes(reply[8..].try_into().unwrap());
            Ok((bytes, nanos as f64 / 1e9))
        }
        Direction::Download => {
            let (bytes, took) = wire::drain(&mut conn, &mut buf, || true)?.unwrap_or_default();
            Ok((bytes, took.as_secs_f64()))
        }
    }
}

/// `streams` TCP streams one way at once, for `window`.
fn tcp(
    opts: &ProbeOptions,
    way: Way,
    streams: u32,
    window: Duration,
) -> std::io::Result<Throughput> {
    let start = std::sync::Barrier::new(streams as usize);
    let results: Vec<std::io::Result<(u64, f64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..streams)
            .map(|_| s.spawn(|| stream(opts.from, opts.to, way, window, &start)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("stream thread panicked")))
            })
            .collect()
    });
    let mut bytes = 0u64;
    let mut seconds = 0f64;
    for r in results {
        let (b, s) = r?;
        bytes += b;
        seconds = seconds.max(s);
    }
    let mbit_per_s = if seconds > 0.0 {
        bytes as f64 * 8.0 / 1e6 / seconds
    } else {
        0.0
    };
    Ok(Throughput {
        way,
        streams,
        mbit_per_s,
        bytes,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::commands::net::serve::{self, ServeOptions, ServeStats};

    /// A responder on 127.0.0.1 for `peer`, in a thread; `f` gets its port.
    fn with_responder(peer: &str, max_pps: u32, f: impl FnOnce(u16)) -> ServeStats {
        let stop = Arc::new(AtomicBool::new(false));
        let opts = ServeOptions {
            bind: "127.0.0.1".parse().unwrap(),
            port: 0,
            peer: peer.parse().unwrap(),
            lifetime: Duration::from_secs(60),
            max_pps,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let stats = std::thread::scope(|s| {
            let stop2 = Arc::clone(&stop);
            let h =
                s.spawn(move || serve::serve(&opts, &stop2, |r| tx.send(r.port).unwrap()).unwrap());
            f(rx.recv().unwrap());
            stop.store(true, Ordering::SeqCst);
            h.join().unwrap()
        });
        assert_eq!(stats.ended, "stopped");
        stats
    }

    fn opts(port: u16, count: u32, rate: u32) -> ProbeOptions {
        ProbeOptions {
            from: "127.0.0.1".parse().unwrap(),
            to: SocketAddr::new("127.0.0.1".parse().unwrap(), port),
            count,
            rate_pps: rate,
            mtu: false,
            throughput: None,
        }
    }

    #[test]
    fn round_trips_path_mtu_and_streams_on_loopback() {
        let mut result = None;
        let stats = with_responder("127.0.0.1", 100, |port| {
            let mut o = opts(port, 20, 100);
            o.mtu = true;
            o.throughput = Some((Duration::from_millis(300), 2));
            result = Some(probe(&o));
        });
        let r = result.unwrap();
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let l = r.latency.unwrap();
        assert_eq!((l.sent, l.received), (20, 20));
        assert!(
            l.min_ms > 0.0 && l.min_ms <= l.p50_ms && l.p50_ms <= l.max_ms && l.max_ms < 1000.0
        );
        // lo's MTU is 65536: the largest UDP datagram crosses each way.
        let m = r.path_mtu.unwrap();
        assert_eq!(r.dev.as_deref(), Some("lo"));
        assert!(m.forward.is_some_and(|f| f > 60_000), "{m:?}");
        assert!(m.back.is_some_and(|b| b > 60_000), "{m:?}");
        let ways: Vec<_> = r.throughput.iter().map(|t| (t.way, t.streams)).collect();
        assert_eq!(
            ways,
            [
                (Way::Forward, 1),
                (Way::Back, 1),
                (Way::Forward, 2),
                (Way::Back, 2)
            ]
        );
        assert!(
            r.throughput
                .iter()
                .all(|t| t.bytes > 0 && t.mbit_per_s > 0.0 && t.seconds > 0.1)
        );
        assert_eq!(stats.streams, 6, "1 + 1 + 2 + 2 connections");
        assert_eq!(stats.strangers, 0);
        assert_eq!(stats.datagrams, r.datagrams, "every datagram sent arrived");
    }

    #[test]
    fn a_stranger_gets_no_answer_and_the_rate_is_kept() {
        // Answers only 127.0.0.2: our 127.0.0.1 is a stranger.
        let mut result = None;
        let stats = with_responder("127.0.0.2", 100, |port| {
            result = Some(probe(&opts(port, 5, 100)))
        });
        let l = result.unwrap().latency.unwrap();
        assert_eq!((l.sent, l.received), (5, 0));
        assert_eq!((stats.datagrams, stats.strangers), (0, 5));
        // 30 probes at 100/s to a responder that answers 10 a second.
        let mut result = None;
        let stats = with_responder("127.0.0.1", 10, |port| {
            result = Some(probe(&opts(port, 30, 100)))
        });
        let l = result.unwrap().latency.unwrap();
        assert_eq!(stats.datagrams, 30);
        assert!(stats.answered <= 20 && stats.over_rate >= 10, "{stats:?}");
        assert_eq!(u64::from(l.received), stats.answered);
        assert!(stats.peak_per_second >= 11, "{stats:?}");
    }

    #[test]
    fn the_pace_is_bounded() {
        let mut p = Pacer::new(1000);
        assert_eq!(p.interval, Duration::from_secs(1) / MAX_RATE);
        let start = Instant::now();
        for _ in 0..6 {
            p.wait();
        }
        // Six slots at 100/s: five intervals at least.
        assert!(start.elapsed() >= Duration::from_millis(50));
    }
}
