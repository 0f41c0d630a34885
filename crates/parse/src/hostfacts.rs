//! Small host files that make up the host fingerprint: `/etc/os-release`
//! and dpkg's status file (its memory is `memory::meminfo`'s).

/// `PRETTY_NAME` (else `NAME VERSION`) of os-release(5), quotes removed.
pub fn os_pretty_name(os_release: &str) -> Option<String> {
    let field = |key: &str| {
        os_release.lines().find_map(|line| {
            let value = line.trim().strip_prefix(key)?.strip_prefix('=')?;
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            let unescaped = unquoted.replace("\\\"", "\"").replace("\\\\", "\\");
            (!unescaped.is_empty()).then_some(unescaped)
        })
    };
    field("PRETTY_NAME").or_else(|| match (field("NAME"), field("VERSION")) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (n, _) => n,
    })
}

/// The version of an installed package from dpkg's status file
/// (`/var/lib/dpkg/status`), if its status is `install ok installed`.
pub fn installed_version(dpkg_status: &str, package: &str) -> Option<String> {
    dpkg_status.split("\n\n").find_map(|stanza| {
        let mut name = None;
        let mut status = None;
        let mut version = None;
        for line in stanza.lines() {
            if let Some(v) = line.strip_prefix("Package:") {
                name = Some(v.trim());
            } else if let Some(v) = line.strip_prefix("Status:") {
                status = Some(v.trim());
            } else if let Some(v) = line.strip_prefix("Version:") {
                version = Some(v.trim());
            }
        }
        (name == Some(package) && status == Some("install ok installed"))
            .then(|| version.map(str::to_string))?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_names() {
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
        assert_eq!(
            os_pretty_name(debian).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            os_pretty_name("NAME=Foo\nVERSION='1 (x)'\n").as_deref(),
            Some("Foo 1 (x)")
        );
        assert_eq!(
            os_pretty_name("PRETTY_NAME=\"\"\nNAME=Bar\n").as_deref(),
            Some("Bar")
        );
        assert_eq!(os_pretty_name(""), None);
    }

    #[test]
    fn dpkg_status_versions() {
        let status = "Package: pve-manager\nStatus: install ok installed\nPriority: optional\nVersion: 9.0.11\n\n\
                      Package: old\nStatus: deinstall ok config-files\nVersion: 1.0\n\n\
                      Package: pve-manager-extra\nStatus: install ok installed\nVersion: 2\n";
        assert_eq!(
            installed_version(status, "pve-manager").as_deref(),
            Some("9.0.11")
        );
        assert_eq!(installed_version(status, "old"), None);
        assert_eq!(installed_version(status, "pve"), None);
        assert_eq!(installed_version("", "pve-manager"), None);
    }
}
