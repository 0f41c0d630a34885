//! Proxmox Backup Server's files, read as PBS reads them: a datastore's
//! index files (`.fidx`, `.didx`), a chunk's blob header, and
//! `/etc/proxmox-backup/datastore.cfg`.
//!
//! The formats are PBS's own, from `pbs-datastore/src/file_formats.rs`,
//! `fixed_index.rs` and `dynamic_index.rs` (proxmox-backup), and its
//! `docs/file-formats.rst`:
//!
//! - A blob (a chunk, or a snapshot's `.blob`): an 8-byte magic, a CRC32
//!   of what follows (little-endian), then the data: zstd-compressed or
//!   not; encrypted blobs add a 16-byte IV and a 16-byte tag.
//! - `.fidx` (a VM disk image, fixed-size chunks): a 4096-byte header
//!   (magic, uuid 16, ctime i64, index checksum 32, size u64, chunk size
//!   u64, zero padding), then a 32-byte SHA-256 digest per chunk; the
//!   chunk count is the size over the chunk size, rounded up.
//! - `.didx` (a file archive, variable chunks): a 4096-byte header (magic,
//!   uuid, ctime, index checksum), then per chunk its end offset (u64) and
//!   digest; the ends rise.
//! - datastore.cfg: PBS's section config, `datastore: NAME` and its
//!   indented properties; `tuning` a property string of `key=value`s.
//!
//! All integers are little-endian. Nothing here touches a file: the bytes
//! come in, plain data or the reason they are refused comes out.

use crate::sectionconfig::{Lines, is_space, parse_header, parse_property, quote};

/// `sha256("Proxmox Backup uncompressed blob v1.0")[0..8]`.
pub const UNCOMPRESSED_BLOB_MAGIC: [u8; 8] = [66, 171, 56, 7, 190, 131, 112, 161];
/// `sha256("Proxmox Backup zstd compressed blob v1.0")[0..8]`.
pub const COMPRESSED_BLOB_MAGIC: [u8; 8] = [49, 185, 88, 66, 111, 182, 163, 127];
/// `sha256("Proxmox Backup encrypted blob v1.0")[0..8]`.
pub const ENCRYPTED_BLOB_MAGIC: [u8; 8] = [123, 103, 133, 190, 34, 45, 76, 240];
/// `sha256("Proxmox Backup zstd compressed encrypted blob v1.0")[0..8]`.
pub const ENCR_COMPR_BLOB_MAGIC: [u8; 8] = [230, 89, 27, 191, 11, 191, 216, 11];
/// `sha256("Proxmox Backup fixed sized chunk index v1.0")[0..8]`.
pub const FIXED_INDEX_MAGIC: [u8; 8] = [47, 127, 65, 237, 145, 253, 15, 205];
/// `sha256("Proxmox Backup dynamic sized chunk index v1.0")[0..8]`.
pub const DYNAMIC_INDEX_MAGIC: [u8; 8] = [28, 145, 78, 165, 25, 186, 179, 205];
/// An index file's header, both kinds.
pub const INDEX_HEADER: usize = 4096;
/// A blob's header: magic and CRC (encrypted ones add 32 bytes).
pub const BLOB_HEADER: usize = 12;

/// What a blob holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobKind {
    Uncompressed,
    Compressed,
    Encrypted,
    EncryptedCompressed,
}

/// A blob's header read: its kind, where its data starts and its CRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobHeader {
    pub kind: BlobKind,
    /// Bytes before the data (12, or 44 when encrypted).
    pub data_at: usize,
    /// The CRC32 PBS wrote: of everything after the magic and the CRC.
    pub crc: u32,
}

/// Why bytes are no blob or no index PBS would read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("{0} bytes: shorter than its header")]
    Short(usize),
    #[error("not a PBS {what} (its magic number is {magic:?})")]
    Magic { what: &'static str, magic: [u8; 8] },
    #[error("{len} bytes, where a fixed index of {count} chunks has {expected}")]
    FixedLength {
        len: usize,
        count: u64,
        expected: u64,
    },
    #[error("a chunk size of 0")]
    ChunkSizeZero,
    #[error("{0} bytes after the header: no whole number of 40-byte entries")]
    DynamicLength(usize),
    #[error("entry {0}'s end offset is below the one before it")]
    EndsFall(usize),
}

/// The header of blob `bytes`.
pub fn blob_header(bytes: &[u8]) -> Result<BlobHeader, FormatError> {
    let magic: [u8; 8] = bytes
        .get(..8)
        .and_then(|m| m.try_into().ok())
        .ok_or(FormatError::Short(bytes.len()))?;
    let (kind, data_at) = match magic {
        UNCOMPRESSED_BLOB_MAGIC => (BlobKind::Uncompressed, BLOB_HEADER),
        COMPRESSED_BLOB_MAGIC => (BlobKind::Compressed, BLOB_HEADER),
        ENCRYPTED_BLOB_MAGIC => (BlobKind::Encrypted, BLOB_HEADER + 32),
        ENCR_COMPR_BLOB_MAGIC => (BlobKind::EncryptedCompressed, BLOB_HEADER + 32),
        magic => {
            return Err(FormatError::Magic {
                what: "blob",
                magic,
            });
        }
    };
    if bytes.len() < data_at {
        return Err(FormatError::Short(bytes.len()));
    }
    let crc = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    Ok(BlobHeader { kind, data_at, crc })
}

/// Whether blob `bytes`' CRC is the one its header holds, as PBS's
/// `DataBlob::verify_crc` checks it: over everything after the CRC.
pub fn blob_crc_ok(bytes: &[u8]) -> Result<bool, FormatError> {
    let header = blob_header(bytes)?;
    Ok(crc32fast::hash(&bytes[BLOB_HEADER..]) == header.crc)
}

/// An index file read: which kind, when it was made and its chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub kind: IndexKind,
    /// Seconds since the epoch.
    pub ctime: i64,
    /// The checksum the header holds (SHA-256 over the entries, as
    /// PBS computes it: the caller checks it, this crate has no SHA-256).
    pub csum: [u8; 32],
    /// Each chunk's digest, in the index's order.
    pub digests: Vec<[u8; 32]>,
    /// `.didx` only: each chunk's end offset in the archive.
    pub ends: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// `.fidx`: the image's size and its chunk size.
    Fixed { size: u64, chunk_size: u64 },
    /// `.didx`.
    Dynamic,
}

impl Index {
    /// The bytes the index stands for: the image's size, or the last end.
    pub fn size(&self) -> u64 {
        match self.kind {
            IndexKind::Fixed { size, .. } => size,
            IndexKind::Dynamic => self.ends.last().copied().unwrap_or(0),
        }
    }
}

fn array<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

/// Index file `bytes`, either kind, told by its magic.
pub fn index(bytes: &[u8]) -> Result<Index, FormatError> {
    if bytes.len() < INDEX_HEADER {
        return Err(FormatError::Short(bytes.len()));
    }
    let magic: [u8; 8] = array(bytes, 0);
    let ctime = i64::from_le_bytes(array(bytes, 24));
    let csum: [u8; 32] = array(bytes, 32);
    let body = &bytes[INDEX_HEADER..];
    match magic {
        FIXED_INDEX_MAGIC => {
            let size = u64::from_le_bytes(array(bytes, 64));
            let chunk_size = u64::from_le_bytes(array(bytes, 72));
            if chunk_size == 0 {
                return Err(FormatError::ChunkSizeZero);
            }
            let count = size.div_ceil(chunk_size);
            let expected = count
                .checked_mul(32)
                .and_then(|b| b.checked_add(INDEX_HEADER as u64));
            if expected != Some(bytes.len() as u64) {
                return Err(FormatError::FixedLength {
                    len: bytes.len(),
                    count,
                    expected: expected.unwrap_or(u64::MAX),
                });
            }
            Ok(Index {
                kind: IndexKind::Fixed { size, chunk_size },
                ctime,
                csum,
                digests: body.chunks_exact(32).map(|d| array(d, 0)).collect(),
                ends: Vec::new(),
            })
        }
        DYNAMIC_INDEX_MAGIC => {
            if !body.len().is_multiple_of(40) {
                return Err(FormatError::DynamicLength(body.len()));
            }
            let mut ends = Vec::with_capacity(body.len() / 40);
            let mut digests = Vec::with_capacity(body.len() / 40);
            for (i, e) in body.chunks_exact(40).enumerate() {
                let end = u64::from_le_bytes(array(e, 0));
                if ends.last().is_some_and(|&before| end < before) {
                    return Err(FormatError::EndsFall(i));
                }
                ends.push(end);
                digests.push(array(e, 8));
            }
            Ok(Index {
                kind: IndexKind::Dynamic,
                ctime,
                csum,
                digests,
                ends,
            })
        }
        magic => Err(FormatError::Magic {
            what: "index",
            magic,
        }),
    }
}

/// Warnings kept.
pub const MAX_WARNINGS: usize = 256;
/// Larger input is refused: a datastore.cfg is a few KiB.
pub const MAX_CFG_BYTES: usize = 1 << 20;

/// How a datastore syncs what a backup wrote (`tuning sync-level=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncLevel {
    /// Nothing: the kernel writes back when it will.
    None,
    /// One `syncfs` when a backup ends: PBS's default.
    #[default]
    Filesystem,
    /// An fsync of each chunk and its directory.
    File,
}

impl SyncLevel {
    pub const ALL: [SyncLevel; 3] = [SyncLevel::None, SyncLevel::Filesystem, SyncLevel::File];

    pub fn name(self) -> &'static str {
        match self {
            SyncLevel::None => "none",
            SyncLevel::Filesystem => "filesystem",
            SyncLevel::File => "file",
        }
    }
}

/// A datastore's `tuning`, each with PBS's default where it is unset.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tuning {
    pub sync_level: SyncLevel,
    /// `chunk-order`: `inode` (the default) or `none`.
    pub chunk_order_inode: bool,
    /// `gc-atime-cutoff`, minutes: chunks not touched since phase 1's
    /// start less this are removed (1445: 24 h 5 min).
    pub gc_atime_cutoff_min: u64,
    /// `gc-atime-safety-check` (on by default).
    pub gc_atime_safety_check: bool,
    /// `gc-cache-capacity`: digests phase 1 remembers as touched (1 Mi).
    pub gc_cache_capacity: u64,
    /// `default-verification-readers` (PBS 4.1; 1).
    pub verify_readers: u64,
    /// `default-verification-workers` (PBS 4.1; 4).
    pub verify_workers: u64,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            sync_level: SyncLevel::Filesystem,
            chunk_order_inode: true,
            gc_atime_cutoff_min: 1445,
            gc_atime_safety_check: true,
            gc_cache_capacity: 1024 * 1024,
            verify_readers: 1,
            verify_workers: 4,
        }
    }
}

/// One `datastore:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datastore {
    pub name: String,
    pub path: String,
    pub tuning: Tuning,
}

/// datastore.cfg read: its datastores, and what was set aside.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DatastoreCfg {
    pub stores: Vec<Datastore>,
    /// A tuning key PBS does not have, a value out of its range: each
    /// ignored (PBS's default kept) and said.
    pub warnings: Vec<String>,
}

/// Why datastore.cfg cannot be read: PBS refuses such a file too.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CfgError {
    #[error("{0} bytes: larger than any datastore.cfg")]
    TooLarge(usize),
    #[error("line {line}: neither a section header nor a property: {text:?}")]
    Syntax { line: usize, text: String },
    #[error("line {line}: datastore {name:?} has no path")]
    NoPath { line: usize, name: String },
}

/// `/etc/proxmox-backup/datastore.cfg`.
pub fn datastore_cfg(text: &str) -> Result<DatastoreCfg, CfgError> {
    if text.len() > MAX_CFG_BYTES {
        return Err(CfgError::TooLarge(text.len()));
    }
    let mut out = DatastoreCfg::default();
    let mut lines = Lines::new(text);
    while let Some((line, header)) = lines.next_content() {
        if header.trim_matches(is_space).is_empty() {
            continue;
        }
        let Some((kind, name)) = parse_header(header) else {
            return Err(CfgError::Syntax {
                line,
                text: quote(header),
            });
        };
        let mut path = None;
        let mut tuning = Tuning::default();
        while let Some((at, prop)) = lines.next_in_section() {
            let Some((key, value)) = parse_property(prop) else {
                return Err(CfgError::Syntax {
                    line: at,
                    text: quote(prop),
                });
            };
            match (key, value) {
                ("path", Some(v)) => path = Some(v.to_string()),
                ("tuning", Some(v)) => tuning_of(v, &mut tuning, &mut out.warnings),
                _ => {}
            }
        }
        if kind != "datastore" {
            // A section of another kind (an S3 endpoint, a removable
            // datastore's own): not ours to read.
            continue;
        }
        let Some(path) = path else {
            return Err(CfgError::NoPath {
                line,
                name: name.to_string(),
            });
        };
        out.stores.push(Datastore {
            name: name.to_string(),
            path,
            tuning,
        });
    }
    Ok(out)
}

/// `gc-atime-cutoff`'s largest value in PBS's schema: 2 days, in minutes.
const GC_ATIME_CUTOFF_MAX: u64 = 2880;

/// A tuning property string (`sync-level=file,gc-atime-cutoff=60`) into
/// `tuning`; what PBS would refuse is said in `warnings` and left at its
/// default.
fn tuning_of(text: &str, tuning: &mut Tuning, warnings: &mut Vec<String>) {
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let int = |min: u64, max: u64| {
            value
                .parse::<u64>()
                .ok()
                .filter(|v| (min..=max).contains(v))
        };
        let flag = match value {
            "1" | "true" | "yes" | "on" => Some(true),
            "0" | "false" | "no" | "off" => Some(false),
            _ => None,
        };
        let set = match key {
            "sync-level" => SyncLevel::ALL
                .into_iter()
                .find(|l| l.name() == value)
                .map(|l| tuning.sync_level = l),
            "chunk-order" => ["none", "inode"]
                .iter()
                .position(|o| *o == value)
                .map(|i| tuning.chunk_order_inode = i == 1),
            "gc-atime-cutoff" => {
                int(1, GC_ATIME_CUTOFF_MAX).map(|v| tuning.gc_atime_cutoff_min = v)
            }
            "gc-atime-safety-check" => flag.map(|v| tuning.gc_atime_safety_check = v),
            "gc-cache-capacity" => int(0, 8 * 1024 * 1024).map(|v| tuning.gc_cache_capacity = v),
            "default-verification-readers" => int(1, 32).map(|v| tuning.verify_readers = v),
            "default-verification-workers" => int(1, 32).map(|v| tuning.verify_workers = v),
            _ => None,
        };
        if set.is_none() && warnings.len() < MAX_WARNINGS {
            warnings.push(format!("tuning {}: ignored", quote(part)));
        }
    }
}

/// A Debian version's leading numbers (`2.0.1-1` gives `[2, 0, 1]`), for
/// comparing upstream releases.
pub fn version_numbers(version: &str) -> Vec<u64> {
    let upstream = version.split_once(':').map_or(version, |(_, v)| v);
    let upstream = upstream.split(['-', '~', '+']).next().unwrap_or_default();
    upstream
        .split('.')
        .map_while(|p| p.parse::<u64>().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::fixture;

    fn blob(magic: [u8; 8], data: &[u8]) -> Vec<u8> {
        let mut out = magic.to_vec();
        out.extend(crc32fast::hash(data).to_le_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn a_blob_is_told_by_its_magic_and_its_crc_checked_over_its_data() {
        let b = blob(COMPRESSED_BLOB_MAGIC, b"zstd bytes");
        let h = blob_header(&b).unwrap();
        assert_eq!(h.kind, BlobKind::Compressed);
        assert_eq!(h.data_at, 12);
        assert!(blob_crc_ok(&b).unwrap());
        let mut bad = b.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(!blob_crc_ok(&bad).unwrap());
        assert_eq!(
            blob_header(&blob(ENCRYPTED_BLOB_MAGIC, &[0; 40]))
                .unwrap()
                .data_at,
            44
        );
        assert!(matches!(blob_header(&b[..7]), Err(FormatError::Short(7))));
        assert!(matches!(
            blob_header(&blob(FIXED_INDEX_MAGIC, b"x")),
            Err(FormatError::Magic { what: "blob", .. })
        ));
    }

    fn header(magic: [u8; 8], extra: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; INDEX_HEADER];
        h[..8].copy_from_slice(&magic);
        h[24..32].copy_from_slice(&1_700_000_000i64.to_le_bytes());
        h[32..64].copy_from_slice(&[7; 32]);
        h[64..64 + extra.len()].copy_from_slice(extra);
        h
    }

    #[test]
    fn a_fixed_index_gives_its_size_chunk_size_and_digests() {
        let size = 3 * 4_194_304 + 1;
        let mut extra = (size as u64).to_le_bytes().to_vec();
        extra.extend(4_194_304u64.to_le_bytes());
        let mut f = header(FIXED_INDEX_MAGIC, &extra);
        for d in 0..4u8 {
            f.extend([d; 32]);
        }
        let i = index(&f).unwrap();
        assert_eq!(
            i.kind,
            IndexKind::Fixed {
                size: size as u64,
                chunk_size: 4_194_304
            }
        );
        assert_eq!(i.ctime, 1_700_000_000);
        assert_eq!(i.csum, [7; 32]);
        assert_eq!(i.digests.len(), 4);
        assert_eq!(i.digests[3], [3; 32]);
        assert_eq!(i.size(), size as u64);
        // One digest short of its size: damaged.
        assert!(matches!(
            index(&f[..f.len() - 32]),
            Err(FormatError::FixedLength { count: 4, .. })
        ));
        let mut zero = f.clone();
        zero[72..80].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(index(&zero), Err(FormatError::ChunkSizeZero));
    }

    #[test]
    fn a_dynamic_index_gives_rising_ends_and_refuses_falling_ones() {
        let mut d = header(DYNAMIC_INDEX_MAGIC, &[]);
        for (end, digest) in [(100u64, 1u8), (4_000_000, 2), (4_000_000, 3)] {
            d.extend(end.to_le_bytes());
            d.extend([digest; 32]);
        }
        let i = index(&d).unwrap();
        assert_eq!(i.kind, IndexKind::Dynamic);
        assert_eq!(i.ends, vec![100, 4_000_000, 4_000_000]);
        assert_eq!(i.digests[1], [2; 32]);
        assert_eq!(i.size(), 4_000_000);
        assert_eq!(
            index(&d[..d.len() - 1]),
            Err(FormatError::DynamicLength(119))
        );
        let mut falling = d.clone();
        let at = INDEX_HEADER + 80;
        falling[at..at + 8].copy_from_slice(&5u64.to_le_bytes());
        assert_eq!(index(&falling), Err(FormatError::EndsFall(2)));
        assert!(matches!(
            index(&vec![0; 5000]),
            Err(FormatError::Magic { what: "index", .. })
        ));
        assert_eq!(index(&[0; 10]), Err(FormatError::Short(10)));
    }

    #[test]
    fn datastore_cfg_gives_each_store_its_path_and_tuning_with_pbs_defaults() {
        let cfg = datastore_cfg(&fixture("pbs", "datastore.cfg")).unwrap();
        let names: Vec<&str> = cfg.stores.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["store1", "nvme", "offsite"]);
        assert_eq!(cfg.stores[0].path, "/mnt/datastore/store1");
        assert_eq!(cfg.stores[0].tuning, Tuning::default());
        let t = &cfg.stores[1].tuning;
        assert_eq!(t.sync_level, SyncLevel::File);
        assert!(!t.chunk_order_inode);
        assert_eq!(t.gc_atime_cutoff_min, 60);
        assert_eq!(t.gc_cache_capacity, 2_097_152);
        assert_eq!((t.verify_readers, t.verify_workers), (2, 8));
        let t = &cfg.stores[2].tuning;
        assert_eq!(t.sync_level, SyncLevel::Filesystem);
        assert!(!t.gc_atime_safety_check);
        assert_eq!(cfg.warnings, ["tuning sync-level=bogus: ignored"]);
    }

    #[test]
    fn a_debian_version_s_numbers() {
        assert_eq!(version_numbers("2.0.1-1"), [2, 0, 1]);
        assert_eq!(version_numbers("1:1.5.1~bpo12"), [1, 5, 1]);
        assert!(version_numbers("1.5.1-1") < version_numbers("2.0.1"));
    }

    #[test]
    fn a_datastore_cfg_with_garbage_or_without_a_path_is_refused_with_its_line() {
        assert!(matches!(
            datastore_cfg("datastore: a\n\tpath /x\n\u{0}\u{1}garbage here\n"),
            Err(CfgError::Syntax { line: 3, .. })
        ));
        assert!(matches!(
            datastore_cfg("datastore: a\n\tcomment none\n"),
            Err(CfgError::NoPath { line: 1, .. })
        ));
        assert_eq!(datastore_cfg("").unwrap().stores, vec![]);
        assert!(matches!(
            datastore_cfg(&"x".repeat(MAX_CFG_BYTES + 1)),
            Err(CfgError::TooLarge(_))
        ));
    }
}
