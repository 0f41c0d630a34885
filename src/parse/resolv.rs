//! `/etc/resolv.conf`: the name servers and search domain the DNS lines use.
//!
//! Follows glibc's reading (resolv.conf(5)): `#` or `;` starts a comment
//! line, `nameserver` takes one IPv4 or IPv6 address (an IPv6 address may
//! carry a `%scope`), only the first [`MAXNS`] name servers are used, and
//! of several `search` or `domain` lines the last one counts (`domain X`
//! stands for `search X`, as for glibc and PVE).

use std::net::{IpAddr, Ipv6Addr, SocketAddr, SocketAddrV6};

pub const DNS_PORT: u16 = 53;
/// glibc's MAXNS: the resolver uses the first three name servers only.
pub const MAXNS: usize = 3;
/// How many invalid `nameserver` values are kept for the message.
pub const INVALID_KEPT: usize = 8;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvConf {
    /// Name servers in file order, as UDP socket addresses on port 53.
    pub nameservers: Vec<SocketAddr>,
    /// The domains of the last `search` (or `domain`) line.
    pub search: Vec<String>,
    /// `nameserver` values that are not addresses, kept to explain a failure
    /// (the first [`INVALID_KEPT`], each cut to 64 characters).
    pub invalid: Vec<String>,
    /// Valid name servers after the first [`MAXNS`], which glibc ignores too.
    pub ignored: usize,
}

impl ResolvConf {
    /// The domain pveprobe's DNS INT line queries: the first search domain.
    pub fn internal_domain(&self) -> Option<&str> {
        self.search.first().map(String::as_str)
    }
}

pub fn parse(text: &str) -> ResolvConf {
    let mut conf = ResolvConf::default();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let mut words = line.split_ascii_whitespace();
        match words.next() {
            Some("nameserver") => match words.next() {
                Some(word) => match parse_nameserver(word) {
                    Some(_) if conf.nameservers.len() >= MAXNS => conf.ignored += 1,
                    Some(addr) => conf.nameservers.push(addr),
                    None if conf.invalid.len() >= INVALID_KEPT => {}
                    None => conf.invalid.push(word.chars().take(64).collect()),
                },
                None if conf.invalid.len() >= INVALID_KEPT => {}
                None => conf.invalid.push(String::new()),
            },
            Some("domain") => {
                conf.search = words
                    .next()
                    .map(|w| w.trim_end_matches('.').to_string())
                    .into_iter()
                    .collect();
                conf.search.retain(|w| !w.is_empty());
            }
            Some("search") => {
                conf.search = words
                    .take_while(|w| !w.starts_with('#') && !w.starts_with(';'))
                    .map(|w| w.trim_end_matches('.').to_string())
                    .filter(|w| !w.is_empty())
                    .collect();
            }
            _ => {}
        }
    }
    conf
}

/// One `nameserver` value: `192.0.2.1`, `2001:db8::1`, `fe80::1%eth0`.
fn parse_nameserver(word: &str) -> Option<SocketAddr> {
    if let Ok(ip) = word.parse::<IpAddr>() {
        return Some(SocketAddr::new(ip, DNS_PORT));
    }
    let (addr, scope) = word.split_once('%')?;
    let ip: Ipv6Addr = addr.parse().ok()?;
    let scope_id = match scope.parse::<u32>() {
        Ok(id) => id,
        Err(_) => nix::net::if_::if_nametoindex(scope).ok()?,
    };
    Some(SocketAddr::V6(SocketAddrV6::new(ip, DNS_PORT, 0, scope_id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_servers_and_last_search_line() {
        let conf = parse(
            "# generated\n; also a comment\nsearch old.example\nnameserver 127.0.0.53\n\
             nameserver ::1\noptions edns0 trust-ad\nsearch pve.example.com. lab.example\n",
        );
        assert_eq!(
            conf.nameservers,
            vec![
                "127.0.0.53:53".parse().unwrap(),
                "[::1]:53".parse().unwrap()
            ]
        );
        assert_eq!(conf.search, vec!["pve.example.com", "lab.example"]);
        assert_eq!(conf.internal_domain(), Some("pve.example.com"));
        assert!(conf.invalid.is_empty());
    }

    #[test]
    fn keeps_invalid_servers_apart() {
        let conf =
            parse("nameserver 1.2.3\nnameserver dns.example\nnameserver\nnameserver fe80::1%1\n");
        assert_eq!(conf.invalid, vec!["1.2.3", "dns.example", ""]);
        match conf.nameservers.as_slice() {
            [SocketAddr::V6(v6)] => assert_eq!(v6.scope_id(), 1),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(conf.internal_domain(), None);
    }

    #[test]
    fn uses_the_first_three_servers_like_glibc() {
        let text: String = (1..=5000)
            .map(|i| {
                format!(
                    "nameserver 127.0.{}.{}\nnameserver bad{i}\n",
                    i / 250,
                    i % 250
                )
            })
            .collect();
        let conf = parse(&text);
        assert_eq!(conf.nameservers.len(), MAXNS);
        assert_eq!(conf.nameservers[0], "127.0.0.1:53".parse().unwrap());
        assert_eq!(conf.ignored, 4997);
        assert_eq!(conf.invalid.len(), INVALID_KEPT);
        assert_eq!(conf.invalid[..2], ["bad1", "bad2"]);
    }
}
