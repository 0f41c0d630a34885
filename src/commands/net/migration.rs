//! What the migration link's figures say: the secure channel (ssh) beside
//! the insecure one (one plain TCP stream), which of CPU or link caps the
//! secure one, and the hint when ssh's core is the cap and insecure
//! migration would be much faster.

use super::report::PairResult;
use crate::model::net::{SecureStream, Way, mib_per_s};

/// ssh (or sshd) busy this share of a core or more can be the cap. Not
/// 100: ssh is one thread, but on a busy node its core also runs other
/// work (the stream's other end, the network stack): two nodes sharing a
/// 2-core machine put the busier of ssh and sshd at 84-88%.
pub const CPU_BUSY_PERCENT: f64 = 75.0;
/// ssh (or sshd) that waited for a CPU this share of the stream or more
/// (its run-queue wait: the node's cores busy with its guests, or a CPU
/// limit) and was on a CPU or waiting for one [`CPU_BUSY_PERCENT`] of it
/// wanted a core it did not get: that node's CPU is the cap.
pub const CPU_WAIT_PERCENT: f64 = 10.0;
/// Insecure this many times the secure figure or more: worth naming.
pub const INSECURE_GAIN: f64 = 1.5;

/// What capped a secure stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Cap {
    /// ssh's (or sshd's) core: the node, the process, its share of a core
    /// and the stream's speed were it on a core of its own (MiB/s), which
    /// is still below what the plain stream reached.
    Cpu {
        node: String,
        what: &'static str,
        percent: f64,
        /// Its share of the stream waiting for a CPU, where that made it
        /// the cap.
        waited: Option<f64>,
        core_mib: f64,
    },
    /// The link: insecure is no faster.
    Link,
    /// Neither clearly.
    Unknown,
}

impl PairResult {
    /// The secure stream one way.
    pub fn secure_way(&self, way: Way) -> Option<&SecureStream> {
        self.secure.iter().find(|s| s.way == way)
    }

    /// The insecure figure one way (one TCP stream), MiB/s.
    pub fn insecure_mib(&self, way: Way) -> Option<f64> {
        self.tcp(way, true).map(|t| mib_per_s(t.mbit_per_s))
    }

    /// The sending and receiving node of `way`.
    pub fn ends(&self, way: Way) -> (&str, &str) {
        match way {
            Way::Forward => (&self.a.node, &self.b.node),
            Way::Back => (&self.b.node, &self.a.node),
        }
    }

    /// What capped the secure stream `s`: the busier of ssh and sshd when
    /// the stream would stay below the plain one even with that process
    /// on a whole core of its own (its speed per CPU-second: the figure
    /// over its share), so a core shared with other work on a busy node
    /// still names it; the link when insecure is no faster.
    pub fn cap(&self, s: &SecureStream) -> Cap {
        let (from, to) = self.ends(s.way);
        let insecure = self.insecure_mib(s.way);
        // Each process's demand: on a CPU, or waiting for one. Busy on its
        // core, or wanting one it waited for: the busiest by demand.
        let busiest = [
            (from, "ssh", s.ssh_cpu_percent, s.ssh_wait_percent),
            (to, "sshd", s.sshd_cpu_percent, s.sshd_wait_percent),
        ]
        .into_iter()
        .filter_map(|(node, what, p, w)| Some((node, what, p?, w)))
        .filter(|&(_, _, p, w)| {
            p >= CPU_BUSY_PERCENT
                || w.is_some_and(|w| w >= CPU_WAIT_PERCENT && p + w >= CPU_BUSY_PERCENT)
        })
        .max_by(|x, y| (x.2 + x.3.unwrap_or(0.0)).total_cmp(&(y.2 + y.3.unwrap_or(0.0))));
        if let (Some((node, what, percent, wait)), Some(insecure)) = (busiest, insecure)
            && percent > 0.0
        {
            let core_mib = s.mib_per_s * 100.0 / percent.min(100.0);
            if core_mib < insecure {
                return Cap::Cpu {
                    node: node.to_string(),
                    what,
                    percent,
                    waited: wait.filter(|w| *w >= CPU_WAIT_PERCENT && percent < CPU_BUSY_PERCENT),
                    core_mib,
                };
            }
        }
        match insecure {
            Some(i) if i < INSECURE_GAIN * s.mib_per_s => Cap::Link,
            _ => Cap::Unknown,
        }
    }

    /// The hint `migration-secure-cpu-bound`'s message for `s`: ssh's
    /// core at its limit and insecure 1.5 times faster or more.
    pub(super) fn secure_cpu_bound(&self, s: &SecureStream) -> Option<String> {
        let Cap::Cpu {
            node,
            what,
            percent,
            waited,
            core_mib,
        } = self.cap(s)
        else {
            return None;
        };
        let insecure = self.insecure_mib(s.way)?;
        if s.mib_per_s <= 0.0 || insecure < INSECURE_GAIN * s.mib_per_s {
            return None;
        }
        let (from, to) = self.ends(s.way);
        let cipher = s.cipher.as_deref().unwrap_or("its cipher");
        let faster = match (s.cipher.as_deref(), s.aes_ni) {
            (_, Some(false)) => {
                format!("{from}'s CPU has no AES-NI, which makes AES ciphers several times faster")
            }
            (Some(c), _) if c.starts_with("chacha20") => format!(
                "with AES-NI on both ends, aes128-gcm@openssh.com is faster than {c} (Ciphers in root's ssh config on the nodes)"
            ),
            _ => "a faster cipher both ends support, or CPUs with AES-NI".to_string(),
        };
        let held = match waited {
            Some(w) => format!(
                "{what} at {percent:.0}% of a core on {node} and waiting for a CPU {w:.0}% of the stream (its run-queue wait: {node}'s cores busy with other work, its guests', or a CPU limit on {what}): {node}'s CPU is the cap"
            ),
            None => format!("{what} at {percent:.0}% of a core on {node}"),
        };
        Some(format!(
            "secure migration {from}->{to} is capped by {what}'s CPU: {:.0} MiB/s with {held} ({cipher}; {core_mib:.0} MiB/s at most on a core of its own); insecure migration reached {insecure:.0} MiB/s ({:.1}x). Insecure (datacenter.cfg `migration: type=insecure,network=CIDR`) sends the VMs' memory unencrypted on that network: only on a dedicated, isolated migration network. Otherwise: {faster}. Storage migration stays on ssh either way.",
            s.mib_per_s,
            insecure / s.mib_per_s
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::net::links::LinkKind;
    use crate::commands::net::report::{
        PairStatus,
        tests::{end, secure_stream},
    };
    use crate::model::net::Throughput;

    fn pair(secure_mib: f64, ssh: f64, insecure_mbit: f64) -> PairResult {
        let mut p = PairResult::new(
            "migration",
            LinkKind::Migration,
            end("pve1", "eth2", 1500),
            end("pve2", "eth2", 1500),
            PairStatus::Ok,
        );
        p.throughput.push(Throughput {
            way: Way::Forward,
            streams: 1,
            mbit_per_s: insecure_mbit,
            bytes: 1,
            seconds: 5.0,
        });
        p.secure.push(SecureStream {
            seconds: 5.0,
            cipher: Some("chacha20-poly1305@openssh.com".into()),
            mac: Some("<implicit>".into()),
            ssh_cpu_percent: Some(ssh),
            sshd_cpu_percent: Some(60.0),
            cipher_mib_per_s: Some(1800.0),
            aes_ni: Some(true),
            ..secure_stream(Way::Forward, secure_mib)
        });
        p
    }

    fn codes(p: &PairResult) -> Vec<String> {
        p.hints_of().into_iter().map(|h| h.code).collect()
    }

    #[test]
    fn ssh_at_its_core_with_insecure_much_faster_is_named() {
        // 310 MiB/s secure at 99%, 9,400 Mbit/s (1,120 MiB/s) insecure.
        let p = pair(310.0, 99.0, 9400.0);
        let Cap::Cpu {
            node,
            what,
            percent,
            waited,
            core_mib,
        } = p.cap(&p.secure[0])
        else {
            panic!("{:?}", p.cap(&p.secure[0]))
        };
        assert_eq!(waited, None);
        assert_eq!((node.as_str(), what, percent), ("pve1", "ssh", 99.0));
        assert!((core_mib - 313.1).abs() < 0.1, "{core_mib}");
        assert_eq!(codes(&p), ["migration-secure-cpu-bound"]);
        let message = &p.hints_of()[0].message;
        assert!(
            message.contains("310 MiB/s with ssh at 99% of a core on pve1"),
            "{message}"
        );
        assert!(message.contains("1121 MiB/s (3.6x)"), "{message}");
        assert!(
            message.contains("aes128-gcm@openssh.com is faster"),
            "{message}"
        );
        assert!(message.contains("isolated migration network"), "{message}");
    }

    #[test]
    fn no_hint_when_the_link_caps_both_or_the_gain_is_small() {
        // 200 Mbit/s link: 23.8 MiB/s either way, ssh idle.
        let capped = pair(23.0, 12.0, 200.0);
        assert_eq!(capped.cap(&capped.secure[0]), Cap::Link);
        assert!(codes(&capped).is_empty());
        // ssh at its core, but insecure only 1.3x.
        let close = pair(300.0, 99.0, 3270.0);
        assert!(codes(&close).is_empty());
        // Insecure much faster, but ssh mostly idle: something else caps it.
        let mut odd = pair(100.0, 30.0, 9400.0);
        odd.secure[0].sshd_cpu_percent = Some(40.0);
        assert_eq!(odd.cap(&odd.secure[0]), Cap::Unknown);
        assert!(codes(&odd).is_empty());
        // ssh at 80% of a core, which alone would carry 1.25x: it would
        // keep up with a link 1.2x faster, so the link caps it.
        let link = pair(300.0, 80.0, 3020.0);
        assert_eq!(link.cap(&link.secure[0]), Cap::Link);
        assert!(codes(&link).is_empty());
    }

    #[test]
    fn a_core_shared_on_a_busy_node_still_names_ssh() {
        // Two nodes on one 2-core machine: ssh at 86%, sshd at 82%, 556
        // MiB/s; ssh on a core of its own would carry 647, far below
        // the plain stream's 2,038 MiB/s (17,095 Mbit/s).
        let p = pair(556.0, 86.0, 17095.0);
        assert!(matches!(p.cap(&p.secure[0]), Cap::Cpu { what: "ssh", .. }));
        assert_eq!(codes(&p), ["migration-secure-cpu-bound"]);
    }

    #[test]
    fn sshd_on_the_receiver_can_be_the_cap() {
        let mut p = pair(300.0, 70.0, 9400.0);
        p.secure[0].sshd_cpu_percent = Some(98.0);
        p.secure[0].ssh_cpu_percent = Some(75.0);
        p.secure[0].aes_ni = Some(false);
        let message = &p.hints_of()[0].message;
        assert!(
            message.contains("sshd at 98% of a core on pve2"),
            "{message}"
        );
        assert!(message.contains("pve1's CPU has no AES-NI"), "{message}");
    }

    #[test]
    fn sshd_that_waited_for_a_cpu_names_its_nodes_cpu() {
        // pve2's sshd held to a fifth of a core (its cores busy, or a
        // limit): 20% on a CPU, waiting for one 78% of the stream; ssh at
        // 25%. Neither is near a core by its CPU alone.
        let mut p = pair(60.0, 25.0, 9400.0);
        p.secure[0].sshd_cpu_percent = Some(20.0);
        p.secure[0].sshd_wait_percent = Some(78.0);
        p.secure[0].ssh_wait_percent = Some(2.0);
        let Cap::Cpu {
            node, what, waited, ..
        } = p.cap(&p.secure[0])
        else {
            panic!("{:?}", p.cap(&p.secure[0]))
        };
        assert_eq!((node.as_str(), what, waited), ("pve2", "sshd", Some(78.0)));
        let message = &p.hints_of()[0].message;
        assert!(
            message
                .contains("sshd at 20% of a core on pve2 and waiting for a CPU 78% of the stream"),
            "{message}"
        );
        assert!(message.contains("pve2's CPU is the cap"), "{message}");
        // A short wait does not make a process the cap.
        p.secure[0].sshd_wait_percent = Some(8.0);
        assert_eq!(p.cap(&p.secure[0]), Cap::Unknown);
    }
}
