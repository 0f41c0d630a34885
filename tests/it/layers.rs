//! The layering of `src/`: the commands in `src/commands/`, each in its
//! own folder, never import one another; the layers below them never
//! import a command; in a command, only its `args.rs` and `run.rs` see the
//! command line, and its `args.rs` builds no domain type. No module
//! imports one that imports it back, file by file or folder by folder,
//! test code included; at most 20 top-level modules; one name per public
//! type, and one path; no file over 600 lines before its tests; every
//! command's work is a `Work`, and only its `run.rs` builds a `Stop`; only
//! `main` and `output` speak on stderr, and only `sys` starts a program.
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

/// The commands: the folders of `src/commands/` but `common`.
fn commands() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "common")
        .collect();
    out.sort();
    out
}

/// The command a module belongs to, if it belongs to one.
fn command_of(module: &Module) -> Option<&str> {
    match module.as_slice() {
        [c, name, ..] if c == "commands" && name != "common" => Some(name),
        _ => None,
    }
}

/// Each import of one module by another of `known` that `allowed`
/// refuses, as `from -> to`.
fn forbidden(
    known: &BTreeMap<Module, String>,
    allowed: impl Fn(&Module, &Module) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in imports(known) {
        for to in targets {
            if !allowed(&from, &to) {
                out.push(format!("{} -> {}", from.join("::"), to.join("::")));
            }
        }
    }
    out
}

#[test]
fn every_command_has_its_arguments_its_run_and_its_work() {
    let all = commands();
    assert!(all.len() >= 8, "{all:?}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    for c in &all {
        for part in ["args.rs", "run.rs", "mod.rs"] {
            assert!(
                dir.join(c).join(part).is_file(),
                "commands/{c} has no {part}"
            );
        }
    }
}

/// Every command's work has one shape: its request implements
/// `commands::common::work::Work` (`run(&request, &interrupt)`), and only
/// its `run.rs` builds the `Stop` that `main` prints: the work returns
/// its own typed error, which `run.rs` maps to an exit status.
#[test]
fn every_command_s_work_has_one_shape_and_its_run_decides_the_exit() {
    let known = modules();
    for c in commands() {
        let works = known
            .iter()
            .filter(|(m, _)| command_of(m) == Some(c.as_str()))
            .any(|(_, code)| code.contains("impl Work for"));
        assert!(works, "commands/{c}: no request implements Work");
    }
    let stops: Vec<String> = known
        .iter()
        // `as_pveperf` is the run of the probe under pveperf's name.
        .filter(|(m, _)| {
            command_of(m).is_some()
                && !matches!(m.last().map(String::as_str), Some("run" | "as_pveperf"))
        })
        .filter(|(_, code)| before_tests(code).contains("Stop::"))
        .map(|(m, _)| m.join("::"))
        .collect();
    assert!(stops.is_empty(), "work code builds a Stop: {stops:?}");
}

/// A command's imports of another command.
fn crossing(known: &BTreeMap<Module, String>) -> Vec<String> {
    forbidden(known, |from, to| match (command_of(from), command_of(to)) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    })
}

/// A layer's imports of a command.
fn upward(known: &BTreeMap<Module, String>) -> Vec<String> {
    forbidden(known, |from, to| {
        from.first()
            .is_none_or(|top| top == "commands" || top == "main")
            || to.first().is_none_or(|top| top != "commands")
    })
}

#[test]
fn no_command_imports_another() {
    let crossing = crossing(&modules());
    assert!(crossing.is_empty(), "{crossing:#?}");
}

#[test]
fn no_layer_imports_a_command() {
    let upward = upward(&modules());
    assert!(upward.is_empty(), "{upward:#?}");
}

/// Whether a module is command-line code: a command's `args`, or an
/// argument group of `common` (`*_args`).
fn is_cli(module: &Module) -> bool {
    match module.as_slice() {
        [c, _, last] if c == "commands" => last == "args" || last.ends_with("_args"),
        _ => false,
    }
}

/// Whether a module may see the command line: cli code, a command's
/// `run` (and the probe's run under pveperf's name), what `common` makes
/// of the argument groups, the commands' top, and `main` (`[]`, as
/// `lib.rs`, which sees none).
fn sees_the_command_line(module: &Module) -> bool {
    let names: Vec<&str> = module.iter().map(String::as_str).collect();
    is_cli(module)
        || matches!(
            names.as_slice(),
            [] | ["commands"]
                | ["commands", _, "run"]
                | ["commands", "probe", "as_pveperf"]
                | ["commands", "common", "requests"]
        )
}

#[test]
fn only_arguments_and_runs_see_the_command_line() {
    let mut checked = 0;
    for (module, code) in modules() {
        if sees_the_command_line(&module) {
            continue;
        }
        checked += 1;
        for banned in [
            "clap::",
            "use clap",
            "pveprobe::commands::Opts",
            "::args::",
            "_args::",
        ] {
            assert!(
                !code.contains(banned),
                "{} uses {banned}: only a command's args.rs and run.rs see the command line",
                module.join("::")
            );
        }
    }
    assert!(checked > 80, "{checked} modules");
}

/// The code of a file before its tests, with string literals emptied.
fn before_tests(code: &str) -> String {
    let code = code.split("#[cfg(test)]").next().unwrap_or_default();
    regex::Regex::new(r#""(?:[^"\\]|\\.)*""#)
        .unwrap()
        .replace_all(code, "\"\"")
        .into_owned()
}

/// The types that a piece of cli code builds that it does not declare:
/// struct literals (`Name {`) and returned types (`-> Name`) of types
/// declared elsewhere.
fn built_elsewhere(code: &str) -> Vec<String> {
    let code = before_tests(code);
    let declared: BTreeSet<String> = regex::Regex::new(r"\b(?:struct|enum|type)\s+([A-Z]\w*)")
        .unwrap()
        .captures_iter(&code)
        .map(|c| c[1].to_string())
        .collect();
    // What a clap argument is parsed into, or its parser returns.
    let plain = [
        "Self",
        "String",
        "Vec",
        "Option",
        "Result",
        "PathBuf",
        "Duration",
        "IpAddr",
        "SocketAddr",
        "Error",
        "BTreeSet",
        // clap's own, in a parser or an argument group's impl.
        "Command",
        "TypedValueParser",
        "Id",
        "ArgMatches",
        // an argument reworded for one command (`output_args::worded`).
        "Arg",
        "FnMut",
    ];
    let literal =
        regex::Regex::new(r"(?m)(?:^|[=(,:]|return|=>)\s*([A-Z]\w*(?:::[A-Z]\w*)*)\s*\{").unwrap();
    let returned = regex::Regex::new(r"->\s*(?:impl\s+)?([\w:]+)").unwrap();
    let mut found = Vec::new();
    for c in literal
        .captures_iter(&code)
        .chain(returned.captures_iter(&code))
    {
        let path = c[1].to_string();
        let last = path.rsplit("::").next().unwrap_or_default().to_string();
        let is_type = last
            .chars()
            .next()
            .is_some_and(|ch| ch.is_ascii_uppercase());
        if is_type && !declared.contains(&last) && !plain.contains(&last.as_str()) {
            found.push(path);
        }
    }
    found
}

#[test]
fn cli_code_builds_no_domain_type() {
    let mut checked = 0;
    for (module, code) in modules() {
        if !is_cli(&module) {
            continue;
        }
        checked += 1;
        let built = built_elsewhere(&code);
        assert!(
            built.is_empty(),
            "{} builds {built:?}: the command's run.rs makes its request",
            module.join("::")
        );
    }
    assert!(checked >= 10, "{checked} cli modules");
}

#[test]
fn the_rules_see_what_they_forbid() {
    // A struct literal and a returned type of another module's type.
    let cli = "use crate::nodes::Reach;\nstruct A { x: u8 }\nfn to_reach(a: &A) -> Reach {\n    Reach { x: a.x }\n}\n";
    assert_eq!(built_elsewhere(cli), ["Reach", "Reach"]);
    assert!(built_elsewhere("pub struct A { x: u8 }\nfn f() -> Self { A { x: 1 } }\n").is_empty());
    assert_eq!(
        command_of(&vec!["commands".into(), "ceph".into(), "run".into()]),
        Some("ceph")
    );
    assert_eq!(command_of(&vec!["commands".into(), "common".into()]), None);
    assert!(is_cli(&vec![
        "commands".into(),
        "common".into(),
        "reach_args".into()
    ]));
    assert!(!is_cli(&vec![
        "commands".into(),
        "ceph".into(),
        "run".into()
    ]));
    // A command that imports another, and a layer that imports a command;
    // what a command takes from common or a layer is no crossing.
    let m = |path: &str| -> Module {
        path.split("::")
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let known: BTreeMap<Module, String> = [
        ("", ""),
        ("commands", ""),
        ("commands::common", ""),
        ("commands::common::session", ""),
        ("commands::a", ""),
        (
            "commands::a::run",
            "use crate::commands::b::work::Thing;\nuse crate::commands::common::session;\nuse crate::model::X;",
        ),
        ("commands::b", ""),
        ("commands::b::work", "use super::super::a::run;"),
        ("model", "fn f() { crate::commands::a::run::go() }"),
        ("output", "use crate::model::X;"),
    ]
    .into_iter()
    .map(|(k, v)| (m(k), v.to_string()))
    .collect();
    assert_eq!(
        crossing(&known),
        [
            "commands::a::run -> commands::b::work",
            "commands::b::work -> commands::a::run"
        ]
    );
    assert_eq!(upward(&known), ["model -> commands::a::run"]);
}

#[test]
fn no_source_file_is_over_600_lines_before_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    for dir in ["src", "crates/parse/src"] {
        for (path, text) in crate::common::rust_files(dir) {
            let lines = text
                .lines()
                .take_while(|l| !l.starts_with("#[cfg(test)]"))
                .count();
            if lines > 600 {
                long.push(format!(
                    "{} ({lines})",
                    path.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(long.is_empty(), "{long:?}");
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

/// One way to speak: only `main` (a command's error, and what a dropped
/// scratch directory left) and `output` (the `Progress` every message goes
/// through) write to stderr, and the `pveprobe: ` prefix is spelled in
/// neither a command nor a layer: `Progress` writes it.
#[test]
fn only_main_and_output_speak_on_stderr() {
    let known = modules();
    let outside = |m: &Module| !(m.is_empty() || m[0] == "output");
    let speaking: Vec<String> = known
        .iter()
        .filter(|(m, code)| {
            let code = before_tests(code);
            outside(m) && (code.contains("eprint!(") || code.contains("eprintln!("))
        })
        .map(|(m, _)| m.join("::"))
        .collect();
    assert!(speaking.is_empty(), "print to stderr: {speaking:?}");
    let prefixed: Vec<String> = known
        .iter()
        .filter(|(m, code)| {
            let code = code.split("#[cfg(test)]").next().unwrap_or_default();
            outside(m) && code.contains("\"pveprobe: ")
        })
        .map(|(m, _)| m.join("::"))
        .collect();
    assert!(prefixed.is_empty(), "spell the prefix: {prefixed:?}");
}

/// One way to run a program: only `sys` (`child::run`, `conversation`)
/// starts a process and waits for it.
#[test]
fn only_sys_starts_a_program() {
    let starting: Vec<String> = modules()
        .iter()
        .filter(|(m, code)| {
            let code = before_tests(code);
            m.first().is_some_and(|top| top != "sys")
                && (code.contains(".spawn()") || code.contains(".output()"))
        })
        .map(|(m, _)| m.join("::"))
        .collect();
    assert!(starting.is_empty(), "start a program: {starting:?}");
}
