//! The store read back: the frames whose key times fall in a window, in
//! the order they were written, each frame's summary at once and its
//! payload opened only when asked for (`top --worst` ranks a week by the
//! summaries and opens the few frames it shows). Damage is skipped to the
//! next good frame and said; a frame being written is left out.

use std::ops::Range;
use std::path::{Path, PathBuf};

use pveprobe_parse::recordframe::{self, Summary};

use super::{StoreError, io, shards};

/// A store's directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// One frame found.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    pub time_us: i64,
    pub summary: Summary,
    shard: usize,
    payload: Range<usize>,
}

/// The frames of a window, with the shards' bytes they are in.
#[derive(Debug, Default)]
pub struct Scanned {
    pub entries: Vec<Kept>,
    /// Damage skipped, a shard's header missing.
    pub notes: Vec<String>,
    /// The shards read, and the days they cover (first and last).
    pub shards: usize,
    pub days: Option<(jiff::civil::Date, jiff::civil::Date)>,
    bytes: Vec<Vec<u8>>,
}

impl Scanned {
    /// Kept `i`'s payload, uncompressed.
    pub fn payload(&self, i: usize) -> Result<Vec<u8>, String> {
        let e = &self.entries[i];
        let packed = &self.bytes[e.shard][e.payload.clone()];
        zstd::stream::decode_all(packed)
            .map_err(|e| format!("a frame that will not decompress: {e}"))
    }
}

impl Store {
    pub fn at(dir: &Path) -> Store {
        Store {
            dir: dir.to_path_buf(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether `dir` holds a store: a directory with a shard in it.
    pub fn exists(&self) -> bool {
        shards(&self.dir).is_ok_and(|s| !s.is_empty())
    }

    /// The frames with key times in `from_us..=to_us`.
    pub fn scan(&self, from_us: i64, to_us: i64) -> Result<Scanned, StoreError> {
        if !self.dir.is_dir() {
            return Err(StoreError::NotAStore(self.dir.clone()));
        }
        let (first, last) = (super::day_of(from_us), super::day_of(to_us));
        let mut out = Scanned::default();
        for s in shards(&self.dir)? {
            if from_us != i64::MIN && s.day < first || to_us != i64::MAX && s.day > last {
                continue;
            }
            let bytes = std::fs::read(&s.path).map_err(io(&s.path))?;
            let shard = recordframe::read(&bytes);
            let name = s.path.display();
            if shard.bad_header {
                out.notes
                    .push(format!("{name}: no shard header (damaged?): read anyway"));
            }
            for d in &shard.damage {
                out.notes.push(format!(
                    "{name}: {} damaged bytes at offset {} skipped (what was recorded there is lost)",
                    d.bytes, d.offset
                ));
            }
            let index = out.bytes.len();
            out.entries.extend(
                shard
                    .frames
                    .iter()
                    .filter(|f| (from_us..=to_us).contains(&f.time_us))
                    .map(|f| Kept {
                        time_us: f.time_us,
                        summary: f.summary,
                        shard: index,
                        payload: f.payload.clone(),
                    }),
            );
            out.days = Some(match out.days {
                Some((a, _)) => (a, s.day),
                None => (s.day, s.day),
            });
            out.shards += 1;
            out.bytes.push(bytes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Limits, Writer};

    #[test]
    fn random_bytes_in_a_shard_lose_what_they_cover_only_and_are_said() {
        let dir = tempfile::tempdir().unwrap();
        let t0: i64 = 1_796_000_000_000_000;
        let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
        for i in 0..100 {
            w.append(
                t0 + i * 10_000_000,
                Summary::NONE,
                format!("interval {i}").as_bytes(),
            )
            .unwrap();
        }
        let path = super::super::shards(dir.path()).unwrap()[0].path.clone();
        let mut bytes = std::fs::read(&path).unwrap();
        let len = bytes.len();
        let (at, n) = (len / 3, 200);
        let mut x: u32 = 12345;
        for b in &mut bytes[at..at + n] {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *b = (x >> 16) as u8;
        }
        std::fs::write(&path, &bytes).unwrap();
        let got = Store::at(dir.path()).scan(i64::MIN, i64::MAX).unwrap();
        let read: Vec<String> = (0..got.entries.len())
            .map(|i| String::from_utf8(got.payload(i).unwrap()).unwrap())
            .collect();
        // Every frame wholly before or after the damage is read.
        let before = read.iter().take_while(|r| r.as_str() != "x").count();
        assert!(read.len() >= 100 - 6, "{} of 100", read.len());
        assert!(read.len() < 100);
        assert_eq!(read[0], "interval 0");
        assert_eq!(read.last().unwrap(), "interval 99");
        assert!(before > 0);
        // In order, with a gap where the damage is.
        let nums: Vec<i64> = read
            .iter()
            .map(|r| r.strip_prefix("interval ").unwrap().parse().unwrap())
            .collect();
        assert!(nums.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(got.notes.len(), 1, "{:?}", got.notes);
        assert!(got.notes[0].contains("damaged bytes"));
    }

    #[test]
    fn a_window_reads_only_its_frames() {
        let dir = tempfile::tempdir().unwrap();
        let t0: i64 = 1_796_000_000_000_000;
        let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
        for i in 0..10 {
            w.append(t0 + i, Summary::NONE, b"p").unwrap();
        }
        let got = Store::at(dir.path()).scan(t0 + 3, t0 + 5).unwrap();
        let times: Vec<i64> = got.entries.iter().map(|e| e.time_us - t0).collect();
        assert_eq!(times, [3, 4, 5]);
        assert!(matches!(
            Store::at(&dir.path().join("none")).scan(0, 1),
            Err(StoreError::NotAStore(_))
        ));
    }
}
