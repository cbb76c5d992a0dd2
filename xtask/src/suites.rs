//! `cargo xtask test`: every test suite, each in its own step, all run even when one fails, then
//! a summary. Exits non-zero if any suite failed. Also `cargo xtask fuzz`, the libFuzzer runs
//! that one of the suites is a bounded instance of.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::setup::Tools;
use crate::test_servers::{CLIENT_BROWSER_SERVERS, TestServers};
use crate::{check, disk, dist, output_of, step};

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
        Suite {
            name: "fuzz (libFuzzer, a fixed count of inputs a target)",
            command: fuzz_suite()?,
        },
        Suite {
            name: "turn cost (instructions per WebSocket turn, callgrind)",
            command: turn_cost_suite(&cargo),
        },
    ];

    let free_at_start = disk::free_bytes(root);
    match free_at_start {
        Some(free) if free < disk::CLEAN_RUN_BYTES => eprintln!(
            "xtask: warning: {} free on the disk holding {}; a clean run needs about {} — \
             suites may fail with \"No space left on device\"",
            disk::gib(free),
            root.display(),
            disk::gib(disk::CLEAN_RUN_BYTES)
        ),
        Some(free) => step(&format!("{} free on the disk", disk::gib(free))),
        None => {}
    }

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
    // The client's browser backend against real servers of that build.
    let client_name = "browser: client (wasm-bindgen-test, headless Chromium, three servers)";
    let client_result = match &server_built {
        Ok(()) => {
            let binary = root.join("target/debug/tether-server");
            match TestServers::start(&binary, &CLIENT_BROWSER_SERVERS) {
                Ok(servers) => {
                    let mut command = browser("tether-client");
                    servers.export(&mut command);
                    run_suite(&mut Suite {
                        name: client_name,
                        command,
                    })
                }
                Err(error) => Outcome::not_started(format!("{error:#}")),
            }
        }
        Err(_) => Outcome::not_started(
            "skipping the client's browser suite: tether-server did not build".into(),
        ),
    };
    results.push((client_name, client_result));

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
    let conformance_name = "conformance (openai-python, openai-node, the Agents SDKs, Codex CLI)";
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

    // The same clients and the cross-replica tests against a real deployment of that build:
    // PostgreSQL, two replicas, nginx (this program's own `deploy --test`, so that its output
    // is a suite's).
    let deployment_name = "deployment (PostgreSQL + 2 replicas + nginx)";
    let deployment_result = if server_built.is_ok() {
        match deployment_suite(root) {
            Ok(command) => run_suite(&mut Suite {
                name: deployment_name,
                command,
            }),
            Err(error) => Outcome::not_started(format!("{error:#}")),
        }
    } else {
        Outcome::not_started("skipping the deployment suite: tether-server did not build".into())
    };
    results.push((deployment_name, deployment_result));

    // The end of every failed suite's output again, so that the tail of this command's output
    // (all a CI log may show) says why, not only which.
    for (name, outcome) in &results {
        if !outcome.passed {
            eprintln!();
            eprintln!("── the last {} lines of {name} ──", outcome.tail.len());
            for line in &outcome.tail {
                eprintln!("{line}");
            }
            if outcome.disk_full {
                let now = disk::free_bytes(root).map_or("unknown".into(), disk::gib);
                eprintln!(
                    "xtask: {name} failed because the disk filled up (free now: {now}; a clean \
                     run needs about {}): free space and run it again",
                    disk::gib(disk::CLEAN_RUN_BYTES)
                );
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
    step("building tether-server for the client's browser, end-to-end and conformance suites");
    crate::check(Command::new(cargo).args(["build", "-p", "tether-server"]))
}

/// The deployment suite: this program's own `deploy --test` on the debug build.
fn deployment_suite(root: &Path) -> Result<Command> {
    let me = std::env::current_exe().context("cannot find the xtask binary")?;
    let mut command = Command::new(me);
    command.args(["deploy", "--test", "--replicas", "2", "--binary"]);
    command.arg(root.join("target/debug/tether-server"));
    Ok(command)
}

/// The turn-cost check: the bench that counts a WebSocket continuation's instructions at two
/// context sizes under callgrind and fails on growth or a regression against its baseline.
fn turn_cost_suite(cargo: &str) -> Command {
    let mut command = Command::new(cargo);
    command.args(["bench", "-p", "tether-harness", "--bench", "turn_cost"]);
    command
}

/// The fuzz suite: this program's own `fuzz all --suite`, so that its output is a suite's.
fn fuzz_suite() -> Result<Command> {
    let me = std::env::current_exe().context("cannot find the xtask binary")?;
    let mut command = Command::new(me);
    command.args(["fuzz", "all", "--suite"]);
    Ok(command)
}

/// The fuzz targets of `fuzz/` (cargo-fuzz's layout, libFuzzer), each with the dictionary of
/// `fuzz/dicts/` it runs with. `fuzz/README.md` says what each one checks.
pub const FUZZ_TARGETS: [(&str, &str); 8] = [
    ("client_frame", "json"),
    ("request", "json"),
    ("sse", "sse"),
    ("apply_patch", "apply_patch"),
    ("shell", "shell"),
    ("arith", "arith"),
    ("awk", "awk"),
    ("jq", "jq"),
];

/// How many inputs each target runs in `cargo xtask test` (`--suite`): about 10 seconds each on
/// this kind of machine, about 80 s for all eight. A fixed count from a fixed seed: the same
/// amount of work on any machine, the committed seeds replayed first, and mostly the same inputs
/// (not exactly: what libFuzzer keeps follows coverage, which hash-map order and the clock move).
/// Exploring is `cargo xtask fuzz`'s job, with libFuzzer's random seeds.
pub(crate) const SUITE_RUNS: [(&str, u64); 8] = [
    ("client_frame", 250_000),
    ("request", 400_000),
    ("sse", 45_000),
    ("apply_patch", 400_000),
    ("shell", 60_000),
    ("arith", 100_000),
    ("awk", 40_000),
    ("jq", 50_000),
];

/// libFuzzer's `-seed` in the suite.
const SUITE_SEED: u64 = 1;

/// The suite's cap on one target's time, should a slow machine not reach its count: it then
/// stops early, having run a prefix of the same inputs.
const SUITE_SECONDS_CAP: u64 = 40;

/// One input running longer than this is a hang (libFuzzer's `-timeout`): every target bounds
/// its own work far below it.
const FUZZ_INPUT_TIMEOUT_SECONDS: u64 = 10;

/// How `cargo xtask fuzz` runs.
#[derive(Debug, PartialEq)]
pub struct FuzzOptions {
    pub targets: Vec<&'static str>,
    /// How long each target runs.
    pub seconds: u64,
    /// Start from the seeds alone, in a scratch corpus emptied first, rather than from (and
    /// growing) `fuzz/corpus/TARGET`: the suite does, so that its time does not grow with
    /// whatever corpus earlier runs on this machine left.
    pub seeds_only: bool,
    /// The test suite's run (`--suite`): from the seeds alone, libFuzzer seeded with
    /// [`SUITE_SEED`], each target for its count of [`SUITE_RUNS`] (at most
    /// [`SUITE_SECONDS_CAP`]) instead of `seconds`.
    pub suite: bool,
    /// Flags for libFuzzer, as they are.
    pub extra: Vec<String>,
}

/// `cargo xtask fuzz`: builds the fuzz targets, runs each one asked for (from `fuzz/seeds/TARGET`
/// and the corpus), and fails if any crashed, hung or ran out of memory.
pub fn fuzz(root: &Path, options: &FuzzOptions) -> Result<ExitCode> {
    let binaries = build_fuzz_targets(root)?;
    let mut runs = Vec::new();
    for target in &options.targets {
        let dict = FUZZ_TARGETS
            .iter()
            .find(|(name, _)| name == target)
            .map(|(_, dict)| *dict)
            .with_context(|| format!("no fuzz target '{target}'"))?;
        runs.push(run_fuzz_target(root, &binaries, target, dict, options));
    }
    eprintln!();
    eprintln!(
        "  {:<13} {:>10} {:>8} {:>6} {:>7} {:>7}  result",
        "target", "runs", "exec/s", "cov", "ft", "corpus"
    );
    for run in &runs {
        let show = |n: Option<u64>| n.map_or("?".to_string(), |n| n.to_string());
        eprintln!(
            "  {:<13} {:>10} {:>8} {:>6} {:>7} {:>7}  {}",
            run.target,
            show(run.stats.runs),
            show(run.stats.exec_per_second),
            show(run.stats.cov),
            show(run.stats.ft),
            show(run.stats.corpus),
            run.verdict
        );
    }
    for run in runs.iter().filter(|run| !run.passed) {
        let target = run.target;
        eprintln!();
        eprintln!("{target} failed: {}", run.verdict);
        if let Some(artifact) = &run.artifact {
            eprintln!("  the input: {artifact}");
            eprintln!(
                "  replay it: {} {artifact}",
                binaries.join(target).display()
            );
            eprintln!("  minimise it: cargo fuzz tmin -s none {target} {artifact}");
        }
        eprintln!("  full log: {}", run.log.display());
        eprintln!(
            "  fix it with a regression test first (fuzz/README.md, \"When a target finds something\")"
        );
    }
    let passed = runs.iter().filter(|run| run.passed).count();
    println!(
        "fuzz targets: {passed} passed, {} failed",
        runs.len() - passed
    );
    Ok(if passed == runs.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Builds every fuzz target with cargo-fuzz into `fuzz/target`; returns their directory.
///
/// No sanitizer (`-s none`): the code under test is safe Rust, where AddressSanitizer finds
/// nothing a panic does not, and without it the build needs no nightly flag (so no
/// `RUSTC_BOOTSTRAP`) and runs about twice as many inputs a second. cargo-fuzz's other defaults
/// stay: release optimisations with debug assertions and overflow checks, SanitizerCoverage.
fn build_fuzz_targets(root: &Path) -> Result<PathBuf> {
    let host = output_of(Command::new("rustc").arg("-vV"))
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("host: ").map(str::to_string))
        })
        .context("cannot read the host triple from `rustc -vV`")?;
    let target_dir = root.join("fuzz/target");
    step("building the fuzz targets (cargo fuzz build --sanitizer none)");
    check(
        crate::cargo_command()
            .current_dir(root)
            .args(["fuzz", "build", "--sanitizer", "none", "--target", &host])
            .arg("--target-dir")
            .arg(&target_dir),
    )?;
    Ok(target_dir.join(host).join("release"))
}

/// What one target's run left.
struct FuzzRun {
    target: &'static str,
    passed: bool,
    verdict: String,
    stats: FuzzStats,
    /// The input libFuzzer wrote for a crash, a hang or an out-of-memory.
    artifact: Option<String>,
    log: PathBuf,
}

/// The numbers of libFuzzer's last status line (`#RUNS DONE cov: … ft: … corp: N/… exec/s: …`).
#[derive(Debug, Default, PartialEq)]
struct FuzzStats {
    runs: Option<u64>,
    cov: Option<u64>,
    ft: Option<u64>,
    corpus: Option<u64>,
    exec_per_second: Option<u64>,
}

impl FuzzStats {
    /// The numbers of a status line, or `None` if `line` is not one.
    fn parse(line: &str) -> Option<FuzzStats> {
        let mut words = line.split_whitespace();
        let runs = words.next()?.strip_prefix('#')?.parse().ok();
        let mut stats = FuzzStats {
            runs,
            ..FuzzStats::default()
        };
        while let Some(word) = words.next() {
            let slot = match word {
                "cov:" => &mut stats.cov,
                "ft:" => &mut stats.ft,
                "corp:" => &mut stats.corpus,
                "exec/s:" => &mut stats.exec_per_second,
                _ => continue,
            };
            *slot = words
                .next()
                .and_then(|value| value.split('/').next())
                .and_then(|value| value.parse().ok());
        }
        stats.cov.is_some().then_some(stats)
    }
}

/// Whether a line of libFuzzer's output is worth showing when nothing went wrong: the start,
/// the power-of-two progress lines, the end and the final statistics — not every new input.
fn fuzz_line_is_shown(line: &str) -> bool {
    let second = line.split_whitespace().nth(1);
    line.starts_with('#') && matches!(second, Some("INITED" | "pulse" | "DONE"))
        || line.starts_with("stat::")
        || line.starts_with("INFO: Seed:")
}

/// Whether a line says the run went wrong; it and everything after it are shown.
fn fuzz_line_starts_failure(line: &str) -> bool {
    line.contains("panicked at")
        || line.contains("ERROR: libFuzzer")
        || line.starts_with("ALARM:")
        || line.starts_with("==") && line.contains("ERROR")
}

fn run_fuzz_target(
    root: &Path,
    binaries: &Path,
    target: &'static str,
    dict: &str,
    options: &FuzzOptions,
) -> FuzzRun {
    let (limits, what) = if options.suite {
        let runs = SUITE_RUNS
            .iter()
            .find(|(name, _)| *name == target)
            .map_or(100_000, |(_, runs)| *runs);
        (
            vec![
                format!("-seed={SUITE_SEED}"),
                format!("-runs={runs}"),
                format!("-max_total_time={SUITE_SECONDS_CAP}"),
            ],
            format!("{runs} inputs from seed {SUITE_SEED}"),
        )
    } else {
        let seconds = options.seconds;
        (
            vec![format!("-max_total_time={seconds}")],
            format!("{seconds} s"),
        )
    };
    step(&format!("fuzzing {target} for {what}"));
    let corpus = if options.seeds_only || options.suite {
        let scratch = root.join("fuzz/target/scratch-corpus").join(target);
        let _ = std::fs::remove_dir_all(&scratch);
        scratch
    } else {
        root.join("fuzz/corpus").join(target)
    };
    let artifacts = root.join("fuzz/artifacts").join(target);
    let log = artifacts.join("last-run.log");
    let failed = |verdict: String| FuzzRun {
        target,
        passed: false,
        verdict,
        stats: FuzzStats::default(),
        artifact: None,
        log: log.clone(),
    };
    for dir in [&corpus, &artifacts] {
        if let Err(error) = std::fs::create_dir_all(dir) {
            return failed(format!("cannot create {}: {error}", dir.display()));
        }
    }
    let mut log_file = match std::fs::File::create(&log) {
        Ok(file) => file,
        Err(error) => return failed(format!("cannot create {}: {error}", log.display())),
    };
    let mut command = Command::new(binaries.join(target));
    command
        .current_dir(root)
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .args(&limits)
        .arg(format!("-timeout={FUZZ_INPUT_TIMEOUT_SECONDS}"))
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .arg(format!(
            "-dict={}",
            root.join("fuzz/dicts")
                .join(format!("{dict}.dict"))
                .display()
        ))
        .args(&options.extra)
        .arg(&corpus)
        .arg(root.join("fuzz/seeds").join(target))
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => return failed(format!("cannot run {command:?}: {error}")),
    };
    let mut stats = FuzzStats::default();
    let mut artifact = None;
    let mut failing = false;
    if let Some(stderr) = child.stderr.take() {
        let mut reader = BufReader::new(stderr);
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            match reader.read_until(b'\n', &mut bytes) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let _ = log_file.write_all(&bytes);
            let line = String::from_utf8_lossy(&bytes);
            let line = line.trim_end();
            if let Some(progress) = FuzzStats::parse(line) {
                stats = progress;
            }
            if let Some(path) = line
                .split_once("Test unit written to ")
                .map(|(_, path)| path.trim().to_string())
            {
                artifact = Some(path);
            }
            failing |= fuzz_line_starts_failure(line);
            // Past a failure, all but the dictionary libFuzzer recommends (one entry a line).
            if fuzz_line_is_shown(line) || failing && !line.starts_with('"') {
                eprintln!("{line}");
            }
        }
    }
    let status = child.wait();
    let (passed, verdict) = match status {
        Ok(status) if status.success() => (true, "ok".to_string()),
        Ok(status) => {
            let what = if artifact.as_deref().is_some_and(|a| a.contains("/timeout-")) {
                "a hang (an input ran past the timeout)"
            } else if artifact.as_deref().is_some_and(|a| a.contains("/oom-")) {
                "out of memory"
            } else if artifact.is_some() {
                "a crash"
            } else {
                "libFuzzer failed"
            };
            (false, format!("{what} ({status})"))
        }
        Err(error) => (false, format!("waiting for it failed: {error}")),
    };
    FuzzRun {
        target,
        passed,
        verdict,
        stats,
        artifact,
        log,
    }
}

/// How many of a suite's last output lines are kept, to be shown again if it fails.
const TAIL_LINES: usize = 80;

/// What a suite's run left: whether it passed, the end of its output, and whether any line of
/// it said the disk was full.
struct Outcome {
    passed: bool,
    tail: Vec<String>,
    disk_full: bool,
}

impl Outcome {
    /// A suite that could not start, for `reason` (printed now, and kept as its output).
    fn not_started(reason: String) -> Outcome {
        let tail = Tail::default();
        tail.note(format!("xtask: {reason}"));
        Outcome {
            passed: false,
            disk_full: tail.disk_full(),
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
        disk_full: tail.disk_full(),
        tail: tail.take(),
    }
}

/// How long to wait, once a suite has exited, for the rest of its output.
const COPY_GRACE: Duration = Duration::from_secs(5);

/// The longest line kept whole in a tail; the rest of a longer one is cut.
const TAIL_LINE_BYTES: usize = 4096;

/// The last [`TAIL_LINES`] lines of a suite's output, shared by the threads that copy it, and
/// whether any line (kept or not, its first 4 KiB) said the disk was full.
#[derive(Clone, Default)]
struct Tail {
    lines: Arc<Mutex<VecDeque<String>>>,
    disk_full: Arc<std::sync::atomic::AtomicBool>,
}

impl Tail {
    fn push(&self, line: String) {
        if disk::says_full(&line) {
            self.disk_full
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
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
        std::mem::take(&mut *self.lines.lock().unwrap_or_else(|p| p.into_inner())).into()
    }

    fn disk_full(&self) -> bool {
        self.disk_full.load(std::sync::atomic::Ordering::Relaxed)
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
        assert!(!tail.disk_full());
    }

    #[test]
    fn a_full_disk_is_noticed_however_long_ago_the_suite_said_so() {
        let mut input = b"error: No space left on device (os error 28)\n".to_vec();
        for i in 0..(2 * TAIL_LINES) {
            input.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        let tail = Tail::default();
        copy(std::io::Cursor::new(input), Sink::default(), &tail)
            .join()
            .unwrap();
        assert!(
            !tail.take().iter().any(|line| line.contains("No space")),
            "long gone"
        );
        assert!(tail.disk_full());
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
    fn fuzz_status_lines_are_read() {
        let done =
            "#218253\tDONE   cov: 7771 ft: 36310 corp: 3634/512Kb lim: 323 exec/s: 3577 rss: 61Mb";
        assert_eq!(
            FuzzStats::parse(done),
            Some(FuzzStats {
                runs: Some(218253),
                cov: Some(7771),
                ft: Some(36310),
                corpus: Some(3634),
                exec_per_second: Some(3577),
            })
        );
        assert!(fuzz_line_is_shown(done));
        assert_eq!(FuzzStats::parse("stat::peak_rss_mb: 61"), None);
        assert_eq!(FuzzStats::parse("#1 Test"), None);
        assert!(fuzz_line_starts_failure(
            "thread '<unnamed>' (1) panicked at fuzz_targets/sse.rs:30:5:"
        ));
        assert!(fuzz_line_starts_failure(
            "==22277== ERROR: libFuzzer: deadly signal"
        ));
        assert!(!fuzz_line_starts_failure(done));
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
