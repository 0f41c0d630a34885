//! The nodes `cluster`, `net`, `ceph`, `load` and `top --worst --cluster`
//! work on, and how they are reached: who is in the cluster (`members`:
//! pmxcfs's `.members`, `--nodes`, `--nodes-file`); ssh's arguments and
//! options for a node, the quoted line its shell runs, this pveprobe
//! here or on a node for a conversation, and what a node's answer means
//! (`remote`: the commands run ssh through `sys::child` themselves); and a
//! node's network interfaces (`iface`: `net` plans its links on them,
//! `ceph` finds its networks' links). The commands stand on this; it
//! knows none of them.

pub mod iface;
pub mod members;
pub mod remote;

use std::path::{Path, PathBuf};

use members::Members;
use remote::Ssh;

/// How the nodes are found and reached (the options `cluster` and `net`
/// share, as plain data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// pmxcfs's members list.
    pub members: PathBuf,
    /// `--nodes`: NAME or NAME=ADDRESS, instead of the members list.
    pub nodes: Vec<String>,
    /// `--nodes-file`: NAME [ADDRESS] per line.
    pub nodes_file: Option<PathBuf>,
    /// The words of the command that runs pveprobe on the nodes.
    pub remote_command: Vec<String>,
    pub ssh_user: String,
    /// Seconds ssh waits for a node to accept the connection.
    pub connect_timeout: u32,
    /// `ssh -F FILE`.
    pub ssh_config: Option<PathBuf>,
    /// `ssh -o OPTION`, each.
    pub ssh_options: Vec<String>,
}

impl Reach {
    /// Whether the nodes are pmxcfs's members (not a list of our own).
    fn are_members(&self) -> bool {
        self.nodes.is_empty() && self.nodes_file.is_none()
    }

    /// The ssh client for the nodes, with `more_options` after the
    /// admin's own (ssh takes the first value of an option).
    pub fn ssh(&self, more_options: &[&str]) -> Ssh {
        let mut options = self.ssh_options.clone();
        options.extend(more_options.iter().map(|o| o.to_string()));
        Ssh {
            user: self.ssh_user.clone(),
            connect_timeout: self.connect_timeout,
            config: self.ssh_config.clone(),
            options,
            // PVE keeps each node's own known_hosts beside the members list.
            pve_nodes_dir: self
                .are_members()
                .then(|| self.members.parent().map(|d| d.join("nodes")))
                .flatten(),
        }
    }

    /// Whether `--remote-command` names no command.
    pub fn remote_command_is_empty(&self) -> bool {
        self.remote_command.is_empty()
    }
}

/// Why the nodes are unknown (exit status 2, nothing run).
#[derive(Debug, thiserror::Error)]
pub enum NodesError {
    #[error("--nodes: {0}")]
    List(members::MembersError),
    #[error("cannot read {}: {}{}", path.display(), crate::error::describe(source), if *no_members { " (not a Proxmox VE cluster node? name the nodes with --nodes or --nodes-file)" } else { "" })]
    Read {
        path: PathBuf,
        source: std::io::Error,
        /// pmxcfs's members list is missing: this is no PVE cluster node.
        no_members: bool,
    },
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: members::MembersError,
    },
}

/// The nodes, and where the list came from (for messages).
pub fn load_nodes(reach: &Reach) -> Result<(Members, String), NodesError> {
    if !reach.nodes.is_empty() {
        return members::parse_node_list(&reach.nodes)
            .map(|m| (m, "--nodes".into()))
            .map_err(NodesError::List);
    }
    type Parser = fn(&str) -> Result<Members, members::MembersError>;
    let (path, parse): (&Path, Parser) = match &reach.nodes_file {
        Some(file) => (file, members::parse_nodes_file),
        None => (&reach.members, members::parse_members),
    };
    let text =
        crate::sys::host::read_capped(path, crate::sys::host::MAX_HOST_FILE).map_err(|source| {
            NodesError::Read {
                path: path.into(),
                no_members: reach.nodes_file.is_none()
                    && source.kind() == std::io::ErrorKind::NotFound,
                source,
            }
        })?;
    parse(&text)
        .map(|m| (m, path.display().to_string()))
        .map_err(|source| NodesError::Parse {
            path: path.into(),
            source,
        })
}
