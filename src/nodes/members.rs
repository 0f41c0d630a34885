//! Who is in the cluster: pmxcfs's `/etc/pve/.members` (JSON), or the
//! nodes an admin names (`--nodes`, `--nodes-file`) on a fleet that is no
//! PVE cluster. Pure parsers: text in, nodes out.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// A node to run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// The node's name (pmxcfs's, or as given).
    pub name: String,
    /// What ssh connects to: the IP address pmxcfs knows, the address
    /// given, or else the name.
    pub address: String,
    /// pmxcfs's online flag; `None` when the list does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<bool>,
    /// pmxcfs's node id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
}

impl Node {
    /// False only when pmxcfs says the node is offline.
    pub fn contacted(&self) -> bool {
        self.online != Some(false)
    }
}

/// The nodes and what the list says about the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Members {
    /// The cluster's name (pmxcfs).
    pub cluster: Option<String>,
    /// The node whose pmxcfs wrote the list.
    pub local: Option<String>,
    /// Whether the cluster had quorum when the list was written (pmxcfs).
    pub quorate: Option<bool>,
    /// In pmxcfs's node id order, else as listed.
    pub nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MembersError {
    #[error("not a members list as pmxcfs writes it: {0}")]
    Json(String),
    #[error(
        "{0} is in no cluster (its members list has no nodelist); name the nodes with --nodes or --nodes-file"
    )]
    Standalone(String),
    #[error("no node is listed")]
    Empty,
    #[error(
        "{0:?} is not a node name pveprobe takes (letters, digits, '.', '-', '_'; not starting with '-' or '.')"
    )]
    BadName(String),
    #[error(
        "node {name}: {address:?} is not an address pveprobe takes (a host name or an IP address)"
    )]
    BadAddress { name: String, address: String },
    #[error("node {0} is listed twice")]
    Duplicate(String),
    #[error("line {line}: {why}")]
    Line { line: usize, why: Box<MembersError> },
    #[error("line {0}: expected NAME or NAME ADDRESS")]
    Words(usize),
}

#[derive(Deserialize)]
struct RawMembers {
    nodename: Option<String>,
    cluster: Option<RawCluster>,
    nodelist: Option<BTreeMap<String, RawNode>>,
}

#[derive(Deserialize)]
struct RawCluster {
    name: Option<String>,
    quorate: Option<u8>,
}

#[derive(Deserialize)]
struct RawNode {
    id: Option<u32>,
    online: Option<u8>,
    ip: Option<String>,
}

/// A host name part or a name as pmxcfs has them: ASCII letters, digits,
/// '.', '-', '_'; it may not start with '-' (ssh would take it for an
/// option) or '.' (a file name under --save-dir).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// A host name, an IPv4 address or an IPv6 address (with a %zone).
pub fn valid_address(address: &str) -> bool {
    valid_name(address)
        || address.parse::<std::net::IpAddr>().is_ok()
        || address
            .split_once('%')
            .is_some_and(|(ip, zone)| ip.parse::<std::net::Ipv6Addr>().is_ok() && valid_name(zone))
}

fn node(name: &str, address: Option<&str>) -> Result<Node, MembersError> {
    if !valid_name(name) {
        return Err(MembersError::BadName(name.to_string()));
    }
    let address = address.unwrap_or(name);
    if !valid_address(address) {
        return Err(MembersError::BadAddress {
            name: name.to_string(),
            address: address.to_string(),
        });
    }
    Ok(Node {
        name: name.to_string(),
        address: address.to_string(),
        online: None,
        id: None,
    })
}

fn no_duplicates(nodes: &[Node]) -> Result<(), MembersError> {
    let mut seen = BTreeSet::new();
    for n in nodes {
        if !seen.insert(n.name.as_str()) {
            return Err(MembersError::Duplicate(n.name.clone()));
        }
    }
    if nodes.is_empty() {
        return Err(MembersError::Empty);
    }
    Ok(())
}

/// A fleet named by the admin (no cluster behind it): the nodes, checked.
fn fleet(nodes: Vec<Node>) -> Result<Members, MembersError> {
    no_duplicates(&nodes)?;
    Ok(Members {
        cluster: None,
        local: None,
        quorate: None,
        nodes,
    })
}

/// pmxcfs's `.members`: `{"nodename": ..., "version": ..., "cluster":
/// {"name", "version", "nodes", "quorate"}, "nodelist": {NAME: {"id",
/// "online", "ip"}}}`; a node without `ip` is reached by its name. A node
/// that is not in a cluster writes only `nodename` and `version`.
pub fn parse_members(text: &str) -> Result<Members, MembersError> {
    let raw: RawMembers =
        serde_json::from_str(text).map_err(|e| MembersError::Json(e.to_string()))?;
    let Some(list) = raw.nodelist else {
        return Err(MembersError::Standalone(
            raw.nodename.unwrap_or_else(|| "this node".into()),
        ));
    };
    let mut nodes = Vec::with_capacity(list.len());
    for (name, raw_node) in list {
        let mut n = node(&name, raw_node.ip.as_deref())?;
        n.online = raw_node.online.map(|o| o != 0);
        n.id = raw_node.id;
        nodes.push(n);
    }
    nodes.sort_by(|a, b| (a.id, &a.name).cmp(&(b.id, &b.name)));
    no_duplicates(&nodes)?;
    Ok(Members {
        cluster: raw.cluster.as_ref().and_then(|c| c.name.clone()),
        local: raw.nodename,
        quorate: raw.cluster.and_then(|c| c.quorate).map(|q| q != 0),
        nodes,
    })
}

/// `--nodes`: `NAME` or `NAME=ADDRESS` each.
pub fn parse_node_list(items: &[String]) -> Result<Members, MembersError> {
    let nodes = items
        .iter()
        .map(|item| {
            let item = item.trim();
            match item.split_once('=') {
                Some((name, address)) => node(name, Some(address)),
                None => node(item, None),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    fleet(nodes)
}

/// `--nodes-file`: one node a line, `NAME` or `NAME ADDRESS`; blank lines
/// and everything after `#` are ignored.
pub fn parse_nodes_file(text: &str) -> Result<Members, MembersError> {
    let mut nodes = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let content = line.split('#').next().unwrap_or_default();
        let words: Vec<&str> = content.split_whitespace().collect();
        let parsed = match words.as_slice() {
            [] => continue,
            [name] => node(name, None),
            [name, address] => node(name, Some(address)),
            _ => return Err(MembersError::Words(line_no)),
        };
        nodes.push(parsed.map_err(|why| MembersError::Line {
            line: line_no,
            why: Box::new(why),
        })?);
    }
    fleet(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/cluster")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn summary(m: &Members) -> Vec<(String, String, Option<bool>, Option<u32>)> {
        m.nodes
            .iter()
            .map(|n| (n.name.clone(), n.address.clone(), n.online, n.id))
            .collect()
    }

    #[test]
    fn four_nodes_as_pmxcfs_writes_them() {
        let m = parse_members(&fixture("members-4.json")).unwrap();
        assert_eq!(m.cluster.as_deref(), Some("prod"));
        assert_eq!(m.local.as_deref(), Some("pve2"));
        assert_eq!(m.quorate, Some(true));
        let s =
            |n: &str, a: &str, o: bool, id: u32| (n.to_string(), a.to_string(), Some(o), Some(id));
        assert_eq!(
            summary(&m),
            vec![
                s("pve1", "192.0.2.11", true, 1),
                s("pve2", "192.0.2.12", true, 2),
                s("pve3", "192.0.2.13", false, 3),
                // No "ip": pmxcfs did not know it; ssh gets the name.
                s("pve10", "pve10", true, 4),
            ],
            "in node id order"
        );
        assert!(!m.nodes[2].contacted() && m.nodes[3].contacted());
    }

    #[test]
    fn ipv6_members_and_a_lost_quorum() {
        let m = parse_members(&fixture("members-ipv6.json")).unwrap();
        assert_eq!(m.quorate, Some(false));
        assert_eq!(m.nodes[0].address, "2001:db8::11");
        assert_eq!(m.nodes[1].address, "fe80::2%vmbr0");
    }

    #[test]
    fn a_standalone_node_says_so() {
        let err = parse_members(&fixture("members-standalone.json")).unwrap_err();
        assert_eq!(err, MembersError::Standalone("pve".into()));
        assert!(err.to_string().contains("--nodes"), "{err}");
    }

    #[test]
    fn refuses_what_is_not_a_members_list() {
        assert!(matches!(parse_members(""), Err(MembersError::Json(_))));
        assert!(matches!(parse_members("[1,2]"), Err(MembersError::Json(_))));
        assert!(matches!(
            parse_members(r#"{"nodename":"a","nodelist":{"a":{"id":"x"}}}"#),
            Err(MembersError::Json(_))
        ));
        assert_eq!(
            parse_members(r#"{"nodename":"a","nodelist":{}}"#),
            Err(MembersError::Empty)
        );
        assert_eq!(
            parse_members(r#"{"nodelist":{"-oProxyCommand=x":{"id":1,"online":1}}}"#),
            Err(MembersError::BadName("-oProxyCommand=x".into()))
        );
        assert!(matches!(
            parse_members(r#"{"nodelist":{"a":{"id":1,"online":1,"ip":"1.2.3.4; rm"}}}"#),
            Err(MembersError::BadAddress { .. })
        ));
    }

    #[test]
    fn node_lists_and_files() {
        let m = parse_node_list(&["web1".into(), " web2=192.0.2.12".into()]).unwrap();
        assert_eq!(
            summary(&m),
            vec![
                ("web1".into(), "web1".into(), None, None),
                ("web2".into(), "192.0.2.12".into(), None, None),
            ]
        );
        assert!(m.nodes.iter().all(Node::contacted));
        assert_eq!(
            parse_node_list(&["a".into(), "a=192.0.2.1".into()]),
            Err(MembersError::Duplicate("a".into()))
        );
        assert_eq!(parse_node_list(&[]), Err(MembersError::Empty));
        assert!(matches!(
            parse_node_list(&["a=-oProxyCommand=x".into()]),
            Err(MembersError::BadAddress { .. })
        ));
        assert_eq!(
            parse_node_list(&["../etc".into()]),
            Err(MembersError::BadName("../etc".into()))
        );

        let file = "# fleet\n\nweb1\nweb2 192.0.2.12   # rack 2\n  db1\tdb1.example.com\n";
        let m = parse_nodes_file(file).unwrap();
        assert_eq!(
            m.nodes
                .iter()
                .map(|n| n.address.as_str())
                .collect::<Vec<_>>(),
            ["web1", "192.0.2.12", "db1.example.com"]
        );
        assert_eq!(parse_nodes_file("a b c\n"), Err(MembersError::Words(1)));
        let err = parse_nodes_file("ok\nbad$name\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("line 2: {}", MembersError::BadName("bad$name".into()))
        );
        assert_eq!(parse_nodes_file("# nothing\n"), Err(MembersError::Empty));
    }

    #[test]
    fn names_and_addresses() {
        for ok in ["pve1", "pve-1.example.com", "node_2", "1node"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "-x", ".hidden", "a b", "a/b", "a;b", "a$b", "ä"] {
            assert!(!valid_name(bad), "{bad}");
        }
        for ok in [
            "192.0.2.1",
            "2001:db8::1",
            "::1",
            "fe80::1%eth0",
            "host.example",
        ] {
            assert!(valid_address(ok), "{ok}");
        }
        for bad in ["-oX", "1.2.3.4 5", "fe80::1%", "a@b", "[::1]"] {
            assert!(!valid_address(bad), "{bad}");
        }
    }
}
