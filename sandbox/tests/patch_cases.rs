//! The apply_patch conformance cases, kept as data: each folder of `patch_cases/` holds
//! `input/` (the tree before; absent means empty), `patch`, and either `expected/` (the tree
//! after; absent means empty) or `expected_error` (text the error must contain — and then the
//! tree must be unchanged, since a failing patch applies nothing). Every case runs twice: as the
//! freeform `apply_patch` tool and as `apply_patch <<'PATCH'` in the shell.

#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::path::Path;

use tether_sandbox::native::{block_on, load_dir};
use tether_sandbox::{Sandbox, Vfs};

fn tree(dir: &Path) -> Vfs {
    if dir.is_dir() {
        load_dir(dir).unwrap()
    } else {
        Vfs::new()
    }
}

fn files(vfs: &Vfs) -> BTreeMap<String, String> {
    vfs.files()
        .map(|(path, data)| (path.to_string(), String::from_utf8_lossy(data).into_owned()))
        .collect()
}

fn check(case: &Path, output: &str, success: bool, after: &Vfs) -> Result<(), String> {
    let input = files(&tree(&case.join("input")));
    let error_file = case.join("expected_error");
    if error_file.exists() {
        let expected = std::fs::read_to_string(error_file).unwrap();
        if success || !output.contains(expected.trim_end()) {
            return Err(format!(
                "expected error containing {expected:?}, got {output:?}"
            ));
        }
        if files(after) != input {
            return Err("a failing patch changed the tree".into());
        }
        return Ok(());
    }
    if !success {
        return Err(format!("expected success, got {output:?}"));
    }
    let expected = files(&tree(&case.join("expected")));
    let actual = files(after);
    if actual != expected {
        return Err(format!(
            "tree differs:\nexpected {expected:#?}\nactual {actual:#?}"
        ));
    }
    Ok(())
}

#[test]
fn patch_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/patch_cases");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 25, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let patch = std::fs::read_to_string(case.join("patch")).unwrap();

        let mut sandbox = Sandbox::new(tree(&case.join("input")));
        let result = block_on(sandbox.call_custom_tool("apply_patch", &patch));
        if let Err(e) = check(case, &result.output, result.success, sandbox.vfs()) {
            failures.push(format!("{name} (tool): {e}"));
        }

        let mut sandbox = Sandbox::new(tree(&case.join("input")));
        let line = format!("apply_patch <<'PATCH'\n{patch}PATCH");
        let output = block_on(sandbox.run_shell(&line));
        let text = format!("{}{}", output.stdout, output.stderr);
        if let Err(e) = check(case, &text, output.exit_code == 0, sandbox.vfs()) {
            failures.push(format!("{name} (shell): {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
