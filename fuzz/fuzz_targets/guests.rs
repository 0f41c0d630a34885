//! What `qualify` reads to find a device a guest uses: VM and container
//! configs (`guestconf`) and a process's status and cmdline (`procpid`);
//! and what `pveprobe guest` reads of a VM's config (`vmconf`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::guestconf::{self, GuestKind};
use pveprobe_parse::procpid;
use pveprobe_parse::vmconf;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for kind in [GuestKind::Vm, GuestKind::Container] {
        let paths = guestconf::guest_paths(&text, kind);
        assert!(paths.len() <= text.lines().count() * text.len().max(1));
        assert!(paths.iter().all(|p| p.path.starts_with('/') && !p.key.is_empty()));
    }
    let vm = vmconf::parse(&text);
    assert!(vm.drives.len() <= text.lines().count());
    for d in vm.disks() {
        assert!(!d.file.is_empty() && !d.key.is_empty());
        let _ = (d.storage(), d.size_bytes(), d.throttles(), d.cache(), d.aio());
    }
    // The one size and seconds parser (PVE's sizes, every option's).
    let _ = pveprobe_parse::units::size(&text);
    if let Ok(secs) = pveprobe_parse::units::seconds(&text, 0.01, 3600.0) {
        assert!((0.01..=3600.0).contains(&secs));
    }
    let _ = pveprobe_parse::units::size_at_least(&text, 1 << 20);
    let args = procpid::cmdline(data);
    assert!(args.iter().all(|a| !a.is_empty()));
    let _ = procpid::qemu_vmid(&args);
    let _ = procpid::lxc_ctid(&args);
    let _ = procpid::ppid(&text);
    let _ = procpid::pidfile_pid(&text);
    let _ = procpid::start_ticks(&text);
    let _ = pveprobe_parse::vmconf::parse(&text).memory_mib;
    if let Some(st) = procpid::stat(&text) {
        assert_eq!(procpid::stat(&text), Some(st));
    }
});
