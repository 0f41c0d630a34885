//! Hostile and odd input: PATHs with newlines, quotes, `$(...)` and a
//! leading `-`; symlinks; procfs, sysfs, tmpfs, overlay and NFS-like
//! sources; a PATH whose parent another user can write, raced by that user;
//! resolv.conf files that are binary, huge, scoped or invalid; name servers
//! that answer garbage, truncated packets, wrong ids or from another
//! address; and cpuinfo, mountinfo, sysfs and zpool output that are
//! truncated, huge or malformed (through --sysroot and a fake zpool).
//! Tests that need root (mounts, port 53, another user) skip otherwise.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::faultfs::FaultFs;
use crate::common::{
    Answer, Responder, no_panic, pveprobe, root_or_skip, sh, stderr, stdout, workdir,
};

fn count(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

// ------------------------------------------------------------------ PATH

#[test]
fn paths_with_newlines_quotes_command_substitution_and_a_leading_dash() {
    let dir = workdir();
    for name in [
        "-rf\n$(touch pwned)\n'\"`touch pwned2`",
        "--help",
        " leading and trailing space ",
        "new\nline",
    ] {
        let odd = dir.path().join(name);
        std::fs::create_dir(&odd).unwrap();
        let out = pveprobe()
            .args(["--tests", "cpu,fsync", "--duration", "0.1", "--"])
            .arg(name)
            .current_dir(dir.path())
            .output()
            .unwrap();
        no_panic(&stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{name:?}: {}", stderr(&out));
        let lines = crate::common::pveperf_lines(&stdout(&out));
        assert!(crate::common::figure(&lines, "FSYNCS/SECOND") > 0.0);
        assert_eq!(count(&odd), 0, "{name:?}: scratch directory left behind");
    }
    assert!(!dir.path().join("pwned").exists() && !dir.path().join("pwned2").exists());
    assert_eq!(count(dir.path()), 4, "something else was created");
}

#[test]
fn a_symlinked_path_is_probed_where_it_points_and_the_link_is_kept() {
    let dir = workdir();
    let target = tempfile::tempdir_in("/dev/shm").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(target.path(), &link).unwrap();
    let out = pveprobe()
        .args(["--tests", "fsync", "--duration", "0.1"])
        .arg(&link)
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(lines["HD SIZE"].ends_with(" GB (tmpfs)"), "{lines:?}");
    assert_eq!(count(target.path()), 0, "scratch directory left behind");
    assert_eq!(std::fs::read_link(&link).unwrap(), target.path());
    assert_eq!(count(dir.path()), 1);
}

#[test]
fn procfs_and_sysfs_paths_get_no_device_lines_and_no_writes() {
    for (path, source) in [("/proc", "proc"), ("/sys", "sysfs")] {
        let out = pveprobe()
            .args(["--tests", "cpu,read,seek,fsync", "--duration", "0.1", path])
            .output()
            .unwrap();
        no_panic(&stderr(&out));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        let lines = crate::common::pveperf_lines(&stdout(&out));
        assert_eq!(lines["HD SIZE"], format!("0.00 GB ({source})"));
        assert!(
            err.contains(&format!(
                "BUFFERED READS: skipped: {source} ({source}) is not a block device"
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "FSYNCS/SECOND: not measured: no space available on {source}"
            )),
            "{err}"
        );
    }
}

#[test]
fn tmpfs_gets_fsyncs_but_no_device_lines() {
    let target = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = pveprobe()
        .args(["--tests", "read,seek,fsync", "--duration", "0.1"])
        .arg(target.path())
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(
        lines.keys().collect::<Vec<_>>(),
        ["FSYNCS/SECOND", "HD SIZE"]
    );
    assert_eq!(count(target.path()), 0);
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn overlay_gets_fsyncs_and_leaves_the_upper_layer_clean() {
    if !root_or_skip() {
        return;
    }
    let dir = workdir();
    let [lower, upper, work, merged] = ["lower", "upper", "work", "merged"].map(|d| {
        let p = dir.path().join(d);
        std::fs::create_dir(&p).unwrap();
        p
    });
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        lower.display(),
        upper.display(),
        work.display()
    );
    sh(
        "mount",
        &[
            "-t",
            "overlay",
            "overlay",
            "-o",
            &options,
            merged.to_str().unwrap(),
        ],
    );
    struct Umount(PathBuf);
    impl Drop for Umount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _umount = Umount(merged.clone());
    let out = pveprobe()
        .args(["--tests", "read,fsync", "--duration", "0.2"])
        .arg(&merged)
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(lines["HD SIZE"].ends_with(" GB (overlay)"), "{lines:?}");
    assert!(crate::common::figure(&lines, "FSYNCS/SECOND") > 0.0);
    assert!(
        stderr(&out).contains("BUFFERED READS: skipped: overlay (overlay) is not a block device"),
        "{}",
        stderr(&out)
    );
    assert_eq!(count(&merged), 0);
    assert_eq!(count(&upper), 0, "the upper layer keeps a trace");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn an_nfs_like_source_gets_fsyncs_but_no_device_lines() {
    if !root_or_skip() {
        return;
    }
    let fs = FaultFs::mount("nfs.example:/export/vz", 0);
    let out = pveprobe()
        .args(["--tests", "read,seek,fsync", "--duration", "0.2"])
        .arg(fs.path())
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(
        lines["HD SIZE"].ends_with(" GB (nfs.example:/export/vz)"),
        "{lines:?}"
    );
    assert!(crate::common::figure(&lines, "FSYNCS/SECOND") > 0.0);
    assert!(
        stderr(&out).contains(
            "AVERAGE SEEK TIME: skipped: nfs.example:/export/vz (fuse) is not a block device"
        ),
        "{}",
        stderr(&out)
    );
    assert!(fs.leftovers().is_empty(), "{:?}", fs.leftovers());
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_mount_source_with_a_newline_cannot_forge_a_line() {
    if !root_or_skip() {
        return;
    }
    let fs = FaultFs::mount("evil\nDNS EXT:           0.01 ms", 0);
    let out = pveprobe()
        .args(["--tests", "cpu", "-v"])
        .arg(fs.path())
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("\nDNS EXT"), "{text}");
    assert!(
        text.contains("HD SIZE:           4.00 GB (evil\\012DNS EXT:           0.01 ms)\n"),
        "{text}"
    );
    assert!(
        text.contains(": fuse on evil\\012DNS EXT:           0.01 ms\n"),
        "{text}"
    );
}

/// A PATH in a directory that `nobody` may write (0777, no sticky bit):
/// nobody renames the probe's directory away while it runs and plants a
/// symlink to a victim directory, or a directory of its own, in its place.
#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn another_user_racing_the_private_directory_cannot_redirect_or_remove_anything() {
    if !root_or_skip() {
        return;
    }
    let dir = workdir();
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let stop = dir.path().join("stop");
    let attacker = r#"
        my ($d, $victim, $stop) = @ARGV; my $n = 0;
        until (-e $stop) {
            opendir(my $h, $d) or next;
            for my $e (readdir $h) {
                next unless $e =~ /^pveprobe\.[0-9a-f]{16}$/;
                next if -l "$d/$e" || -o _;
                $n++;
                rename("$d/$e", "$d/stolen.$n") or next;
                if ($n % 2) { symlink($victim, "$d/$e") } else { mkdir("$d/$e", 0777) }
            }
            closedir $h;
        }
    "#;
    let mut child = {
        use std::os::unix::process::CommandExt;
        std::process::Command::new("perl")
            .args(["-e", attacker])
            .arg(&shared)
            .arg(&victim)
            .arg(&stop)
            .uid(65534)
            .gid(65534)
            .spawn()
            .expect("perl (scripts/install-test-deps)")
    };
    let mut outcomes = (0, 0);
    for _ in 0..30 {
        let out = pveprobe()
            .args(["--tests", "fsync", "--duration", "0.1"])
            .arg(&shared)
            .output()
            .unwrap();
        no_panic(&stderr(&out));
        let err = stderr(&out);
        match out.status.code() {
            Some(0) => outcomes.0 += 1,
            Some(1) => {
                outcomes.1 += 1;
                assert!(
                    err.contains("was moved by someone else during the run")
                        || err.contains("was replaced by someone else")
                        || err.contains("cannot open ")
                        || err.contains("cannot remove "),
                    "{err}"
                );
            }
            other => panic!("exit {other:?}: {err}"),
        }
    }
    std::fs::write(&stop, "").unwrap();
    crate::common::wait_within(&mut child, Duration::from_secs(10));
    assert_eq!(count(&victim), 0, "a write was redirected into the victim");
    let mut stolen = 0;
    for entry in std::fs::read_dir(&shared).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        if name.starts_with("stolen.") {
            // The probe's own directories, moved away: emptied, not removed.
            stolen += 1;
            assert_eq!(meta.uid(), 0);
            assert_eq!(count(&entry.path()), 0, "{name} still holds files");
        } else {
            // What the attacker planted; never a directory of the probe's.
            assert!(
                meta.file_type().is_symlink() || meta.uid() == 65534,
                "{name} is the probe's and was left behind"
            );
        }
    }
    assert!(
        stolen > 0,
        "the attacker never got in: the test proves nothing"
    );
    assert_eq!(
        outcomes.1, stolen,
        "each attacked run says so: {outcomes:?}"
    );
}

// ------------------------------------------------------------ resolv.conf

fn dns_probe(conf_text: &[u8], extra: &[&str]) -> Output {
    let dir = workdir();
    let conf = dir.path().join("resolv.conf");
    std::fs::write(&conf, conf_text).unwrap();
    let out = pveprobe()
        .args([
            "--tests",
            "dns",
            "--duration",
            "0.3",
            "--dns-timeout",
            "0.3",
        ])
        .args(extra)
        .arg("--resolv-conf")
        .arg(&conf)
        .arg(dir.path())
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(count(dir.path()), 1);
    out
}

#[test]
fn binary_empty_and_endless_resolv_conf_are_clear_failures() {
    let mut garbage = Vec::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..65536 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        garbage.push(x as u8);
    }
    garbage.extend_from_slice(b"\0nameserver\x00127.0.0.1\n\xff\xfe");
    for text in [&garbage[..], b"", b"\n\n\n", b"nameserver"] {
        let out = dns_probe(text, &[]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("DNS EXT: not measured: no usable nameserver in "),
            "{}",
            stderr(&out)
        );
        assert!(!stdout(&out).contains("DNS"));
    }
    let start = Instant::now();
    let out = pveprobe()
        .args(["--tests", "dns", "--resolv-conf", "/dev/zero", "/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no usable nameserver in /dev/zero"),
        "{}",
        stderr(&out)
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    let out = pveprobe()
        .args(["--tests", "dns", "--resolv-conf", "/", "/"])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("DNS EXT: not measured: cannot read /: Is a directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn port_numbers_names_and_bad_scopes_are_not_addresses() {
    let out = dns_probe(
        b"nameserver 127.0.0.1:53\nnameserver [::1]:53\nnameserver 999.1.1.1\n\
          nameserver dns.example\nnameserver fe80::1%pve-no-such-if\nnameserver 127.0.0.1#53\n",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "(not addresses: 127.0.0.1:53, [::1]:53, 999.1.1.1, dns.example, fe80::1%pve-no-such-if, 127.0.0.1#53)"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn thousands_of_lines_use_the_first_three_servers() {
    if !root_or_skip() {
        return;
    }
    let server = Responder::start(Answer::Proper);
    let mut text = format!("nameserver {}\n", server.addr);
    for i in 0..5000 {
        text.push_str(&format!(
            "# comment {i}\nnameserver 127.54.{}.{}\nsearch d{i}.example\noptions ndots:{i}\n",
            i / 250,
            i % 250 + 1
        ));
    }
    let out = dns_probe(text.as_bytes(), &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(crate::common::figure(&lines, "DNS EXT") > 0.0);
    assert!(
        lines["DNS INT"].ends_with(" ms (d4999.example)"),
        "{lines:?}"
    );
    assert!(
        err.contains("lists 4998 more name servers; only the first 3 are used, as glibc does"),
        "{err}"
    );
    assert!(err.len() < 2000, "stderr grows with the file: {err}");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn ipv6_and_scoped_name_servers_are_asked() {
    if !root_or_skip() {
        return;
    }
    let server = Responder::start_on("::1".parse().unwrap(), Answer::Proper);
    for conf in [
        "nameserver ::1\n",
        "nameserver ::1%lo\n",
        "nameserver ::1%1\n",
    ] {
        let out = dns_probe(conf.as_bytes(), &[]);
        assert_eq!(out.status.code(), Some(0), "{conf}: {}", stderr(&out));
        let lines = crate::common::pveperf_lines(&stdout(&out));
        assert!(crate::common::figure(&lines, "DNS EXT") > 0.0, "{conf}");
    }
    drop(server);
}

// ------------------------------------------------------ hostile name servers

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn garbage_truncated_wrong_id_wrong_name_and_foreign_answers_are_not_counted() {
    if !root_or_skip() {
        return;
    }
    for answer in [
        Answer::Garbage,
        Answer::Truncated,
        Answer::WrongId,
        Answer::WrongName,
        Answer::OtherAddress,
    ] {
        let server = Responder::start(answer);
        let out = dns_probe(format!("nameserver {}\n", server.addr).as_bytes(), &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{answer:?}: {err}");
        assert!(
            stdout(&out).contains("DNS EXT:           timeout (no answer within 0.30 s)\n"),
            "{answer:?}: {}",
            stdout(&out)
        );
        assert!(err.contains("queries got no answer from"), "{err}");
    }
    // Noise first, then the real answer: every query counts as answered.
    let server = Responder::start(Answer::NoiseThenProper);
    let out = dns_probe(format!("nameserver {}\n", server.addr).as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("no answer"), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(crate::common::figure(&lines, "DNS EXT") > 0.0);
}

// ------------------------------------------- host files through --sysroot

/// A --sysroot tree: the real mountinfo and /sys unless replaced.
fn sysroot(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("proc/self")).unwrap();
    std::fs::copy("/proc/self/mountinfo", root.join("proc/self/mountinfo")).unwrap();
    std::fs::copy("/proc/cpuinfo", root.join("proc/cpuinfo")).unwrap();
    std::os::unix::fs::symlink("/sys", root.join("sys")).unwrap();
    root
}

fn probe_sysroot(root: &Path, args: &[&str], path: &Path) -> (Output, Duration) {
    let start = Instant::now();
    let out = pveprobe()
        .args(args)
        .arg("--sysroot")
        .arg(root)
        .arg(path)
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    (out, start.elapsed())
}

fn xorshift(n: usize, mut x: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn truncated_huge_and_malformed_cpuinfo() {
    let dir = workdir();
    let root = sysroot(dir.path());
    let huge: String = (0..100_000)
        .map(|i| format!("processor\t: {i}\nbogomips\t: 1.00\n\n"))
        .collect();
    let mut binary = xorshift(1 << 20, 7);
    binary.extend_from_slice(b"\nbogomips : 12.50\n");
    let long_line = format!("bogomips : 3.00\nflags : {}\n", "x".repeat(8 << 20));
    let cases: [(&[u8], &str); 5] = [
        (
            b"processor\t: 0\nbogomips\t: 4800.00\n\nprocessor\t: 1\nbogomi",
            "4800.00",
        ),
        (b"bogomips\t: 4800.00\nbogomips\t:", "4800.00"),
        (huge.as_bytes(), "100000.00"),
        (&binary, "12.50"),
        (long_line.as_bytes(), "3.00"),
    ];
    for (text, expected) in cases {
        std::fs::write(root.join("proc/cpuinfo"), text).unwrap();
        let (out, elapsed) = probe_sysroot(&root, &["--tests", "cpu"], Path::new("/"));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let lines = crate::common::pveperf_lines(&stdout(&out));
        assert_eq!(lines["CPU BOGOMIPS"], expected);
        assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    }
    // Endless: read to the bound, not forever.
    std::fs::remove_file(root.join("proc/cpuinfo")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("proc/cpuinfo")).unwrap();
    let (out, _) = probe_sysroot(&root, &["--tests", "cpu"], Path::new("/"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        crate::common::pveperf_lines(&stdout(&out))["CPU BOGOMIPS"],
        "0.00"
    );
}

#[test]
fn truncated_huge_and_malformed_mountinfo() {
    let dir = workdir();
    let root = sysroot(dir.path());
    let real = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let info = root.join("proc/self/mountinfo");
    // Cut in the middle of its last line: the rest still holds "/".
    std::fs::write(&info, &real[..real.len() - 10]).unwrap();
    let (out, _) = probe_sysroot(&root, &["--tests", "cpu"], Path::new("/"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("HD SIZE:"));
    // Malformed throughout: HD SIZE cannot be known, the rest still runs.
    let mut garbage = xorshift(100_000, 3);
    garbage.extend_from_slice(b"\n1 2 3:4 / rel rw - ext4 src\n1 2 x:y / / rw - ext4 /dev/x\n");
    std::fs::write(&info, garbage).unwrap();
    let (out, _) = probe_sysroot(
        &root,
        &["--tests", "cpu,fsync", "--duration", "0.1"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("CPU BOGOMIPS:"));
    assert!(!stdout(&out).contains("HD SIZE"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("HD SIZE: not measured: no mount in /proc/self/mountinfo holds "),
        "{}",
        stderr(&out)
    );
    assert_eq!(count(dir.path()), 1, "the fsync test still cleaned up");
    // Huge and hostile: 20,000 mounts stacked on "/" with a parent chain.
    let mut stacked = real.clone();
    for i in 0..20_000u32 {
        stacked.push_str(&format!(
            "{} {} 0:{} / / rw - tmpfs stack{i} rw\n",
            100_000 + i,
            100_000 + i.saturating_sub(1),
            1000 + i
        ));
    }
    std::fs::write(&info, stacked).unwrap();
    let (out, elapsed) = probe_sysroot(&root, &["--tests", "cpu"], Path::new("/"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("GB (stack19999)"), "{}", stdout(&out));
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
}

/// A --sysroot whose mountinfo puts `path` on /dev/sdz1 (8:1), with a sysfs
/// tree of its own for that disk, every attribute written by `attrs`.
fn hostile_sysfs(dir: &Path, path: &Path, attrs: &[(&str, &[u8])]) -> PathBuf {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("proc/self")).unwrap();
    std::fs::copy("/proc/cpuinfo", root.join("proc/cpuinfo")).unwrap();
    std::fs::write(
        root.join("proc/self/mountinfo"),
        format!(
            "22 1 8:1 / / rw - ext4 /dev/sdz1 rw\n30 22 8:1 / {} rw - ext4 /dev/sdz1 rw\n",
            path.display()
        ),
    )
    .unwrap();
    let disk =
        root.join("sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sdz");
    let part = disk.join("sdz1");
    std::fs::create_dir_all(&part).unwrap();
    std::fs::write(part.join("partition"), "1\n").unwrap();
    for (rel, value) in attrs {
        let file = disk.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, value).unwrap();
    }
    std::fs::create_dir_all(root.join("sys/class/block")).unwrap();
    std::fs::create_dir_all(root.join("sys/dev/block")).unwrap();
    let rel = "../../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sdz";
    std::os::unix::fs::symlink(rel, root.join("sys/class/block/sdz")).unwrap();
    std::os::unix::fs::symlink(format!("{rel}/sdz1"), root.join("sys/class/block/sdz1")).unwrap();
    std::os::unix::fs::symlink(format!("{rel}/sdz1"), root.join("sys/dev/block/8:1")).unwrap();
    root
}

#[test]
fn truncated_huge_and_malformed_sysfs_attributes() {
    let dir = workdir();
    let path = dir.path().join("vz");
    std::fs::create_dir(&path).unwrap();
    let huge = vec![b'7'; 20 << 20];
    let vpd = xorshift(300, 11);
    let attrs: [(&str, &[u8]); 12] = [
        ("size", &huge),
        ("queue/rotational", b"2\n"),
        ("queue/logical_block_size", b"-4096"),
        ("queue/physical_block_size", b"99999999999999999999999"),
        ("queue/scheduler", b"[[[mq-deadline] [none"),
        ("queue/write_cache", b"\x1b[2J\x1b[31mwrite back\x07"),
        (
            "device/model",
            b"\x1b]0;owned\x07Samsung SSD 870\nforged line",
        ),
        ("device/vendor", b"\xff\xfe\x00ATA"),
        ("device/rev", b""),
        ("device/vpd_pg80", &vpd),
        ("serial", b"\n\n\n"),
        ("device/firmware_rev", b"1.0\0\0\0"),
    ];
    let root = hostile_sysfs(dir.path(), &path, &attrs);
    for format in ["text", "json"] {
        let (out, elapsed) = probe_sysroot(
            &root,
            &["--tests", "cpu", "-v", "--output-format", format],
            &path,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
        let text = stdout(&out);
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            crate::common::validate_schema(&doc);
            assert_eq!(doc["storage"]["disks"][0]["name"], "sdz", "{text}");
        } else {
            assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
            assert!(text.contains("  sdz: "), "{text}");
            assert!(!text.contains("\nforged line"), "{text}");
        }
    }
    assert_eq!(count(&path), 0);
}

/// A ZFS dataset on PATH (--sysroot mountinfo) with a fake `zpool` that
/// prints `output`.
fn zfs_with_zpool_output(output: &[u8]) -> Output {
    let dir = workdir();
    let path = dir.path().join("data");
    std::fs::create_dir(&path).unwrap();
    let root = sysroot(dir.path());
    std::fs::write(
        root.join("proc/self/mountinfo"),
        format!(
            "22 1 0:30 / / rw - zfs tank/ROOT rw\n90 22 0:31 / {} rw - zfs tank/data rw\n",
            path.display()
        ),
    )
    .unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(dir.path().join("zpool.out"), output).unwrap();
    for (tool, file) in [("zpool", "zpool.out"), ("zfs", "zpool.out")] {
        let script = bin.join(tool);
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nexec cat '{}'\n",
                dir.path().join(file).display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = pveprobe()
        .args([
            "--tests",
            "read,seek",
            "--duration",
            "0.1",
            "-v",
            "--sysroot",
        ])
        .arg(&root)
        .arg(&path)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    out
}

#[test]
fn truncated_huge_and_malformed_zpool_output() {
    let good = "  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME        STATE\n\ttank        ONLINE\n\t  mirror-0  ONLINE\n\t    /dev/pveprobe-no-such-a  ONLINE\n\t    /dev/pveprobe-no-such-b  ONLINE\n\nerrors: No known data errors\n";
    // Cut before the config: the layout cannot be known.
    let out = zfs_with_zpool_output(&good.as_bytes()[..30]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("its pool's disks are unknown: cannot read the output of zpool status: no 'config:' section"),
        "{}",
        stderr(&out)
    );
    // Binary garbage.
    let out = zfs_with_zpool_output(&xorshift(100_000, 5));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot read the output of zpool status"),
        "{}",
        stderr(&out)
    );
    // Cut inside the config, with disks that do not exist: named, not read.
    let cut = &good[..good.find("/dev/pveprobe-no-such-b").unwrap()];
    let out = zfs_with_zpool_output(cut.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "BUFFERED READS: not measured: cannot open /dev/pveprobe-no-such-a for reading"
        ),
        "{}",
        stderr(&out)
    );
    // Huge: 50,000 disks in one raidz; the first that cannot be read ends it.
    let mut huge = String::from(
        "  pool: tank\n state: ONLINE\nconfig:\n\n\ttank ONLINE\n\t  raidz2-0 ONLINE\n",
    );
    for i in 0..50_000 {
        huge.push_str(&format!("\t    /dev/pveprobe-no-such-{i} ONLINE\n"));
    }
    let start = Instant::now();
    let out = zfs_with_zpool_output(huge.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(stderr(&out).len() < 10_000, "stderr grows with the pool");
}

#[test]
fn an_endless_baseline_or_comparison_file_is_refused_not_read_forever() {
    let start = Instant::now();
    let out = pveprobe()
        .args(["--tests", "cpu", "--baseline", "/dev/zero", "/"])
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/dev/zero is not a pveprobe JSON result"),
        "{}",
        stderr(&out)
    );
    let out = pveprobe()
        .args(["compare", "/dev/zero", "/dev/zero"])
        .output()
        .unwrap();
    no_panic(&stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(start.elapsed() < Duration::from_secs(20));
}
