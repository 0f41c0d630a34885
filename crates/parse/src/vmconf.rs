//! A VM's config as the VM runs with it (`qemu-server/VMID.conf`, the
//! current section only: not a snapshot's `[NAME]`, not `[PENDING]`): its
//! attached drives with their options, the SCSI controller and the guest
//! agent, as `pveprobe guest` reads them against the figures.
//!
//! The rules are PVE's (`PVE/QemuServer/Drive.pm`, `PVE/QemuServer.pm`):
//! a drive string is comma-separated `key=value` parts whose first part
//! without a `=` is `file`; `agent`'s first such part is `enabled`; sizes
//! carry a K, M, G or T suffix in powers of 1024; `scsihw` defaults to
//! `lsi`. `unused` disks are attached to nothing and are not drives.

use std::collections::BTreeMap;

/// The bus a drive key puts the disk on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bus {
    Ide,
    Sata,
    Scsi,
    Virtio,
    Efidisk,
    Tpmstate,
}

impl Bus {
    fn of_key(key: &str) -> Option<Bus> {
        let table = [
            ("ide", Bus::Ide),
            ("sata", Bus::Sata),
            ("scsi", Bus::Scsi),
            ("virtio", Bus::Virtio),
            ("efidisk", Bus::Efidisk),
            ("tpmstate", Bus::Tpmstate),
        ];
        table.into_iter().find_map(|(prefix, bus)| {
            let n = key.strip_prefix(prefix)?;
            (!n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit())).then_some(bus)
        })
    }
}

/// One attached drive: `scsi0: local-lvm:vm-100-disk-0,iothread=1,size=32G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drive {
    /// `scsi0`.
    pub key: String,
    pub bus: Bus,
    /// `file`: a storage's volume (`local-lvm:vm-100-disk-0`), a path
    /// (`/dev/disk/by-id/...`) or `none` (an empty CD drive).
    pub file: String,
    /// Every other part, as written (`cache` -> `writeback`).
    pub options: BTreeMap<String, String>,
}

/// The I/O limits a drive string can set, by PVE's option names.
pub const THROTTLES: [&str; 6] = ["iops", "iops_rd", "iops_wr", "mbps", "mbps_rd", "mbps_wr"];

impl Drive {
    fn option(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.option(key), Some("1" | "on" | "yes" | "true"))
    }

    /// A CD drive (`media=cdrom`), with or without an ISO in it.
    pub fn is_cdrom(&self) -> bool {
        self.option("media") == Some("cdrom")
    }

    /// The storage ID of a storage's volume (`local-lvm`); None for a path
    /// or `none`.
    pub fn storage(&self) -> Option<&str> {
        if self.file.starts_with('/') {
            return None;
        }
        let (storage, volume) = self.file.split_once(':')?;
        (!storage.is_empty() && !volume.is_empty()).then_some(storage)
    }

    /// `cache`: none when unset (PVE's default).
    pub fn cache(&self) -> &str {
        self.option("cache").unwrap_or("none")
    }

    /// `aio` as written; None is PVE's default (io_uring, or threads where
    /// io_uring does not serve the cache mode and storage).
    pub fn aio(&self) -> Option<&str> {
        self.option("aio")
    }

    pub fn iothread(&self) -> bool {
        self.flag("iothread")
    }

    /// `discard=on` (`ignore`, the default, drops the guest's discards).
    pub fn discard(&self) -> bool {
        self.option("discard") == Some("on")
    }

    pub fn ssd(&self) -> bool {
        self.flag("ssd")
    }

    pub fn serial(&self) -> Option<&str> {
        self.option("serial")
    }

    /// `size=32G` in bytes.
    pub fn size_bytes(&self) -> Option<u64> {
        crate::units::size(self.option("size")?).ok()
    }

    /// The limits set (`iops_wr` -> 500), by their option names; `_max`
    /// bursts and their lengths are not limits of a sustained figure.
    pub fn throttles(&self) -> Vec<(&'static str, f64)> {
        THROTTLES
            .iter()
            .filter_map(|&k| Some((k, self.option(k)?.parse::<f64>().ok()?)))
            .filter(|(_, v)| *v > 0.0)
            .collect()
    }
}

/// `agent`: `1`, `0`, `enabled=1,fstrim_cloned_disks=1,type=virtio`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agent {
    pub enabled: bool,
    /// `type`: virtio (default) or isa.
    pub kind: Option<String>,
}

/// The current section of a VM's config, as far as `pveprobe guest` reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmConfig {
    pub name: Option<String>,
    /// `ostype`: l26, win11, other...
    pub ostype: Option<String>,
    /// `scsihw` as written; None means PVE's default, `lsi`.
    pub scsihw: Option<String>,
    pub agent: Agent,
    /// `lock`: backup, migrate, snapshot... (a VM in such a state is not measured).
    pub lock: Option<String>,
    /// `memory: [current=]MiB` (qemu-server 9.2's `PVE/QemuServer/Memory.pm`:
    /// a property string whose default key is `current`), when set and
    /// a number.
    pub memory_mib: Option<u64>,
    /// The attached drives, in the file's order.
    pub drives: Vec<Drive>,
}

/// qemu-server's memory when the config names none, MiB.
pub const DEFAULT_MEMORY_MIB: u64 = 512;

impl VmConfig {
    /// `scsihw`, PVE's default filled in.
    pub fn scsi_controller(&self) -> &str {
        self.scsihw.as_deref().unwrap_or("lsi")
    }

    /// The drives that are disks (not CD drives, not EFI vars or TPM state).
    pub fn disks(&self) -> impl Iterator<Item = &Drive> {
        self.drives.iter().filter(|d| {
            !d.is_cdrom() && matches!(d.bus, Bus::Ide | Bus::Sata | Bus::Scsi | Bus::Virtio)
        })
    }
}

/// `key=value` parts of a property string; the first bare part is `default`'s.
fn properties(value: &str, default: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (i, part) in value.split(',').map(str::trim).enumerate() {
        if part.is_empty() {
            continue;
        }
        match part.split_once('=') {
            Some((k, v)) => {
                out.insert(k.trim().to_string(), v.trim().to_string());
            }
            None if i == 0 => {
                out.insert(default.to_string(), part.to_string());
            }
            None => {}
        }
    }
    out
}

/// The current section of `text`, a VM's config.
pub fn parse(text: &str) -> VmConfig {
    let mut vm = VmConfig::default();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            break; // the first snapshot or [PENDING]: the current config ends.
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "name" => vm.name = Some(value.to_string()),
            "ostype" => vm.ostype = Some(value.to_string()),
            "scsihw" => vm.scsihw = Some(value.to_string()),
            "lock" => vm.lock = Some(value.to_string()),
            "memory" => {
                vm.memory_mib = properties(value, "current")
                    .get("current")
                    .and_then(|v| v.parse().ok());
            }
            "agent" => {
                let mut props = properties(value, "enabled");
                vm.agent = Agent {
                    enabled: matches!(
                        props.get("enabled").map(String::as_str),
                        Some("1" | "on" | "yes" | "true")
                    ),
                    kind: props.remove("type"),
                };
            }
            key => {
                if let Some(bus) = Bus::of_key(key) {
                    let mut options = properties(value, "file");
                    // A drive with no volume is no drive (PVE refuses it).
                    if let Some(file) = options.remove("file").filter(|f| !f.is_empty()) {
                        vm.drives.push(Drive {
                            key: key.to_string(),
                            bus,
                            file,
                            options,
                        });
                    }
                }
            }
        }
    }
    vm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drive_with_an_empty_volume_is_no_disk() {
        // Found by the `guests` fuzz target: `file=` with nothing after it.
        let vm = parse(
            "scsi0: local-lvm:vm-100-disk-0,size=32G\nscsi2: file=,size=/dev/disk/x\nvirtio1: ,cache=none\n",
        );
        let keys: Vec<&str> = vm.disks().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["scsi0"]);
    }

    #[test]
    fn memory_is_a_number_or_its_current_key() {
        // qemu-server's forms: a plain number, and since PVE 8.1 a
        // property string with `current` as its default key.
        for (line, mib) in [
            ("memory: 4096", Some(4096)),
            ("memory: current=16384", Some(16384)),
            ("memory: lots", None),
            ("name: x", None),
        ] {
            assert_eq!(parse(line).memory_mib, mib, "{line}");
        }
    }

    fn fixture(name: &str) -> VmConfig {
        parse(&crate::testutil::fixture("pve/vm-conf", name))
    }

    #[test]
    fn every_fixture_is_read() {
        assert_eq!(
            crate::testutil::fixture_names("pve/vm-conf"),
            [
                "aio.conf",
                "ide.conf",
                "qga-minimal.conf",
                "scsihw-lsi.conf",
                "scsihw-virtio-scsi-single.conf",
                "simple-lvmthin.conf",
                "simple-virtio-blk.conf",
                "snapshots.conf",
            ]
        );
    }

    #[test]
    fn aio_modes_and_storages_of_qemu_servers_own_test() {
        let vm = fixture("aio.conf");
        assert_eq!(vm.drives.len(), 14);
        let aio: Vec<Option<&str>> = vm.drives.iter().take(4).map(Drive::aio).collect();
        assert_eq!(
            aio,
            [Some("threads"), Some("native"), Some("io_uring"), None]
        );
        assert_eq!(vm.drives[0].storage(), Some("local"));
        assert_eq!(vm.drives[0].file, "local:8006/vm-8006-disk-0.raw");
        assert_eq!(vm.drives[8].cache(), "writeback");
        assert_eq!(vm.drives[12].storage(), Some("lvm-store"));
        assert!(vm.drives.iter().all(Drive::discard));
        assert_eq!(vm.drives[0].size_bytes(), Some(104858 * 1024));
        assert_eq!(vm.scsi_controller(), "lsi");
        assert!(!vm.agent.enabled);
    }

    #[test]
    fn virtio_blk_with_an_iothread_and_a_cd_drive_that_is_no_disk() {
        let vm = fixture("simple-virtio-blk.conf");
        assert_eq!(vm.ostype.as_deref(), Some("l26"));
        let disks: Vec<&str> = vm.disks().map(|d| d.key.as_str()).collect();
        assert_eq!(disks, ["virtio0"]);
        let d = vm.disks().next().unwrap();
        assert_eq!(d.bus, Bus::Virtio);
        assert!(d.iothread());
        assert_eq!(
            vm.drives.iter().find(|d| d.key == "ide2").unwrap().file,
            "none"
        );
    }

    #[test]
    fn the_controller_as_set_and_its_default() {
        assert_eq!(fixture("scsihw-lsi.conf").scsi_controller(), "lsi");
        assert_eq!(
            fixture("scsihw-virtio-scsi-single.conf").scsi_controller(),
            "virtio-scsi-single"
        );
        assert_eq!(
            fixture("simple-lvmthin.conf").scsi_controller(),
            "virtio-scsi-pci"
        );
        let lsi = fixture("scsihw-lsi.conf");
        let caches: Vec<&str> = lsi.drives.iter().map(Drive::cache).collect();
        assert_eq!(
            caches,
            [
                "none",
                "writeback",
                "writethrough",
                "directsync",
                "directsync"
            ]
        );
    }

    #[test]
    fn the_agent_in_both_spellings() {
        assert!(fixture("qga-minimal.conf").agent.enabled);
        let vm = parse("agent: enabled=1,fstrim_cloned_disks=1,type=isa\n");
        assert_eq!(
            vm.agent,
            Agent {
                enabled: true,
                kind: Some("isa".into())
            }
        );
        assert!(!parse("agent: 0\n").agent.enabled);
        assert!(!parse("agent: enabled=0,type=virtio\n").agent.enabled);
    }

    #[test]
    fn only_the_current_section_counts() {
        let vm = fixture("snapshots.conf");
        let keys: Vec<&str> = vm.drives.iter().map(|d| d.key.as_str()).collect();
        // unused0 is no drive; the snapshots' sections are not read.
        assert_eq!(keys, ["ide0", "ide1", "ide2", "scsi0", "scsi1", "virtio0"]);
        let disks: Vec<&str> = vm.disks().map(|d| d.key.as_str()).collect();
        assert_eq!(disks, ["ide0", "scsi0", "scsi1", "virtio0"]);
        assert_eq!(vm.scsi_controller(), "virtio-scsi-single");
        assert_eq!(vm.ostype.as_deref(), Some("win10"));
        assert_eq!(vm.drives[4].size_bytes(), Some(32 << 30));
        assert_eq!(vm.name.as_deref(), Some("win-machine-ver"));
    }

    #[test]
    fn cd_drives_of_ides_test_are_no_disks() {
        let vm = fixture("ide.conf");
        assert_eq!(vm.drives.iter().filter(|d| d.is_cdrom()).count(), 4);
        let disks: Vec<&str> = vm.disks().map(|d| d.key.as_str()).collect();
        assert_eq!(disks, ["scsi0"]);
    }

    #[test]
    fn throttles_sizes_and_flags() {
        let vm = parse(
            "scsi1: /dev/disk/by-id/ata-X,iops_wr=500,mbps_rd=200.5,iops_rd_max=900,ssd=1,serial=abc,discard=ignore\n",
        );
        let d = &vm.drives[0];
        assert_eq!(d.throttles(), [("iops_wr", 500.0), ("mbps_rd", 200.5)]);
        assert_eq!(d.storage(), None);
        assert!(d.ssd());
        assert!(!d.discard());
        assert_eq!(d.serial(), Some("abc"));
        // Not drive keys: too many digits, no digits, another prefix.
        assert!(
            parse("scsi123: local:x\nscsi: local:y\nunused0: local:z\nnet0: virtio=AA\n")
                .drives
                .is_empty()
        );
    }
}
