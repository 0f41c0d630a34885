//! pveprobe: a host probe for Proxmox VE and Debian, a drop-in for pveperf.
//!
//! (The crate's map is rewritten below once the move is done.)

pub mod blockstack;
pub mod commands;
pub mod error;
pub mod figure;
pub mod measure;
pub mod model;
pub mod nodes;
pub mod output;
pub mod pvestorage;
pub mod results;
pub mod syncverdict;
pub mod sys;
