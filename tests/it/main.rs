//! pveprobe's integration tests: one binary, a module per area, so the
//! crate and the rigs in `common` compile and link once. They run the real
//! binary against real loop devices, filesystems, a DNS server on loopback,
//! FUSE faults, network namespaces and fakes of PVE's tools (`common` has
//! the rigs; `fixtures/README.md` says where each fixture comes from).
//!
//! Tests that need root skip visibly without it and fail under `CI`
//! (`cli::ci_rules`). The network's tests compare round trips and
//! throughput with ping and iperf3: `scripts/test` runs them after the
//! others, one at a time (`-- network:: --test-threads=1`).

mod common;

/// `ceph` against a real one-node Ceph cluster.
mod ceph;
/// `ceph --clients` from several simulated nodes at once.
mod ceph_clients;
/// The command line, the skip rule, the host-wide lock.
mod cli;
/// `pveprobe cluster` against simulated nodes.
mod cluster;
/// `datastore PATH` on loop ext4, xfs and btrfs, and a datastore laid
/// out in PBS's formats.
mod datastore;
/// DNS EXT and DNS INT against real DNS servers on loopback.
mod dns;
/// The README and the guides: their links resolve.
mod docs;
/// `-x`: the device tests, SYNC WRITE 4K, SUSTAINED WRITE, PBS's CPU figures.
mod extended;
/// `guest VMID` against Debian's real QEMU guest agent.
mod guest;
/// The layering of src/: no import circles.
mod layers;
/// pveperf's eight lines on loop devices, as `pveperf`, under strace.
mod lines;
/// `load`'s worker VM booted for real, and its refusal elsewhere.
mod load;
/// `cluster --net` and `net` between namespaces, and the rig itself.
mod network;
/// JSON, CSV, compare, metrics and pictures.
mod output;
/// The parsers against fixtures from real hosts.
mod parsers;
/// `qualify DEVICE`: refusals of devices in use, its writes, discard, signals.
mod qualify;
/// `record`'s store: SIGKILL in a loop, damage, a full filesystem.
mod record;
/// `record --metric-servers`: real InfluxDB 1.6 and carbon-cache on loopback.
mod record_servers;
/// Faults, hostile input and signals: nothing left behind.
mod safety;
/// The storage stack behind a figure: loop devices and fixture hosts.
mod storage;
/// PVE storages by ID, against a fake `pvesm` whose volumes are loop devices.
mod storages;
/// `top`: real VMs' QMP sockets, a container's cgroup, the live view in tmux.
mod top;
/// `top`'s whole guest (CPU ready and limited) against real VMs in cgroups.
mod top_guests;
/// `top`'s other jobs and storages: PVE's task list, stand-in zpool, ceph, lvs.
mod top_jobs;
