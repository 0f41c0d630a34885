//! Pure parsers for the host files, tool output and packets pveprobe
//! reads. Each takes text or bytes and returns plain data, never touching
//! the file system: the fuzz targets (`fuzz/`) build this crate alone.

pub mod ceph;
pub mod cephconf;
pub mod cgroup;
pub mod cidr;
pub mod corosync;
pub mod cpuinfo;
pub mod datacenter;
pub mod dmtable;
pub mod dns;
pub mod guestconf;
pub mod hostfacts;
pub mod inuse;
pub mod iostat;
pub mod kmod;
pub mod knet;
pub mod link;
pub mod lvs;
pub mod memory;
pub mod mountinfo;
pub mod netdev;
pub mod oom;
pub mod pbs;
pub mod pressure;
pub mod procfs;
pub mod procpid;
pub mod pvesm;
pub mod pvetasks;
pub mod qmp;
pub mod recordframe;
pub mod resolv;
mod sectionconfig;
pub mod smart;
pub mod statuscfg;
pub mod storagecfg;
pub mod sysfs;
pub mod units;
pub mod vmconf;
pub mod vmlist;
pub mod zfs;

/// How much of a bad input an error quotes, in characters.
pub(crate) const QUOTED_CHARS: usize = 64;

/// What an error message quotes of a bad input: its first [`QUOTED_CHARS`]
/// characters.
pub(crate) fn quote(s: &str) -> String {
    s.chars().take(QUOTED_CHARS).collect()
}

/// White space inside a line (Perl's `\s` but the newline): what the
/// config files' own readers skip around keys and values.
pub(crate) fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\x0b' | '\x0c')
}

/// What the parsers' unit tests share: the fixtures under `fixtures/`.
#[cfg(test)]
pub(crate) mod testutil {
    /// The path of `fixtures/<path>` in the repository.
    fn path(path: &str) -> String {
        format!("{}/../../fixtures/{path}", env!("CARGO_MANIFEST_DIR"))
    }

    /// The text of `fixtures/<dir>/<name>` (bytes that are no UTF-8 as
    /// U+FFFD: a binary fixture is text a parser must refuse).
    pub(crate) fn fixture(dir: &str, name: &str) -> String {
        let path = path(&format!("{dir}/{name}"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The names of the files in `fixtures/<dir>`, sorted: a test lists
    /// them to show that every fixture there is one it reads.
    pub(crate) fn fixture_names(dir: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}
