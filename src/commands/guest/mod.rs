//! `pveprobe guest VMID`: a VM's disk measured from inside through its
//! guest agent, beside the host's figure on the same storage, with the VM
//! settings that cost. The VM's config is read as PVE reads it
//! ([`pveprobe_parse::vmconf`]); the agent is spoken directly ([`qga`]);
//! the probe copied into the guest ([`remote`]) runs the same
//! [`profile`] the host side runs.

pub mod args;
pub mod error;
pub mod run;

use std::path::{Path, PathBuf};
use std::time::Duration;

use pveprobe_parse::vmconf::{self, Drive, VmConfig};
use serde::{Deserialize, Serialize};

use crate::commands::common::work::Work;
use crate::error::ProbeError;
use crate::pvestorage::Pve;
use crate::sys::interrupt::Interrupt;
use error::GuestError;

mod host;
pub mod profile;
pub mod report;

use crate::qga::inguest::{self as remote, InGuest, RemoteError};
use crate::qga::{self, Agent};
use host::{measure_host, zvol_block_size};
use profile::Profile;

/// Where PVE's guest agent sockets are.
pub const QGA_DIR: &str = "/var/run/qemu-server";

/// The plain request.
#[derive(Debug, Clone)]
pub struct GuestRequest {
    /// Each disk's steps, said as they start.
    pub progress: crate::output::progress::Progress,
    pub vmid: u32,
    /// `--disk scsi0`: that disk only.
    pub disk: Option<String>,
    /// `--guest-path`: the guest directory to measure in (else the
    /// filesystem the agent names on the disk).
    pub guest_path: Option<String>,
    pub pve_config: PathBuf,
    /// The agent's socket (PVE's `/var/run/qemu-server/VMID.qga`).
    pub socket: PathBuf,
    /// The static probe copied into the guest.
    pub guest_probe: PathBuf,
    /// The file each side's jobs run over.
    pub bytes: u64,
    pub seconds: f64,
    /// Each agent command's time limit.
    pub agent_timeout: Duration,
    /// Measure the host side too (`--no-host`: the guest only).
    pub host: bool,
}

/// A VM disk's settings as the report shows them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DiskSettings {
    pub key: String,
    pub bus: vmconf::Bus,
    pub file: String,
    pub storage: Option<String>,
    /// The drive string as PVE would write it back (`qm set VMID --KEY` takes it whole).
    pub drive: String,
    /// The storage's type in storage.cfg (`lvmthin`), where it was read.
    pub storage_type: Option<String>,
    pub cache: String,
    pub aio: Option<String>,
    pub iothread: bool,
    pub discard: bool,
    pub ssd: bool,
    pub throttles: Vec<(String, f64)>,
    pub size_bytes: Option<u64>,
    /// A zvol's volblocksize (a volume of a zfspool storage), where read.
    #[serde(default)]
    pub volblocksize: Option<u64>,
}

/// The drive string as PVE writes it: file, then each option.
fn drive_string(d: &Drive) -> String {
    std::iter::once(d.file.clone())
        .chain(d.options.iter().map(|(k, v)| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(",")
}

impl DiskSettings {
    fn of(d: &Drive) -> Self {
        DiskSettings {
            key: d.key.clone(),
            bus: d.bus,
            file: d.file.clone(),
            storage: d.storage().map(str::to_string),
            drive: drive_string(d),
            storage_type: None,
            cache: d.cache().to_string(),
            aio: d.aio().map(str::to_string),
            iothread: d.iothread(),
            discard: d.discard(),
            ssd: d.ssd(),
            throttles: d
                .throttles()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            size_bytes: d.size_bytes(),
            volblocksize: None,
        }
    }
}

/// One VM disk measured on both sides.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DiskResult {
    pub settings: DiskSettings,
    /// The guest directory measured in and its filesystem.
    pub guest_path: Option<String>,
    pub guest_fstype: Option<String>,
    pub guest: Option<Profile>,
    pub host: Option<Profile>,
    /// Whether a disk under the host side is rotational (false: every one
    /// is an SSD or NVMe); None where it could not be read.
    #[serde(default)]
    pub host_rotational: Option<bool>,
    /// Why a side was not measured.
    pub errors: Vec<String>,
}

/// The VM as read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VmSummary {
    pub vmid: u32,
    pub name: Option<String>,
    pub ostype: Option<String>,
    pub scsihw: String,
    pub guest_os: Option<String>,
    pub agent_version: Option<String>,
}

fn conf_text(path: &Path) -> Option<Result<String, std::io::Error>> {
    match crate::sys::host::read_capped(path, pveprobe_parse::guestconf::MAX_BYTES as u64) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        r => Some(r),
    }
}

/// The VM's config on this node, or why not (another node's VM: which).
pub fn read_config(pve_config: &Path, vmid: u32) -> Result<VmConfig, GuestError> {
    let local = pve_config.join("qemu-server").join(format!("{vmid}.conf"));
    match conf_text(&local) {
        Some(Ok(text)) => return Ok(vmconf::parse(&text)),
        Some(Err(source)) => {
            return Err(GuestError::ConfigUnreadable {
                path: local,
                source,
            });
        }
        None => {}
    }
    let nodes = pve_config.join("nodes");
    if let Ok(entries) = std::fs::read_dir(&nodes) {
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| {
                e.path()
                    .join("qemu-server")
                    .join(format!("{vmid}.conf"))
                    .is_file()
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        if let Some(node) = names.into_iter().next() {
            return Err(GuestError::OnOtherNode { vmid, node });
        }
    }
    Err(GuestError::NoVm { vmid, path: local })
}

/// The disks to measure: `--disk KEY`, or every disk on a storage.
pub fn chosen_disks<'a>(
    vm: &'a VmConfig,
    vmid: u32,
    disk: Option<&str>,
) -> Result<Vec<&'a Drive>, GuestError> {
    match disk {
        Some(key) => match vm.disks().find(|d| d.key == key) {
            Some(d) => Ok(vec![d]),
            None => Err(GuestError::NoSuchDisk {
                vmid,
                key: key.into(),
                disks: vm.disks().map(|d| d.key.clone()).collect(),
            }),
        },
        None => {
            let on_storage: Vec<&Drive> = vm.disks().filter(|d| d.storage().is_some()).collect();
            if on_storage.is_empty() {
                return Err(GuestError::NoDiskOnStorage { vmid });
            }
            Ok(on_storage)
        }
    }
}

/// The agent connected and checked: enabled in the config, answering,
/// with every command the probe needs, in an x86-64 Linux guest.
pub fn open_agent(
    req: &GuestRequest,
    vm: &VmConfig,
) -> Result<(Agent, qga::Info, qga::OsInfo), GuestError> {
    let vmid = req.vmid;
    if !vm.agent.enabled {
        return Err(GuestError::NoAgent { vmid });
    }
    let mut agent = Agent::connect(&req.socket, req.agent_timeout).map_err(|e| {
        GuestError::Agent(match e {
            qga::QgaError::Connect { .. } => format!(
                "{e}: is VM {vmid} running (qm status {vmid})? Its agent socket appears when it starts"
            ),
            qga::QgaError::Timeout { .. } => format!(
                "{e}: is qemu-guest-agent installed and running in the guest (systemctl status qemu-guest-agent)?"
            ),
            e => e.to_string(),
        })
    })?;
    let info = agent.info().map_err(|e| GuestError::Agent(e.to_string()))?;
    let missing = info.missing(&remote::NEEDED);
    if !missing.is_empty() {
        return Err(GuestError::AgentBlocks {
            vmid,
            missing: missing.iter().map(|m| m.to_string()).collect(),
        });
    }
    let os = agent
        .osinfo()
        .map_err(|e| GuestError::Agent(e.to_string()))?;
    let machine = os.machine.as_deref().unwrap_or("unknown");
    let windows = os.id.as_deref() == Some("mswindows");
    if machine != "x86_64" || windows {
        return Err(GuestError::NotLinux {
            vmid,
            system: os
                .pretty_name
                .clone()
                .unwrap_or_else(|| "an unknown system".into()),
            machine: machine.into(),
        });
    }
    Ok((agent, info, os))
}

/// Whether the agent's `disk` is the VM's `drive` on a VM whose SCSI
/// controller is `scsihw`. By serial where the agent gives one (from the
/// guest's udev): QEMU names a SCSI disk without serial= `drive-KEY` (the
/// guest sees `0QEMU_QEMU_HARDDISK_drive-scsi0`), with serial=NAME
/// `..._NAME`, and a virtio-blk disk with serial=NAME `NAME`. Where it gives
/// none, by the address PVE gives the disk (`PVE/QemuServer/PCI.pm`,
/// `DriveDevice.pm`): virtio0 to virtio5 at PCI slots 10 to 15 of bus 0;
/// scsiN on the first controller at slot 5 (lsi's second at 6), as
/// target N % 7 (lsi), target N (pvscsi) or LUN N of target 0
/// (virtio-scsi-pci, megasas). Disks behind bridges (virtio-scsi-single's
/// controllers, virtio6 and up) sit on bus numbers the guest chooses:
/// they need a serial or --guest-path.
pub fn is_drive(disk: &qga::FsDisk, drive: &Drive, scsihw: &str) -> bool {
    let named = |name: &str| {
        disk.serial
            .as_deref()
            .is_some_and(|s| s == name || s.ends_with(&format!("_{name}")))
    };
    if let Some(serial) = drive.serial() {
        return named(serial);
    }
    if disk.serial.as_deref().is_some_and(|s| !s.is_empty()) {
        return named(&format!("drive-{}", drive.key));
    }
    let digits = drive
        .key
        .trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let Ok(n) = digits.parse::<i64>() else {
        return false;
    };
    let at = disk.pci_controller.unwrap_or_default();
    let on_bus0 = |slot: i64| at.domain == 0 && at.bus == 0 && at.slot == slot;
    let scsi = |slot: i64, target: i64, unit: i64| {
        disk.bus_type == "scsi" && on_bus0(slot) && disk.target == target && disk.unit == unit
    };
    match drive.bus {
        vmconf::Bus::Virtio => disk.bus_type == "virtio" && n <= 5 && on_bus0(10 + n),
        vmconf::Bus::Scsi => match scsihw {
            "lsi" | "lsi53c810" => n < 14 && scsi(5 + n / 7, n % 7, 0),
            "pvscsi" => scsi(5, n, 0),
            "virtio-scsi-pci" | "megasas" => scsi(5, 0, n),
            _ => false,
        },
        _ => false,
    }
}

/// The mount point of the filesystem on `drive` nearest the root (`/`
/// before `/boot`), its type and free bytes.
pub fn filesystem_on<'a>(
    drive: &Drive,
    scsihw: &str,
    fs: &'a [qga::Filesystem],
) -> Option<&'a qga::Filesystem> {
    fs.iter()
        .filter(|f| f.disk.iter().any(|d| is_drive(d, drive, scsihw)))
        .min_by_key(|f| (f.mountpoint.len(), f.mountpoint.clone()))
}

fn free_bytes(f: &qga::Filesystem) -> Option<u64> {
    f.total_bytes
        .zip(f.used_bytes)
        .map(|(t, u)| t.saturating_sub(u))
}

/// The guest directory to measure `drive` in: `--guest-path`, or the
/// mount point of the filesystem on the disk ([`filesystem_on`]).
fn guest_target(
    req: &GuestRequest,
    drive: &Drive,
    scsihw: &str,
    fs: &[qga::Filesystem],
) -> Result<(String, Option<String>, Option<u64>), String> {
    if let Some(path) = &req.guest_path {
        // The filesystem whose mount point is the longest prefix of it.
        let on = fs
            .iter()
            .filter(|f| Path::new(path).starts_with(&f.mountpoint))
            .max_by_key(|f| f.mountpoint.len());
        return Ok((
            path.clone(),
            on.map(|f| f.fstype.clone()),
            on.and_then(free_bytes),
        ));
    }
    let f = filesystem_on(drive, scsihw, fs).ok_or_else(|| {
        format!(
            "the guest agent names no mounted filesystem on {}: give the drive a serial (qm set {} --{} {},serial=NAME) or name a directory on it with --guest-path",
            drive.key, req.vmid, drive.key, drive_string(drive)
        )
    })?;
    Ok((f.mountpoint.clone(), Some(f.fstype.clone()), free_bytes(f)))
}

/// The guest side of one disk.
fn measure_guest(
    req: &GuestRequest,
    agent: &mut Agent,
    binary: &[u8],
    dir: &str,
    interrupt: &Interrupt,
) -> (Result<Profile, RemoteError>, Option<String>) {
    let mut guest = match InGuest::create(agent, dir) {
        Ok(g) => g,
        Err(e) => return (Err(e), None),
    };
    let result = (|| {
        guest.install(binary)?;
        let bytes = req.bytes.to_string();
        let seconds = req.seconds.to_string();
        let args = [
            "guest-side",
            "--bytes",
            &bytes,
            "--seconds",
            &seconds,
            &guest.dir.clone(),
        ];
        // Seven jobs of `seconds` each and the file's prefill.
        let limit = Duration::from_secs_f64(req.seconds * 7.0 + 120.0 + req.bytes as f64 / 20e6);
        let out = guest.run(&args, limit, interrupt)?;
        serde_json::from_slice::<Profile>(&out).map_err(|e| RemoteError::Failed {
            what: "the probe".into(),
            why: format!("its output is not a profile: {e}"),
        })
    })();
    guest.clean();
    (result, guest.left.take())
}

/// What each disk's run needs.
struct Context<'a> {
    req: &'a GuestRequest,
    agent: &'a mut Agent,
    binary: &'a [u8],
    fs: &'a [qga::Filesystem],
    /// The VM's SCSI controller, PVE's default filled in.
    scsihw: &'a str,
    pve: Option<&'a Result<Pve, String>>,
    interrupt: &'a Interrupt,
}

impl Context<'_> {
    /// One disk: the guest side, then (not after an interrupt) the host's.
    fn disk(&mut self, drive: &Drive, left_behind: &mut Vec<String>) -> DiskResult {
        let mut settings = DiskSettings::of(drive);
        if let (Some(Ok(pve)), Some(id)) = (self.pve, drive.storage()) {
            let storage = pve.storages().into_iter().find(|s| s.id() == id);
            settings.storage_type = storage.as_ref().map(|s| s.kind().to_string());
            // A zfspool's volume is the zvol POOL/NAME.
            if let Some(s) = storage.filter(|s| s.kind() == "zfspool")
                && let (Some(pool), Some((_, name))) =
                    (s.section.get("pool"), drive.file.split_once(':'))
            {
                settings.volblocksize =
                    zvol_block_size(&crate::sys::host::Host::real(), pool, name);
            }
        }
        let mut result = DiskResult {
            settings,
            guest_path: None,
            guest_fstype: None,
            guest: None,
            host: None,
            host_rotational: None,
            errors: Vec::new(),
        };
        self.req.progress.step(&format!(
            "{}: in the guest (the probe copied in, its profile run)",
            drive.key
        ));
        match self.guest_side(drive, &mut result, left_behind) {
            Ok(profile) => result.guest = Some(profile),
            Err(why) => result.errors.push(format!("guest: {why}")),
        }
        if self.interrupt.signal().is_some() {
            return result;
        }
        if let (Some(pve), Some(storage)) = (self.pve, drive.storage()) {
            self.req
                .progress
                .step(&format!("{}: on the host, storage {storage}", drive.key));
            let host = pve
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|pve| measure_host(self.req, pve, storage, self.interrupt));
            match host {
                Ok((p, rotational)) => {
                    result.host = Some(p);
                    result.host_rotational = rotational;
                }
                Err(why) => result.errors.push(format!("host: {why}")),
            }
        }
        result
    }

    /// The guest's profile on the disk's filesystem, or why not.
    fn guest_side(
        &mut self,
        drive: &Drive,
        result: &mut DiskResult,
        left_behind: &mut Vec<String>,
    ) -> Result<Profile, String> {
        let req = self.req;
        let (dir, fstype, free) = guest_target(req, drive, self.scsihw, self.fs)?;
        result.guest_path = Some(dir.clone());
        result.guest_fstype = fstype;
        if let Some(free) = free
            && free < 2 * req.bytes + ROOM
        {
            return Err(format!(
                "{dir} has {} MiB free, too little for two {} MiB files and {} MiB to spare: a smaller --write-size fits",
                free >> 20,
                req.bytes >> 20,
                ROOM >> 20
            ));
        }
        let (measured, left) = measure_guest(req, self.agent, self.binary, &dir, self.interrupt);
        if let Some(left) = left {
            req.progress.say(&format!("left in the guest: {left}"));
            left_behind.push(format!("in the guest: {left}"));
        }
        measured.map_err(|e| e.to_string())
    }
}

/// Every chosen disk, guest side then host side, back to back.
impl Work for GuestRequest {
    type Report = report::GuestReport;
    type Error = GuestError;

    fn run(&self, interrupt: &Interrupt) -> Result<report::GuestReport, GuestError> {
        let req = self;
        let vm = read_config(&req.pve_config, req.vmid)?;
        if let Some(lock) = &vm.lock {
            return Err(GuestError::Locked {
                vmid: req.vmid,
                lock: lock.clone(),
            });
        }
        let disks = chosen_disks(&vm, req.vmid, req.disk.as_deref())?;
        let binary =
            std::fs::read(&req.guest_probe).map_err(|source| GuestError::NoGuestProbe {
                path: req.guest_probe.clone(),
                source,
            })?;
        let (mut agent, info, os) = open_agent(req, &vm)?;
        let fs = agent
            .fsinfo()
            .map_err(|e| GuestError::Agent(e.to_string()))?;
        let pve = if req.host {
            Some(Pve::load(&req.pve_config))
        } else {
            None
        };
        if let Some(Ok(p)) = &pve {
            p.warnings.iter().for_each(|w| req.progress.say(w));
        }
        let mut report = report::GuestReport {
            schema_version: report::SCHEMA_VERSION,
            kind: report::KIND.into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: jiff::Timestamp::now()
                .round(jiff::Unit::Second)
                .map(|t| t.to_string())
                .unwrap_or_default(),
            vm: VmSummary {
                vmid: req.vmid,
                name: vm.name.clone(),
                ostype: vm.ostype.clone(),
                scsihw: vm.scsi_controller().to_string(),
                guest_os: os.pretty_name.clone(),
                agent_version: Some(info.version.clone()),
            },
            disks: Vec::new(),
            hints: Vec::new(),
            left_behind: Vec::new(),
            interrupted_by: None,
        };
        let mut ctx = Context {
            req,
            agent: &mut agent,
            binary: &binary,
            fs: &fs,
            scsihw: vm.scsi_controller(),
            pve: pve.as_ref(),
            interrupt,
        };
        for drive in disks {
            let result = ctx.disk(drive, &mut report.left_behind);
            report.disks.push(result);
            if let Some(sig) = interrupt.signal() {
                report.interrupted_by = Some(sig);
                break;
            }
        }
        report.hints = report::hints(&report);
        Ok(report)
    }
}

/// Room the profile needs beside its two files (the read jobs' and the
/// write jobs'): the sync job's file and slack.
const ROOM: u64 = 256 << 20;

/// The guest's end: `pveprobe guest-side DIR`, the profile in DIR as JSON;
/// first the free space of DIR's filesystem, so a full guest disk is
/// refused before a byte is written.
pub fn guest_side(
    dir: &Path,
    bytes: u64,
    seconds: f64,
    interrupt: &Interrupt,
) -> Result<Profile, ProbeError> {
    let st = nix::sys::statvfs::statvfs(dir)
        .map_err(|e| ProbeError::io(format!("statvfs {}", dir.display()), e.into()))?;
    let free = st.blocks_available().saturating_mul(st.fragment_size());
    if free < 2 * bytes + ROOM {
        return Err(ProbeError::Unavailable(format!(
            "{} has {} MiB free, too little for two {} MiB files and {} MiB to spare: a smaller --write-size fits",
            dir.display(),
            free >> 20,
            bytes >> 20,
            ROOM >> 20
        )));
    }
    profile::run_in_dir(dir, bytes, Duration::from_secs_f64(seconds), interrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fsinfo(name: &str) -> Vec<qga::Filesystem> {
        let path = format!("{}/fixtures/qga/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn filesystem_on_<'a>(d: &Drive, fs: &'a [qga::Filesystem]) -> Option<&'a qga::Filesystem> {
        filesystem_on(d, "virtio-scsi-pci", fs)
    }

    fn drive(line: &str) -> Drive {
        vmconf::parse(line).drives.remove(0)
    }

    #[test]
    fn a_scsi_disk_is_found_by_the_serial_qemu_gives_it() {
        let fs = fsinfo("fsinfo-virtio-scsi-pbs.json");
        let on = filesystem_on_(&drive("scsi2: local-lvm:vm-100-disk-2,size=2G"), &fs).unwrap();
        assert_eq!(
            (on.mountpoint.as_str(), on.fstype.as_str()),
            ("/xfs", "xfs")
        );
        assert_eq!(free_bytes(on), Some(2080374784 - 109461504));
        assert!(filesystem_on_(&drive("scsi1: local-lvm:vm-100-disk-1"), &fs).is_none());
        assert!(filesystem_on_(&drive("scsi22: local-lvm:vm-100-disk-1"), &fs).is_none());
        // serial=NAME replaces drive-KEY.
        assert!(
            filesystem_on_(&drive("scsi2: local-lvm:vm-100-disk-2,serial=data"), &fs).is_none()
        );
    }

    #[test]
    fn virtio_blk_by_pves_pci_slot_and_a_slot_of_another_layout_is_no_match() {
        // This test machine's own agent: vda at slot 2 of bus 0, not a slot PVE uses.
        let fs = fsinfo("fsinfo-virtio-blk-debian12.json");
        assert!(fs.iter().any(|f| f.mountpoint == "/"));
        assert!(filesystem_on_(&drive("virtio0: local:vm-100-disk-0"), &fs).is_none());
        let mut moved = fs.clone();
        for f in &mut moved {
            for d in &mut f.disk {
                d.pci_controller = Some(qga::PciAddr {
                    slot: 11,
                    ..Default::default()
                });
            }
        }
        assert_eq!(
            filesystem_on_(&drive("virtio1: local:vm-100-disk-0"), &moved)
                .unwrap()
                .mountpoint,
            "/"
        );
        assert!(filesystem_on_(&drive("virtio0: local:vm-100-disk-0"), &moved).is_none());
        for f in &mut moved {
            for d in &mut f.disk {
                d.serial = Some("db".into());
            }
        }
        assert_eq!(
            filesystem_on_(&drive("virtio3: local:x,serial=db"), &moved)
                .unwrap()
                .mountpoint,
            "/"
        );
    }

    #[test]
    fn without_a_serial_a_scsi_disk_is_found_at_the_address_pve_gives_it() {
        // A VM without udev, booted by tests/it/guest.rs with PVE's layout.
        let fs = fsinfo("fsinfo-virtio-scsi-pci-no-udev.json");
        let on = |line: &str, scsihw: &str| {
            filesystem_on(&drive(line), scsihw, &fs).map(|f| f.mountpoint.clone())
        };
        assert_eq!(
            on("scsi0: local:x", "virtio-scsi-pci").as_deref(),
            Some("/mnt/data")
        );
        assert_eq!(on("scsi1: local:x", "virtio-scsi-pci"), None);
        assert_eq!(on("scsi0: local:x", "lsi").as_deref(), Some("/mnt/data"));
        assert_eq!(on("scsi7: local:x", "lsi"), None); // lsi's second controller, slot 6
        assert_eq!(on("scsi0: local:x", "virtio-scsi-single"), None);
        assert_eq!(on("virtio0: local:x", "virtio-scsi-pci"), None);
        assert_eq!(on("scsi0: local:x,serial=abc", "virtio-scsi-pci"), None);
    }

    #[test]
    fn a_zvols_volblocksize_is_its_devices_physical_block_size() {
        let root = tempfile::tempdir().unwrap();
        let zvol = root.path().join("dev/zvol/rpool/data");
        std::fs::create_dir_all(&zvol).unwrap();
        std::os::unix::fs::symlink("../../../zd16", zvol.join("vm-100-disk-0")).unwrap();
        let queue = root.path().join("sys/block/zd16/queue");
        std::fs::create_dir_all(&queue).unwrap();
        std::fs::write(queue.join("physical_block_size"), "16384\n").unwrap();
        let host = crate::sys::host::Host::with_root(root.path());
        assert_eq!(
            zvol_block_size(&host, "rpool/data", "vm-100-disk-0"),
            Some(16384)
        );
        assert_eq!(zvol_block_size(&host, "rpool/data", "vm-100-disk-1"), None);
    }

    #[test]
    fn the_disks_asked_for_and_why_not() {
        let vm = vmconf::parse("scsi0: local:1,size=1G\nide2: none,media=cdrom\nscsi1: /dev/sdb\n");
        let keys = |d: Vec<&Drive>| d.iter().map(|d| d.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(chosen_disks(&vm, 1, None).unwrap()), ["scsi0"]);
        assert_eq!(
            keys(chosen_disks(&vm, 1, Some("scsi1")).unwrap()),
            ["scsi1"]
        );
        let err = chosen_disks(&vm, 1, Some("scsi9")).unwrap_err();
        assert!(err.to_string().contains("its disks: scsi0, scsi1"), "{err}");
        assert!(chosen_disks(&vmconf::parse("scsi0: /dev/sdb\n"), 1, None).is_err());
    }
}
