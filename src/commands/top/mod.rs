//! `pveprobe top`: which guest and which job make the node's IO delay,
//! read-only and live. Each interval it reads the node's disks, CPU time
//! and pressure, every running VM's drives through its QMP socket (one
//! short visit each, the socket left at once: `pvestatd` and `qm` need
//! it) and every container's cgroup; ties each guest drive to the host
//! disk behind it; and names the guest behind a busy disk, a guest that
//! waits far above its disk, a disk at its ceiling, the node's pressure.
//! Nothing is written but its output.

pub mod args;
pub mod behind;
pub mod hints;
pub mod jobs;
pub mod plot;
pub mod read;
pub mod render;
pub mod run;
pub mod sample;
pub mod storages;
pub mod terminal;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pveprobe_parse::iostat::DiskStat;

use crate::commands::common::work::Work;
use crate::sys::interrupt::Interrupt;
use read::{Counters, Sources};
use sample::{GuestIo, LastRead, OwnCost, TopSample};

/// What the run reads and for how long.
#[derive(Debug, Clone)]
pub struct TopRequest {
    pub sources: Sources,
    pub node: String,
    pub interval: Duration,
    /// Stop after this many intervals.
    pub count: Option<u64>,
    /// Stop after this long.
    pub seconds: Option<Duration>,
}

/// The guests' names, each VM drive's file and the device number each
/// file is on: read once per guest (a VM's files when it is first seen).
#[derive(Debug, Default)]
struct Known {
    names: BTreeMap<(String, u32), Option<String>>,
    files: BTreeMap<u32, Vec<(String, String)>>,
    devices: BTreeMap<String, Option<(u32, u32)>>,
}

impl Known {
    fn name(
        &mut self,
        host: &crate::sys::host::Host,
        pve_dir: &Path,
        kind: &str,
        id: u32,
    ) -> Option<String> {
        self.names
            .entry((kind.to_string(), id))
            .or_insert_with(|| {
                let (dir, key) = if kind == "ct" {
                    ("lxc", "hostname")
                } else {
                    ("qemu-server", "name")
                };
                let text = host
                    .read(pve_dir.join(dir).join(format!("{id}.conf")))
                    .ok()?;
                text.lines()
                    .take_while(|l| !l.starts_with('['))
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                    .map(|v| v.trim().to_string())
            })
            .clone()
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
    req: &'a TopRequest,
    known: Known,
    last: LastRead,
    jobs: jobs::JobReader,
    storages: storages::StorageReader,
}

impl<'a> Sampler<'a> {
    pub fn new(req: &'a TopRequest) -> Self {
        Sampler {
            req,
            known: Known::default(),
            last: LastRead::default(),
            jobs: jobs::JobReader::default(),
            storages: storages::StorageReader::default(),
        }
    }

    /// Everything read now.
    pub fn read(&mut self) -> Counters {
        let src = &self.req.sources;
        let vms = read::running_vms(&src.qmp_dir);
        // A VM gone (stopped, migrated) is asked for its files anew when
        // it comes back: its disks may have moved.
        self.known.files.retain(|id, _| vms.contains(id));
        let mut c = read::read(src, &vms, &mut self.known.files);
        c.jobs = self.jobs.read(&src.host, &src.jobs);
        c
    }

    /// The interval from `a` to `b`.
    pub fn sample(&mut self, a: &Counters, b: &Counters) -> TopSample {
        let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-3);
        self.last.start_from(a);
        let mut guests = self.last.vms(b);
        guests.extend(sample::containers(a, b, secs, &b.disks));
        let pve_dir = self.req.sources.pve_dir.clone();
        for g in &mut guests {
            g.name = self
                .known
                .name(&self.req.sources.host, &pve_dir, &g.kind, g.id);
            if g.kind == "vm" {
                let files = self.known.files.get(&g.id);
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
        let src = &self.req.sources;
        let storages = self.storages.read(&src.host, &src.pve_dir, &self.req.node);
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
        let mut s = TopSample {
            schema_version: sample::SCHEMA_VERSION,
            kind: sample::KIND.into(),
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            node: self.req.node.clone(),
            timestamp: jiff::Timestamp::now().to_string(),
            seconds: secs,
            pressure: sample::pressure(a, b, secs),
            guests,
            disks,
            jobs: b.jobs.clone(),
            storages,
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

/// A live view's run: the request, when the viewer quits, and where each
/// interval goes as it ends (written, kept for `--plot`).
pub struct TopRun<'a> {
    pub req: &'a TopRequest,
    pub quit: &'a dyn Fn() -> bool,
    pub each: &'a dyn Fn(&TopSample) -> Result<(), TopError>,
}

/// An interval that could not be written (or recorded).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TopError(pub String);

/// Samples until `count` intervals, `seconds`, a signal or `quit()`;
/// each interval given to `each` as it ends, one at a time. The
/// intervals made.
impl Work for TopRun<'_> {
    type Report = u64;
    type Error = TopError;

    fn run(&self, interrupt: &Interrupt) -> Result<u64, TopError> {
        let (req, stop, emit) = (self.req, self.quit, self.each);
        let mut sampler = Sampler::new(req);
        let started = Instant::now();
        let mut prev = sampler.read();
        let mut made = 0;
        loop {
            let due = prev.at + req.interval;
            while Instant::now() < due {
                if interrupt.signal().is_some() || stop() {
                    return Ok(made);
                }
                std::thread::sleep((due - Instant::now()).min(Duration::from_millis(50)));
            }
            let now = sampler.read();
            let s = sampler.sample(&prev, &now);
            emit(&s)?;
            made += 1;
            prev = now;
            if req.count.is_some_and(|c| made >= c)
                || req
                    .seconds
                    .is_some_and(|d| started.elapsed() + req.interval / 2 >= d)
            {
                return Ok(made);
            }
        }
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
