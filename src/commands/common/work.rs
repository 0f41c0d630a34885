//! The one shape of every command's work: its plain request in, its
//! report or its typed error out, stopping when `interrupt` is raised.
//! A command's `run.rs` makes the request from its arguments, runs it in
//! the command's session as `Work::run(&request, session.interrupt())`,
//! and alone decides the exit status, from the report or the error
//! (`exit_status`, `exit_of`); the work itself builds no `Stop`.

use crate::sys::interrupt::Interrupt;

/// A command's work, implemented by its request.
pub trait Work {
    /// What the command writes: a [`crate::output::Document`].
    type Report;
    /// What went wrong, said in the command's own words.
    type Error: std::error::Error;

    fn run(&self, interrupt: &Interrupt) -> Result<Self::Report, Self::Error>;
}
