//! `cargo xtask test`: every test suite, each in its own step, all run even when one fails, then
//! a summary. Exits non-zero if any suite failed.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::setup::Tools;
use crate::{dist, step};

struct Suite {
    name: &'static str,
    command: Command,
}

/// Runs the suites in order and prints a summary line per suite.
pub fn run_all(root: &Path, tools: &Tools) -> Result<ExitCode> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let chromedriver = tools.chromedriver.as_ref().context("chromedriver path")?;
    let chromium = tools.chromium.as_ref().context("chromium path")?;

    let mut native = Command::new(&cargo);
    native.args(["test", "--workspace"]);

    let browser = |package: &str| {
        let mut command = Command::new(&cargo);
        command
            .args(["test", "-p", package, "--target", "wasm32-unknown-unknown"])
            .env("CHROMEDRIVER", chromedriver)
            .env("WASM_BINDGEN_TEST_TIMEOUT", "120");
        command
    };

    let mut suites = vec![
        Suite {
            name: "native (cargo test --workspace)",
            command: native,
        },
        Suite {
            name: "browser: playground (wasm-bindgen-test, headless Chromium)",
            command: browser("tether-playground"),
        },
        Suite {
            name: "browser: sandbox (wasm-bindgen-test, headless Chromium)",
            command: browser("tether-sandbox"),
        },
    ];

    let mut results = Vec::new();
    for suite in &mut suites {
        results.push((suite.name, run_suite(suite)));
    }

    // The end-to-end and conformance suites run against a server built from this tree; if it
    // cannot be built they fail rather than test a stale binary.
    let server_built = build_server(&cargo);
    if let Err(error) = &server_built {
        eprintln!("xtask: {error:#}");
    }
    let e2e = "end-to-end (node --test, playwright-core)";
    let e2e_ready = match server_built {
        Ok(()) => dist::build(root, tools),
        Err(_) => Err(anyhow::anyhow!("tether-server did not build")),
    };
    let e2e_result = match e2e_ready {
        Ok(()) => {
            let mut command = Command::new("node");
            command
                .args(["--test", "--test-reporter=spec", "tests/e2e/"])
                .env("TETHER_SERVER_BIN", root.join("target/debug/tether-server"))
                .env("TETHER_DIST", root.join("dist"))
                .env("CHROMIUM", chromium)
                .env("TETHER_ARTIFACTS", root.join("test-artifacts"));
            run_suite(&mut Suite { name: e2e, command })
        }
        Err(error) => {
            Outcome::not_started(format!("cannot prepare the end-to-end suite: {error:#}"))
        }
    };
    results.push((e2e, e2e_result));

    // The official SDKs against the same server build; run.sh keeps the venv current.
    let conformance_name = "conformance (openai-python, openai-node, Codex CLI)";
    let conformance_result = if server_built.is_ok() {
        let mut command = Command::new("bash");
        command
            .arg("tests/conformance/run.sh")
            .env("TETHER_SERVER_BIN", root.join("target/debug/tether-server"));
        run_suite(&mut Suite {
            name: conformance_name,
            command,
        })
    } else {
        Outcome::not_started("skipping the conformance suite: tether-server did not build".into())
    };
    results.push((conformance_name, conformance_result));

    // The end of every failed suite's output again, so that the tail of this command's output
    // (all a CI log may show) says why, not only which.
    for (name, outcome) in &results {
        if !outcome.passed {
            eprintln!();
            eprintln!("── the last {} lines of {name} ──", outcome.tail.len());
            for line in &outcome.tail {
                eprintln!("{line}");
            }
        }
    }
    eprintln!();
    for (name, outcome) in &results {
        eprintln!("  {}  {name}", if outcome.passed { "PASS" } else { "FAIL" });
    }
    let passed = results.iter().filter(|(_, outcome)| outcome.passed).count();
    let failed = results.len() - passed;
    println!("suites: {passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn build_server(cargo: &str) -> Result<()> {
    step("building tether-server for the end-to-end and conformance suites");
    crate::check(Command::new(cargo).args(["build", "-p", "tether-server"]))
}

/// How many of a suite's last output lines are kept, to be shown again if it fails.
const TAIL_LINES: usize = 80;

/// What a suite's run left: whether it passed, and the end of its output.
struct Outcome {
    passed: bool,
    tail: Vec<String>,
}

impl Outcome {
    /// A suite that could not start, for `reason` (printed now, and kept as its output).
    fn not_started(reason: String) -> Outcome {
        let line = format!("xtask: {reason}");
        eprintln!("{line}");
        Outcome {
            passed: false,
            tail: vec![line],
        }
    }
}

/// Runs `suite`, passing its output through as it comes and keeping its last [`TAIL_LINES`]
/// lines (stdout and stderr together, in the order they arrived).
fn run_suite(suite: &mut Suite) -> Outcome {
    step(&format!("suite: {}", suite.name));
    let started = Instant::now();
    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
    let passed = match suite
        .command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(mut child) => {
            let copiers = [
                child
                    .stdout
                    .take()
                    .map(|out| copy_lines(out, std::io::stdout(), &tail)),
                child
                    .stderr
                    .take()
                    .map(|err| copy_lines(err, std::io::stderr(), &tail)),
            ];
            let status = child.wait();
            for copier in copiers.into_iter().flatten() {
                let _ = copier.join();
            }
            match status {
                Ok(status) => status.success(),
                Err(error) => {
                    eprintln!("xtask: waiting for {:?} failed: {error}", suite.command);
                    false
                }
            }
        }
        Err(error) => {
            eprintln!("xtask: cannot run {:?}: {error}", suite.command);
            false
        }
    };
    step(&format!(
        "suite {} in {:.1} s: {}",
        if passed { "passed" } else { "FAILED" },
        started.elapsed().as_secs_f64(),
        suite.name
    ));
    let tail = std::mem::take(&mut *tail.lock().unwrap_or_else(|p| p.into_inner()));
    Outcome {
        passed,
        tail: tail.into(),
    }
}

/// Copies `from` to `to` line by line on a thread of its own, keeping the last lines in `tail`.
fn copy_lines(
    from: impl Read + Send + 'static,
    mut to: impl Write + Send + 'static,
    tail: &Arc<Mutex<VecDeque<String>>>,
) -> std::thread::JoinHandle<()> {
    let tail = Arc::clone(tail);
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    // A reader that went away must not stop the suite: keep draining.
                    let _ = to.write_all(&line).and_then(|()| to.flush());
                    let text = String::from_utf8_lossy(&line).trim_end().to_string();
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if tail.len() == TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(text);
                }
            }
        }
    })
}
