//! The `-x` I/O figures as data: the engine that ran a queue-depth job and
//! what the job counted ([`IoStats`]), the mixed test's result
//! ([`MixedFigure`]) and SEQ WRITE's ([`SeqWriteFigure`]). How they are
//! measured is `extended`'s business.

use std::time::Duration;

use crate::model::latency::Latency;

/// The engine that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    IoUring,
    Psync,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::IoUring => "io_uring",
            Engine::Psync => "psync",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct IoStats {
    pub engine: Engine,
    pub block: usize,
    pub depth: usize,
    pub reads: u64,
    pub writes: u64,
    pub elapsed: Duration,
    pub read_latency: Latency,
    pub write_latency: Latency,
    /// User plus system CPU time of the process during the job.
    pub cpu: Duration,
    /// Why the preferred engine did not run, if it did not.
    pub fallback: Option<String>,
}

impl IoStats {
    fn per_sec(&self, n: u64) -> f64 {
        super::per_second(n as f64, self.elapsed)
    }

    pub fn read_iops(&self) -> f64 {
        self.per_sec(self.reads)
    }

    pub fn write_iops(&self) -> f64 {
        self.per_sec(self.writes)
    }

    pub fn read_mib_per_sec(&self) -> f64 {
        self.read_iops() * self.block as f64 / f64::from(1u32 << 20)
    }

    /// CPU microseconds per operation.
    pub fn cpu_us_per_op(&self) -> f64 {
        let ops = self.reads + self.writes;
        if ops == 0 {
            0.0
        } else {
            self.cpu.as_secs_f64() * 1e6 / ops as f64
        }
    }
}

/// The mixed test's result and how its file was opened.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedFigure {
    pub stats: IoStats,
    /// The file was opened with O_DIRECT (false where the filesystem refuses it).
    pub direct: bool,
    pub file_bytes: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SeqWriteFigure {
    pub bytes: u64,
    pub elapsed: Duration,
    pub zero_data: bool,
}

impl SeqWriteFigure {
    pub fn mib_per_sec(&self) -> f64 {
        super::mib_per_second(self.bytes, self.elapsed)
    }
}
