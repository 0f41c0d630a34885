//! How pveprobe measures, whatever it measures: timed windows
//! ([`window`]), aligned buffers and fast incompressible data ([`iobuf`])
//! and the I/O engine that the probe's extended tests and qualify share
//! ([`engine`]); and the measurements more than one command makes:
//! BUFFERED READS and AVERAGE SEEK TIME on a block device, opened read-only
//! ([`blockdev`]: the probe, qualify, pvestorage), HD SIZE's filesystem
//! ([`filesystem`]), SEQ WRITE and SYNC WRITE on files ([`seqwrite`],
//! [`syncwrite`]: the probe and the guest side), a long write second by
//! second ([`sustained`]: the probe and qualify), a scratch volume's
//! prefill ([`volume`]), and the probe's test plan with its costs
//! ([`plan`]: the probe, `--storage`, `cluster`'s timeouts). What a
//! measurement returns is the model's (its statistics and latency
//! histograms too).

pub mod blockdev;
pub mod engine;
pub mod filesystem;
pub mod iobuf;
pub mod plan;
pub mod seqwrite;
pub mod sustained;
pub mod syncwrite;
pub mod together;
pub mod volume;
pub mod window;
