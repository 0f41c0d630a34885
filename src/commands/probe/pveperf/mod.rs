//! pveperf's measurements, as pveperf makes them (see
//! `shared/pveperf-reference.md`). Each returns plain data (the types of
//! `model`, which the report holds); none of them prints.

pub mod cpu;
pub mod dns;
pub mod fsync;
pub mod hostinfo;
pub mod regex;
