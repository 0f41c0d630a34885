//! `/proc/self/mountinfo`: which mount holds a path, its source and type.
//!
//! Format (proc(5)): `id parent major:minor root mount-point options
//! [optional fields...] - fstype source super-options`. Paths escape space,
//! tab, newline and backslash as `\040`, `\011`, `\012` and `\134`.
//!
//! The one `/proc` parser kept of pveprobe's own, a thin adapter where
//! procfs-core's `MountInfo` cannot read what pveprobe needs: it leaves
//! those escapes undecoded (`fixtures/hosts/odd/proc/self/mountinfo`'s
//! `/mnt/with\040space` would be no path on the host), keeps the options
//! as an unordered map (the JSON and `-v` print them in the kernel's
//! order), and drops a source named `none`, which `df` shows.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub mount_id: u32,
    pub parent_id: u32,
    pub major: u32,
    pub minor: u32,
    /// The directory of the filesystem that forms this mount's root (a bind mount's subtree).
    pub root: String,
    pub mount_point: PathBuf,
    pub options: String,
    pub fstype: String,
    /// What `df` shows as "Filesystem": `/dev/sda1`, `rpool/data`, `tmpfs`.
    pub source: String,
    pub super_options: String,
}

impl MountEntry {
    pub fn is_read_only(&self) -> bool {
        self.options.split(',').any(|o| o == "ro")
            || self.super_options.split(',').any(|o| o == "ro")
    }
}

/// Decodes the kernel's octal escapes (`\040` and friends); anything else is kept as is.
pub fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                if let Ok(byte) = u8::try_from(value) {
                    out.push(byte);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line; `None` for a malformed one.
pub fn parse_line(line: &str) -> Option<MountEntry> {
    let mut fields = line.split(' ');
    let mount_id = fields.next()?.parse().ok()?;
    let parent_id = fields.next()?.parse().ok()?;
    let (major, minor) = fields.next()?.split_once(':')?;
    let major = major.parse().ok()?;
    let minor = minor.parse().ok()?;
    let root = unescape(fields.next()?);
    let mount_point = PathBuf::from(unescape(fields.next()?));
    let options = fields.next()?.to_string();
    // Optional fields run up to a lone "-".
    fields.by_ref().find(|f| *f == "-")?;
    let fstype = unescape(fields.next()?);
    let source = unescape(fields.next()?);
    let super_options = fields.next().unwrap_or("").to_string();
    if !mount_point.is_absolute() {
        return None;
    }
    Some(MountEntry {
        mount_id,
        parent_id,
        major,
        minor,
        root,
        mount_point,
        options,
        fstype,
        source,
        super_options,
    })
}

/// Parses the whole file, skipping malformed lines.
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

/// The mount that holds `path` (absolute, with symlinks already resolved):
/// of the visible mounts whose mount point is a prefix of the path, the one
/// with the longest mount point (the last, if several are stacked there).
pub fn mount_for<'a>(entries: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let path = normalize(path);
    // Only mounts on the path matter: a mount that hides one of them sits
    // on a prefix of its mount point, so it is on the path too.
    let candidates: Vec<usize> = (0..entries.len())
        .filter(|&i| path.starts_with(&entries[i].mount_point))
        .collect();
    let tree = MountTree::new(entries);
    candidates
        .iter()
        .enumerate()
        .filter(|&(k, &i)| !is_hidden(entries, &tree, i, &candidates[k + 1..]))
        .map(|(_, &i)| &entries[i])
        .fold(None, |best: Option<&MountEntry>, e| match best {
            Some(b) if b.mount_point.components().count() > e.mount_point.components().count() => {
                Some(b)
            }
            _ => Some(e),
        })
}

/// True when a mount made later sits on the entry's mount point or on a
/// directory above it without being the entry's ancestor: the later mount
/// covers it, so paths below its mount point no longer reach it.
fn is_hidden(entries: &[MountEntry], tree: &MountTree, index: usize, later: &[usize]) -> bool {
    let entry = &entries[index];
    later
        .iter()
        .filter(|&&l| entry.mount_point.starts_with(&entries[l].mount_point))
        .any(|&l| !tree.is_ancestor(entries, entries[l].mount_id, index))
}

/// The parent links of the mount table as a tree, numbered in depth-first
/// order so that "is an ancestor of" is a comparison, whatever the table's
/// size (a hostile or huge mountinfo must not take quadratic walks).
struct MountTree {
    /// mount id -> index of its first entry.
    index: HashMap<u32, usize>,
    /// Depth-first entry and exit numbers; `u32::MAX` where unreached (a
    /// parent loop in malformed input).
    tin: Vec<u32>,
    tout: Vec<u32>,
}

impl MountTree {
    fn new(entries: &[MountEntry]) -> Self {
        let mut index = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            index.entry(e.mount_id).or_insert(i);
        }
        let parent = |i: usize| {
            index
                .get(&entries[i].parent_id)
                .copied()
                .filter(|&p| p != i && entries[i].mount_id != entries[i].parent_id)
        };
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
        let mut roots = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            match parent(i) {
                Some(p) if index.get(&entry.mount_id) == Some(&i) => children[p].push(i),
                _ => roots.push(i),
            }
        }
        let (mut tin, mut tout) = (vec![u32::MAX; entries.len()], vec![u32::MAX; entries.len()]);
        let mut clock = 0u32;
        for root in roots {
            let mut stack = vec![(root, 0usize)];
            tin[root] = clock;
            clock += 1;
            while let Some((node, next)) = stack.pop() {
                if let Some(&child) = children[node].get(next) {
                    stack.push((node, next + 1));
                    if tin[child] == u32::MAX {
                        tin[child] = clock;
                        clock += 1;
                        stack.push((child, 0));
                    }
                } else {
                    tout[node] = clock;
                    clock += 1;
                }
            }
        }
        Self { index, tin, tout }
    }

    /// True when the mount `ancestor_id` is on the parent chain of entry `i`.
    fn is_ancestor(&self, entries: &[MountEntry], ancestor_id: u32, i: usize) -> bool {
        let Some(&a) = self.index.get(&ancestor_id) else {
            return false;
        };
        if self.tin[a] != u32::MAX && self.tin[i] != u32::MAX {
            return a != i && self.tin[a] < self.tin[i] && self.tout[i] < self.tout[a];
        }
        // Outside the tree (a loop of parents): a short walk, bounded.
        let mut current = &entries[i];
        for _ in 0..64 {
            if current.parent_id == ancestor_id {
                return true;
            }
            match self.index.get(&current.parent_id) {
                Some(&p) if entries[p].mount_id != current.mount_id => current = &entries[p],
                _ => return false,
            }
        }
        false
    }
}

/// Lexically drops `.` components and trailing slashes (`..` is left to canonicalize).
fn normalize(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/mapper/pve-root rw,errors=remount-ro
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
40 22 0:35 / /var/lib/vz rw,relatime shared:20 master:3 - ext4 /dev/mapper/pve-data rw
41 40 0:36 / /var/lib/vz/my\\040dir rw,relatime - tmpfs tmp\\040fs rw,size=1024k
42 22 253:1 /srv/data /mnt/bind rw,relatime shared:1 - ext4 /dev/mapper/pve-root rw
43 22 0:40 / /mnt/stack rw - tmpfs first rw
44 22 0:41 / /mnt/stack ro - tmpfs second rw
";

    #[test]
    fn parses_fields_and_optional_tags() {
        let entries = parse(SAMPLE);
        assert_eq!(entries.len(), 7);
        let vz = &entries[2];
        assert_eq!(
            (vz.mount_id, vz.parent_id, vz.major, vz.minor),
            (40, 22, 0, 35)
        );
        assert_eq!(vz.fstype, "ext4");
        assert_eq!(vz.source, "/dev/mapper/pve-data");
        assert!(!vz.is_read_only());
        assert!(entries[6].is_read_only());
    }

    #[test]
    fn decodes_octal_escapes() {
        assert_eq!(unescape("my\\040dir\\011x\\012y\\134z"), "my dir\tx\ny\\z");
        assert_eq!(unescape("trailing\\04"), "trailing\\04");
        assert_eq!(unescape("\\999"), "\\999");
        assert_eq!(unescape("\\777"), "\\777");
        let entries = parse(SAMPLE);
        assert_eq!(entries[3].mount_point, PathBuf::from("/var/lib/vz/my dir"));
        assert_eq!(entries[3].source, "tmp fs");
    }

    #[test]
    fn finds_longest_prefix_and_topmost_stacked_mount() {
        let entries = parse(SAMPLE);
        let find = |p: &str| mount_for(&entries, Path::new(p)).map(|e| e.mount_id);
        assert_eq!(find("/"), Some(22));
        assert_eq!(find("/var/lib/vz"), Some(40));
        assert_eq!(find("/var/lib/vz/images/100"), Some(40));
        assert_eq!(
            find("/var/lib/vzdump"),
            Some(22),
            "prefix must match whole components"
        );
        assert_eq!(find("/var/lib/vz/my dir/x"), Some(41));
        assert_eq!(find("/mnt/bind/sub"), Some(42));
        assert_eq!(find("/mnt/stack"), Some(44));
        assert_eq!(find("/./var/lib/vz/"), Some(40));
    }

    #[test]
    fn a_later_mount_above_hides_a_deeper_one() {
        let text = "\
1 0 8:1 / / rw - ext4 /dev/sda1 rw
2 1 0:50 / /mnt/a/b rw - tmpfs inner rw
3 1 0:51 / /mnt/a rw - tmpfs cover rw
4 3 0:52 / /mnt/a/c rw - tmpfs child rw
";
        let entries = parse(text);
        let find = |p: &str| mount_for(&entries, Path::new(p)).map(|e| e.mount_id);
        assert_eq!(find("/mnt/a/b/x"), Some(3), "inner is covered by cover");
        assert_eq!(
            find("/mnt/a/c"),
            Some(4),
            "a mount on top of cover stays visible"
        );
        assert_eq!(find("/mnt"), Some(1));
    }

    #[test]
    fn parent_loops_do_not_hang() {
        let text = "5 6 0:1 / /x rw - tmpfs a rw\n6 5 0:2 / / rw - tmpfs b rw\n7 7 0:3 / /x rw - tmpfs c rw\n";
        let entries = parse(text);
        assert_eq!(
            mount_for(&entries, Path::new("/x/y")).map(|e| e.mount_id),
            Some(7)
        );
    }

    #[test]
    fn rejects_malformed_lines() {
        for line in [
            "",
            "x",
            "1 2 3:4 / /",
            "1 2 3 / / rw - ext4 src",
            "1 2 3:4 / rel rw - ext4 src",
            "1 2 3:4 / / rw ext4 src",
        ] {
            assert_eq!(parse_line(line), None, "{line:?}");
        }
    }
}
