//! A network in CIDR notation (`10.1.2.0/24`, `fd00::/64`), as PVE's
//! `migration: network=` and Ceph's `public_network` write them.
//!
//! The address is kept as written, host bits included (PVE's `CIDR` format
//! accepts `10.1.2.3/24` too); [`Cidr::network`] clears them. A bare
//! address stands for itself: `/32` or `/128`. No zone (`%eth0`), no
//! netmask form (`/255.255.255.0`), no blanks: callers trim.

use super::quote;
use ipnet::IpNet;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// An IPv4 or IPv6 address with a prefix length: an [`IpNet`] (the ipnet
/// crate does the arithmetic) read by PVE's rules, which ipnet's own
/// parser does not follow (a bare address, strict prefix digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr(pub IpNet);

/// Text that is no CIDR.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CidrError {
    #[error("{0:?} is no IPv4 or IPv6 address")]
    BadAddress(String),
    #[error("{0:?} is no prefix length")]
    BadPrefix(String),
    #[error("prefix /{prefix} is longer than the {bits} bits of the address")]
    PrefixTooLong { prefix: u32, bits: u8 },
}

impl Cidr {
    /// `addr/prefix`, host bits kept; `None` when the prefix is longer
    /// than the address.
    pub fn new(addr: IpAddr, prefix: u8) -> Option<Cidr> {
        IpNet::new(addr, prefix).ok().map(Cidr)
    }

    /// The address as written, host bits kept.
    pub fn addr(&self) -> IpAddr {
        self.0.addr()
    }

    /// The prefix length: at most 32 for IPv4, 128 for IPv6.
    pub fn prefix(&self) -> u8 {
        self.0.prefix_len()
    }

    /// The address family's width: 32 or 128.
    pub fn bits(&self) -> u8 {
        self.0.max_prefix_len()
    }

    /// The network itself: the address with its host bits cleared.
    pub fn network(&self) -> Cidr {
        Cidr(self.0.trunc())
    }

    /// Whether `ip` lies in this network. An address of the other family
    /// never does (an IPv4-mapped IPv6 address is IPv6 here).
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(&ip)
    }
}

impl FromStr for Cidr {
    type Err = CidrError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (addr_text, prefix_text) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr_text
            .parse()
            .map_err(|_| CidrError::BadAddress(quote(addr_text)))?;
        let bits = IpNet::from(addr).max_prefix_len();
        let prefix = match prefix_text {
            None => bits,
            Some(p) => {
                // Digits only: no sign, no blank, no second slash.
                if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(CidrError::BadPrefix(quote(p)));
                }
                let n: u32 = p.parse().map_err(|_| CidrError::BadPrefix(quote(p)))?;
                if n > u32::from(bits) {
                    return Err(CidrError::PrefixTooLong { prefix: n, bits });
                }
                n as u8
            }
        };
        Cidr::new(addr, prefix).ok_or(CidrError::PrefixTooLong {
            prefix: u32::from(prefix),
            bits,
        })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// In JSON as it is written: `10.1.2.0/24`.
impl serde::Serialize for Cidr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Cidr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidr(s: &str) -> Cidr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_ipv4_and_ipv6_with_and_without_prefix() {
        assert_eq!(cidr("10.1.2.0/24"), Cidr::new(ip("10.1.2.0"), 24).unwrap());
        assert_eq!(cidr("10.1.2.3").prefix(), 32);
        assert_eq!(cidr("fd00:1::/64").prefix(), 64);
        assert_eq!(cidr("2001:db8::1").prefix(), 128);
        assert_eq!(cidr("0.0.0.0/0").prefix(), 0);
        assert_eq!(cidr("::/0").prefix(), 0);
        assert_eq!(cidr("::/128").prefix(), 128);
    }

    #[test]
    fn refuses_what_is_no_cidr() {
        assert_eq!(
            "10.1.2.0/33".parse::<Cidr>(),
            Err(CidrError::PrefixTooLong {
                prefix: 33,
                bits: 32
            })
        );
        assert_eq!(
            "fd00::/129".parse::<Cidr>(),
            Err(CidrError::PrefixTooLong {
                prefix: 129,
                bits: 128
            })
        );
        for bad in [
            "",
            "/24",
            "10.1.2/24",
            "10.1.2.0/",
            "10.1.2.0/+8",
            "10.1.2.0/ 8",
            "10.1.2.0/24/8",
            "10.1.2.0/0024",
            "10.1.2.0/255.255.255.0",
            " 10.1.2.0/24",
            "fe80::1%eth0/64",
            "pve1/24",
            "[fd00::]/64",
        ] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad:?}");
        }
        assert_eq!(
            "pve1/24".parse::<Cidr>(),
            Err(CidrError::BadAddress("pve1".into()))
        );
        assert_eq!(
            "10.0.0.0/x".parse::<Cidr>(),
            Err(CidrError::BadPrefix("x".into()))
        );
    }

    #[test]
    fn displays_what_reparses() {
        for s in [
            "10.1.2.0/24",
            "10.1.2.3/24",
            "0.0.0.0/0",
            "fd00:1::/64",
            "2001:db8::1/128",
            "::ffff:10.0.0.1/120",
        ] {
            assert_eq!(cidr(s).to_string(), s);
            assert_eq!(cidr(&cidr(s).to_string()), cidr(s));
        }
        // IPv6 is written in its canonical form.
        assert_eq!(cidr("FD00:0:0::0/64").to_string(), "fd00::/64");
        assert_eq!(cidr("192.0.2.7").to_string(), "192.0.2.7/32");
    }

    #[test]
    fn network_clears_host_bits() {
        assert_eq!(cidr("10.1.2.3/24").network(), cidr("10.1.2.0/24"));
        assert_eq!(cidr("10.1.2.3/0").network(), cidr("0.0.0.0/0"));
        assert_eq!(cidr("10.1.2.3/32").network(), cidr("10.1.2.3/32"));
        assert_eq!(cidr("10.1.2.255/31").network(), cidr("10.1.2.254/31"));
        assert_eq!(cidr("fd00:1:2:3::9/48").network(), cidr("fd00:1:2::/48"));
        assert_eq!(cidr("fd00::9/0").network(), cidr("::/0"));
        assert_eq!(cidr("fd00::9/128").network(), cidr("fd00::9/128"));
    }

    #[test]
    fn contains_checks_prefix_and_family() {
        let net = cidr("10.1.2.0/24");
        assert!(net.contains(ip("10.1.2.0")));
        assert!(net.contains(ip("10.1.2.255")));
        assert!(!net.contains(ip("10.1.3.1")));
        assert!(!net.contains(ip("::ffff:10.1.2.1")));
        // Host bits in the network do not matter.
        assert!(cidr("10.1.2.77/24").contains(ip("10.1.2.1")));
        assert!(cidr("0.0.0.0/0").contains(ip("198.51.100.1")));
        assert!(!cidr("0.0.0.0/0").contains(ip("::1")));
        assert!(cidr("10.1.2.3").contains(ip("10.1.2.3")));
        assert!(!cidr("10.1.2.3").contains(ip("10.1.2.4")));
        let v6 = cidr("fd00:1::/64");
        assert!(v6.contains(ip("fd00:1::ffff")));
        assert!(!v6.contains(ip("fd00:2::1")));
        assert!(!v6.contains(ip("10.1.2.3")));
        assert!(cidr("::/0").contains(ip("2001:db8::1")));
    }
}
