//! `pveprobe compare FILE...`: results put side by side. Its work is the
//! [`crate::results`] layer's, which the probe's `--baseline` and
//! `cluster` share: read each file by its kind, rank, render.

pub mod args;
pub mod run;
