//! The value tables of the figures, with the small constructors that
//! keep each entry one line: the probe's ([`probe`]: pveperf's lines,
//! `-x`, the CPU figures) and the other commands' ([`others`]: the
//! network's, `qualify`'s disks, `guest`'s and `ceph`'s) and `load`'s
//! ([`load`]) and `datastore`'s ([`datastore`]).

pub(super) mod datastore;
pub(super) mod load;
pub(super) mod others;
pub(super) mod probe;
