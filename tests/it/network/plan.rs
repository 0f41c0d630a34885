//! Which links a run plans, said by `--dry-run` (nothing runs, no root):
//! without a migration network, the migration path is the nodes' cluster
//! addresses, left out (and said) where those are corosync's.

use crate::common::{pveprobe, stderr, stdout, workdir};

/// `.members` as pmxcfs writes it, and corosync.conf with each node's
/// ring0_addr.
fn cluster(dir: &std::path::Path, members: [&str; 2], ring0: [&str; 2]) {
    std::fs::write(
        dir.join(".members"),
        format!(
            "{{\n\"nodename\": \"pve1\",\n\"version\": 5,\n\"cluster\": {{ \"name\": \"c\", \"version\": 2, \"nodes\": 2, \"quorate\": 1 }},\n\"nodelist\": {{\n  \"pve1\": {{ \"id\": 1, \"online\": 1, \"ip\": \"{}\"}},\n  \"pve2\": {{ \"id\": 2, \"online\": 1, \"ip\": \"{}\"}}\n  }}\n}}\n",
            members[0], members[1]
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("corosync.conf"),
        format!(
            "nodelist {{\n  node {{\n    name: pve1\n    nodeid: 1\n    ring0_addr: {}\n  }}\n  node {{\n    name: pve2\n    nodeid: 2\n    ring0_addr: {}\n  }}\n}}\n\ntotem {{\n  cluster_name: c\n  interface {{\n    linknumber: 0\n  }}\n}}\n",
            ring0[0], ring0[1]
        ),
    )
    .unwrap();
}

fn dry_run(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    pveprobe()
        .args(["net", "--dry-run", "--net-throughput", "--members"])
        .arg(dir.join(".members"))
        .arg("--pve-config")
        .arg(dir)
        .args(args)
        .args(["pve1", "pve2"])
        .output()
        .unwrap()
}

#[test]
fn without_a_migration_network_the_path_is_the_cluster_addresses_unless_corosyncs() {
    let dir = workdir();
    let d = dir.path();
    // One network for all (the common case): corosync's, not filled.
    cluster(d, ["10.0.0.1", "10.0.0.2"], ["10.0.0.1", "10.0.0.2"]);
    let out = dry_run(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("corosync0 (corosync): latency and MTU probes only\n"),
        "{text}"
    );
    assert!(!text.contains("\nmigration ("), "{text}");
    assert!(
        text.contains("note: migration: no migration network in datacenter.cfg, so PVE migrates over the nodes' cluster addresses, corosync0's"),
        "{text}"
    );
    // Corosync on a network of its own: the path, at the members' addresses.
    cluster(d, ["10.0.0.1", "10.0.0.2"], ["10.9.0.1", "10.9.0.2"]);
    let out = dry_run(d, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("migration (migration, the nodes' cluster addresses): latency, MTU, TCP throughput and the secure migration channel")
            && text.contains("  pve1-pve2: net-probe on pve1 (10.0.0.1) -> net-serve on pve2 (10.0.0.2)\n"),
        "{text}"
    );
    assert!(!text.contains("note:"), "{text}");
    // datacenter.cfg's network wins; `--link migration=CIDR` moves it.
    std::fs::write(
        d.join("datacenter.cfg"),
        "migration: secure,network=10.7.0.0/24\n",
    )
    .unwrap();
    let text = stdout(&dry_run(d, &[]));
    assert!(
        text.contains("migration (migration 10.7.0.0/24): "),
        "{text}"
    );
    let text = stdout(&dry_run(d, &["--link", "migration=10.8.0.0/24"]));
    assert!(
        text.contains(
            "migration (migration 10.8.0.0/24): latency, MTU, TCP throughput and the secure"
        ),
        "{text}"
    );
    assert!(!text.contains("10.7.0.0"), "{text}");
    // A corosync link's name with a network: refused, nothing run.
    let out = dry_run(d, &["--link", "corosync0=10.8.0.0/24"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("ringN_addr"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
}
