//! ZFS: a dataset's pool layout from `zpool status -P -L` and its
//! properties from `zfs get`. ZFS has no file interface for vdevs, so this
//! is the one place pveprobe runs a command: without a shell, with fixed
//! arguments (the pool and dataset names come from mountinfo and are passed
//! as single arguments), and with a timeout.

use std::collections::BTreeMap;
use std::process::Command;
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

/// Runs a storage tool (`zpool`, `zfs`, `dmsetup`; found on PATH) with
/// fixed arguments and a timeout.
pub fn run_tool(tool: &'static str, args: &[&str]) -> Result<String, ZfsError> {
    let mut cmd = Command::new(tool);
    cmd.args(args).env("LC_ALL", "C");
    let done =
        crate::sys::child::run(&mut cmd, TOOL_TIMEOUT, None).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ZfsError::Missing(tool),
            _ => ZfsError::Failed {
                tool,
                message: crate::error::describe(&e),
            },
        })?;
    if done.timed_out {
        return Err(ZfsError::Timeout { tool });
    }
    if !done.success() {
        return Err(ZfsError::Failed {
            tool,
            message: format!("{}: {}", done.status_words(), done.first_error_line()),
        });
    }
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
