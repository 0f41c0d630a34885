//! One storage measured: a path storage in its directory after PVE's own
//! checks, a volume storage on a scratch volume freed on every way out.

use std::path::PathBuf;

use super::{ProbeRunner, StorageRequest};
use crate::commands::probe::report::ProbeReport;
use crate::model::pve::{How, PveTarget};
use crate::pvestorage::Pve;
use crate::pvestorage::volume::ScratchVolume;
use crate::pvestorage::{Approach, PveStorage};

/// Measures one storage (already known to be available and measurable).
/// `Err`: nothing was measured, with why.
pub(super) fn storage(
    req: &StorageRequest,
    pve: &Pve,
    s: &PveStorage,
    runner: &mut dyn ProbeRunner,
) -> Result<ProbeReport, String> {
    let target = |how, path: Option<String>| PveTarget {
        id: s.id().into(),
        kind: s.kind().into(),
        shared: s.shared(),
        how,
        path,
        volume: None,
        device: None,
        size_bytes: None,
    };
    match s.approach() {
        Approach::Skip(why) => Err(why),
        Approach::Path { path, mount_point } => {
            crate::pvestorage::check_path(&path, mount_point.as_deref())?;
            let config = req.config(path.clone(), false);
            let t = target(How::Path, Some(path.display().to_string()));
            let mut report = runner.run(&config, &t);
            report.pve_storage = Some(t);
            Ok(report)
        }
        Approach::Volume { activate } => {
            if activate {
                crate::pvestorage::volume::storage_library()?;
            }
            let bytes = req.volume_bytes;
            if let Some(avail) = s.available_bytes()
                && avail < bytes
            {
                return Err(format!(
                    "a scratch volume of {} MiB does not fit: pvesm status gives {} MiB available; a smaller --write-size fits",
                    bytes >> 20,
                    avail >> 20
                ));
            }
            let vmids = pve.vmids()?;
            let mut volume =
                ScratchVolume::plan(s.id(), bytes, &vmids, activate).map_err(|e| e.to_string())?;
            let created = volume.create();
            let mut t = target(How::ScratchVolume, None);
            t.volume = Some(volume.volid());
            t.size_bytes = Some(bytes);
            t.device = volume.device.as_ref().map(|d| d.display().to_string());
            let mut report = match created {
                Err(e) => {
                    let freed = volume.free();
                    let mut why = e.to_string();
                    if let Err(left) = freed {
                        why = format!("{why}; {left}");
                    }
                    return Err(why);
                }
                Ok(_) if runner.interrupt().signal().is_some() => {
                    // A signal came while pvesm allocated: nothing measured.
                    let mut r = ProbeReport::new(PathBuf::from(volume.volid()));
                    r.interrupted_by = runner.interrupt().signal();
                    r
                }
                Ok(device) => {
                    let config = req.config(device, true);
                    runner.run(&config, &t)
                }
            };
            match volume.free() {
                Err(left) => {
                    req.progress.say(&left.to_string());
                    report.left_behind.push(left);
                }
                Ok(()) if report.interrupted_by.is_some() => {
                    req.progress
                        .say(&format!("freed the scratch volume {}", volume.volid()));
                }
                Ok(()) => {}
            }
            report.pve_storage = Some(t);
            Ok(report)
        }
    }
}
