//! `pveprobe top`: which guest and which job make the node's IO delay,
//! read-only and live. Each interval (`nodeio::sampling`, the loop
//! `record` stands on too) it reads the node's disks, CPU time and
//! pressure, every running VM's drives through its QMP socket (one short
//! visit each, the socket left at once: `pvestatd` and `qm` need it) and
//! every container's cgroup; ties each guest drive to the host disk
//! behind it; and names the guest behind a busy disk, a guest that waits
//! far above its disk, a disk at its ceiling, the node's pressure.
//!
//! It writes its output, and with `--record DIR` keeps every interval in
//! a store there, as `record` does; nothing else. The store read back
//! (`--from`, else the recorder's) gives `--between`'s window (in any
//! format, or drawn with `--plot`), `--at`'s moment stepped through
//! ([`replay`]), and `--worst`'s episodes ([`worst`], [`cluster`]).

pub mod args;
pub mod causes;
pub mod cluster;
pub mod panels;
pub mod plot;
pub mod render;
pub mod render_use;
pub mod replay;
pub mod run;
pub mod tui;
pub mod when;
pub mod worst;
pub mod write;
