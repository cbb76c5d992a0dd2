//! The client's modules depend on each other one way: the error type and the wire texts at the
//! bottom, then what an event and a server are, then what is built on them (the turn's rules, a
//! credential, a backend's connection), the words for a failure, the two backends, the API written
//! once over them, and the session on top. This test reads `client/src`, takes every `crate::…`
//! a module names in code (comments left out; a re-exported type counts as its module), and fails
//! on a use of a higher layer or of a module of the same one — so no cycle can form.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module and its layer: a module may use modules of lower layers only.
const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("wire", 0),
    ("endpoint", 1),
    ("frame", 1),
    ("connection", 2),
    ("lanes", 2),
    ("reply", 2),
    ("secrets", 2),
    ("sse", 2),
    ("turn", 2),
    ("diagnosis", 3),
    ("browser", 4),
    ("native", 4),
    ("http", 5),
    ("websocket", 5),
    ("session", 6),
];

/// The types `lib.rs` re-exports, by the module that defines (or, for a backend's, completes)
/// them.
const REEXPORTS: &[(&str, &str)] = &[
    ("APPEND_BETA", "endpoint"),
    ("MULTI_AGENT_BETA", "endpoint"),
    ("Endpoint", "endpoint"),
    ("Error", "error"),
    ("Frame", "frame"),
    ("Reply", "reply"),
    ("SseFrames", "sse"),
    ("Ending", "turn"),
    ("Finished", "turn"),
    ("TurnReader", "turn"),
    ("Http", "http"),
    ("SseStream", "http"),
    ("WebSocket", "websocket"),
    ("Recovered", "session"),
    ("Recovery", "session"),
    ("Session", "session"),
    ("Transport", "session"),
];

/// Every `.rs` file under `dir`, with the module it belongs to (its top-level file or folder).
fn sources(dir: &Path, module: Option<&str>, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let owner = module.map_or(name, str::to_string);
        if path.is_dir() {
            sources(&path, Some(&owner), out);
        } else if path.extension().is_some_and(|ext| ext == "rs") && owner != "lib" {
            out.push((owner, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The modules `code` names after `crate::`, in paths and in `crate::{…}` groups.
fn used(code: &str) -> BTreeSet<String> {
    let reexported: BTreeMap<&str, &str> = REEXPORTS.iter().copied().collect();
    let mut names = Vec::new();
    for line in code
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
    {
        for (at, prefix) in line.match_indices("crate::") {
            let rest = &line[at + prefix.len()..];
            match rest.strip_prefix('{') {
                Some(group) => names.extend(group.split('}').next().unwrap().split(',')),
                None => names.push(rest),
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let name: String = name
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            reexported
                .get(name.as_str())
                .map_or(name, |m| m.to_string())
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn modules_depend_one_way() {
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        None,
        &mut files,
    );
    let mut wrong = Vec::new();
    for (module, code) in &files {
        let Some(&own) = layer.get(module.as_str()) else {
            panic!("the module {module} has no layer in this test: place it");
        };
        for other in used(code).into_iter().filter(|other| other != module) {
            match layer.get(other.as_str()) {
                None => panic!("{module} names crate::{other}, which is no module of this test"),
                Some(&theirs) if theirs >= own => wrong.push(format!("{module} → {other}")),
                Some(_) => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses of a module of the same or a higher layer: {wrong:?}"
    );
}

#[test]
fn paths_and_groups_are_read_and_comments_are_not() {
    let code = "use crate::diagnosis::Probe;\nuse crate::{Http, WebSocket};\n// crate::session\n\
                let x = crate::error::api_error_of(b); /// crate::secrets";
    let found: Vec<String> = used(code).into_iter().collect();
    assert_eq!(found, ["diagnosis", "error", "http", "websocket"]);
}
