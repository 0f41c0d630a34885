//! `/etc/pve/storage.cfg`: the storages Proxmox VE knows, read the way PVE
//! itself reads the file, so the probe never sees a storage PVE would not.
//!
//! The format is PVE's section config. The rules below mirror
//! `PVE::SectionConfig::parse_config` (pve-common `src/PVE/SectionConfig.pm`)
//! with the storage plugin's overrides (`parse_section_header`,
//! `decode_value` and `parse_config` in pve-storage
//! `src/PVE/Storage/Plugin.pm`), and the plugins' `options` and `properties`:
//!
//! - The file is split on `\n` only; a `\r` stays part of its line. Every
//!   line counts for the line numbers, comments included.
//! - A line whose first non-blank character is `#` is a comment wherever
//!   it stands, inside a section too; it neither starts nor ends anything.
//! - A section header is `TYPE: ID` at the start of a line (pattern
//!   `^(\S+):\s*(\S+)\s*$`, so `dir:local` is one too, and of several
//!   colons the last one that leaves an ID separates). The type is
//!   lowercased. Headers are only seen between sections: a header line
//!   right after a property line, with no empty line between, is ignored
//!   with a warning, and the property lines after it go to the section
//!   before.
//! - Property lines start with white space: `KEY VALUE`, the value running
//!   to the end of the line with outer blanks cut, or a bare `KEY`.
//! - A section ends at an empty line, at a line that is exactly `0` (Perl
//!   counts both as false), or at the end of the file. A line of blanks
//!   (or a lone `\r`) does not end it: PVE ignores it with a warning and
//!   keeps reading the section. So in a file with CRLF line ends only the
//!   first section is read; every later header is an ignored line.
//! - A storage ID must be at least 2 characters and match
//!   `^[a-z][a-z0-9\-_.]*[a-z0-9]$` ignoring case
//!   (`PVE::JSONSchema::parse_storage_id`); a section with another ID, or
//!   of a type PVE does not know, is skipped with a warning.
//! - Within a section, PVE checks each property against the type's schema:
//!   a key the type does not take, a key seen before in the section (the
//!   first one stays), a bare key that is no boolean, a boolean other than
//!   `0` or `1` (so `disable yes` does *not* disable), an integer out of
//!   range, and a value of a checked format (paths, LVM names, content
//!   and node lists, mount options, directory overrides, Ceph FS names,
//!   volume IDs, fingerprints, enumerations) that does not fit are ignored
//!   with a warning; the rest of the section stays.
//! - A section that lacks one of its type's required keys (`path` for
//!   `dir`, `server` and `export` for `nfs`, ...), or whose `content` is
//!   left empty on a type without `none`, is dropped with a warning.
//! - Two sections with the same ID (case matters): the later one replaces
//!   the earlier, and takes its own place in the order. PVE does this
//!   silently; here it gives a warning. If the later one is dropped as
//!   invalid, the earlier is gone too, as in PVE. (PVE keeps the ID
//!   without a configuration then, so, reading `storage_info` in
//!   `PVE/Storage.pm`, `pvesm status` would die with "storage 'ID' does
//!   not exist"; the same holds for any section dropped as invalid.)
//!
//! What PVE adds after reading (a built-in `local` when the file has no
//! usable one, default content types, `shared` for network storages) is
//! not put into the sections; [`StorageCfg::builtin_local`],
//! [`Section::content`] and [`Section::is_shared`] answer for it.
//!
//! Not checked (kept as written): property-string values (`prune-backups`,
//! `bwlimit`), server, portal and monitor addresses, ZFS block sizes (their
//! check is new in PVE 9 and stricter than PVE 8's).

mod schema;

use std::collections::HashSet;

use crate::sectionconfig::{Lines, is_false, is_space, parse_header, parse_property, quote};

pub use schema::known_types;
use schema::*;

/// Larger input is refused: PVE's own storage.cfg files are a few KiB.
pub const MAX_BYTES: usize = 1 << 20;
/// More section headers than this are refused.
pub const MAX_SECTIONS: usize = 4096;
/// Warnings kept; the rest are only counted in
/// [`StorageCfg::warnings_omitted`].
pub const MAX_WARNINGS: usize = 256;
/// Property lines kept for a section of an unsupported type; further
/// lines are passed over.
pub const MAX_UNSUPPORTED_OPTIONS: usize = 256;

/// One `TYPE: ID` section with its property lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The storage type, lowercased as PVE does: `dir`, `lvmthin`, `nfs`...
    pub kind: String,
    /// The storage ID as written.
    pub id: String,
    /// The 1-based line of the section header.
    pub line: usize,
    /// Properties in file order; `None` for a bare key (a flag such as
    /// `disable`, which PVE writes without a value).
    pub options: Vec<(String, Option<String>)>,
}

impl Section {
    /// The value of `key`; `None` if the key is absent or bare.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Whether `key` is present, with or without a value.
    pub fn has(&self, key: &str) -> bool {
        self.options.iter().any(|(k, _)| k == key)
    }

    /// A boolean property: true for a bare key or `1`, `yes`, `true`, `on`
    /// (any case, `PVE::JSONSchema::parse_boolean`); false when absent or
    /// `0`, `no`, `false`, `off` or anything else. For the storage types'
    /// own boolean keys [`parse`] has already dropped every value but `0`
    /// and `1`, as PVE does.
    pub fn flag(&self, key: &str) -> bool {
        match self.options.iter().find(|(k, _)| k == key) {
            Some((_, None)) => true,
            Some((_, Some(v))) => parse_boolean(v) == Some(true),
            None => false,
        }
    }

    /// A list value split as `PVE::Tools::split_list` splits `content`,
    /// `nodes` and `content-dirs`: on commas, semicolons and white space,
    /// empty items dropped. Empty if the key is absent or bare.
    pub fn list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .map(|v| split_list(v).map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// The content types PVE lets this storage hold, in file order: the
    /// `content` items the type supports, or the type's default when the
    /// key is absent (`images,rootdir` for `dir`, `images` for `nfs`, ...:
    /// the plugins' `plugindata`). `none` gives an empty list.
    pub fn content(&self) -> Vec<String> {
        let def = type_def(&self.kind);
        let items: Vec<&str> = match (self.get("content"), def) {
            (Some(v), Some(def)) => split_list(v).filter(|c| has_word(def.content, c)).collect(),
            (Some(v), None) => split_list(v).collect(),
            (None, Some(def)) => def.default_content.split_ascii_whitespace().collect(),
            (None, None) => Vec::new(),
        };
        let mut seen = HashSet::new();
        items
            .into_iter()
            .filter(|c| *c != "none" && seen.insert(*c))
            .map(str::to_string)
            .collect()
    }

    /// Whether PVE treats the storage as shared between nodes: always for
    /// the network types (`@SHARED_STORAGE` in Plugin.pm), else when the
    /// `shared` flag is set.
    pub fn is_shared(&self) -> bool {
        has_word(SHARED_STORAGE, &self.kind) || self.flag("shared")
    }

    /// Whether the storage is usable on `node`: not disabled, and `node`
    /// listed in `nodes` if that key is present (even with an empty list,
    /// as `storage_check_enabled` and `storage_check_node` in
    /// `PVE/Storage.pm` decide). PVE ignores `nodes` on `local`.
    pub fn enabled_on(&self, node: &str) -> bool {
        if self.flag("disable") {
            return false;
        }
        self.id == "local" || !self.has("nodes") || self.list("nodes").iter().any(|n| n == node)
    }
}

/// storage.cfg as PVE reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageCfg {
    /// The storages PVE keeps, in its order (a replaced ID at the place of
    /// the later section).
    pub sections: Vec<Section>,
    /// Sections of types PVE's own plugins do not know (a third-party
    /// plugin's, such as `drbd`), which PVE skips unless that plugin is
    /// installed. Their properties are unchecked, repeated keys included
    /// (the first [`MAX_UNSUPPORTED_OPTIONS`]).
    pub unsupported: Vec<Section>,
    /// What PVE would warn about and ignore, each starting with `line N`;
    /// the first [`MAX_WARNINGS`].
    pub warnings: Vec<String>,
    /// Warnings beyond [`MAX_WARNINGS`], counted only.
    pub warnings_omitted: usize,
}

impl StorageCfg {
    /// The section with this storage ID.
    pub fn get(&self, id: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.id == id)
    }

    /// True when PVE puts its built-in `local` (a `dir` on `/var/lib/vz`
    /// with every content type) in place of what the file says: when there
    /// is no `local` section, or it is no `dir`, or its path is another
    /// (`PVE::Storage::Plugin::parse_config`).
    pub fn builtin_local(&self) -> bool {
        match self.get("local") {
            None => true,
            Some(s) => s.kind != "dir" || s.get("path").is_some_and(|p| p != "/var/lib/vz"),
        }
    }

    /// Records a warning; `text` is only formatted while there is room.
    fn warn(&mut self, line: usize, text: impl FnOnce() -> String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(format!("line {line} {}", text()));
        } else {
            self.warnings_omitted += 1;
        }
    }
}

/// Input that cannot be a storage.cfg at all.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StorageCfgError {
    #[error("storage.cfg is {bytes} bytes, more than the {MAX_BYTES} read")]
    TooLarge { bytes: usize },
    #[error("storage.cfg has more than {MAX_SECTIONS} sections (line {line})")]
    TooManySections { line: usize },
    #[error("storage.cfg line {line} holds a NUL byte: not a text file")]
    Nul { line: usize },
    #[error("storage.cfg line {line} holds control character {code:#04x}: not a text file")]
    ControlChar { line: usize, code: u32 },
}

/// Reads storage.cfg. Errors only for input that is no text or too large;
/// everything PVE would ignore with a warning is ignored with a warning.
pub fn parse(text: &str) -> Result<StorageCfg, StorageCfgError> {
    if text.len() > MAX_BYTES {
        return Err(StorageCfgError::TooLarge { bytes: text.len() });
    }
    check_text(text)?;
    let mut cfg = StorageCfg::default();
    let mut lines = Lines::new(text);
    let mut ids = HashSet::new();
    let mut headers = 0usize;
    while let Some((no, line)) = lines.next_content() {
        if is_false(line) {
            continue;
        }
        let Some((kind, id)) = parse_header(line) else {
            cfg.warn(no, || format!("- ignore config line: {}", quote(line)));
            continue;
        };
        headers += 1;
        if headers > MAX_SECTIONS {
            return Err(StorageCfgError::TooManySections { line: no });
        }
        if let Err(msg) = check_storage_id(id) {
            cfg.warn(no, || format!("(skip section '{id}'): {msg}"));
            lines.skip_section();
            continue;
        }
        let mut section = Section {
            kind: kind.to_ascii_lowercase(),
            id: id.to_string(),
            line: no,
            options: Vec::new(),
        };
        let Some(def) = type_def(&section.kind) else {
            cfg.warn(no, || {
                format!("(skip section '{id}'): unsupported type '{}'", section.kind)
            });
            while let Some((_, line)) = lines.next_in_section() {
                if section.options.len() >= MAX_UNSUPPORTED_OPTIONS {
                    continue;
                }
                if let Some((key, value)) = parse_property(line) {
                    section
                        .options
                        .push((key.to_string(), value.map(str::to_string)));
                }
            }
            cfg.unsupported.push(section);
            continue;
        };
        let mut option_lines = Vec::new();
        let mut last = no;
        while let Some((no, line)) = lines.next_in_section() {
            last = no;
            let Some((key, value)) = parse_property(line) else {
                cfg.warn(no, || {
                    format!("(section '{id}') - ignore config line: {}", quote(line))
                });
                continue;
            };
            let checked = if !is_property(key) {
                Err("unknown property type".to_string())
            } else if section.has(key) {
                Err("duplicate attribute".to_string())
            } else {
                check_value(def, key, value)
            };
            match checked {
                Ok(()) => {
                    section
                        .options
                        .push((key.to_string(), value.map(str::to_string)));
                    option_lines.push(no);
                }
                Err(msg) => cfg.warn(no, || {
                    format!("(section '{id}') - unable to parse value of '{key}': {msg}")
                }),
            }
        }
        let kept = match decode(def, &mut section, &mut option_lines, &mut cfg) {
            Ok(()) => Some(section),
            Err(msg) => {
                cfg.warn(last, || format!("(skip section '{id}'): {msg}"));
                None
            }
        };
        let earlier = if ids.insert(id.to_string()) {
            None
        } else {
            cfg.sections.iter().position(|s| s.id == id)
        };
        if let Some(pos) = earlier {
            let earlier = cfg.sections.remove(pos);
            cfg.warn(no, || {
                format!(
                    "(section '{id}'): storage ID already used at line {}; \
                     PVE keeps only this later section",
                    earlier.line
                )
            });
        }
        if let Some(section) = kept {
            cfg.sections.push(section);
        }
    }
    Ok(cfg)
}

/// Sections as PVE's `write_config` lays them out: `TYPE: ID`, one
/// tab-indented `KEY VALUE` (or bare `KEY`) line per property in the
/// given order, an empty line after each section. What [`parse`] returns,
/// written so, reads back the same.
pub fn write(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!("{}: {}\n", s.kind, s.id));
        for (key, value) in &s.options {
            match value {
                Some(v) => out.push_str(&format!("\t{key} {v}\n")),
                None => out.push_str(&format!("\t{key}\n")),
            }
        }
        out.push('\n');
    }
    out
}

/// Whether PVE accepts `id` as a storage ID (`PVE::JSONSchema::parse_id`).
pub fn is_valid_storage_id(id: &str) -> bool {
    check_storage_id(id).is_ok()
}

fn check_storage_id(id: &str) -> Result<(), String> {
    if id.len() < 2 {
        return Err(format!(
            "storage ID '{id}' cannot be shorter than 2 characters"
        ));
    }
    if is_storage_name(id) {
        Ok(())
    } else {
        Err(format!("storage ID '{id}' contains illegal characters"))
    }
}

/// NUL and other control characters (but tab, line feed, carriage return,
/// vertical tab and form feed, which Perl's `\s` knows) mean binary input.
fn check_text(text: &str) -> Result<(), StorageCfgError> {
    let Some(pos) = text.find(|c: char| {
        (c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0b' | '\x0c')) || c == '\x7f'
    }) else {
        return Ok(());
    };
    let line = text[..pos].matches('\n').count() + 1;
    let code = u32::from(text[pos..].chars().next().unwrap_or('\0'));
    if code == 0 {
        Err(StorageCfgError::Nul { line })
    } else {
        Err(StorageCfgError::ControlChar { line, code })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testutil::fixture("pve/storage-cfg", name)
    }

    fn parsed(name: &str) -> StorageCfg {
        parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn opts(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect()
    }

    fn summary(cfg: &StorageCfg) -> Vec<(String, String, usize)> {
        cfg.sections
            .iter()
            .map(|s| (s.kind.clone(), s.id.clone(), s.line))
            .collect()
    }

    fn ids(cfg: &StorageCfg) -> Vec<&str> {
        cfg.sections.iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn default_install_has_exactly_local_and_local_lvm() {
        let cfg = parsed("default-install.cfg");
        assert_eq!(
            cfg.sections,
            vec![
                Section {
                    kind: "dir".into(),
                    id: "local".into(),
                    line: 1,
                    options: opts(&[
                        ("path", Some("/var/lib/vz")),
                        ("content", Some("iso,vztmpl,backup")),
                    ]),
                },
                Section {
                    kind: "lvmthin".into(),
                    id: "local-lvm".into(),
                    line: 5,
                    options: opts(&[
                        ("thinpool", Some("data")),
                        ("vgname", Some("pve")),
                        ("content", Some("rootdir,images")),
                    ]),
                },
            ]
        );
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
        assert!(cfg.unsupported.is_empty());
        // The installer's file is laid out as PVE writes it.
        assert_eq!(write(&cfg.sections), fixture("default-install.cfg"));
        assert!(!cfg.builtin_local());
        let local = cfg.get("local").unwrap();
        assert_eq!(local.content(), ["iso", "vztmpl", "backup"]);
        assert!(!local.is_shared());
        assert!(local.enabled_on("pve"));
        let lvm = cfg.get("local-lvm").unwrap();
        assert_eq!(lvm.content(), ["rootdir", "images"]);
        assert_eq!(lvm.list("content"), ["rootdir", "images"]);
        assert_eq!(lvm.get("vgname"), Some("pve"));
    }

    #[test]
    fn default_zfs_install_has_a_sparse_zfspool() {
        let cfg = parsed("default-zfs-install.cfg");
        assert_eq!(
            summary(&cfg),
            [
                ("dir".into(), "local".into(), 1),
                ("zfspool".into(), "local-zfs".into(), 5)
            ]
        );
        let zfs = cfg.get("local-zfs").unwrap();
        assert_eq!(
            zfs.options,
            opts(&[
                ("pool", Some("rpool/data")),
                ("sparse", None),
                ("content", Some("images,rootdir")),
            ])
        );
        assert!(zfs.flag("sparse"));
        assert_eq!(zfs.get("sparse"), None);
        assert!(zfs.has("sparse"));
        assert!(!zfs.flag("disable"));
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    }

    #[test]
    fn every_documented_type_parses_clean() {
        // (fixture, type, storage IDs), after PVE's documentation examples.
        let cases: [(&str, &str, &[&str]); 15] = [
            ("dir.cfg", "dir", &["backup"]),
            ("btrfs.cfg", "btrfs", &["data2"]),
            ("nfs.cfg", "nfs", &["iso-templates"]),
            ("cifs.cfg", "cifs", &["backup"]),
            ("cephfs.cfg", "cephfs", &["cephfs-external"]),
            ("glusterfs.cfg", "glusterfs", &[]),
            ("lvm.cfg", "lvm", &["myspace"]),
            ("lvmthin.cfg", "lvmthin", &["local-lvm"]),
            ("zfspool.cfg", "zfspool", &["vmdata"]),
            ("zfs.cfg", "zfs", &["lio", "solaris", "freebsd", "iet"]),
            ("rbd.cfg", "rbd", &["ceph-external", "ceph-vm"]),
            ("iscsi.cfg", "iscsi", &["mynas"]),
            ("iscsidirect.cfg", "iscsidirect", &["faststore"]),
            ("pbs.cfg", "pbs", &["backup"]),
            ("esxi.cfg", "esxi", &["esxi-import"]),
        ];
        for (name, kind, want) in cases {
            let cfg = parsed(name);
            assert_eq!(ids(&cfg), want, "{name}");
            assert!(cfg.sections.iter().all(|s| s.kind == kind), "{name}");
            if name != "pbs.cfg" && name != "glusterfs.cfg" {
                assert!(cfg.warnings.is_empty(), "{name}: {:?}", cfg.warnings);
            }
            // Each documented section keeps every property line it has.
            let text = fixture(name);
            let property_lines = text
                .lines()
                .filter(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty())
                .count();
            let kept: usize = cfg.sections.iter().map(|s| s.options.len()).sum();
            if name != "pbs.cfg" && name != "glusterfs.cfg" {
                assert_eq!(kept, property_lines, "{name}");
            }
        }
    }

    #[test]
    fn documented_values_read_back() {
        let nfs = parsed("nfs.cfg");
        let nfs = nfs.get("iso-templates").unwrap();
        assert_eq!(nfs.get("server"), Some("10.0.0.10"));
        assert_eq!(nfs.get("export"), Some("/space/iso-templates"));
        assert_eq!(nfs.list("options"), ["vers=3", "soft"]);
        assert_eq!(nfs.content(), ["iso", "vztmpl"]);
        assert!(nfs.is_shared());

        let cephfs = parsed("cephfs.cfg");
        let cephfs = cephfs.get("cephfs-external").unwrap();
        assert_eq!(
            cephfs.list("monhost"),
            ["10.1.1.20", "10.1.1.21", "10.1.1.22"]
        );
        assert_eq!(cephfs.get("monhost"), Some("10.1.1.20 10.1.1.21 10.1.1.22"));

        let rbd = parsed("rbd.cfg");
        let external = rbd.get("ceph-external").unwrap();
        assert!(external.flag("krbd"));
        assert_eq!(external.get("username"), Some("admin"));
        assert_eq!(external.content(), ["images"]);
        let hci = rbd.get("ceph-vm").unwrap();
        assert!(!hci.flag("krbd"));
        assert!(hci.has("krbd"));
        assert!(!hci.has("monhost"));
        assert_eq!(hci.content(), ["rootdir", "images"]);
        assert!(hci.is_shared());

        let iscsi = parsed("iscsi.cfg");
        let mynas = iscsi.get("mynas").unwrap();
        assert!(mynas.content().is_empty(), "content none");
        assert_eq!(mynas.get("content"), Some("none"));

        let direct = parsed("iscsidirect.cfg");
        // No content line: PVE's default for the type.
        assert_eq!(direct.get("faststore").unwrap().content(), ["images"]);

        let zfs = parsed("zfs.cfg");
        assert_eq!(zfs.get("lio").unwrap().get("lio_tpg"), Some("tpg1"));
        assert!(zfs.get("lio").unwrap().flag("sparse"));
        assert_eq!(zfs.get("iet").unwrap().get("iscsiprovider"), Some("iet"));

        let esxi = parsed("esxi.cfg");
        let esxi = esxi.get("esxi-import").unwrap();
        assert!(esxi.flag("skip-cert-verification"));
        assert_eq!(esxi.content(), ["import"]);

        let dir = parsed("dir.cfg");
        let dir = dir.get("backup").unwrap();
        assert_eq!(dir.get("max-protected-backups"), Some("3"));
        assert_eq!(dir.get("content-dirs"), Some("backup=custom/backup/dir"));
        // `local` is missing from this file: PVE adds its own.
        assert!(parsed("dir.cfg").builtin_local());
    }

    #[test]
    fn documented_pbs_fingerprint_is_shortened_and_dropped() {
        // The documentation shortens the fingerprint with `..snip..`; PVE's
        // pattern check rejects it and keeps the rest of the section.
        let cfg = parsed("pbs.cfg");
        let pbs = cfg.get("backup").unwrap();
        assert!(!pbs.has("fingerprint"));
        assert_eq!(pbs.get("datastore"), Some("main"));
        assert_eq!(
            pbs.get("encryption-key"),
            Some("a9:ee:c8:02:13:..snip..:2d:53:2c:98")
        );
        assert_eq!(pbs.options.len(), 7);
        assert_eq!(
            cfg.warnings,
            [
                "line 5 (section 'backup') - unable to parse value of 'fingerprint': \
              value does not match the regex pattern"
            ]
        );
    }

    #[test]
    fn glusterfs_is_gone_from_pve() {
        // PVE 9 removed the GlusterFS plugin: its section is skipped and
        // kept apart.
        let cfg = parsed("glusterfs.cfg");
        assert!(cfg.sections.is_empty());
        assert_eq!(cfg.unsupported.len(), 1);
        let gluster = &cfg.unsupported[0];
        assert_eq!(
            (gluster.kind.as_str(), gluster.id.as_str()),
            ("glusterfs", "Gluster")
        );
        assert_eq!(gluster.get("server2"), Some("10.2.3.5"));
        assert_eq!(gluster.get("volume"), Some("glustervol"));
        assert_eq!(gluster.content(), ["images", "iso"]);
        assert_eq!(
            cfg.warnings,
            ["line 1 (skip section 'Gluster'): unsupported type 'glusterfs'"]
        );
    }

    #[test]
    fn truncated_section_loses_its_required_key() {
        let cfg = parsed("truncated.cfg");
        assert_eq!(ids(&cfg), ["local"]);
        assert_eq!(
            cfg.warnings,
            [
                "line 8 (section 'nas') - unable to parse value of 'ex': unknown property type",
                "line 8 (skip section 'nas'): missing value for required option 'export'",
            ]
        );
    }

    #[test]
    fn duplicate_ids_keep_the_later_section_in_its_place() {
        let cfg = parsed("duplicate-id.cfg");
        assert_eq!(ids(&cfg), ["local", "local-lvm", "backup"]);
        let backup = cfg.get("backup").unwrap();
        assert_eq!(backup.line, 14);
        assert_eq!(backup.get("path"), Some("/mnt/backup2"));
        // A repeated key inside a section: the first one stays.
        assert_eq!(backup.get("content"), Some("backup"));
        assert_eq!(
            cfg.warnings,
            [
                "line 17 (section 'backup') - unable to parse value of 'content': duplicate attribute",
                "line 14 (section 'backup'): storage ID already used at line 5; \
                 PVE keeps only this later section",
            ]
        );
    }

    #[test]
    fn binary_file_is_refused() {
        let err = parse(&fixture("binary.cfg")).unwrap_err();
        assert!(
            matches!(
                err,
                StorageCfgError::Nul { .. } | StorageCfgError::ControlChar { .. }
            ),
            "{err:?}"
        );
        assert_eq!(
            parse("dir: a0\n\tpath /x\0\n"),
            Err(StorageCfgError::Nul { line: 2 })
        );
        assert_eq!(
            parse("dir: a0\n\n\x1b[0m\n"),
            Err(StorageCfgError::ControlChar {
                line: 3,
                code: 0x1b
            })
        );
    }

    #[test]
    fn comments_and_odd_whitespace() {
        let cfg = parsed("comments-whitespace.cfg");
        assert_eq!(
            summary(&cfg),
            [
                ("dir".into(), "local".into(), 4),
                ("dir".into(), "Backup2".into(), 11),
                ("nfs".into(), "nas".into(), 19),
                ("zfspool".into(), "tank".into(), 29),
            ]
        );
        let local = cfg.get("local").unwrap();
        assert_eq!(
            local.options,
            opts(&[
                ("path", Some("/var/lib/vz")),
                ("content", Some("iso,vztmpl,backup")),
            ])
        );
        let backup = cfg.get("Backup2").unwrap();
        assert_eq!(backup.get("path"), Some("/mnt/backup two"));
        assert_eq!(backup.get("prune-backups"), Some("keep-last=3"));
        let nas = cfg.get("nas").unwrap();
        assert_eq!(nas.get("export"), Some("/srv/pve"));
        assert_eq!(nas.get("options"), Some("vers=4.2"));
        let tank = cfg.get("tank").unwrap();
        assert!(tank.flag("sparse"));
        assert_eq!(
            cfg.warnings,
            [
                "line 14 (section 'Backup2') - ignore config line:   ",
                "line 26 - ignore config line:  \\t",
            ]
        );
    }

    #[test]
    fn crlf_file_keeps_only_its_first_section() {
        let cfg = parsed("crlf.cfg");
        assert_eq!(ids(&cfg), ["local"]);
        let local = cfg.get("local").unwrap();
        assert_eq!(
            local.options,
            opts(&[
                ("path", Some("/var/lib/vz")),
                ("content", Some("iso,vztmpl,backup")),
            ])
        );
        assert_eq!(
            cfg.warnings,
            [
                "line 4 (section 'local') - ignore config line: \\r",
                "line 5 (section 'local') - ignore config line: lvmthin: local-lvm\\r",
                "line 6 (section 'local') - unable to parse value of 'thinpool': unexpected property 'thinpool'",
                "line 7 (section 'local') - unable to parse value of 'vgname': unexpected property 'vgname'",
                "line 8 (section 'local') - unable to parse value of 'content': duplicate attribute",
                "line 9 (section 'local') - ignore config line: \\r",
                "line 10 (section 'local') - ignore config line: nfs: nas\\r",
                "line 11 (section 'local') - unable to parse value of 'server': unexpected property 'server'",
                "line 12 (section 'local') - unable to parse value of 'export': unexpected property 'export'",
                "line 13 (section 'local') - unable to parse value of 'path': duplicate attribute",
                "line 14 (section 'local') - ignore config line: \\r",
            ]
        );
    }

    #[test]
    fn disabled_storage_with_nodes() {
        let cfg = parsed("disabled-nodes.cfg");
        assert_eq!(ids(&cfg), ["local", "local-lvm", "nas-backup", "fast"]);
        let nas = cfg.get("nas-backup").unwrap();
        assert_eq!(nas.options[0], ("disable".to_string(), None));
        assert!(nas.flag("disable"));
        assert_eq!(nas.list("nodes"), ["pve1", "pve2"]);
        assert!(!nas.enabled_on("pve1"));
        let fast = cfg.get("fast").unwrap();
        assert!(!fast.flag("disable"), "disable 0");
        assert!(fast.enabled_on("pve2"));
        assert!(!fast.enabled_on("pve1"));
        assert!(fast.enabled_on("pve3"));
        assert_eq!(fast.list("nodes"), ["pve2", "pve3"]);
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    }

    #[test]
    fn every_fixture_is_tested_here() {
        let names = crate::testutil::fixture_names("pve/storage-cfg");
        assert_eq!(
            names,
            [
                "binary.cfg",
                "btrfs.cfg",
                "cephfs.cfg",
                "cifs.cfg",
                "comments-whitespace.cfg",
                "crlf.cfg",
                "default-install.cfg",
                "default-zfs-install.cfg",
                "dir.cfg",
                "disabled-nodes.cfg",
                "duplicate-id.cfg",
                "esxi.cfg",
                "glusterfs.cfg",
                "iscsi.cfg",
                "iscsidirect.cfg",
                "lvm.cfg",
                "lvmthin.cfg",
                "nfs.cfg",
                "pbs.cfg",
                "rbd.cfg",
                "truncated.cfg",
                "zfs.cfg",
                "zfspool.cfg",
            ]
        );
    }

    #[test]
    fn sections_end_at_empty_lines_only() {
        // No empty line between sections: the second header is an ignored
        // line and its properties go to the first section.
        let cfg = parse("dir: one\n\tpath /a\ndir: two\n\tpath /b\n\tshared 1\n").unwrap();
        assert_eq!(ids(&cfg), ["one"]);
        assert_eq!(cfg.sections[0].get("shared"), Some("1"));
        assert_eq!(
            cfg.warnings,
            [
                "line 3 (section 'one') - ignore config line: dir: two",
                "line 4 (section 'one') - unable to parse value of 'path': duplicate attribute",
            ]
        );
        // A comment inside a section does not end it; a lone "0" does.
        let cfg =
            parse("dir: one\n# note\n\tpath /a\n0\n\tshared 1\ndir: two\n\tpath /b\n").unwrap();
        assert_eq!(ids(&cfg), ["one", "two"]);
        assert!(!cfg.sections[0].has("shared"));
        assert_eq!(
            cfg.warnings,
            ["line 5 - ignore config line: \tshared 1".replace('\t', "\\t")]
        );
        // Without a trailing newline the last section still counts.
        let cfg = parse("dir: one\n\tpath /a").unwrap();
        assert_eq!(cfg.sections[0].get("path"), Some("/a"));
    }

    #[test]
    fn headers_follow_perls_pattern() {
        assert_eq!(parse_header("dir: local"), Some(("dir", "local")));
        assert_eq!(parse_header("dir:local"), Some(("dir", "local")));
        assert_eq!(parse_header("dir:\t local \r"), Some(("dir", "local")));
        assert_eq!(parse_header("dir:local:"), Some(("dir", "local:")));
        assert_eq!(parse_header("a:b: c"), Some(("a:b", "c")));
        assert_eq!(parse_header("a::"), Some(("a", ":")));
        assert_eq!(parse_header("dir: local extra"), None);
        assert_eq!(parse_header("dir local"), None);
        assert_eq!(parse_header(": local"), None);
        assert_eq!(parse_header("dir:"), None);
        assert_eq!(parse_header(" dir: local"), None);
        assert_eq!(
            parse_property("\tpath  /var/lib/vz \r"),
            Some(("path", Some("/var/lib/vz")))
        );
        assert_eq!(parse_property("  disable"), Some(("disable", None)));
        assert_eq!(
            parse_property("\tmonhost a b  c"),
            Some(("monhost", Some("a b  c")))
        );
        assert_eq!(parse_property("path /x"), None);
        assert_eq!(parse_property(" \t"), None);
        // The type is lowercased; the ID keeps its case.
        let cfg = parse("DIR: Store1\n\tpath /s\n").unwrap();
        assert_eq!(summary(&cfg), [("dir".into(), "Store1".into(), 1)]);
    }

    #[test]
    fn invalid_ids_and_types_are_skipped() {
        let text = "dir: a\n\tpath /a\n\ndir: 1st\n\tpath /b\n\ndir: bad_\n\tpath /c\n\n\
                    dir: ok_1.x-y\n\tpath /d\n\nfoo: thing\n\tkey v\n\tkey w\n\tflag\n";
        let cfg = parse(text).unwrap();
        assert_eq!(ids(&cfg), ["ok_1.x-y"]);
        assert_eq!(
            cfg.warnings,
            [
                "line 1 (skip section 'a'): storage ID 'a' cannot be shorter than 2 characters",
                "line 4 (skip section '1st'): storage ID '1st' contains illegal characters",
                "line 7 (skip section 'bad_'): storage ID 'bad_' contains illegal characters",
                "line 13 (skip section 'thing'): unsupported type 'foo'",
            ]
        );
        assert_eq!(
            cfg.unsupported[0].options,
            opts(&[("key", Some("v")), ("key", Some("w")), ("flag", None)])
        );
        assert!(cfg.unsupported[0].flag("flag"));
        assert!(is_valid_storage_id("local-lvm"));
        assert!(is_valid_storage_id("A1"));
        assert!(!is_valid_storage_id("x"));
        assert!(!is_valid_storage_id("a-"));
        assert!(!is_valid_storage_id("ab:c"));
    }

    #[test]
    fn values_are_checked_like_pve() {
        let text = "dir: store\n\tpath /s\n\tdisable yes\n\tshared\n\tmkdir 0\n\
                    \tmax-protected-backups -2\n\tcontent\n\tpreallocation sometimes\n\
                    \tformat qcow2\n\tnodes pve1,bad_node\n\tthinpool data\n\tbogus 1\n\
                    \ttype dir\n\tis_mountpoint yes\n";
        let cfg = parse(text).unwrap();
        let s = cfg.get("store").unwrap();
        assert_eq!(
            s.options,
            opts(&[
                ("path", Some("/s")),
                ("shared", None),
                ("mkdir", Some("0")),
                ("format", Some("qcow2")),
                ("type", Some("dir")),
                ("is_mountpoint", Some("yes")),
            ])
        );
        // `disable yes` is dropped: the storage stays enabled, as in PVE.
        assert!(!s.flag("disable"));
        assert!(s.enabled_on("anywhere"));
        assert!(s.flag("shared") && !s.flag("mkdir") && s.flag("is_mountpoint"));
        let prefix = "(section 'store') - unable to parse value of";
        assert_eq!(
            cfg.warnings,
            [
                format!("line 3 {prefix} 'disable': type check ('boolean') failed - got 'yes'"),
                format!(
                    "line 6 {prefix} 'max-protected-backups': value must have a minimum value of -1"
                ),
                format!("line 7 {prefix} 'content': got undefined value"),
                format!(
                    "line 8 {prefix} 'preallocation': value 'sometimes' does not have a value \
                     in the enumeration 'off, metadata, falloc, full'"
                ),
                format!(
                    "line 10 {prefix} 'nodes': invalid format - value does not look like a valid node name"
                ),
                format!("line 11 {prefix} 'thinpool': unexpected property 'thinpool'"),
                format!("line 12 {prefix} 'bogus': unknown property type"),
            ]
        );
        // No content line survived: the type's default.
        assert_eq!(s.content(), ["images", "rootdir"]);
    }

    #[test]
    fn more_value_checks() {
        let check = |kind: &str, key: &str, value: Option<&str>| {
            check_value(type_def(kind).unwrap(), key, value)
        };
        assert_eq!(check("pbs", "port", Some("8007")), Ok(()));
        assert_eq!(check("pbs", "port", Some("+8007")), Ok(()));
        assert_eq!(
            check("pbs", "port", Some("65536")),
            Err("value must have a maximum value of 65535".into())
        );
        assert_eq!(
            check(
                "pbs",
                "port",
                Some("99999999999999999999999999999999999999999999")
            ),
            Err("value must have a maximum value of 65535".into())
        );
        assert_eq!(
            check("pbs", "port", Some("80a")),
            Err("type check ('integer') failed - got '80a'".into())
        );
        assert_eq!(check("lvm", "saferemove-stepsize", Some("16")), Ok(()));
        assert!(check("lvm", "saferemove-stepsize", Some("+16")).is_err());
        assert_eq!(check("lvm", "vgname", Some("pve")), Ok(()));
        assert_eq!(
            check("lvm", "vgname", Some("v")),
            Err("invalid format - lvm name 'v' contains illegal characters".into())
        );
        assert_eq!(check("lvm", "base", Some("iscsi1:0.0.1.scsi-36")), Ok(()));
        assert!(check("lvm", "base", Some("0bad:x")).is_err());
        assert_eq!(
            check("dir", "path", Some("/a;b")),
            Ok(()),
            "only the start is checked"
        );
        assert!(check("dir", "path", Some("/;a")).is_err());
        assert!(check("dir", "path", Some("relative")).is_err());
        assert!(check("dir", "path", Some("/")).is_err());
        assert_eq!(
            check("nfs", "options", Some("vers=3, soft")),
            Err("invalid format - invalid options 'vers=3, soft'".into())
        );
        assert_eq!(
            check("dir", "content", Some("images,floppy")),
            Err("invalid format - invalid content type 'floppy'".into())
        );
        assert_eq!(
            check("dir", "content-dirs", Some("iso=isos,backup=a/b.c")),
            Ok(())
        );
        assert!(check("dir", "content-dirs", Some("iso=../up")).is_err());
        assert!(check("dir", "content-dirs", Some("iso=dot.")).is_err());
        assert_eq!(
            check("dir", "content-dirs", Some("floppy=f")),
            Err("invalid format - invalid content type 'floppy'".into())
        );
        assert_eq!(check("cephfs", "fs-name", Some("cephfs")), Ok(()));
        assert!(check("cephfs", "fs-name", Some("c")).is_err());
        let fp = "09:54:ef:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:AA:BB:CC";
        assert_eq!(check("pbs", "fingerprint", Some(fp)), Ok(()));
        assert!(check("pbs", "fingerprint", Some(&fp[3..])).is_err());
        assert_eq!(check("cifs", "smbversion", Some("3.11")), Ok(()));
        assert!(check("cifs", "password", Some(&"x".repeat(257))).is_err());
        assert_eq!(check("cifs", "password", Some(&"x".repeat(256))), Ok(()));
        assert_eq!(
            check("dir", "path", Some("/a\rb")),
            Err("property contains a line feed".into())
        );
        assert_eq!(
            check("dir", "type", Some("nfs")),
            Err("unexpected property 'type'".into())
        );
        assert_eq!(check("zfspool", "sparse", None), Ok(()));
        assert_eq!(
            check("zfspool", "pool", None),
            Err("got undefined value".into())
        );
    }

    #[test]
    fn content_rules_can_drop_a_section() {
        let text = "lvmthin: thin\n\tthinpool data\n\tvgname pve\n\tcontent iso\n\n\
                    lvm: vg\n\tvgname vg\n\tcontent images,iso,images\n\n\
                    dir: mixed\n\tpath /m\n\tcontent none,iso\n\n\
                    iscsi: lun\n\tportal 192.0.2.1\n\ttarget iqn.x\n\tcontent backup\n\n\
                    cephfs: cfs\n\tpath /mnt/pve/cfs\n\tformat raw\n";
        let cfg = parse(text).unwrap();
        assert_eq!(ids(&cfg), ["vg", "lun", "cfs"]);
        assert_eq!(cfg.get("vg").unwrap().content(), ["images"]);
        // iscsi supports `none`: nothing left is fine there.
        assert!(cfg.get("lun").unwrap().content().is_empty());
        // CephFS takes `format` but supports none: PVE drops it.
        assert!(!cfg.get("cfs").unwrap().has("format"));
        assert_eq!(
            cfg.warnings,
            [
                "line 4 (section 'thin') - storage does not support content type 'iso'",
                "line 4 (skip section 'thin'): storage does not support content type 'none'",
                "line 8 (section 'vg') - storage does not support content type 'iso'",
                "line 12 (skip section 'mixed'): unable to combine 'none' with other content types",
                "line 17 (section 'lun') - storage does not support content type 'backup'",
                "line 21 (section 'cfs') - storage does not support format 'raw'",
            ]
        );
    }

    #[test]
    fn a_dropped_duplicate_takes_the_earlier_one_along() {
        let text = "dir: store\n\tpath /a\n\ndir: store\n\tcontent iso\n";
        let cfg = parse(text).unwrap();
        assert!(cfg.sections.is_empty());
        assert_eq!(
            cfg.warnings,
            [
                "line 5 (skip section 'store'): missing value for required option 'path'",
                "line 4 (section 'store'): storage ID already used at line 1; \
                 PVE keeps only this later section",
            ]
        );
        // Case matters: two different IDs.
        let cfg = parse("dir: Store\n\tpath /a\n\ndir: store\n\tpath /b\n").unwrap();
        assert_eq!(ids(&cfg), ["Store", "store"]);
    }

    #[test]
    fn builtin_local_replaces_odd_ones() {
        assert!(parse("").unwrap().builtin_local());
        assert!(parse("lvm: local\n\tvgname pve\n").unwrap().builtin_local());
        assert!(parse("dir: local\n\tpath /srv\n").unwrap().builtin_local());
        assert!(
            !parse("dir: local\n\tpath /var/lib/vz\n")
                .unwrap()
                .builtin_local()
        );
        // PVE ignores `nodes` on local.
        let cfg = parse("dir: local\n\tpath /var/lib/vz\n\tnodes pve1\n").unwrap();
        assert!(cfg.get("local").unwrap().enabled_on("pve2"));
        // An empty node list (`nodes ,`) leaves the storage on no node.
        let cfg = parse("dir: store\n\tpath /s\n\tnodes ,\n").unwrap();
        assert!(!cfg.get("store").unwrap().enabled_on("pve1"));
    }

    #[test]
    fn flags_and_lists() {
        let s = Section {
            kind: "x".into(),
            id: "xx".into(),
            line: 1,
            options: opts(&[
                ("a", None),
                ("b", Some("YES")),
                ("c", Some("off")),
                ("d", Some("2")),
                ("e", Some(" a, b;c  d,,")),
                ("f", Some("On")),
            ]),
        };
        assert!(s.flag("a") && s.flag("b") && s.flag("f"));
        assert!(!s.flag("c") && !s.flag("d") && !s.flag("missing"));
        assert_eq!(s.list("e"), ["a", "b", "c", "d"]);
        assert!(s.list("a").is_empty() && s.list("missing").is_empty());
        assert_eq!(s.get("a"), None);
        assert!(s.has("a") && !s.has("missing"));
        assert!(!s.is_shared());
    }

    #[test]
    fn size_and_section_limits() {
        let big = format!("# {}\n", "x".repeat(MAX_BYTES));
        assert_eq!(
            parse(&big),
            Err(StorageCfgError::TooLarge {
                bytes: MAX_BYTES + 3
            })
        );
        let at_limit = "#".repeat(MAX_BYTES);
        assert!(parse(&at_limit).unwrap().sections.is_empty());
        let many: String = (0..=MAX_SECTIONS)
            .map(|i| format!("dir: s{i}\n\tpath /s\n\n"))
            .collect();
        assert_eq!(
            parse(&many),
            Err(StorageCfgError::TooManySections {
                line: 3 * MAX_SECTIONS + 1
            })
        );
        let most: String = (0..MAX_SECTIONS)
            .map(|i| format!("dir: s{i}\n\tpath /s\n\n"))
            .collect();
        assert_eq!(parse(&most).unwrap().sections.len(), MAX_SECTIONS);
        let plugin: String = (0..MAX_UNSUPPORTED_OPTIONS + 44)
            .map(|i| format!("\tkey{i} v\n"))
            .collect();
        let cfg = parse(&format!("drbd: drbd1\n{plugin}\ndir: after\n\tpath /a\n")).unwrap();
        assert_eq!(cfg.unsupported[0].options.len(), MAX_UNSUPPORTED_OPTIONS);
        assert_eq!(cfg.unsupported[0].options.last().unwrap().0, "key255");
        assert_eq!(ids(&cfg), ["after"]);
    }

    #[test]
    fn warnings_are_bounded_and_quoted_short() {
        let text: String = (0..MAX_WARNINGS + 10)
            .map(|i| format!("garbage {i} {}\n", "y".repeat(200)))
            .collect();
        let cfg = parse(&text).unwrap();
        assert_eq!(cfg.warnings.len(), MAX_WARNINGS);
        assert_eq!(cfg.warnings_omitted, 10);
        assert!(
            cfg.warnings.iter().all(|w| w.len() < 140),
            "{}",
            cfg.warnings[0]
        );
        assert!(cfg.warnings[0].ends_with("..."));
    }

    #[test]
    fn parse_is_deterministic_and_round_trips() {
        for name in [
            "default-install.cfg",
            "zfs.cfg",
            "comments-whitespace.cfg",
            "disabled-nodes.cfg",
        ] {
            let cfg = parsed(name);
            assert_eq!(cfg, parsed(name));
            // Written back as PVE writes, it reads the same.
            let again = parse(&write(&cfg.sections)).unwrap();
            let strip = |c: &StorageCfg| {
                c.sections
                    .iter()
                    .map(|s| Section {
                        line: 0,
                        ..s.clone()
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(strip(&again), strip(&cfg), "{name}");
        }
    }
}
