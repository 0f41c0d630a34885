//! What the kernel's link attributes say, and the most payload each link
//! can carry.
//!
//! Rates as sysfs prints them:
//! - SATA: `/sys/class/ata_link/linkN/{sata_spd,hw_sata_spd_limit}`,
//!   `1.5 Gb/s`, `3.0 Gb/s`, `6.0 Gb/s`, `<unknown>`
//!   (drivers/ata/libata-sata.c, `sata_spd_string`);
//! - SAS: `/sys/class/sas_phy/phy-H:N/{negotiated_linkrate,
//!   maximum_linkrate_hw}`, `3.0 Gbit`, `6.0 Gbit`, `12.0 Gbit`,
//!   `22.5 Gbit`, or a state (`Unknown`, `Phy disabled`)
//!   (drivers/scsi/scsi_transport_sas.c, `sas_linkspeed_names`);
//! - PCIe: `current_link_speed`, `max_link_speed`, `8.0 GT/s PCIe` (older
//!   kernels `8 GT/s`), widths as a lane count
//!   (drivers/pci/pci-sysfs.c, `pci_speed_string`);
//! - USB: a device's `speed` in Mbit/s (`480`, `5000`, `10000`, `20000`)
//!   and `version` (` 3.20`) (drivers/usb/core/sysfs.c).
//!
//! Payload ceilings after line encoding, in MB/s (10^6 bytes):
//! - SATA 1.5/3/6 Gb/s and SAS 3/6/12 Gb/s use 8b/10b: a tenth of the bit
//!   rate in bytes (SATA 3.3 spec; SAS-3, INCITS 519); SAS-4's 22.5 Gb/s
//!   uses 128b/150b: 2,400 MB/s (INCITS 534).
//! - PCIe per lane: 2.5 and 5.0 GT/s 8b/10b (250, 500 MB/s), 8, 16 and
//!   32 GT/s 128b/130b (984.6, 1,969.2, 3,938.5 MB/s), 64 GT/s FLIT mode
//!   with 242 of 256 bytes payload (7,562.5 MB/s) (PCI Express Base
//!   Specification 6.0, 4.2 and 4.2.3.1). TLP headers take a further
//!   5-15% that depends on the payload size; the ceiling leaves them in.
//! - USB: 480 Mbit/s (USB 2.0, no line code counted: 60 MB/s), 5 Gbit/s
//!   8b/10b (500 MB/s), 10 and 20 Gbit/s 128b/132b (1,212, 2,424 MB/s)
//!   (USB 3.2 specification, 6.3 and 6.13).

/// A link's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sata,
    Sas,
    Pcie,
    Usb,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sata => "SATA",
            Kind::Sas => "SAS",
            Kind::Pcie => "PCIe",
            Kind::Usb => "USB",
        }
    }
}

/// The most a link rate can be in any unit read here (Gb/s, Gbit, GT/s,
/// Mbit/s): a number beyond it is no rate the kernel printed, and its
/// ceiling would not be finite (`6E306`, found by the fuzzer).
const MAX_RATE: f64 = 1e7;

/// Whether `n` can be a link's rate.
fn plausible(n: f64) -> bool {
    n.is_finite() && n > 0.0 && n <= MAX_RATE
}

/// The number before the unit: `6.0 Gb/s` -> 6.0, `8 GT/s PCIe` -> 8.0.
fn leading_number(text: &str, units: &[&str]) -> Option<f64> {
    let mut words = text.split_whitespace();
    let number: f64 = words.next()?.parse().ok()?;
    let unit = words.next()?;
    (plausible(number) && units.contains(&unit)).then_some(number)
}

/// A SATA rate in Gb/s.
pub fn sata_gbps(text: &str) -> Option<f64> {
    leading_number(text, &["Gb/s", "Gbps"])
}

/// A SAS rate in Gbit/s.
pub fn sas_gbps(text: &str) -> Option<f64> {
    leading_number(text, &["Gbit", "Gbit/s", "Gbps"])
}

/// A PCIe speed in GT/s.
pub fn pcie_gts(text: &str) -> Option<f64> {
    leading_number(text, &["GT/s"])
}

/// A PCIe link width: `4` (newer kernels), `x4`.
pub fn pcie_width(text: &str) -> Option<u32> {
    let text = text.trim();
    let n: u32 = text.strip_prefix('x').unwrap_or(text).parse().ok()?;
    (1..=32).contains(&n).then_some(n)
}

/// A USB device's `speed` in Mbit/s (`480`, `5000`, `1.5`).
pub fn usb_mbps(text: &str) -> Option<f64> {
    let n: f64 = text.trim().parse().ok()?;
    plausible(n).then_some(n)
}

/// The signalling a USB device of `version` (` 3.20`) can surely use, in
/// Mbit/s: 1.x 12, 2.x 480, 3.x 5000. A 3.1 or 3.2 device may be faster,
/// but its version does not say (USB 3.2 renamed 3.0's 5 Gbit/s "Gen 1").
pub fn usb_version_mbps(text: &str) -> Option<f64> {
    let (major, minor) = text.trim().split_once('.')?;
    let major: u32 = major.parse().ok()?;
    minor.get(..1)?.parse::<u32>().ok()?;
    Some(match major {
        1 => 12.0,
        2 => 480.0,
        3 | 4 => 5000.0,
        _ => return None,
    })
}

/// The payload ceiling in MB/s of a link at `rate` (Gb/s, GT/s per lane,
/// or Mbit/s for USB) over `lanes`.
pub fn ceiling_mb_s(kind: Kind, rate: f64, lanes: u32) -> f64 {
    let lanes = f64::from(lanes.max(1));
    match kind {
        Kind::Sata => rate * 100.0,
        Kind::Sas if rate > 20.0 => rate * 1000.0 * 128.0 / 150.0 / 8.0,
        Kind::Sas => rate * 100.0,
        Kind::Pcie => {
            let per_lane = if rate <= 5.0 {
                rate * 100.0
            } else if rate <= 32.0 {
                rate * 1000.0 * 128.0 / 130.0 / 8.0
            } else {
                rate * 1000.0 * 242.0 / 256.0 / 8.0
            };
            per_lane * lanes
        }
        Kind::Usb if rate <= 480.0 => rate / 8.0,
        Kind::Usb if rate <= 5000.0 => rate / 10.0,
        Kind::Usb => rate * 128.0 / 132.0 / 8.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_as_the_kernel_prints_them() {
        assert_eq!(sata_gbps("6.0 Gb/s\n"), Some(6.0));
        assert_eq!(sata_gbps("1.5 Gb/s"), Some(1.5));
        assert_eq!(sata_gbps("<unknown>"), None);
        assert_eq!(sas_gbps("12.0 Gbit"), Some(12.0));
        assert_eq!(sas_gbps("22.5 Gbit"), Some(22.5));
        assert_eq!(sas_gbps("Unknown"), None);
        assert_eq!(sas_gbps("Phy disabled"), None);
        assert_eq!(pcie_gts("8.0 GT/s PCIe\n"), Some(8.0));
        assert_eq!(pcie_gts("8 GT/s"), Some(8.0));
        assert_eq!(pcie_gts("Unknown"), None);
        assert_eq!(pcie_gts("Unknown speed"), None);
        assert_eq!(pcie_width("4\n"), Some(4));
        assert_eq!(pcie_width("x16"), Some(16));
        assert_eq!(pcie_width("0"), None);
        assert_eq!(usb_mbps("480\n"), Some(480.0));
        assert_eq!(usb_mbps("1.5"), Some(1.5));
        assert_eq!(usb_version_mbps(" 3.20\n"), Some(5000.0));
        assert_eq!(usb_version_mbps(" 3.10"), Some(5000.0));
        assert_eq!(usb_version_mbps(" 3.00"), Some(5000.0));
        assert_eq!(usb_version_mbps(" 2.10"), Some(480.0));
        assert_eq!(usb_version_mbps("x"), None);
        // No rate: beyond what any link runs at (its ceiling would
        // overflow; the sysfs_attr fuzz target found `6E306`).
        assert_eq!(usb_mbps("6E306"), None);
        assert_eq!(sata_gbps("6E306 Gb/s"), None);
        assert_eq!(pcie_gts("1e8 GT/s"), None);
        assert!(ceiling_mb_s(Kind::Usb, MAX_RATE, 1).is_finite());
        assert!(ceiling_mb_s(Kind::Pcie, MAX_RATE, 32).is_finite());
    }

    #[test]
    fn ceilings_after_line_encoding() {
        let round = |v: f64| (v * 10.0).round() / 10.0;
        assert_eq!(ceiling_mb_s(Kind::Sata, 6.0, 1), 600.0);
        assert_eq!(ceiling_mb_s(Kind::Sata, 3.0, 1), 300.0);
        assert_eq!(ceiling_mb_s(Kind::Sas, 12.0, 1), 1200.0);
        assert_eq!(round(ceiling_mb_s(Kind::Sas, 22.5, 1)), 2400.0);
        assert_eq!(ceiling_mb_s(Kind::Pcie, 2.5, 1), 250.0);
        assert_eq!(ceiling_mb_s(Kind::Pcie, 5.0, 4), 2000.0);
        assert_eq!(round(ceiling_mb_s(Kind::Pcie, 8.0, 4)), 3938.5);
        assert_eq!(round(ceiling_mb_s(Kind::Pcie, 8.0, 2)), 1969.2);
        assert_eq!(round(ceiling_mb_s(Kind::Pcie, 16.0, 4)), 7876.9);
        assert_eq!(round(ceiling_mb_s(Kind::Pcie, 64.0, 1)), 7562.5);
        assert_eq!(ceiling_mb_s(Kind::Usb, 480.0, 1), 60.0);
        assert_eq!(ceiling_mb_s(Kind::Usb, 5000.0, 1), 500.0);
        assert_eq!(round(ceiling_mb_s(Kind::Usb, 10000.0, 1)), 1212.1);
    }
}
