//! The probe, `pveprobe [PATH]`: pveperf's eight lines measured as pveperf
//! measures them ([`pveperf`]), the extended tests of `-x` ([`extended`]),
//! which tests run and what each costs ([`plan`]), the scheduler that runs
//! them in print order ([`schedule`]) and the report that holds and
//! renders what they measured ([`report`]).

pub mod args;
pub mod as_pveperf;
pub mod run;

pub mod extended;
pub mod pveperf;
pub mod report;
pub mod schedule;
pub mod storage;
