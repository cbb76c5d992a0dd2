//! The agent-rollout benchmark: what a persistent connection saves per turn.
//!
//! One process starts one server (SQLite store in a temporary directory) and plays the same
//! 40-turn agent rollout — every request carrying ~3,000 tokens of instructions (as a coding
//! agent's do), each turn one tool call and a ~3,000-token tool output, so the context grows by
//! ~3,000 tokens a turn to ~125,000 tokens — over three modes:
//!
//! 1. HTTP stateless: `store:false`, the full input every turn (what Codex does over HTTP);
//! 2. HTTP chained: `store:true` with `previous_response_id`;
//! 3. WebSocket: `store:false` with `previous_response_id`.
//!
//! Part 1 runs the `instant` model (no model time), so a turn's round trip is the server's
//! overhead: transport, decoding, the pipeline (render, validate, classify, persist, bill) and the
//! simulator's bookkeeping. Medians over 5 repetitions. Part 2 runs the model at 1,000 tokens/s
//! with 300 output tokens a turn and 100 ms of client-side tool time, end to end.
//!
//! Run: `cargo xtask bench` (or `cargo bench -p tether-server --bench rollout`).

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tether_server::{AppState, Config, app};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

const TURNS: usize = 40;
const REPETITIONS: usize = 5;
const OUTPUT_TOKENS_PER_TURN: usize = 3_000;
const REPORTED_TURNS: [usize; 4] = [1, 10, 20, 40];

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    HttpStateless,
    HttpChained,
    WebSocket,
    /// HTTP stateless against a server with the process-wide token cache
    /// (`--token-cache-tokens`): what caching buys without a persistent connection.
    HttpStatelessTokenCache,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::HttpStateless => "HTTP stateless",
            Mode::HttpChained => "HTTP chained",
            Mode::WebSocket => "WebSocket",
            Mode::HttpStatelessTokenCache => "HTTP stateless+TC",
        }
    }
}

const MODES: [Mode; 3] = [Mode::HttpStateless, Mode::HttpChained, Mode::WebSocket];
/// Part 1 also measures HTTP stateless with the token cache.
const PART1_MODES: [Mode; 4] = [
    Mode::HttpStateless,
    Mode::HttpChained,
    Mode::WebSocket,
    Mode::HttpStatelessTokenCache,
];

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let dir = std::env::temp_dir().join(format!("tether-bench-{}", std::process::id()));
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::write(scenarios.join("bench-loop.json"), bench_scenario()).unwrap();
    let config = Config::try_parse_from_args(&dir, &scenarios);
    let (addr, server) = start(&config).await;
    // The same, with the HTTP path's token cache, in its own store.
    let mut cached_config = Config::try_parse_from_args(&dir.join("token-cache"), &scenarios);
    cached_config.token_cache_tokens = 4_000_000;
    let (cached_addr, cached_server) = start(&cached_config).await;

    println!("Tether agent-rollout benchmark");
    println!("machine: {} cores, {}", cores(), cpu_model());
    println!(
        "method: one process, one server on 127.0.0.1 (SQLite store on disk); {TURNS} turns, each one \
         tool call and a {OUTPUT_TOKENS_PER_TURN}-token tool output, every request with ~{INSTRUCTION_TOKENS} tokens \
         of instructions (a base prompt and an agent guide); per-turn round trip measured by the \
         client from before encoding the request to the decoded terminal event"
    );
    let outputs: Vec<String> = (0..TURNS).map(tool_output).collect();

    println!(
        "\nPart 1 — server overhead per turn (model `instant`: no model time), median of {REPETITIONS} runs, ms"
    );
    let mut medians = Vec::new();
    let mut warmed = false;
    for mode in PART1_MODES {
        let addr = if mode == Mode::HttpStatelessTokenCache {
            cached_addr
        } else {
            addr
        };
        if !warmed {
            rollout(addr, mode, "instant", &outputs, None).await; // warm the tokenizer and caches
            warmed = true;
        }
        // With the token cache, each turn re-sends the conversation and finds every block the
        // rollout's earlier turns rendered (call ids make each rollout's blocks its own).
        let mut runs = Vec::new();
        for _ in 0..REPETITIONS {
            runs.push(rollout(addr, mode, "instant", &outputs, None).await);
        }
        let per_turn: Vec<Duration> = (0..TURNS)
            .map(|t| median(runs.iter().map(|r| r.turns[t]).collect()))
            .collect();
        let context = (runs[0].input_tokens[0], runs[0].input_tokens[TURNS - 1]);
        medians.push((mode, per_turn, context, runs));
    }
    print!("{:<16}", "turn");
    for turn in REPORTED_TURNS {
        print!("{:>10}", turn);
    }
    println!("{:>12}{:>13}{:>13}", "total", "context@1", "context@40");
    for (mode, per_turn, context, _) in &medians {
        print!("{:<16}", mode.name());
        for turn in REPORTED_TURNS {
            print!("{:>10.2}", ms(per_turn[turn - 1]));
        }
        let total: Duration = per_turn.iter().sum();
        println!("{:>12.1}{:>13}{:>13}", ms(total), context.0, context.1);
    }
    let ws = &medians[2].1;
    println!(
        "ratios at turn 40 (x WebSocket): HTTP stateless {:.1}x, HTTP chained {:.1}x",
        ratio(medians[0].1[TURNS - 1], ws[TURNS - 1]),
        ratio(medians[1].1[TURNS - 1], ws[TURNS - 1])
    );
    println!(
        "with the token cache, HTTP stateless at turn 40 is {:.1}x WebSocket (caching alone) and \
         {:.1}x faster than without it",
        ratio(medians[3].1[TURNS - 1], ws[TURNS - 1]),
        ratio(medians[0].1[TURNS - 1], medians[3].1[TURNS - 1])
    );
    let total = |per_turn: &Vec<Duration>| per_turn.iter().sum::<Duration>();
    println!(
        "ratios of totals (x WebSocket): HTTP stateless {:.1}x, HTTP chained {:.1}x",
        ratio(total(&medians[0].1), total(ws)),
        ratio(total(&medians[1].1), total(ws))
    );
    println!(
        "WebSocket turn 40 / turn 1: {:.2}; turn 40 / turn 2 (the first continuation, which adds \
         the first tool output): {:.2}; turns 2-40 min {:.2} ms, max {:.2} ms",
        ratio(ws[TURNS - 1], ws[0]),
        ratio(ws[TURNS - 1], ws[1]),
        ms(*ws[1..].iter().min().unwrap()),
        ms(*ws[1..].iter().max().unwrap()),
    );
    println!(
        "\nWhere a turn's time goes at turns 1 and 40 (server stage timings, median of {REPETITIONS} runs, \
         ms; `outside` = client round trip − stages: transport, framing, JSON, scheduling)"
    );
    print!("{:<22}", "mode / turn");
    for stage in STAGE_NAMES {
        print!("{stage:>10}");
    }
    println!("{:>10}{:>10}", "outside", "total");
    for (mode, per_turn, _, runs) in &medians {
        for turn in [1, TURNS] {
            print!("{:<22}", format!("{} {turn}", mode.name()));
            let mut inside = 0.0;
            for stage in STAGE_NAMES {
                let us = median_f64(
                    runs.iter()
                        .map(|r| {
                            r.stages[turn - 1]["stages"][format!("{stage}_us")]
                                .as_f64()
                                .unwrap_or(0.0)
                        })
                        .collect(),
                );
                inside += us / 1000.0;
                print!("{:>10.3}", us / 1000.0);
            }
            let total = ms(per_turn[turn - 1]);
            println!("{:>10.3}{:>10.3}", total - inside, total);
        }
    }

    println!(
        "\nPart 2 — end to end at 1,000 tokens/s, 300 output tokens a turn, 100 ms of tool time a turn"
    );
    let mut totals = Vec::new();
    for mode in MODES {
        let started = Instant::now();
        rollout(
            addr,
            mode,
            "tether-sim",
            &outputs,
            Some(Duration::from_millis(100)),
        )
        .await;
        let elapsed = started.elapsed();
        println!("{:<16}{:>10.2} s", mode.name(), elapsed.as_secs_f64());
        totals.push(elapsed);
    }
    println!(
        "WebSocket is {:.1}% faster than HTTP stateless and {:.1}% faster than HTTP chained end to end",
        (1.0 - totals[2].as_secs_f64() / totals[0].as_secs_f64()) * 100.0,
        (1.0 - totals[2].as_secs_f64() / totals[1].as_secs_f64()) * 100.0,
    );
    server.abort();
    cached_server.abort();
    let _ = std::fs::remove_dir_all(dir);
}

/// Starts a server for `config` on 127.0.0.1 port 0.
async fn start(config: &Config) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    std::fs::create_dir_all(&config.data_dir).unwrap();
    let state = AppState::new(config).unwrap();
    let router = app(state, std::path::Path::new("does-not-exist"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // As `tether_server::serve` does: no Nagle delay on small event frames.
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (addr, server)
}

trait BenchConfig {
    fn try_parse_from_args(dir: &std::path::Path, scenarios: &std::path::Path) -> Config;
}

impl BenchConfig for Config {
    fn try_parse_from_args(dir: &std::path::Path, scenarios: &std::path::Path) -> Config {
        use clap::Parser;
        Config::try_parse_from([
            "tether-server".as_ref(),
            "--data-dir".as_ref(),
            dir.as_os_str(),
            "--scenario-dir".as_ref(),
            scenarios.as_os_str(),
            "--tokens-per-second".as_ref(),
            "1000".as_ref(),
            "--seed".as_ref(),
            "1".as_ref(),
        ] as [&std::ffi::OsStr; 9])
        .unwrap()
    }
}

/// A scenario for part 2: every turn ~300 tokens of text, then one `shell` call.
fn bench_scenario() -> String {
    let sentence = "The failing test points at the pagination helper, so the next step reads its callers and checks the boundary. ";
    let message = sentence.repeat(14);
    json!({
        "name": "bench-loop",
        "description": "Benchmark: text then one shell call, every turn.",
        "steps": [{"id": "loop", "message": message,
                   "calls": [{"tool": "shell", "arguments": {"command": ["bash", "-lc", "cat build.log"]}}],
                   "goto": "loop"}]
    })
    .to_string()
}

/// A distinct tool output of about `OUTPUT_TOKENS_PER_TURN` tokens.
fn tool_output(turn: usize) -> String {
    let tokenizer = tether_server::tokenizer::tokenizer();
    let mut text = String::new();
    let mut line = 0;
    while tokenizer.count(text.as_str()) < OUTPUT_TOKENS_PER_TURN {
        for _ in 0..20 {
            text.push_str(&format!(
                "src/module_{turn}/handler_{line}.rs:{}: warning: unused variable `request_{line}` in fn handle_{turn}_{line}(ctx: &Context) -> Result<(), Error>\n",
                line * 7 + 3
            ));
            line += 1;
        }
    }
    text
}

fn tools() -> Value {
    json!([{"type": "function", "name": "shell", "description": "Runs a shell command.",
        "parameters": {"type": "object", "required": ["command"],
            "properties": {"command": {"type": "array", "items": {"type": "string"}},
                           "workdir": {"type": "string"}, "timeout_ms": {"type": "integer"}}}}])
}

/// How many tokens of instructions every request carries.
const INSTRUCTION_TOKENS: usize = 3_000;

/// The instructions every request carries, as a coding agent sends them: a base prompt and the
/// repository's agent guide, ~`INSTRUCTION_TOKENS` tokens (Codex's own base instructions alone are
/// longer). The guide here is `sandbox/README.md`, cut at a line once the budget is reached. So
/// turn 1 renders a realistic first prompt rather than one sentence, and every turn's context
/// grows by ~3,000 tokens from the first.
fn instructions() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(build_instructions)
}

fn build_instructions() -> String {
    let tokenizer = tether_server::tokenizer::tokenizer();
    let mut text = String::from(
        "You are a coding agent working in a repository. Use the shell tool to inspect files and \
         run tests. Keep changes minimal and explain them.\n\n# Project guide (AGENTS.md)\n\n",
    );
    for line in include_str!("../../sandbox/README.md").lines() {
        if tokenizer.count(text.as_str()) >= INSTRUCTION_TOKENS {
            break;
        }
        text.push_str(line);
        text.push('\n');
    }
    assert!(
        tokenizer.count(text.as_str()) >= INSTRUCTION_TOKENS * 9 / 10,
        "sandbox/README.md is too short for the benchmark's instructions"
    );
    text
}

struct Rollout {
    turns: Vec<Duration>,
    input_tokens: Vec<u64>,
    /// The server's stage timings of each turn (`x-tether-timing: 1`).
    stages: Vec<Value>,
}

/// Plays the rollout in `mode`; with `tool_time`, sleeps that long per turn as the tool.
async fn rollout(
    addr: std::net::SocketAddr,
    mode: Mode,
    model: &str,
    outputs: &[String],
    tool_time: Option<Duration>,
) -> Rollout {
    let mut http = HttpClient::connect(addr).await;
    let mut ws = if mode == Mode::WebSocket {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut url = format!("ws://{addr}/v1/responses")
            .into_client_request()
            .unwrap();
        url.headers_mut()
            .insert("x-tether-timing", "1".parse().unwrap());
        let (socket, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
            .await
            .unwrap();
        Some(socket)
    } else {
        None
    };
    let mut metadata = json!({});
    if model == "tether-sim" {
        metadata = json!({"scenario": "bench-loop"});
    }
    let mut conversation: Vec<Value> =
        vec![json!({"role": "user", "content": "The tests fail. Find out why and fix it."})];
    let mut new_input: Vec<Value> = conversation.clone();
    let mut previous: Option<String> = None;
    let instructions = instructions();
    let mut result = Rollout {
        turns: Vec::new(),
        input_tokens: Vec::new(),
        stages: Vec::new(),
    };
    for (turn, tool_text) in outputs.iter().enumerate().take(TURNS) {
        let started = Instant::now();
        let mut body = json!({"model": model, "instructions": instructions, "tools": tools(), "metadata": metadata});
        match mode {
            Mode::HttpStateless | Mode::HttpStatelessTokenCache => {
                body["store"] = json!(false);
                body["input"] = json!(conversation);
            }
            Mode::HttpChained => {
                body["store"] = json!(true);
                body["input"] = json!(new_input);
                body["previous_response_id"] = json!(previous);
            }
            Mode::WebSocket => {
                body["store"] = json!(false);
                body["input"] = json!(new_input);
                body["previous_response_id"] = json!(previous);
            }
        }
        let response = match ws.as_mut() {
            Some(socket) => {
                body["type"] = json!("response.create");
                socket
                    .send(Message::Text(body.to_string().into()))
                    .await
                    .unwrap();
                loop {
                    let Message::Text(text) = socket.next().await.unwrap().unwrap() else {
                        continue;
                    };
                    let event: Value = serde_json::from_str(&text).unwrap();
                    match event["type"].as_str() {
                        Some("response.completed") => {
                            result.stages.push(event["tether_timing"].clone());
                            break event["response"].clone();
                        }
                        Some("error" | "response.failed") => panic!("turn {turn}: {event}"),
                        _ => {}
                    }
                }
            }
            None => {
                let (response, timing) = http.post("/v1/responses", &body.to_string()).await;
                result.stages.push(timing);
                response
            }
        };
        result.turns.push(started.elapsed());
        assert_eq!(response["status"], "completed", "turn {turn}: {response}");
        result
            .input_tokens
            .push(response["usage"]["input_tokens"].as_u64().unwrap());
        let output = response["output"].as_array().unwrap().clone();
        let call = output
            .iter()
            .find(|item| item["type"] == "function_call")
            .unwrap_or_else(|| panic!("turn {turn}: no tool call in {response}"));
        if let Some(tool_time) = tool_time {
            tokio::time::sleep(tool_time).await;
        }
        let tool_result = json!({"type": "function_call_output", "call_id": call["call_id"], "output": tool_text});
        // The echo-tools generator calls a tool while the conversation does not end with a tool
        // output; a short nudge keeps the agent going without a script.
        let nudge = json!({"role": "user", "content": "Continue."});
        conversation.extend(output.iter().cloned());
        new_input = if model == "tether-sim" {
            vec![tool_result]
        } else {
            vec![tool_result, nudge]
        };
        conversation.extend(new_input.iter().cloned());
        previous = Some(response["id"].as_str().unwrap().to_string());
    }
    result
}

/// A minimal HTTP/1.1 keep-alive client: JSON in, JSON out.
struct HttpClient {
    stream: BufReader<TcpStream>,
}

impl HttpClient {
    async fn connect(addr: std::net::SocketAddr) -> Self {
        HttpClient {
            stream: BufReader::new({
                let stream = TcpStream::connect(addr).await.unwrap();
                stream.set_nodelay(true).unwrap();
                stream
            }),
        }
    }

    /// The response body and the server's `x-tether-timing` summary.
    async fn post(&mut self, path: &str, body: &str) -> (Value, Value) {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nx-tether-timing: 1\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let mut message = request.into_bytes();
        message.extend_from_slice(body.as_bytes());
        self.stream.get_mut().write_all(&message).await.unwrap();
        let mut length = 0usize;
        let mut timing = Value::Null;
        let mut status = String::new();
        self.stream.read_line(&mut status).await.unwrap();
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).await.unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                } else if name.eq_ignore_ascii_case("x-tether-timing") {
                    timing = serde_json::from_str(value.trim()).unwrap();
                }
            }
        }
        let mut payload = vec![0; length];
        self.stream.read_exact(&mut payload).await.unwrap();
        let value: Value = serde_json::from_slice(&payload).unwrap();
        assert!(status.contains(" 200 "), "{status} {value}");
        (value, timing)
    }
}

/// The pipeline stages the server reports, in order.
const STAGE_NAMES: [&str; 8] = [
    "load", "resolve", "render", "validate", "classify", "generate", "persist", "bill",
];

fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}
