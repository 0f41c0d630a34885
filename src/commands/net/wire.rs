//! What `net-serve` and `net-probe` say to each other: "PVN1" datagrams
//! over UDP (latency and path MTU) and a short header on each TCP stream
//! (throughput). Plain bytes, big-endian, nothing else on the wire.

use std::net::IpAddr;

/// The first bytes of every message.
pub const MAGIC: [u8; 4] = *b"PVN1";
/// A datagram's header: magic, kind, sequence number, size.
pub const HEADER: usize = 4 + 1 + 4 + 4;
/// A TCP stream's header: magic, direction, milliseconds to send for.
pub const STREAM_HEADER: usize = 4 + 1 + 4;
/// The answer to an upload: bytes received, nanoseconds from the first
/// byte to the end of the stream.
pub const UPLOAD_REPLY: usize = 16;
/// A latency probe's UDP payload: with the UDP and IPv4 headers an
/// 84-byte packet, as `ping`'s default.
pub const ECHO_SIZE: usize = 56;
/// The largest datagram either end reads.
pub const MAX_DATAGRAM: usize = 65535;

/// What a datagram is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// A latency probe; answered by [`PacketKind::EchoReply`] with its number.
    Echo,
    EchoReply,
    /// A datagram of `size` bytes sent with DF set; answered by a small
    /// [`PacketKind::MtuAck`] when it arrives.
    MtuProbe,
    MtuAck,
    /// Asks the responder to send a [`PacketKind::MtuBack`] of `size` bytes with
    /// DF set (the path the other way).
    MtuAsk,
    MtuBack,
    /// The responder's own interface cannot send that size: `size` is its MTU.
    MtuTooBig,
}

impl PacketKind {
    fn byte(self) -> u8 {
        match self {
            PacketKind::Echo => b'E',
            PacketKind::EchoReply => b'e',
            PacketKind::MtuProbe => b'M',
            PacketKind::MtuAck => b'm',
            PacketKind::MtuAsk => b'R',
            PacketKind::MtuBack => b'r',
            PacketKind::MtuTooBig => b'x',
        }
    }

    fn from_byte(b: u8) -> Option<PacketKind> {
        Some(match b {
            b'E' => PacketKind::Echo,
            b'e' => PacketKind::EchoReply,
            b'M' => PacketKind::MtuProbe,
            b'm' => PacketKind::MtuAck,
            b'R' => PacketKind::MtuAsk,
            b'r' => PacketKind::MtuBack,
            b'x' => PacketKind::MtuTooBig,
            _ => return None,
        })
    }
}

/// One datagram's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg {
    pub kind: PacketKind,
    pub seq: u32,
    pub size: u32,
}

impl Msg {
    /// The datagram: the header, then zeros up to `len` bytes (at least the header).
    pub fn encode(&self, len: usize) -> Vec<u8> {
        let mut buf = Vec::with_capacity(len.max(HEADER));
        buf.extend_from_slice(&MAGIC);
        buf.push(self.kind.byte());
        buf.extend_from_slice(&self.seq.to_be_bytes());
        buf.extend_from_slice(&self.size.to_be_bytes());
        buf.resize(len.max(HEADER), 0);
        buf
    }

    /// `None` for anything that is not a PVN1 datagram.
    pub fn decode(buf: &[u8]) -> Option<Msg> {
        let kind = PacketKind::from_byte(kind_byte(buf)?)?;
        let word = |i: usize| u32::from_be_bytes(buf[i..i + 4].try_into().unwrap());
        Some(Msg {
            kind,
            seq: word(5),
            size: word(9),
        })
    }
}

/// The kind's byte of a PVN1 datagram; `None` for anything else.
fn kind_byte(buf: &[u8]) -> Option<u8> {
    (buf.len() >= HEADER && buf[..4] == MAGIC).then(|| buf[4])
}

/// Turns an Echo datagram into its EchoReply where it lies (the kind's
/// byte; sequence, size and padding stay), so that the responder's answer
/// costs no building; false, and the datagram untouched, for anything but
/// an Echo.
pub fn echo_reply_in_place(datagram: &mut [u8]) -> bool {
    let echo = kind_byte(datagram) == Some(PacketKind::Echo.byte());
    if echo {
        datagram[4] = PacketKind::EchoReply.byte();
    }
    echo
}

/// Which way a TCP stream's data flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the probe to the responder.
    Upload,
    /// From the responder to the probe.
    Download,
}

/// A TCP stream's header.
pub fn stream_header(direction: Direction, millis: u32) -> [u8; STREAM_HEADER] {
    let mut h = [0u8; STREAM_HEADER];
    h[..4].copy_from_slice(&MAGIC);
    h[4] = match direction {
        Direction::Upload => b'U',
        Direction::Download => b'D',
    };
    h[5..].copy_from_slice(&millis.to_be_bytes());
    h
}

pub fn parse_stream_header(h: &[u8; STREAM_HEADER]) -> Option<(Direction, u32)> {
    if h[..4] != MAGIC {
        return None;
    }
    let direction = match h[4] {
        b'U' => Direction::Upload,
        b'D' => Direction::Download,
        _ => return None,
    };
    Some((direction, u32::from_be_bytes(h[5..].try_into().unwrap())))
}

/// The IP and UDP headers' bytes in front of a datagram's payload.
pub fn udp_overhead(ip: IpAddr) -> usize {
    match ip {
        IpAddr::V4(_) => 20 + 8,
        IpAddr::V6(_) => 40 + 8,
    }
}

/// Reads a stream to its end: the bytes, and the time from the first
/// byte to the last read. `None` when `going` said stop first (asked
/// before each read).
pub fn drain(
    conn: &mut impl std::io::Read,
    buf: &mut [u8],
    going: impl Fn() -> bool,
) -> std::io::Result<Option<(u64, std::time::Duration)>> {
    let mut bytes = 0u64;
    let mut first: Option<std::time::Instant> = None;
    loop {
        if !going() {
            return Ok(None);
        }
        match conn.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                first.get_or_insert_with(std::time::Instant::now);
                bytes += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some((
        bytes,
        first.map_or_else(Default::default, |f| f.elapsed()),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_round_trip_and_strangers_are_not_read() {
        for kind in [
            PacketKind::Echo,
            PacketKind::EchoReply,
            PacketKind::MtuProbe,
            PacketKind::MtuAck,
            PacketKind::MtuAsk,
            PacketKind::MtuBack,
            PacketKind::MtuTooBig,
        ] {
            let msg = Msg {
                kind,
                seq: 0xdead_beef,
                size: 1472,
            };
            let buf = msg.encode(1472);
            assert_eq!(buf.len(), 1472);
            assert_eq!(Msg::decode(&buf), Some(msg));
        }
        assert_eq!(
            Msg::encode(
                &Msg {
                    kind: PacketKind::Echo,
                    seq: 1,
                    size: 0
                },
                0
            )
            .len(),
            HEADER
        );
        assert_eq!(Msg::decode(b"PVN1E"), None, "short");
        assert_eq!(Msg::decode(b"PVN2E\0\0\0\0\0\0\0\0"), None, "other magic");
        assert_eq!(Msg::decode(b"PVN1Q\0\0\0\0\0\0\0\0"), None, "unknown kind");
        let h = stream_header(Direction::Download, 3000);
        assert_eq!(parse_stream_header(&h), Some((Direction::Download, 3000)));
        let mut bad = h;
        bad[4] = b'X';
        assert_eq!(parse_stream_header(&bad), None);
        assert_eq!(udp_overhead("10.0.0.1".parse().unwrap()), 28);
        assert_eq!(udp_overhead("::1".parse().unwrap()), 48);
    }

    #[test]
    fn an_echo_turns_into_its_reply_in_place() {
        let echo = Msg {
            kind: PacketKind::Echo,
            seq: 7,
            size: ECHO_SIZE as u32,
        };
        let mut buf = echo.encode(ECHO_SIZE);
        assert!(echo_reply_in_place(&mut buf));
        assert_eq!(buf.len(), ECHO_SIZE);
        assert_eq!(
            Msg::decode(&buf),
            Some(Msg {
                kind: PacketKind::EchoReply,
                ..echo
            })
        );
        // A reply is no Echo, and neither is a short or a stranger's one.
        assert!(!echo_reply_in_place(&mut buf));
        for mut other in [
            b"PVN1E".to_vec(),
            b"PVN2E\0\0\0\0\0\0\0\0".to_vec(),
            Msg {
                kind: PacketKind::MtuProbe,
                ..echo
            }
            .encode(HEADER),
        ] {
            let before = other.clone();
            assert!(!echo_reply_in_place(&mut other));
            assert_eq!(other, before, "left alone");
        }
    }

    #[test]
    fn drain_reads_to_the_end_or_stops_when_told() {
        let mut buf = [0u8; 2];
        let (bytes, _) = drain(&mut &b"hello"[..], &mut buf, || true)
            .unwrap()
            .unwrap();
        assert_eq!(bytes, 5);
        assert_eq!(
            drain(&mut &b""[..], &mut buf, || true).unwrap(),
            Some((0, std::time::Duration::ZERO))
        );
        assert_eq!(drain(&mut &b"hello"[..], &mut buf, || false).unwrap(), None);
    }
}
