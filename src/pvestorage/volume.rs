//! A scratch volume on a volume storage (LVM-thin, LVM, zvols, RBD): named
//! `vm-VMID-pveprobe-<random>`, allocated with `pvesm alloc`, found with
//! `pvesm path`, checked (the device is the one just allocated, and
//! unused) before anything is written to it, and freed with `pvesm free`
//! on every way out. Where the storage needs it (RBD, shared LVM), PVE's
//! own storage library activates or maps it and deactivates or unmaps it.
//!
//! The VMID is drawn at random from 900000000 to 999999999, outside the
//! guests `/etc/pve/.vmlist` lists, while the probe holds the host-wide
//! lock (one probe at a time on a node); the name's 32 random bits keep
//! two nodes' probes on one shared storage apart.

use crate::sys::child::{ChildOptions, ToolFailure};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::RngExt;

use super::pvesm::{self, PvesmError};

/// The VMIDs the probe draws from: PVE allows up to 999999999, and guests
/// rarely live this high.
pub const VMIDS: std::ops::RangeInclusive<u32> = 900_000_000..=999_999_999;

/// How far a device may exceed the size asked for: LVM rounds up to its
/// extent (4 MiB), zvols to their block, RBD not at all.
const SIZE_SLACK: u64 = 64 << 20;

/// Why a scratch volume could not be made ready, or freed.
#[derive(Debug, thiserror::Error)]
pub enum VolumeError {
    #[error(transparent)]
    Pvesm(#[from] PvesmError),
    #[error("no free VMID in {}-{}", VMIDS.start(), VMIDS.end())]
    NoVmid,
    #[error("{0}")]
    NotTheVolume(String),
    #[error("{0}")]
    InUse(String),
    #[error("{0}")]
    Activation(String),
}

/// A VMID no guest has, at random from [`VMIDS`].
pub fn choose_vmid(taken: &BTreeSet<u32>, rng: &mut impl rand::Rng) -> Result<u32, VolumeError> {
    for _ in 0..1000 {
        let id = rng.random_range(VMIDS);
        if !taken.contains(&id) {
            return Ok(id);
        }
    }
    Err(VolumeError::NoVmid)
}

/// `vm-VMID-pveprobe-` and 8 random hex digits.
pub fn volume_name(vmid: u32, rng: &mut impl rand::Rng) -> String {
    format!("vm-{vmid}-pveprobe-{:08x}", rng.random::<u32>())
}

/// Where a scratch volume is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// `pvesm alloc` was not run.
    Planned,
    /// `pvesm alloc` ran and failed: the volume may exist or not.
    AllocFailed,
    Allocated,
    Freed,
}

/// One scratch volume.
#[derive(Debug)]
pub struct ScratchVolume {
    pub storage: String,
    pub name: String,
    pub vmid: u32,
    pub bytes: u64,
    /// Activate and deactivate (map and unmap) through PVE::Storage.
    pub activate: bool,
    /// What `pvesm path` (or the activation) gave.
    pub path: Option<PathBuf>,
    /// That path resolved: the block device written and read.
    pub device: Option<PathBuf>,
    state: State,
    activated: bool,
}

impl ScratchVolume {
    pub fn plan(
        storage: &str,
        bytes: u64,
        taken: &BTreeSet<u32>,
        activate: bool,
    ) -> Result<Self, VolumeError> {
        let mut rng = rand::rng();
        let vmid = choose_vmid(taken, &mut rng)?;
        Ok(ScratchVolume {
            storage: storage.to_string(),
            name: volume_name(vmid, &mut rng),
            vmid,
            bytes,
            activate,
            path: None,
            device: None,
            state: State::Planned,
            activated: false,
        })
    }

    /// `STORAGE:NAME`.
    pub fn volid(&self) -> String {
        format!("{}:{}", self.storage, self.name)
    }

    /// `pvesm alloc`, then (after activation where needed) `pvesm path`,
    /// then the checks: the device is the volume's, of its size, unused.
    pub fn create(&mut self) -> Result<PathBuf, VolumeError> {
        self.state = State::AllocFailed;
        pvesm::alloc(&self.storage, self.vmid, &self.name, self.bytes)?;
        self.state = State::Allocated;
        let path = if self.activate {
            self.activated = true;
            perl_storage("activate", &self.volid())?
        } else {
            pvesm::path(&self.volid())?
        };
        self.path = Some(path.clone());
        let device = check_device(&path, &self.name, self.bytes)?;
        self.device = Some(device.clone());
        Ok(device)
    }

    /// Deactivates (unmaps) and frees it. After a failed `alloc` the
    /// volume is freed in case the failure came after its creation (a
    /// time limit); a free that fails then means there was none. Safe to
    /// call twice.
    pub fn free(&mut self) -> Result<(), String> {
        match self.state {
            State::Planned | State::Freed => return Ok(()),
            State::AllocFailed => {
                let _ = pvesm::free(&self.volid());
                self.state = State::Freed;
                return Ok(());
            }
            State::Allocated => {}
        }
        let mut problems = Vec::new();
        if self.activated
            && let Err(e) = perl_storage("deactivate", &self.volid())
        {
            problems.push(e.to_string());
        }
        match pvesm::free(&self.volid()) {
            Ok(()) => {
                self.state = State::Freed;
                Ok(())
            }
            Err(e) => {
                problems.push(e.to_string());
                Err(format!(
                    "could not free the scratch volume {} ({}); free it with: pvesm free {}",
                    self.volid(),
                    problems.join("; "),
                    self.volid()
                ))
            }
        }
    }
}

/// The device behind `path` when it is the scratch volume `name` of
/// `bytes`, unused; why not otherwise. Nothing is written here.
pub fn check_device(path: &Path, name: &str, bytes: u64) -> Result<PathBuf, VolumeError> {
    use std::os::unix::fs::FileTypeExt;
    let shown = path.display().to_string();
    if !shown.contains(name) {
        return Err(VolumeError::NotTheVolume(format!(
            "pvesm gave {shown} for the scratch volume {name}: not its device, nothing written"
        )));
    }
    let device = std::fs::canonicalize(path).map_err(|e| {
        VolumeError::NotTheVolume(format!(
            "{shown} (the scratch volume's device): {}",
            crate::error::describe(&e)
        ))
    })?;
    let meta = std::fs::metadata(&device).map_err(|e| {
        VolumeError::NotTheVolume(format!(
            "{}: {}",
            device.display(),
            crate::error::describe(&e)
        ))
    })?;
    if !meta.file_type().is_block_device() {
        return Err(VolumeError::NotTheVolume(format!(
            "{shown} is not a block device: nothing written"
        )));
    }
    let file = crate::measure::blockdev::open_device(&device, false)
        .map_err(|e| VolumeError::NotTheVolume(e.to_string()))?;
    let size = crate::measure::blockdev::device_size(&file, &device)
        .map_err(|e| VolumeError::NotTheVolume(e.to_string()))?;
    drop(file);
    if size < bytes || size > bytes + SIZE_SLACK {
        return Err(VolumeError::NotTheVolume(format!(
            "{} has {size} bytes, the scratch volume was allocated with {bytes}: not its device, nothing written",
            device.display()
        )));
    }
    let holders = holders(&device);
    if !holders.is_empty() {
        return Err(VolumeError::InUse(format!(
            "{} is in use (held by {}): nothing written",
            device.display(),
            holders.join(", ")
        )));
    }
    // The kernel refuses an exclusive open of a mounted or held device.
    crate::measure::volume::open_exclusive(&device, false)
        .map_err(|e| VolumeError::InUse(format!("{e}: nothing written")))?;
    Ok(device)
}

/// What sysfs lists under the device's `holders` (device-mapper, md, bcache).
fn holders(device: &Path) -> Vec<String> {
    let Some(name) = device.file_name() else {
        return Vec::new();
    };
    let dir = Path::new("/sys/class/block").join(name).join("holders");
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// PVE's storage library, through perl: `activate` activates (maps) a
/// volume and prints its path; `deactivate` undoes it.
const PERL_STORAGE: &str = r#"
use strict;
use PVE::Storage;
my ($what, $volid) = @ARGV;
my $cfg = PVE::Storage::config();
if ($what eq 'activate') {
    PVE::Storage::activate_volumes($cfg, [$volid]);
    my $path = PVE::Storage::map_volume($cfg, $volid);
    print "$path\n";
} else {
    PVE::Storage::unmap_volume($cfg, $volid);
    PVE::Storage::deactivate_volumes($cfg, [$volid]);
}
"#;

/// Whether perl can load PVE::Storage here.
pub fn storage_library() -> Result<(), String> {
    let limit = ChildOptions::limit(Duration::from_secs(60));
    match crate::sys::child::run("perl", &["-MPVE::Storage", "-e", "1"], &limit) {
        Ok(_) => Ok(()),
        Err(ToolFailure::Failed { message, .. }) => Err(format!(
            "it needs PVE's storage library to activate or map its volumes, and perl cannot load PVE::Storage ({message})"
        )),
        Err(e) => Err(format!(
            "it needs PVE's storage library (perl PVE::Storage) to activate or map its volumes, and perl does not run: {e}"
        )),
    }
}

fn perl_storage(what: &str, volid: &str) -> Result<PathBuf, VolumeError> {
    let done = crate::sys::child::run(
        "perl",
        &["-e", PERL_STORAGE, what, volid],
        &ChildOptions::limit(Duration::from_secs(300)).own_group(),
    )
    .map_err(|f| match f {
        ToolFailure::NotStarted { why, .. } => VolumeError::Activation(format!("perl: {why}")),
        f => VolumeError::Activation(format!("PVE::Storage {what} {volid} failed ({f})")),
    })?;
    Ok(PathBuf::from(done.stdout_text().trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn vmids_avoid_the_guests_and_names_are_pves_form() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let id = choose_vmid(&BTreeSet::new(), &mut rng).unwrap();
        assert!(VMIDS.contains(&id));
        // Every VMID but one taken: that one is drawn.
        let all_but: BTreeSet<u32> = BTreeSet::from([id]);
        let mut again = rand::rngs::SmallRng::seed_from_u64(7);
        assert_ne!(choose_vmid(&all_but, &mut again).unwrap(), id);
        let name = volume_name(id, &mut rng);
        let re = regex::Regex::new(r"^vm-(\d+)-pveprobe-[0-9a-f]{8}$").unwrap();
        let caps = re.captures(&name).unwrap();
        assert_eq!(caps[1].parse::<u32>().unwrap(), id);
    }

    #[test]
    fn a_path_without_the_name_or_not_a_device_is_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("vm-1-pveprobe-00000000");
        std::fs::write(&file, b"keep").unwrap();
        let err = check_device(Path::new("/dev/null"), "vm-1-pveprobe-00000000", 1).unwrap_err();
        assert!(err.to_string().contains("not its device"), "{err}");
        let err = check_device(&file, "vm-1-pveprobe-00000000", 4).unwrap_err();
        assert!(err.to_string().contains("is not a block device"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    }

    #[test]
    fn a_volume_never_allocated_needs_no_free() {
        let mut v = ScratchVolume::plan("local-lvm", 4 << 30, &BTreeSet::new(), false).unwrap();
        assert!(v.volid().starts_with("local-lvm:vm-9"));
        assert_eq!(v.free(), Ok(()));
    }
}
