//! A run's scratch space in one pool (its RADOS namespace and RBD image,
//! removed on every way out) and the pool jobs run in it: `rados bench`
//! and `rbd bench`, each job's figure.

use super::*;

/// How long `rados cleanup` may take before what it left is removed
/// object by object (it waits on a full pool).
const CLEANUP_FIRST: Duration = Duration::from_secs(60);
/// Objects one `rados rm` removes.
const RM_AT_ONCE: usize = 100;

/// A run's scratch space in one pool: its RADOS namespace and its RBD
/// image. [`Scratch::clean`] removes both and says what it could not.
pub struct Scratch<'a> {
    tools: &'a CephTools<'a>,
    pool: String,
    namespace: String,
    image: Option<String>,
}

impl<'a> Scratch<'a> {
    pub fn new(tools: &'a CephTools<'a>, pool: &str, run_id: &str) -> Self {
        Scratch {
            tools,
            pool: pool.to_string(),
            namespace: run_id.to_string(),
            image: None,
        }
    }

    /// `rados -p POOL -N NAMESPACE args`: the scratch namespace's call.
    fn rados_call<'b>(
        &'b self,
        args: &[&'b str],
        limit: Duration,
        stop: bool,
    ) -> super::CephCall<'b> {
        let mut all = vec!["-p", self.pool.as_str(), "-N", self.namespace.as_str()];
        all.extend_from_slice(args);
        self.tools.call("rados", &all, limit, stop)
    }

    /// `rados bench`'s objects, and anything else, out of the namespace.
    fn clear_namespace(&self) -> Result<(), CephError> {
        // Every bench object starts so; a killed run's too. On a full pool
        // `cleanup` waits for room that deleting would make: what it left
        // by its limit goes below, removed with --force-full.
        let c = self.rados_call(
            &["cleanup", "--prefix", "benchmark_data"],
            CLEANUP_FIRST,
            false,
        );
        let cleaned = c.answer(child::run(c.program, &c.argv, &c.opts));
        // What is left: the run's metadata object, or all of it.
        let c = self.rados_call(&["ls"], READ_LIMIT, false);
        let left = c.answer(child::run(c.program, &c.argv, &c.opts))?;
        let objects: Vec<&str> = left
            .lines()
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect();
        for chunk in objects.chunks(RM_AT_ONCE) {
            let mut args = vec!["rm", "--force-full"];
            args.extend_from_slice(chunk);
            let c = self.rados_call(&args, CLEAN_LIMIT, false);
            c.answer(child::run(c.program, &c.argv, &c.opts))?;
        }
        // Whatever `cleanup` said, the namespace is empty now.
        drop(cleaned);
        Ok(())
    }

    /// Removes what the run made in this pool; the list of what is left.
    pub fn clean(&mut self) -> Vec<String> {
        let mut left = Vec::new();
        if let Err(e) = self.clear_namespace() {
            left.push(format!(
                "objects in namespace {} of pool {} ({e}); `rados -p {} -N {} cleanup --prefix benchmark_data` removes them",
                self.namespace, self.pool, self.pool, self.namespace
            ));
        } else {
            let c = self.rados_call(&["ls"], READ_LIMIT, false);
            match c.answer(child::run(c.program, &c.argv, &c.opts)) {
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) => left.push(format!(
                    "{} object(s) in namespace {} of pool {}",
                    text.lines().count(),
                    self.namespace,
                    self.pool
                )),
                Err(e) => left.push(format!(
                    "namespace {} of pool {}: {e}",
                    self.namespace, self.pool
                )),
            }
        }
        if let Some(image) = self.image.take() {
            let spec = format!("{}/{image}", self.pool);
            let c = self
                .tools
                .call("rbd", &["rm", "--no-progress", &spec], CLEAN_LIMIT, false);
            let removed = c.answer(child::run(c.program, &c.argv, &c.opts));
            if let Err(e) = removed.or_else(|e| {
                if e.to_string().contains("No such file") {
                    Ok(String::new())
                } else {
                    Err(e)
                }
            }) {
                left.push(format!(
                    "RBD image {spec} ({e}); `rbd rm {spec}` removes it"
                ));
            }
        }
        left
    }
}

/// A job of the pool benches.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PoolJob {
    /// `rados_write_4m`, `rados_seq_4m`, `rados_rand_4m`, `rados_write_4k_t1`,
    /// `rados_write_4k`, `rbd_write_4k`, `rbd_read_4k`.
    pub key: String,
    pub label: String,
    pub figure: BenchFigure,
    /// Each OSD's own view of the job (see `drag`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub osds: Vec<super::drag::OsdInJob>,
    /// Run from several nodes at once (`--clients`): each client's own
    /// figure; `figure` is then their total.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<super::clients::wire::ClientFigure>,
}

impl PoolJob {
    /// Job `key` run from this node alone: its figure and its OSDs' view.
    pub fn alone(
        key: &str,
        label: &str,
        (figure, osds): (BenchFigure, Vec<super::drag::OsdInJob>),
    ) -> Self {
        PoolJob {
            key: key.into(),
            label: label.into(),
            figure,
            osds,
            clients: Vec::new(),
        }
    }

    /// Its label, with the count of clients it ran from where several.
    pub fn name(&self) -> String {
        match self.clients.len() {
            0 => self.label.clone(),
            n => format!("{} from {n} clients", self.label),
        }
    }
}

/// The rados bench jobs: key, label, mode, block, threads.
pub const RADOS_JOBS: [(&str, &str, &str, u64, u32); 5] = [
    ("rados_write_4m", "RADOS WRITE 4M", "write", OBJECT, THREADS),
    ("rados_seq_4m", "RADOS SEQ READ 4M", "seq", OBJECT, THREADS),
    (
        "rados_rand_4m",
        "RADOS RAND READ 4M",
        "rand",
        OBJECT,
        THREADS,
    ),
    (
        "rados_write_4k_t1",
        "RADOS WRITE 4K 1 THREAD",
        "write",
        SMALL,
        1,
    ),
    ("rados_write_4k", "RADOS WRITE 4K", "write", SMALL, THREADS),
];

/// The rbd bench jobs: key, label, io type.
pub const RBD_JOBS: [(&str, &str, &str); 2] = [
    ("rbd_write_4k", "RBD RAND WRITE 4K", "write"),
    ("rbd_read_4k", "RBD RAND READ 4K", "read"),
];

fn rados_figure(r: &parse::RadosBench, block: u64, threads: u32) -> BenchFigure {
    BenchFigure {
        block,
        threads,
        seconds: r.total_time_run,
        ops: r.ops,
        mib_s: r.bandwidth,
        iops: r.average_iops,
        avg_lat_ms: Some(r.average_latency * 1e3),
        max_lat_ms: Some(r.max_latency * 1e3),
        per_second: r.seconds.iter().map(|s| s.cur_bw).collect(),
    }
}

fn rbd_figure(r: &parse::RbdBench, threads: u32) -> BenchFigure {
    BenchFigure {
        block: SMALL,
        threads,
        seconds: r.elapsed,
        ops: r.ops,
        mib_s: r.bytes_per_sec / 1048576.0,
        iops: r.ops_per_sec,
        // rbd bench gives no latency; its mean follows from the threads.
        avg_lat_ms: (r.ops_per_sec > 0.0).then(|| f64::from(threads) / r.ops_per_sec * 1e3),
        max_lat_ms: None,
        per_second: r
            .seconds
            .iter()
            .map(|s| s.bytes_per_sec / 1048576.0)
            .collect(),
    }
}

/// A rados bench job: key, label, mode, block, threads.
pub type RadosJob = (&'static str, &'static str, &'static str, u64, u32);

/// The rados bench job of `key`.
pub fn rados_job(key: &str) -> Option<RadosJob> {
    RADOS_JOBS.into_iter().find(|j| j.0 == key)
}

impl Scratch<'_> {
    /// The namespace its objects go into (and its image's name).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Refuses a pool whose room (`cap`, a quarter of MAX AVAIL) is below
    /// what one write job's threads have in flight.
    pub fn check_room(&self, cap: Option<u64>) -> Result<(), CephError> {
        if cap.is_some_and(|c| c < u64::from(THREADS) * OBJECT) {
            return Err(CephError::Tool {
                command: "rados bench".into(),
                why: format!(
                    "pool {} has too little room: a quarter of its MAX AVAIL is below {}",
                    self.pool,
                    crate::model::human::Size(u64::from(THREADS) * OBJECT).whole()
                ),
            });
        }
        Ok(())
    }

    /// One `rados bench` run of `job` for `seconds`, a write writing at
    /// most `cap` bytes (in objects of its block); its figure.
    pub fn rados_bench(
        &self,
        job: RadosJob,
        seconds: u32,
        cap: Option<u64>,
    ) -> Result<BenchFigure, CephError> {
        let (_, _, mode, block, threads) = job;
        let secs = seconds.to_string();
        let limit = Duration::from_secs(u64::from(seconds) * 3 + 120);
        let (b, t) = (block.to_string(), threads.to_string());
        let most = cap.map(|c| (c / block).max(1).to_string());
        let mut args = vec!["bench", secs.as_str(), mode, "-t", t.as_str()];
        if mode == "write" {
            args.extend(["-b", b.as_str(), "-O", b.as_str(), "--no-cleanup"]);
            if let Some(most) = &most {
                args.extend(["--max-objects", most.as_str()]);
            }
        }
        args.extend(["--run-name", self.namespace.as_str(), "--format", "json"]);
        let c = self.rados_call(&args, limit, true);
        let text = c.answer(child::run(c.program, &c.argv, &c.opts))?;
        Ok(rados_figure(&parse::rados_bench(&text)?, block, threads))
    }

    /// After job `key`: the 4 MiB objects stay for the reads that follow;
    /// the reads' end and each small run's objects go at once.
    pub fn after_job(&self, key: &str) -> Result<(), CephError> {
        if key == "rados_write_4m" || key == "rados_seq_4m" {
            return Ok(());
        }
        let c = self.rados_call(
            &["cleanup", "--prefix", "benchmark_data"],
            CLEAN_LIMIT,
            false,
        );
        c.answer(child::run(c.program, &c.argv, &c.opts)).map(drop)
    }

    /// The rados bench jobs in order, at most `cap` bytes written at a
    /// time. Stops at the first error.
    pub fn rados_jobs(
        &self,
        seconds: u32,
        cap: Option<u64>,
        watch: &super::drag::Watch,
        jobs: &mut Vec<PoolJob>,
    ) -> Result<(), CephError> {
        self.check_room(cap)?;
        for job in RADOS_JOBS {
            let (key, label, mode, block, threads) = job;
            self.tools.progress.step(&format!(
                "pool {}: rados bench {seconds} {mode}, {} KiB, {threads} thread(s)",
                self.pool,
                block >> 10
            ));
            let watched = watch.around(mode == "write", || self.rados_bench(job, seconds, cap))?;
            jobs.push(PoolJob::alone(key, label, watched));
            self.after_job(key)?;
        }
        Ok(())
    }

    /// Makes the scratch image of `bytes` (at least [`args::RBD_MIN_BYTES`]).
    /// `bytes` is already capped at a quarter of the pool's room: the image
    /// can hold no more than its size, however its blocks are allocated.
    pub fn make_image(&mut self, bytes: u64) -> Result<(), CephError> {
        // Smaller only when a quarter of the pool's room is (--rbd-size is
        // refused below it).
        if bytes < args::RBD_MIN_BYTES {
            return Err(CephError::Tool {
                command: "rbd bench".into(),
                why: format!(
                    "pool {} has too little room for a scratch image: a quarter of its room is {}, the image needs at least 16 MiB",
                    self.pool,
                    crate::model::human::Size(bytes).whole()
                ),
            });
        }
        let size = format!("{}M", bytes.div_ceil(1 << 20));
        // Counted as made before it is, and not stopped by the interrupt
        // (it takes a moment): a Ctrl-C while it runs must not leave an
        // image nobody removes. The interrupt is seen at the bench.
        self.image = Some(self.namespace.clone());
        let spec = self.image_spec();
        let c = self.tools.call(
            "rbd",
            &["create", "--size", &size, &spec],
            READ_LIMIT,
            false,
        );
        c.answer(child::run(c.program, &c.argv, &c.opts))?;
        Ok(())
    }

    /// `POOL/IMAGE` of its scratch image.
    fn image_spec(&self) -> String {
        format!("{}/{}", self.pool, self.namespace)
    }

    /// One `rbd bench` run on the scratch image: `bytes` of 4 KiB random
    /// `io` (`write` or `read`); its figure.
    pub fn rbd_bench(&self, io: &str, bytes: u64) -> Result<BenchFigure, CephError> {
        let total = bytes.to_string();
        let threads = THREADS.to_string();
        let spec = self.image_spec();
        let c = self.tools.call(
            "rbd",
            &[
                "bench",
                "--io-type",
                io,
                "--io-size",
                "4096",
                "--io-threads",
                &threads,
                "--io-total",
                &total,
                "--io-pattern",
                "rand",
                &spec,
            ],
            Duration::from_secs(3600),
            true,
        );
        let text = c.answer(child::run(c.program, &c.argv, &c.opts))?;
        Ok(rbd_figure(&parse::rbd_bench(&text)?, THREADS))
    }

    /// The rbd bench jobs on a scratch image of `bytes`.
    pub fn rbd_jobs(
        &mut self,
        bytes: u64,
        watch: &super::drag::Watch,
        jobs: &mut Vec<PoolJob>,
    ) -> Result<(), CephError> {
        self.make_image(bytes)?;
        for (key, label, io) in RBD_JOBS {
            self.tools.progress.step(&format!(
                "pool {}: rbd bench --io-type {io}, 4 KiB random, {THREADS} threads, {}",
                self.pool,
                crate::model::human::Size(bytes).whole()
            ));
            let watched = watch.around(io == "write", || self.rbd_bench(io, bytes))?;
            jobs.push(PoolJob::alone(key, label, watched));
        }
        Ok(())
    }
}
