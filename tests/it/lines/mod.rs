mod limits;
mod loopdev;
mod pveperf_mode;
mod strace;
