//! The host side of a VM disk: the same profile run on the disk's storage
//! (in its directory, or on a scratch volume), whether a disk under it
//! turns, and a zvol's block size.

use std::path::Path;
use std::time::Duration;

use super::GuestRequest;
use super::profile::{self, Profile};
use crate::pvestorage::Pve;
use crate::sys::interrupt::Interrupt;

/// The volblocksize of zvol `pool/name`: its device's physical block size
/// in sysfs (OpenZFS sets it to the volblocksize), through `/dev/zvol`.
pub fn zvol_block_size(host: &crate::sys::host::Host, pool: &str, name: &str) -> Option<u64> {
    let dev = host.link_name(format!("/dev/zvol/{pool}/{name}"))?;
    host.read_value(format!("/sys/block/{dev}/queue/physical_block_size"))?
        .parse()
        .ok()
}

/// Whether a disk under the leaf devices of `stack` turns (None: none known).
pub(super) fn any_rotational(disks: &[crate::model::storage::Disk]) -> Option<bool> {
    let flags: Vec<bool> = disks.iter().filter_map(|d| d.rotational).collect();
    (!flags.is_empty()).then(|| flags.iter().any(|r| *r))
}

/// Whether the disks under directory `path` turn.
pub(super) fn rotational_under_path(path: &Path) -> Option<bool> {
    let host = crate::sys::host::Host::real();
    let fs = crate::measure::filesystem::filesystem(&host, path).ok()?;
    any_rotational(&crate::blockstack::storage(&host, &fs).disks)
}

/// Whether the disks under block device `device` turn.
pub(super) fn rotational_under_device(device: &Path) -> Option<bool> {
    use std::os::unix::fs::MetadataExt;
    let host = crate::sys::host::Host::real();
    let rdev = std::fs::metadata(device).ok()?.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let name =
        crate::blockstack::sysfs::device_name(&host, &device.to_string_lossy(), major, minor)?;
    any_rotational(&crate::blockstack::sysfs::resolve(&host, &[name]).disks)
}

/// The host side of one disk: the same profile on its storage, and
/// whether a disk under it turns.
pub(super) fn measure_host(
    req: &GuestRequest,
    pve: &Pve,
    storage: &str,
    interrupt: &Interrupt,
) -> Result<(Profile, Option<bool>), String> {
    use crate::pvestorage::Approach;
    let s = pve
        .storages()
        .into_iter()
        .find(|s| s.id() == storage)
        .ok_or_else(|| format!("storage {storage} is not in storage.cfg for this node"))?;
    let window = Duration::from_secs_f64(req.seconds);
    match s.approach() {
        Approach::Skip(why) => Err(why),
        Approach::Path { path, mount_point } => {
            crate::pvestorage::check_path(&path, mount_point.as_deref())?;
            let p = profile::run_in_dir(&path, req.bytes, window, interrupt)
                .map_err(|e| e.to_string())?;
            Ok((p, rotational_under_path(&path)))
        }
        Approach::Volume { activate } => {
            let vmids = pve.vmids()?;
            let mut volume =
                crate::pvestorage::volume::ScratchVolume::plan(s.id(), req.bytes, &vmids, activate)
                    .map_err(|e| e.to_string())?;
            let result = (|| -> Result<(Profile, Option<bool>), String> {
                let device = volume.create().map_err(|e| e.to_string())?;
                let file = crate::measure::volume::open_exclusive(&device, false)
                    .map_err(|e| e.to_string())?;
                let pool = crate::measure::seqwrite::aligned_data();
                crate::measure::volume::prefill(&file, &device, req.bytes, &pool, false, interrupt)
                    .map_err(|e| e.to_string())?;
                let name = device.display().to_string();
                let figures = profile::run_on_device(&file, &name, req.bytes, window, interrupt)
                    .map_err(|e| e.to_string())?;
                let profile = Profile {
                    target: format!("a scratch volume {}", volume.volid()),
                    direct: true,
                    bytes: req.bytes,
                    seconds: req.seconds,
                    block_size: None,
                    figures,
                };
                Ok((profile, rotational_under_device(&device)))
            })();
            let freed = volume.free();
            match (result, freed) {
                (r, Ok(())) => r,
                (Ok(_), Err(left)) => Err(left),
                (Err(e), Err(left)) => Err(format!("{e}; {left}")),
            }
        }
    }
}
