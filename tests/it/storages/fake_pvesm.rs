//! The fake `pvesm` (tests/fake/pvesm) and its rig (tests/it/common/pve.rs):
//! the output formats of the real one, volumes that are real loop devices
//! of the size asked for, failures that leave the state as it was, and a
//! rig that cleans up what a test leaves behind. Needs root (loop devices,
//! mounts); skips with a message otherwise.

use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::pve::{FakePve, backing_file, loop_devices_under};
use crate::common::{root_or_skip, sh, stderr, stdout};

const STORAGE_CFG: &str = "dir: local\n\tpath /var/lib/vz\n\tcontent iso,vztmpl,backup\n\n\
    lvmthin: local-lvm\n\tthinpool data\n\tvgname pve\n\tcontent rootdir,images\n";

/// A rig with storages `local` (dir) and `local-lvm` (lvmthin).
fn rig() -> FakePve {
    let fake = FakePve::new(STORAGE_CFG);
    fake.set_status(&[
        ("local", "dir", "active", 98497780, 4456684, 89004548),
        (
            "local-lvm",
            "lvmthin",
            "active",
            100000000,
            25000000,
            75000000,
        ),
    ]);
    fake
}

/// Runs tests/fake/pvesm itself with the rig's environment.
fn pvesm(fake: &FakePve, args: &[&str]) -> Output {
    fake.env(&mut Command::new(FakePve::script()))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs the fake and asserts it succeeded; returns its stdout.
fn pvesm_ok(fake: &FakePve, args: &[&str]) -> String {
    let out = pvesm(fake, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "pvesm {args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Runs the fake and asserts it failed as pvesm does (255, nothing on
/// stdout); returns its stderr.
fn pvesm_fails(fake: &FakePve, args: &[&str]) -> String {
    let out = pvesm(fake, args);
    assert_eq!(
        out.status.code(),
        Some(255),
        "pvesm {args:?} should fail: {}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout(&out), "", "pvesm {args:?}");
    stderr(&out)
}

fn size_of(dev: &str) -> u64 {
    sh("blockdev", &["--getsize64", dev]).parse().unwrap()
}

fn image(fake: &FakePve, storage: &str, name: &str) -> PathBuf {
    fake.state_dir()
        .join("images")
        .join(storage)
        .join(format!("{name}.raw"))
}

fn link(fake: &FakePve, storage: &str, name: &str) -> PathBuf {
    fake.state_dir().join("dev").join(storage).join(name)
}

/// The device the fake recorded for a volume.
fn recorded_device(fake: &FakePve, storage: &str, name: &str) -> String {
    std::fs::read_to_string(fake.state_dir().join("volumes").join(storage).join(name))
        .unwrap()
        .trim()
        .to_string()
}

/// The source of the mount on `dir`, if something is mounted there.
fn mounted_on(dir: &Path) -> Option<String> {
    let out = Command::new("findmnt")
        .args(["-n", "-o", "SOURCE", "--mountpoint"])
        .arg(dir)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| stdout(&out).trim().to_string())
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Asserts the volume exists as alloc leaves it: the image of `bytes`
/// bytes, its loop device, the symlink to it, the record; returns the
/// device.
fn assert_volume(fake: &FakePve, storage: &str, name: &str, bytes: u64) -> String {
    let volid = format!("{storage}:{name}");
    assert!(fake.volumes().contains(&volid), "{:?}", fake.volumes());
    let dev = recorded_device(fake, storage, name);
    assert!(
        fake.loop_devices().contains(&dev),
        "{:?}",
        fake.loop_devices()
    );
    assert_eq!(backing_file(&dev).unwrap(), image(fake, storage, name));
    assert_eq!(
        std::fs::read_link(link(fake, storage, name)).unwrap(),
        Path::new(&dev)
    );
    assert!(
        std::fs::metadata(&dev)
            .unwrap()
            .file_type()
            .is_block_device()
    );
    assert_eq!(
        std::fs::metadata(image(fake, storage, name)).unwrap().len(),
        bytes
    );
    assert_eq!(size_of(&dev), bytes);
    // pvesm path: the symlink, which resolves to the device.
    let path = pvesm_ok(fake, &["path", &volid]);
    assert_eq!(path, format!("{}\n", link(fake, storage, name).display()));
    assert_eq!(std::fs::canonicalize(path.trim()).unwrap(), Path::new(&dev));
    assert_eq!(size_of(path.trim()), bytes);
    dev
}

/// Asserts nothing of the volume is left: no device, symlink, record or
/// image.
fn assert_no_volume(fake: &FakePve, storage: &str, name: &str, dev: Option<&str>) {
    let volid = format!("{storage}:{name}");
    assert!(!fake.volumes().contains(&volid), "{:?}", fake.volumes());
    assert!(!image(fake, storage, name).exists());
    assert!(link(fake, storage, name).symlink_metadata().is_err());
    if let Some(dev) = dev {
        assert_ne!(
            backing_file(dev),
            Some(image(fake, storage, name)),
            "{dev} still attached"
        );
    }
}

/// Allocates, checks and frees a volume of `size` (pvesm's syntax).
fn alloc_and_free(size: &str, bytes: u64) {
    let fake = rig();
    let name = "vm-100-disk-0";
    let out = pvesm_ok(&fake, &["alloc", "local-lvm", "100", name, size]);
    assert_eq!(out, format!("successfully created 'local-lvm:{name}'\n"));
    let dev = assert_volume(&fake, "local-lvm", name, bytes);
    let out = pvesm_ok(&fake, &["free", &format!("local-lvm:{name}")]);
    assert_eq!(out, format!("Removed volume 'local-lvm:{name}'\n"));
    assert_no_volume(&fake, "local-lvm", name, Some(&dev));
    assert_eq!(fake.loop_devices(), Vec::<String>::new());
}

#[test]
fn status_prints_the_header_and_a_row_per_storage() {
    let fake = FakePve::new(STORAGE_CFG);
    // No storage: the header alone, the name column one wide.
    assert_eq!(
        pvesm_ok(&fake, &["status"]),
        "Name       Type     Status     Total (KiB)      Used (KiB) Available (KiB)        %\n"
    );
    fake.set_status(&[
        (
            "local-lvm",
            "lvmthin",
            "active",
            100000000,
            25000000,
            75000000,
        ),
        ("local", "dir", "active", 98497780, 4456684, 89004548),
        ("nfs", "nfs", "disabled", 0, 0, 0),
        ("zz", "lvm", "inactive", 0, 0, 0),
    ]);
    // Sorted by name; the widths and percentages of pvesm.pm's printf.
    assert_eq!(
        pvesm_ok(&fake, &["status"]),
        "\
Name             Type     Status     Total (KiB)      Used (KiB) Available (KiB)        %
local             dir     active        98497780         4456684        89004548    4.52%
local-lvm     lvmthin     active       100000000        25000000        75000000   25.00%
nfs               nfs   disabled               0               0               0      N/A
zz                lvm   inactive               0               0               0    0.00%
"
    );
    assert_eq!(
        pvesm_ok(&fake, &["status", "--storage", "local"]),
        "\
Name         Type     Status     Total (KiB)      Used (KiB) Available (KiB)        %
local         dir     active        98497780         4456684        89004548    4.52%
"
    );
    let err = pvesm_fails(&fake, &["status", "--storage", "nope"]);
    assert!(
        err.starts_with("400 Parameter verification failed.\nstorage: No such storage.\n"),
        "{err}"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn alloc_of_4m_is_a_4_mib_block_device() {
    if !root_or_skip() {
        return;
    }
    alloc_and_free("4M", 4 << 20);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn alloc_of_a_bare_number_is_kib() {
    if !root_or_skip() {
        return;
    }
    alloc_and_free("4096", 4 << 20);
    alloc_and_free("8", 8 << 10);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn alloc_of_1g_is_sparse() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "1G"]);
    let dev = assert_volume(&fake, "local-lvm", "vm-100-disk-0", 1 << 30);
    let blocks = std::fs::metadata(image(&fake, "local-lvm", "vm-100-disk-0"))
        .unwrap()
        .blocks();
    assert!(blocks * 512 < 1 << 20, "{blocks} blocks allocated");
    pvesm_ok(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    assert_no_volume(&fake, "local-lvm", "vm-100-disk-0", Some(&dev));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn alloc_failures_leave_nothing() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    let cases: [(&[&str], &str); 7] = [
        (
            &["alloc", "nope", "100", "vm-100-disk-0", "4M"],
            "storage 'nope' does not exist\n",
        ),
        (
            &["alloc", "local-lvm", "100", "vm-101-disk-0", "4M"],
            "illegal name 'vm-101-disk-0' - should be 'vm-100-*'\n",
        ),
        (
            &["alloc", "local-lvm", "100", "disk-0", "4M"],
            "illegal name 'disk-0' - should be 'vm-100-*'\n",
        ),
        (
            &["alloc", "local-lvm", "100", "vm-100-../../x", "4M"],
            "lvm name 'vm-100-../../x' contains illegal characters\n",
        ),
        (
            &["alloc", "local-lvm", "99", "vm-99-disk-0", "4T"],
            "400 Parameter verification failed.\n\
             vmid: invalid format - value does not look like a valid VM ID\n\
             size: value does not match the regex pattern\n",
        ),
        (
            &["alloc", "local-lvm", "100", "vm-100-disk-0"],
            "400 not enough arguments\n",
        ),
        // pvesm takes M and G only: a K size is a usage error.
        (
            &["alloc", "local-lvm", "100", "vm-100-disk-0", "4K"],
            "400 Parameter verification failed.\nsize: value does not match the regex pattern\n",
        ),
    ];
    for (args, message) in cases {
        let err = pvesm_fails(&fake, args);
        assert!(err.starts_with(message), "{args:?}: {err}");
    }
    fake.fail("alloc", "lvcreate 'pve/vm-100-disk-0' error: out of space");
    let err = pvesm_fails(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    assert_eq!(err, "lvcreate 'pve/vm-100-disk-0' error: out of space\n");
    assert_eq!(fake.volumes(), Vec::<String>::new());
    assert_eq!(fake.loop_devices(), Vec::<String>::new());
    assert_no_volume(&fake, "local-lvm", "vm-100-disk-0", None);
    let images = fake.state_dir().join("images/local-lvm");
    if images.exists() {
        assert_eq!(std::fs::read_dir(&images).unwrap().count(), 0);
    }
    // Cleared, the same call works.
    fake.clear_fail("alloc");
    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    assert_eq!(fake.volumes(), ["local-lvm:vm-100-disk-0"]);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn alloc_of_an_existing_volume_fails_and_keeps_it() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    let dev = assert_volume(&fake, "local-lvm", "vm-100-disk-0", 4 << 20);
    let err = pvesm_fails(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "8M"]);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(
        assert_volume(&fake, "local-lvm", "vm-100-disk-0", 4 << 20),
        dev
    );
    assert_eq!(fake.loop_devices(), std::slice::from_ref(&dev));
    // The same name on another storage is another volume.
    pvesm_ok(&fake, &["alloc", "local", "100", "vm-100-disk-0", "4M"]);
    assert_volume(&fake, "local", "vm-100-disk-0", 4 << 20);
    assert_eq!(
        fake.volumes(),
        ["local-lvm:vm-100-disk-0", "local:vm-100-disk-0"]
    );
    assert_eq!(fake.loop_devices().len(), 2);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn free_failures_leave_the_volume() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    let err = pvesm_fails(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    assert!(err.contains("Failed to find logical volume"), "{err}");
    let err = pvesm_fails(&fake, &["free", "nope:vm-100-disk-0"]);
    assert_eq!(err, "storage 'nope' does not exist\n");
    let err = pvesm_fails(&fake, &["free", "vm-100-disk-0"]);
    assert_eq!(err, "unable to parse volume ID 'vm-100-disk-0'\n");
    let err = pvesm_fails(&fake, &["path", "local-lvm:vm-100-disk-0"]);
    assert!(err.contains("no such volume"), "{err}");

    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    fake.fail("free", "lvremove 'pve/vm-100-disk-0' error: busy");
    let err = pvesm_fails(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    assert_eq!(err, "lvremove 'pve/vm-100-disk-0' error: busy\n");
    let dev = assert_volume(&fake, "local-lvm", "vm-100-disk-0", 4 << 20);
    fake.clear_fail("free");
    pvesm_ok(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    assert_no_volume(&fake, "local-lvm", "vm-100-disk-0", Some(&dev));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn free_refuses_a_device_held_open() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    let dev = recorded_device(&fake, "local-lvm", "vm-100-disk-0");
    let held = std::fs::File::open(&dev).unwrap();
    // As lvremove refuses an open LV.
    let err = pvesm_fails(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    assert!(err.contains("in use"), "{err}");
    assert_volume(&fake, "local-lvm", "vm-100-disk-0", 4 << 20);
    drop(held);
    pvesm_ok(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    assert_no_volume(&fake, "local-lvm", "vm-100-disk-0", Some(&dev));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn path_override_is_printed_instead() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    fake.override_path("/dev/sda");
    assert_eq!(
        pvesm_ok(&fake, &["path", "local-lvm:vm-100-disk-0"]),
        "/dev/sda\n"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn mount_on_alloc_mounts_and_free_unmounts() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    fake.mount_on_alloc();
    pvesm_ok(
        &fake,
        &["alloc", "local-lvm", "100", "vm-100-disk-0", "16M"],
    );
    let dev = assert_volume(&fake, "local-lvm", "vm-100-disk-0", 16 << 20);
    let mount = fake.mount_point("vm-100-disk-0");
    assert_eq!(mounted_on(&mount), Some(dev.clone()));
    // In use: an exclusive open is refused.
    let err = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(link(&fake, "local-lvm", "vm-100-disk-0"))
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EBUSY), "{err}");
    pvesm_ok(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    assert_eq!(mounted_on(&mount), None);
    assert!(!mount.exists());
    assert_no_volume(&fake, "local-lvm", "vm-100-disk-0", Some(&dev));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn calls_log_records_every_call() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    pvesm_ok(&fake, &["status", "--storage", "local-lvm"]);
    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    pvesm_fails(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    pvesm_ok(&fake, &["path", "local-lvm:vm-100-disk-0"]);
    pvesm_ok(&fake, &["free", "local-lvm:vm-100-disk-0"]);
    pvesm_fails(&fake, &["list", "local"]);
    pvesm_fails(&fake, &[]);
    let calls = fake.calls();
    let want: Vec<Vec<&str>> = vec![
        vec!["status", "--storage", "local-lvm"],
        vec!["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"],
        vec!["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"],
        vec!["path", "local-lvm:vm-100-disk-0"],
        vec!["free", "local-lvm:vm-100-disk-0"],
        vec!["list", "local"],
        vec![],
    ];
    assert_eq!(calls, want);
}

#[test]
fn other_commands_print_the_usage() {
    let fake = rig();
    let err = pvesm_fails(&fake, &["list", "local"]);
    assert!(
        err.starts_with(
            "ERROR: unknown command 'pvesm list'\nUSAGE: pvesm <COMMAND> [ARGS] [OPTIONS]\n"
        ),
        "{err}"
    );
    let err = pvesm_fails(&fake, &[]);
    assert!(err.starts_with("ERROR: no command specified\n"), "{err}");
    // Without its state directory the fake refuses to run at all.
    let out = Command::new(FakePve::script())
        .arg("status")
        .env_remove(crate::common::pve::STATE_ENV)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(255));
    assert!(
        stderr(&out).contains("PVEPROBE_FAKE_PVESM_DIR is not set"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_rig_sets_up_etc_pve_and_path() {
    let fake = rig();
    let read = |name: &str| std::fs::read_to_string(fake.pve_dir().join(name)).unwrap();
    assert_eq!(read("storage.cfg"), STORAGE_CFG);
    assert_eq!(read(".vmlist"), r#"{"version":1,"ids":{}}"#);
    fake.set_vmlist(r#"{"version":1,"ids":{"100":{"node":"pve","type":"qemu","version":1}}}"#);
    assert!(read(".vmlist").contains("\"100\""));
    // `pvesm` on the PATH of any command is the fake, with its state.
    let out = fake
        .env(&mut Command::new("sh"))
        .args([
            "-c",
            "command -v pvesm; printf '%s\\n' \"$PVEPROBE_FAKE_PVESM_DIR\"; pvesm status",
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    let mut lines = text.lines();
    let found = lines.next().unwrap();
    assert_eq!(
        std::fs::canonicalize(found).unwrap(),
        std::fs::canonicalize(FakePve::script()).unwrap()
    );
    assert_eq!(lines.next().unwrap(), fake.state_dir().to_str().unwrap());
    assert!(lines.next().unwrap().starts_with("Name "), "{text}");
    assert_eq!(fake.calls(), [["status"]]);
    // The probe's command has the same environment and no arguments.
    let cmd = fake.command();
    assert_eq!(cmd.get_args().count(), 0);
    let envs: Vec<_> = cmd.get_envs().collect();
    assert!(
        envs.iter().any(|(k, v)| *k == "PATH"
            && v.unwrap().to_str().unwrap().starts_with(&format!(
                "{}:",
                fake.state_dir().parent().unwrap().join("bin").display()
            ))),
        "{envs:?}"
    );
    assert!(
        envs.iter().any(|(k, v)| *k == crate::common::pve::STATE_ENV
            && *v == Some(fake.state_dir().as_os_str())),
        "{envs:?}"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn drop_cleans_up_what_a_test_left() {
    if !root_or_skip() {
        return;
    }
    let fake = rig();
    pvesm_ok(&fake, &["alloc", "local-lvm", "100", "vm-100-disk-0", "4M"]);
    fake.mount_on_alloc();
    pvesm_ok(
        &fake,
        &["alloc", "local-lvm", "100", "vm-100-disk-1", "16M"],
    );
    let state = fake.state_dir().to_path_buf();
    let mount = fake.mount_point("vm-100-disk-1");
    let devices = fake.loop_devices();
    assert_eq!(devices.len(), 2, "{devices:?}");
    assert!(mounted_on(&mount).is_some());
    drop(fake);
    assert_eq!(mounted_on(&mount), None);
    // A detach can finish a moment later (udev may still have it open);
    // the device itself may already serve another test.
    wait_until("the loop devices detached", || {
        loop_devices_under(&state).is_empty()
    });
    assert!(!state.exists());
}
