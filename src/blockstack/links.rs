//! The links between a leaf disk and the CPU, from sysfs: the disk's SATA
//! link or SAS phy or USB port, and the PCIe link of its controller, each
//! with the payload it can carry at the rate it runs and at the rate both
//! ends can do.
//!
//! Files read (through the [`Host`] seam), below the disk's device path:
//! - SATA: the `ataN` port's `linkN/ata_link/linkN/{sata_spd,
//!   hw_sata_spd_limit}` (the negotiated rate, the controller's limit);
//!   the disk's own limit comes from smartctl (`interface_speed.max`);
//! - SAS: the nearest `port-*`'s phy, `phy-*/sas_phy/phy-*/
//!   {negotiated_linkrate,maximum_linkrate_hw}`;
//! - USB: the device's `speed` and `version`, the root hub's `speed`;
//! - PCIe: the controller's `{current,max}_link_{speed,width}` and the
//!   `max_link_{speed,width}` of the bridge above it (the slot).

use std::path::Path;

use crate::model::storage::Link;
use crate::sys::host::Host;
use pveprobe_parse::link::{self as rate, Kind};

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The nearest ancestor of `device` (itself included) whose name passes.
fn ancestor(device: &Path, pass: impl Fn(&str) -> bool) -> Option<&Path> {
    device.ancestors().find(|a| pass(&name_of(a)))
}

fn numbered(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?.parse().ok()
}

fn link(kind: Kind, at: &Path, current: (f64, u32), capable: Option<(f64, u32)>, by: &str) -> Link {
    let text = |(r, lanes): (f64, u32)| match kind {
        Kind::Sata => format!("{r:.1} Gb/s"),
        Kind::Sas => format!("{r:.1} Gb/s"),
        Kind::Pcie => format!("{r:.1} GT/s x{lanes}"),
        Kind::Usb if r >= 1000.0 => format!("{:.0} Gb/s", r / 1000.0),
        Kind::Usb => format!("{r} Mb/s"),
    };
    let ceiling = |(r, lanes): (f64, u32)| rate::ceiling_mb_s(kind, r, lanes);
    Link {
        kind: kind.name().into(),
        at: name_of(at),
        current: text(current),
        ceiling_mb_s: ceiling(current),
        capable: capable.map(text),
        capable_mb_s: capable.map(ceiling),
        capable_by: capable.map(|_| by.to_string()),
    }
}

fn min_rate(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn sata(host: &Host, device: &Path) -> Option<Link> {
    let port = ancestor(device, |n| numbered(n, "ata").is_some())?;
    let n = numbered(&name_of(port), "ata")?;
    let dir = port.join(format!("link{n}/ata_link/link{n}"));
    let current = rate::sata_gbps(&host.read_value(dir.join("sata_spd"))?)?;
    let limit = host
        .read_value(dir.join("hw_sata_spd_limit"))
        .and_then(|v| rate::sata_gbps(&v));
    Some(link(
        Kind::Sata,
        port,
        (current, 1),
        limit.map(|l| (l, 1)),
        "the port",
    ))
}

fn sas(host: &Host, device: &Path) -> Option<Link> {
    let port = ancestor(device, |n| n.starts_with("port-"))?;
    let mut phys: Vec<String> = host
        .list(port)
        .into_iter()
        .filter(|n| n.starts_with("phy-"))
        .collect();
    phys.sort();
    let phy = phys.first()?;
    let dir = port.join(format!("{phy}/sas_phy/{phy}"));
    let current = rate::sas_gbps(&host.read_value(dir.join("negotiated_linkrate"))?)?;
    let hw = host
        .read_value(dir.join("maximum_linkrate_hw"))
        .and_then(|v| rate::sas_gbps(&v));
    Some(link(
        Kind::Sas,
        &port.join(phy),
        (current, 1),
        hw.map(|h| (h, 1)),
        "the HBA's phy",
    ))
}

fn usb(host: &Host, device: &Path) -> Option<Link> {
    let is_device = |n: &str| {
        n.split_once('-').is_some_and(|(bus, port)| {
            !bus.is_empty()
                && bus.bytes().all(|b| b.is_ascii_digit())
                && !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
    };
    let dev = ancestor(device, is_device)?;
    let current = rate::usb_mbps(&host.read_value(dev.join("speed"))?)?;
    let own = host
        .read_value(dev.join("version"))
        .and_then(|v| rate::usb_version_mbps(&v));
    // An xHCI controller has a root hub per speed (usb1 at 480, usb2 at
    // 5000 or more); a SuperSpeed disk that came up at 480 sits under
    // the slow one, so the controller's best is its fastest root hub's.
    let controller = ancestor(dev, |n| numbered(n, "usb").is_some()).and_then(Path::parent);
    let best = controller.and_then(|c| {
        host.list(c)
            .into_iter()
            .filter(|n| numbered(n, "usb").is_some())
            .filter_map(|h| host.read_value(c.join(h).join("speed")))
            .filter_map(|v| rate::usb_mbps(&v))
            .max_by(f64::total_cmp)
    });
    let capable = match (own, best) {
        (Some(own), Some(best)) => Some(own.min(best)),
        _ => None,
    };
    Some(link(
        Kind::Usb,
        dev,
        (current, 1),
        capable.map(|c| (c, 1)),
        "the disk and the controller",
    ))
}

/// The controller's PCIe link, against what it and its slot can do.
pub fn pcie(host: &Host, pci: &Path) -> Option<Link> {
    let speed = |p: &Path, f: &str| host.read_value(p.join(f)).and_then(|v| rate::pcie_gts(&v));
    let width = |p: &Path, f: &str| {
        host.read_value(p.join(f))
            .and_then(|v| rate::pcie_width(&v))
    };
    let current = (
        speed(pci, "current_link_speed")?,
        width(pci, "current_link_width")?,
    );
    let bridge = pci
        .parent()
        .filter(|b| host.exists(b.join("max_link_speed")));
    let max_speed = min_rate(
        speed(pci, "max_link_speed"),
        bridge.and_then(|b| speed(b, "max_link_speed")),
    );
    let max_width = [
        width(pci, "max_link_width"),
        bridge.and_then(|b| width(b, "max_link_width")),
    ]
    .into_iter()
    .flatten()
    .min();
    let capable = max_speed.map(|s| (s, max_width.unwrap_or(current.1)));
    Some(link(
        Kind::Pcie,
        pci,
        current,
        capable,
        "the device and its slot",
    ))
}

/// The links of the disk whose device is at `device`, nearest first,
/// then its controller's PCIe link (`pci`).
pub fn links(host: &Host, device: Option<&Path>, pci: Option<&Path>) -> Vec<Link> {
    let mut links = Vec::new();
    if let Some(device) = device {
        links.extend(
            sas(host, device)
                .or_else(|| sata(host, device))
                .or_else(|| usb(host, device)),
        );
    }
    links.extend(pci.and_then(|p| pcie(host, p)));
    links
}
