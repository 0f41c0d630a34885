//! How the nodes are found and reached: the options `cluster` and `net`
//! share, turned into [`crate::nodes::Reach`] for the code below.

use std::path::PathBuf;

use clap::Args;

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

    /// The command that runs pveprobe on the nodes, split into words as a
    /// shell would ('sudo -n /opt/pveprobe', quotes for a word with spaces)
    #[arg(
        long,
        value_name = "COMMAND",
        default_value = "pveprobe",
        value_parser = command_words,
        help_heading = "Nodes"
    )]
    pub remote_command: Words,

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

/// A command line split into its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words(pub Vec<String>);

/// `--remote-command`'s words, split by shell rules (shlex): quotes and
/// backslashes as a POSIX shell reads them, no expansion.
fn command_words(text: &str) -> Result<Words, String> {
    shlex::split(text)
        .map(Words)
        .ok_or_else(|| "an unfinished quote or a trailing backslash".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_command_is_split_as_a_shell_splits_it() {
        let words = |t: &str| command_words(t).map(|w| w.0);
        assert_eq!(words("pveprobe").unwrap(), ["pveprobe"]);
        assert_eq!(
            words("  sudo -n '/opt/my tools/pveprobe'  ").unwrap(),
            ["sudo", "-n", "/opt/my tools/pveprobe"]
        );
        assert_eq!(words(r"a\ b c").unwrap(), ["a b", "c"]);
        assert!(
            words(" ").unwrap().is_empty(),
            "empty: refused by the commands"
        );
        assert!(words("sudo 'pveprobe").is_err());
        assert!(words("pveprobe\\").is_err());
    }
}
