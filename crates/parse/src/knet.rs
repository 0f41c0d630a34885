//! The output of `corosync-cmapctl -m stats`: knet's figures per node and
//! link, as corosync publishes them.
//!
//! corosync keeps a `stats.knet.nodeN.linkM.FIELD` key for every link of
//! every node knet knows (`stats_knet_add_member` and `cs_knet_stats` in
//! corosync `exec/stats.c`), the local node included (its one loopback
//! link, always connected). corosync-cmapctl prints each key as
//! `KEY (TYPE) = VALUE` (`print_key` in `tools/corosync-cmapctl.c`), in
//! the trie's byte order, among other keys (`stats.ipcs.*`, `stats.pg.*`,
//! `stats.srp.*`) which are passed over, as are lines of another shape.
//!
//! Read are `enabled`, `connected` and `mtu` of the link's status, and of
//! its statistics `latency_ave`, `latency_max`, `latency_min` (knet
//! measures them in microseconds from its pings), `down_count`,
//! `tx_data_errors`, `rx_data_packets` and `tx_data_packets`. A knet key
//! whose node or link is no number, a link above 7, or a read field whose
//! value is no unsigned number is an error naming its line.

use super::quote;
use std::collections::BTreeMap;

/// Larger input is refused: 41 lines of about 55 bytes per node and link,
/// so this holds some 450 node-links.
pub const MAX_BYTES: usize = 1 << 20;
/// knet's highest link number (`KNET_MAX_LINK` is 8).
pub const MAX_LINK: u32 = 7;

/// Every node-link in the output.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KnetStats {
    /// Sorted by (node_id, link).
    pub links: Vec<KnetLink>,
}

/// The figures of one link to one node; `None` for a field absent from
/// the output.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KnetLink {
    /// corosync's node id (the `N` of `nodeN`).
    pub node_id: u32,
    /// The knet link number (the `M` of `linkM`).
    pub link: u32,
    pub connected: Option<bool>,
    pub enabled: Option<bool>,
    /// The path MTU knet found, minus its own overhead: the largest
    /// payload it sends on the link.
    pub mtu: Option<u32>,
    pub latency_ave_us: Option<u64>,
    pub latency_max_us: Option<u64>,
    pub latency_min_us: Option<u64>,
    /// How often the link went down since corosync started.
    pub down_count: Option<u64>,
    /// `tx_data_errors`: data packets the link failed to send.
    pub tx_errors: Option<u64>,
    /// `rx_data_packets`.
    pub rx_packets: Option<u64>,
    /// `tx_data_packets`.
    pub tx_packets: Option<u64>,
}

impl KnetStats {
    /// The figures of `link` to node `node_id`.
    pub fn get(&self, node_id: u32, link: u32) -> Option<&KnetLink> {
        self.links
            .binary_search_by_key(&(node_id, link), |l| (l.node_id, l.link))
            .ok()
            .map(|i| &self.links[i])
    }
}

/// Output that corosync-cmapctl does not print.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum KnetError {
    #[error("corosync-cmapctl output is {bytes} bytes, more than the {MAX_BYTES} read")]
    TooLarge { bytes: usize },
    #[error("corosync-cmapctl line {line}: not a knet node and link: {text:?}")]
    BadKey { line: usize, text: String },
    #[error("corosync-cmapctl line {line}: link {link} is above knet's highest, {MAX_LINK}")]
    LinkOutOfRange { line: usize, link: u32 },
    #[error("corosync-cmapctl line {line}: value is no unsigned number: {text:?}")]
    BadValue { line: usize, text: String },
}

/// Reads `corosync-cmapctl -m stats` (or `corosync-cmapctl stats.knet.`).
pub fn parse(text: &str) -> Result<KnetStats, KnetError> {
    if text.len() > MAX_BYTES {
        return Err(KnetError::TooLarge { bytes: text.len() });
    }
    let mut links: BTreeMap<(u32, u32), KnetLink> = BTreeMap::new();
    for (index, raw) in text.split('\n').enumerate() {
        let no = index + 1;
        let line = raw.trim_end_matches('\r');
        let Some(rest) = line.strip_prefix("stats.knet.node") else {
            continue;
        };
        // KEY (TYPE) = VALUE
        let Some((key, rest)) = rest.split_once(" (") else {
            continue;
        };
        let Some((_, value)) = rest.split_once(") = ") else {
            continue;
        };
        let bad_key = || KnetError::BadKey {
            line: no,
            text: quote(line),
        };
        let (node, rest) = key.split_once(".link").ok_or_else(bad_key)?;
        let (link, field) = rest.split_once('.').ok_or_else(bad_key)?;
        let node_id = digits(node)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(bad_key)?;
        let link = digits(link)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(bad_key)?;
        if link > MAX_LINK {
            return Err(KnetError::LinkOutOfRange { line: no, link });
        }
        let value = || {
            digits(value).ok_or_else(|| KnetError::BadValue {
                line: no,
                text: quote(line),
            })
        };
        let entry = links.entry((node_id, link)).or_insert_with(|| KnetLink {
            node_id,
            link,
            ..KnetLink::default()
        });
        match field {
            "connected" => entry.connected = Some(value()? != 0),
            "enabled" => entry.enabled = Some(value()? != 0),
            "mtu" => {
                entry.mtu = Some(u32::try_from(value()?).map_err(|_| KnetError::BadValue {
                    line: no,
                    text: quote(line),
                })?)
            }
            "latency_ave" => entry.latency_ave_us = Some(value()?),
            "latency_max" => entry.latency_max_us = Some(value()?),
            "latency_min" => entry.latency_min_us = Some(value()?),
            "down_count" => entry.down_count = Some(value()?),
            "tx_data_errors" => entry.tx_errors = Some(value()?),
            "rx_data_packets" => entry.rx_packets = Some(value()?),
            "tx_data_packets" => entry.tx_packets = Some(value()?),
            _ => {}
        }
    }
    Ok(KnetStats {
        links: links.into_values().collect(),
    })
}

/// A decimal number as `%u` prints it: digits only.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testutil::fixture("pve/knet", name)
    }

    #[test]
    fn three_nodes_two_links_seen_from_node_1() {
        let stats = parse(&fixture("three-nodes.txt")).unwrap();
        let keys: Vec<(u32, u32)> = stats.links.iter().map(|l| (l.node_id, l.link)).collect();
        // The local node has only its loopback link 0.
        assert_eq!(keys, [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1)]);
        assert_eq!(
            stats.get(1, 0),
            Some(&KnetLink {
                node_id: 1,
                link: 0,
                connected: Some(true),
                enabled: Some(true),
                mtu: Some(65535),
                latency_ave_us: Some(0),
                latency_max_us: Some(0),
                latency_min_us: Some(0),
                down_count: Some(0),
                tx_errors: Some(0),
                rx_packets: Some(0),
                tx_packets: Some(0),
            })
        );
        assert_eq!(
            stats.get(2, 0),
            Some(&KnetLink {
                node_id: 2,
                link: 0,
                connected: Some(true),
                enabled: Some(true),
                mtu: Some(1397),
                latency_ave_us: Some(214),
                latency_max_us: Some(1093),
                latency_min_us: Some(146),
                down_count: Some(1),
                tx_errors: Some(0),
                rx_packets: Some(1832209),
                tx_packets: Some(1829655),
            })
        );
        let n3l1 = stats.get(3, 1).unwrap();
        assert_eq!(n3l1.connected, Some(false));
        assert_eq!(n3l1.enabled, Some(true));
        assert_eq!(n3l1.down_count, Some(3));
        assert_eq!(n3l1.tx_errors, Some(12));
        assert_eq!(stats.get(3, 2), None);
    }

    #[test]
    fn every_fixture_is_tested_here() {
        let names = crate::testutil::fixture_names("pve/knet");
        assert_eq!(names, ["three-nodes.txt"]);
    }

    #[test]
    fn other_lines_are_passed_over() {
        let text = "stats.ipcs.global.active (u64) = 9\nstats.srp.mcast_tx (u64) = 5\nCan't get value of stats.knet.node2.link0.mtu. Error CS_ERR_LIBRARY\nstats.knet.node2.link0.rx_total_retries (u64) = 7\nstats.knet.node2.link0.connected (u8) = 1\r\n\n";
        let stats = parse(text).unwrap();
        assert_eq!(
            stats.links,
            [KnetLink {
                node_id: 2,
                link: 0,
                connected: Some(true),
                ..KnetLink::default()
            }]
        );
        assert_eq!(parse(""), Ok(KnetStats::default()));
    }

    #[test]
    fn bad_keys_and_values_name_their_line() {
        assert_eq!(
            parse("\nstats.knet.nodeX.link0.mtu (u32) = 1\n"),
            Err(KnetError::BadKey {
                line: 2,
                text: "stats.knet.nodeX.link0.mtu (u32) = 1".into()
            })
        );
        assert!(matches!(
            parse("stats.knet.node2.mtu (u32) = 1\n"),
            Err(KnetError::BadKey { line: 1, .. })
        ));
        assert_eq!(
            parse("stats.knet.node2.link8.mtu (u32) = 1\n"),
            Err(KnetError::LinkOutOfRange { line: 1, link: 8 })
        );
        for bad in ["-1", "", "1.5", " 1", "4294967296"] {
            let line = format!("stats.knet.node2.link0.mtu (u32) = {bad}\n");
            assert!(
                matches!(parse(&line), Err(KnetError::BadValue { line: 1, .. })),
                "{bad:?}"
            );
        }
        // Fields not read are not checked.
        assert!(parse("stats.knet.node2.link0.tx_pmtu_bytes (u64) = x\n").is_ok());
        assert_eq!(
            parse(&"x".repeat(MAX_BYTES + 1)),
            Err(KnetError::TooLarge {
                bytes: MAX_BYTES + 1
            })
        );
    }
}
