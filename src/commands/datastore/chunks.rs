//! The chunks `datastore` writes, made as a PBS client makes a VM's: 4 MiB
//! of image (a `.fidx` backup's fixed chunk size), its SHA-256 the digest
//! that names the file, compressed with zstd level 1 into a blob (PBS's
//! magic, the CRC32 of what follows, the data; stored uncompressed when
//! zstd does not make it smaller, as `DataChunkBuilder` does), and the
//! `.fidx` index that lists them. Chunks are made on threads of their own,
//! ahead of the timed calls, so the figures time the disk, not the making.

use std::os::fd::AsFd;

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use rand::{Rng, RngExt};

use crate::error::ProbeError;
use pveprobe_parse::pbs;

/// A VM backup's chunk: 4 MiB of image.
pub const CHUNK_BYTES: usize = 4 << 20;
/// The image is made in blocks of this size: each random or zero.
const BLOCK: usize = 4096;
/// Shares of random (incompressible) blocks in a chunk, lowest and highest:
/// the rest are zero pages and a few repeated ones, so a chunk stores at
/// 1.2 to 2.0 MiB (1.6 on average), as real datastores' chunks do
/// (1.4-1.9 MiB for 4 MiB of image).
const RANDOM_SHARE: (f64, f64) = (0.30, 0.50);

/// One chunk: its digest and its blob as PBS stores it.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub digest: [u8; 32],
    pub blob: Vec<u8>,
}

impl Chunk {
    /// `xxxx/<64 hex>`: its path under `.chunks`, as PBS names it.
    pub fn rel_path(&self) -> String {
        rel_path(&self.digest)
    }
}

/// `xxxx/<64 hex>` of `digest` under `.chunks`.
pub fn rel_path(digest: &[u8; 32]) -> String {
    let hex = hex(digest);
    format!("{}/{hex}", &hex[..4])
}

pub fn hex(digest: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// 4 MiB of image that compresses as a VM's does.
fn image(rng: &mut impl Rng) -> Vec<u8> {
    let mut data = vec![0u8; CHUNK_BYTES];
    let share = rng.random_range(RANDOM_SHARE.0..RANDOM_SHARE.1);
    for block in data.chunks_mut(BLOCK) {
        if rng.random_bool(share) {
            rng.fill_bytes(block);
        }
    }
    data
}

/// The blob PBS stores for `data`: compressed when that is smaller.
pub fn blob(data: &[u8]) -> Vec<u8> {
    let compressed = zstd::bulk::compress(data, 1).ok();
    let (magic, body) = match compressed {
        Some(c) if c.len() < data.len() => (pbs::COMPRESSED_BLOB_MAGIC, c),
        _ => (pbs::UNCOMPRESSED_BLOB_MAGIC, data.to_vec()),
    };
    let mut out = Vec::with_capacity(pbs::BLOB_HEADER + body.len());
    out.extend_from_slice(&magic);
    out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// A chunk of PBS's zero image (`build_zero_chunk`): what PBS's atime
/// check inserts.
pub fn zero_chunk() -> Chunk {
    let data = vec![0u8; CHUNK_BYTES];
    Chunk {
        digest: openssl::sha::sha256(&data),
        blob: blob(&data),
    }
}

/// A new chunk, unlike any other.
pub fn make() -> Chunk {
    let data = image(&mut rand::rng());
    Chunk {
        digest: openssl::sha::sha256(&data),
        blob: blob(&data),
    }
}

/// `count` chunks made on `threads` threads, every thread joined before
/// they are given: none is still ending (its stack and heap handed back)
/// while the calls that write them are timed.
pub fn made(count: usize, threads: usize) -> Vec<Chunk> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let makers: Vec<_> = (0..threads.clamp(1, count.max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < count {
                        mine.push(make());
                    }
                    mine
                })
            })
            .collect();
        makers
            .into_iter()
            .flat_map(|m| m.join().unwrap_or_default())
            .collect()
    })
}

/// A `.fidx` listing `digests` in order, as PBS writes a VM disk's index
/// (`FixedIndexWriter`): the header's checksum is the SHA-256 of the
/// digests.
pub fn fixed_index(digests: &[[u8; 32]], ctime: i64) -> Vec<u8> {
    let mut out = vec![0u8; pbs::INDEX_HEADER];
    out[..8].copy_from_slice(&pbs::FIXED_INDEX_MAGIC);
    out[8..24].copy_from_slice(&rand::rng().random::<[u8; 16]>());
    out[24..32].copy_from_slice(&ctime.to_le_bytes());
    out[32..64].copy_from_slice(&index_csum(digests, &[]));
    let size = (digests.len() * CHUNK_BYTES) as u64;
    out[64..72].copy_from_slice(&size.to_le_bytes());
    out[72..80].copy_from_slice(&(CHUNK_BYTES as u64).to_le_bytes());
    for d in digests {
        out.extend_from_slice(d);
    }
    out
}

/// An index's checksum as PBS computes it: SHA-256 over the digests
/// (`.fidx`, no `ends`), or over each end offset and digest (`.didx`).
pub fn index_csum(digests: &[[u8; 32]], ends: &[u64]) -> [u8; 32] {
    let mut sha = openssl::sha::Sha256::new();
    for (i, d) in digests.iter().enumerate() {
        if let Some(end) = ends.get(i) {
            sha.update(&end.to_le_bytes());
        }
        sha.update(d);
    }
    sha.finish()
}

/// The names of chunks (64 hex digits) in prefix directory `prefix`,
/// read with `O_NOATIME` (a datastore's directories keep their atimes;
/// refused to one neither root nor their owner, which is an error here).
pub fn chunk_names<Fd: AsFd>(store: Fd, prefix: &str) -> Result<Vec<String>, ProbeError> {
    let mut dir = nix::dir::Dir::openat(
        store.as_fd(),
        prefix,
        OFlag::O_RDONLY
            | OFlag::O_DIRECTORY
            | OFlag::O_NOFOLLOW
            | OFlag::O_CLOEXEC
            | OFlag::O_NOATIME,
        Mode::empty(),
    )
    .map_err(|e| ProbeError::io(format!("open .chunks/{prefix}"), e.into()))?;
    Ok(dir
        .iter()
        .flatten()
        .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
        .filter(|n| n.len() == 64 && n.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_is_a_pbs_blob_named_by_the_sha256_of_its_image() {
        let c = make();
        let h = pbs::blob_header(&c.blob).unwrap();
        assert_eq!(h.kind, pbs::BlobKind::Compressed);
        assert!(pbs::blob_crc_ok(&c.blob).unwrap());
        let image = zstd::bulk::decompress(&c.blob[12..], CHUNK_BYTES).unwrap();
        assert_eq!(image.len(), CHUNK_BYTES);
        assert_eq!(openssl::sha::sha256(&image), c.digest);
        // On disk as real datastores' chunks: 1.2 to 2.0 MiB of 4.
        let mib = c.blob.len() as f64 / f64::from(1 << 20);
        assert!((1.1..2.1).contains(&mib), "{mib} MiB");
        assert_eq!(c.rel_path()[..4], hex(&c.digest)[..4]);
        assert_eq!(c.rel_path().len(), 4 + 1 + 64);
    }

    #[test]
    fn incompressible_data_is_stored_uncompressed_as_pbs_does() {
        let mut data = vec![0u8; 65536];
        rand::rng().fill_bytes(&mut data);
        let b = blob(&data);
        assert_eq!(
            pbs::blob_header(&b).unwrap().kind,
            pbs::BlobKind::Uncompressed
        );
        assert_eq!(&b[12..], &data[..]);
        assert!(pbs::blob_crc_ok(&b).unwrap());
    }

    #[test]
    fn the_fixed_index_reads_back_in_pbs_format_with_its_checksum() {
        let digests = [[1u8; 32], [2; 32], [3; 32]];
        let bytes = fixed_index(&digests, 1_700_000_000);
        let i = pbs::index(&bytes).unwrap();
        assert_eq!(i.digests, digests);
        assert_eq!(i.size(), 3 * CHUNK_BYTES as u64);
        assert_eq!(i.csum, index_csum(&i.digests, &i.ends));
        assert_eq!(i.ctime, 1_700_000_000);
    }

    #[test]
    fn as_many_distinct_chunks_are_made_as_asked() {
        let got = made(5, 3);
        assert_eq!(got.len(), 5);
        let mut digests: Vec<_> = got.iter().map(|c| c.digest).collect();
        digests.sort();
        digests.dedup();
        assert_eq!(digests.len(), 5);
    }
}
