//! The datastore at PATH, read and never written, atimes included: every
//! directory and index file opened with `O_NOATIME` (allowed to root and
//! the owner; refused, the file is left unread and said), chunks only
//! `fstatat`ed. It counts what the projection needs: chunks (the prefix
//! directories sampled when there are many), their mean size, the
//! indexes, snapshots and references, and the largest snapshot.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, SFlag, fstatat};

use super::{DatastoreError, DatastoreRequest, FoundDatastore, Largest, PREFIX_DIRS};
use crate::sys::host::Host;
use crate::sys::interrupt::Interrupt;
use pveprobe_parse::pbs;

/// Above this many chunks (estimated from the sample), the rest of the
/// prefix directories are not read: the count is the sample's.
const COUNT_ALL_BELOW: f64 = 2_000_000.0;
/// Every SAMPLE_STEP-th prefix directory is read first.
const SAMPLE_STEP: u32 = 16;
/// Chunks stat'ed for their mean size.
const SIZE_SAMPLE: usize = 1024;
/// An index file larger than this is not read (a 64 TiB image's .fidx is 512 MiB).
const MAX_INDEX: u64 = 1 << 30;
/// Directories deeper than this under PATH are not walked (namespaces
/// nest 8 deep, each two levels, then type, id and time).
const MAX_DEPTH: usize = 24;

const RO: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC)
    .union(OFlag::O_NOATIME);

/// Opens `name` under `dir` read only, without changing its atime.
fn open_noatime<Fd: AsFd, P: ?Sized + nix::NixPath>(
    dir: Fd,
    name: &P,
    flags: OFlag,
) -> nix::Result<OwnedFd> {
    openat(dir, name, RO | flags, Mode::empty())
}

fn is_dir(st: &nix::sys::stat::FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
}

/// The names in an open directory, but `.` and `..`.
fn names(fd: OwnedFd) -> nix::Result<Vec<String>> {
    let mut dir = nix::dir::Dir::from_fd(fd)?;
    Ok(dir
        .iter()
        .flatten()
        .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
        .filter(|n| n != "." && n != "..")
        .collect())
}

/// The datastore at the request's PATH.
pub fn read(
    req: &DatastoreRequest,
    interrupt: &Interrupt,
) -> Result<FoundDatastore, DatastoreError> {
    let root = open_noatime(nix::fcntl::AT_FDCWD, req.path.as_path(), OFlag::O_DIRECTORY)
        .map_err(|e| noatime_refused(&req.path, e))?;
    let mut out = FoundDatastore {
        name: req.name.clone(),
        path: req.path.display().to_string(),
        tuning: req.tuning.clone().unwrap_or_default(),
        ..FoundDatastore::default()
    };
    let store = open_noatime(&root, ".chunks", OFlag::O_DIRECTORY)
        .map_err(|e| noatime_refused(&req.path.join(".chunks"), e))?;
    count_chunks(&store, &mut out, interrupt)?;
    let mut largest = None;
    walk(&root, "", 0, &mut out, &mut largest, interrupt)?;
    if let Some(Snapshot {
        rel: snapshot,
        image_bytes,
        digests,
    }) = largest
    {
        let mut unique = digests;
        unique.sort_unstable();
        unique.dedup();
        let step = (unique.len() / SIZE_SAMPLE).max(1);
        let sizes: Vec<u64> = unique
            .iter()
            .step_by(step)
            .filter_map(|d| {
                fstatat(
                    &store,
                    super::chunks::rel_path(d).as_str(),
                    AtFlags::AT_SYMLINK_NOFOLLOW,
                )
                .ok()
                .map(|st| st.st_size as u64)
            })
            .collect();
        let mean = if sizes.is_empty() {
            out.mean_chunk_bytes.unwrap_or(0.0)
        } else {
            sizes.iter().sum::<u64>() as f64 / sizes.len() as f64
        };
        out.largest = Some(Largest {
            snapshot,
            image_bytes,
            chunks: unique.len() as u64,
            stored_bytes: (mean * unique.len() as f64) as u64,
        });
    }
    Ok(out)
}

fn noatime_refused(path: &Path, e: nix::Error) -> DatastoreError {
    let why = match e {
        nix::errno::Errno::EPERM => {
            "O_NOATIME is refused (neither root nor the owner): reading would change atimes"
        }
        _ => e.desc(),
    };
    DatastoreError::BadPath(format!(
        "{}: {why}; nothing was read or written",
        path.display()
    ))
}

/// The chunks counted: every 16th prefix directory first; the rest too
/// when that says fewer than [`COUNT_ALL_BELOW`], else the count is the
/// sample's, its error said. Some chunks stat'ed for their mean size.
fn count_chunks(
    store: &OwnedFd,
    out: &mut FoundDatastore,
    interrupt: &Interrupt,
) -> Result<(), DatastoreError> {
    let mut per_dir: Vec<f64> = Vec::new();
    let mut sample: Vec<(String, String)> = Vec::new();
    let mut read_dir = |i: u32, per_dir: &mut Vec<f64>| -> Result<(), DatastoreError> {
        let prefix = format!("{i:04x}");
        let chunks = super::chunks::chunk_names(store, &prefix)?;
        if sample.len() < SIZE_SAMPLE
            && let Some(n) = chunks.first()
        {
            sample.push((prefix, n.clone()));
        }
        per_dir.push(chunks.len() as f64);
        Ok(())
    };
    for i in (0..PREFIX_DIRS).step_by(SAMPLE_STEP as usize) {
        if i % 1024 == 0 {
            interrupt.check()?;
        }
        read_dir(i, &mut per_dir)?;
    }
    let (estimate, error) = scaled(&per_dir);
    if estimate < COUNT_ALL_BELOW {
        for i in (0..PREFIX_DIRS).filter(|i| i % SAMPLE_STEP != 0) {
            if i % 1024 == 0 {
                interrupt.check()?;
            }
            read_dir(i, &mut per_dir)?;
        }
        out.chunks = per_dir.iter().sum::<f64>() as u64;
        out.dirs_read = PREFIX_DIRS;
    } else {
        out.chunks = estimate as u64;
        out.dirs_read = per_dir.len() as u32;
        out.chunks_error = Some(error);
        out.notes.push(format!(
            "chunks counted in {} of the 65,536 prefix directories and scaled",
            per_dir.len()
        ));
    }
    let sizes: Vec<u64> = sample
        .iter()
        .filter_map(|(p, n)| {
            fstatat(
                store,
                format!("{p}/{n}").as_str(),
                AtFlags::AT_SYMLINK_NOFOLLOW,
            )
            .ok()
            .map(|st| st.st_size as u64)
        })
        .collect();
    if !sizes.is_empty() {
        out.mean_chunk_bytes = Some(sizes.iter().sum::<u64>() as f64 / sizes.len() as f64);
    }
    Ok(())
}

/// A snapshot: its directory under PATH, its images' size and digests.
struct Snapshot {
    rel: String,
    image_bytes: u64,
    digests: Vec<[u8; 32]>,
}

/// The chunks of all 65,536 prefix directories from the counts of a
/// sample of them: the mean scaled, and its relative error at 95% (the
/// standard error, finite-population corrected, times 1.96).
fn scaled(per_dir: &[f64]) -> (f64, f64) {
    let n = per_dir.len() as f64;
    let mean = per_dir.iter().sum::<f64>() / n;
    let var = per_dir.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let fpc = 1.0 - n / f64::from(PREFIX_DIRS);
    let error = 1.96 * (var / n * fpc).sqrt() / mean.max(1e-9);
    (mean * f64::from(PREFIX_DIRS), error)
}

/// The snapshots under `dir` (`rel` from PATH): each index file read
/// in PBS's format and its checksum checked, the snapshots counted; only
/// the largest so far keeps its digests (a datastore's every index at
/// once would not fit in memory).
fn walk(
    dir: &OwnedFd,
    rel: &str,
    depth: usize,
    out: &mut FoundDatastore,
    largest: &mut Option<Snapshot>,
    interrupt: &Interrupt,
) -> Result<(), DatastoreError> {
    interrupt.check()?;
    let listed = nix::unistd::dup(dir).and_then(names);
    let Ok(mut entries) = listed else {
        out.notes.push(format!("{rel}: not read"));
        return Ok(());
    };
    entries.sort();
    let mut here = Snapshot {
        rel: rel.to_string(),
        image_bytes: 0,
        digests: Vec::new(),
    };
    let mut indexes = 0;
    for name in entries.into_iter().filter(|n| !n.starts_with('.')) {
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let Ok(st) = fstatat(dir, name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW) else {
            continue;
        };
        if is_dir(&st) {
            if depth < MAX_DEPTH
                && let Ok(sub) = open_noatime(dir, name.as_str(), OFlag::O_DIRECTORY)
            {
                walk(&sub, &path, depth + 1, out, largest, interrupt)?;
            }
            continue;
        }
        let fixed = name.ends_with(".fidx");
        if !fixed && !name.ends_with(".didx") {
            continue;
        }
        match read_index(dir, &name, st.st_size as u64) {
            Ok(index) => {
                if fixed {
                    out.fidx += 1;
                } else {
                    out.didx += 1;
                }
                out.references += index.digests.len() as u64;
                indexes += 1;
                here.image_bytes += index.size();
                here.digests.extend(index.digests);
            }
            Err(why) => out.damaged.push(format!("{path}: {why}")),
        }
    }
    if indexes > 0 {
        out.snapshots += 1;
        if largest
            .as_ref()
            .is_none_or(|l| here.image_bytes > l.image_bytes)
        {
            *largest = Some(here);
        }
    }
    Ok(())
}

/// An index file read without changing its atime, and checked.
fn read_index(dir: &OwnedFd, name: &str, size: u64) -> Result<pbs::Index, String> {
    use std::io::Read as _;
    if size > MAX_INDEX {
        return Err(format!("{size} bytes: larger than any index"));
    }
    let fd = open_noatime(dir, name, OFlag::empty()).map_err(|e| e.desc().to_string())?;
    let mut bytes = Vec::with_capacity(size as usize);
    std::fs::File::from(fd)
        .take(MAX_INDEX)
        .read_to_end(&mut bytes)
        .map_err(|e| crate::error::describe(&e))?;
    let index = pbs::index(&bytes).map_err(|e| e.to_string())?;
    if super::chunks::index_csum(&index.digests, &index.ends) != index.csum {
        return Err("its checksum does not match its entries".into());
    }
    Ok(index)
}

/// The node's proxmox-backup-qemu, from dpkg's status: its package and version.
pub fn pbs_qemu(host: &Host) -> Option<String> {
    const PACKAGE: &str = "libproxmox-backup-qemu0";
    let status = host.read(crate::sys::host::DPKG_STATUS).ok()?;
    pveprobe_parse::hostfacts::installed_version(&status, PACKAGE).map(|v| format!("{PACKAGE} {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_of_prefix_directories_scales_with_its_error() {
        // 4,096 directories of 30 to 40 chunks (a datastore of ~2.3 M).
        let per_dir: Vec<f64> = (0..4096).map(|i| f64::from(30 + i % 11)).collect();
        let (count, error) = scaled(&per_dir);
        assert_eq!(count, 65536.0 * per_dir.iter().sum::<f64>() / 4096.0);
        assert!(count > COUNT_ALL_BELOW);
        // sd 3.16 over mean 35 and sqrt(4096), corrected: about 0.27%.
        assert!((0.002..0.003).contains(&error), "{error}");
        // Every directory read: no error left.
        let all = vec![35.0; 65536];
        assert_eq!(scaled(&all), (35.0 * 65536.0, 0.0));
    }
}
