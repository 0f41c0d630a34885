//! What several commands share around their work; no command of its own.
//! The argument groups more than one command takes (`*_args.rs`: clap
//! only, as a command's `args.rs`), what they are made into
//! ([`requests`]), the session every command runs in ([`session`]) and
//! the yes a command that writes to the cluster asks for ([`confirm`]),
//! and the one shape of every command's work ([`work::Work`]).

pub mod confirm;
pub mod measure_args;
pub mod net_args;
pub mod output_args;
pub mod reach_args;
pub mod requests;
pub mod session;
pub mod source_args;
pub mod work;
