//! How pveprobe measures, whatever it measures: timed windows and
//! interruption ([`window`]), statistics ([`stats`]), per-operation latency
//! ([`latency`]), aligned buffers ([`iobuf`]) and the I/O engine that the
//! probe's extended tests and qualify share ([`engine`]).

pub mod engine;
pub mod iobuf;
pub mod latency;
pub mod stats;
pub mod window;
