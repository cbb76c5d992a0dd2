//! `cargo xtask test`: every test suite, each in its own step, all run even when one fails, then
//! a summary. Exits non-zero if any suite failed.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
            .env("TETHER_SERVER_BIN", root.join("target/debug/tether-server"))
            // Its output goes through a pipe: keep pytest's lines coming as they are written.
            .env("PYTHONUNBUFFERED", "1");
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
        let tail = Tail::default();
        tail.note(format!("xtask: {reason}"));
        Outcome {
            passed: false,
            tail: tail.take(),
        }
    }
}

/// Runs `suite`, passing its output through as it comes and keeping its last [`TAIL_LINES`]
/// lines (stdout and stderr together, in the order they arrived).
fn run_suite(suite: &mut Suite) -> Outcome {
    step(&format!("suite: {}", suite.name));
    let started = Instant::now();
    let tail = Tail::default();
    let passed = match suite
        .command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(mut child) => {
            let copiers: Vec<_> = [
                child
                    .stdout
                    .take()
                    .map(|out| copy(out, std::io::stdout(), &tail)),
                child
                    .stderr
                    .take()
                    .map(|err| copy(err, std::io::stderr(), &tail)),
            ]
            .into_iter()
            .flatten()
            .collect();
            let status = child.wait();
            // The pipes close when the suite exits, unless a process it started and left
            // running (a server a killed test never stopped) still holds them: then the rest of
            // its output is passed through as it comes, but the suite is over.
            let deadline = Instant::now() + COPY_GRACE;
            while copiers.iter().any(|copier| !copier.is_finished()) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if copiers.iter().any(|copier| !copier.is_finished()) {
                tail.note(format!(
                    "xtask: a process {} started still holds its output open; going on without it",
                    suite.name
                ));
            }
            match status {
                Ok(status) => status.success(),
                Err(error) => {
                    tail.note(format!(
                        "xtask: waiting for {:?} failed: {error}",
                        suite.command
                    ));
                    false
                }
            }
        }
        Err(error) => {
            tail.note(format!("xtask: cannot run {:?}: {error}", suite.command));
            false
        }
    };
    step(&format!(
        "suite {} in {:.1} s: {}",
        if passed { "passed" } else { "FAILED" },
        started.elapsed().as_secs_f64(),
        suite.name
    ));
    Outcome {
        passed,
        tail: tail.take(),
    }
}

/// How long to wait, once a suite has exited, for the rest of its output.
const COPY_GRACE: Duration = Duration::from_secs(5);

/// The longest line kept whole in a tail; the rest of a longer one is cut.
const TAIL_LINE_BYTES: usize = 4096;

/// The last [`TAIL_LINES`] lines of a suite's output, shared by the threads that copy it.
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// A line of xtask's own: printed now, and kept with the suite's output.
    fn note(&self, line: String) {
        eprintln!("{line}");
        self.push(line);
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner())).into()
    }
}

/// Copies `from` to `to` on a thread of its own, each read as soon as it arrives (a partial
/// line too), and keeps the lines in `tail`.
fn copy(
    mut from: impl Read + Send + 'static,
    mut to: impl Write + Send + 'static,
    tail: &Tail,
) -> std::thread::JoinHandle<()> {
    let tail = tail.clone();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 8192];
        let mut line = Vec::new();
        let keep = |line: &mut Vec<u8>| {
            tail.push(String::from_utf8_lossy(line).trim_end().to_string());
            line.clear();
        };
        loop {
            let read = match from.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            // A reader that went away must not stop the suite: keep draining.
            let _ = to.write_all(&buffer[..read]).and_then(|()| to.flush());
            for piece in buffer[..read].split_inclusive(|&byte| byte == b'\n') {
                let room = TAIL_LINE_BYTES.saturating_sub(line.len());
                line.extend_from_slice(&piece[..piece.len().min(room)]);
                if piece.ends_with(b"\n") {
                    keep(&mut line);
                }
            }
        }
        if !line.is_empty() {
            keep(&mut line);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn copy_passes_every_byte_through_and_keeps_the_last_lines() {
        let mut input = Vec::new();
        for i in 0..100 {
            input.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        input.extend_from_slice(&[b'x'; 10_000]);
        input.extend_from_slice(b"\n\xffnot utf-8\nno newline at the end");
        let sink = Sink::default();
        let tail = Tail::default();
        copy(std::io::Cursor::new(input.clone()), sink.clone(), &tail)
            .join()
            .unwrap();
        assert_eq!(*sink.0.lock().unwrap(), input);
        let lines = tail.take();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 23");
        assert_eq!(lines[76], "line 99");
        assert_eq!(lines[77], "x".repeat(TAIL_LINE_BYTES));
        assert_eq!(lines[78], "\u{fffd}not utf-8");
        assert_eq!(lines[79], "no newline at the end");
    }

    #[test]
    fn a_suite_is_over_when_it_exits_even_if_a_process_it_left_holds_its_output() {
        let mut command = Command::new("bash");
        // The background sleep keeps stdout open after bash has exited with 3.
        command.args(["-c", "sleep 8 & echo started; exit 3"]);
        let started = Instant::now();
        let outcome = run_suite(&mut Suite {
            name: "leaky",
            command,
        });
        assert!(
            started.elapsed() < Duration::from_secs(7),
            "waited for the leftover process"
        );
        assert!(!outcome.passed);
        assert_eq!(outcome.tail[0], "started");
        assert!(
            outcome.tail[1].contains("still holds its output open"),
            "{:?}",
            outcome.tail
        );
    }

    #[test]
    fn a_suite_that_cannot_start_says_why_in_its_tail() {
        let outcome = run_suite(&mut Suite {
            name: "missing",
            command: Command::new("/nonexistent/tether-test-program"),
        });
        assert!(!outcome.passed);
        assert!(
            outcome.tail[0].starts_with("xtask: cannot run"),
            "{:?}",
            outcome.tail
        );
    }
}
