//! /etc/resolv.conf: name servers and search domains.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe::parse::resolv;

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
});
