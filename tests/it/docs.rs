//! The README and the guides in `docs/`: every relative link names a file
//! that exists, and every `#anchor` a heading of that file (as GitHub
//! makes anchors: lower case, punctuation dropped, spaces as `-`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The lines of `text` outside fenced code blocks, numbered from 1.
fn prose(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter_map(move |(i, line)| {
        if line.starts_with("```") {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((i + 1, line))
    })
}

/// GitHub's anchor of a heading's text.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .filter(|(_, l)| l.starts_with('#'))
        .map(|(_, l)| anchor(l.trim_start_matches('#')))
        .collect()
}

/// The targets of `[text](target)` links on a line.
fn links(line: &str) -> Vec<&str> {
    line.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &line[i + 2..];
            rest.find(')').map(|end| &rest[..end])
        })
        .collect()
}

/// Every broken link of `file` (relative to the repository), as `file:line: why`.
fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut broken = Vec::new();
    for (n, line) in prose(&text) {
        for target in links(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let resolved: PathBuf = if path.is_empty() {
                file.to_path_buf()
            } else {
                file.parent().unwrap().join(path)
            };
            let at = format!(
                "{}:{n}: {target}",
                file.strip_prefix(root()).unwrap().display()
            );
            if !resolved.exists() {
                broken.push(format!("{at}: no such file"));
            } else if !fragment.is_empty()
                && resolved.extension().is_some_and(|e| e == "md")
                && !anchors(&std::fs::read_to_string(&resolved).unwrap()).contains(fragment)
            {
                broken.push(format!("{at}: no such heading"));
            }
        }
    }
    broken
}

#[test]
fn the_readme_and_the_guides_link_only_to_what_exists() {
    let mut files = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    assert!(files.len() >= 7, "{files:?}");
    let broken: Vec<String> = files.iter().flat_map(|f| broken_links(f)).collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_missing_heading() {
    assert_eq!(
        anchor("Whole-cluster runs (`pveprobe cluster`)"),
        "whole-cluster-runs-pveprobe-cluster"
    );
    assert_eq!(
        anchor("FSYNCS/SECOND: what it measures"),
        "fsyncssecond-what-it-measures"
    );
    let dir = tempfile::tempdir_in(root().join("target")).unwrap();
    let file = dir.path().join("x.md");
    std::fs::write(
        &file,
        "# Title\n\n[a](x.md#title) [b](nope.md) [c](#missing) [d](https://example.invalid/)\n```\n[e](inside-a-fence.md)\n```\n",
    )
    .unwrap();
    let broken = broken_links(&file);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].ends_with("nope.md: no such file"), "{broken:?}");
    assert!(
        broken[1].ends_with("#missing: no such heading"),
        "{broken:?}"
    );
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 350,
        "{} lines",
        readme.lines().count()
    );
    for command in ["scripts/probe", "scripts/test"] {
        assert!(readme.contains(command), "the README names {command}");
    }
}

/// Every hint code pveprobe can give (`Hint::new("code", ...)`, the
/// health hints' `add("code", ...)`, `guest`'s `guest_hint("code", ...)`
/// and `net`'s `hint("code", ...)` in `src/`) has its row in
/// docs/hints.md, and the table lists no code the probe never gives: a
/// fleet filters on these codes.
#[test]
fn every_hint_code_is_in_docs_hints_md() {
    let mut given = BTreeSet::new();
    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for start in ["Hint::new(", "add(", "hint("] {
                for (i, _) in text.match_indices(start) {
                    let rest = text[i + start.len()..].trim_start();
                    let Some(rest) = rest.strip_prefix('"') else {
                        continue;
                    };
                    let code: String = rest.chars().take_while(|&c| c != '"').collect();
                    if !code.is_empty() && code.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    {
                        given.insert(code);
                    }
                }
            }
        }
    }
    let doc = std::fs::read_to_string(root().join("docs/hints.md")).unwrap();
    let listed: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect();
    assert!(given.len() >= 29, "the scan found only {given:?}");
    assert_eq!(given, listed, "codes in src/ against docs/hints.md's table");
}

/// The source files and folders below `dir`, relative names: each module
/// a reader of the code meets.
fn modules(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.push(path.clone());
            modules(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What the map must say of `path`: a folder as `name/`, a file as
/// `name.rs` (a folder's `mod.rs` and the crate roots are its folder's).
fn map_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    if path.is_dir() {
        return Some(format!("{name}/"));
    }
    (!matches!(name, "mod.rs" | "lib.rs" | "main.rs")).then(|| name.to_string())
}

#[test]
fn docs_development_md_maps_every_module() {
    let guide = std::fs::read_to_string(root().join("docs/development.md")).unwrap();
    let map = &guide[guide.find("## The source tree").expect("the map's heading")..];
    let mut all = Vec::new();
    modules(&root().join("src"), &mut all);
    modules(&root().join("crates/parse/src"), &mut all);
    let missing: Vec<String> = all
        .iter()
        .filter_map(|p| Some((p, map_name(p)?)))
        .filter(|(_, name)| !map.contains(name.as_str()))
        .map(|(p, _)| p.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/development.md's map (\"The source tree\") names no {missing:?}: add each \
         with what it is for"
    );
}
