//! CPU BOGOMIPS: the sum of the kernel's BogoMIPS over all CPUs.

use crate::error::{IoContext, ProbeError};
use crate::sys::host::{Host, PROC_CPUINFO};
use pveprobe_parse::cpuinfo;

pub fn bogomips(host: &Host) -> Result<f64, ProbeError> {
    let text = host
        .read(PROC_CPUINFO)
        .context(|| format!("cannot read {PROC_CPUINFO}"))?;
    Ok(cpuinfo::bogomips_sum(&text))
}
