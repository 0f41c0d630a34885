//! /etc/resolv.conf: name servers and search domains, as glibc and as
//! pveperf (Net::DNS, and its own `search` pattern) read them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::resolv;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let conf = resolv::parse(&text);
    assert!(conf.nameservers.len() <= resolv::MAXNS);
    assert!(conf.invalid.len() <= resolv::INVALID_KEPT);
    for server in &conf.nameservers {
        assert_eq!(server.port(), resolv::DNS_PORT);
    }
    if let Some(domain) = conf.internal_domain() {
        assert!(!domain.is_empty());
    }
    let netdns = resolv::parse_netdns(&text);
    assert!(!netdns.nameservers.is_empty() || !netdns.invalid.is_empty());
    assert!(netdns.nameservers.len() <= resolv::NETDNS_MAX_SERVERS);
    assert!(netdns.invalid.len() <= resolv::INVALID_KEPT);
    if let Some(domain) = resolv::pveperf_search_domain(&text) {
        assert!(!domain.is_empty() && !domain.chars().any(char::is_whitespace));
    }
});
