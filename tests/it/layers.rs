//! The layering of `src/`: no module imports one that imports it back,
//! file by file or folder by folder, test code included; no module but
//! `cli`, `app` and `main` sees a command-line type; at most 20 top-level
//! modules; one name per public type, and one path.
//! Imports are read from the source (`use crate::...`, `use super::...`
//! and `crate::` paths in code).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Every module of `src/` and its file's text, without comments.
fn modules() -> BTreeMap<Module, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for (path, text) in crate::common::rust_files("src") {
        let rel = path.strip_prefix(&src).unwrap().with_extension("");
        let mut module: Module = rel.iter().map(|s| s.to_string_lossy().into()).collect();
        if matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            module.pop();
        }
        let code: Vec<&str> = text
            .lines()
            .map(|l| l.split("//").next().unwrap())
            .collect();
        out.insert(module, code.join("\n"));
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let (prefix, inner) = (&tree[..open], &tree[open + 1..tree.len() - 1]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// The module a path in `from` names: the longest known prefix.
fn resolve(path: &str, from: &Module, known: &BTreeMap<Module, String>) -> Option<Module> {
    let mut segments = path.split("::").map(str::to_string);
    let mut base: Module = match segments.next()?.as_str() {
        "crate" => Vec::new(),
        "super" => from[..from.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let rest: Vec<String> = segments.collect();
    let mut rest = rest.as_slice();
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    (0..=base.len())
        .rev()
        .map(|n| base[..n].to_vec())
        .find(|m| known.contains_key(m))
}

/// Which modules each module imports (not its own ancestors).
fn imports(known: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let path = regex::Regex::new(r"(?:^|[^\w:])((?:crate|super)(?:::\w+)+)").unwrap();
    let uses = regex::Regex::new(r"\buse\s+((?:crate|super)::[^;]+);").unwrap();
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, code) in known {
        let mut paths: Vec<String> = uses
            .captures_iter(code)
            .flat_map(|c| expand(&c[1]))
            .map(|p| {
                p.split(" as ")
                    .next()
                    .unwrap()
                    .trim_end_matches("::self")
                    .to_string()
            })
            .collect();
        paths.extend(path.captures_iter(code).map(|c| c[1].to_string()));
        for p in paths {
            if let Some(target) = resolve(&p, module, known)
                && !module.starts_with(&target)
            {
                graph.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    graph
}

/// The import circles of `graph`: strongly connected sets of two or more.
fn circles<T: Ord + Clone>(graph: &BTreeMap<T, BTreeSet<T>>) -> Vec<Vec<T>> {
    let reach = |from: &T| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<T, BTreeSet<T>> = graph.keys().map(|m| (m.clone(), reach(m))).collect();
    let mut found: BTreeSet<Vec<T>> = BTreeSet::new();
    for (m, from_m) in &reached {
        let circle: Vec<T> = from_m
            .iter()
            .filter(|n| *n != m && reached.get(*n).is_some_and(|r| r.contains(m)))
            .chain(std::iter::once(m))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if circle.len() > 1 {
            found.insert(circle);
        }
    }
    found.into_iter().collect()
}

#[test]
fn no_module_or_folder_of_src_imports_one_that_imports_it() {
    let known = modules();
    assert!(known.len() > 80, "{} modules", known.len());
    let files = imports(&known);
    let named = |c: &Vec<Module>| c.iter().map(|m| m.join("::")).collect::<Vec<_>>();
    let file_circles: Vec<_> = circles(&files).iter().map(named).collect();
    assert!(file_circles.is_empty(), "{file_circles:?}");
    let mut folders: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in &files {
        for to in targets {
            if let (Some(a), Some(b)) = (from.first(), to.first())
                && a != b
            {
                folders.entry(a.clone()).or_default().insert(b.clone());
            }
        }
    }
    let folder_circles = circles(&folders);
    assert!(folder_circles.is_empty(), "{folder_circles:?}");
}

#[test]
fn no_module_but_cli_app_and_main_sees_a_command_line_type() {
    let mut checked = 0;
    for (module, code) in modules() {
        if matches!(
            module.first().map(String::as_str),
            None | Some("cli" | "app" | "main")
        ) {
            continue;
        }
        checked += 1;
        for banned in ["crate::cli", "clap::", "use clap", "pveprobe::cli"] {
            assert!(
                !code.contains(banned),
                "{} uses {banned}: only cli/ and app/ see the command line",
                module.join("::")
            );
        }
    }
    assert!(checked > 80, "{checked} modules");
}

/// The top-level modules `src/lib.rs` declares.
fn top_level_modules() -> Vec<String> {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let decl = regex::Regex::new(r"(?m)^(?:pub(?:\([a-z]+\))? )?mod (\w+);").unwrap();
    decl.captures_iter(&lib).map(|c| c[1].to_string()).collect()
}

#[test]
fn the_top_of_src_has_at_most_twenty_modules() {
    let top = top_level_modules();
    assert!(
        top.len() >= 10 && top.len() <= 20,
        "{} top-level modules: {top:?}",
        top.len()
    );
}

#[test]
fn no_two_public_types_share_a_name() {
    let decl =
        regex::Regex::new(r"(?m)^\s*pub(?:\([a-z]+\))? (?:struct|enum|trait|type) ([A-Z]\w*)")
            .unwrap();
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (module, code) in modules() {
        for c in decl.captures_iter(&code) {
            seen.entry(c[1].to_string())
                .or_default()
                .push(module.join("::"));
        }
    }
    let twice: Vec<_> = seen.iter().filter(|(_, m)| m.len() > 1).collect();
    assert!(seen.len() > 100, "{} public types", seen.len());
    assert!(twice.is_empty(), "{twice:?}");
}

#[test]
fn a_pub_use_names_only_a_private_module_s_items() {
    // A `pub use` of another public path gives a type a second path; of a
    // private submodule's items it is the items' one path.
    let reexport = regex::Regex::new(r"(?m)^\s*pub(?:\([a-z]+\))? use ([\w:]+?)::").unwrap();
    for (module, code) in modules() {
        for c in reexport.captures_iter(&code) {
            let first = c[1].split("::").next().unwrap();
            let private = regex::Regex::new(&format!(r"(?m)^mod {first};")).unwrap();
            assert!(
                private.is_match(&code),
                "{}: `pub use {}::...` re-exports under a second path",
                module.join("::"),
                &c[1]
            );
        }
    }
}

#[test]
fn the_check_finds_a_circle_and_reads_use_trees() {
    let graph: BTreeMap<&str, BTreeSet<&str>> = [
        ("a", BTreeSet::from(["b"])),
        ("b", BTreeSet::from(["c"])),
        ("c", BTreeSet::from(["a"])),
        ("d", BTreeSet::from(["a"])),
    ]
    .into();
    assert_eq!(circles(&graph), [vec!["a", "b", "c"]]);
    assert_eq!(
        expand("crate::a::{b, c::{d, e}}"),
        ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
    );
    let known: BTreeMap<Module, String> = [
        (vec![], String::new()),
        (vec!["x".to_string()], String::new()),
        (vec!["x".to_string(), "y".to_string()], String::new()),
        (vec!["z".to_string()], String::new()),
    ]
    .into();
    let y = vec!["x".to_string(), "y".to_string()];
    assert_eq!(
        resolve("super::super::z::Thing", &y, &known),
        Some(vec!["z".to_string()])
    );
    assert_eq!(resolve("crate::x::y::f", &y, &known), Some(y.clone()));
}

/// Each function of `src/` over `max` lines, as `file:line name (lines)`.
fn functions_over(max: usize) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = Vec::new();
    for (path, text) in crate::common::rust_files("src") {
        let lines: Vec<&str> = text.lines().collect();
        for f in crate::common::functions(&lines) {
            if f.body.len() > max {
                let rel = path.strip_prefix(&src).unwrap().display().to_string();
                long.push(format!(
                    "{rel}:{} {} ({})",
                    f.start + 1,
                    f.name,
                    f.body.len()
                ));
            }
        }
    }
    long.sort();
    long
}

#[test]
fn no_function_is_over_100_lines_but_the_io_engine_loops() {
    let long = functions_over(100);
    let others: Vec<&String> = long
        .iter()
        .filter(|f| {
            !(f.starts_with("measure/engine.rs:")
                && (f.contains(" run_uring ") || f.contains(" run_psync ")))
        })
        .collect();
    assert!(long.len() <= 2, "{long:?}");
    assert!(others.is_empty(), "{others:?}");
    // The count sees a long function: it is not vacuous.
    assert!(!functions_over(60).is_empty());
}
