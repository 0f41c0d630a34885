//! FSYNCS/SECOND's order of system calls, proven from outside: the binary
//! (and bench/pveperf-replica, the stand-in for pveperf in
//! bench/vs-pveperf) run under Debian's strace, and every iteration of the
//! fsync loop must be pveperf's: openat with O_CREAT|O_TRUNC, the ioctl,
//! lseek and fstat of Perl's I/O layer, fsync, one write of 4,001 bytes,
//! close. No root needed: the files live in a directory of the test's own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{stderr, workdir};
use tempfile::TempDir;

/// One system call of the trace: process, name, arguments and result.
#[derive(Debug)]
struct Call {
    pid: u32,
    name: String,
    args: String,
    result: i64,
}

/// Parses `PID name(args) = result` lines. A call strace had to split
/// (`<unfinished ...>`, `resumed>`: two processes at once) becomes a call
/// named `<split>`: no file of the loop may be open in its process then,
/// or the loop's order could not be checked.
fn calls(trace: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    for line in trace.lines() {
        let (pid, rest) = line.split_once(' ').expect(line);
        let rest = rest.trim_start();
        let pid: u32 = pid.parse().expect(line);
        if rest.starts_with("+++") || rest.starts_with("---") {
            continue;
        }
        if rest.contains("<unfinished") || rest.contains("resumed>") {
            calls.push(Call {
                pid,
                name: "<split>".into(),
                args: rest.to_string(),
                result: -1,
            });
            continue;
        }
        let (name, rest) = rest.split_once('(').expect(line);
        let (args, result) = rest.rsplit_once(" = ").expect(line);
        let args = args.trim_end().strip_suffix(')').expect(line);
        calls.push(Call {
            pid,
            name: name.to_string(),
            args: args.to_string(),
            result: result
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap_or(-1),
        });
    }
    calls
}

/// The first argument of a call, as a file descriptor.
fn fd(call: &Call) -> i64 {
    call.args
        .split(',')
        .next()
        .and_then(|a| a.trim().parse().ok())
        .unwrap_or(-1)
}

/// pveperf's calls on each file between its open and its close.
const PVEPERF_CALLS: [&str; 5] = ["ioctl", "lseek", "newfstatat", "fsync", "write"];

/// Checks that every open of a `tf_N.dat` is followed, on its descriptor,
/// by exactly [`PVEPERF_CALLS`] and close; returns the number of iterations.
fn check_pveperf_order(trace: &str) -> usize {
    let calls = calls(trace);
    let mut open: HashMap<(u32, i64), (String, Vec<String>)> = HashMap::new();
    let mut iterations = 0;
    for call in &calls {
        if call.name == "openat" && call.args.contains("tf_") && call.args.contains(".dat\"") {
            assert!(
                call.args.contains("O_CREAT") && call.args.contains("O_TRUNC"),
                "not opened with create and truncate: {call:?}"
            );
            assert!(call.result >= 0, "open failed: {call:?}");
            open.insert((call.pid, call.result), (call.args.clone(), Vec::new()));
            continue;
        }
        if call.name == "<split>" {
            assert!(
                !open.keys().any(|(pid, _)| *pid == call.pid),
                "a call split while a file of the loop was open: {call:?}"
            );
            continue;
        }
        let key = (call.pid, fd(call));
        let Some((_, seen)) = open.get_mut(&key) else {
            continue;
        };
        match call.name.as_str() {
            "ioctl" | "lseek" | "newfstatat" | "fstat" | "fsync" | "fdatasync" => {
                seen.push(call.name.clone())
            }
            "write" => {
                assert_eq!(call.result, 4001, "one write of 4,001 bytes: {call:?}");
                seen.push("write".into());
            }
            "close" => {
                let (file, seen) = open.remove(&key).unwrap();
                assert_eq!(
                    seen, PVEPERF_CALLS,
                    "pveperf's order is open, {PVEPERF_CALLS:?}, close; {file} had {seen:?} before close"
                );
                iterations += 1;
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "opened and never closed: {open:?}");
    iterations
}

/// Runs `program args... DIR` under strace with the loop's system calls
/// traced, DIR a fresh directory; returns the test's directory, DIR and the
/// trace.
fn traced(program: &Path, args: &[&str], env: &[(&str, &str)]) -> (TempDir, PathBuf, String) {
    let dir = workdir();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let log = dir.path().join("strace.log");
    let out = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=openat,ioctl,lseek,newfstatat,fstat,fsync,fdatasync,write,pwrite64,close",
            "-o",
        ])
        .arg(&log)
        .arg("--")
        .arg(program)
        .args(args)
        .arg(&target)
        .envs(env.iter().copied())
        .env(crate::common::NO_LOCK.0, crate::common::NO_LOCK.1)
        .stdin(Stdio::null())
        .output()
        .expect("cannot run strace (run scripts/install-test-deps)");
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = std::fs::read_to_string(log).unwrap();
    (dir, target, trace)
}

fn pveprobe_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_pveprobe"))
}

fn assert_empty(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

#[test]
fn pveprobes_fsync_loop_runs_in_pveperfs_order() {
    let (_dir, target, trace) = traced(
        pveprobe_bin(),
        &["--tests", "fsync", "--duration", "0.3"],
        &[],
    );
    let iterations = check_pveperf_order(&trace);
    assert!(iterations >= 10, "only {iterations} iterations traced");
    assert_empty(&target);
}

#[test]
fn sync_write_4k_writes_each_block_then_fdatasyncs_it() {
    // SYNC WRITE 4K overwrites its file, written in full first, in 4 KiB
    // at aligned offsets, each write followed by fdatasync, as fio's
    // --rw=randwrite --bs=4k --fdatasync=1 --overwrite=1.
    let (_dir, target, trace) = traced(
        pveprobe_bin(),
        &["--tests", "syncwrite", "--duration", "0.2"],
        &[],
    );
    let calls = calls(&trace);
    let reopen = calls
        .iter()
        .rposition(|c| {
            c.name == "openat" && c.args.contains("sync_0.dat") && !c.args.contains("O_CREAT")
        })
        .expect("the job opened its file for writing in place");
    let fd = calls[reopen].result;
    let on_fd: Vec<&Call> = calls[reopen + 1..]
        .iter()
        .filter(|c| self::fd(c) == fd)
        .take_while(|c| c.name != "close")
        .collect();
    assert!(on_fd.len() >= 20, "only {} calls traced", on_fd.len());
    let file_bytes = 64u64 << 20;
    for pair in on_fd.chunks(2) {
        let names: Vec<&str> = pair.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["pwrite64", "fdatasync"], "{pair:?}");
        let args: Vec<&str> = pair[0].args.rsplitn(3, ", ").collect();
        let (offset, size): (u64, u64) = (args[0].parse().unwrap(), args[1].parse().unwrap());
        assert_eq!(size, 4096, "{:?}", pair[0]);
        assert_eq!(offset % 4096, 0, "aligned: {:?}", pair[0]);
        assert!(
            offset + size <= file_bytes,
            "inside the file: {:?}",
            pair[0]
        );
    }
    // Random, not sequential: the offsets are not in order.
    let offsets: Vec<u64> = on_fd
        .iter()
        .step_by(2)
        .map(|c| c.args.rsplit(", ").next().unwrap().parse().unwrap())
        .collect();
    assert!(offsets.windows(2).any(|w| w[0] > w[1]), "{offsets:?}");
    assert_empty(&target);
}

#[test]
fn the_perl_replica_of_pveperf_runs_in_pveperfs_order() {
    let replica = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/pveperf-replica");
    let (_dir, target, trace) = traced(
        Path::new("/usr/bin/perl"),
        &[replica.to_str().unwrap()],
        // Only the fsync loop: no disk reads, no queries to the host's resolver.
        &[("PVEPERF_REPLICA_TESTS", "fsync")],
    );
    let iterations = check_pveperf_order(&trace);
    assert!(iterations >= 100, "only {iterations} iterations traced");
    assert_empty(&target);
}

#[test]
fn the_checker_rejects_write_then_fsync() {
    let trace = "\
1 openat(3, \"tf_0.dat\", O_WRONLY|O_CREAT|O_TRUNC|O_NOFOLLOW|O_CLOEXEC, 0600) = 4
1 ioctl(4, TCGETS, 0x7ffe) = -1 ENOTTY (Inappropriate ioctl for device)
1 lseek(4, 0, SEEK_CUR) = 0
1 newfstatat(4, \"\", {st_mode=S_IFREG|0600, st_size=0, ...}, AT_EMPTY_PATH) = 0
1 write(4, \"AAAA\"..., 4001) = 4001
1 fsync(4) = 0
1 close(4) = 0
";
    let result = std::panic::catch_unwind(|| check_pveperf_order(trace));
    assert!(result.is_err(), "write before fsync must be refused");
    let without_fstat = "\
1 openat(3, \"tf_0.dat\", O_WRONLY|O_CREAT|O_TRUNC|O_NOFOLLOW|O_CLOEXEC, 0600) = 4
1 fsync(4) = 0
1 write(4, \"AAAA\"..., 4001) = 4001
1 close(4) = 0
";
    let result = std::panic::catch_unwind(|| check_pveperf_order(without_fstat));
    assert!(
        result.is_err(),
        "Perl's ioctl, lseek and fstat belong to the loop"
    );
    let good = "\
1 openat(3, \"tf_0.dat\", O_WRONLY|O_CREAT|O_TRUNC|O_NOFOLLOW|O_CLOEXEC, 0600) = 4
1 ioctl(4, TCGETS, 0x7ffe) = -1 ENOTTY (Inappropriate ioctl for device)
1 lseek(4, 0, SEEK_CUR) = 0
1 newfstatat(4, \"\", {st_mode=S_IFREG|0600, st_size=0, ...}, AT_EMPTY_PATH) = 0
1 fsync(4) = 0
1 write(4, \"AAAA\"..., 4001) = 4001
1 close(4) = 0
";
    assert_eq!(check_pveperf_order(good), 1);
}
