//! The framing of `pveprobe record`'s shards (docs/record.md): a shard is
//! a header, then frames, each written whole by one `write(2)` at the
//! end of the file. A frame carries its key time, a summary (so `top
//! --worst` ranks a week without opening a frame) and its payload, all
//! under one CRC-32. A frame of version 1 (magic `PVRF`) summarises in
//! three figures, one of version 2 (`PVR2`) in six; a shard holds either
//! (the day a recorder was upgraded, both), and each frame says which it
//! is. Reading a shard never trusts a byte the CRC has
//! not checked: damage is skipped to the next frame whose magic and CRC
//! hold, and said; bytes at the end that are no whole frame are a frame
//! being written (or torn by a crash) and are left out.

/// A shard's first bytes: what it is, then its format's version: 1 held
/// frames of version 1, 2 holds frames of either version.
pub const SHARD_MAGIC: &[u8; 16] = b"PVEPROBE RECORD\n";
pub const SHARD_VERSION: u32 = 2;
/// The shard header: the magic, the version (u32 LE), 4 bytes kept zero.
pub const SHARD_HEADER_LEN: usize = 24;

/// A frame's first bytes: version 1's, and version 2's (written now).
pub const FRAME_MAGIC: &[u8; 4] = b"PVRF";
pub const FRAME_MAGIC_V2: &[u8; 4] = b"PVR2";
/// magic, payload length (u32), key time (i64 µs), summary (3 x f32 in
/// version 1, 6 in version 2), CRC-32 (u32); all little-endian.
pub const FRAME_HEADER_LEN: usize = 32;
pub const FRAME_HEADER_LEN_V2: usize = 44;
/// No payload is larger (a frame claiming more is damage).
pub const MAX_PAYLOAD: usize = 16 << 20;

/// What `top --worst` ranks by, kept in the frame's header: the node's IO
/// delay and PSI I/O `full` (%), the slowest guest drive's mean latency
/// (ms); since version 2 the worst vCPU's ready share (%), PSI memory
/// `full` (%) and the OOM killer's kills. NaN where the interval had none
/// (and in a frame of version 1, the last three).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub iowait_pct: f32,
    pub io_full_pct: f32,
    pub guest_ms: f32,
    pub ready_pct: f32,
    pub memory_full_pct: f32,
    pub oom_kills: f32,
}

impl Summary {
    pub const NONE: Summary = Summary {
        iowait_pct: f32::NAN,
        io_full_pct: f32::NAN,
        guest_ms: f32::NAN,
        ready_pct: f32::NAN,
        memory_full_pct: f32::NAN,
        oom_kills: f32::NAN,
    };

    fn bytes(&self) -> [u8; 24] {
        let mut out = [0; 24];
        for (i, v) in [
            self.iowait_pct,
            self.io_full_pct,
            self.guest_ms,
            self.ready_pct,
            self.memory_full_pct,
            self.oom_kills,
        ]
        .into_iter()
        .enumerate()
        {
            out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        out
    }
}

/// A shard's header.
pub fn shard_header() -> [u8; SHARD_HEADER_LEN] {
    let mut out = [0; SHARD_HEADER_LEN];
    out[..16].copy_from_slice(SHARD_MAGIC);
    out[16..20].copy_from_slice(&SHARD_VERSION.to_le_bytes());
    out
}

/// One frame's bytes (version 2), written whole.
pub fn frame(time_us: i64, summary: Summary, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() <= MAX_PAYLOAD, "payload over MAX_PAYLOAD");
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN_V2 + payload.len());
    out.extend_from_slice(FRAME_MAGIC_V2);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&time_us.to_le_bytes());
    out.extend_from_slice(&summary.bytes());
    let crc = checksum(&out[4..FRAME_HEADER_LEN_V2 - 4], payload);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// A frame of version 1, as pveprobe wrote it before: kept to test that
/// stores written then read back.
pub fn frame_v1(time_us: i64, summary: Summary, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() <= MAX_PAYLOAD, "payload over MAX_PAYLOAD");
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN + payload.len());
    out.extend_from_slice(FRAME_MAGIC);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&time_us.to_le_bytes());
    out.extend_from_slice(&summary.bytes()[..12]);
    let crc = checksum(&out[4..28], payload);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn checksum(header: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(header);
    h.update(payload);
    h.finalize()
}

/// A good frame found in a shard.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Where it starts in the shard.
    pub offset: usize,
    pub time_us: i64,
    pub summary: Summary,
    /// Where its payload is in the shard.
    pub payload: std::ops::Range<usize>,
}

impl Frame {
    pub fn end(&self) -> usize {
        self.payload.end
    }
}

/// Bytes skipped between good frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub offset: usize,
    pub bytes: usize,
}

/// A shard read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Shard {
    /// The header was missing or not a version this reads: frames were
    /// looked for anyway.
    pub bad_header: bool,
    pub frames: Vec<Frame>,
    /// Damage with a good frame after it.
    pub damage: Vec<Damage>,
    /// Where the last good frame ends: what follows is no whole frame (a
    /// frame being written, or torn).
    pub good_end: usize,
}

/// The frame at `at`, of either version, if one is whole and its CRC holds.
fn frame_at(bytes: &[u8], at: usize) -> Option<Frame> {
    let magic = bytes.get(at..at.checked_add(4)?)?;
    let header_len = if magic == FRAME_MAGIC {
        FRAME_HEADER_LEN
    } else if magic == FRAME_MAGIC_V2 {
        FRAME_HEADER_LEN_V2
    } else {
        return None;
    };
    let head = bytes.get(at..at.checked_add(header_len)?)?;
    let word = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().unwrap());
    let len = word(4) as usize;
    if len > MAX_PAYLOAD {
        return None;
    }
    let start = at + header_len;
    let payload = bytes.get(start..start.checked_add(len)?)?;
    let crc_at = header_len - 4;
    if checksum(&head[4..crc_at], payload) != word(crc_at) {
        return None;
    }
    let float = |i: usize| {
        if i < crc_at {
            f32::from_bits(word(i))
        } else {
            f32::NAN
        }
    };
    Some(Frame {
        offset: at,
        time_us: i64::from_le_bytes(head[8..16].try_into().unwrap()),
        summary: Summary {
            iowait_pct: float(16),
            io_full_pct: float(20),
            guest_ms: float(24),
            ready_pct: float(28),
            memory_full_pct: float(32),
            oom_kills: float(36),
        },
        payload: start..start + len,
    })
}

/// Every good frame of a shard, in file order.
pub fn read(bytes: &[u8]) -> Shard {
    let good_header = bytes.len() >= SHARD_HEADER_LEN
        && &bytes[..16] == SHARD_MAGIC
        && (1..=SHARD_VERSION).contains(&u32::from_le_bytes(bytes[16..20].try_into().unwrap()));
    let mut at = if good_header { SHARD_HEADER_LEN } else { 0 };
    let mut shard = Shard {
        bad_header: !good_header,
        good_end: at.min(bytes.len()),
        ..Shard::default()
    };
    let finder = memchr_magic;
    while at < bytes.len() {
        if let Some(f) = frame_at(bytes, at) {
            at = f.end();
            shard.good_end = at;
            shard.frames.push(f);
            continue;
        }
        // Damage: on to the next magic whose frame holds.
        let mut next = at + 1;
        let found = loop {
            match finder(bytes, next) {
                Some(m) => match frame_at(bytes, m) {
                    Some(f) => break Some(f),
                    None => next = m + 1,
                },
                None => break None,
            }
        };
        match found {
            Some(f) => {
                shard.damage.push(Damage {
                    offset: at,
                    bytes: f.offset - at,
                });
                at = f.offset;
            }
            None => break,
        }
    }
    shard
}

/// The next frame magic, of either version, at or after `from`.
fn memchr_magic(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(FRAME_MAGIC.len())
        .position(|w| w == FRAME_MAGIC || w == FRAME_MAGIC_V2)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(frames: &[(i64, &[u8])]) -> Vec<u8> {
        let mut out = shard_header().to_vec();
        for (t, p) in frames {
            out.extend(frame(*t, Summary::NONE, p));
        }
        out
    }

    #[test]
    fn frames_read_back_in_order_with_their_times_and_payloads() {
        let bytes = shard(&[(1, b"one"), (2, b""), (3, b"three")]);
        let s = read(&bytes);
        assert!(!s.bad_header);
        assert!(s.damage.is_empty());
        assert_eq!(s.good_end, bytes.len());
        let got: Vec<(i64, &[u8])> = s
            .frames
            .iter()
            .map(|f| (f.time_us, &bytes[f.payload.clone()]))
            .collect();
        assert_eq!(got, vec![(1, &b"one"[..]), (2, b""), (3, b"three")]);
    }

    #[test]
    fn the_summary_reads_back_nan_included() {
        let mut bytes = shard_header().to_vec();
        let sum = Summary {
            iowait_pct: 61.5,
            io_full_pct: f32::NAN,
            guest_ms: 250.0,
            ready_pct: 34.0,
            memory_full_pct: 0.0,
            oom_kills: 1.0,
        };
        bytes.extend(frame(7, sum, b"x"));
        let f = &read(&bytes).frames[0];
        assert_eq!(f.summary.iowait_pct, 61.5);
        assert!(f.summary.io_full_pct.is_nan());
        assert_eq!(f.summary.guest_ms, 250.0);
        assert_eq!(
            (
                f.summary.ready_pct,
                f.summary.memory_full_pct,
                f.summary.oom_kills
            ),
            (34.0, 0.0, 1.0)
        );
    }

    #[test]
    fn a_shard_of_version_1_and_one_upgraded_midday_read_back() {
        // As pveprobe wrote a shard before: header version 1, frames PVRF.
        let sum = Summary {
            iowait_pct: 12.0,
            guest_ms: 40.0,
            ready_pct: 99.0,
            ..Summary::NONE
        };
        let mut old = shard_header().to_vec();
        old[16..20].copy_from_slice(&1u32.to_le_bytes());
        old.extend(frame_v1(1, sum, b"before"));
        let s = read(&old);
        assert!(!s.bad_header);
        assert_eq!(s.frames.len(), 1);
        let f = &s.frames[0];
        assert_eq!((f.summary.iowait_pct, f.summary.guest_ms), (12.0, 40.0));
        // Version 1 kept three figures: the rest is none.
        assert!(f.summary.ready_pct.is_nan() && f.summary.oom_kills.is_nan());
        assert_eq!(&old[f.payload.clone()], b"before");
        // The day of the upgrade: frames of version 2 after, both read.
        old.extend(frame(2, sum, b"after"));
        let s = read(&old);
        assert!(s.damage.is_empty());
        let times: Vec<(i64, f32)> = s
            .frames
            .iter()
            .map(|f| (f.time_us, f.summary.ready_pct))
            .collect();
        assert_eq!(times[0].0, 1);
        assert_eq!(times[1], (2, 99.0));
        // A flipped byte in the old frame loses it alone.
        let mut bad = old.clone();
        bad[SHARD_HEADER_LEN + 10] ^= 1;
        let s = read(&bad);
        assert_eq!(s.frames.len(), 1);
        assert_eq!(s.frames[0].time_us, 2);
    }

    #[test]
    fn a_torn_last_frame_is_left_out_at_every_cut() {
        let bytes = shard(&[(1, b"first"), (2, b"second frame")]);
        let first_end = read(&bytes).frames[0].end();
        for cut in first_end..bytes.len() {
            let s = read(&bytes[..cut]);
            assert_eq!(s.frames.len(), 1, "cut at {cut}");
            assert_eq!(s.good_end, first_end);
            assert!(s.damage.is_empty(), "a torn tail is no damage: {cut}");
        }
    }

    #[test]
    fn a_flipped_byte_loses_its_frame_only_and_is_said() {
        let bytes = shard(&[(1, b"aaaa"), (2, b"bbbb"), (3, b"cccc")]);
        let frames = read(&bytes).frames;
        for at in frames[1].offset..frames[1].end() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x40;
            let s = read(&bad);
            let times: Vec<i64> = s.frames.iter().map(|f| f.time_us).collect();
            assert_eq!(times, vec![1, 3], "byte {at}");
            assert_eq!(s.damage.len(), 1);
            assert_eq!(s.damage[0].offset, frames[1].offset);
        }
    }

    #[test]
    fn a_payload_that_holds_a_frame_magic_is_no_frame() {
        // A frame inside a damaged frame's payload is found only if its own
        // CRC holds; a lone magic is passed over.
        let bytes = shard(&[(1, b"xxPVRFxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), (2, b"y")]);
        let s = read(&bytes);
        assert_eq!(s.frames.len(), 2);
        let mut bad = bytes.clone();
        bad[SHARD_HEADER_LEN + FRAME_HEADER_LEN_V2 - 2] ^= 1; // the first frame's CRC
        let s = read(&bad);
        assert_eq!(
            s.frames.iter().map(|f| f.time_us).collect::<Vec<_>>(),
            vec![2]
        );
    }

    #[test]
    fn a_shard_without_its_header_is_still_read_and_said() {
        let bytes = shard(&[(1, b"a")]);
        let s = read(&bytes[SHARD_HEADER_LEN..]);
        assert!(s.bad_header);
        assert_eq!(s.frames.len(), 1);
        assert!(read(b"").bad_header);
        assert!(read(b"").frames.is_empty());
    }
}
