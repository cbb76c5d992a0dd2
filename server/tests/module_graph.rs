//! The server's modules depend on each other one way: transports on the pipeline, the pipeline
//! on the stages, the cache and the store, everything on the model seam, the tokenizer, the
//! item projection and the error type at the bottom; the simulator implements the model and
//! depends only downward. This test reads `server/src`, takes every `crate::<module>` a
//! top-level module mentions in code (comments left out), and checks that the graph has no
//! cycle and that no module reaches above its layer.
//!
//! Inside a module the files depend on each other one way too: a second test resolves every
//! `crate::…` and `super::…` path of a file (through the re-exports of a `mod.rs`) to the file
//! that defines it and fails on a cycle between files. A module with files of its own (its
//! `mod.rs`, `lib.rs`, or a `name.rs` beside `name/`) is their face — it declares them and holds
//! what they share — so the edges between it and the files under it are not counted; its edges
//! to any other file are.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Each top-level module and the layer it sits in: a module may use modules of lower layers
/// and of its own, never of a higher one.
const LAYERS: &[(&str, u8)] = &[
    ("compaction", 0),
    ("server_secret", 0),
    ("turn_state", 0),
    ("costs", 1),
    ("error", 1),
    ("tenancy", 1),
    ("ids", 1),
    ("items", 1),
    ("lifecycle", 1),
    ("background", 1),
    ("tokenizer", 1),
    ("timing", 1),
    ("model", 2),
    ("conditions", 2),
    ("metrics", 2),
    ("traces", 2),
    ("stages", 3),
    ("cache", 4),
    ("store", 4),
    ("sim", 4),
    ("engine", 4),
    ("config", 5),
    ("state", 6),
    ("pipeline", 7),
    ("transport", 8),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under `src` belongs to (`None` for `lib.rs`/`main.rs`).
fn owner(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// The modules `code` names as `crate::<module>` (or `crate::AppState`, `crate::Config`),
/// outside comments.
fn mentions(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let module = match name.as_str() {
                "AppState" => "state".to_string(),
                "Config" => "config".to_string(),
                _ => name,
            };
            found.insert(module);
        }
    }
    found
}

#[test]
fn modules_depend_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(module) = owner(&src, file) else {
            continue;
        };
        assert!(
            layer.contains_key(module.as_str()),
            "{module} (in {}) has no layer in this test: place it",
            file.display()
        );
        let code = std::fs::read_to_string(file).unwrap();
        let uses = graph.entry(module.clone()).or_default();
        for used in mentions(&code) {
            if used != module {
                assert!(
                    layer.contains_key(used.as_str()),
                    "{} names crate::{used}, which is not a module",
                    file.display()
                );
                uses.insert(used);
            }
        }
    }
    let mut upward = Vec::new();
    for (module, uses) in &graph {
        for used in uses {
            if layer[used.as_str()] > layer[module.as_str()] {
                upward.push(format!("{module} → {used}"));
            }
        }
    }
    assert!(upward.is_empty(), "dependencies point upward: {upward:?}");
    // With every edge pointing to the same or a lower layer, a cycle could only run within one
    // layer; modules of one layer must not use each other at all.
    let mut sideways = Vec::new();
    for (module, uses) in &graph {
        for used in uses {
            if layer[used.as_str()] == layer[module.as_str()] {
                sideways.push(format!("{module} → {used}"));
            }
        }
    }
    assert!(
        sideways.is_empty(),
        "modules of one layer depend on each other: {sideways:?}"
    );
    println!("{graph:#?}");
}

/// The module path of a file under `src`: `engine/call.rs` → `engine::call`,
/// `engine/chat/mod.rs` → `engine::chat`, `lib.rs` → the crate root (empty).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap();
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_string())
        .collect();
    let last = path.pop().unwrap();
    let stem = last.strip_suffix(".rs").unwrap();
    if !matches!(stem, "mod" | "lib" | "main") {
        path.push(stem.to_string());
    }
    path
}

/// `code` without comments and without its trailing `#[cfg(test)] mod tests { … }` (whose
/// `super` is the file itself, not its parent).
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests {"))
        {
            break;
        }
        code.push_str(line.split("//").next().unwrap_or(""));
        code.push('\n');
    }
    code
}

/// The paths written in `code` that start at `crate` or `super`, each as its segments, with
/// `use` groups (`super::{a, b::{c, d}}`) expanded into one path each.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut starts: Vec<usize> = ["crate::", "super::"]
        .iter()
        .flat_map(|start| code.match_indices(start).map(|(at, _)| at))
        .filter(|&at| at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_'))
        .collect();
    starts.sort_unstable();
    let mut found = Vec::new();
    let mut done = 0;
    for at in starts {
        if at >= done {
            let (trees, end) = tree(bytes, at);
            found.extend(trees);
            done = end;
        }
    }
    found
}

/// Reads one path tree from `at`: segments joined by `::`, ending in a name, `*`, or a `{…}`
/// group of trees. Returns the paths and where it stopped.
fn tree(code: &[u8], mut at: usize) -> (Vec<Vec<String>>, usize) {
    let skip_space = |mut at: usize| {
        while at < code.len() && code[at].is_ascii_whitespace() {
            at += 1;
        }
        at
    };
    let mut prefix = Vec::new();
    loop {
        at = skip_space(at);
        if code.get(at) == Some(&b'{') {
            let mut all = Vec::new();
            at += 1;
            loop {
                at = skip_space(at);
                if code.get(at) == Some(&b'}') {
                    return (all, at + 1);
                }
                let (trees, end) = tree(code, at);
                all.extend(trees.into_iter().map(|tail| {
                    let mut path = prefix.clone();
                    path.extend(tail);
                    path
                }));
                at = skip_space(end);
                match code.get(at) {
                    Some(b',') => at += 1,
                    Some(b'}') => return (all, at + 1),
                    _ => return (all, at),
                }
            }
        }
        let start = at;
        while at < code.len() && (code[at].is_ascii_alphanumeric() || code[at] == b'_') {
            at += 1;
        }
        if start == at {
            return (vec![prefix], at);
        }
        prefix.push(String::from_utf8_lossy(&code[start..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
        } else {
            return (vec![prefix], at);
        }
    }
}

/// What each `mod.rs` re-exports from its files: module path → name → the module it comes from.
type Reexports = BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>;

/// The file (module path) `path`, written in module `from`, names: its segments followed down
/// the module tree as far as they name modules, then through a `mod.rs`'s re-export.
fn resolve(
    from: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
    reexports: &Reexports,
) -> Vec<String> {
    let mut module = from.to_vec();
    let mut rest = path;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "crate" => module.clear(),
            "super" => {
                module.pop();
            }
            _ => break,
        }
        rest = tail;
    }
    for segment in rest {
        let mut next = module.clone();
        next.push(segment.clone());
        if modules.contains(&next) {
            module = next;
            continue;
        }
        if let Some(source) = reexports.get(&module).and_then(|names| names.get(segment)) {
            module = source.clone();
        }
        break;
    }
    module
}

/// The cycles of `graph`: its strongly connected components of more than one node (Tarjan).
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        found: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, node: &'a Vec<String>) {
        let n = walk.index.len();
        walk.index.insert(node, n);
        walk.low.insert(node, n);
        walk.stack.push(node);
        for next in walk.graph.get(node).into_iter().flatten() {
            if !walk.index.contains_key(next) {
                visit(walk, next);
                let low = walk.low[next].min(walk.low[node]);
                walk.low.insert(node, low);
            } else if walk.stack.contains(&next) {
                let low = walk.index[next].min(walk.low[node]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let mut component = Vec::new();
            while let Some(top) = walk.stack.pop() {
                component.push(top.clone());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                walk.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

#[test]
fn files_depend_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut modules = BTreeSet::new();
    let mut code = BTreeMap::new();
    // `main.rs` is the binary's crate: it reaches the library by its name, not by `crate::`.
    for file in files.iter().filter(|file| **file != src.join("main.rs")) {
        let module = module_path(&src, file);
        modules.insert(module.clone());
        code.insert(module, code_of(&std::fs::read_to_string(file).unwrap()));
    }
    // The faces: a module with files of its own (a `mod.rs`, `lib.rs`, or a `name.rs` beside
    // its `name/`).
    let directories: BTreeSet<Vec<String>> = modules
        .iter()
        .filter(|module| {
            modules
                .iter()
                .any(|other| other.len() > module.len() && other.starts_with(module))
        })
        .cloned()
        .collect();
    // A directory module's re-exports: `pub use child::{A, B};` makes `module::A` child's.
    let mut reexports = Reexports::new();
    for directory in &directories {
        for line in code[directory].lines() {
            let Some(used) = line.trim().strip_prefix("pub use ") else {
                continue;
            };
            for path in tree(used.as_bytes(), 0).0 {
                let Some((name, child)) = path.split_last() else {
                    continue;
                };
                let mut source = directory.clone();
                source.extend(child.iter().cloned());
                if child.first().is_some_and(|c| c != "crate" && c != "super")
                    && modules.contains(&source)
                {
                    reexports
                        .entry(directory.clone())
                        .or_default()
                        .insert(name.clone(), source);
                }
            }
        }
    }
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    let within = |inner: &Vec<String>, outer: &Vec<String>| {
        directories.contains(outer) && inner.starts_with(outer)
    };
    for (module, text) in &code {
        let uses = graph.entry(module.clone()).or_default();
        for path in paths(text) {
            let used = resolve(module, &path, &modules, &reexports);
            if &used != module && !within(&used, module) && !within(module, &used) {
                uses.insert(used);
            }
        }
    }
    let found = cycles(&graph);
    let mut report = String::new();
    for cycle in &found {
        let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
        writeln!(report, "  {}", names.join(" ↔ ")).unwrap();
    }
    assert!(
        found.is_empty(),
        "files depend on each other in a cycle:\n{report}"
    );
}
