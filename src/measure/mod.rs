//! How pveprobe measures, whatever it measures: timed windows and
//! interruption ([`window`]), aligned buffers and fast incompressible data
//! ([`iobuf`]) and the I/O engine that the probe's extended tests and
//! qualify share ([`engine`]). What a measurement returns is the model's
//! (its statistics and latency histograms too).

pub mod blockdev;
pub mod engine;
pub mod filesystem;
pub mod iobuf;
pub mod plan;
pub mod seqwrite;
pub mod sustained;
pub mod syncwrite;
pub mod volume;
pub mod window;
