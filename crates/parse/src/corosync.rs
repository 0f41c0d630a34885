//! `/etc/pve/corosync.conf`: the cluster's nodes and their knet links.
//!
//! PVE writes the file (`pvecm create`, `pvecm addnode`) and pmxcfs copies
//! it to `/etc/corosync/corosync.conf`, which corosync reads with its own
//! parser (`parse_section` in corosync `exec/coroparse.c`). The rules
//! below follow that parser:
//!
//! - Each line is trimmed of blanks. An empty line, or one whose first
//!   character is `#`, is skipped; a `#` later on a line is part of it.
//! - A line holding `{` opens a section named by the text before it;
//!   anything after the `{` is an error. Otherwise a line holding `:` is
//!   `key: value` (split at the first `:`, both sides trimmed). Otherwise
//!   a line holding `}` closes the innermost section; anything else beside
//!   it is an error. A line that is none of these is an error, as is a
//!   `}` with no section open or a section left open at the end.
//!
//! What is read: `totem { cluster_name, transport, interface { linknumber
//! (or the older ringnumber), knet_link_priority } }` and every `nodelist
//! { node { name, nodeid, ringN_addr } }`. Everything else (`logging`,
//! `quorum`, `quorum_votes`, unknown sections and keys) is passed over. A
//! key written twice in one section keeps its last value, as in corosync's
//! map. Numbers that corosync would refuse (a `nodeid` or `linknumber`
//! that is no unsigned number, a link above 7) and a node without `name`
//! (PVE's tools need it) are errors naming their line.

use super::{is_blank, quote};
use std::collections::BTreeMap;

/// Larger input is refused: a 32-node cluster's file is some 4 KiB.
pub const MAX_BYTES: usize = 1 << 20;
/// Sections nested deeper than this are refused (corosync's own use two).
pub const MAX_DEPTH: usize = 32;
/// knet's links are 0 to 7 (`KNET_MAX_LINK` is 8); so are corosync's
/// `ringN_addr` keys.
pub const MAX_LINK: u32 = 7;

/// What the probe needs of corosync.conf.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorosyncConf {
    /// `totem { cluster_name }`.
    pub cluster_name: Option<String>,
    /// `totem { transport }`: `knet` when absent on corosync 3.
    pub transport: Option<String>,
    /// The `totem { interface { } }` sections, by link number, one per
    /// number (a later section of the same number replaces the earlier).
    pub links: Vec<LinkConf>,
    /// The nodes in file order.
    pub nodes: Vec<CorosyncNode>,
}

/// One `totem { interface { } }` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkConf {
    /// `linknumber`, or `ringnumber` in configurations written for
    /// corosync 2; 0 when neither is given.
    pub number: u32,
    /// `knet_link_priority`: with `link_mode: passive` the connected link
    /// with the highest priority carries the traffic.
    pub knet_link_priority: Option<u32>,
}

/// One `nodelist { node { } }` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorosyncNode {
    /// The node's name, never empty.
    pub name: String,
    /// `nodeid`, which PVE always writes (corosync 3 requires it for knet).
    pub nodeid: Option<u32>,
    /// knet link number N to the value of `ringN_addr`, as written: an IP
    /// address or a host name.
    pub addresses: BTreeMap<u32, String>,
}

impl CorosyncConf {
    /// The link numbers any node has an address on, sorted.
    pub fn link_numbers(&self) -> Vec<u32> {
        let mut numbers: Vec<u32> = self
            .nodes
            .iter()
            .flat_map(|n| n.addresses.keys().copied())
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        numbers
    }

    /// The node with this name.
    pub fn node(&self, name: &str) -> Option<&CorosyncNode> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

/// corosync.conf that corosync or PVE would refuse.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CorosyncError {
    #[error("corosync.conf is {bytes} bytes, more than the {MAX_BYTES} read")]
    TooLarge { bytes: usize },
    #[error("corosync.conf line {line}: '}}' closes no section")]
    UnexpectedClose { line: usize },
    #[error("corosync.conf line {line}: section {name:?} is never closed")]
    Unclosed { line: usize, name: String },
    #[error("corosync.conf line {line}: sections nested deeper than {MAX_DEPTH}")]
    TooDeep { line: usize },
    #[error("corosync.conf line {line}: extra characters beside a brace: {text:?}")]
    ExtraCharacters { line: usize, text: String },
    #[error("corosync.conf line {line}: neither a section nor a key: {text:?}")]
    BadLine { line: usize, text: String },
    #[error("corosync.conf line {line}: {key} {value:?} is no unsigned number")]
    BadNumber {
        line: usize,
        key: String,
        value: String,
    },
    #[error("corosync.conf line {line}: link {link} is above knet's highest, {MAX_LINK}")]
    LinkOutOfRange { line: usize, link: u32 },
    #[error("corosync.conf line {line}: node section without a name")]
    NodeWithoutName { line: usize },
}

/// Where the parser stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Totem,
    Interface,
    Nodelist,
    Node,
    /// Any other section, or one inside a section that is not read.
    Other,
}

/// A `node` section being read.
struct OpenNode {
    line: usize,
    name: Option<String>,
    nodeid: Option<u32>,
    addresses: BTreeMap<u32, String>,
}

/// Reads corosync.conf.
pub fn parse(text: &str) -> Result<CorosyncConf, CorosyncError> {
    if text.len() > MAX_BYTES {
        return Err(CorosyncError::TooLarge { bytes: text.len() });
    }
    let mut conf = CorosyncConf::default();
    // Open sections: scope, name and line of each.
    let mut stack: Vec<(Scope, String, usize)> = Vec::new();
    let mut node: Option<OpenNode> = None;
    let mut link: Option<LinkConf> = None;
    for (index, raw) in text.split('\n').enumerate() {
        let no = index + 1;
        let line = raw.trim_matches(is_blank);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((before, after)) = line.split_once('{') {
            if !after.trim_matches(is_blank).is_empty() {
                return Err(CorosyncError::ExtraCharacters {
                    line: no,
                    text: quote(line),
                });
            }
            if stack.len() >= MAX_DEPTH {
                return Err(CorosyncError::TooDeep { line: no });
            }
            let name = before.trim_matches(is_blank);
            let parent = stack.last().map(|(s, _, _)| *s);
            let scope = match (parent, name) {
                (None, "totem") => Scope::Totem,
                (None, "nodelist") => Scope::Nodelist,
                (Some(Scope::Totem), "interface") => Scope::Interface,
                (Some(Scope::Nodelist), "node") => Scope::Node,
                _ => Scope::Other,
            };
            match scope {
                Scope::Node => {
                    node = Some(OpenNode {
                        line: no,
                        name: None,
                        nodeid: None,
                        addresses: BTreeMap::new(),
                    })
                }
                Scope::Interface => {
                    link = Some(LinkConf {
                        number: 0,
                        knet_link_priority: None,
                    })
                }
                _ => {}
            }
            stack.push((scope, quote(name), no));
        } else if let Some((key, value)) = line.split_once(':') {
            let key = key.trim_matches(is_blank);
            let value = value.trim_matches(is_blank);
            match stack.last().map(|(s, _, _)| *s) {
                Some(Scope::Totem) => match key {
                    "cluster_name" => conf.cluster_name = Some(value.to_string()),
                    "transport" => conf.transport = Some(value.to_string()),
                    _ => {}
                },
                Some(Scope::Interface) => {
                    let link = link.as_mut().expect("an interface section is open");
                    match key {
                        "linknumber" | "ringnumber" => {
                            link.number = link_number(no, key, value)?;
                        }
                        "knet_link_priority" => {
                            link.knet_link_priority = Some(number(no, key, value)?);
                        }
                        _ => {}
                    }
                }
                Some(Scope::Node) => {
                    let node = node.as_mut().expect("a node section is open");
                    if key == "name" {
                        node.name = Some(value.to_string());
                    } else if key == "nodeid" {
                        node.nodeid = Some(number(no, key, value)?);
                    } else if let Some(n) = ring_number(key) {
                        let n = link_number(no, key, n)?;
                        node.addresses.insert(n, value.to_string());
                    }
                }
                _ => {}
            }
        } else if line.contains('}') {
            if line != "}" {
                return Err(CorosyncError::ExtraCharacters {
                    line: no,
                    text: quote(line),
                });
            }
            let Some((scope, _, _)) = stack.pop() else {
                return Err(CorosyncError::UnexpectedClose { line: no });
            };
            match scope {
                Scope::Node => {
                    let open = node.take().expect("a node section is open");
                    let name = open
                        .name
                        .filter(|n| !n.is_empty())
                        .ok_or(CorosyncError::NodeWithoutName { line: open.line })?;
                    conf.nodes.push(CorosyncNode {
                        name,
                        nodeid: open.nodeid,
                        addresses: open.addresses,
                    });
                }
                Scope::Interface => {
                    let closed = link.take().expect("an interface section is open");
                    conf.links.retain(|l| l.number != closed.number);
                    conf.links.push(closed);
                }
                _ => {}
            }
        } else {
            return Err(CorosyncError::BadLine {
                line: no,
                text: quote(line),
            });
        }
    }
    if let Some((_, name, line)) = stack.pop() {
        return Err(CorosyncError::Unclosed { line, name });
    }
    conf.links.sort_by_key(|l| l.number);
    Ok(conf)
}

/// The N of a `ringN_addr` key, as text.
fn ring_number(key: &str) -> Option<&str> {
    let n = key.strip_prefix("ring")?.strip_suffix("_addr")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
}

fn number(line: usize, key: &str, value: &str) -> Result<u32, CorosyncError> {
    // Decimal digits only, as corosync's strtol check leaves them.
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_number(line, key, value));
    }
    value.parse().map_err(|_| bad_number(line, key, value))
}

fn link_number(line: usize, key: &str, value: &str) -> Result<u32, CorosyncError> {
    let link = number(line, key, value)?;
    if link > MAX_LINK {
        return Err(CorosyncError::LinkOutOfRange { line, link });
    }
    Ok(link)
}

fn bad_number(line: usize, key: &str, value: &str) -> CorosyncError {
    CorosyncError::BadNumber {
        line,
        key: quote(key),
        value: quote(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testutil::fixture("pve/corosync", name)
    }

    fn parsed(name: &str) -> CorosyncConf {
        parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn node(name: &str, nodeid: u32, addrs: &[(u32, &str)]) -> CorosyncNode {
        CorosyncNode {
            name: name.into(),
            nodeid: Some(nodeid),
            addresses: addrs.iter().map(|(n, a)| (*n, a.to_string())).collect(),
        }
    }

    #[test]
    fn three_nodes_as_pvecm_writes_them() {
        let conf = parsed("three-nodes.conf");
        assert_eq!(
            conf,
            CorosyncConf {
                cluster_name: Some("prod".into()),
                transport: None,
                links: vec![LinkConf {
                    number: 0,
                    knet_link_priority: None
                }],
                nodes: vec![
                    node("pve1", 1, &[(0, "10.10.10.1")]),
                    node("pve2", 2, &[(0, "10.10.10.2")]),
                    node("pve3", 3, &[(0, "10.10.10.3")]),
                ],
            }
        );
        assert_eq!(conf.link_numbers(), [0]);
        assert_eq!(conf.node("pve2").unwrap().nodeid, Some(2));
        assert_eq!(conf.node("pve4"), None);
    }

    #[test]
    fn four_nodes_on_two_links() {
        let conf = parsed("two-links.conf");
        assert_eq!(conf.cluster_name.as_deref(), Some("lab"));
        assert_eq!(
            conf.links,
            [
                LinkConf {
                    number: 0,
                    knet_link_priority: Some(20)
                },
                LinkConf {
                    number: 1,
                    knet_link_priority: Some(10)
                },
            ]
        );
        assert_eq!(
            conf.nodes,
            [
                node("pve1", 1, &[(0, "10.10.10.1"), (1, "192.168.50.1")]),
                node("pve2", 2, &[(0, "10.10.10.2"), (1, "192.168.50.2")]),
                node("pve3", 3, &[(0, "10.10.10.3"), (1, "192.168.50.3")]),
                node("pve4", 4, &[(0, "10.10.10.4"), (1, "192.168.50.4")]),
            ]
        );
        assert_eq!(conf.link_numbers(), [0, 1]);
    }

    #[test]
    fn ipv6_addresses_are_kept_as_written() {
        let conf = parsed("ipv6.conf");
        assert_eq!(conf.cluster_name.as_deref(), Some("v6"));
        assert_eq!(
            conf.nodes,
            [
                node("pve1", 1, &[(0, "fd00:10::1")]),
                node("pve2", 2, &[(0, "fd00:10::2")]),
                node("pve3", 3, &[(0, "fd00:10::3")]),
            ]
        );
    }

    #[test]
    fn host_names_as_ring0_addr() {
        let conf = parsed("hostnames.conf");
        assert_eq!(
            conf.nodes,
            [
                node("alpha", 1, &[(0, "alpha")]),
                node("beta", 2, &[(0, "beta.example.com")]),
                node("gamma", 3, &[(0, "gamma")]),
            ]
        );
        assert_eq!(conf.link_numbers(), [0]);
    }

    #[test]
    fn unbalanced_braces_name_the_open_section() {
        assert_eq!(
            parse(&fixture("unbalanced.conf")),
            Err(CorosyncError::Unclosed {
                line: 6,
                name: "nodelist".into()
            })
        );
        assert_eq!(
            parse("totem {\n}\n}\n"),
            Err(CorosyncError::UnexpectedClose { line: 3 })
        );
    }

    #[test]
    fn every_fixture_is_tested_here() {
        let names = crate::testutil::fixture_names("pve/corosync");
        assert_eq!(
            names,
            [
                "hostnames.conf",
                "ipv6.conf",
                "three-nodes.conf",
                "two-links.conf",
                "unbalanced.conf",
            ]
        );
    }

    #[test]
    fn node_without_name_names_its_line() {
        let text = "nodelist {\n  node {\n    name: a\n  }\n  node {\n    nodeid: 2\n  }\n}\n";
        assert_eq!(parse(text), Err(CorosyncError::NodeWithoutName { line: 5 }));
        assert_eq!(
            parse("nodelist {\n node {\n  name:\n }\n}\n"),
            Err(CorosyncError::NodeWithoutName { line: 2 })
        );
    }

    #[test]
    fn ring_keys_and_numbers() {
        let text =
            "nodelist {\nnode {\nname: a\nring7_addr: h7\nring0_addr: h0\nring0_addr: h0b\n}\n}\n";
        let conf = parse(text).unwrap();
        assert_eq!(
            conf.nodes,
            [CorosyncNode {
                name: "a".into(),
                nodeid: None,
                addresses: [(0, "h0b".to_string()), (7, "h7".to_string())].into(),
            }]
        );
        assert_eq!(conf.link_numbers(), [0, 7]);
        assert_eq!(
            parse("nodelist {\nnode {\nname: a\nring8_addr: x\n}\n}\n"),
            Err(CorosyncError::LinkOutOfRange { line: 4, link: 8 })
        );
        assert_eq!(
            parse("nodelist {\nnode {\nname: a\nnodeid: -1\n}\n}\n"),
            Err(CorosyncError::BadNumber {
                line: 4,
                key: "nodeid".into(),
                value: "-1".into()
            })
        );
        // Keys that only look like ring addresses are passed over.
        let conf =
            parse("nodelist {\nnode {\nname: a\nring_addr: x\nringX_addr: y\n}\n}\n").unwrap();
        assert!(conf.nodes[0].addresses.is_empty());
    }

    #[test]
    fn corosync2_ringnumber_and_default_link() {
        let text = "totem {\n version: 2\n interface {\n  ringnumber: 1\n  bindnetaddr: 10.0.0.0\n }\n interface {\n  bindnetaddr: 10.1.0.0\n }\n}\n";
        let conf = parse(text).unwrap();
        assert_eq!(
            conf.links,
            [
                LinkConf {
                    number: 0,
                    knet_link_priority: None
                },
                LinkConf {
                    number: 1,
                    knet_link_priority: None
                },
            ]
        );
    }

    #[test]
    fn sections_are_read_only_where_they_belong() {
        // A node outside nodelist, a nodelist inside totem, an interface
        // outside totem, an unknown section: all passed over.
        let text = "node {\n name: x\n}\ntotem {\n nodelist {\n  node {\n   name: y\n  }\n }\n cluster_name: c\n}\ninterface {\n linknumber: 3\n}\nfoo {\n bar {\n  baz: 1\n }\n}\n";
        let conf = parse(text).unwrap();
        assert!(conf.nodes.is_empty());
        assert!(conf.links.is_empty());
        assert_eq!(conf.cluster_name.as_deref(), Some("c"));
    }

    #[test]
    fn comments_and_malformed_lines() {
        // Only a leading '#' starts a comment; a later one stays in the value.
        let conf = parse("# top\ntotem {\n\t# inside\n cluster_name: a # b\n}\n").unwrap();
        assert_eq!(conf.cluster_name.as_deref(), Some("a # b"));
        assert_eq!(
            parse("totem { cluster_name: a\n}\n"),
            Err(CorosyncError::ExtraCharacters {
                line: 1,
                text: "totem { cluster_name: a".into()
            })
        );
        assert_eq!(
            parse("totem {\n} x\n"),
            Err(CorosyncError::ExtraCharacters {
                line: 2,
                text: "} x".into()
            })
        );
        assert_eq!(
            parse("totem {\n version 2\n}\n"),
            Err(CorosyncError::BadLine {
                line: 2,
                text: "version 2".into()
            })
        );
        // CRLF line ends are blanks at the end of a line.
        let conf = parse("totem {\r\n cluster_name: a\r\n}\r\n").unwrap();
        assert_eq!(conf.cluster_name.as_deref(), Some("a"));
        assert_eq!(parse(""), Ok(CorosyncConf::default()));
    }

    #[test]
    fn limits() {
        let big = "#".repeat(MAX_BYTES + 1);
        assert_eq!(
            parse(&big),
            Err(CorosyncError::TooLarge {
                bytes: MAX_BYTES + 1
            })
        );
        let deep = "a {\n".repeat(MAX_DEPTH + 1);
        assert_eq!(
            parse(&deep),
            Err(CorosyncError::TooDeep {
                line: MAX_DEPTH + 1
            })
        );
    }
}
