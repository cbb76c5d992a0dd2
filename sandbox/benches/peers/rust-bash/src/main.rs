//! Runs command lines in rust-bash 0.3.0 for `sandbox/benches/peers.rs`: reads a request on
//! stdin — `{"projects": {NAME: {PATH: TEXT}}, "cases": [{"id", "project", "cwd", "script"}],
//! "runs": N, "raised_limits": BOOL, "budget_ms": MS}` — and writes one JSON object a case on
//! stdout: `{"id", "stdout", "stderr", "exit_code", "times_ms": [run times]}`. Each run is a fresh
//! shell with the project's files, in its working directory; only `exec` is timed. Runs stop
//! early (after two) once a case has taken `budget_ms`.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use rust_bash::{ExecutionLimits, RustBashBuilder};
use serde_json::{Value, json};

fn main() {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .expect("a request on stdin");
    let request: Value = serde_json::from_str(&input).expect("the request is JSON");
    let runs = request["runs"].as_u64().unwrap_or(1).max(1);
    let budget = request["budget_ms"]
        .as_f64()
        .map_or(Duration::MAX, |ms| Duration::from_secs_f64(ms / 1000.0));
    let limits = if request["raised_limits"].as_bool().unwrap_or(false) {
        raised_limits()
    } else {
        ExecutionLimits {
            max_execution_time: Duration::from_secs(10),
            ..ExecutionLimits::default()
        }
    };
    let projects = &request["projects"];
    let mut out = std::io::stdout().lock();
    for case in request["cases"].as_array().expect("cases") {
        let files: HashMap<String, Vec<u8>> = projects[case["project"].as_str().unwrap_or("")]
            .as_object()
            .map(|files| {
                files
                    .iter()
                    .map(|(path, text)| {
                        (
                            path.clone(),
                            text.as_str().unwrap_or("").as_bytes().to_vec(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let cwd = case["cwd"].as_str().unwrap_or("/");
        let script = case["script"].as_str().unwrap_or("");
        let mut times = Vec::new();
        let mut last = (String::new(), String::new(), 0);
        let case_started = Instant::now();
        for run in 0..runs {
            if run >= 2 && case_started.elapsed() > budget {
                break;
            }
            let built = RustBashBuilder::new()
                .files(files.clone())
                .cwd(cwd)
                .execution_limits(limits.clone())
                .build();
            let mut shell = match built {
                Ok(shell) => shell,
                Err(e) => {
                    last = (String::new(), format!("rust-bash: {e}"), 2);
                    break;
                }
            };
            let started = Instant::now();
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shell.exec(script)));
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            last = match result {
                Ok(Ok(result)) => (result.stdout, result.stderr, result.exit_code),
                Ok(Err(e)) => (String::new(), format!("rust-bash: {e}"), 2),
                Err(_) => (String::new(), "rust-bash: panicked".to_string(), 101),
            };
        }
        let line = json!({
            "id": case["id"],
            "stdout": last.0,
            "stderr": last.1,
            "exit_code": last.2,
            "times_ms": times,
        });
        writeln!(out, "{line}").expect("stdout");
    }
}

/// What the heavy pipelines need: the same generous bounds every engine gets there.
fn raised_limits() -> ExecutionLimits {
    ExecutionLimits {
        max_command_count: 10_000_000,
        max_loop_iterations: 10_000_000,
        max_execution_time: Duration::from_secs(120),
        max_output_size: 512 * 1024 * 1024,
        max_string_length: 512 * 1024 * 1024,
        max_heredoc_size: 512 * 1024 * 1024,
        max_array_elements: 10_000_000,
        ..ExecutionLimits::default()
    }
}
