//! The parsers against host files captured from (or rebuilt after) real
//! hosts under `fixtures/`. Every expected value is pinned here; see
//! `fixtures/README.md` for where each file comes from.

use std::collections::BTreeSet;
use std::fs;
use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};
use std::path::{Path, PathBuf};

use pveprobe::commands::probe::pveperf::cpu;
use pveprobe::sys::host::Host;
use pveprobe_parse::mountinfo::{self, MountEntry};
use pveprobe_parse::{cpuinfo, resolv};

use crate::common::{fixture, read_fixture};

fn names_in(rel: &str) -> BTreeSet<String> {
    fs::read_dir(fixture(rel))
        .unwrap_or_else(|e| panic!("cannot list fixtures/{rel}: {e}"))
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect()
}

// ---------------------------------------------------------------- cpuinfo

fn cpuinfo_of(host: &str) -> String {
    read_fixture(&format!("hosts/{host}/proc/cpuinfo"))
}

/// The parser sums in file order, so the expected values are written as the
/// same additions of the per-CPU figures and compare bit for bit.
const EPYC_GUEST_SUM: f64 = 4493.24 + 4493.24 + 4493.24 + 4493.24;
const EPYC_HOST_SUM: f64 = 4492.85 + 4492.85 + 4492.85 + 4492.85;
const XEON_SUM: f64 = 5199.96 + 5199.96 + 5199.96 + 5199.96;
const AMPERE_SUM: f64 = 200.0;

#[test]
fn cpuinfo_x86_64_epyc_guest() {
    let text = cpuinfo_of("x86_64-epyc");
    assert_eq!(text.matches("\nbogomips\t: 4493.24\n").count(), 4);
    assert_eq!(cpuinfo::bogomips_sum(&text), EPYC_GUEST_SUM);
    assert_eq!(
        cpuinfo::model_name(&text).as_deref(),
        Some("AMD EPYC 9754 128-Core Processor")
    );
}

#[test]
fn cpuinfo_arm64_ampere_mixed_case_key() {
    let text = cpuinfo_of("arm64-ampere");
    assert_eq!(text.matches("BogoMIPS\t: 50.00\n").count(), 4);
    assert_eq!(cpuinfo::bogomips_sum(&text), AMPERE_SUM);
    // A 64-bit reader gets no "model name" line from arm64 kernels, and
    // "CPU implementer"/"CPU part" are not a model.
    assert_eq!(cpuinfo::model_name(&text), None);
}

#[test]
fn cpuinfo_ppc64le_power9_has_no_bogomips() {
    let text = cpuinfo_of("ppc64le-power9");
    assert_eq!(cpuinfo::bogomips_sum(&text), 0.0);
    // "cpu" is the model; the trailing "model"/"machine" lines are not.
    assert_eq!(
        cpuinfo::model_name(&text).as_deref(),
        Some("POWER9 (architected), altivec supported")
    );
}

#[test]
fn cpuinfo_s390x_z15_per_cpu_line_does_not_count() {
    let text = cpuinfo_of("s390x-z15");
    assert!(text.contains("\nbogomips per cpu: 3241.00\n"));
    assert_eq!(cpuinfo::bogomips_sum(&text), 0.0);
    // "cpu number", "cpu MHz dynamic", "processor 0" are not a model name.
    assert_eq!(cpuinfo::model_name(&text), None);
}

#[test]
fn cpuinfo_pve_hosts() {
    let lvm = cpuinfo_of("pve-lvm");
    assert_eq!(cpuinfo::bogomips_sum(&lvm), XEON_SUM);
    assert_eq!(
        cpuinfo::model_name(&lvm).as_deref(),
        Some("Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz")
    );

    let zfs = cpuinfo_of("pve-zfs");
    assert_eq!(cpuinfo::bogomips_sum(&zfs), EPYC_HOST_SUM);
    assert_eq!(
        cpuinfo::model_name(&zfs).as_deref(),
        Some("AMD EPYC 9754 128-Core Processor")
    );
}

#[test]
fn probe_reads_cpuinfo_below_the_fixture_root() {
    let cases = [
        ("x86_64-epyc", EPYC_GUEST_SUM),
        ("arm64-ampere", AMPERE_SUM),
        ("ppc64le-power9", 0.0),
        ("s390x-z15", 0.0),
        ("pve-lvm", XEON_SUM),
        ("pve-zfs", EPYC_HOST_SUM),
    ];
    for (host, expected) in cases {
        let root = Host::with_root(fixture(&format!("hosts/{host}")));
        assert!(!root.is_real());
        let got = cpu::bogomips(&root).unwrap_or_else(|e| panic!("{host}: {e}"));
        assert_eq!(got, expected, "{host}");
    }
    // The odd host has a mountinfo only: reading its cpuinfo must fail, not
    // fall back to the running host's /proc/cpuinfo.
    assert!(cpu::bogomips(&Host::with_root(fixture("hosts/odd"))).is_err());
}

// -------------------------------------------------------------- mountinfo

fn mountinfo_of(host: &str) -> (String, Vec<MountEntry>) {
    let text = read_fixture(&format!("hosts/{host}/proc/self/mountinfo"));
    let entries = mountinfo::parse(&text);
    (text, entries)
}

/// Every line of a real mountinfo is well formed; none may be dropped.
fn assert_every_line_parses(host: &str, text: &str, entries: &[MountEntry]) {
    for line in text.lines() {
        assert!(
            mountinfo::parse_line(line).is_some(),
            "{host}: rejected {line:?}"
        );
    }
    assert_eq!(entries.len(), text.lines().count(), "{host}");
}

fn by_id(entries: &[MountEntry], id: u32) -> &MountEntry {
    entries
        .iter()
        .find(|e| e.mount_id == id)
        .unwrap_or_else(|| panic!("no mount id {id}"))
}

/// The mount `mount_for` picks for `path`, as (mount id, fstype, source).
fn holder<'a>(entries: &'a [MountEntry], path: &str) -> (u32, &'a str, &'a str) {
    let e = mountinfo::mount_for(entries, Path::new(path))
        .unwrap_or_else(|| panic!("no mount holds {path:?}"));
    (e.mount_id, e.fstype.as_str(), e.source.as_str())
}

#[test]
fn mountinfo_pve_lvm() {
    let (text, entries) = mountinfo_of("pve-lvm");
    assert_every_line_parses("pve-lvm", &text, &entries);
    assert_eq!(entries.len(), 30);

    let root = by_id(&entries, 28);
    assert_eq!((root.parent_id, root.major, root.minor), (1, 252, 1));
    assert_eq!(root.root, "/");
    assert_eq!(root.mount_point, PathBuf::from("/"));
    assert_eq!(root.options, "rw,relatime");
    assert_eq!(root.super_options, "rw,errors=remount-ro");
    assert!(!root.is_read_only());
    assert!(
        by_id(&entries, 63).is_read_only(),
        "systemd credentials mount is ro"
    );

    let pve_root = (28, "ext4", "/dev/mapper/pve-root");
    for (path, expected) in [
        ("/", pve_root),
        // On LVM, local storage is a plain directory on the root LV.
        ("/var/lib/vz", pve_root),
        ("/var/lib/vz/images", pve_root),
        ("/var/lib/vz/images/100/vm-100-disk-0.qcow2", pve_root),
        ("/etc/pve", (396, "fuse", "/dev/fuse")),
        ("/etc/pve/storage.cfg", (396, "fuse", "/dev/fuse")),
        ("/etc/default/pveproxy", pve_root),
        ("/var/lib/lxcfs/proc/cpuinfo", (383, "fuse.lxcfs", "lxcfs")),
        ("/var/lib/lxc/101/config", pve_root),
        (
            "/boot/efi/EFI/proxmox/grubx64.efi",
            (88, "vfat", "/dev/sda2"),
        ),
        ("/boot/grub/grub.cfg", pve_root),
        // binfmt_misc is stacked on systemd's automount point.
        (
            "/proc/sys/fs/binfmt_misc",
            (370, "binfmt_misc", "binfmt_misc"),
        ),
        (
            "/proc/sys/fs/binfmt_misc/status",
            (370, "binfmt_misc", "binfmt_misc"),
        ),
        ("/proc/cpuinfo", (23, "proc", "proc")),
        ("/run/lock/lvm", (30, "tmpfs", "tmpfs")),
        ("/dev/shm", (29, "tmpfs", "tmpfs")),
        (
            "/mnt/pve/backup/dump/vzdump-qemu-100.vma.zst",
            (90, "ext4", "/dev/sdb1"),
        ),
        ("/mnt/pve", pve_root),
    ] {
        assert_eq!(holder(&entries, path), expected, "{path}");
    }
    assert_eq!(
        by_id(&entries, 370).parent_id,
        35,
        "stacked on the autofs mount"
    );
}

#[test]
fn mountinfo_pve_zfs() {
    let (text, entries) = mountinfo_of("pve-zfs");
    assert_every_line_parses("pve-zfs", &text, &entries);
    assert_eq!(entries.len(), 33);

    let root = by_id(&entries, 27);
    assert_eq!((root.parent_id, root.major, root.minor), (1, 0, 25));
    assert_eq!(root.super_options, "rw,xattr,noacl,casesensitive");

    let pve_1 = (27, "zfs", "rpool/ROOT/pve-1");
    let var_lib_vz = (93, "zfs", "rpool/var-lib-vz");
    for (path, expected) in [
        ("/", pve_1),
        ("/var/lib/vz", var_lib_vz),
        ("/var/lib/vz/", var_lib_vz),
        ("/var/lib/vz/images", var_lib_vz),
        ("/var/lib/vz/template/iso/debian-12.iso", var_lib_vz),
        // Whole components only: /var/lib/vz is not a prefix of this.
        ("/var/lib/vzdump", pve_1),
        ("/var/lib/pve-cluster/config.db", pve_1),
        ("/rpool", (89, "zfs", "rpool")),
        ("/rpool/ROOT", (90, "zfs", "rpool/ROOT")),
        ("/rpool/data", (91, "zfs", "rpool/data")),
        (
            "/rpool/data/subvol-101-disk-0/etc/hostname",
            (92, "zfs", "rpool/data/subvol-101-disk-0"),
        ),
        ("/etc/pve/nodes", (398, "fuse", "/dev/fuse")),
        (
            "/proc/sys/fs/binfmt_misc",
            (372, "binfmt_misc", "binfmt_misc"),
        ),
    ] {
        assert_eq!(holder(&entries, path), expected, "{path}");
    }
    assert_eq!(
        by_id(&entries, 92).super_options,
        "rw,xattr,posixacl,casesensitive"
    );
    assert_eq!(by_id(&entries, 92).parent_id, 91);
}

#[test]
fn mountinfo_odd_escapes_binds_stacks_and_tags() {
    let (text, entries) = mountinfo_of("odd");
    assert_every_line_parses("odd", &text, &entries);
    assert_eq!(entries.len(), 26);

    // Octal escapes in mount points and sources are decoded.
    assert_eq!(
        by_id(&entries, 66).mount_point,
        PathBuf::from("/mnt/with space")
    );
    assert_eq!(by_id(&entries, 66).source, "scratch disk");
    assert_eq!(
        by_id(&entries, 67).mount_point,
        PathBuf::from("/mnt/tab\there")
    );
    assert_eq!(
        by_id(&entries, 68).mount_point,
        PathBuf::from("/mnt/new\nline")
    );
    assert_eq!(
        by_id(&entries, 69).mount_point,
        PathBuf::from("/mnt/back\\slash")
    );
    // A directory really named `lit\040eral`: the kernel writes `lit\134040eral`,
    // which must decode once, to a backslash followed by "040".
    assert_eq!(
        mountinfo::unescape("/mnt/lit\\134040eral"),
        "/mnt/lit\\040eral"
    );
    assert_eq!(
        by_id(&entries, 70).mount_point,
        PathBuf::from("/mnt/lit\\040eral")
    );

    let scratch = (66, "tmpfs", "scratch disk");
    for (path, expected) in [
        ("/mnt/with space", scratch),
        ("/mnt/with space/file", scratch),
        ("/mnt/with", (65, "tmpfs", "tmpfs")),
        ("/mnt/tab\there/x", (67, "tmpfs", "tmpfs")),
        ("/mnt/new\nline/x", (68, "tmpfs", "tmpfs")),
        ("/mnt/back\\slash", (69, "tmpfs", "tmpfs")),
        ("/mnt/lit\\040eral/x", (70, "tmpfs", "tmpfs")),
        ("/mnt/lit eral", (65, "tmpfs", "tmpfs")),
        // Bind mount of a subtree: its own entry wins below its mount point.
        ("/mnt/iso/debian-12.iso", (72, "tmpfs", "data")),
        ("/mnt/data/export/isos/debian-12.iso", (71, "tmpfs", "data")),
        // Two mounts stacked on one point: the later (visible) one.
        ("/mnt/stack", (74, "tmpfs", "upper")),
        ("/mnt/stack/file", (74, "tmpfs", "upper")),
        ("/dev/shm", (61, "tmpfs", "tmpfs")),
        ("/dev/pts/0", (63, "devpts", "devpts")),
        // Optional fields "shared:11 master:10" and "unbindable" are skipped.
        ("/mnt/slave", (76, "tmpfs", "prop")),
        ("/mnt/locked", (77, "tmpfs", "locked")),
        ("/mnt/ovl/merged/etc/hostname", (81, "overlay", "overlay")),
        ("/mnt/ovl/upper", (78, "tmpfs", "ovlbase")),
        (
            "/mnt/pve/nfs-store/dump/vzdump-lxc-101.log",
            (84, "nfs4", "192.0.2.10:/export/pve"),
        ),
        ("/mnt/pve", (65, "tmpfs", "tmpfs")),
        ("/mnt/shadow/other", (83, "tmpfs", "cover")),
        ("/", (44, "ext4", "/dev/vda1")),
    ] {
        assert_eq!(holder(&entries, path), expected, "{path:?}");
    }

    let bind = by_id(&entries, 72);
    let data = by_id(&entries, 71);
    assert_eq!(bind.root, "/export/isos");
    assert_eq!(data.root, "/");
    assert_eq!((bind.major, bind.minor), (data.major, data.minor));

    let upper = by_id(&entries, 74);
    assert_eq!(upper.parent_id, 73, "stacked on the lower mount");

    let slave = by_id(&entries, 76);
    assert_eq!(slave.options, "rw,relatime");
    assert_eq!(slave.super_options, "rw,size=1024k");

    let overlay = by_id(&entries, 81);
    assert_eq!(
        overlay.super_options,
        "rw,lowerdir=/mnt/ovl/lower,upperdir=/mnt/ovl/upper,workdir=/mnt/ovl/work,uuid=on"
    );
    assert_eq!(overlay.parent_id, 78);

    let nfs = by_id(&entries, 84);
    assert!(nfs.super_options.starts_with("rw,vers=4.2,"));
    assert!(!nfs.is_read_only());
}

/// A mount made later on a parent directory hides everything mounted below
/// it. In the captured `odd` fixture, tmpfs `inner` (id 82) was mounted on
/// /mnt/shadow/inner and then tmpfs `cover` (id 83) on /mnt/shadow;
/// `stat /mnt/shadow/inner` reported cover's device (0:54).
#[test]
fn mountinfo_mount_over_parent_hides_deeper_mount() {
    let (_, entries) = mountinfo_of("odd");
    assert_eq!(
        holder(&entries, "/mnt/shadow/inner"),
        (83, "tmpfs", "cover")
    );
    assert_eq!(
        holder(&entries, "/mnt/shadow/inner/file"),
        (83, "tmpfs", "cover")
    );
}

// ------------------------------------------------------------- resolv.conf

fn resolv_of(name: &str) -> resolv::ResolvConf {
    resolv::parse(&read_fixture(&format!("resolv/{name}")))
}

fn addrs(list: &[&str]) -> Vec<SocketAddr> {
    list.iter().map(|a| a.parse().unwrap()).collect()
}

#[test]
fn resolv_pve_installer_default() {
    let conf = resolv_of("pve-default.conf");
    assert_eq!(conf.nameservers, addrs(&["192.168.1.1:53"]));
    assert_eq!(conf.search, vec!["example.com"]);
    assert_eq!(conf.internal_domain(), Some("example.com"));
    assert!(conf.invalid.is_empty());
}

#[test]
fn resolv_comments_blank_lines_and_options() {
    let conf = resolv_of("comments.conf");
    assert_eq!(
        conf.nameservers,
        addrs(&["192.0.2.53:53", "198.51.100.53:53"])
    );
    assert_eq!(conf.search, vec!["lab.example.org"]);
    assert_eq!(conf.internal_domain(), Some("lab.example.org"));
    assert!(conf.invalid.is_empty(), "{:?}", conf.invalid);
}

#[test]
fn resolv_last_search_line_wins() {
    let conf = resolv_of("several-search.conf");
    assert_eq!(conf.nameservers, addrs(&["192.0.2.1:53", "192.0.2.2:53"]));
    assert_eq!(
        conf.search,
        vec!["pve.example.com", "cluster.example.com", "example.com"]
    );
    assert_eq!(conf.internal_domain(), Some("pve.example.com"));
    assert!(conf.invalid.is_empty());
}

#[test]
fn resolv_ipv6_servers_with_scope() {
    let conf = resolv_of("ipv6.conf");
    let link_local = SocketAddr::V6(SocketAddrV6::new(
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1),
        53,
        0,
        2,
    ));
    let mut expected = addrs(&["[::1]:53", "[2001:db8::53]:53"]);
    expected.push(link_local);
    assert_eq!(conf.nameservers, expected);
    match conf.nameservers[2] {
        SocketAddr::V6(v6) => assert_eq!(v6.scope_id(), 2),
        other => panic!("not IPv6: {other}"),
    }
    assert_eq!(conf.internal_domain(), Some("example.com"));
    assert!(conf.invalid.is_empty());
}

#[test]
fn resolv_systemd_resolved_stub() {
    let conf = resolv_of("systemd-resolved.conf");
    assert_eq!(conf.nameservers, addrs(&["127.0.0.53:53"]));
    // "search ." is the root domain: no search domain at all.
    assert!(conf.search.is_empty(), "{:?}", conf.search);
    assert_eq!(conf.internal_domain(), None);
    assert!(conf.invalid.is_empty());
}

#[test]
fn resolv_invalid_nameserver_values_are_kept_apart() {
    let conf = resolv_of("invalid.conf");
    assert_eq!(
        conf.invalid,
        vec![
            "192.0.2.53:5353",
            "[2001:db8::53]:53",
            "dns.example.com",
            "",
            "fe80::1%pve-nosuch0"
        ]
    );
    assert_eq!(conf.nameservers, addrs(&["192.0.2.1:53"]));
    assert_eq!(conf.internal_domain(), Some("example.com"));
}

#[test]
fn resolv_empty_file() {
    assert_eq!(read_fixture("resolv/empty.conf"), "");
    assert_eq!(resolv_of("empty.conf"), resolv::ResolvConf::default());
    assert_eq!(resolv_of("empty.conf").internal_domain(), None);
}

#[test]
fn resolv_domain_keyword_servers() {
    let conf = resolv_of("domain.conf");
    assert_eq!(conf.nameservers, addrs(&["192.0.2.1:53"]));
    assert!(conf.invalid.is_empty());
}

/// resolv.conf(5) makes `domain` and `search` mutually exclusive, the last
/// one winning, and a lone `domain` line sets the search list; PVE's own
/// reader (`PVE::INotify::read_etc_resolv_conf`) matches
/// `^(search|domain)\s+(\S+)`.
#[test]
fn resolv_domain_keyword_sets_the_internal_domain() {
    let conf = resolv_of("domain.conf");
    assert_eq!(conf.search, vec!["example.com"]);
    assert_eq!(conf.internal_domain(), Some("example.com"));
    // pveperf's own pattern wants a `search` line: no DNS INT there.
    let text = read_fixture("resolv/domain.conf");
    assert_eq!(resolv::pveperf_search_domain(&text), None);
}

// ---------------------------------------------------------------- pressure

/// This machine's load and pressure files, as `ceph-node-info` (and
/// `top`) read a node's: cpu's `full` line of zeros (5.13 on), io's both.
#[test]
fn load_and_pressure_stall_information() {
    use pveprobe_parse::pressure;
    let cpu = pressure::pressure(&read_fixture("hosts/this-vm/proc/pressure/cpu")).unwrap();
    assert!(cpu.some.avg300 > 0.0 && cpu.some.total_us > 0);
    assert_eq!(cpu.full.map(|f| f.total_us), Some(0));
    let io = pressure::pressure(&read_fixture("hosts/this-vm/proc/pressure/io")).unwrap();
    assert!(io.full.unwrap().total_us <= io.some.total_us);
    let memory = pressure::pressure(&read_fixture("hosts/this-vm/proc/pressure/memory")).unwrap();
    assert_eq!(memory.some.avg60, 0.0);
    let load = pressure::loadavg(&read_fixture("hosts/this-vm/proc/loadavg")).unwrap();
    assert!(load.iter().all(|l| *l > 0.0), "{load:?}");
}

// ---------------------------------------------------------------- coverage

#[test]
fn every_fixture_is_tested_here() {
    let hosts: BTreeSet<String> = [
        "arm64-ampere",
        "odd",
        "ppc64le-power9",
        "pve-lvm",
        "pve-zfs",
        "s390x-z15",
        "this-vm",
        "x86_64-epyc",
    ]
    .map(String::from)
    .into();
    assert_eq!(names_in("hosts"), hosts);

    let confs: BTreeSet<String> = [
        "comments.conf",
        "domain.conf",
        "empty.conf",
        "invalid.conf",
        "ipv6.conf",
        "pve-default.conf",
        "several-search.conf",
        "systemd-resolved.conf",
    ]
    .map(String::from)
    .into();
    assert_eq!(names_in("resolv"), confs);
}
