//! ZFS: a dataset's pool layout from `zpool status -P -L` and its
//! properties from `zfs get`. ZFS has no file interface for vdevs, so
//! `zpool` and `zfs` are run (through `sys::child`): without a shell, with
//! fixed arguments (the pool and dataset names come from mountinfo and are
//! passed as single arguments), and with a timeout.

use std::collections::BTreeMap;
use std::time::Duration;

use pveprobe_parse::zfs::{PROPERTIES, PoolStatus, StatusError, parse_properties, parse_status};

use crate::sys::child::{self, ChildOptions, ToolFailure};

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

/// How a storage tool (`zpool`, `zfs`, `dmsetup`, `wipefs`; found on
/// PATH) is run through `sys::child`: fixed arguments, the C locale, at
/// most [`TOOL_TIMEOUT`].
pub fn tool_opts() -> ChildOptions<'static> {
    ChildOptions::limit(TOOL_TIMEOUT).env(&[("LC_ALL", "C")])
}

impl ZfsError {
    /// Why `tool` did not answer, in these words.
    pub fn of(tool: &'static str, failure: ToolFailure) -> Self {
        match failure {
            ToolFailure::NotStarted { missing: true, .. } => ZfsError::Missing(tool),
            ToolFailure::TimedOut => ZfsError::Timeout { tool },
            other => ZfsError::Failed {
                tool,
                message: other.to_string(),
            },
        }
    }
}

/// The pool's layout; `Err` says why it could not be learned.
pub fn pool_status(pool: &str) -> Result<PoolStatus, ZfsError> {
    let done = child::run("zpool", &["status", "-P", "-L", pool], &tool_opts())
        .map_err(|f| ZfsError::of("zpool", f))?;
    Ok(parse_status(&done.stdout_text())?)
}

/// The pool's `ashift` property (`zpool get -Hp -o value ashift POOL`).
pub fn pool_ashift(pool: &str) -> Option<u32> {
    let args = ["get", "-Hp", "-o", "value", "ashift", pool];
    let done = child::run("zpool", &args, &tool_opts()).ok()?;
    pveprobe_parse::zfs::parse_ashift(&done.stdout_text())
}

pub fn dataset_properties(dataset: &str) -> Result<BTreeMap<String, String>, ZfsError> {
    let list = PROPERTIES.join(",");
    let args = ["get", "-H", "-o", "property,value", &list, dataset];
    let done = child::run("zfs", &args, &tool_opts()).map_err(|f| ZfsError::of("zfs", f))?;
    Ok(parse_properties(&done.stdout_text()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_named() {
        let tool = "zpool-that-does-not-exist-here";
        let failed = child::run(tool, &[""; 0], &tool_opts()).unwrap_err();
        assert_eq!(ZfsError::of(tool, failed), ZfsError::Missing(tool));
    }
}
