//! What a worker VM and its node say over the VM's serial port: one JSON
//! object a line, each behind [`PREFIX`], so the kernel's or firmware's
//! own lines on the port are told apart and skipped.

use serde::{Deserialize, Serialize};

use crate::model::latency::LatencySummary;

/// What starts every line of the protocol, both ways.
pub const PREFIX: &str = "pveprobe-worker ";

/// The most a protocol line holds, in bytes (a line longer than this is
/// no line of ours).
pub const MAX_LINE: usize = 64 << 10;

/// What a worker says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum FromWorker {
    /// Up, with its disks: the first line, once.
    Hello {
        version: String,
        disks: Vec<WorkerDisk>,
    },
    /// A job's result.
    Result(WorkerResult),
    /// Why a job or the worker failed.
    Error { message: String },
}

/// What the node says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToWorker {
    Job(WorkerJob),
    /// Power off.
    Bye,
}

/// One raw virtual disk of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerDisk {
    /// The kernel's name: `sda`.
    pub name: String,
    pub bytes: u64,
    pub logical_block: u64,
}

/// A workload on all of a worker's disks at once: `workers` jobs, dealt
/// to the disks in turn, each with `iodepth` operations in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerJob {
    pub block: usize,
    /// Reads among the operations, in percent.
    pub read_pct: u32,
    /// Random offsets among the operations, in percent.
    pub random_pct: u32,
    pub workers: usize,
    pub iodepth: usize,
    pub seconds: f64,
}

/// What a job did, over all its workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerResult {
    pub workers: usize,
    pub reads: u64,
    pub writes: u64,
    /// The longest worker's time, in seconds.
    pub seconds: f64,
    pub read_latency: Option<LatencySummary>,
    pub write_latency: Option<LatencySummary>,
    /// The I/O engine the workers ran on (`io_uring`, `psync`).
    pub engine: String,
}

impl WorkerResult {
    /// Operations a second, reads and writes together.
    pub fn iops(&self) -> f64 {
        if self.seconds > 0.0 {
            (self.reads + self.writes) as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// A message as one protocol line, newline included.
pub fn line<T: Serialize>(message: &T) -> String {
    let json = serde_json::to_string(message).expect("the protocol's types serialise");
    format!("{PREFIX}{json}\n")
}

/// The message a line holds, if it is a protocol line (`None` for the
/// kernel's and others' lines); `Err` for a protocol line that is no
/// message of type `T`.
pub fn read<T: for<'de> Deserialize<'de>>(line: &str) -> Option<Result<T, String>> {
    let json = line.trim_end_matches(['\r', '\n']).strip_prefix(PREFIX)?;
    Some(serde_json::from_str(json).map_err(|e| format!("{e}: {}", crate::model::printable(json))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_back_and_other_lines_are_skipped() {
        let job = ToWorker::Job(WorkerJob {
            block: 4096,
            read_pct: 70,
            random_pct: 80,
            workers: 8,
            iodepth: 16,
            seconds: 2.0,
        });
        let text = line(&job);
        assert!(
            text.starts_with("pveprobe-worker {\"type\":\"job\""),
            "{text}"
        );
        assert_eq!(read::<ToWorker>(&text), Some(Ok(job)));
        assert_eq!(
            read::<ToWorker>("[    0.000000] Linux version 6.1\r\n"),
            None
        );
        assert!(matches!(
            read::<ToWorker>("pveprobe-worker {\"type\":\"nonsense\"}"),
            Some(Err(_))
        ));
        let r = WorkerResult {
            workers: 2,
            reads: 700,
            writes: 300,
            seconds: 2.0,
            read_latency: None,
            write_latency: None,
            engine: "io_uring".into(),
        };
        assert_eq!(r.iops(), 500.0);
    }
}
