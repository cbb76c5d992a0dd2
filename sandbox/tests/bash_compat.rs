//! Holds the sandbox shell against real bash: every command line in `bash_compat/cases.sh`
//! (cases separated by `%%` lines) runs through `/bin/bash` on a fresh temporary copy of
//! `bash_compat/tree/` and through the sandbox on the same tree; stdout and exit code must be
//! identical. Bash runs with `LC_ALL=C` so sorting and messages are byte-order and ASCII.

#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};
use std::process::Command;

use tether_sandbox::Sandbox;
use tether_sandbox::native::{block_on, load_dir};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bash_compat")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn run_bash(line: &str, index: usize) -> (String, i32) {
    let dir =
        std::env::temp_dir().join(format!("tether-bash-compat-{}-{index}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&fixture().join("tree"), &dir);
    let output = Command::new("/bin/bash")
        .arg("-c")
        .arg(line)
        .current_dir(&dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("HOME", "/")
        .output()
        .expect("bash runs");
    std::fs::remove_dir_all(&dir).unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.code().unwrap_or(-1),
    )
}

fn run_sandbox(line: &str) -> (String, i32) {
    let vfs = load_dir(&fixture().join("tree")).unwrap();
    let mut sandbox = Sandbox::new(vfs);
    let output = block_on(sandbox.run_shell(line));
    (output.stdout, output.exit_code)
}

#[test]
fn sandbox_matches_bash() {
    let cases = std::fs::read_to_string(fixture().join("cases.sh")).unwrap();
    let cases: Vec<&str> = cases.split("\n%%\n").map(str::trim_end).collect();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut mismatches = Vec::new();
    for (index, line) in cases.iter().enumerate() {
        let bash = run_bash(line, index);
        let sandbox = run_sandbox(line);
        if bash != sandbox {
            mismatches.push(format!(
                "--- case {index}: {line}\nbash    (exit {}):\n{}\nsandbox (exit {}):\n{}",
                bash.1, bash.0, sandbox.1, sandbox.0
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ from bash:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}

/// The agent corpus (`bash_compat/agents/`, see its README): command lines coding agents run,
/// from public sources, each through bash and the sandbox on the same tree. Fails on a *wrong*
/// line or under 97 % identical, the lines of `allow-list.txt` excused, and on a stale entry of
/// that list. Prints the per-kind table and every line that is not identical.
#[test]
fn agent_corpus_agrees_with_bash() {
    use tether_sandbox::corpus::{self, Corpus, Gate, Tally};

    for tool in ["jq", "rg", "tree"] {
        let found = Command::new(tool).arg("--version").output().is_ok();
        assert!(
            found,
            "`{tool}` is missing: `cargo xtask setup` installs it"
        );
    }
    let corpus = Corpus::load(&fixture().join("agents")).expect("the corpus loads");
    assert!(
        corpus.cases.len() >= 400,
        "only {} lines",
        corpus.cases.len()
    );
    let results = corpus::run_all(&corpus, |_| {}).expect("bash runs");
    let tally = Tally::new(&results);
    let gate = Gate::new(&results, &corpus.allowed);
    println!("{}", tally.table("sandbox"));
    println!(
        "{}",
        corpus::describe_disagreements(&results, &corpus.allowed)
    );
    assert!(gate.passes(), "{}", gate.problems().join("\n"));
}
