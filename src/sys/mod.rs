//! What pveprobe needs of the host it runs on: the seam through which
//! `/proc`, `/sys` and config files are read ([`host`]), and those kept
//! open to be read again each interval ([`kept`]); the two ways a
//! program is run, once ([`child::run`]: time-limited, output capped) or
//! talked to in lines while it runs ([`conversation`]); how many CPUs,
//! the one count ([`cpus`]); the signal flag ([`interrupt`]); one probe at
//! a time per host ([`lock`]); and the private scratch directory, removed
//! on every way out ([`scratch`]). Nothing here prints: what it has to
//! say, it returns.

pub mod child;
pub mod conversation;
pub mod cpus;
pub mod host;
pub mod interrupt;
pub mod kept;
pub mod lock;
pub mod scratch;
