//! `--extended` (`-x`): the benchmarks admins run after pveperf, done the
//! way the reference tools do them: bench.sh's dd write speed (SEQ WRITE),
//! O_DIRECT sequential reads at queue depth 8, IOMeter-style 4 KiB random
//! reads at depth 1 and 32, IOMeter's 70/30 mix at depth 16, and the latency
//! percentiles of a loop that writes 4,001 bytes and then fsyncs them (FSYNC
//! LATENCY; FSYNCS/SECOND's loop, in pveperf's order, syncs before it
//! writes). Device tests only read; writes go to files in the private
//! scratch directory.

pub mod cpubench;
