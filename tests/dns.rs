//! DNS EXT and DNS INT against real servers on loopback addresses started
//! by the tests (dnsmasq, and a socket that never answers). Port 53 needs
//! root; skips with a message otherwise. Never queries the host's resolver.

mod common;

use std::time::{Duration, Instant};

use common::{Dnsmasq, SilentServer, pveprobe, resolv_conf, root_or_skip, stderr, stdout, workdir};

fn probe_dns(conf_text: &str, extra: &[&str]) -> (std::process::Output, Duration) {
    let dir = workdir();
    let conf = resolv_conf(dir.path(), conf_text);
    let start = Instant::now();
    let out = pveprobe()
        .args(["--tests", "dns"])
        .args(extra)
        .arg("--resolv-conf")
        .arg(&conf)
        .arg(dir.path())
        .output()
        .unwrap();
    (out, start.elapsed())
}

#[test]
fn nxdomain_answers_give_both_lines() {
    if !root_or_skip("nxdomain_answers_give_both_lines") {
        return;
    }
    let dns = Dnsmasq::start();
    let (out, _) = probe_dns(
        &format!(
            "; comment\n# comment\nnameserver {}\noptions edns0\nsearch pve.test\n",
            dns.addr
        ),
        &["--duration", "0.5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = common::pveperf_lines(&stdout(&out));
    assert!(common::figure(&lines, "DNS EXT") > 0.0);
    assert!(lines["DNS INT"].ends_with(" ms (pve.test)"), "{lines:?}");
    assert!(!stderr(&out).contains("no answer"), "{}", stderr(&out));
}

#[test]
fn several_search_domains_use_the_first() {
    if !root_or_skip("several_search_domains_use_the_first") {
        return;
    }
    let dns = Dnsmasq::start();
    let (out, _) = probe_dns(
        &format!(
            "search old.test\nnameserver {}\nsearch first.test second.test third.test\n",
            dns.addr
        ),
        &["--duration", "0.3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = common::pveperf_lines(&stdout(&out));
    assert!(lines["DNS INT"].ends_with(" ms (first.test)"), "{lines:?}");
}

#[test]
fn no_search_domain_gives_no_dns_int_line() {
    if !root_or_skip("no_search_domain_gives_no_dns_int_line") {
        return;
    }
    let dns = Dnsmasq::start();
    let (out, _) = probe_dns(
        &format!("nameserver {}\n", dns.addr),
        &["--duration", "0.3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = common::pveperf_lines(&stdout(&out));
    assert_eq!(lines.keys().collect::<Vec<_>>(), ["DNS EXT", "HD SIZE"]);
    assert!(
        stderr(&out).contains("DNS INT: skipped: no search domain in"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_server_that_never_answers_is_bounded_and_says_so() {
    if !root_or_skip("a_server_that_never_answers_is_bounded_and_says_so") {
        return;
    }
    let silent = SilentServer::start();
    let (out, elapsed) = probe_dns(
        &format!("nameserver {}\nsearch pve.test\n", silent.addr),
        &["--duration", "0.5", "--dns-timeout", "0.5"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("DNS EXT:           timeout (no answer within 0.50 s)\n"),
        "{text}"
    );
    assert!(
        text.contains("DNS INT:           timeout (no answer within 0.50 s) (pve.test)\n"),
        "{text}"
    );
    // Each line may last the window plus one timeout (1 s): 2 s for both,
    // with generous room for a loaded machine, but far below an unbounded wait.
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn a_dead_first_server_falls_through_to_the_second() {
    if !root_or_skip("a_dead_first_server_falls_through_to_the_second") {
        return;
    }
    let silent = SilentServer::start();
    let dns = Dnsmasq::start();
    let (out, _) = probe_dns(
        &format!("nameserver {}\nnameserver {}\n", silent.addr, dns.addr),
        &["--duration", "0.3", "--dns-timeout", "0.1"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = common::pveperf_lines(&stdout(&out));
    // Every answer waited one timeout on the dead server first.
    assert!(common::figure(&lines, "DNS EXT") >= 100.0, "{lines:?}");
    assert!(!stderr(&out).contains("no answer"), "{}", stderr(&out));
}

#[test]
fn nobody_listening_is_refused_at_once() {
    // No root needed: nothing binds this address, the kernel refuses.
    let addr = common::loopback_address();
    let (out, _) = probe_dns(&format!("nameserver {addr}\n"), &["--duration", "0.3"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("DNS EXT:           refused (no DNS server answers there)\n"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains(&format!("101 of 101 queries got no answer from {addr}")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn missing_or_empty_resolv_conf_is_a_clear_failure() {
    let dir = workdir();
    let missing = dir.path().join("nope.conf");
    let out = pveprobe()
        .args(["--tests", "dns", "--resolv-conf"])
        .arg(&missing)
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&format!(
        "DNS EXT: not measured: cannot read {}",
        missing.display()
    )));
    let (out, _) = probe_dns("# nothing\nnameserver dns.example\n", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no usable nameserver in"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("(not addresses: dns.example)"),
        "{}",
        stderr(&out)
    );
}
