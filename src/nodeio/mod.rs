//! The node's I/O sampled, as `top` shows it and `record` keeps it: each
//! interval the node's disks, CPU time and pressure, every running VM's
//! drives through its QMP socket (one short visit each, the socket left at
//! once: `pvestatd` and `qm` need it) and every container's cgroup; each
//! guest drive tied to the host disk behind it; the jobs that run and the
//! storages on the disks; and the hints that name the guest behind a busy
//! disk, a guest that waits far above its disk, a disk at its ceiling, the
//! node's pressure. Read-only: nothing is written.

pub mod behind;
pub mod guest_hints;
pub mod guest_read;
pub mod guests;
pub mod hints;
pub mod jobs;
pub mod oom;
pub mod read;
pub mod recorded;
pub mod sample;
pub mod sampling;
pub mod storages;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pveprobe_parse::iostat::DiskStat;

use read::{Counters, Sources};
use sample::{GuestIo, LastRead, OwnCost, TopSample};

/// The guests' names and what they were given, each VM drive's file and
/// the device number each file is on: read once per guest (a VM's facts
/// when it is first seen).
#[derive(Debug, Default)]
struct Known {
    configs: BTreeMap<(String, u32), Config>,
    vms: BTreeMap<u32, crate::pvevm::qmp::VmFacts>,
    places: BTreeMap<u32, Option<guest_read::Places>>,
    balloons: BTreeMap<u32, read::Balloon>,
    devices: BTreeMap<String, Option<(u32, u32)>>,
}

/// What a guest's config says of it.
#[derive(Debug, Clone, Default)]
struct Config {
    name: Option<String>,
    /// `cores` (a container's CPU count where set) and `memory`, MiB.
    cores: Option<u32>,
    memory_mib: Option<f64>,
}

impl Known {
    fn config(
        &mut self,
        host: &crate::sys::host::Host,
        pve_dir: &Path,
        kind: &str,
        id: u32,
    ) -> &Config {
        self.configs
            .entry((kind.to_string(), id))
            .or_insert_with(|| {
                let (dir, key) = if kind == "ct" {
                    ("lxc", "hostname")
                } else {
                    ("qemu-server", "name")
                };
                let Ok(text) = host.read(pve_dir.join(dir).join(format!("{id}.conf"))) else {
                    return Config::default();
                };
                let value = |key: &str| {
                    text.lines()
                        .take_while(|l| !l.starts_with('['))
                        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                        .map(|v| v.trim().to_string())
                };
                Config {
                    name: value(key),
                    cores: value("cores").and_then(|v| v.parse().ok()),
                    memory_mib: value("memory").and_then(|v| v.parse().ok()),
                }
            })
    }
}

/// The device number of the block device a drive's file is on: the
/// device itself, or for a file the filesystem's; `None` for what is no
/// local path (`rbd:...`).
fn device_of(file: &str) -> Option<(u32, u32)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let path = Path::new(file);
    if !path.is_absolute() {
        return None;
    }
    let md = std::fs::metadata(path).ok()?;
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    Some((
        nix::sys::stat::major(dev) as u32,
        nix::sys::stat::minor(dev) as u32,
    ))
}

/// The name `/proc/diskstats` gives device `dev`.
fn disk_named(dev: Option<(u32, u32)>, disks: &[DiskStat]) -> Option<String> {
    let dev = dev?;
    disks
        .iter()
        .find(|d| (d.major, d.minor) == dev)
        .map(|d| d.name.clone())
}

/// Makes intervals of readings.
pub struct Sampler<'a> {
    sources: &'a Sources,
    node: &'a str,
    known: Known,
    last: LastRead,
    jobs: jobs::JobReader,
    storages: storages::StorageReader,
    kernel_log: oom::KernelLog,
}

impl<'a> Sampler<'a> {
    pub fn new(sources: &'a Sources, node: &'a str) -> Self {
        Sampler {
            sources,
            node,
            known: Known::default(),
            last: LastRead::default(),
            jobs: jobs::JobReader::default(),
            storages: storages::StorageReader::default(),
            // The real kernel's log, from now on; none for a fixture host.
            kernel_log: if sources.host.is_real() {
                oom::KernelLog::open()
            } else {
                oom::KernelLog::default()
            },
        }
    }

    /// Everything read now.
    pub fn read(&mut self) -> Counters {
        let src = self.sources;
        let vms = read::running_vms(&src.qmp_dir);
        // A VM gone (stopped, migrated) is asked for its files anew when
        // it comes back: its disks may have moved.
        self.known.vms.retain(|id, _| vms.contains(id));
        self.known.places.retain(|id, _| vms.contains(id));
        self.known.balloons.retain(|id, _| vms.contains(id));
        let k = &mut self.known;
        let mut c = read::read(src, &vms, &mut k.vms, &mut k.places, &mut k.balloons);
        let discarded = c.disks.iter().map(|d| d.sectors_discarded).sum();
        c.jobs = self.jobs.read(&src.host, &src.jobs, discarded);
        c.kernel_log = self.kernel_log.read_new();
        c
    }

    /// The interval from `a` to `b`.
    pub fn sample(&mut self, a: &Counters, b: &Counters) -> TopSample {
        let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-3);
        self.last.start_from(a);
        let mut guests = self.last.vms(b);
        guests.extend(sample::containers(a, b, secs, &b.disks));
        let pve_dir = self.sources.pve_dir.clone();
        for g in &mut guests {
            g.name = self
                .known
                .config(&self.sources.host, &pve_dir, &g.kind, g.id)
                .name
                .clone();
            if g.kind == "vm" {
                let files = self.known.vms.get(&g.id).map(|f| &f.files);
                let key = g.drive.as_ref().map(|d| format!("drive-{d}"));
                g.file = files
                    .and_then(|f| {
                        f.iter()
                            .find(|(d, _)| Some(d) == key.as_ref() || Some(d) == g.drive.as_ref())
                    })
                    .map(|(_, file)| file.clone());
                g.disk = g.file.as_deref().and_then(|f| {
                    let dev = *self
                        .known
                        .devices
                        .entry(f.to_string())
                        .or_insert_with(|| device_of(f));
                    disk_named(dev, &b.disks)
                });
            }
        }
        guests.sort_by(|x, y| y.iops().total_cmp(&x.iops()).then(x.id.cmp(&y.id)));
        let mut disks = sample::disks(&a.disks, &b.disks, secs);
        let src = self.sources;
        let storages = self.storages.read(&src.host, &src.pve_dir, self.node);
        for d in &mut disks {
            d.guests = guests
                .iter()
                .filter(|g| g.disk.as_deref() == Some(d.name.as_str()))
                .map(GuestIo::label)
                .collect();
            d.storages = storages
                .iter()
                .filter(|s| s.disks.contains(&d.name))
                .map(|s| s.id.clone())
                .collect();
        }
        disks.retain(|d| d.iops() > 0.0 || !d.guests.is_empty());
        disks.sort_by(|x, y| y.util_pct.total_cmp(&x.util_pct).then(x.name.cmp(&y.name)));
        let (guest_use, node_use) = self.guest_use(a, b, secs);
        let mut s = TopSample {
            schema_version: sample::SCHEMA_VERSION,
            kind: sample::KIND.into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            node: self.node.to_string(),
            timestamp: jiff::Timestamp::now().to_string(),
            seconds: secs,
            pressure: sample::pressure(a, b, secs),
            guests,
            disks,
            jobs: b.jobs.clone(),
            storages,
            guest_use,
            node_use,
            own: OwnCost {
                cpu_pct: b.own_cpu_us.saturating_sub(a.own_cpu_us) as f64 / (secs * 1e4),
                rss_kib: b.own_rss_kib,
            },
            hints: Vec::new(),
            notes: Vec::new(),
        };
        s.notes.extend(self.jobs.notes.iter().cloned());
        s.notes.extend(self.storages.notes.iter().cloned());
        if b.io.is_none() {
            s.notes.push(
                "no /proc/pressure/io: this kernel has no PSI (psi=1 on its command line)".into(),
            );
        }
        s.hints = hints::hints(&s);
        s
    }
}

impl Sampler<'_> {
    /// Each running guest's CPU, memory and network from `a` to `b`, and
    /// the node's against them.
    fn guest_use(
        &mut self,
        a: &Counters,
        b: &Counters,
        secs: f64,
    ) -> (Vec<guests::GuestUse>, guests::NodeUse) {
        let mut nets = guests::interfaces(&a.node.net, &b.node.net, secs);
        let mut out = Vec::new();
        let mut given = Vec::new();
        let none = guests::GuestCounters::default();
        for ((kind, id), now) in &b.guests {
            let then = a.guests.get(&(kind.clone(), *id)).unwrap_or(&none);
            let conf = self
                .known
                .config(&self.sources.host, &self.sources.pve_dir, kind, *id)
                .clone();
            let vcpus = if kind == "ct" {
                conf.cores.unwrap_or(0)
            } else {
                self.known
                    .vms
                    .get(id)
                    .map_or(now.vcpus.len(), |f| f.vcpus.len()) as u32
            };
            let cores = b.node.cores.unwrap_or(1) as u32;
            let spread = if vcpus == 0 { cores } else { vcpus.min(cores) };
            let mut cpu = guests::cpu(then, now, secs, spread);
            cpu.vcpus = vcpus;
            let mut memory = guests::memory(then, now, secs);
            if kind == "ct" {
                memory.max_mib = Some(conf.memory_mib.unwrap_or(512.0));
            } else if memory.max_mib.is_none() {
                memory.max_mib = conf.memory_mib;
            }
            given.push((cpu.vcpus, memory.max_mib.unwrap_or(0.0)));
            out.push(guests::GuestUse {
                kind: kind.clone(),
                id: *id,
                name: conf.name,
                cpu,
                memory,
                net: nets.remove(&(kind.clone(), *id)).unwrap_or_default(),
                oom_kills: then
                    .oom_kills
                    .zip(now.oom_kills)
                    .map_or(0, |(x, y)| y.saturating_sub(x)),
            });
        }
        // A guest whose tap or veth is up runs, read or not (its socket
        // held, its pidfile missing): its interfaces are shown.
        for ((kind, id), net) in nets {
            let name = self
                .known
                .config(&self.sources.host, &self.sources.pve_dir, &kind, id)
                .name
                .clone();
            out.push(guests::GuestUse {
                kind,
                id,
                name,
                net,
                ..guests::GuestUse::default()
            });
        }
        let full = sample::memory_full(a, b, secs);
        let mut node = guests::node_use(&a.node, &b.node, &given, full);
        // A VM killed in the interval is gone from `b`: its PID is `a`'s.
        let pids = a
            .guests
            .iter()
            .chain(&b.guests)
            .filter_map(|(key, c)| Some((c.pid?, key.clone())))
            .collect();
        node.kills = oom::kills(&b.kernel_log, &pids, oom::wall_of);
        (out, node)
    }
}

/// The default socket and config places.
pub fn default_sources() -> Sources {
    Sources {
        host: crate::sys::host::Host::real(),
        qmp_dir: PathBuf::from(crate::pvevm::qmp::RUN_DIR),
        pve_dir: PathBuf::from(crate::pvestorage::ETC_PVE),
        jobs: jobs::JobSources::under_pve_dir(std::path::Path::new(crate::pvestorage::ETC_PVE)),
    }
}
