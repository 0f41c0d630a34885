//! What `qualify` reads to find a device a guest uses: VM and container
//! configs (`guestconf`) and a process's status and cmdline (`procpid`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::guestconf::{self, GuestKind};
use pveprobe_parse::procpid;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for kind in [GuestKind::Vm, GuestKind::Container] {
        let paths = guestconf::guest_paths(&text, kind);
        assert!(paths.len() <= text.lines().count() * text.len().max(1));
        assert!(paths.iter().all(|p| p.path.starts_with('/') && !p.key.is_empty()));
    }
    let args = procpid::cmdline(data);
    assert!(args.iter().all(|a| !a.is_empty()));
    let _ = procpid::qemu_vmid(&args);
    let _ = procpid::lxc_ctid(&args);
    let _ = procpid::ppid(&text);
    let _ = procpid::pidfile_pid(&text);
});
