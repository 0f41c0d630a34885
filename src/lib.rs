//! pveprobe: a host probe for Proxmox VE and Debian, a drop-in for pveperf.
//!
//! The top of the crate is the commands, then the layers they stand on.
//!
//! [`commands`] holds every command, one folder each, each in the same
//! three parts: `args.rs` (its clap arguments), `run.rs` (the only code
//! that sees them: it makes the command's plain request and runs it in its
//! session) and its own work (`mod.rs` and its files), which returns a
//! document. `commands/mod.rs` is the command line's top: it sends each
//! command to its `run`, handing `compare`, the probe, `net`, `cluster
//! --net` and `load` the results readers they read files with. A command
//! never imports another, nor `commands/mod.rs`; `commands::common` is
//! what several share (the session, the argument groups more than one
//! takes, among them the one output group, and what they are made into).
//! The commands: the probe (`pveprobe [PATH]`, pveperf's lines, `-x` and
//! `--storage`), `storages`, `compare`, `cluster`, `net`, `qualify`,
//! `guest`, `ceph`, `load`, `top` and `record`; each runs its work in a
//! `commands::common::session::Session` (`top` writes its intervals as
//! they come and hands the session only its picture).
//!
//! A new command `X`:
//! - `src/commands/X/args.rs`: its clap `XArgs`, flattening
//!   `commands::common::output_args::OutputArgs` when it writes a report
//!   (its help worded for `X` with `output_args::worded`), and the other shared
//!   groups it takes;
//! - `run.rs`: `XArgs` made into its plain request (the output group into
//!   its session's frame and progress by `commands::common::requests`),
//!   run in a `Session` (which refuses, before any work, what the report
//!   lacks: a format, rows to append, a picture), its report written and
//!   its exit status decided there, from the report or the work's error;
//! - `mod.rs`: the work, `commands::common::work::Work`: the request in, a
//!   report or a typed error out; the report implements `output::Document`
//!   and, where `compare` reads it, `results::Stored`; its hints are
//!   `model::hint::Hint`s; what it says to the user goes through the
//!   request's `output::progress::Progress`, a program it runs through
//!   `sys::child::run` (or `sys::conversation` when it talks to it);
//! - its arm in `commands::Command` and `commands::run`, and its reader
//!   in `commands::results_readers`.
//!
//! `docs/development.md` has the whole recipe and a picture of the layers.
//!
//! The layers, bottom up; none imports a command, none prints (what they
//! have to say they return), and none imports one above it:
//!
//! - [`error`]: the typed errors and the exit status;
//! - [`model`]: the plain data every measurement returns, the one
//!   [`model::hint::Hint`], and the one way a duration and a size are
//!   written for people ([`model::human`]);
//! - [`sys`]: the host seam ([`sys::host::Host`], so parsers and probes
//!   run against fixtures too), the two ways to run a program
//!   ([`sys::child::run`] once, [`sys::conversation`] talked to), how many
//!   CPUs (the one count), the signal flag, the host-wide lock, the
//!   private scratch directory;
//! - [`figure`]: what each figure is, and each model type's projection
//!   onto the figures, read by every renderer;
//! - [`measure`]: how pveprobe measures (timed windows, buffers, the I/O
//!   engine) and the measurements more than one command makes (the
//!   block device's reads, sequential and synced writes, a long write, a
//!   scratch volume's prefill), with the probe's test plan;
//! - [`blockstack`] (the block devices under a path), [`syncverdict`]
//!   (whether a SYNC WRITE figure can be true of its disk), [`pvestorage`]
//!   (PVE's storage.cfg, pvesm and scratch volumes), [`pvevm`] (PVE's
//!   `qm` and `pvesh` for the VMs `load` makes, and a VM's QMP socket,
//!   which `top` reads), [`qga`] (the QEMU guest agent, and the probe run
//!   in a guest through it), [`store`] (`record`'s store: shards of
//!   frames, written and read back);
//! - [`nodeio`]: the node's I/O sampled every interval, as `top` shows it
//!   and `record` keeps it (the sampling loop both stand on, each VM's and
//!   container's counters, the jobs, the storages, the hints);
//! - [`output`]: the formats, writing, tables, pictures and progress (the
//!   one way to speak to the user), and what every document shares: the
//!   [`output::Document`] trait (a command's report in every format it
//!   has), the probe result every command reads ([`output::result`]), its
//!   CSV and metrics;
//! - [`results`]: results read back by their kind ([`results::Stored`])
//!   and ranked, which `compare`, `--baseline` and `cluster` share;
//! - [`nodes`]: the cluster's nodes, how they are reached (ssh's
//!   arguments, a node's answer read as a probe result), their
//!   interfaces.
//!
//! The parsers of `/proc`, `/sys`, configs and tool output are a crate of
//! their own (`crates/parse`), so the compiler keeps them pure and the
//! fuzz targets build them alone. `tests/it/layers.rs` holds the rules.

pub mod blockstack;
pub mod commands;
pub mod error;
pub mod figure;
pub mod measure;
pub mod model;
pub mod nodeio;
pub mod nodes;
pub mod output;
pub mod pvestorage;
pub mod pvevm;
pub mod qga;
pub mod results;
pub mod store;
pub mod syncverdict;
pub mod sys;
