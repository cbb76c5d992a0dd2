//! Benchmark (not a test): tether-sandbox beside its peers — just-bash (npm, the version
//! `package.json` pins) and rust-bash 0.3.0 (crates.io) — and real bash.
//!
//! Part 1, agreement: every line of the agent corpus (`tests/bash_compat/agents`) through bash
//! and through each engine on the same project; the share whose stdout and exit code are
//! identical to bash's, by kind, with each engine's defaults (bounded at 10 s a line).
//! Part 2, speed: pipelines over generated 100,000-line inputs (a web log, a CSV), each engine
//! and bash on the same files, the generous limits stated below for every engine; the median
//! [min–max] of the runs after one discarded warm-up, whether each engine's output is bash's,
//! and the ratios in this one run.
//!
//! How each is timed: tether-sandbox in this process (`run_shell` on a fresh `Sandbox`; building
//! it is not timed), just-bash in node (`exec` on a fresh `Bash`, `peers/just-bash.mjs`),
//! rust-bash in its own process (`exec` on a fresh shell, `peers/rust-bash/`, installed into
//! `target/tools/rust-bash` by `cargo xtask setup`), bash as a process (`bash -c`, spawn
//! included, ~1–2 ms) in a directory holding the files.
//!
//! Run: `cargo xtask bench-sandbox` (installs the peers, then
//! `cargo bench -p tether-sandbox --features native --bench peers -- [--part 1|2] [--runs N]`).

#[path = "common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use tether_sandbox::corpus::{self, BashRunner, Case, Corpus, LineResult, Outcome, Verdict};
use tether_sandbox::native::{block_on, load_dir};
use tether_sandbox::{Limits, Sandbox, Vfs};

const ENGINES: [&str; 3] = ["tether-sandbox", "just-bash", "rust-bash"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let part = value("--part");
    let runs: usize = value("--runs").and_then(|r| r.parse().ok()).unwrap_or(5);
    RUNS_WANTED.store(runs, std::sync::atomic::Ordering::Relaxed);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = root.parent().expect("the sandbox is in the workspace");
    let peers = Peers::find(workspace);

    println!("tether-sandbox beside its peers (release build)");
    println!("machine: {}", machine());
    println!("versions: {}", peers.versions());
    if part.as_deref() != Some("2") {
        agreement(root, &peers);
    }
    if part.as_deref() != Some("1") {
        speed(&peers, runs);
    }
    println!("\nload average at the end: {}", load_average());
}

/// How to run the two peers.
struct Peers {
    node: PathBuf,
    just_bash: PathBuf,
    rust_bash: PathBuf,
    workspace: PathBuf,
}

impl Peers {
    fn find(workspace: &Path) -> Peers {
        let peers = Peers {
            node: PathBuf::from("node"),
            just_bash: workspace.join("sandbox/benches/peers/just-bash.mjs"),
            rust_bash: workspace.join("target/tools/rust-bash/bin/rust-bash-runner"),
            workspace: workspace.to_path_buf(),
        };
        assert!(
            workspace.join("node_modules/just-bash").is_dir(),
            "just-bash is not installed: run `cargo xtask setup` (npm ci)"
        );
        assert!(
            peers.rust_bash.is_file(),
            "the rust-bash runner is not installed: run `cargo xtask setup`"
        );
        peers
    }

    fn versions(&self) -> String {
        let package: Value =
            std::fs::read_to_string(self.workspace.join("node_modules/just-bash/package.json"))
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default();
        let node = output_of(Command::new(&self.node).arg("--version"));
        let bash = output_of(Command::new("/bin/bash").arg("--version"));
        format!(
            "just-bash {} (node {}), rust-bash 0.3.0, {}",
            package["version"].as_str().unwrap_or("?"),
            node.trim(),
            bash.lines().next().unwrap_or("bash ?")
        )
    }

    /// Runs `request` through a peer; one outcome and its run times per case, by id.
    fn run(&self, engine: &str, request: &Value) -> BTreeMap<String, (Outcome, Vec<f64>)> {
        let mut command = match engine {
            "just-bash" => {
                let mut command = Command::new(&self.node);
                command.arg(&self.just_bash).current_dir(&self.workspace);
                command
            }
            _ => Command::new(&self.rust_bash),
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {engine}: {e}"));
        let body = request.to_string();
        let mut stdin = child.stdin.take().expect("piped");
        let writer = std::thread::spawn(move || stdin.write_all(body.as_bytes()));
        let output = child.wait_with_output().expect("the runner ends");
        writer
            .join()
            .expect("writer")
            .expect("the request is written");
        let mut results = BTreeMap::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let outcome = Outcome {
                stdout: value["stdout"].as_str().unwrap_or("").to_string(),
                stderr: value["stderr"].as_str().unwrap_or("").to_string(),
                exit_code: value["exit_code"].as_i64().unwrap_or(-1) as i32,
            };
            let times = value["times_ms"]
                .as_array()
                .map(|t| t.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            results.insert(
                value["id"].as_str().unwrap_or("").to_string(),
                (outcome, times),
            );
        }
        results
    }
}

/// Part 1: the corpus through bash and the three engines.
fn agreement(root: &Path, peers: &Peers) {
    let corpus = Corpus::load(&root.join("tests/bash_compat/agents")).expect("the corpus loads");
    println!(
        "\n## Part 1: agreement with bash on the agent corpus ({} lines)\n",
        corpus.cases.len()
    );
    println!(
        "Each engine with its default limits (10 s a line); identical = the same stdout and exit \
         code as bash (lines marked `order: unspecified` compared as sorted lines)."
    );
    let bash = BashRunner::new(&corpus.tree()).expect("scratch directory");
    let mut projects: BTreeMap<String, Vfs> = BTreeMap::new();
    for case in &corpus.cases {
        if !projects.contains_key(case.project()) {
            let vfs = load_dir(&corpus.tree().join(case.project())).expect("the project loads");
            projects.insert(case.project().to_string(), vfs);
        }
    }
    let references: Vec<Outcome> = corpus
        .cases
        .iter()
        .map(|case| bash.run(case).expect("bash runs"))
        .collect();
    let request = json!({
        "projects": projects
            .iter()
            .map(|(name, vfs)| (name.clone(), files_json(vfs)))
            .collect::<serde_json::Map<_, _>>(),
        "cases": corpus.cases.iter().map(case_json).collect::<Vec<_>>(),
        "runs": 1,
        "raised_limits": false,
    });
    let mut by_engine: BTreeMap<&str, Vec<LineResult>> = BTreeMap::new();
    for engine in ENGINES {
        let started = Instant::now();
        let outcomes: Vec<Outcome> = match engine {
            "tether-sandbox" => corpus
                .cases
                .iter()
                .map(|case| corpus::run_sandbox(&projects[case.project()], case))
                .collect(),
            peer => {
                let mut results = peers.run(peer, &request);
                corpus
                    .cases
                    .iter()
                    .map(|case| {
                        results.remove(&case.id).map(|(o, _)| o).unwrap_or(Outcome {
                            stdout: String::new(),
                            stderr: format!("{peer}: no result"),
                            exit_code: -1,
                        })
                    })
                    .collect()
            }
        };
        eprintln!(
            "{engine}: {} lines in {:.1} s",
            outcomes.len(),
            started.elapsed().as_secs_f64()
        );
        let results = corpus
            .cases
            .iter()
            .zip(&references)
            .zip(outcomes)
            .map(|((case, reference), engine_outcome)| LineResult {
                verdict: corpus::classify(case, reference, &engine_outcome),
                case: case.clone(),
                bash: reference.clone(),
                engine: engine_outcome,
            })
            .collect();
        by_engine.insert(engine, results);
    }
    print_agreement(&corpus.cases, &by_engine);
}

fn print_agreement(cases: &[Case], by_engine: &BTreeMap<&str, Vec<LineResult>>) {
    let mut kinds: Vec<&str> = cases.iter().map(|case| case.kind.as_str()).collect();
    kinds.dedup();
    println!("\n| kind | lines | tether-sandbox | just-bash | rust-bash |");
    println!("|---|---:|---:|---:|---:|");
    let identical = |engine: &str, kind: Option<&str>| {
        let results = &by_engine[engine];
        let of_kind = results
            .iter()
            .filter(|r| kind.is_none_or(|k| r.case.kind == k));
        let total = of_kind.clone().count();
        let same = of_kind.filter(|r| r.verdict == Verdict::Identical).count();
        (same, total)
    };
    for kind in kinds.iter().copied().map(Some).chain([None]) {
        let (_, total) = identical("tether-sandbox", kind);
        let cells: Vec<String> = ENGINES
            .iter()
            .map(|engine| {
                let (same, total) = identical(engine, kind);
                format!("{same} ({})", corpus::percent(same, total))
            })
            .collect();
        println!(
            "| {} | {total} | {} |",
            kind.unwrap_or("**all**"),
            cells.join(" | ")
        );
    }
    println!(
        "\nBy source (a peer's own test suite is among the sources, and it passes its own \
         tests best):\n"
    );
    println!("| source | lines | tether-sandbox | just-bash | rust-bash |");
    println!("|---|---:|---:|---:|---:|");
    let mut sources: Vec<&str> = cases
        .iter()
        .map(|case| source_group(&case.source))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    for source in sources {
        let of_source = |engine: &str| {
            let results: Vec<&LineResult> = by_engine[engine]
                .iter()
                .filter(|r| source_group(&r.case.source) == source)
                .collect();
            let same = results
                .iter()
                .filter(|r| r.verdict == Verdict::Identical)
                .count();
            (same, results.len())
        };
        let (_, total) = of_source("tether-sandbox");
        let cells: Vec<String> = ENGINES
            .iter()
            .map(|engine| {
                let (same, total) = of_source(engine);
                format!("{same} ({})", corpus::percent(same, total))
            })
            .collect();
        println!("| {source} | {total} | {} |", cells.join(" | "));
    }
    println!("\nThe lines that are not identical, by what the engine did instead:\n");
    println!(
        "| engine | identical | refused (tether's form) | failed where bash succeeded | other different answer |"
    );
    println!("|---|---:|---:|---:|---:|");
    for engine in ENGINES {
        let results = &by_engine[engine];
        let count = |f: &dyn Fn(&LineResult) -> bool| results.iter().filter(|r| f(r)).count();
        let identical = count(&|r| r.verdict == Verdict::Identical);
        let refused = count(&|r| r.verdict == Verdict::ClearError);
        let failed = count(&|r| {
            r.verdict == Verdict::Wrong && r.bash.exit_code == 0 && r.engine.exit_code != 0
        });
        let other = results.len() - identical - refused - failed;
        println!("| {engine} | {identical} | {refused} | {failed} | {other} |");
    }
}

/// The source a corpus line was taken from, as the corpus README's table groups them.
fn source_group(source: &str) -> &'static str {
    if source.contains("agent-examples") {
        "just-bash's agent scenario tests"
    } else if source.contains("comparison-tests") {
        "just-bash's bash-recorded fixtures"
    } else if source.starts_with("rust-bash") {
        "rust-bash's fixtures"
    } else if source.starts_with("openai/codex") {
        "Codex's parse_command tests"
    } else if source.contains("mini-swe-agent") {
        "mini-swe-agent's prompt and trajectory"
    } else {
        "other"
    }
}

fn case_json(case: &Case) -> Value {
    json!({
        "id": case.id,
        "project": case.project(),
        "cwd": case.cwd(),
        "script": case.script,
    })
}

fn files_json(vfs: &Vfs) -> Value {
    Value::Object(
        vfs.files()
            .map(|(path, data)| {
                (
                    path.to_string(),
                    Value::String(String::from_utf8_lossy(data).into_owned()),
                )
            })
            .collect(),
    )
}

/// The heavy pipelines: what agents run over large logs and tables.
const PIPELINES: [(&str, &str); 8] = [
    (
        "grep | sort | uniq -c",
        "grep ' 500 ' access.log | cut -d' ' -f7 | sort | uniq -c | sort -rn | head -5",
    ),
    ("grep -c", "grep -c 'POST /api' access.log"),
    (
        "awk sum",
        "awk -F, 'NR > 1 { total += $4; n++ } END { printf \"%d %.2f\\n\", n, total / n }' orders.csv",
    ),
    (
        "awk group-by (arrays)",
        "awk -F, 'NR > 1 { sum[$3] += $4 } END { for (r in sum) printf \"%s %.2f\\n\", r, sum[r] }' orders.csv | sort",
    ),
    (
        "sed substitute",
        "sed -E 's/([0-9]+)ms$/\\1 ms/; s/HTTP\\/1\\.1/HTTP\\/2/' access.log | tail -n 3",
    ),
    ("cut | sort -u", "cut -d, -f3 orders.csv | sort -u"),
    ("sort -t, -k4 -n", "sort -t, -k4 -n orders.csv | tail -n 3"),
    (
        "while read",
        "n=0; while read -r line; do n=$((n + 1)); done < access.log; echo \"$n lines\"",
    ),
];

const INPUT_LINES: usize = 100_000;

/// Past this much time on one pipeline, an engine stops after the run in progress (at least
/// the warm-up and one timed run): just-bash takes minutes on some.
const BUDGET_MS: f64 = 60_000.0;

/// A web log and a CSV of orders, [`INPUT_LINES`] lines each, the same on every run.
fn inputs() -> Vec<(&'static str, String)> {
    const ROUTES: [&str; 8] = [
        "/api/users",
        "/api/orders",
        "/api/login",
        "/api/search",
        "/static/app.js",
        "/api/orders/export",
        "/health",
        "/api/cart",
    ];
    const STATUS: [u32; 8] = [200, 200, 200, 200, 404, 500, 301, 200];
    const REGIONS: [&str; 6] = [
        "eu-west", "eu-north", "us-east", "us-west", "ap-south", "sa-east",
    ];
    let mut log = String::new();
    let mut csv = String::from("id,user,region,amount,status\n");
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        // SplitMix64: a fixed stream, so every run and every engine reads the same inputs.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in 0..INPUT_LINES {
        let r = next();
        let method = if r % 5 == 0 { "POST" } else { "GET" };
        let route = ROUTES[(r >> 8) as usize % ROUTES.len()];
        let status = STATUS[(r >> 16) as usize % STATUS.len()];
        log.push_str(&format!(
            "10.0.{}.{} - - [03/Dec/2026:{:02}:{:02}:{:02}] \"{method} {route} HTTP/1.1\" {status} {} {}ms\n",
            (r >> 24) % 16,
            (r >> 28) % 250,
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60,
            (r >> 32) % 50_000,
            (r >> 48) % 900 + 3,
        ));
        let r = next();
        csv.push_str(&format!(
            "{i},user{},{},{}.{:02},{}\n",
            r % 5_000,
            REGIONS[(r >> 16) as usize % REGIONS.len()],
            (r >> 24) % 1_000,
            (r >> 40) % 100,
            if r % 7 == 0 { "refunded" } else { "paid" },
        ));
    }
    vec![("access.log", log), ("orders.csv", csv)]
}

/// Part 2: the heavy pipelines, timed.
fn speed(peers: &Peers, runs: usize) {
    let files = inputs();
    let bytes: usize = files.iter().map(|(_, text)| text.len()).sum();
    println!(
        "\n## Part 2: heavy pipelines over {INPUT_LINES}-line inputs ({:.1} MB)\n",
        bytes as f64 / 1e6
    );
    println!(
        "Median [min–max] of {runs} runs after a discarded warm-up (n = fewer runs where one \
         pipeline took an engine over {:.0} s), ms. Limits raised for every engine so the work \
         can finish: 10 M commands and loop iterations, 512 MiB of output, 120 s. ✓ = stdout and \
         exit code are bash's; ✗ = a different answer (why, under the table); refused = the \
         engine said it cannot. Ratios only between answers that are bash's.",
        BUDGET_MS / 1000.0
    );
    let dir = std::env::temp_dir().join(format!("tether-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).expect("write the inputs");
    }
    let paths: Vec<String> = files.iter().map(|(name, _)| format!("/{name}")).collect();
    let vfs = Vfs::from_files(
        paths
            .iter()
            .zip(&files)
            .map(|(path, (_, text))| (path.as_str(), text.as_bytes())),
    );
    let limits = Limits {
        max_stream_bytes: 512 * 1024 * 1024,
        max_commands: 10_000_000,
        max_loop_iterations: 10_000_000,
        max_fs_bytes: 1024 * 1024 * 1024,
        max_pipe_bytes: 512 * 1024 * 1024,
        wall_clock_ms: 120_000,
        ..Limits::default()
    };
    let request = json!({
        "projects": { "inputs": files_json(&vfs) },
        "cases": PIPELINES.iter().map(|(name, script)| json!({
            "id": name, "project": "inputs", "cwd": "/", "script": script,
        })).collect::<Vec<_>>(),
        "runs": runs + 1,
        "raised_limits": true,
        "budget_ms": BUDGET_MS,
    });
    let just_bash = peers.run("just-bash", &request);
    let rust_bash = peers.run("rust-bash", &request);
    println!(
        "\n| pipeline | bash | tether-sandbox | just-bash | rust-bash | tether ÷ bash | just-bash ÷ tether | rust-bash ÷ tether |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut notes = Vec::new();
    for (name, script) in PIPELINES {
        let mut reference = None;
        let bash_times: Vec<f64> = (0..=runs)
            .map(|_| {
                let started = Instant::now();
                let output = Command::new("/bin/bash")
                    .arg("-c")
                    .arg(script)
                    .current_dir(&dir)
                    .env_clear()
                    .env("PATH", "/usr/bin:/bin")
                    .env("LC_ALL", "C")
                    .output()
                    .expect("bash runs");
                let elapsed = started.elapsed().as_secs_f64() * 1000.0;
                reference = Some(Outcome {
                    stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                    stderr: String::new(),
                    exit_code: output.status.code().unwrap_or(-1),
                });
                elapsed
            })
            .skip(1)
            .collect();
        let reference = reference.expect("bash ran");
        let mut tether_outcome = None;
        let tether_times: Vec<f64> = (0..=runs)
            .map(|_| {
                let mut sandbox = Sandbox::new(vfs.clone()).with_limits(limits.clone());
                let started = Instant::now();
                let output = block_on(sandbox.run_shell(script));
                let elapsed = started.elapsed().as_secs_f64() * 1000.0;
                tether_outcome = Some(Outcome {
                    stdout: output.stdout,
                    stderr: output.stderr,
                    exit_code: output.exit_code,
                });
                elapsed
            })
            .skip(1)
            .collect();
        let tether = (tether_outcome.expect("ran"), tether_times);
        let peer = |results: &BTreeMap<String, (Outcome, Vec<f64>)>| {
            results
                .get(name)
                .cloned()
                .map(|(outcome, times)| (outcome, times.into_iter().skip(1).collect::<Vec<f64>>()))
        };
        let judged: Vec<Option<Timed>> = [Some(tether), peer(&just_bash), peer(&rust_bash)]
            .into_iter()
            .map(|result| result.map(|(outcome, times)| Timed::judge(outcome, times, &reference)))
            .collect();
        let bash_median = median(&bash_times);
        let ratio = |a: &Option<Timed>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if a.mark == "✓" && b > 0.0 => format!("{:.2}×", a.median / b),
            _ => "—".to_string(),
        };
        let tether_median = judged[0]
            .as_ref()
            .filter(|t| t.mark == "✓")
            .map(|t| t.median);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            name.replace('|', "\\|"),
            summary(&bash_times),
            cell(&judged[0]),
            cell(&judged[1]),
            cell(&judged[2]),
            ratio(&judged[0], Some(bash_median)),
            ratio(&judged[1], tether_median),
            ratio(&judged[2], tether_median),
        );
        for (engine, timed) in ENGINES.iter().zip(&judged) {
            if let Some(timed) = timed
                && timed.mark == "✗"
            {
                notes.push(format!(
                    "- {name}, {engine}: exit {} (bash {}), {} bytes of stdout (bash {}){}",
                    timed.outcome.exit_code,
                    reference.exit_code,
                    timed.outcome.stdout.len(),
                    reference.stdout.len(),
                    timed
                        .outcome
                        .stderr
                        .lines()
                        .next()
                        .map(|line| format!(": `{line}`"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    if !notes.is_empty() {
        println!("\nDifferent answers:\n\n{}", notes.join("\n"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One engine's runs of a pipeline, judged against bash's answer.
struct Timed {
    outcome: Outcome,
    times: Vec<f64>,
    median: f64,
    mark: &'static str,
}

impl Timed {
    fn judge(outcome: Outcome, times: Vec<f64>, reference: &Outcome) -> Timed {
        let mark = if outcome.stdout == reference.stdout && outcome.exit_code == reference.exit_code
        {
            "✓"
        } else if corpus::is_refusal(&outcome.stderr) && outcome.exit_code != 0 {
            "refused"
        } else {
            "✗"
        };
        Timed {
            median: median(&times),
            outcome,
            times,
            mark,
        }
    }
}

fn cell(timed: &Option<Timed>) -> String {
    match timed {
        Some(timed) if timed.mark == "refused" => "refused".to_string(),
        Some(timed) => format!("{} {}", summary(&timed.times), timed.mark),
        None => "no result".to_string(),
    }
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

fn summary(samples: &[f64]) -> String {
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(0.0, f64::max);
    let count = if samples.len() < RUNS_WANTED.load(std::sync::atomic::Ordering::Relaxed) {
        format!(" n={}", samples.len())
    } else {
        String::new()
    };
    format!("{} [{}–{}]{count}", ms(median(samples)), ms(min), ms(max))
}

/// The timed runs asked for (`--runs`), to mark the cells that have fewer.
static RUNS_WANTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn ms(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn output_of(command: &mut Command) -> String {
    command
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn machine() -> String {
    format!("{}, load average {}", common::machine(), load_average())
}

/// The 1, 5 and 15-minute load averages (the machine is shared: printed at the start and end).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
