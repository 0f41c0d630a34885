//! faultfs: a small in-memory FUSE filesystem that injects faults, served
//! by a background thread of the test process (the `fuser` crate, mounted
//! with mount(2) as root; no fusermount needed).
//!
//! Mounted as PATH it fails or delays writes, fsyncs and unlinks; holding a
//! loop device's backing file (`disk.img`) it fails or delays reads at
//! chosen byte ranges, so the block device returns real I/O errors. Every
//! file is opened with FOPEN_DIRECT_IO, so no page cache hides a fault: each
//! read, write and fsync reaches the filesystem. Faults can be changed while
//! the filesystem is mounted ([`FaultFs::faults`]).

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

/// The name of the image file a loop device can be attached to.
pub const IMAGE: &str = "disk.img";

/// What to break, and how. Counters count the operations seen so far.
#[derive(Debug, Default, Clone)]
pub struct Faults {
    /// Reads of the image that touch this byte range fail with EIO.
    pub read_error: Option<(u64, u64)>,
    /// Every read of the image sleeps this long first.
    pub read_delay: Duration,
    /// Every fsync, fdatasync and write to a file opened O_DSYNC or O_SYNC
    /// sleeps this long first.
    pub fsync_delay: Duration,
    /// Every unlink and rmdir sleeps this long first.
    pub unlink_delay: Duration,
    /// Unlinks and rmdirs fail with this errno.
    pub unlink_error: Option<i32>,
    /// Writes to files other than the image fail with this errno once
    /// `writes` has passed the count.
    pub write_error: Option<(u64, i32)>,
    /// Fsyncs (and O_DSYNC writes, which count as fsyncs) fail with this
    /// errno once `fsyncs` has passed the count.
    pub fsync_error: Option<(u64, i32)>,
    /// Writes to files other than the image sleep this long once
    /// `written` has passed the byte count (a write cache that fills up).
    pub slow_writes_after: Option<(u64, Duration)>,
    /// Bytes written to files other than the image.
    pub written: u64,
    /// Counters.
    pub writes: u64,
    pub fsyncs: u64,
    pub image_reads: u64,
    pub failed_reads: u64,
}

#[derive(Debug)]
enum Kind {
    Dir(BTreeMap<String, u64>),
    File(Vec<u8>),
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    perm: u16,
    uid: u32,
    gid: u32,
}

#[derive(Debug)]
struct Tree {
    nodes: HashMap<u64, Node>,
    next: u64,
    image: Option<u64>,
}

struct Fs {
    tree: Mutex<Tree>,
    faults: Arc<Mutex<Faults>>,
}

const TTL: Duration = Duration::ZERO;
const BLOCK: u32 = 4096;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Tree {
    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let node = self.nodes.get(&ino)?;
        let (kind, size, nlink) = match &node.kind {
            Kind::Dir(_) => (FileType::Directory, 0, 2),
            Kind::File(data) => (FileType::RegularFile, data.len() as u64, 1),
        };
        let now = SystemTime::now();
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: now,
            mtime: now,
            ctime: now,
            crtime: now,
            kind,
            perm: node.perm,
            nlink,
            uid: node.uid,
            gid: node.gid,
            rdev: 0,
            blksize: BLOCK,
            flags: 0,
        })
    }

    fn dir(&mut self, ino: u64) -> Result<&mut BTreeMap<String, u64>, Errno> {
        match self.nodes.get_mut(&ino).map(|n| &mut n.kind) {
            Some(Kind::Dir(entries)) => Ok(entries),
            Some(Kind::File(_)) => Err(Errno::ENOTDIR),
            None => Err(Errno::ENOENT),
        }
    }

    fn add(&mut self, parent: u64, name: &OsStr, node: Node) -> Result<u64, Errno> {
        let name = name.to_str().ok_or(Errno::EINVAL)?.to_string();
        let ino = self.next;
        let entries = self.dir(parent)?;
        if entries.contains_key(&name) {
            return Err(Errno::EEXIST);
        }
        entries.insert(name, ino);
        self.next += 1;
        self.nodes.insert(ino, node);
        Ok(ino)
    }

    fn remove(&mut self, parent: u64, name: &OsStr, want_dir: bool) -> Result<(), Errno> {
        let name = name.to_str().ok_or(Errno::EINVAL)?;
        let ino = *self.dir(parent)?.get(name).ok_or(Errno::ENOENT)?;
        match (&self.nodes[&ino].kind, want_dir) {
            (Kind::Dir(e), true) if !e.is_empty() => return Err(Errno::ENOTEMPTY),
            (Kind::Dir(_), false) => return Err(Errno::EISDIR),
            (Kind::File(_), true) => return Err(Errno::ENOTDIR),
            _ => {}
        }
        self.dir(parent)?.remove(name);
        self.nodes.remove(&ino);
        Ok(())
    }
}

fn errno(code: i32) -> Errno {
    Errno::from_i32(code)
}

impl Fs {
    fn faults(&self) -> Faults {
        lock(&self.faults).clone()
    }

    /// One fsync, fdatasync or O_DSYNC write reaching "the disk": counted,
    /// delayed by `fsync_delay`, failed by `fsync_error`.
    fn sync_point(&self) -> Result<(), Errno> {
        let faults = {
            let mut f = lock(&self.faults);
            f.fsyncs += 1;
            f.clone()
        };
        std::thread::sleep(faults.fsync_delay);
        match faults.fsync_error {
            Some((after, code)) if faults.fsyncs > after => Err(errno(code)),
            _ => Ok(()),
        }
    }
}

impl Filesystem for Fs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let mut tree = lock(&self.tree);
        let found = tree.dir(parent.0).and_then(|e| {
            e.get(name.to_str().unwrap_or(""))
                .copied()
                .ok_or(Errno::ENOENT)
        });
        match found.map(|ino| tree.attr(ino)) {
            Ok(Some(attr)) => reply.entry(&TTL, &attr, Generation(0)),
            Ok(None) => reply.error(Errno::ENOENT),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match lock(&self.tree).attr(ino.0) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut tree = lock(&self.tree);
        let Some(node) = tree.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(mode) = mode {
            node.perm = (mode & 0o7777) as u16;
        }
        if let Some(uid) = uid {
            node.uid = uid;
        }
        if let Some(gid) = gid {
            node.gid = gid;
        }
        if let (Some(size), Kind::File(data)) = (size, &mut node.kind) {
            data.resize(size as usize, 0);
        }
        let attr = tree.attr(ino.0).expect("just seen");
        reply.attr(&TTL, &attr);
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let mut tree = lock(&self.tree);
        let node = Node {
            kind: Kind::Dir(BTreeMap::new()),
            perm: (mode & !umask & 0o7777) as u16,
            uid: req.uid(),
            gid: req.gid(),
        };
        match tree.add(parent.0, name, node) {
            Ok(ino) => reply.entry(&TTL, &tree.attr(ino).expect("added"), Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let mut tree = lock(&self.tree);
        let node = Node {
            kind: Kind::File(Vec::new()),
            perm: (mode & !umask & 0o7777) as u16,
            uid: req.uid(),
            gid: req.gid(),
        };
        match tree.add(parent.0, name, node) {
            Ok(ino) => reply.created(
                &TTL,
                &tree.attr(ino).expect("added"),
                Generation(0),
                FileHandle(0),
                FopenFlags::FOPEN_DIRECT_IO,
            ),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if lock(&self.tree).nodes.contains_key(&ino.0) {
            reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let is_image = lock(&self.tree).image == Some(ino.0);
        if is_image {
            let faults = {
                let mut f = lock(&self.faults);
                f.image_reads += 1;
                f.clone()
            };
            std::thread::sleep(faults.read_delay);
            if let Some((start, end)) = faults.read_error
                && offset < end
                && offset + u64::from(size) > start
            {
                lock(&self.faults).failed_reads += 1;
                return reply.error(Errno::EIO);
            }
        }
        let tree = lock(&self.tree);
        match tree.nodes.get(&ino.0).map(|n| &n.kind) {
            Some(Kind::File(data)) => {
                let start = (offset as usize).min(data.len());
                let end = (start + size as usize).min(data.len());
                reply.data(&data[start..end]);
            }
            Some(Kind::Dir(_)) => reply.error(Errno::EISDIR),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut tree = lock(&self.tree);
        let is_image = tree.image == Some(ino.0);
        let mut delay = Duration::ZERO;
        if !is_image {
            let mut f = lock(&self.faults);
            f.writes += 1;
            f.written += data.len() as u64;
            if let Some((after, code)) = f.write_error
                && f.writes > after
            {
                return reply.error(errno(code));
            }
            if let Some((after, slow)) = f.slow_writes_after
                && f.written > after
            {
                delay = slow;
            }
        }
        match tree.nodes.get_mut(&ino.0).map(|n| &mut n.kind) {
            Some(Kind::File(content)) => {
                let end = offset as usize + data.len();
                if content.len() < end {
                    content.resize(end, 0);
                }
                content[offset as usize..end].copy_from_slice(data);
            }
            Some(Kind::Dir(_)) => return reply.error(Errno::EISDIR),
            None => return reply.error(Errno::ENOENT),
        }
        drop(tree);
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        // A write to a file opened O_DSYNC (or O_SYNC) returns once durable:
        // the kernel marks it in the write's flags, and it is an fsync here
        // (counted, delayed and failed as one). O_SYNC includes O_DSYNC's bit.
        if !is_image
            && flags.0 & libc::O_DSYNC != 0
            && let Err(e) = self.sync_point()
        {
            return reply.error(e);
        }
        reply.written(data.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // fsync and fdatasync alike (the kernel sends both as FUSE_FSYNC).
        match self.sync_point() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let faults = self.faults();
        std::thread::sleep(faults.unlink_delay);
        if let Some(code) = faults.unlink_error {
            return reply.error(errno(code));
        }
        match lock(&self.tree).remove(parent.0, name, false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let faults = self.faults();
        std::thread::sleep(faults.unlink_delay);
        if let Some(code) = faults.unlink_error {
            return reply.error(errno(code));
        }
        match lock(&self.tree).remove(parent.0, name, true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut tree = lock(&self.tree);
        let entries: Vec<(u64, FileType, String)> = match tree.dir(ino.0) {
            Ok(e) => [(ino.0, FileType::Directory, ".".to_string())]
                .into_iter()
                .chain([(ino.0, FileType::Directory, "..".to_string())])
                .chain(
                    e.iter()
                        .map(|(n, i)| (*i, FileType::RegularFile, n.clone())),
                )
                .collect(),
            Err(e) => return reply.error(e),
        };
        for (i, (child, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            let kind = match tree.nodes.get(&child).map(|n| &n.kind) {
                Some(Kind::Dir(_)) => FileType::Directory,
                _ => kind,
            };
            if reply.add(INodeNo(child), (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // 4 GiB, mostly free.
        reply.statfs(
            1 << 20,
            1 << 19,
            1 << 19,
            1 << 20,
            1 << 19,
            BLOCK,
            255,
            BLOCK,
        );
    }
}

/// A mounted faultfs; unmounted on drop.
pub struct FaultFs {
    faults: Arc<Mutex<Faults>>,
    session: Option<fuser::BackgroundSession>,
    dir: tempfile::TempDir,
}

impl FaultFs {
    /// Mounts an empty faultfs whose mountinfo source is `fsname`, with an
    /// image file of `image_mib` MiB when that is not 0.
    pub fn mount(fsname: &str, image_mib: u64) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("pveprobe-faultfs.")
            .tempdir_in("/var/tmp")
            .unwrap();
        let mut nodes = HashMap::new();
        let mut root = BTreeMap::new();
        let mut image = None;
        if image_mib > 0 {
            root.insert(IMAGE.to_string(), 2);
            nodes.insert(
                2,
                Node {
                    kind: Kind::File(vec![0; (image_mib << 20) as usize]),
                    perm: 0o600,
                    uid: 0,
                    gid: 0,
                },
            );
            image = Some(2);
        }
        nodes.insert(
            1,
            Node {
                kind: Kind::Dir(root),
                perm: 0o755,
                uid: 0,
                gid: 0,
            },
        );
        let faults = Arc::new(Mutex::new(Faults::default()));
        let fs = Fs {
            tree: Mutex::new(Tree {
                nodes,
                next: 3,
                image,
            }),
            faults: Arc::clone(&faults),
        };
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName(fsname.to_string()),
            MountOption::Subtype("faultfs".into()),
            MountOption::RW,
        ];
        config.n_threads = Some(4);
        let session = fuser::spawn_mount(fs, dir.path(), &config)
            .unwrap_or_else(|e| panic!("cannot mount faultfs (needs /dev/fuse and root): {e}"));
        Self {
            faults,
            session: Some(session),
            dir,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn image(&self) -> PathBuf {
        self.path().join(IMAGE)
    }

    /// The faults, to change them or read the counters.
    pub fn faults(&self) -> MutexGuard<'_, Faults> {
        lock(&self.faults)
    }

    /// The FUSE connection's number (the mount's minor device number), for
    /// the fusectl `abort` file.
    pub fn connection(&self) -> u64 {
        let st = nix::sys::stat::stat(self.path()).unwrap();
        nix::sys::stat::minor(st.st_dev)
    }

    /// Entries in the root other than the image.
    pub fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != IMAGE)
            .collect()
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        if let Some(session) = self.session.take()
            && session.umount_and_join().is_err()
        {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

/// ext4 on a loop device whose backing file lives on a faultfs: the block
/// device returns the faultfs's read errors and delays. Dropped in order:
/// unmount, detach the loop device, unmount the faultfs.
pub struct FaultyExt4 {
    pub mount: Option<super::Mount>,
    pub dev: PathBuf,
    pub fs: FaultFs,
}

impl FaultyExt4 {
    pub fn new(size_mib: u64) -> Self {
        let fs = FaultFs::mount("faultfs", size_mib);
        let image = fs.image();
        let dev = PathBuf::from(super::sh(
            "losetup",
            &["--find", "--show", image.to_str().unwrap()],
        ));
        let mut rig = Self {
            mount: None,
            dev,
            fs,
        };
        super::mkfs("ext4", rig.dev_str(), &["-E", "nodiscard"]);
        rig.mount = Some(super::Mount::new(rig.dev_str(), "rw"));
        rig
    }

    pub fn dev_str(&self) -> &str {
        self.dev.to_str().unwrap()
    }

    pub fn path(&self) -> &Path {
        self.mount.as_ref().unwrap().path()
    }

    pub fn leftovers(&self) -> Vec<String> {
        self.mount.as_ref().unwrap().leftovers()
    }
}

impl Drop for FaultyExt4 {
    fn drop(&mut self) {
        // No fault may stop the teardown.
        *self.fs.faults() = Faults::default();
        drop(self.mount.take());
        let _ = std::process::Command::new("losetup")
            .arg("-d")
            .arg(&self.dev)
            .status();
        // Detaching is asynchronous: wait until the backing file is let go.
        let name = self.dev.file_name().unwrap().to_string_lossy().into_owned();
        for _ in 0..250 {
            if !Path::new(&format!("/sys/block/{name}/loop")).exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
