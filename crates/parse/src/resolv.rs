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

/// resolv.conf as pveperf reads it for its DNS lines, which differs from
/// glibc: Net::DNS's resolver takes every address of every line that starts
/// with `nameserver` (no limit of three), cuts `#` and `;` comments anywhere
/// in a line, and puts IPv6 servers first under `options inet6`; pveperf
/// itself takes DNS INT's domain from the first `search` line that names
/// exactly one domain (see [`pveperf_search_domain`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetDnsConf {
    /// Name servers in the order Net::DNS asks them, on port 53.
    pub nameservers: Vec<SocketAddr>,
    /// Values that are not addresses (Net::DNS would look them up by name;
    /// pveprobe skips them), the first [`INVALID_KEPT`].
    pub invalid: Vec<String>,
    /// Servers after the first [`NETDNS_MAX_SERVERS`], not asked.
    pub ignored: usize,
    /// True when the file named no server and Net::DNS's own defaults
    /// (`::1`, then `127.0.0.1`) stand in.
    pub defaults: bool,
}

/// pveprobe asks at most this many servers per query in the pveperf
/// schedule (one socket each); Net::DNS has no limit.
pub const NETDNS_MAX_SERVERS: usize = 64;

pub fn parse_netdns(text: &str) -> NetDnsConf {
    let mut conf = NetDnsConf::default();
    let mut prefer_v6 = false;
    for raw in text.lines() {
        let line = raw.split(['#', ';']).next().unwrap_or("");
        let mut words = line.split_ascii_whitespace();
        if line.starts_with("nameserver") {
            words.next();
            for word in words {
                match parse_nameserver(word) {
                    Some(_) if conf.nameservers.len() >= NETDNS_MAX_SERVERS => conf.ignored += 1,
                    Some(addr) => conf.nameservers.push(addr),
                    None if conf.invalid.len() >= INVALID_KEPT => {}
                    None => conf.invalid.push(word.chars().take(64).collect()),
                }
            }
        } else if line.starts_with("option") {
            words.next();
            prefer_v6 |= words.any(|w| w.eq_ignore_ascii_case("inet6"));
        }
    }
    if conf.nameservers.is_empty() && conf.invalid.is_empty() {
        conf.defaults = true;
        conf.nameservers = vec![
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), DNS_PORT),
            SocketAddr::new(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), DNS_PORT),
        ];
    }
    if prefer_v6 {
        conf.nameservers.sort_by_key(|a| a.is_ipv4());
    }
    conf
}

/// DNS INT's domain as pveperf finds it: the first match of
/// `^search\s+(\S+)\s*$` over the whole file, line by line. A `search`
/// line with two or more domains does not match (and gives no DNS INT line
/// unless a later one does); a `domain` line never counts.
pub fn pveperf_search_domain(text: &str) -> Option<String> {
    static SEARCH: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?m)^search\s+(\S+)\s*$").expect("a valid pattern")
    });
    SEARCH
        .captures(text)
        .map(|c| c[1].to_string())
        .filter(|d| !d.is_empty())
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

    #[test]
    fn net_dns_takes_every_server_and_strips_comments() {
        let conf = parse_netdns(
            "nameserver 127.0.0.1 127.0.0.2 # two on a line\n nameserver 127.0.0.9\n\
             nameserver 127.0.0.3;x\nnameserver 127.0.0.4\nnameserver ::1\nnameserver dns.example\n",
        );
        let ips: Vec<String> = conf
            .nameservers
            .iter()
            .map(|a| a.ip().to_string())
            .collect();
        // A line with leading blanks is no `nameserver` line for Net::DNS.
        assert_eq!(
            ips,
            ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "::1"]
        );
        assert!(conf.nameservers.iter().all(|a| a.port() == DNS_PORT));
        assert_eq!(conf.invalid, ["dns.example"]);
        assert!(!conf.defaults);
        // glibc's reading keeps three.
        assert_eq!(
            parse(
                "nameserver 127.0.0.1\nnameserver 127.0.0.3\nnameserver 127.0.0.4\nnameserver ::1\n"
            )
            .nameservers
            .len(),
            MAXNS
        );
    }

    #[test]
    fn net_dns_orders_and_defaults() {
        let conf = parse_netdns("nameserver 127.0.0.1\nnameserver ::1\noptions inet6 rotate\n");
        assert_eq!(
            conf.nameservers,
            ["[::1]:53".parse().unwrap(), "127.0.0.1:53".parse().unwrap()]
        );
        let none = parse_netdns("search a.test\n");
        assert!(none.defaults);
        assert_eq!(
            none.nameservers,
            ["[::1]:53".parse().unwrap(), "127.0.0.1:53".parse().unwrap()]
        );
        let many: String = (0..100)
            .map(|i| format!("nameserver 127.0.1.{i}\n"))
            .collect();
        let many = parse_netdns(&many);
        assert_eq!(many.nameservers.len(), NETDNS_MAX_SERVERS);
        assert_eq!(many.ignored, 100 - NETDNS_MAX_SERVERS);
    }

    #[test]
    fn pveperf_takes_the_first_single_domain_search_line() {
        assert_eq!(
            pveperf_search_domain("search a.test\n"),
            Some("a.test".into())
        );
        assert_eq!(pveperf_search_domain("search a.test b.test\n"), None);
        assert_eq!(pveperf_search_domain("domain a.test\n"), None);
        assert_eq!(pveperf_search_domain(" search a.test\n"), None);
        assert_eq!(pveperf_search_domain("search a.test # note\n"), None);
        assert_eq!(
            pveperf_search_domain("search a.test b.test\nsearch c.test  \r\nsearch d.test\n"),
            Some("c.test".into())
        );
        assert_eq!(
            pveperf_search_domain("search pve.example.\n"),
            Some("pve.example.".into())
        );
        assert_eq!(pveperf_search_domain("nameserver 127.0.0.1\n"), None);
        // The glibc reading of the same files, for contrast.
        assert_eq!(
            parse("search a.test b.test\n").internal_domain(),
            Some("a.test")
        );
        assert_eq!(parse("domain a.test\n").internal_domain(), Some("a.test"));
    }
}
