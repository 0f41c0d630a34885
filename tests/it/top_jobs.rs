//! `top`'s "what else runs" and its storages: PVE's task list as PVE
//! writes it, with a real process behind the running backup (and a
//! listing whose process is gone); stand-in `zpool`, `ceph` and `lvs` on
//! PATH that print what real systems printed (fixtures/README.md); a real
//! process named `fstrim`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command};

use crate::common::{fixture, pveprobe, stderr, stdout, workdir};

/// A stand-in read-only tool: prints `file` when asked `expect`, else fails.
fn stand_in(bin: &Path, name: &str, expect: &str, file: &Path) {
    let script = format!(
        "#!/bin/sh\nif [ \"$*\" = \"{expect}\" ]; then exec cat '{}'; fi\necho \"{name}: unexpected arguments: $*\" >&2\nexit 2\n",
        file.display()
    );
    let path = bin.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `/proc/PID/stat`'s field 22: the process's start in clock ticks.
pub fn start_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    after.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// Stops the processes the test started, on every way out.
struct Running(Vec<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn top_names_a_backup_a_scrub_a_ceph_recovery_fstrim_and_a_full_thin_pool() {
    let dir = workdir();
    let d = dir.path();
    let bin = d.join("bin");
    let pve = d.join("pve");
    for p in [&bin, &pve, &d.join("qmp"), &d.join("zfs-kstat")] {
        std::fs::create_dir_all(p).unwrap();
    }
    // A backup task whose process runs (a sleep stands in for vzdump's
    // worker), one whose process has gone, and the ended ones of a real list.
    let sleep = std::fs::read("/bin/sleep").unwrap();
    let fstrim = bin.join("fstrim");
    std::fs::write(&fstrim, &sleep).unwrap();
    std::fs::set_permissions(&fstrim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut running = Running(Vec::new());
    running
        .0
        .push(Command::new("sleep").arg("60").spawn().unwrap());
    running
        .0
        .push(Command::new(&fstrim).arg("60").spawn().unwrap());
    let worker = running.0[0].id();
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let ended = std::fs::read_to_string(fixture("pve/tasks-active/vzdump-running.txt")).unwrap();
    let active = format!(
        "UPID:pve1:{worker:08X}:{:08X}:6751A2C0:vzdump:104:root@pam: 1\n\
         UPID:pve1:{gone_pid:08X}:{:08X}:6751A2C0:qmigrate:105:root@pam: 1\n{}",
        start_ticks(worker),
        start_ticks(worker),
        ended.lines().skip(1).collect::<Vec<_>>().join("\n")
    );
    std::fs::write(d.join("active"), active).unwrap();
    // A ZFS scrub, a Ceph recovery, a thin pool 97% full: as real systems printed them.
    stand_in(
        &bin,
        "zpool",
        "status",
        &fixture("zfs-status/scrub-2.2.txt"),
    );
    std::fs::write(pve.join("ceph.conf"), "[global]\n").unwrap();
    stand_in(
        &bin,
        "ceph",
        &format!(
            "-c {} --connect-timeout 10 status -f json",
            pve.join("ceph.conf").display()
        ),
        &fixture("ceph/pacific/status-recovering.json"),
    );
    stand_in(
        &bin,
        "lvs",
        "--separator : --noheadings --units b --nosuffix --options vg_name,lv_name,lv_attr,data_percent,metadata_percent",
        &fixture("lvm/lvs-pve-data-97.txt"),
    );
    std::fs::write(
        pve.join("storage.cfg"),
        "lvmthin: local-lvm\n\tthinpool data\n\tvgname pve\n\tcontent rootdir,images\n",
    )
    .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    // top on the stand-in node: its sockets, configs, task list and ZFS.
    let top = |args: &[&str]| {
        pveprobe()
            .arg("top")
            .args(args)
            .arg("--qmp-dir")
            .arg(d.join("qmp"))
            .arg("--pve-dir")
            .arg(&pve)
            .arg("--tasks-file")
            .arg(d.join("active"))
            .arg("--replication-state")
            .arg(d.join("no-replication"))
            .arg("--zfs-kstat")
            .arg(d.join("zfs-kstat"))
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let out = top(&[
        "--count",
        "2",
        "--interval",
        "0.5",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let jobs: Vec<(String, String)> = last["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["kind"].as_str().unwrap().to_string(),
                j["what"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let has = |k: &str, w: &str| jobs.iter().any(|(a, b)| a == k && b == w);
    assert!(has("backup", "guest 104"), "{jobs:?}");
    assert!(has("scrub", "pool backup2"), "{jobs:?}");
    assert!(has("ceph recovery", "Ceph"), "{jobs:?}");
    assert!(has("fstrim", "filesystems"), "{jobs:?}");
    // The migration's process is gone and the other tasks ended: not running.
    assert!(!jobs.iter().any(|(k, _)| k == "migration"), "{jobs:?}");
    assert_eq!(jobs.len(), 4, "{jobs:?}");
    let st = &last["storages"][0];
    assert_eq!(st["id"], "local-lvm");
    assert_eq!(st["used_pct"], 97.33);
    let hints: Vec<&str> = last["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["code"].as_str())
        .collect();
    assert!(hints.contains(&"top-storage-near-full"), "{hints:?}");

    // The view says them too.
    let view = stdout(&top(&["--count", "1", "--interval", "0.3"]));
    for want in [
        "ALSO RUNNING",
        "backup          guest 104",
        "scrub           pool backup2            34.8% done",
        "local-lvm",
        "97.3% used",
    ] {
        assert!(view.contains(want), "{want:?} in\n{view}");
    }
}

#[test]
fn csv_appended_keeps_one_header_and_a_file_with_another_is_refused() {
    let dir = workdir();
    let out_file = dir.path().join("top.csv");
    let top = || {
        pveprobe()
            .args([
                "top",
                "--count",
                "1",
                "--interval",
                "0.2",
                "--output-format",
                "csv",
            ])
            .arg("--qmp-dir")
            .arg(dir.path())
            .arg("--pve-dir")
            .arg(dir.path())
            .arg("--output")
            .arg(&out_file)
            .arg("--append")
            .output()
            .unwrap()
    };
    for _ in 0..2 {
        let out = top();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&out_file).unwrap();
    let header = text.lines().next().unwrap().to_string();
    assert!(header.starts_with("timestamp,"), "{text}");
    assert_eq!(text.lines().filter(|l| **l == *header).count(), 1, "{text}");
    // Each run's rows (its busy disks, if any) under it, in its columns.
    let columns = header.split(',').count();
    assert!(
        text.lines().all(|l| l.split(',').count() == columns),
        "{text}"
    );
    // Another command's CSV: refused before sampling, the file untouched.
    std::fs::write(&out_file, "hostname,cpu_bogomips\npve1,1.0\n").unwrap();
    let out = top();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&out_file).unwrap(),
        "hostname,cpu_bogomips\npve1,1.0\n"
    );
    assert!(stdout(&out).is_empty());
}
