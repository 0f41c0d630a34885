//! What each storage type of PVE takes: its options, the required ones,
//! its content types, whether it is shared, and each property's schema
//! and format, checked as PVE's plugins check them (pve-storage
//! `src/PVE/Storage/*Plugin.pm`), and values decoded as
//! `Plugin::decode_value` does.

use super::*;

/// `PVE::JSONSchema::parse_boolean`.
pub(super) fn parse_boolean(v: &str) -> Option<bool> {
    const TRUE: [&str; 4] = ["1", "on", "yes", "true"];
    const FALSE: [&str; 4] = ["0", "off", "no", "false"];
    if TRUE.iter().any(|t| v.eq_ignore_ascii_case(t)) {
        Some(true)
    } else if FALSE.iter().any(|f| v.eq_ignore_ascii_case(f)) {
        Some(false)
    } else {
        None
    }
}

/// `PVE::Tools::split_list` (`PVE::ParseUtils`): commas and semicolons are
/// blanks, then split on white space.
pub(super) fn split_list(v: &str) -> impl Iterator<Item = &str> {
    v.split(|c: char| c == ',' || c == ';' || is_space(c))
        .filter(|s| !s.is_empty())
}

/// What one storage type takes (its plugin's `options` and `plugindata`),
/// each list as words separated by blanks.
pub(super) struct TypeDef {
    pub(super) kind: &'static str,
    /// Every key the type takes.
    pub(super) options: &'static str,
    /// The keys without `optional => 1`.
    pub(super) required: &'static str,
    /// Content types it supports.
    pub(super) content: &'static str,
    /// Content when the key is absent.
    pub(super) default_content: &'static str,
    /// Image formats it supports (`format`).
    pub(super) formats: &'static str,
}

/// Whether the blank-separated `list` holds `word`.
pub(super) fn has_word(list: &str, word: &str) -> bool {
    list.split_ascii_whitespace().any(|w| w == word)
}

/// `our @SHARED_STORAGE` in Plugin.pm (`drbd` is a third-party plugin's).
pub(super) const SHARED_STORAGE: &str = "iscsi nfs cifs rbd cephfs iscsidirect zfs drbd pbs";

/// Every content type (`dir`'s, which `verify_content` checks against).
pub(super) const FILE_CONTENT: &str = "images rootdir vztmpl iso backup snippets none import";

/// The plugins PVE registers in `PVE/Storage.pm`, after pve-storage's
/// `src/PVE/Storage/*Plugin.pm` (`options` and `plugindata`).
pub(super) const TYPES: [TypeDef; 14] = [
    TypeDef {
        kind: "dir",
        options: "path content-dirs nodes shared disable prune-backups max-protected-backups \
                  content format mkdir create-base-path create-subdirs is_mountpoint bwlimit \
                  preallocation snapshot-as-volume-chain",
        required: "path",
        content: FILE_CONTENT,
        default_content: "images rootdir",
        formats: "raw qcow2 vmdk subvol",
    },
    TypeDef {
        kind: "btrfs",
        options: "path nodes shared disable prune-backups max-protected-backups content format \
                  is_mountpoint nocow mkdir create-base-path create-subdirs preallocation",
        required: "path",
        content: FILE_CONTENT,
        default_content: "images rootdir",
        formats: "raw subvol",
    },
    TypeDef {
        kind: "cifs",
        options: "path content-dirs server share subdir nodes disable prune-backups \
                  max-protected-backups content format username password domain smbversion \
                  mkdir create-base-path create-subdirs bwlimit preallocation options \
                  snapshot-as-volume-chain",
        required: "path server share",
        content: "images rootdir vztmpl iso backup snippets import",
        default_content: "images",
        formats: "raw qcow2 vmdk",
    },
    TypeDef {
        kind: "cephfs",
        options: "path content-dirs monhost nodes subdir disable options username content format \
                  mkdir create-base-path create-subdirs fuse bwlimit keyring prune-backups \
                  max-protected-backups fs-name",
        required: "path",
        content: "vztmpl iso backup snippets import",
        default_content: "backup",
        // CephFSPlugin's plugindata has no `format`: PVE drops the key.
        formats: "",
    },
    TypeDef {
        kind: "esxi",
        options: "nodes shared disable content server username password skip-cert-verification \
                  port",
        required: "server username",
        content: "import",
        default_content: "import",
        formats: "raw qcow2 vmdk",
    },
    TypeDef {
        kind: "iscsidirect",
        options: "portal target nodes disable content bwlimit",
        required: "portal target",
        content: "images none",
        default_content: "images",
        formats: "",
    },
    TypeDef {
        kind: "iscsi",
        options: "portal target nodes disable content bwlimit",
        required: "portal target",
        content: "images none",
        default_content: "images",
        formats: "",
    },
    TypeDef {
        kind: "lvm",
        options: "vgname nodes shared disable saferemove saferemove-stepsize \
                  saferemove_throughput content base tagged_only bwlimit snapshot-as-volume-chain",
        required: "vgname",
        content: "images rootdir",
        default_content: "images",
        formats: "raw qcow2",
    },
    TypeDef {
        kind: "lvmthin",
        options: "thinpool vgname nodes disable content bwlimit",
        required: "thinpool vgname",
        content: "images rootdir",
        default_content: "images rootdir",
        formats: "",
    },
    TypeDef {
        kind: "nfs",
        options: "path content-dirs server export nodes disable prune-backups \
                  max-protected-backups options content format mkdir create-base-path \
                  create-subdirs bwlimit preallocation snapshot-as-volume-chain",
        required: "path server export",
        content: "images rootdir vztmpl iso backup snippets import",
        default_content: "images",
        formats: "raw qcow2 vmdk",
    },
    TypeDef {
        kind: "pbs",
        options: "server datastore namespace port nodes disable content username password \
                  encryption-key master-pubkey prune-backups max-protected-backups fingerprint",
        required: "server datastore",
        content: "backup none",
        default_content: "backup",
        formats: "",
    },
    TypeDef {
        kind: "rbd",
        options: "nodes disable monhost pool data-pool namespace username content krbd keyring \
                  bwlimit",
        required: "",
        content: "images rootdir",
        default_content: "images",
        formats: "",
    },
    TypeDef {
        kind: "zfs",
        options: "nodes disable portal target pool blocksize iscsiprovider nowritecache sparse \
                  comstar_hg comstar_tg lio_tpg content bwlimit zfs-base-path",
        required: "portal target pool blocksize iscsiprovider",
        content: "images",
        default_content: "images",
        formats: "",
    },
    TypeDef {
        kind: "zfspool",
        options: "pool blocksize sparse nodes disable content bwlimit mountpoint",
        required: "pool",
        content: "images rootdir",
        default_content: "images rootdir",
        formats: "raw subvol",
    },
];

pub(super) fn type_def(kind: &str) -> Option<&'static TypeDef> {
    TYPES.iter().find(|t| t.kind == kind)
}

/// The storage types PVE's own plugins provide.
pub fn known_types() -> impl Iterator<Item = &'static str> {
    TYPES.iter().map(|t| t.kind)
}

/// Keys in PVE's property list that no plugin's `options` take.
pub(super) const OTHER_PROPERTIES: [&str; 3] = ["type", "storage", "authsupported"];

/// Whether PVE's property list (the union of every plugin's properties)
/// has `key`; for other keys PVE says "unknown property type".
pub(super) fn is_property(key: &str) -> bool {
    OTHER_PROPERTIES.contains(&key) || TYPES.iter().any(|t| has_word(t.options, key))
}

/// The schema of a key, as far as this parser checks it.
pub(super) enum Schema {
    Boolean,
    Integer {
        min: Option<i128>,
        max: Option<i128>,
        choices: &'static [&'static str],
    },
    Text(Format),
}

pub(super) enum Format {
    Any,
    /// `pve-storage-path`: `^/[^;\(\)]+` (not anchored at the end).
    Path,
    /// `pve-storage-vgname`: `^[a-z0-9][a-z0-9\-_.]*[a-z0-9]$`i.
    LvmName,
    /// `pve-storage-content-list`.
    ContentList,
    /// `pve-node-list`.
    NodeList,
    /// `pve-storage-options`: `^\S+$`.
    MountOptions,
    /// `pve-dir-override-list`.
    DirOverrides,
    /// `pve-configid`: `^[a-z][a-z0-9_-]+$`i.
    ConfigId,
    /// `pve-volume-id`.
    VolumeId,
    /// `fingerprint-sha256`: `([A-Fa-f0-9]{2}:){31}[A-Fa-f0-9]{2}`.
    Fingerprint,
    Choice(&'static [&'static str]),
    MaxLen(usize),
}

pub(super) fn schema(key: &str) -> Schema {
    match key {
        "disable"
        | "shared"
        | "snapshot-as-volume-chain"
        | "mkdir"
        | "create-base-path"
        | "create-subdirs"
        | "nocow"
        | "fuse"
        | "skip-cert-verification"
        | "saferemove"
        | "tagged_only"
        | "krbd"
        | "nowritecache"
        | "sparse" => Schema::Boolean,
        "max-protected-backups" => Schema::Integer {
            min: Some(-1),
            max: None,
            choices: &[],
        },
        "port" => Schema::Integer {
            min: Some(1),
            max: Some(65535),
            choices: &[],
        },
        "saferemove-stepsize" => Schema::Integer {
            min: None,
            max: None,
            choices: &["1", "2", "4", "8", "16", "32"],
        },
        "path" | "subdir" | "export" | "mountpoint" | "zfs-base-path" => Schema::Text(Format::Path),
        "vgname" | "thinpool" => Schema::Text(Format::LvmName),
        "content" => Schema::Text(Format::ContentList),
        "nodes" => Schema::Text(Format::NodeList),
        "options" => Schema::Text(Format::MountOptions),
        "content-dirs" => Schema::Text(Format::DirOverrides),
        "fs-name" => Schema::Text(Format::ConfigId),
        "base" => Schema::Text(Format::VolumeId),
        "fingerprint" => Schema::Text(Format::Fingerprint),
        "format" => Schema::Text(Format::Choice(&["raw", "qcow2", "subvol", "vmdk"])),
        "preallocation" => Schema::Text(Format::Choice(&["off", "metadata", "falloc", "full"])),
        "smbversion" => Schema::Text(Format::Choice(&[
            "default", "2.0", "2.1", "3", "3.0", "3.11",
        ])),
        "password" | "domain" => Schema::Text(Format::MaxLen(256)),
        _ => Schema::Text(Format::Any),
    }
}

/// `PVE::SectionConfig::check_value` for one property line of a known
/// type, in its order: `type` naming the section's own type passes; a key
/// the type does not take; a bare key (only booleans may be bare, meaning
/// 1); a value with a carriage return; then the schema: booleans `0` or
/// `1` only, integers `^[+-]?\d+$` within range, and the formats of
/// [`Format`]. The error is PVE's message.
pub(super) fn check_value(def: &TypeDef, key: &str, value: Option<&str>) -> Result<(), String> {
    if key == "type" && value == Some(def.kind) {
        return Ok(());
    }
    if !has_word(def.options, key) {
        return Err(format!("unexpected property '{key}'"));
    }
    let schema = schema(key);
    let Some(value) = value else {
        return match schema {
            Schema::Boolean => Ok(()),
            _ => Err("got undefined value".to_string()),
        };
    };
    if value.contains(['\n', '\r']) {
        return Err("property contains a line feed".to_string());
    }
    match schema {
        Schema::Boolean if value == "0" || value == "1" => Ok(()),
        Schema::Boolean => Err(format!("type check ('boolean') failed - got '{value}'")),
        Schema::Integer { min, max, choices } => {
            let Some(n) = parse_integer(value) else {
                return Err(format!("type check ('integer') failed - got '{value}'"));
            };
            if let Some(max) = max.filter(|&m| n > m) {
                return Err(format!("value must have a maximum value of {max}"));
            }
            if let Some(min) = min.filter(|&m| n < m) {
                return Err(format!("value must have a minimum value of {min}"));
            }
            check_choice(value, choices)
        }
        Schema::Text(Format::Choice(choices)) => check_choice(value, choices),
        Schema::Text(Format::MaxLen(max)) if value.len() > max => {
            Err(format!("value may only be {max} characters long"))
        }
        Schema::Text(Format::Fingerprint) if !is_fingerprint(value) => {
            Err("value does not match the regex pattern".to_string())
        }
        Schema::Text(format) => {
            check_format(&format, value).map_err(|e| format!("invalid format - {e}"))
        }
    }
}

pub(super) fn check_choice(value: &str, choices: &[&str]) -> Result<(), String> {
    if choices.is_empty() || choices.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "value '{value}' does not have a value in the enumeration '{}'",
            choices.join(", ")
        ))
    }
}

/// `^[+-]?\d+$` as a number; longer digit strings than i128 holds compare
/// as far out of every range (Perl turns them into floats).
pub(super) fn parse_integer(v: &str) -> Option<i128> {
    let (negative, digits) = match v.as_bytes().first()? {
        b'-' => (true, &v[1..]),
        b'+' => (false, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits.parse::<i128>().unwrap_or(i128::MAX / 2);
    Some(if negative { -magnitude } else { magnitude })
}

pub(super) fn check_format(format: &Format, v: &str) -> Result<(), String> {
    match format {
        Format::Path => {
            let mut chars = v.chars();
            let ok = chars.next() == Some('/')
                && chars.next().is_some_and(|c| !matches!(c, ';' | '(' | ')'));
            ok.then_some(())
                .ok_or_else(|| "value does not look like a valid absolute path".to_string())
        }
        Format::LvmName => is_lvm_name(v)
            .then_some(())
            .ok_or_else(|| format!("lvm name '{v}' contains illegal characters")),
        Format::ContentList => split_list(v).try_for_each(|c| {
            has_word(FILE_CONTENT, c)
                .then_some(())
                .ok_or_else(|| format!("invalid content type '{c}'"))
        }),
        Format::NodeList => split_list(v).try_for_each(|n| {
            is_node_name(n)
                .then_some(())
                .ok_or_else(|| "value does not look like a valid node name".to_string())
        }),
        Format::MountOptions => (!v.contains(is_space))
            .then_some(())
            .ok_or_else(|| format!("invalid options '{v}'")),
        Format::DirOverrides => split_list(v).try_for_each(check_dir_override),
        Format::ConfigId => {
            // `[a-z][a-z0-9_\-]+`i.
            let rest = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-');
            shaped(v, 2, u8::is_ascii_alphabetic, rest, rest)
                .then_some(())
                .ok_or_else(|| format!("invalid configuration ID '{v}'"))
        }
        Format::VolumeId => v
            .split_once(':')
            .filter(|(store, name)| is_storage_name(store) && !name.is_empty())
            .map(|_| ())
            .ok_or_else(|| format!("unable to parse volume ID '{v}'")),
        Format::Any | Format::Fingerprint | Format::Choice(_) | Format::MaxLen(_) => Ok(()),
    }
}

/// Whether `v` has the shape of PVE's name regexes: at least `min` bytes
/// (and one), its first byte one `first` takes, its last one `last`
/// takes, every byte one `all` takes.
pub(super) fn shaped(
    v: &str,
    min: usize,
    first: fn(&u8) -> bool,
    last: fn(&u8) -> bool,
    all: fn(&u8) -> bool,
) -> bool {
    let b = v.as_bytes();
    b.len() >= min.max(1) && first(&b[0]) && last(&b[b.len() - 1]) && b.iter().all(all)
}

/// A letter, digit, `-`, `_` or `.`: what names of storages, volumes'
/// storages and LVM objects are made of.
pub(super) fn name_byte(c: &u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')
}

/// `pve-lvm-name`: `[a-z0-9][a-z0-9\-_.]*[a-z0-9]`i.
pub(super) fn is_lvm_name(v: &str) -> bool {
    shaped(
        v,
        2,
        u8::is_ascii_alphanumeric,
        u8::is_ascii_alphanumeric,
        name_byte,
    )
}

/// `pve_verify_node_name`: `^[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?$`.
pub(super) fn is_node_name(v: &str) -> bool {
    let inner = |c: &u8| c.is_ascii_alphanumeric() || *c == b'-';
    shaped(
        v,
        1,
        u8::is_ascii_alphanumeric,
        u8::is_ascii_alphanumeric,
        inner,
    )
}

/// A storage ID (`parse_storage_id`), which is also the storage part of
/// `pve-volume-id` (up to the first colon that leaves a name behind: the
/// storage part holds no colon): `[a-z][a-z0-9\-_.]*[a-z0-9]`i.
pub(super) fn is_storage_name(v: &str) -> bool {
    shaped(
        v,
        2,
        u8::is_ascii_alphabetic,
        u8::is_ascii_alphanumeric,
        name_byte,
    )
}

pub(super) fn is_fingerprint(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 32 * 3 - 1
        && b.chunks(3).all(|chunk| {
            chunk[0].is_ascii_hexdigit()
                && chunk[1].is_ascii_hexdigit()
                && chunk.get(2).is_none_or(|&c| c == b':')
        })
}

/// `verify_dir_override`: `^([a-z]+)=([^.]*(?:\.?[^.]+)+)$` (a path with
/// no `..` that does not end in a dot), a known content type, the path
/// shorter than 1023 bytes and each of its components shorter than 255.
pub(super) fn check_dir_override(item: &str) -> Result<(), String> {
    let invalid = || format!("invalid override '{item}'");
    let (ct, path) = item.split_once('=').ok_or_else(invalid)?;
    let shape = !ct.is_empty()
        && ct.bytes().all(|c| c.is_ascii_lowercase())
        && !path.is_empty()
        && !path.contains("..")
        && !path.ends_with('.');
    if !shape {
        return Err(invalid());
    }
    if !has_word(FILE_CONTENT, ct) {
        return Err(format!("invalid content type '{ct}'"));
    }
    if path.len() < 1023 && path.split('/').all(|c| c.len() < 255) {
        Ok(())
    } else {
        Err(invalid())
    }
}

/// What `check_config` and the storage plugin's `decode_value` do with a
/// section once read: content types the type does not support are dropped
/// with a warning (the value is kept as written; [`Section::content`]
/// filters), `none` must stand alone, an empty result is an error unless
/// the type supports `none`; a `format` the type does not support is
/// dropped with a warning; `content-dirs` entries for unsupported content
/// get a warning; then every required key must be there. An error drops
/// the whole section.
pub(super) fn decode(
    def: &TypeDef,
    section: &mut Section,
    option_lines: &mut Vec<usize>,
    cfg: &mut StorageCfg,
) -> Result<(), String> {
    let id = section.id.clone();
    let mut i = 0;
    while i < section.options.len() {
        let line = option_lines[i];
        let (key, value) = &section.options[i];
        let value = value.as_deref().unwrap_or("");
        match key.as_str() {
            "content" => {
                let mut kept = Vec::new();
                for c in split_list(value) {
                    if !has_word(def.content, c) {
                        cfg.warn(line, || {
                            format!(
                                "(section '{id}') - storage does not support content type '{c}'"
                            )
                        });
                    } else if !kept.contains(&c) {
                        kept.push(c);
                    }
                }
                if kept.contains(&"none") && kept.len() > 1 {
                    return Err("unable to combine 'none' with other content types".to_string());
                }
                if kept.is_empty() && !has_word(def.content, "none") {
                    return Err("storage does not support content type 'none'".to_string());
                }
            }
            "format" if !has_word(def.formats, value) => {
                cfg.warn(line, || {
                    format!("(section '{id}') - storage does not support format '{value}'")
                });
                section.options.remove(i);
                option_lines.remove(i);
                continue;
            }
            "content-dirs" => {
                for dir in split_list(value) {
                    let ct = dir.split('=').next().unwrap_or("");
                    if !has_word(def.content, ct) {
                        cfg.warn(line, || {
                            format!(
                                "(section '{id}') - storage does not support content type '{ct}'"
                            )
                        });
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    match def
        .required
        .split_ascii_whitespace()
        .find(|k| !section.has(k))
    {
        Some(k) => Err(format!("missing value for required option '{k}'")),
        None => Ok(()),
    }
}
