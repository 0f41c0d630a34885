//! What several commands share around their work; no command of its own.
//! The argument groups more than one command takes (`*_args.rs`: clap
//! only, as a command's `args.rs`), what they are made into
//! ([`requests`]), and the session every command runs in ([`session`]).

pub mod measure_args;
pub mod net_args;
pub mod reach_args;
pub mod requests;
pub mod session;
