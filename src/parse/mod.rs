//! Pure parsers for the host files the probe reads. Each takes text and
//! returns plain data, never touching the file system.

pub mod cephconf;
pub mod cidr;
pub mod corosync;
pub mod cpuinfo;
pub mod datacenter;
pub mod hostfacts;
pub mod knet;
pub mod mountinfo;
pub mod pvesm;
pub mod resolv;
pub mod storagecfg;
pub mod vmlist;
