//! Small host files that make up the host fingerprint: `/proc/meminfo`,
//! `/etc/os-release` and dpkg's status file.

/// `MemTotal` in bytes.
pub fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemTotal:")?;
        let mut words = rest.split_whitespace();
        let value: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") | None => value.checked_mul(1024),
            Some(_) => None,
        }
    })
}

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
    fn meminfo_total() {
        assert_eq!(
            mem_total_bytes("MemTotal:       24597680 kB\nMemFree: 1 kB\n"),
            Some(24597680 * 1024)
        );
        assert_eq!(mem_total_bytes("MemFree: 1 kB\n"), None);
        assert_eq!(mem_total_bytes("MemTotal: x kB\n"), None);
        assert_eq!(mem_total_bytes("MemTotal: 99999999999999999999 kB\n"), None);
    }

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
