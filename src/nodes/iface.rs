//! This host's network interfaces: names, addresses with their prefix
//! lengths, and MTUs, from getifaddrs(3) and the SIOCGIFMTU ioctl.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use pveprobe_parse::cidr::Cidr;

/// One interface and its addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Iface {
    pub name: String,
    pub mtu: Option<u32>,
    /// Each address with its prefix length (`10.1.2.3/24`).
    pub addresses: Vec<Cidr>,
}

impl Iface {
    /// Whether `ip` is one of its addresses.
    pub fn has(&self, ip: IpAddr) -> bool {
        self.addresses.iter().any(|c| c.addr() == ip)
    }
}

/// An interface of MTU 1500 with `addrs` (`10.1.2.3/24`), for tests.
/// Whether `ip` (a node's address on a bulk link) is on an interface or in
/// a subnet that also carries one of `corosync_addrs` (that node's
/// corosync addresses): then corosync shares a network with that traffic.
pub fn shares_with(ip: IpAddr, corosync_addrs: &[IpAddr], ifaces: &[Iface]) -> Option<String> {
    let dev = holding(ifaces, ip)?;
    for c in corosync_addrs {
        if *c == ip {
            return Some(format!("the same address {ip}"));
        }
        if dev.has(*c) {
            return Some(format!("interface {}", dev.name));
        }
        let subnet = dev.addresses.iter().find(|a| a.addr() == ip)?;
        if subnet.network().contains(*c) {
            return Some(format!("subnet {}", subnet.network()));
        }
    }
    None
}

#[cfg(test)]
pub(crate) fn fixture(name: &str, addrs: &[&str]) -> Iface {
    Iface {
        name: name.into(),
        mtu: Some(1500),
        addresses: addrs.iter().map(|a| a.parse().unwrap()).collect(),
    }
}

/// The interface that holds `ip`, among `ifaces`.
pub fn holding(ifaces: &[Iface], ip: IpAddr) -> Option<&Iface> {
    ifaces.iter().find(|i| i.has(ip))
}

/// The first address of `ifaces` inside `net`, and its interface.
pub fn in_network<'a>(ifaces: &'a [Iface], net: &Cidr) -> Option<(IpAddr, &'a Iface)> {
    ifaces.iter().find_map(|i| {
        i.addresses
            .iter()
            .find(|c| net.contains(c.addr()))
            .map(|c| (c.addr(), i))
    })
}

/// The host's interfaces that have an address, sorted by name.
pub fn interfaces() -> std::io::Result<Vec<Iface>> {
    let mut by_name: BTreeMap<String, Iface> = BTreeMap::new();
    for ifa in nix::ifaddrs::getifaddrs()? {
        let Some(addr) = ifa.address else { continue };
        let ip: IpAddr = if let Some(v4) = addr.as_sockaddr_in() {
            IpAddr::V4(v4.ip())
        } else if let Some(v6) = addr.as_sockaddr_in6() {
            IpAddr::V6(v6.ip())
        } else {
            continue;
        };
        let prefix = ifa.netmask.and_then(|m| {
            if let Some(v4) = m.as_sockaddr_in() {
                Some(u32::from(v4.ip()).count_ones() as u8)
            } else {
                m.as_sockaddr_in6()
                    .map(|v6| u128::from(v6.ip()).count_ones() as u8)
            }
        });
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let entry = by_name
            .entry(ifa.interface_name.clone())
            .or_insert_with(|| Iface {
                mtu: mtu_of(&ifa.interface_name),
                name: ifa.interface_name.clone(),
                addresses: Vec::new(),
            });
        entry.addresses.extend(Cidr::new(ip, prefix.unwrap_or(max)));
    }
    Ok(by_name.into_values().collect())
}

/// An interface's MTU (SIOCGIFMTU on a throwaway socket).
pub fn mtu_of(name: &str) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let bytes = name.as_bytes();
    if bytes.len() >= libc::IFNAMSIZ {
        return None;
    }
    let sock = std::net::UdpSocket::bind("0.0.0.0:0")
        .or_else(|_| std::net::UdpSocket::bind("[::]:0"))
        .ok()?;
    // SAFETY: ifreq is plain data; the name fits with its NUL (checked above).
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    // SAFETY: SIOCGIFMTU reads ifr_name and writes ifru_mtu of `req`.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFMTU, &mut req) };
    if rc != 0 {
        return None;
    }
    // SAFETY: the ioctl succeeded, so the union holds the MTU.
    u32::try_from(unsafe { req.ifr_ifru.ifru_mtu }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_found_with_its_mtu() {
        let all = interfaces().unwrap();
        let lo = holding(&all, "127.0.0.1".parse().unwrap()).expect("lo holds 127.0.0.1");
        assert_eq!(lo.name, "lo");
        assert!(lo.mtu.is_some_and(|m| m >= 1500), "{:?}", lo.mtu);
        assert!(lo.addresses.iter().any(|c| c.prefix() == 8));
        let (ip, i) = in_network(&all, &"127.0.0.0/8".parse().unwrap()).unwrap();
        assert_eq!(
            (ip.to_string().as_str(), i.name.as_str()),
            ("127.0.0.1", "lo")
        );
        assert_eq!(mtu_of("no-such-interface-x"), None);
        assert_eq!(mtu_of(&"x".repeat(40)), None);
    }
}
