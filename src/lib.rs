//! pveprobe: a host probe for Proxmox VE and Debian, a drop-in for pveperf.
//!
//! The top of the crate is the commands, then the layers they stand on.
//!
//! Commands, each `cli/X.rs` (clap) -> `app/X.rs` (the only code that sees
//! clap: it makes a plain request) -> its own folder, which returns a
//! document that renders itself through [`output::Render`]:
//!
//! - [`probe`]: `pveprobe [PATH]`, pveperf's lines and the extended tests
//!   (its scheduler, test plan, pveperf measurements, extended tests and
//!   report live together there);
//! - [`storages`]: PVE storage IDs, `pveprobe storages` and `--storage`;
//! - [`compare`], [`cluster`], [`net`], [`qualify`], [`guest`].
//!
//! Shared layers: [`model`] (the plain data every measurement returns),
//! [`figure`] (what each figure is, and each model type's projection onto
//! the figures, read by every renderer), [`output`] (formats, writing, tables,
//! pictures, progress), [`blockstack`] (the block devices under a path),
//! [`pvestorage`] (PVE's storage.cfg and pvesm), [`syncverdict`] (whether
//! a SYNC WRITE figure can be true of its disk), [`measure`] (timed
//! windows, buffers and the I/O engine the probe and qualify share),
//! [`nodes`] (reaching the cluster's nodes), [`sys`] (the host seam, child
//! processes, the host lock, the private scratch directory) and [`error`].
//! The model imports none of the modules that measure or render, so data
//! flows one way. Host files are read through [`sys::host::Host`] so
//! parsers and probes run against fixtures too.

pub mod app;
pub mod blockstack;
pub mod ceph;
pub mod cli;
pub mod cluster;
pub mod compare;
pub mod error;
pub mod figure;
pub mod guest;
pub mod measure;
pub mod model;
pub mod net;
pub mod nodes;
pub mod output;
pub mod probe;
pub mod pvestorage;
pub mod qualify;
pub mod storages;
pub mod syncverdict;
pub mod sys;
