//! How the nodes are found and reached: the options `cluster` and `net`
//! share, turned into [`crate::nodes::Reach`] for the code below.

use std::path::PathBuf;

use clap::Args;

use crate::nodes::Reach;

/// The members list pmxcfs publishes.
pub const ETC_PVE_MEMBERS: &str = "/etc/pve/.members";

/// How the nodes are found and reached: `cluster` and `net` alike.
#[derive(Debug, Args)]
pub struct ReachArgs {
    /// pmxcfs's members list to read the nodes from
    #[arg(long, value_name = "FILE", default_value = ETC_PVE_MEMBERS, help_heading = "Nodes")]
    pub members: PathBuf,

    /// The nodes, instead of the members list: NAME or NAME=ADDRESS, comma-separated
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        conflicts_with = "nodes_file",
        help_heading = "Nodes"
    )]
    pub nodes: Vec<String>,

    /// The nodes, one per line: NAME or NAME ADDRESS; # starts a comment
    #[arg(long, value_name = "FILE", help_heading = "Nodes")]
    pub nodes_file: Option<PathBuf>,

    /// The command that runs pveprobe on the nodes, split at spaces
    #[arg(
        long,
        value_name = "COMMAND",
        default_value = "pveprobe",
        help_heading = "Nodes"
    )]
    pub remote_command: String,

    /// User ssh logs in as
    #[arg(
        long,
        value_name = "USER",
        default_value = "root",
        help_heading = "ssh"
    )]
    pub ssh_user: String,

    /// Seconds ssh waits for a node to accept the connection
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=600), help_heading = "ssh")]
    pub connect_timeout: u32,

    /// Read ssh's configuration from FILE (ssh -F FILE)
    #[arg(long, value_name = "FILE", help_heading = "ssh")]
    pub ssh_config: Option<PathBuf>,

    /// An ssh option (ssh -o OPTION), e.g. Port=2222; repeatable
    #[arg(long = "ssh-option", value_name = "OPTION", help_heading = "ssh")]
    pub ssh_options: Vec<String>,
}

impl ReachArgs {
    /// The options as plain data.
    pub fn to_reach(&self) -> Reach {
        Reach {
            members: self.members.clone(),
            nodes: self.nodes.clone(),
            nodes_file: self.nodes_file.clone(),
            remote_command: self.remote_command.clone(),
            ssh_user: self.ssh_user.clone(),
            connect_timeout: self.connect_timeout,
            ssh_config: self.ssh_config.clone(),
            ssh_options: self.ssh_options.clone(),
        }
    }
}
