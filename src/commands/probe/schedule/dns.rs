//! The scheduler's DNS part: resolv.conf read and planned (the servers to
//! ask, DNS INT's domain), by the default bounded schedule or by
//! pveperf's, then DNS EXT and DNS INT measured.

use super::*;

impl Runner<'_> {
    pub(super) fn dns_tests(&mut self) -> Step {
        let cfg = self.config;
        let text = match self.measure.read_resolv_conf(&cfg.resolv_conf) {
            Ok(text) => text,
            Err(e) => {
                let why = format!(
                    "cannot read {}: {}",
                    cfg.resolv_conf.display(),
                    crate::error::describe(&e)
                );
                return self.dns_unavailable(why);
            }
        };
        let plan = match cfg.dns_schedule {
            crate::model::dns::Schedule::Bounded => self.bounded_plan(&text),
            crate::model::dns::Schedule::Pveperf => self.pveperf_plan(&text),
        };
        let (servers, domain) = match plan {
            Ok(plan) => plan,
            Err(why) => return self.dns_unavailable(why),
        };
        let query = |domain| DnsQuery {
            servers: &servers,
            domain,
            window: cfg.window,
            timeout: cfg.dns_timeout,
            schedule: cfg.dns_schedule,
        };
        self.report.dns_ext =
            Some(self.repeat(Figure::DnsExt, |this| this.measure.dns(&query(None)))?);
        self.emit(Figure::DnsExt);
        self.report.dns_int = Some(match domain {
            Ok(domain) => self.repeat(Figure::DnsInt, |this| {
                this.measure.dns(&query(Some(&domain)))
            })?,
            Err(why) => Outcome::Skipped(why),
        });
        self.emit(Figure::DnsInt);
        Ok(())
    }

    /// Both DNS lines fail for `why`.
    pub(super) fn dns_unavailable(&mut self, why: String) -> Step {
        self.report.dns_ext = Some(Outcome::Failed(why.clone()));
        self.emit(Figure::DnsExt);
        self.report.dns_int = Some(Outcome::Failed(why));
        self.emit(Figure::DnsInt);
        Ok(())
    }

    /// glibc's reading: the first three servers, the first domain of the
    /// last `search` or `domain` line.
    pub(super) fn bounded_plan(&mut self, text: &str) -> Result<DnsPlan, String> {
        let file = self.config.resolv_conf.display().to_string();
        let conf = resolv::parse(text);
        if conf.nameservers.is_empty() {
            return Err(no_server(&file, &conf.invalid));
        }
        if conf.ignored > 0 {
            self.note(format!(
                "{file} lists {} more name servers; only the first {} are used, as glibc does",
                conf.ignored,
                resolv::MAXNS
            ));
        }
        let domain = conf
            .internal_domain()
            .map(str::to_string)
            .ok_or_else(|| format!("no search domain in {file}"));
        Ok((conf.nameservers, domain))
    }

    /// pveperf's reading: Net::DNS's servers, the domain of the first
    /// `search` line with exactly one domain.
    pub(super) fn pveperf_plan(&mut self, text: &str) -> Result<DnsPlan, String> {
        let file = self.config.resolv_conf.display().to_string();
        let conf = resolv::parse_netdns(text);
        if conf.nameservers.is_empty() {
            return Err(no_server(&file, &conf.invalid));
        }
        if !conf.invalid.is_empty() {
            self.note(format!(
                "{file}: name servers by name are not asked{}",
                not_addresses(&conf.invalid)
            ));
        }
        if conf.defaults {
            self.note(format!(
                "{file} names no name server; asking Net::DNS's defaults, ::1 and 127.0.0.1, as pveperf does"
            ));
        }
        if conf.ignored > 0 {
            self.note(format!(
                "{file} lists {} more name servers; only the first {} are asked",
                conf.ignored,
                resolv::NETDNS_MAX_SERVERS
            ));
        }
        let domain = resolv::pveperf_search_domain(text)
            .ok_or_else(|| format!("no `search` line with exactly one domain in {file}"));
        Ok((conf.nameservers, domain))
    }
}

/// The servers to ask, and DNS INT's domain or why there is none.
type DnsPlan = (Vec<std::net::SocketAddr>, Result<String, String>);

/// Why `file` gives no server to ask, naming the values that are not addresses.
fn no_server(file: &str, invalid: &[String]) -> String {
    format!("no usable nameserver in {file}{}", not_addresses(invalid))
}

/// ` (not addresses: a, b)` for a message, or nothing.
fn not_addresses(invalid: &[String]) -> String {
    if invalid.is_empty() {
        String::new()
    } else {
        format!(" (not addresses: {})", invalid.join(", "))
    }
}
