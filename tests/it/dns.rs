//! DNS EXT and DNS INT against real servers on loopback addresses started
//! by the tests (dnsmasq, and a socket that never answers). Port 53 needs
//! root; skips with a message otherwise. Never queries the host's resolver.

use std::time::{Duration, Instant};

use crate::common::{
    Answer, Dnsmasq, Responder, SilentServer, pveprobe, resolv_conf, root_or_skip, stderr, stdout,
    workdir,
};

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
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn nxdomain_answers_give_both_lines() {
    if !root_or_skip() {
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
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(crate::common::figure(&lines, "DNS EXT") > 0.0);
    assert!(lines["DNS INT"].ends_with(" ms (pve.test)"), "{lines:?}");
    assert!(!stderr(&out).contains("no answer"), "{}", stderr(&out));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn several_search_domains_use_the_first() {
    if !root_or_skip() {
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
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert!(lines["DNS INT"].ends_with(" ms (first.test)"), "{lines:?}");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn no_search_domain_gives_no_dns_int_line() {
    if !root_or_skip() {
        return;
    }
    let dns = Dnsmasq::start();
    let (out, _) = probe_dns(
        &format!("nameserver {}\n", dns.addr),
        &["--duration", "0.3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    assert_eq!(lines.keys().collect::<Vec<_>>(), ["DNS EXT", "HD SIZE"]);
    assert!(
        stderr(&out).contains("DNS INT: skipped: no search domain in"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_server_that_never_answers_is_bounded_and_says_so() {
    if !root_or_skip() {
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
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn a_dead_first_server_falls_through_to_the_second() {
    if !root_or_skip() {
        return;
    }
    let silent = SilentServer::start();
    let dns = Dnsmasq::start();
    let (out, _) = probe_dns(
        &format!("nameserver {}\nnameserver {}\n", silent.addr, dns.addr),
        &["--duration", "0.3", "--dns-timeout", "0.1"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = crate::common::pveperf_lines(&stdout(&out));
    // Every answer waited one timeout on the dead server first.
    assert!(
        crate::common::figure(&lines, "DNS EXT") >= 100.0,
        "{lines:?}"
    );
    assert!(!stderr(&out).contains("no answer"), "{}", stderr(&out));
}

#[test]
fn nobody_listening_is_refused_at_once() {
    // No root needed: nothing binds this address, the kernel refuses.
    let addr = crate::common::loopback_address();
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

// pveperf's schedule (`--dns-schedule pveperf`, and the binary run as
// pveperf): Net::DNS with retrans 0 and retry 1 gives one second per query,
// shared by every nameserver line, on unconnected sockets.

/// The JSON document of a DNS-only run with `extra` options.
fn dns_json(conf_text: &str, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let (out, _) = probe_dns(
        conf_text,
        &[&["--output-format", "json"][..], extra].concat(),
    );
    let doc =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    crate::common::validate_schema(&doc);
    (out, doc)
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn pveperf_schedule_one_dead_server_costs_a_second_per_query() {
    if !root_or_skip() {
        return;
    }
    let silent = SilentServer::start();
    let (out, doc) = dns_json(
        &format!("nameserver {}\nsearch pve.test\n", silent.addr),
        &["--dns-schedule", "pveperf", "--duration", "0.5"],
    );
    assert_eq!(out.status.code(), Some(1), "no answer is a failed line");
    assert_eq!(doc["settings"]["dns_schedule"], "pveperf");
    let ext = &doc["not_measured"][0];
    assert_eq!(ext["key"], "dns_ext", "{doc}");
    // pveperf prints the mean even then: each query waited Net::DNS's whole second.
    let err = stderr(&out);
    assert!(err.contains("timed out after 1.00 s"), "{err}");
}

#[test]
fn pveperf_schedule_a_closed_port_also_costs_its_share() {
    // No root: nothing listens there. An unconnected socket, as Net::DNS's,
    // never learns that the port is closed (the bounded schedule's connected
    // socket is told "refused" at once: nobody_listening_is_refused_at_once).
    let addr = crate::common::loopback_address();
    let start = Instant::now();
    let (out, doc) = dns_json(
        &format!("nameserver {addr}\n"),
        &[
            "--dns-schedule",
            "pveperf",
            "--duration",
            "0.2",
            "--tests",
            "dns",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let server = &doc["not_measured"];
    assert!(
        server.to_string().contains("no name server answered"),
        "{doc}"
    );
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "the second was not waited"
    );
    assert!(!stdout(&out).contains("refused"));
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn pveperf_schedule_a_dead_first_server_costs_half_and_is_named() {
    if !root_or_skip() {
        return;
    }
    let silent = SilentServer::start();
    let dns = Dnsmasq::start();
    let (out, doc) = dns_json(
        &format!(
            "nameserver {}\nnameserver {}\nsearch pve.test\n",
            silent.addr, dns.addr
        ),
        &["--dns-schedule", "pveperf", "--duration", "1"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for key in ["dns_ext", "dns_int"] {
        let fig = &doc["figures"][key];
        let ms = fig["value"].as_f64().unwrap();
        assert!((500.0..750.0).contains(&ms), "{key}: {ms} ms");
        let servers = fig["servers"].as_array().unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0]["answered"], 0, "{fig}");
        assert_eq!(servers[1]["answered"], servers[1]["sent"], "{fig}");
        assert!(
            servers[1]["mean_answer_ms"].as_f64().unwrap() < 100.0,
            "{fig}"
        );
    }
    let err = stderr(&out);
    assert!(
        err.contains(&format!("name server {} answered none of its", silent.addr)),
        "{err}"
    );
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn pveperf_schedule_takes_dns_int_only_from_a_one_domain_search_line() {
    if !root_or_skip() {
        return;
    }
    let dns = Dnsmasq::start();
    let ns = format!("nameserver {}\n", dns.addr);
    let run = |extra: &str, schedule: &str| {
        let (out, _) = probe_dns(
            &format!("{ns}{extra}"),
            &["--duration", "0.2", "--dns-schedule", schedule],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        (crate::common::pveperf_lines(&stdout(&out)), stderr(&out))
    };
    let (lines, err) = run("search a.test b.test\n", "pveperf");
    assert!(!lines.contains_key("DNS INT"), "{lines:?}");
    assert!(
        err.contains("no `search` line with exactly one domain"),
        "{err}"
    );
    let (lines, _) = run("domain a.test\n", "pveperf");
    assert!(!lines.contains_key("DNS INT"), "{lines:?}");
    let (lines, _) = run("search a.test b.test\nsearch c.test\n", "pveperf");
    assert!(lines["DNS INT"].ends_with(" ms (c.test)"), "{lines:?}");
    // The bounded schedule reads resolv.conf as glibc does.
    let (lines, _) = run("search a.test b.test\n", "bounded");
    assert!(lines["DNS INT"].ends_with(" ms (a.test)"), "{lines:?}");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn pveperf_schedule_moves_on_after_servfail_as_net_dns_does() {
    if !root_or_skip() {
        return;
    }
    let failing = Responder::start(Answer::ServFail);
    let dns = Dnsmasq::start();
    let (out, doc) = dns_json(
        &format!("nameserver {}\nnameserver {}\n", failing.addr, dns.addr),
        &["--dns-schedule", "pveperf", "--duration", "0.3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fig = &doc["figures"]["dns_ext"];
    let servers = fig["servers"].as_array().unwrap();
    // Both answered every query: SERVFAIL sends Net::DNS on, NXDOMAIN ends it.
    for s in servers {
        assert!(s["sent"].as_u64().unwrap() > 1, "{fig}");
        assert_eq!(s["answered"], s["sent"], "{fig}");
    }
    assert!(fig["value"].as_f64().unwrap() < 100.0, "no waiting: {fig}");
}

#[test]
#[ignore = "needs root: scripts/test runs it as root (cargo test -- --include-ignored)"]
fn bounded_schedule_names_a_dead_first_server() {
    if !root_or_skip() {
        return;
    }
    let silent = SilentServer::start();
    let dns = Dnsmasq::start();
    let (out, doc) = dns_json(
        &format!("nameserver {}\nnameserver {}\n", silent.addr, dns.addr),
        &["--duration", "0.3", "--dns-timeout", "0.1", "-v"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(doc["settings"]["dns_schedule"], "bounded");
    let servers = doc["figures"]["dns_ext"]["servers"].as_array().unwrap();
    assert_eq!(servers[0]["timed_out"], servers[0]["sent"]);
    assert_eq!(servers[1]["answered"], servers[1]["sent"]);
    assert!(
        stderr(&out).contains(&format!("name server {} answered none of its", silent.addr)),
        "{}",
        stderr(&out)
    );
}
