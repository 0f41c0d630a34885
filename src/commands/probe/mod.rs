//! The probe, `pveprobe [PATH]`: its arguments and manual ([`args`]), the
//! run that makes them its configuration and prints the lines as they are
//! measured ([`run`]; [`as_pveperf`] under pveperf's name); pveperf's eight
//! lines measured as pveperf measures them ([`pveperf`]), the extended
//! tests of `-x` ([`extended`]; which tests run and what each costs is
//! [`crate::measure::plan`]), the scheduler that runs them in print order
//! ([`schedule`]), the report that holds and renders what they measured
//! ([`report`]), and `--storage ID|all` ([`storage`]).

pub mod args;
pub mod as_pveperf;
pub mod run;

pub mod extended;
pub mod pveperf;
pub mod report;
pub mod schedule;
pub mod storage;
