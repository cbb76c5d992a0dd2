//! The server's modules depend on each other one way: transports on the pipeline, the pipeline
//! on the stages, the cache and the store, everything on the model seam, the tokenizer, the
//! item projection and the error type at the bottom; the simulator implements the model and
//! depends only downward. This test reads `server/src`, takes every `crate::<module>` a
//! top-level module mentions in code (comments left out), and checks that the graph has no
//! cycle and that no module reaches above its layer.

use std::collections::{BTreeMap, BTreeSet};
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
