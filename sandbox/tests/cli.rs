//! The `tether-sandbox` binary on a real directory: output and exit code pass through, and
//! `--write-back` mirrors the resulting tree (additions and deletions) onto disk.

#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

fn temp_project(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tether-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/a.txt"), "alpha\n").unwrap();
    std::fs::write(dir.join("old.txt"), "old\n").unwrap();
    dir
}

fn cli(args: &[&str]) -> (String, String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_tether-sandbox"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code().unwrap(),
    )
}

#[test]
fn command_line_output_and_exit_code() {
    let dir = temp_project("shell");
    let root = dir.to_str().unwrap();
    assert_eq!(
        cli(&["--root", root, "-c", "cat src/a.txt; echo oops >&2; exit 3"]),
        ("alpha\n".into(), "oops\n".into(), 3)
    );
    assert!(
        dir.join("old.txt").exists(),
        "without --write-back the disk is untouched"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn write_back_mirrors_the_tree() {
    let dir = temp_project("write-back");
    let root = dir.to_str().unwrap();
    let (_, _, code) = cli(&[
        "--root",
        root,
        "--write-back",
        "-c",
        "rm old.txt; mkdir -p new/dir; echo hi > new/dir/f.txt",
    ]);
    assert_eq!(code, 0);
    assert!(!dir.join("old.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("new/dir/f.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/a.txt")).unwrap(),
        "alpha\n"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn tool_calls() {
    let dir = temp_project("tool");
    let root = dir.to_str().unwrap();
    assert_eq!(
        cli(&[
            "--root",
            root,
            "--tool",
            "read_file",
            "--args",
            r#"{"file_path": "/src/a.txt"}"#
        ]),
        ("L1: alpha\n".into(), String::new(), 0)
    );
    let patch = "*** Begin Patch\n*** Update File: src/a.txt\n@@\n-alpha\n+beta\n*** End Patch\n";
    let (out, _, code) = cli(&[
        "--root",
        root,
        "--write-back",
        "--tool",
        "apply_patch",
        "--input",
        patch,
    ]);
    assert_eq!(
        (out.as_str(), code),
        ("Success. Updated the following files:\nM src/a.txt\n\n", 0)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/a.txt")).unwrap(),
        "beta\n"
    );
    let (out, _, code) = cli(&[
        "--root",
        root,
        "--tool",
        "shell",
        "--args",
        "{\"command\": 1}",
    ]);
    assert_eq!(code, 1);
    assert!(out.starts_with("failed to parse function arguments"));
    assert_eq!(cli(&["--bogus"]).2, 2);
    std::fs::remove_dir_all(dir).unwrap();
}
