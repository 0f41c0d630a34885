//! PBS's calls replayed and timed in a private directory under PATH: a
//! chunk store made as `ChunkStore::create` makes one, chunks inserted as
//! `insert_chunk` does at each sync level, read back as a restore, a
//! verify and GC's two phases read them, and PBS's atime check. Every call
//! is made relative to the store's directory descriptor, never following
//! a symlink; everything is removed on every way out ([`ScratchDir`]).

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, UtimensatFlags, fstatat, mkdirat, utimensat};
use nix::sys::time::TimeSpec;
use rand::seq::SliceRandom;

use super::chunks::{self, Chunk};
use super::{
    Atime, DatastoreError, DatastoreRequest, DatastoreResult, Ingest, Measured, PREFIX_DIRS,
    RESTORE_DEPTHS, Restore, VERIFY_READERS, VERIFY_WORKERS, Verify,
};
use crate::error::{IoContext, ProbeError};
use crate::model::human;
use crate::sys::interrupt::Interrupt;
use crate::sys::scratch::ScratchDir;
use pveprobe_parse::pbs::{self, SyncLevel};

const MIB: f64 = 1048576.0;
/// A chunk's most bytes on disk here, for the room check (2.0 MiB and its header).
const CHUNK_ROOM: u64 = 2_200_000;
/// The chunks' index, in PBS's `.fidx` format, named so that a GC that
/// PBS runs on a datastore at PATH meanwhile (it reads every `.fidx` and
/// `.didx` under the datastore, hidden directories aside) never takes it
/// for one of the datastore's own. The chunks are in `.chunks`, hidden.
const INDEX_NAME: &str = "index-order.fidx-pveprobe";
/// A directory's block on ext4 and xfs: what 65,536 of them take.
const DIR_ROOM: u64 = 4096;

/// The run: PATH checked, the datastore there read, the room checked, then
/// every phase in a private directory removed before the return.
pub fn run(
    req: &DatastoreRequest,
    interrupt: &Interrupt,
) -> Result<DatastoreResult, DatastoreError> {
    let path = &req.path;
    let meta = std::fs::metadata(path).map_err(|e| {
        DatastoreError::BadPath(format!(
            "{}: {}",
            path.display(),
            crate::error::describe(&e)
        ))
    })?;
    if !meta.is_dir() {
        return Err(DatastoreError::BadPath(format!(
            "{}: not a directory; give the directory a datastore is (or would be) in",
            path.display()
        )));
    }
    let fs = crate::measure::filesystem::filesystem(&req.host, path)?;
    if fs.read_only {
        return Err(DatastoreError::BadPath(format!(
            "{}: on a read-only filesystem ({} on {}); nothing can be measured, nothing was written",
            path.display(),
            fs.source,
            fs.mount_point.display()
        )));
    }
    room(req)?;
    let storage = crate::blockstack::storage(&req.host, &fs);
    let existing = if path.join(".chunks").is_dir() {
        req.progress.step("reading the datastore (read only)");
        Some(super::existing::read(req, interrupt)?)
    } else {
        None
    };
    if let Some(damaged) = existing.as_ref().and_then(|e| e.damaged.first()) {
        return Err(DatastoreError::BadPath(format!(
            "damaged index {damaged}: the datastore's figures would be wrong; \
             PBS's verify names what it holds. Nothing was written"
        )));
    }
    let mut result = DatastoreResult {
        path: path.display().to_string(),
        filesystem: Some(fs.clone()),
        storage: Some(storage),
        measured: Measured::default(),
        existing,
        pbs_qemu: super::existing::pbs_qemu(&req.host),
        left_behind: Vec::new(),
        interrupted_by: None,
        errors: Vec::new(),
    };
    let mut scratch = ScratchDir::create(path)?;
    let measured = phases(req, interrupt, &mut scratch, &mut result.measured, &fs);
    let (measured, left) = scratch.finish(measured);
    result.left_behind.extend(left);
    match measured {
        Ok(()) => {}
        Err(ProbeError::Interrupted(sig)) => result.interrupted_by = Some(sig),
        Err(e) => result.errors.push(e.to_string()),
    }
    if let Some(sig) = interrupt.signal() {
        result.interrupted_by = Some(sig);
    }
    Ok(result)
}

/// Refused before anything is written when PATH has too little room or
/// too few inodes for the chunks and the 65,536 directories.
fn room(req: &DatastoreRequest) -> Result<(), DatastoreError> {
    let vfs = nix::sys::statvfs::statvfs(&req.path)
        .map_err(|e| ProbeError::io(format!("statvfs {}", req.path.display()), e.into()))?;
    let chunks = 3 * u64::from(req.chunks) + 1;
    let needed = chunks * CHUNK_ROOM + u64::from(PREFIX_DIRS) * DIR_ROOM + (16 << 20);
    let avail = (vfs.blocks_available() as u64).saturating_mul(vfs.fragment_size() as u64);
    let path = req.path.display().to_string();
    if avail < needed {
        return Err(DatastoreError::NoRoom {
            path,
            needed: human::Size(needed).decimals(1),
            avail: human::Size(avail).decimals(1),
            what: "chunks and the 65,536 prefix directories; --quick or --chunks N needs less",
        });
    }
    let inodes = chunks + u64::from(PREFIX_DIRS) + 16;
    let files = vfs.files_available() as u64;
    // btrfs and ZFS report no inode limit (0 files in all).
    if vfs.files() > 0 && files < inodes {
        return Err(DatastoreError::NoRoom {
            path,
            needed: format!("{inodes} inodes"),
            avail: format!("{files}"),
            what: "inodes for the chunks and the 65,536 prefix directories",
        });
    }
    Ok(())
}

fn io(what: impl Into<String>) -> impl FnOnce(nix::Error) -> ProbeError {
    let what = what.into();
    move |e| ProbeError::io(what, e.into())
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64().max(1e-9)
}

/// The store as cold as PBS finds chunks written days ago: what the run
/// dirtied synced (a dirty page or inode outlives a drop), then caches
/// dropped twice, since one drop can leave the metadata of files just
/// made warm (docs/datastore.md, "Cold"). `m.cold` false when they cannot be.
fn cold(req: &DatastoreRequest, store: &OwnedFd, m: &mut Measured) -> Result<(), ProbeError> {
    nix::unistd::syncfs(store).map_err(io("syncfs"))?;
    m.cold = (0..2).all(|_| crate::sys::host::drop_caches(&req.host).is_ok());
    Ok(())
}

/// Every phase in turn, each figure kept in `m` as it is measured.
fn phases(
    req: &DatastoreRequest,
    interrupt: &Interrupt,
    scratch: &mut ScratchDir,
    m: &mut Measured,
    fs: &crate::model::filesystem::FsInfo,
) -> Result<(), ProbeError> {
    let store = scratch.create_dir(".chunks")?;
    req.progress.step("CREATE: the 65,536 prefix directories");
    let start = Instant::now();
    for i in 0..PREFIX_DIRS {
        if i % 1024 == 0 {
            interrupt.check()?;
        }
        let name = format!("{i:04x}");
        mkdirat(&store, name.as_str(), Mode::from_bits_truncate(0o750))
            .map_err(io(format!("cannot create .chunks/{name}")))?;
    }
    // Made and on disk: a datastore's directories are long written when
    // its first backup comes, so none is left for an ingest's sync.
    nix::unistd::syncfs(&store).map_err(io("syncfs"))?;
    m.create_s = Some(seconds(start.elapsed()));

    let mut written: Vec<([u8; 32], u64)> = Vec::new();
    for level in SyncLevel::ALL {
        req.progress
            .step(&format!("INGEST: sync-level {}", level.name()));
        let ingest = ingest(&store, level, req.chunks, interrupt, &mut written)?;
        m.ingest.push(ingest);
        // What a level left unsynced is written before the next is timed.
        nix::unistd::syncfs(&store).map_err(io("syncfs"))?;
    }
    m.chunks = written.len() as u64;
    m.stored_bytes = written.iter().map(|w| w.1).sum();

    req.progress.step("KNOWN: chunks the store has already");
    cold(req, &store, m)?;
    let start = Instant::now();
    for (digest, _) in &written {
        interrupt.check()?;
        let rel = chunks::rel_path(digest);
        fstatat(&store, rel.as_str(), AtFlags::empty()).map_err(io(format!("stat {rel}")))?;
        touch(&store, &rel)?;
    }
    m.known_per_s = Some(written.len() as f64 / seconds(start.elapsed()));

    for depth in RESTORE_DEPTHS {
        req.progress.step(&format!("RESTORE: {depth} in flight"));
        cold(req, &store, m)?;
        m.restore.push(restore(&store, &written, depth, interrupt)?);
    }
    let by_inode = inode_order(&store, &written)?;
    for readers in VERIFY_READERS {
        req.progress.step(&format!("VERIFY: {readers} readers"));
        cold(req, &store, m)?;
        m.verify
            .push(verify(&store, &by_inode, readers, interrupt)?);
    }

    gc(req, interrupt, scratch, &store, &written, m)?;

    req.progress.step("ATIME: PBS's check");
    m.atime = Some(Atime {
        updates: atime_check(&store, interrupt)?,
        mount_option: atime_option(&fs.options),
    });
    Ok(())
}

/// GC's two phases on the chunks written: the atime mark in an index's
/// order, then the sweep's directory reads and each chunk's stat; cold.
fn gc(
    req: &DatastoreRequest,
    interrupt: &Interrupt,
    scratch: &mut ScratchDir,
    store: &OwnedFd,
    written: &[([u8; 32], u64)],
    m: &mut Measured,
) -> Result<(), ProbeError> {
    req.progress
        .step("GC MARK: atime of each chunk in index order");
    let order = index_order(scratch, written)?;
    cold(req, store, m)?;
    let start = Instant::now();
    for digest in &order {
        interrupt.check()?;
        touch(store, &chunks::rel_path(digest))?;
    }
    m.mark_per_s = Some(order.len() as f64 / seconds(start.elapsed()));

    req.progress
        .step("GC SWEEP: the prefix directories and each chunk");
    cold(req, store, m)?;
    let start = Instant::now();
    let mut found = 0u64;
    for i in 0..PREFIX_DIRS {
        if i % 1024 == 0 {
            interrupt.check()?;
        }
        found += chunks::chunk_names(store, &format!("{i:04x}"))?.len() as u64;
    }
    m.sweep_dirs_per_s = Some(f64::from(PREFIX_DIRS) / seconds(start.elapsed()));
    if found != written.len() as u64 {
        return Err(ProbeError::Unavailable(format!(
            "the sweep found {found} chunks where {} were written",
            written.len()
        )));
    }
    cold(req, store, m)?;
    let start = Instant::now();
    for (digest, _) in written {
        interrupt.check()?;
        let rel = chunks::rel_path(digest);
        fstatat(store, rel.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
            .map_err(io(format!("stat {rel}")))?;
    }
    m.sweep_per_s = Some(written.len() as f64 / seconds(start.elapsed()));
    Ok(())
}

/// The mount's atime option, as mountinfo gives it.
pub fn atime_option(options: &str) -> Option<String> {
    options
        .split(',')
        .find(|o| ["noatime", "relatime", "strictatime", "lazytime"].contains(o))
        .map(str::to_string)
}

/// `cond_touch_path`: the atime set to now, the mtime left, no symlink followed.
fn touch(store: &OwnedFd, rel: &str) -> Result<(), ProbeError> {
    utimensat(
        store,
        rel,
        &TimeSpec::UTIME_NOW,
        &TimeSpec::UTIME_OMIT,
        UtimensatFlags::NoFollowSymlink,
    )
    .map_err(io(format!("utimensat {rel}")))
}

/// `insert_chunk` for a new chunk: stat (absent), a temp file beside it,
/// the blob written, at sync level `file` fsync'ed, renamed into place, and
/// at `file` its directory fsync'ed.
fn insert(store: &OwnedFd, chunk: &Chunk, level: SyncLevel) -> Result<(), ProbeError> {
    use std::io::Write as _;
    let rel = chunk.rel_path();
    match fstatat(store, rel.as_str(), AtFlags::empty()) {
        Err(nix::errno::Errno::ENOENT) => {}
        Ok(_) => {
            return Err(ProbeError::Unavailable(format!(
                "chunk {rel} exists already"
            )));
        }
        Err(e) => return Err(ProbeError::io(format!("stat {rel}"), e.into())),
    }
    let tmp = format!("{rel}.tmp_{:06x}", rand::random::<u32>() & 0xff_ffff);
    let fd = openat(
        store,
        tmp.as_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o644),
    )
    .map_err(io(format!("cannot create {tmp}")))?;
    let mut file = std::fs::File::from(fd);
    let written = file
        .write_all(&chunk.blob)
        .and_then(|()| match level {
            SyncLevel::File => file.sync_all(),
            _ => Ok(()),
        })
        .context(|| format!("cannot write {tmp}"));
    drop(file);
    if let Err(e) = written.and_then(|()| {
        renameat(store, tmp.as_str(), store, rel.as_str()).map_err(io(format!("rename {tmp}")))
    }) {
        let _ = nix::unistd::unlinkat(store, tmp.as_str(), nix::unistd::UnlinkatFlags::NoRemoveDir);
        return Err(e);
    }
    if level == SyncLevel::File {
        let dir = openat(
            store,
            &rel[..4],
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io(format!("open {}", &rel[..4])))?;
        nix::unistd::fsync(&dir).map_err(io(format!("fsync {}", &rel[..4])))?;
    }
    Ok(())
}

/// `count` new chunks inserted at `level`, timed from the first insert
/// to the last (at `filesystem`, to the end of its one syncfs). The chunks
/// are all made first, on every CPU, so the clock runs on nothing but
/// the calls and the kernel's writeback of what they wrote.
fn ingest(
    store: &OwnedFd,
    level: SyncLevel,
    count: u32,
    interrupt: &Interrupt,
    written: &mut Vec<([u8; 32], u64)>,
) -> Result<Ingest, ProbeError> {
    let made = chunks::made(count as usize, crate::sys::cpus::usable());
    interrupt.check()?;
    if made.len() != count as usize {
        return Err(ProbeError::Unavailable("the chunk makers stopped".into()));
    }
    let start = Instant::now();
    for chunk in &made {
        interrupt.check()?;
        insert(store, chunk, level)?;
        written.push((chunk.digest, chunk.blob.len() as u64));
    }
    if level == SyncLevel::Filesystem {
        nix::unistd::syncfs(store).map_err(io("syncfs"))?;
    }
    let secs = seconds(start.elapsed());
    let bytes: u64 = made.iter().map(|c| c.blob.len() as u64).sum();
    Ok(Ingest {
        sync_level: level,
        chunks: u64::from(count),
        stored_bytes: bytes,
        seconds: secs,
        mib_s: bytes as f64 / MIB / secs,
    })
}

/// A chunk file read whole into `buf` (cleared first): its bytes.
fn read_chunk(store: &OwnedFd, rel: &str, buf: &mut Vec<u8>) -> Result<u64, ProbeError> {
    use std::io::Read as _;
    let fd = openat(
        store,
        rel,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io(format!("open {rel}")))?;
    buf.clear();
    std::fs::File::from(fd)
        .read_to_end(buf)
        .context(|| format!("read {rel}"))
        .map(|n| n as u64)
}

/// Every chunk read whole in random order, `depth` at a time.
fn restore(
    store: &OwnedFd,
    written: &[([u8; 32], u64)],
    depth: u32,
    interrupt: &Interrupt,
) -> Result<Restore, ProbeError> {
    let mut order: Vec<String> = written.iter().map(|w| chunks::rel_path(&w.0)).collect();
    order.shuffle(&mut rand::rng());
    let (next, bytes) = (AtomicUsize::new(0), AtomicU64::new(0));
    let start = Instant::now();
    std::thread::scope(|s| -> Result<(), ProbeError> {
        let workers: Vec<_> = (0..depth)
            .map(|_| {
                s.spawn(|| -> Result<(), ProbeError> {
                    let mut buf = Vec::with_capacity(chunks::CHUNK_BYTES + 64);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(rel) = order.get(i) else {
                            return Ok(());
                        };
                        interrupt.check()?;
                        bytes.fetch_add(read_chunk(store, rel, &mut buf)?, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        joined(workers)
    })?;
    let secs = seconds(start.elapsed());
    let image = (written.len() * chunks::CHUNK_BYTES) as f64;
    Ok(Restore {
        in_flight: depth,
        mib_s: bytes.load(Ordering::Relaxed) as f64 / MIB / secs,
        image_mib_s: image / MIB / secs,
    })
}

/// Every reader joined: the first error, or one that panicked as one.
fn joined(
    readers: Vec<std::thread::ScopedJoinHandle<'_, Result<(), ProbeError>>>,
) -> Result<(), ProbeError> {
    readers.into_iter().try_for_each(|w| {
        w.join()
            .unwrap_or_else(|_| Err(ProbeError::Unavailable("a reader panicked".into())))
    })
}

/// The chunks sorted by inode, as verify orders them (`chunk-order inode`).
fn inode_order(
    store: &OwnedFd,
    written: &[([u8; 32], u64)],
) -> Result<Vec<([u8; 32], String)>, ProbeError> {
    let mut out = Vec::with_capacity(written.len());
    for (digest, _) in written {
        let rel = chunks::rel_path(digest);
        let st = fstatat(store, rel.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
            .map_err(io(format!("stat {rel}")))?;
        out.push((st.st_ino, *digest, rel));
    }
    out.sort_by_key(|o| o.0);
    Ok(out.into_iter().map(|(_, d, r)| (d, r)).collect())
}

/// One chunk checked as verify checks it: its CRC, its data decompressed,
/// the SHA-256 of its image against its name.
fn chunk_sound(digest: &[u8; 32], blob: &[u8]) -> bool {
    let Ok(header) = pbs::blob_header(blob) else {
        return false;
    };
    if !pbs::blob_crc_ok(blob).unwrap_or(false) {
        return false;
    }
    let data = &blob[header.data_at..];
    let image = match header.kind {
        pbs::BlobKind::Compressed => match zstd::bulk::decompress(data, 16 << 20) {
            Ok(image) => image,
            Err(_) => return false,
        },
        pbs::BlobKind::Uncompressed => data.to_vec(),
        _ => return false,
    };
    openssl::sha::sha256(&image) == *digest
}

/// Every chunk read in inode order by `readers` threads, checked by
/// [`VERIFY_WORKERS`] decoders.
fn verify(
    store: &OwnedFd,
    by_inode: &[([u8; 32], String)],
    readers: u32,
    interrupt: &Interrupt,
) -> Result<Verify, ProbeError> {
    let (next, bytes, bad, busy_ns) = (
        AtomicUsize::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
    );
    let (tx, rx) = sync_channel::<([u8; 32], Vec<u8>)>(2 * VERIFY_WORKERS as usize);
    let rx = std::sync::Mutex::new(rx);
    let start = Instant::now();
    std::thread::scope(|s| -> Result<(), ProbeError> {
        let decoders: Vec<_> = (0..VERIFY_WORKERS)
            .map(|_| {
                s.spawn(|| {
                    loop {
                        let got = rx.lock().map(|r| r.recv());
                        let Ok(Ok((digest, blob))) = got else { return };
                        let t = Instant::now();
                        if !chunk_sound(&digest, &blob) {
                            bad.fetch_add(1, Ordering::Relaxed);
                        }
                        busy_ns.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let read = (0..readers)
            .map(|_| {
                let tx = tx.clone();
                s.spawn(|| -> Result<(), ProbeError> {
                    let tx = tx;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((digest, rel)) = by_inode.get(i) else {
                            return Ok(());
                        };
                        interrupt.check()?;
                        let mut buf = Vec::with_capacity(chunks::CHUNK_BYTES + 64);
                        bytes.fetch_add(read_chunk(store, rel, &mut buf)?, Ordering::Relaxed);
                        if tx.send((*digest, buf)).is_err() {
                            return Ok(());
                        }
                    }
                })
            })
            .collect::<Vec<_>>();
        drop(tx);
        let r = joined(read);
        for d in decoders {
            let _ = d.join();
        }
        r
    })?;
    let wall = seconds(start.elapsed());
    let decoders_busy =
        busy_ns.load(Ordering::Relaxed) as f64 / 1e9 / (wall * f64::from(VERIFY_WORKERS));
    Ok(Verify {
        readers,
        workers: VERIFY_WORKERS,
        mib_s: bytes.load(Ordering::Relaxed) as f64 / MIB / wall,
        decoders_busy,
        capped_by: if decoders_busy >= 0.8 { "cpu" } else { "disk" }.into(),
        bad: bad.load(Ordering::Relaxed),
    })
}

/// The chunks' `.fidx` written in the private directory and read back as
/// GC's phase 1 reads an index: the digests in its order.
fn index_order(
    scratch: &mut ScratchDir,
    written: &[([u8; 32], u64)],
) -> Result<Vec<[u8; 32]>, ProbeError> {
    use std::io::Write as _;
    let digests: Vec<[u8; 32]> = written.iter().map(|w| w.0).collect();
    let bytes = chunks::fixed_index(&digests, jiff::Timestamp::now().as_second());
    let mut file = scratch.create_file(INDEX_NAME)?;
    file.write_all(&bytes)
        .context(|| "cannot write the index".to_string())?;
    drop(file);
    let path = scratch.path().join(INDEX_NAME);
    let back = std::fs::read(&path).context(|| format!("cannot read {}", path.display()))?;
    let index = pbs::index(&back).map_err(|e| {
        ProbeError::Unavailable(format!("the index written reads back damaged: {e}"))
    })?;
    Ok(index.digests)
}

/// PBS's atime check (`check_fs_atime_updates`): its zero chunk inserted,
/// a second's wait for the kernel's timestamp granularity, then the atime
/// before and after a touch; it must have risen.
fn atime_check(store: &OwnedFd, interrupt: &Interrupt) -> Result<bool, ProbeError> {
    let zero = chunks::zero_chunk();
    let rel = zero.rel_path();
    insert(store, &zero, SyncLevel::None)?;
    if let Some(sig) = interrupt.wait(Instant::now() + Duration::from_secs(1)) {
        return Err(ProbeError::Interrupted(sig));
    }
    let stat = |rel: &str| {
        fstatat(store, rel, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(io(format!("stat {rel}")))
    };
    let before = stat(&rel)?;
    touch(store, &rel)?;
    let after = stat(&rel)?;
    Ok((after.st_atime, after.st_atime_nsec) > (before.st_atime, before.st_atime_nsec))
}
