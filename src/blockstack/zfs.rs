//! ZFS: a dataset's pool layout from `zpool status -P -L` and its
//! properties from `zfs get`. ZFS has no file interface for vdevs, so
//! `zpool` and `zfs` are run (through `sys::child`): without a shell, with
//! fixed arguments (the pool and dataset names come from mountinfo and are
//! passed as single arguments), and with a timeout.

use std::collections::BTreeMap;
use std::time::Duration;

use pveprobe_parse::zfs::{PROPERTIES, PoolStatus, StatusError, parse_properties, parse_status};

/// How long `zpool` or `zfs` may take before it counts as hanging.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZfsError {
    #[error("{0} is not installed (package zfsutils-linux); cannot see the pool's disks")]
    Missing(&'static str),
    #[error("{tool} did not answer within {} s", TOOL_TIMEOUT.as_secs())]
    Timeout { tool: &'static str },
    #[error("{tool} failed: {message}")]
    Failed { tool: &'static str, message: String },
    #[error(transparent)]
    Parse(#[from] StatusError),
}

/// Runs a storage tool (`zpool`, `zfs`, `dmsetup`, `wipefs`; found on
/// PATH) with fixed arguments, in the C locale, through the one child
/// runner with [`TOOL_TIMEOUT`].
pub fn run_tool(tool: &'static str, args: &[&str]) -> Result<String, ZfsError> {
    use crate::sys::child::{self, ChildOptions, ToolFailure};
    let opts = ChildOptions::limit(TOOL_TIMEOUT).env(&[("LC_ALL", "C")]);
    let done = child::tool(tool, args, &opts).map_err(|f| match f {
        ToolFailure::NotStarted { missing: true, .. } => ZfsError::Missing(tool),
        ToolFailure::TimedOut => ZfsError::Timeout { tool },
        other => ZfsError::Failed {
            tool,
            message: other.to_string(),
        },
    })?;
    Ok(String::from_utf8_lossy(&done.stdout).into_owned())
}

/// The pool's layout; `Err` says why it could not be learned.
pub fn pool_status(pool: &str) -> Result<PoolStatus, ZfsError> {
    Ok(parse_status(&run_tool(
        "zpool",
        &["status", "-P", "-L", pool],
    )?)?)
}

/// The pool's `ashift` property (`zpool get -Hp -o value ashift POOL`).
pub fn pool_ashift(pool: &str) -> Option<u32> {
    let text = run_tool("zpool", &["get", "-Hp", "-o", "value", "ashift", pool]).ok()?;
    pveprobe_parse::zfs::parse_ashift(&text)
}

pub fn dataset_properties(dataset: &str) -> Result<BTreeMap<String, String>, ZfsError> {
    let list = PROPERTIES.join(",");
    Ok(parse_properties(&run_tool(
        "zfs",
        &["get", "-H", "-o", "property,value", &list, dataset],
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_named() {
        let err = run_tool("zpool-that-does-not-exist-here", &[]).unwrap_err();
        assert_eq!(err, ZfsError::Missing("zpool-that-does-not-exist-here"));
    }
}
