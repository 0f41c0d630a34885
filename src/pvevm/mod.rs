//! PVE's VMs as pveprobe reaches them: PVE's own tools, `qm` (create,
//! start, stop, destroy `load`'s worker VMs) and `pvesh get
//! /cluster/nextid` (a VMID no guest of the cluster has), each run through
//! `sys::child::run` without a shell, each word one argument, in a process
//! group of its own (the probe's Ctrl-C lets a call finish, within its
//! time limit, before the probe cleans up), its failure mapped at the call
//! into [`PveToolError`]; and a running VM's QMP socket ([`qmp`]), which
//! `top` and `record` read each interval.

pub mod qmp;

use std::path::PathBuf;
use std::time::Duration;

use crate::sys::child;

/// `status`, `start`, `stop` and `nextid` answer within a minute or two.
const QUICK: Duration = Duration::from_secs(120);
/// `create` allocates disks and `destroy` frees them (LVM's saferemove
/// zeroes them; RBD and iSCSI storages can be slow).
const SLOW: Duration = Duration::from_secs(900);

use crate::sys::child::{ChildOptions, PveToolError};

/// What a host without PVE's tools lacks.
const NEEDS: &str = "this needs Proxmox VE";

/// How a worker VM's disks and hardware are set: PVE's defaults for a
/// new VM's disks unless an option says otherwise, so one setting can be
/// compared with another.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VmSettings {
    /// `scsihw`: `virtio-scsi-single` (a controller per disk).
    pub scsihw: String,
    pub iothread: bool,
    /// `cache`: `none`.
    pub cache: String,
    /// `aio`: PVE's default (io_uring) when `None`.
    pub aio: Option<String>,
    pub memory_mib: u32,
    pub cores: u32,
}

/// A VM to make: a worker of `pveprobe load`, booting `kernel` and
/// `initrd` with `append`, with `disks` new disks of `disk_gib` on
/// `storage`.
#[derive(Debug, Clone, PartialEq)]
pub struct VmSpec {
    pub vmid: u32,
    pub name: String,
    pub storage: String,
    pub disks: usize,
    /// Each disk's size in GiB (PVE's `STORAGE:SIZE` takes GiB, with decimals).
    pub disk_gib: f64,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub append: String,
    pub settings: VmSettings,
}

/// Characters a path in `args` may not hold: PVE splits `args` into
/// words as a shell would.
pub fn fit_for_args(path: &std::path::Path) -> Result<&str, String> {
    let text = path
        .to_str()
        .ok_or_else(|| format!("{}: not UTF-8", path.display()))?;
    if text.is_empty()
        || text
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "'\"\\$`;&|<>(){}*?[]#~".contains(c))
    {
        return Err(format!(
            "{text}: a path with spaces, quotes or shell characters cannot go into a VM's args"
        ));
    }
    Ok(text)
}

impl VmSpec {
    /// `qm create`'s arguments.
    pub fn create_args(&self) -> Result<Vec<String>, String> {
        let kernel = fit_for_args(&self.kernel)?;
        let initrd = fit_for_args(&self.initrd)?;
        if self.append.contains(['\'', '"', '\\', '\n']) {
            return Err("a kernel command line with quotes".into());
        }
        let s = &self.settings;
        let mut args: Vec<String> = vec![
            "create".into(),
            self.vmid.to_string(),
            "--name".into(),
            self.name.clone(),
            "--tags".into(),
            "pveprobe".into(),
            "--description".into(),
            "A worker of pveprobe load: it is destroyed with its disks when the run ends.".into(),
            "--onboot".into(),
            "0".into(),
            "--memory".into(),
            s.memory_mib.to_string(),
            "--cores".into(),
            s.cores.to_string(),
            "--scsihw".into(),
            s.scsihw.clone(),
            "--serial0".into(),
            "socket".into(),
            "--vga".into(),
            "none".into(),
            "--args".into(),
            format!(
                "-kernel {kernel} -initrd {initrd} -append '{}'",
                self.append
            ),
        ];
        for i in 0..self.disks {
            let mut disk = format!("{}:{}", self.storage, gib_text(self.disk_gib));
            if s.iothread {
                disk.push_str(",iothread=1");
            }
            disk.push_str(&format!(",cache={}", s.cache));
            if let Some(aio) = &s.aio {
                disk.push_str(&format!(",aio={aio}"));
            }
            args.push(format!("--scsi{i}"));
            args.push(disk);
        }
        Ok(args)
    }
}

/// A size in GiB as PVE's `STORAGE:SIZE` takes it: decimals, no exponent.
fn gib_text(gib: f64) -> String {
    let text = format!("{gib:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `qm create VMID ...`.
pub fn create(spec: &VmSpec) -> Result<(), PveToolError> {
    let args = spec.create_args().map_err(|message| PveToolError::Failed {
        command: format!("qm create {}", spec.vmid),
        status: "not started".into(),
        message,
    })?;
    child::run("qm", &args, &ChildOptions::limit(SLOW).own_group())
        .map_err(|f| PveToolError::of("qm", &args, SLOW, NEEDS, f))
        .map(drop)
}

/// `qm start VMID`.
pub fn start(vmid: u32) -> Result<(), PveToolError> {
    let args = ["start".to_string(), vmid.to_string()];
    child::run("qm", &args, &ChildOptions::limit(QUICK).own_group())
        .map_err(|f| PveToolError::of("qm", &args, QUICK, NEEDS, f))
        .map(drop)
}

/// `qm stop VMID`: powered off at once, as pulling the plug.
pub fn stop(vmid: u32) -> Result<(), PveToolError> {
    let args = ["stop".to_string(), vmid.to_string()];
    child::run("qm", &args, &ChildOptions::limit(QUICK).own_group())
        .map_err(|f| PveToolError::of("qm", &args, QUICK, NEEDS, f))
        .map(drop)
}

/// `qm destroy VMID --purge --destroy-unreferenced-disks 1`: the VM, its
/// disks and every mention of it (backup jobs, HA, replication).
pub fn destroy(vmid: u32) -> Result<(), PveToolError> {
    let args = destroy_args(vmid);
    child::run("qm", &args, &ChildOptions::limit(SLOW).own_group())
        .map_err(|f| PveToolError::of("qm", &args, SLOW, NEEDS, f))
        .map(drop)
}

fn destroy_args(vmid: u32) -> Vec<String> {
    vec![
        "destroy".into(),
        vmid.to_string(),
        "--purge".into(),
        "--destroy-unreferenced-disks".into(),
        "1".into(),
    ]
}

/// The command an admin runs to remove a VM that could not be removed.
pub fn destroy_command(vmid: u32) -> String {
    format!("qm {}", destroy_args(vmid).join(" "))
}

/// `pvesh get /cluster/nextid`: the lowest VMID no guest of the cluster
/// has, or with `from`, whether that one is free (`None` when taken).
pub fn next_id(from: Option<u32>) -> Result<Option<u32>, PveToolError> {
    let mut args: Vec<String> = vec!["get".into(), "/cluster/nextid".into()];
    if let Some(id) = from {
        args.extend(["--vmid".into(), id.to_string()]);
    }
    args.extend(["--output-format".into(), "json".into()]);
    let ran = child::run("pvesh", &args, &ChildOptions::limit(QUICK).own_group())
        .map_err(|f| PveToolError::of("pvesh", &args, QUICK, NEEDS, f));
    let done = match ran {
        Ok(done) => done,
        // "VM 123 already exists" (PVE's answer for a taken VMID).
        Err(PveToolError::Failed { message, .. })
            if from.is_some() && message.contains("already exists") =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let text = String::from_utf8_lossy(&done.stdout);
    parse_next_id(&text)
        .map(Some)
        .ok_or_else(|| PveToolError::Failed {
            command: "pvesh get /cluster/nextid".into(),
            status: done.status_words(),
            message: format!("not a VMID: {}", crate::model::printable(text.trim())),
        })
}

/// pvesh's JSON answer: the VMID as a string (`"105"`) or a number.
fn parse_next_id(text: &str) -> Option<u32> {
    match serde_json::from_str::<serde_json::Value>(text.trim()).ok()? {
        serde_json::Value::String(s) => s.parse().ok(),
        serde_json::Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    }
    .filter(|id| (100..=999_999_999).contains(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> VmSpec {
        VmSpec {
            vmid: 9001,
            name: "pveprobe-load-9001".into(),
            storage: "ceph-vm".into(),
            disks: 2,
            disk_gib: 0.0625,
            kernel: "/boot/vmlinuz-6.8.12-4-pve".into(),
            initrd: "/tmp/pveprobe.abc/worker.img".into(),
            append: "console=ttyS1 panic=-1 quiet -- load-worker".into(),
            settings: VmSettings {
                scsihw: "virtio-scsi-single".into(),
                iothread: true,
                cache: "none".into(),
                aio: None,
                memory_mib: 512,
                cores: 2,
            },
        }
    }

    #[test]
    fn a_worker_is_created_as_pve_takes_it() {
        let args = spec().create_args().unwrap();
        let at = |flag: &str| {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1].as_str()
        };
        assert_eq!(&args[..2], ["create", "9001"]);
        assert_eq!(at("--scsi0"), "ceph-vm:0.0625,iothread=1,cache=none");
        assert_eq!(at("--scsi1"), "ceph-vm:0.0625,iothread=1,cache=none");
        assert!(!args.contains(&"--scsi2".to_string()));
        assert_eq!(at("--serial0"), "socket");
        assert_eq!((at("--tags"), at("--onboot")), ("pveprobe", "0"));
        assert_eq!(
            at("--args"),
            "-kernel /boot/vmlinuz-6.8.12-4-pve -initrd /tmp/pveprobe.abc/worker.img \
             -append 'console=ttyS1 panic=-1 quiet -- load-worker'"
        );
        let mut other = spec();
        other.settings.aio = Some("native".into());
        other.settings.iothread = false;
        other.disk_gib = 32.0;
        let args = other.create_args().unwrap();
        assert!(
            args.contains(&"ceph-vm:32,cache=none,aio=native".to_string()),
            "{args:?}"
        );
        // A path PVE would split, or a shell would read, is refused.
        for bad in ["/boot/my kernel", "/boot/k'1", "/boot/$(reboot)", ""] {
            let mut s = spec();
            s.kernel = bad.into();
            assert!(s.create_args().is_err(), "{bad}");
        }
        assert_eq!(
            destroy_command(9001),
            "qm destroy 9001 --purge --destroy-unreferenced-disks 1"
        );
    }

    #[test]
    fn nextid_reads_pveshs_answer() {
        assert_eq!(parse_next_id("\"105\"\n"), Some(105));
        assert_eq!(parse_next_id("106"), Some(106));
        assert_eq!(parse_next_id("\"99\""), None);
        assert_eq!(parse_next_id("null"), None);
        assert_eq!(parse_next_id("<html>"), None);
        assert_eq!(gib_text(0.5), "0.5");
        assert_eq!(gib_text(10.0), "10");
    }
}
