//! The client nodes `--clients` names, found among the cluster's nodes.

use crate::commands::ceph::nodes;
use crate::nodes::members::Node;

/// A node a pool job runs from.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientNode {
    pub name: String,
    /// How it is reached; `None`: this node.
    pub node: Option<Node>,
}

/// The client nodes `--clients` names: `all` (every node pmxcfs lists
/// as online) or node names; this node (pmxcfs's `nodename`, else the
/// host name) runs its part directly.
pub fn resolve(
    wanted: &[String],
    reach: Option<&crate::nodes::Reach>,
    this_node: &str,
) -> Result<Vec<ClientNode>, String> {
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let Some(reach) = reach else {
        return Err("--clients reaches the other nodes over ssh: not with --this-node-only".into());
    };
    let (members, from) = crate::nodes::load_nodes(reach).map_err(|e| format!("--clients: {e}"))?;
    let here = members
        .local
        .clone()
        .unwrap_or_else(|| this_node.to_string());
    let all = wanted.len() == 1 && wanted[0] == "all";
    let names: Vec<String> = if all {
        members
            .nodes
            .iter()
            .filter(|n| n.contacted())
            .map(|n| n.name.clone())
            .collect()
    } else {
        wanted.to_vec()
    };
    let mut out: Vec<ClientNode> = Vec::new();
    for name in names {
        if nodes::same_host(&name, &here) {
            out.push(ClientNode {
                name: here.clone(),
                node: None,
            });
            continue;
        }
        let node = members
            .nodes
            .iter()
            .find(|n| nodes::same_host(&name, &n.name))
            .ok_or_else(|| format!("--clients: no node {name:?} in {from}"))?;
        if !node.contacted() {
            return Err(format!(
                "--clients: node {} is offline in {from}",
                node.name
            ));
        }
        out.push(ClientNode {
            name: node.name.clone(),
            node: Some(node.clone()),
        });
    }
    out.dedup_by(|a, b| a.name == b.name);
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|c| seen.insert(c.name.clone()));
    // This node first, where it is one.
    out.sort_by_key(|c| c.node.is_some());
    if out.len() < 2 {
        return Err(format!(
            "--clients names {} node: a run from several clients needs two or more",
            out.len()
        ));
    }
    Ok(out)
}
