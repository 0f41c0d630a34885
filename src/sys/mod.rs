//! What pveprobe needs of the host it runs on: the seam through which
//! `/proc`, `/sys` and config files are read ([`host`]), child programs
//! run one way ([`child`]), how many CPUs ([`cpus`]), one probe at a time per host ([`lock`]) and the
//! private scratch directory ([`scratch`]).

pub mod child;
pub mod conversation;
pub mod cpus;
pub mod host;
pub mod interrupt;
pub mod lock;
pub mod scratch;
