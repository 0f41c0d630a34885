//! pveprobe: a host probe for Proxmox VE and Debian, a drop-in for pveperf.
//!
//! The crate measures (`probe`), keeps what it measured as plain data
//! (`report`) and renders it apart (`report::text`). Host files are read
//! through [`host::Host`] so parsers and probes run against fixtures too.

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
pub mod host;
pub mod iobuf;
pub mod latency;
pub mod lock;
pub mod output;
pub mod parse;
pub mod plan;
pub mod probe;
pub mod progress;
pub mod report;
pub mod run;
pub mod scratch;
pub mod storage;
pub mod window;

/// pveperf's window, to which REGEX/SECOND is scaled.
pub const PVEPERF_WINDOW: std::time::Duration = std::time::Duration::from_secs(3);
