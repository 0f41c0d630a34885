//! pveprobe: a host probe for Proxmox VE and Debian, a drop-in for pveperf.
//!
//! The crate measures (`probe`, `extended`, `storage`, scheduled by `run`),
//! keeps what it measured as plain data (`model`, the types, gathered into
//! a `report`) and renders it apart (`report::text`, `report::json`,
//! `report::csv`, `report::metrics`, through `output`). What each figure
//! is comes from one list, `figure`. The model
//! imports none of the modules that measure or render, so data flows one
//! way: measurements produce model types, the report holds and renders
//! them. Host files are read through [`host::Host`] so parsers and probes
//! run against fixtures too.

pub mod app;
pub mod child;
pub mod choice;
pub mod cli;
pub mod cluster;
pub mod compare;
pub mod error;
pub mod exit;
pub mod extended;
pub mod figure;
pub mod flushes;
pub mod host;
pub mod iobuf;
pub mod latency;
pub mod lock;
pub mod model;
pub mod net;
pub mod nodes;
pub mod output;
pub mod plan;
pub mod plot;
pub mod probe;
pub mod progress;
pub mod project;
pub mod pve;
pub mod qualify;
pub mod report;
pub mod run;
pub mod scratch;
pub mod stats;
pub mod storage;
pub mod table;
#[cfg(test)]
pub(crate) mod testutil;
pub mod window;

/// pveperf's window, to which REGEX/SECOND is scaled (defined in `model`).
pub use model::PVEPERF_WINDOW;
/// The parsers (the `pveprobe-parse` crate of this workspace).
pub use pveprobe_parse as parse;
