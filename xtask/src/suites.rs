//! `cargo xtask test`: every test suite, each in its own step, all run even when one fails, then
//! a summary. Exits non-zero if any suite failed.

use std::path::Path;
use std::process::{Command, ExitCode};
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
            eprintln!("xtask: cannot prepare the end-to-end suite: {error:#}");
            false
        }
    };
    results.push((e2e, e2e_result));

    // The official SDKs against the same server build; run.sh keeps the venv current.
    let conformance_name = "conformance (openai-python, openai-node)";
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
        eprintln!("xtask: skipping the conformance suite: tether-server did not build");
        false
    };
    results.push((conformance_name, conformance_result));

    eprintln!();
    for (name, passed) in &results {
        eprintln!("  {}  {name}", if *passed { "PASS" } else { "FAIL" });
    }
    let passed = results.iter().filter(|(_, ok)| *ok).count();
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

fn run_suite(suite: &mut Suite) -> bool {
    step(&format!("suite: {}", suite.name));
    let started = Instant::now();
    let passed = match suite.command.status() {
        Ok(status) => status.success(),
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
    passed
}
