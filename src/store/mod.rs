//! The store `pveprobe record` keeps and `top --from`/`--worst` read
//! (docs/record.md): one shard a day (`YYYY-MM-DD.pvr`, the UTC day of its
//! frames' key times) in one directory, each an append-only file of
//! frames (`parse::recordframe`), each frame's payload compressed alone
//! with zstd, so a torn write loses only the frame being written.
//!
//! The writer keeps key times rising: a clock stepped back holds the key
//! at the last one's (plus a microsecond) until the clock passes it, so a
//! reader sees the frames in the order they were written. It drops whole
//! shards past the retention and over the size cap (never past a share of
//! the filesystem's free space), and pauses when the filesystem is full,
//! saying so once, and goes on when room comes back.

pub mod read;

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use jiff::civil::Date;
use pveprobe_parse::recordframe::{self, Summary};

/// The store's place on a PVE node (the unit's `StateDirectory`).
pub const DEFAULT_DIR: &str = "/var/lib/pveprobe/record";
/// A shard's name ends so.
pub const SHARD_SUFFIX: &str = ".pvr";
/// zstd's level for a frame's payload (bench/README.md: the sizes and
/// times that chose it).
pub const ZSTD_LEVEL: i32 = 9;

/// How much the store keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Whole days kept before today's shard.
    pub retain_days: u32,
    /// The store's size at most, bytes.
    pub max_bytes: u64,
    /// And at most this share of its filesystem's free space (the store's
    /// own bytes counted as free).
    pub free_share: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            retain_days: 7,
            max_bytes: 1 << 30,
            free_share: 0.05,
        }
    }
}

/// What went wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {}", path.display(), crate::error::describe(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a directory of pveprobe record shards", .0.display())]
    NotAStore(PathBuf),
    #[error("{}: another recorder writes this store (its lock {LOCK} is held)", .0.display())]
    Busy(PathBuf),
}

/// The file a writer holds `flock(2)`ed while it runs: one writer a store,
/// and `top` knows a recorder runs.
pub const LOCK: &str = "writer.lock";

/// Whether a recorder writes the store in `dir` now.
pub fn recorder_runs(dir: &Path) -> bool {
    use nix::fcntl::{Flock, FlockArg};
    let Ok(file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir.join(LOCK))
    else {
        return false;
    };
    Flock::lock(file, FlockArg::LockSharedNonblock).is_err()
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A shard file: its day and size.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardFile {
    pub day: Date,
    pub path: PathBuf,
    pub bytes: u64,
}

/// The shards in `dir`, oldest first; what is no shard's name is left
/// alone.
pub fn shards(dir: &Path) -> Result<Vec<ShardFile>, StoreError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name();
        let Some(day) = name
            .to_str()
            .and_then(|n| n.strip_suffix(SHARD_SUFFIX))
            .and_then(|d| d.parse::<Date>().ok())
        else {
            continue;
        };
        let md = entry.metadata().map_err(io(&entry.path()))?;
        if md.is_file() {
            out.push(ShardFile {
                day,
                path: entry.path(),
                bytes: md.len(),
            });
        }
    }
    out.sort_by_key(|s| s.day);
    Ok(out)
}

/// The UTC day of a key time.
pub fn day_of(time_us: i64) -> Date {
    jiff::Timestamp::from_microsecond(time_us)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date()
}

/// What an append did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Appended {
    /// Written under this key time.
    Written { time_us: i64 },
    /// Not written: the store is paused (full filesystem, or the cap
    /// reached by today's shard alone).
    Paused,
}

/// Appends frames to the store; drops whole shards past the limits.
pub struct Writer {
    _lock: nix::fcntl::Flock<File>,
    dir: PathBuf,
    limits: Limits,
    current: Option<(Date, File, u64)>,
    last_time_us: i64,
    /// Why writing is paused, and how many intervals were not written.
    paused: Option<(String, u64)>,
    /// What the writer has to say (a pause, a resume, a shard dropped, a
    /// torn end cut): the caller logs each once.
    pub notes: Vec<String>,
}

impl Writer {
    /// The store in `dir` (made, 0750, if missing) locked for this writer
    /// alone, its newest shard's torn end (a write cut short by a crash)
    /// cut off, or the shard removed when all it holds is a torn header,
    /// its last key time read, and the limits applied.
    pub fn open(dir: &Path, limits: Limits) -> Result<Writer, StoreError> {
        use std::os::unix::fs::DirBuilderExt as _;
        if !dir.is_dir() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o750)
                .create(dir)
                .map_err(io(dir))?;
        }
        let lock_path = dir.join(LOCK);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o640)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|_| StoreError::Busy(dir.to_path_buf()))?;
        let mut w = Writer {
            _lock: lock,
            dir: dir.to_path_buf(),
            limits,
            current: None,
            last_time_us: i64::MIN,
            paused: None,
            notes: Vec::new(),
        };
        let mut all = shards(dir)?;
        while let Some(newest) = all.pop() {
            let bytes = std::fs::read(&newest.path).map_err(io(&newest.path))?;
            let shard = recordframe::read(&bytes);
            if let Some(last) = shard.frames.last() {
                w.last_time_us = last.time_us;
            }
            if bytes.len() < recordframe::SHARD_HEADER_LEN
                && recordframe::shard_header().starts_with(&bytes)
            {
                // Its header cut short (a crash as the day's shard was
                // made): nothing in it; made again, whole, when written.
                std::fs::remove_file(&newest.path).map_err(io(&newest.path))?;
                w.notes.push(format!(
                    "{}: its header was cut short ({} bytes, no interval): removed",
                    newest.path.display(),
                    bytes.len()
                ));
                // The shard before it holds the last key time.
                continue;
            }
            if shard.good_end < bytes.len() && !(shard.bad_header && shard.frames.is_empty()) {
                let f = OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&newest.path)
                    .map_err(io(&newest.path))?;
                f.set_len(shard.good_end as u64).map_err(io(&newest.path))?;
                w.notes.push(format!(
                    "{}: {} bytes at its end were no whole interval (a write cut short): cut off",
                    newest.path.display(),
                    bytes.len() - shard.good_end
                ));
            }
            break;
        }
        Ok(w)
    }

    /// The last key time written (or found on opening).
    pub fn last_time_us(&self) -> Option<i64> {
        (self.last_time_us != i64::MIN).then_some(self.last_time_us)
    }

    /// One interval, its end at wall time `wall_us`, its summary and its
    /// payload (compressed here).
    pub fn append(
        &mut self,
        wall_us: i64,
        summary: Summary,
        payload: &[u8],
    ) -> Result<Appended, StoreError> {
        let time_us = wall_us.max(self.last_time_us.saturating_add(1));
        let day = day_of(time_us);
        let packed = zstd::bulk::compress(payload, ZSTD_LEVEL).map_err(io(&self.dir))?;
        let frame = recordframe::frame(time_us, summary, &packed);
        let own = self.apply_limits(day, frame.len() as u64)?;
        if let Some(why) = self.no_room(frame.len() as u64, own)? {
            return Ok(self.pause(why));
        }
        let (file, good_end) = self.shard_for(day)?;
        let wrote = file.write_all(&frame);
        if let Err(e) = wrote {
            // Nothing torn left behind: the shard cut back to its last
            // whole frame.
            let _ = file.set_len(good_end);
            if matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) {
                return Ok(self.pause(format!("its filesystem is full ({e})")));
            }
            return Err(io(&self.dir)(e));
        }
        if let Some((_, _, end)) = &mut self.current {
            *end += frame.len() as u64;
        }
        if let Some((why, missed)) = self.paused.take() {
            self.notes.push(format!(
                "recording again: {missed} interval(s) not recorded while {why}"
            ));
        }
        self.last_time_us = time_us;
        Ok(Appended::Written { time_us })
    }

    fn pause(&mut self, why: String) -> Appended {
        match &mut self.paused {
            Some((_, missed)) => *missed += 1,
            None => {
                self.notes.push(format!(
                    "{}: recording paused: {why}; it goes on when there is room",
                    self.dir.display()
                ));
                self.paused = Some((why, 1));
            }
        }
        Appended::Paused
    }

    /// Today's shard, opened (and made, with its header) once; its length.
    fn shard_for(&mut self, day: Date) -> Result<(&mut File, u64), StoreError> {
        if self.current.as_ref().is_none_or(|(d, _, _)| *d != day) {
            let path = self.dir.join(format!("{day}{SHARD_SUFFIX}"));
            let mut file = OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o640)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
                .map_err(io(&path))?;
            let mut len = file.metadata().map_err(io(&path))?.len();
            if len == 0 {
                let header = recordframe::shard_header();
                if let Err(e) = file.write_all(&header) {
                    let _ = file.set_len(0);
                    return Err(io(&path)(e));
                }
                len = header.len() as u64;
            }
            self.current = Some((day, file, len));
        }
        let (_, file, len) = self.current.as_mut().expect("opened above");
        Ok((file, *len))
    }

    /// Why there is no room for `need` more bytes beside the store's `own`,
    /// if there is none: the filesystem's free space, or the cap reached by
    /// today's shard alone.
    fn no_room(&self, need: u64, own: u64) -> Result<Option<String>, StoreError> {
        let avail = self.free()?;
        if avail < need + RESERVE {
            return Ok(Some(format!(
                "its filesystem has {} KiB free",
                avail / 1024
            )));
        }
        let cap = self.cap(avail, own);
        Ok((own + need > cap).then(|| {
            format!(
                "today's shard alone reached the size cap ({} KiB; --max-size, and 5% of the free space)",
                cap / 1024
            )
        }))
    }

    /// The bytes the store may hold.
    fn cap(&self, avail: u64, own: u64) -> u64 {
        let share = ((avail + own) as f64 * self.limits.free_share) as u64;
        self.limits.max_bytes.min(share)
    }

    /// The filesystem's free bytes (for an unprivileged user).
    fn free(&self) -> Result<u64, StoreError> {
        let st = nix::sys::statvfs::statvfs(&self.dir)
            .map_err(|e| io(&self.dir)(std::io::Error::from(e)))?;
        Ok(st.blocks_available() as u64 * st.fragment_size() as u64)
    }

    /// Whole shards dropped, oldest first: those past the retention, then
    /// while the store and `need` more bytes are over its cap. Today's
    /// (`day`'s) is never dropped. The store's bytes after.
    fn apply_limits(&mut self, day: Date, need: u64) -> Result<u64, StoreError> {
        let oldest_kept = day
            .checked_sub(jiff::Span::new().days(i64::from(self.limits.retain_days)))
            .unwrap_or(day);
        let mut all = shards(&self.dir)?;
        let mut own: u64 = all.iter().map(|s| s.bytes).sum();
        let cap = self.cap(self.free()?, own);
        all.retain(|s| s.day < day);
        for s in all {
            let why = if s.day < oldest_kept {
                format!("older than {} days", self.limits.retain_days)
            } else if own + need > cap {
                format!("the store is over its cap ({} KiB)", cap / 1024)
            } else {
                continue;
            };
            std::fs::remove_file(&s.path).map_err(io(&s.path))?;
            own = own.saturating_sub(s.bytes);
            self.notes
                .push(format!("{}: dropped: {why}", s.path.display()));
        }
        Ok(own)
    }
}

/// Free space the writer never takes, bytes.
const RESERVE: u64 = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> i64 {
        let ts: jiff::Timestamp = s.parse().unwrap();
        ts.as_microsecond()
    }

    #[test]
    fn a_clock_stepped_back_never_reorders_the_frames() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
        let t = day("2026-12-06T10:00:00Z");
        for wall in [t, t + 10_000_000, t - 3_600_000_000, t + 20_000_000] {
            w.append(wall, Summary::NONE, b"{}").unwrap();
        }
        let got = read::Store::at(dir.path())
            .scan(i64::MIN, i64::MAX)
            .unwrap();
        let times: Vec<i64> = got.entries.iter().map(|e| e.time_us).collect();
        assert_eq!(
            times,
            vec![t, t + 10_000_000, t + 10_000_001, t + 20_000_000]
        );
        // Reopened, the writer goes on after the last key time.
        drop(w);
        let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
        assert_eq!(w.last_time_us(), Some(t + 20_000_000));
        w.append(t, Summary::NONE, b"{}").unwrap();
        assert_eq!(w.last_time_us(), Some(t + 20_000_001));
    }

    #[test]
    fn one_writer_a_store_and_a_reader_knows_one_runs() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!recorder_runs(dir.path()));
        let w = Writer::open(dir.path(), Limits::default()).unwrap();
        assert!(recorder_runs(dir.path()));
        assert!(matches!(
            Writer::open(dir.path(), Limits::default()),
            Err(StoreError::Busy(_))
        ));
        drop(w);
        assert!(!recorder_runs(dir.path()));
        Writer::open(dir.path(), Limits::default()).unwrap();
    }

    #[test]
    fn shards_past_the_retention_and_over_the_cap_are_dropped_whole_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let payload = vec![b'x'; 1000];
        let limits = Limits {
            retain_days: 3,
            max_bytes: u64::MAX,
            free_share: 1.0,
        };
        let mut w = Writer::open(dir.path(), limits).unwrap();
        for d in 1..=6 {
            w.append(
                day(&format!("2026-12-0{d}T12:00:00Z")),
                Summary::NONE,
                &payload,
            )
            .unwrap();
        }
        let names = |dir: &Path| -> Vec<String> {
            shards(dir)
                .unwrap()
                .iter()
                .map(|s| s.day.to_string())
                .collect()
        };
        assert_eq!(
            names(dir.path()),
            ["2026-12-03", "2026-12-04", "2026-12-05", "2026-12-06"]
        );
        // A cap of two shards' bytes: the oldest go, today's stays.
        drop(w);
        let each = shards(dir.path()).unwrap()[0].bytes;
        let limits = Limits {
            max_bytes: 2 * each + 10,
            ..limits
        };
        let mut w = Writer::open(dir.path(), limits).unwrap();
        w.append(day("2026-12-07T00:00:01Z"), Summary::NONE, &payload)
            .unwrap();
        assert_eq!(names(dir.path()), ["2026-12-06", "2026-12-07"]);
        assert!(
            w.notes.iter().any(|n| n.contains("over its cap")),
            "{:?}",
            w.notes
        );
    }

    #[test]
    fn a_torn_end_is_cut_off_on_opening_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let t = day("2026-12-06T10:00:00Z");
        let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
        w.append(t, Summary::NONE, b"one").unwrap();
        w.append(t + 1, Summary::NONE, b"two").unwrap();
        drop(w);
        let path = dir.path().join("2026-12-06.pvr");
        let whole = std::fs::metadata(&path).unwrap().len();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&recordframe::frame(t + 2, Summary::NONE, b"three")[..20])
            .unwrap();
        let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), whole);
        assert!(w.notes[0].contains("20 bytes"), "{:?}", w.notes);
        w.append(t + 3, Summary::NONE, b"four").unwrap();
        let got = read::Store::at(dir.path())
            .scan(i64::MIN, i64::MAX)
            .unwrap();
        let payloads: Vec<Vec<u8>> = (0..got.entries.len())
            .map(|i| got.payload(i).unwrap())
            .collect();
        assert_eq!(payloads, [&b"one"[..], b"two", b"four"]);
        assert!(got.notes.is_empty(), "{:?}", got.notes);
    }

    #[test]
    fn a_torn_header_is_removed_on_opening_and_the_shard_made_whole_again() {
        let dir = tempfile::tempdir().unwrap();
        let t = day("2026-12-06T10:00:00Z");
        // The day before's shard, whole: its last key time is the writer's.
        let before = day("2026-12-05T23:00:00Z");
        let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
        w.append(before, Summary::NONE, b"zero").unwrap();
        drop(w);
        let path = dir.path().join("2026-12-06.pvr");
        for torn in [0, 1, 10, recordframe::SHARD_HEADER_LEN - 1] {
            std::fs::write(&path, &recordframe::shard_header()[..torn]).unwrap();
            let mut w = Writer::open(dir.path(), Limits::default()).unwrap();
            assert!(!path.exists(), "{torn} bytes");
            assert_eq!(w.last_time_us(), Some(before));
            assert!(
                w.notes[0].contains(&format!("header was cut short ({torn} bytes")),
                "{:?}",
                w.notes
            );
            w.append(t, Summary::NONE, b"one").unwrap();
            drop(w);
            let shard = recordframe::read(&std::fs::read(&path).unwrap());
            assert!(!shard.bad_header, "{torn} bytes");
            assert_eq!(shard.frames.len(), 1);
            std::fs::remove_file(&path).unwrap();
        }
        // Short, but not a header's start: not pveprobe's to remove.
        std::fs::write(&path, b"not a shard").unwrap();
        let w = Writer::open(dir.path(), Limits::default()).unwrap();
        assert!(path.exists() && w.notes.is_empty(), "{:?}", w.notes);
    }
}
