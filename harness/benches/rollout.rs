//! The agent-rollout benchmark: what a persistent connection saves per turn.
//!
//! One process starts one server (SQLite store in a temporary directory) and plays the same
//! 40-turn agent rollout — every request carrying ~3,000 tokens of instructions (as a coding
//! agent's do), each turn one tool call and a ~3,000-token tool output, so the context grows by
//! ~3,000 tokens a turn to ~125,000 tokens — over four designs:
//!
//! 1. HTTP stateless: `store:false`, the full input every turn (what Codex does over HTTP);
//! 2. HTTP chained: `store:true` with `previous_response_id`;
//! 3. WebSocket: `store:false` with `previous_response_id`;
//! 4. WS append (v1): one long-running response for the whole rollout — the upgrade asks for
//!    `OpenAI-Beta: responses_websockets=2026-02-04`, the response pauses with `response.done`
//!    at each tool call and `response.append` resumes it with the tool output; it is stored and
//!    billed once, when a `response.create` with `generate:false` closes it (timed on its own).
//!
//! Part 1 runs the `instant` model (no model time), so a turn's round trip is the server's
//! overhead: transport, decoding, the pipeline (render, validate, classify, persist, bill) and the
//! simulator's bookkeeping. Medians over 5 repetitions.
//!
//! Part 2 runs `spark` (1,000 tokens/s, prefill charged for the tokens the engine's prompt cache
//! does not hold — the same cache for every transport) with ~300 output tokens and 100 ms of
//! client-side tool time a turn, end to end, and splits each rollout's time into the API's own
//! time, the engine's, the tools' and the network's: (a) on loopback, (b) through the link
//! emulator at 40 ms RTT, 20 Mbit/s up and 100 Mbit/s down, (c) with the `hosted` API costs.
//!
//! Part 3 runs the long task the playground offers, `triage-ci-log` (41 turns, 40 shell calls
//! over `tether_sandbox::long_task_project()`, each output ~3,000 tokens, the context past 100k),
//! exactly as the playground's Compare runs it — WebSocket against HTTP stateless, the same
//! requests the page sends, a discarded warm-up of both legs on `instant` with local costs,
//! then the legs in the order A B B A …, every tool call run by tether-sandbox natively, the link
//! and the API costs chosen per connection and emulated by the server (`tether_rtt_ms`, …) — so
//! the page's result and the bench's can be held against each other for the same conditions.
//! By default it runs `spark` over 40 ms / 20 Mbit/s up / 100 Mbit/s down with local costs.
//!
//! Every request goes through `tether-client`: Part 1 posts with its `Http`, Parts 2 and 3 play
//! turns with the load generator's (`tether_harness::load::turn`), and Part 3's conditions ride
//! on every URL with `Endpoint::with_query`, as the page's do.
//!
//! Part 4 puts Tether in front of an upstream engine, llmsim, and measures what it adds to the
//! time to first token and to each turn over calling the engine directly ([`engine`]).
//!
//! Run: `cargo xtask bench` (or `cargo bench -p tether-harness --bench rollout`);
//! `TETHER_BENCH_PARTS=1` runs Part 1 alone, `TETHER_BENCH_PARTS=4` Part 4 alone. Only part 3,
//! for chosen conditions: `cargo xtask bench -- --task triage-ci-log --profile spark --rtt-ms 40
//! --up-mbit 20 --down-mbit 100 --api-costs hosted --repetitions 5`.

#[path = "rollout/engine.rs"]
mod engine;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_client::{APPEND_BETA, Endpoint, Finished, Http, WebSocket};
use tether_harness::load::turn::{http_body_turn, ws_frame_turn};
use tether_link::LinkConfig;
use tether_server::{AppState, Config, app};

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
    /// One v1 response for the rollout, resumed with `response.append` at every tool call.
    WsAppend,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::HttpStateless => "HTTP stateless",
            Mode::HttpChained => "HTTP chained",
            Mode::WebSocket => "WebSocket",
            Mode::HttpStatelessTokenCache => "HTTP stateless+TC",
            Mode::WsAppend => "WS append (v1)",
        }
    }
}

const MODES: [Mode; 4] = [
    Mode::HttpStateless,
    Mode::HttpChained,
    Mode::WebSocket,
    Mode::WsAppend,
];
/// Part 1 also measures HTTP stateless with the token cache.
const PART1_MODES: [Mode; 5] = [
    Mode::HttpStateless,
    Mode::HttpChained,
    Mode::WebSocket,
    Mode::WsAppend,
    Mode::HttpStatelessTokenCache,
];

/// What to run: everything, or (`--task`) only part 3 under the conditions given.
#[derive(Debug, clap::Parser)]
struct BenchArgs {
    /// Run only part 3, this task (a scenario the server ships): `triage-ci-log`.
    #[arg(long)]
    task: Option<String>,
    /// The model profile part 3 runs (`flagship`, `spark`, `burst`, `instant`, `tether-sim`).
    #[arg(long, default_value = "spark")]
    profile: String,
    /// Part 3's emulated round-trip time, in ms.
    #[arg(long, default_value_t = 40.0)]
    rtt_ms: f64,
    /// Part 3's client → server bandwidth, Mbit/s (0: unlimited).
    #[arg(long, default_value_t = 20.0)]
    up_mbit: f64,
    /// Part 3's server → client bandwidth, Mbit/s (0: unlimited).
    #[arg(long, default_value_t = 100.0)]
    down_mbit: f64,
    /// Part 3's API costs: `local` or `hosted`.
    #[arg(long, default_value = "local")]
    api_costs: String,
    /// Part 3's repetitions of each leg (after the warm-up).
    #[arg(long, default_value_t = 3)]
    repetitions: usize,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    use clap::Parser;
    let args = BenchArgs::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(args));
}

async fn run(args: BenchArgs) {
    if args.task.is_some() {
        let dir = std::env::temp_dir().join(format!("tether-bench-{}", std::process::id()));
        println!("Tether agent-rollout benchmark");
        println!("machine: {} cores, {}", cores(), cpu_model());
        long_task(&dir, &args).await;
        let _ = std::fs::remove_dir_all(dir);
        return;
    }
    let dir = std::env::temp_dir().join(format!("tether-bench-{}", std::process::id()));
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::write(scenarios.join("bench-loop.json"), bench_scenario()).unwrap();
    let outputs: Vec<String> = (0..TURNS).map(tool_output).collect();
    // `TETHER_BENCH_PARTS=4`: Part 4 alone (Tether in front of an engine).
    if std::env::var("TETHER_BENCH_PARTS").as_deref() == Ok("4") {
        println!("Tether agent-rollout benchmark, Part 4 only");
        println!("machine: {} cores, {}", cores(), cpu_model());
        engine::part4(&dir, &scenarios, &outputs).await;
        let _ = std::fs::remove_dir_all(dir);
        return;
    }
    let config = Config::try_parse_from_args(&dir, &scenarios);
    let (addr, server) = start(&config).await;
    // The same, with the HTTP path's token cache, in its own store.
    let mut cached_config = Config::try_parse_from_args(&dir.join("token-cache"), &scenarios);
    cached_config.token_cache_tokens = 4_000_000;
    let (cached_addr, cached_server) = start(&cached_config).await;
    // The same as the first, served without the link layer (a plain TcpListener): what the
    // link-capable sockets cost a connection that asks for no link.
    let plain_config = Config::try_parse_from_args(&dir.join("plain"), &scenarios);
    let (plain_addr, plain_server) = start_plain(&plain_config).await;

    println!("Tether agent-rollout benchmark");
    println!("machine: {} cores, {}", cores(), cpu_model());
    println!(
        "method: one process, one server on 127.0.0.1 (SQLite store on disk); {TURNS} turns, each one \
         tool call and a {OUTPUT_TOKENS_PER_TURN}-token tool output, every request with ~{INSTRUCTION_TOKENS} tokens \
         of instructions (a base prompt and an agent guide); per-turn round trip measured by the \
         client from before encoding the request to the decoded terminal event"
    );

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
        ratio(medians[4].1[TURNS - 1], ws[TURNS - 1]),
        ratio(medians[0].1[TURNS - 1], medians[4].1[TURNS - 1])
    );
    let total = |per_turn: &Vec<Duration>| per_turn.iter().sum::<Duration>();
    // WS append's rollout also pays for closing its one response (it completes then).
    let (append, append_runs) = (&medians[3].1, &medians[3].3);
    let closing = median(append_runs.iter().map(|r| r.closing.unwrap()).collect());
    println!(
        "ratios of totals (x WebSocket): HTTP stateless {:.1}x, HTTP chained {:.1}x, WS append \
         {:.2}x (its {TURNS} turns and closing the response, {:.2} ms)",
        ratio(total(&medians[0].1), total(ws)),
        ratio(total(&medians[1].1), total(ws)),
        ratio(total(append) + closing, total(ws)),
        ms(closing),
    );
    println!(
        "WS append (v1) turn 40 / WebSocket turn 40: {:.2}; its turns 2-40 min {:.2} ms, max {:.2} ms",
        ratio(append[TURNS - 1], ws[TURNS - 1]),
        ms(*append[1..].iter().min().unwrap()),
        ms(*append[1..].iter().max().unwrap()),
    );
    // Without the link layer, alternating with the link-capable server so both see the same
    // machine.
    let (mut linked, mut plain) = (Vec::new(), Vec::new());
    for repetition in 0..REPETITIONS {
        let pair = [(addr, &mut linked), (plain_addr, &mut plain)];
        let order: Vec<_> = if repetition % 2 == 0 {
            pair.into_iter().collect()
        } else {
            pair.into_iter().rev().collect()
        };
        for (to, runs) in order {
            let run = rollout(to, Mode::WebSocket, "instant", &outputs, None).await;
            runs.push(run.turns.iter().sum::<Duration>());
        }
    }
    println!(
        "WebSocket without the link layer (a plain TcpListener, no link asked either way), side by \
         side: total of 40 turns {:.1} ms with it, {:.1} ms without (median of {REPETITIONS}, \
         alternated)",
        ms(median(linked)),
        ms(median(plain)),
    );
    println!(
        "WebSocket turn 40 / turn 1: {:.2}; turn 40 / turn 2 (the first continuation, which adds \
         the first tool output): {:.2}; turns 2-40 min {:.2} ms, max {:.2} ms",
        ratio(ws[TURNS - 1], ws[0]),
        ratio(ws[TURNS - 1], ws[1]),
        ms(*ws[1..].iter().min().unwrap()),
        ms(*ws[1..].iter().max().unwrap()),
    );
    // The server's own account of a WebSocket turn (its timing summary): the engine's service
    // time, and the server's whole time (the API's plus the engine's as the API saw it).
    let ws_runs = &medians[2].3;
    let summary_us = |turn: usize, field: &dyn Fn(&Value) -> f64| {
        median_f64(ws_runs.iter().map(|r| field(&r.stages[turn - 1])).collect())
    };
    let service = |t: &Value| t["engine"]["service_total_us"].as_f64().unwrap_or(0.0);
    let server_time = |t: &Value| {
        t["api_us"].as_f64().unwrap_or(0.0) + t["engine"]["iapi_total_us"].as_f64().unwrap_or(0.0)
    };
    println!(
        "WebSocket, from the server's timing summary (median of {REPETITIONS}): engine service \
         {:.0} us at turn 2, {:.0} us at turn 40; server time {:.0} us at turn 2, {:.0} us at \
         turn 40 ({:.2}x)",
        summary_us(2, &service),
        summary_us(TURNS, &service),
        summary_us(2, &server_time),
        summary_us(TURNS, &server_time),
        summary_us(TURNS, &server_time) / summary_us(2, &server_time).max(1.0),
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
        // WS append reports its stages once, for the whole response, when it closes.
        let rows: Vec<(String, usize, f64)> = if *mode == Mode::WsAppend {
            let all = ms(per_turn.iter().sum::<Duration>() + closing);
            vec![(format!("{} all", mode.name()), TURNS, all)]
        } else {
            [1, TURNS]
                .iter()
                .map(|&turn| {
                    (
                        format!("{} {turn}", mode.name()),
                        turn - 1,
                        ms(per_turn[turn - 1]),
                    )
                })
                .collect()
        };
        for (label, index, total) in rows {
            print!("{label:<22}");
            let mut inside = 0.0;
            for stage in STAGE_NAMES {
                let us = median_f64(
                    runs.iter()
                        .map(|r| {
                            r.stages[index]["stages"][format!("{stage}_us")]
                                .as_f64()
                                .unwrap_or(0.0)
                        })
                        .collect(),
                );
                inside += us / 1000.0;
                print!("{:>10.3}", us / 1000.0);
            }
            println!("{:>10.3}{:>10.3}", total - inside, total);
        }
    }

    server.abort();
    cached_server.abort();
    plain_server.abort();

    // `TETHER_BENCH_PARTS=1`: Part 1 alone (a before/after of the server's own work).
    if std::env::var("TETHER_BENCH_PARTS").as_deref() != Ok("1") {
        end_to_end(&dir, &scenarios, &outputs).await;
        long_task(&dir, &args).await;
        engine::part4(&dir, &scenarios, &outputs).await;
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// How many times part 2 plays each rollout (the order of the modes turns every time).
const E2E_REPETITIONS: usize = 3;
/// The tool's time per turn in part 2.
const TOOL_TIME: Duration = Duration::from_millis(100);

/// Part 2: the rollout end to end on `spark` (1,000 tokens/s, prefill 80 ms + 20 µs per uncached
/// token) with the engine's prompt cache on, each mode in turn, on loopback, through a WAN link,
/// and with the hosted API costs.
async fn end_to_end(dir: &std::path::Path, scenarios: &std::path::Path, outputs: &[String]) {
    let local = Config::try_parse_from_args(&dir.join("local"), scenarios);
    let (local_addr, local_server) = start(&local).await;
    let mut hosted = Config::try_parse_from_args(&dir.join("hosted"), scenarios);
    hosted.api_costs = tether_server::costs::ApiCostPreset::Hosted;
    let (hosted_addr, hosted_server) = start(&hosted).await;
    let wan = LinkConfig::new(Duration::from_millis(40), Some(20.0), Some(100.0), None);
    let (wan_addr, wan_link) =
        tether_link::proxy::start("127.0.0.1:0".parse().unwrap(), local_addr, wan)
            .await
            .unwrap();
    let setups = [
        ("(a) loopback, --api-costs local", local_addr),
        (
            "(b) 40 ms RTT, 20 Mbit/s up, 100 Mbit/s down (tether-link), local",
            wan_addr,
        ),
        (
            "(c) loopback, --api-costs hosted (classifier 5.7 us/token, 1 ms engine hop)",
            hosted_addr,
        ),
    ];
    println!(
        "\nPart 2 — end to end: model `spark` (1,000 tokens/s, prefill 80 ms + 20 us per uncached \
         token), the engine prompt cache on (each rollout its own prompt_cache_key), ~300 output \
         tokens and {} ms of tool time a turn; HTTP modes stream (SSE) as Codex does. Each setup \
         plays every mode {E2E_REPETITIONS} times, the order of the modes rotating; median [min–max].",
        TOOL_TIME.as_millis()
    );
    for (setup, addr) in setups {
        let mut results: Vec<(Mode, Vec<E2e>)> = MODES.iter().map(|m| (*m, Vec::new())).collect();
        for repetition in 0..E2E_REPETITIONS {
            for step in 0..MODES.len() {
                let index = (step + repetition) % MODES.len();
                let mode = MODES[index];
                let key = format!("bench-{repetition}-{index}-{}", std::process::id());
                results[index]
                    .1
                    .push(e2e_rollout(addr, mode, outputs, &key).await);
            }
        }
        println!("\n{setup}");
        println!(
            "{:<16}{:>22}{:>11}{:>11}{:>11}{:>11}{:>12}{:>14}{:>13}",
            "mode",
            "end to end, s",
            "API, s",
            "engine, s",
            "tools, s",
            "network, s",
            "TTFT@40, ms",
            "cached@40",
            "input@40"
        );
        let mut medians = Vec::new();
        for (mode, runs) in &results {
            let totals: Vec<Duration> = runs.iter().map(|r| r.total).collect();
            let med = |f: &dyn Fn(&E2e) -> f64| median_f64(runs.iter().map(f).collect());
            let total = median(totals.clone());
            println!(
                "{:<16}{:>8.2} [{:.2}–{:.2}]{:>11.2}{:>11.2}{:>11.2}{:>11.2}{:>12.1}{:>14}{:>13}",
                mode.name(),
                total.as_secs_f64(),
                totals.iter().min().unwrap().as_secs_f64(),
                totals.iter().max().unwrap().as_secs_f64(),
                med(&|r| r.api.as_secs_f64()),
                med(&|r| r.engine.as_secs_f64()),
                med(&|r| r.tools.as_secs_f64()),
                med(&|r| r.network.as_secs_f64()),
                med(&|r| ms(r.ttft_last)),
                runs[0].cached_last,
                runs[0].input_last,
            );
            medians.push((*mode, total, med(&|r| ms(r.ttft_last))));
        }
        let (ws_total, ws_ttft) = (medians[2].1, medians[2].2);
        let (append_total, append_ttft) = (medians[3].1, medians[3].2);
        println!(
            "WS append vs WebSocket: {:.1}% faster end to end, TTFT at turn 40 {:.1}% lower",
            (1.0 - append_total.as_secs_f64() / ws_total.as_secs_f64()) * 100.0,
            (1.0 - append_ttft / ws_ttft) * 100.0,
        );
        for (mode, total, ttft) in &medians[..2] {
            println!(
                "WebSocket vs {}: {:.1}% faster end to end, TTFT at turn 40 {:.1}% lower",
                mode.name(),
                (1.0 - ws_total.as_secs_f64() / total.as_secs_f64()) * 100.0,
                (1.0 - ws_ttft / ttft) * 100.0,
            );
        }
    }
    wan_link.abort();
    local_server.abort();
    hosted_server.abort();
}

/// One end-to-end rollout: its total and where the time went, summed over its turns.
struct E2e {
    total: Duration,
    /// The server's own time (`api_us` of every turn).
    api: Duration,
    /// The engine's, as the API saw it (`engine.iapi_total_us`).
    engine: Duration,
    tools: Duration,
    /// What the client waited beyond the server's time: the link and the transport.
    network: Duration,
    /// Time to first token at turn 40, client-measured.
    ttft_last: Duration,
    cached_last: u64,
    input_last: u64,
}

/// Plays the rollout in `mode` on `spark` through the load generator's turns over
/// `tether-client` (HTTP modes stream).
async fn e2e_rollout(addr: std::net::SocketAddr, mode: Mode, outputs: &[String], key: &str) -> E2e {
    let endpoint = bench_endpoint(addr, mode);
    let mut ws = match mode {
        Mode::WebSocket | Mode::WsAppend => Some(WebSocket::connect(&endpoint).await.unwrap()),
        _ => None,
    };
    let mut http = match mode {
        Mode::WebSocket | Mode::WsAppend => None,
        _ => {
            let mut http = Http::new(&endpoint);
            http.connect().await.unwrap();
            Some(http)
        }
    };
    // WS append: the one response's usage and output so far.
    let (mut used_before, mut cached_before, mut outputs_seen) = (0, 0, 0);
    let mut round_trips = Duration::ZERO;
    let timeout = Duration::from_secs(120);
    let mut conversation: Vec<Value> =
        vec![json!({"role": "user", "content": "The tests fail. Find out why and fix it."})];
    let mut new_input = conversation.clone();
    let mut previous: Option<String> = None;
    let mut result = E2e {
        total: Duration::ZERO,
        api: Duration::ZERO,
        engine: Duration::ZERO,
        tools: Duration::ZERO,
        network: Duration::ZERO,
        ttft_last: Duration::ZERO,
        cached_last: 0,
        input_last: 0,
    };
    let started = Instant::now();
    for (turn, tool_text) in outputs.iter().enumerate().take(TURNS) {
        let mut body = json!({"model": "spark", "instructions": instructions(), "tools": tools(),
            "metadata": {"scenario": "bench-loop"}, "prompt_cache_key": key, "stream": true});
        shape_turn(
            &mut body,
            mode,
            turn,
            &conversation,
            &new_input,
            previous.as_deref(),
        );
        let done = match (&mut ws, &mut http) {
            (Some(socket), _) => {
                if body.get("type").is_none() {
                    body["type"] = json!("response.create");
                }
                ws_frame_turn(socket, body.to_string(), timeout).await
            }
            (_, Some(connection)) => {
                http_body_turn(connection, body.to_string().into_bytes(), timeout).await
            }
            _ => unreachable!("one client per mode"),
        }
        .unwrap_or_else(|error| panic!("{} turn {turn}: {error:?}", mode.name()));
        round_trips += done.round_trip;
        // WS append's one response reports its timing when it closes (below).
        if mode != Mode::WsAppend {
            let timing = done.timing.clone().unwrap_or_default();
            let (server_api, server_engine) = api_and_engine(&timing);
            result.api += server_api;
            result.engine += server_engine;
            result.network += done.round_trip.saturating_sub(server_api + server_engine);
        }
        let usage = done.response.usage.as_ref().expect("usage");
        let (input, cached) = (usage.input_tokens, usage.input_tokens_details.cached_tokens);
        if turn == TURNS - 1 {
            result.ttft_last = done.first_token.unwrap_or(done.round_trip);
            result.cached_last = cached - cached_before;
            result.input_last = input - used_before;
        }
        if mode == Mode::WsAppend {
            (used_before, cached_before) = (input, cached);
        }
        let response = serde_json::to_value(&done.response).unwrap();
        let mut output = response["output"].as_array().unwrap().clone();
        if mode == Mode::WsAppend {
            let seen = outputs_seen;
            outputs_seen = output.len();
            output.drain(..seen);
        }
        let call = output
            .iter()
            .find(|item| item["type"] == "function_call")
            .unwrap_or_else(|| panic!("turn {turn}: no tool call in {response}"));
        let tool_started = Instant::now();
        tokio::time::sleep(TOOL_TIME).await;
        result.tools += tool_started.elapsed();
        let tool_result = json!({"type": "function_call_output", "call_id": call["call_id"], "output": tool_text});
        conversation.extend(output.iter().cloned());
        new_input = vec![tool_result];
        conversation.extend(new_input.iter().cloned());
        previous = Some(done.response.id.clone());
    }
    if let (Mode::WsAppend, Some(socket)) = (mode, ws.as_mut()) {
        // A `response.create` with `generate:false` completes the paused response (billed, its
        // timing summary sent) and prepares nothing itself.
        let close = json!({"type": "response.create", "model": "spark", "store": false,
                           "generate": false, "input": []});
        let done = ws_frame_turn(socket, close.to_string(), timeout)
            .await
            .unwrap_or_else(|error| panic!("closing: {error:?}"));
        round_trips += done.round_trip;
        let (server_api, server_engine) = api_and_engine(&done.timing.unwrap_or_default());
        result.api = server_api;
        result.engine = server_engine;
        result.network = round_trips.saturating_sub(server_api + server_engine);
    }
    result.total = started.elapsed();
    result
}

/// The API's own time and the engine's, from a `tether_timing` summary.
fn api_and_engine(timing: &Value) -> (Duration, Duration) {
    let us = |value: &Value| Duration::from_micros(value.as_u64().unwrap_or(0));
    (
        us(&timing["api_us"]),
        us(&timing["engine"]["iapi_total_us"]),
    )
}

/// Starts a server for `config` on 127.0.0.1 port 0.
async fn start(config: &Config) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    std::fs::create_dir_all(&config.data_dir).unwrap();
    let state = AppState::new(config).unwrap();
    let router = app(state, std::path::Path::new("does-not-exist"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // As `tether_server::serve` does: sockets that carry the link a client asks for, with
    // TCP_NODELAY (no Nagle delay on small event frames).
    use tether_server::transport::link;
    let listener = link::Listener::new(listener);
    let server =
        tokio::spawn(async move { axum::serve(listener, link::service(router)).await.unwrap() });
    (addr, server)
}

/// Starts a server for `config` as `start` does, but on a plain `TcpListener` (no link layer).
async fn start_plain(config: &Config) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    std::fs::create_dir_all(&config.data_dir).unwrap();
    let state = AppState::new(config).unwrap();
    let router = app(state, std::path::Path::new("does-not-exist"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (addr, server)
}

/// Turns a turn's settings (`body`: model, instructions, tools, metadata) into what `mode`
/// sends: the whole conversation over HTTP stateless, the new items and the previous id when
/// chained or over WebSocket, and for WS append a `response.create` once, then only
/// `response.append` frames (the paused response keeps its settings). Parts 1 and 2 share it,
/// so the two measure the same requests.
fn shape_turn(
    body: &mut Value,
    mode: Mode,
    turn: usize,
    conversation: &[Value],
    new_input: &[Value],
    previous: Option<&str>,
) {
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
        Mode::WsAppend if turn == 0 => {
            body["store"] = json!(false);
            body["input"] = json!(new_input);
        }
        Mode::WsAppend => *body = json!({"type": "response.append", "input": new_input}),
    }
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
    /// The prompt each turn's engine call read.
    input_tokens: Vec<u64>,
    /// WS append: closing the long-running response (it completes: billed, cached).
    closing: Option<Duration>,
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
    let endpoint = bench_endpoint(addr, mode);
    let mut http = Http::new(&endpoint);
    http.connect().await.unwrap();
    let mut ws = if matches!(mode, Mode::WebSocket | Mode::WsAppend) {
        Some(WebSocket::connect(&endpoint).await.unwrap())
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
        closing: None,
        stages: Vec::new(),
    };
    // WS append: the usage so far of the one response (each pause reports the sum), and how
    // many of its output items earlier turns saw.
    let mut used_before = 0;
    let mut outputs_seen = 0;
    for (turn, tool_text) in outputs.iter().enumerate().take(TURNS) {
        let started = Instant::now();
        let mut body = json!({"model": model, "instructions": instructions, "tools": tools(), "metadata": metadata});
        shape_turn(
            &mut body,
            mode,
            turn,
            &conversation,
            &new_input,
            previous.as_deref(),
        );
        let (response, timing) = match ws.as_mut() {
            Some(socket) => {
                if body.get("type").is_none() {
                    body["type"] = json!("response.create");
                }
                socket.send_text(body.to_string()).await.unwrap();
                until_terminal(socket, turn).await
            }
            None => post(&mut http, &body).await,
        };
        result.turns.push(started.elapsed());
        result.stages.push(timing);
        let response = serde_json::to_value(&response).unwrap();
        let used = response["usage"]["input_tokens"].as_u64().unwrap();
        if mode == Mode::WsAppend {
            assert_eq!(response["status"], "in_progress", "turn {turn}: {response}");
            result.input_tokens.push(used - used_before);
            used_before = used;
        } else {
            assert_eq!(response["status"], "completed", "turn {turn}: {response}");
            result.input_tokens.push(used);
        }
        let mut output = response["output"].as_array().unwrap().clone();
        if mode == Mode::WsAppend {
            // The response's output so far: this turn's items are the ones since the last.
            let seen = outputs_seen;
            outputs_seen = output.len();
            output.drain(..seen);
        }
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
    if let (Mode::WsAppend, Some(socket)) = (mode, ws.as_mut()) {
        let closed = Instant::now();
        let (response, timing) = close_paused(socket, model).await;
        result.closing = Some(closed.elapsed());
        result.stages.push(timing);
        assert_eq!(
            response.status,
            tether_protocol::ResponseStatus::Completed,
            "{response:?}"
        );
    }
    result
}

/// The endpoint every client of `mode` talks to: the server's stage timings asked for, and for
/// WS append the v1 beta.
fn bench_endpoint(addr: std::net::SocketAddr, mode: Mode) -> Endpoint {
    let endpoint = Endpoint::new(&format!("http://{addr}"))
        .unwrap()
        .with_timing(true);
    match mode {
        Mode::WsAppend => endpoint.with_beta(APPEND_BETA),
        _ => endpoint,
    }
}

/// `POST /v1/responses` with `body` (JSON, not streamed): the response and the server's
/// `x-tether-timing` summary.
async fn post(http: &mut Http, body: &Value) -> (tether_protocol::Response, Value) {
    let reply = http
        .post_json("/v1/responses", body.to_string())
        .await
        .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    let timing = reply
        .header("x-tether-timing")
        .map_or(Value::Null, |t| serde_json::from_str(t).unwrap());
    (reply.json().unwrap(), timing)
}

/// Reads events up to the turn's end: `response.completed`, or `response.done` where a v1
/// response pauses. Its response and the server's timing summary.
async fn until_terminal(socket: &mut WebSocket, turn: usize) -> (tether_protocol::Response, Value) {
    let Finished {
        response, timing, ..
    } = socket
        .finish_with(None, |_| {})
        .await
        .unwrap_or_else(|error| panic!("turn {turn}: {error}"));
    (response, timing.unwrap_or(Value::Null))
}

/// Ends a paused v1 response: a `response.create` with `generate:false` on the lane completes
/// it as it stands (billed, its summary sent), then prepares nothing and completes too.
async fn close_paused(socket: &mut WebSocket, model: &str) -> (tether_protocol::Response, Value) {
    let close = json!({"type": "response.create", "model": model, "store": false,
                       "generate": false, "input": []});
    socket.send_text(close.to_string()).await.unwrap();
    let paused = until_terminal(socket, TURNS).await;
    until_terminal(socket, TURNS).await;
    paused
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

/// The two legs of the playground's Compare.
#[derive(Clone, Copy, PartialEq)]
enum Leg {
    WebSocket,
    HttpStateless,
}

impl Leg {
    fn name(self) -> &'static str {
        match self {
            Leg::WebSocket => "WebSocket",
            Leg::HttpStateless => "HTTP stateless",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Leg::WebSocket => "ws",
            Leg::HttpStateless => "http-stateless",
        }
    }
}

/// One run of the long task: its total and where the time went, summed over its turns.
#[derive(Default)]
struct TaskRun {
    total: Duration,
    /// The server's own time (`api_us`).
    api: Duration,
    /// The engine's, as the API saw it (`engine.iapi_total_us`).
    engine: Duration,
    /// The sandbox running the calls.
    tools: Duration,
    /// What the emulated link added, each way (`link.up_us`, `link.down_us`).
    link_up: Duration,
    link_down: Duration,
    up_bytes: u64,
    turns: usize,
    calls: usize,
    input_last: u64,
}

impl TaskRun {
    /// The client's time beyond the server's, the link's and the tools': transport, framing,
    /// JSON, scheduling.
    fn rest(&self) -> Duration {
        self.total
            .saturating_sub(self.api + self.engine + self.tools + self.link_up + self.link_down)
    }
}

/// Part 3: the long task as the playground's Compare runs it, under `args`' conditions.
async fn long_task(dir: &std::path::Path, args: &BenchArgs) {
    let task = args.task.as_deref().unwrap_or("triage-ci-log");
    let mut config = Config::try_parse_from_args(&dir.join("task"), &dir.join("task-scenarios"));
    std::fs::create_dir_all(dir.join("task-scenarios")).unwrap();
    config.allow_client_conditions = true;
    let (addr, server) = start(&config).await;
    // The conditions, on every request's URL as the page asks for them (tether-client's
    // `with_query`).
    let link = Endpoint::new(&format!("http://{addr}"))
        .unwrap()
        .with_timing(true)
        .with_query("tether_rtt_ms", &args.rtt_ms.to_string())
        .with_query("tether_up_mbit", &args.up_mbit.to_string())
        .with_query("tether_down_mbit", &args.down_mbit.to_string());
    let measured = link.clone().with_query("tether_api_costs", &args.api_costs);
    let warm = link.with_query("tether_api_costs", "local");
    let mbit = |m: f64| {
        if m > 0.0 {
            format!("{m} Mbit/s")
        } else {
            "unlimited".into()
        }
    };
    println!(
        "\nPart 3 — the long task `{task}` as the playground's Compare runs it: model `{}`, \
         {} ms RTT, {} up, {} down (emulated by the server, tether_rtt_ms=…), API costs {}; \
         the page's requests (tether-sandbox's tool specs, no instructions, store:false, SSE \
         over HTTP, a prompt_cache_key per run), every call run by tether-sandbox natively on \
         long_task_project(); a warm-up of both legs on `instant` with local costs, discarded; \
         then {} repetitions, the legs in the order A B B A …; median [min–max].",
        args.profile,
        args.rtt_ms,
        mbit(args.up_mbit),
        mbit(args.down_mbit),
        args.api_costs,
        args.repetitions,
    );
    for leg in [Leg::WebSocket, Leg::HttpStateless] {
        task_rollout(&warm, leg, task, "instant", "warm").await;
    }
    let mut runs: Vec<(Leg, Vec<TaskRun>)> = vec![
        (Leg::WebSocket, Vec::new()),
        (Leg::HttpStateless, Vec::new()),
    ];
    for repetition in 0..args.repetitions {
        // A B, then B A: neither leg always runs first.
        let order = if repetition % 2 == 0 { [0, 1] } else { [1, 0] };
        for index in order {
            let leg = runs[index].0;
            let tag = format!("{repetition}");
            let run = task_rollout(&measured, leg, task, &args.profile, &tag).await;
            runs[index].1.push(run);
        }
    }
    println!(
        "{:<16}{:>22}{:>9}{:>11}{:>10}{:>11}{:>13}{:>9}{:>10}{:>8}{:>11}",
        "leg",
        "end to end, s",
        "API, s",
        "engine, s",
        "tools, s",
        "link up, s",
        "link down, s",
        "rest, s",
        "up, MB",
        "turns",
        "input@end"
    );
    let mut medians = Vec::new();
    for (leg, runs) in &runs {
        let totals: Vec<Duration> = runs.iter().map(|r| r.total).collect();
        let med = |f: &dyn Fn(&TaskRun) -> f64| median_f64(runs.iter().map(f).collect());
        let total = median(totals.clone());
        println!(
            "{:<16}{:>8.2} [{:.2}–{:.2}]{:>9.2}{:>11.2}{:>10.2}{:>11.2}{:>13.2}{:>9.2}{:>10.2}{:>8}{:>11}",
            leg.name(),
            total.as_secs_f64(),
            totals.iter().min().unwrap().as_secs_f64(),
            totals.iter().max().unwrap().as_secs_f64(),
            med(&|r| r.api.as_secs_f64()),
            med(&|r| r.engine.as_secs_f64()),
            med(&|r| r.tools.as_secs_f64()),
            med(&|r| r.link_up.as_secs_f64()),
            med(&|r| r.link_down.as_secs_f64()),
            med(&|r| r.rest().as_secs_f64()),
            med(&|r| r.up_bytes as f64 / 1e6),
            runs[0].turns,
            runs[0].input_last,
        );
        assert_eq!(runs[0].calls, tether_sandbox::SHARDS, "{}", leg.name());
        medians.push(total);
    }
    let saving =
        |ws: Duration, http: Duration| (1.0 - ws.as_secs_f64() / http.as_secs_f64()) * 100.0;
    let pairs: Vec<String> = runs[0]
        .1
        .iter()
        .zip(&runs[1].1)
        .map(|(ws, http)| format!("{:.1}", saving(ws.total, http.total)))
        .collect();
    println!(
        "WebSocket vs HTTP stateless: {:.1}% faster end to end (medians); per repetition: {} %",
        saving(medians[0], medians[1]),
        pairs.join(", ")
    );
    server.abort();
}

/// Plays `task` once over `leg` on `model`, every URL carrying `endpoint`'s conditions, as the
/// playground does: the sandbox runs every call; WebSocket sends the new outputs with
/// `previous_response_id`, HTTP stateless the whole conversation, streamed.
async fn task_rollout(
    endpoint: &Endpoint,
    leg: Leg,
    task: &str,
    model: &str,
    tag: &str,
) -> TaskRun {
    let mut ws = match leg {
        Leg::WebSocket => Some(WebSocket::connect(endpoint).await.unwrap()),
        Leg::HttpStateless => None,
    };
    let mut http = match leg {
        Leg::HttpStateless => {
            let mut http = Http::new(endpoint);
            http.connect().await.unwrap();
            Some(http)
        }
        Leg::WebSocket => None,
    };
    let mut sandbox = tether_sandbox::Sandbox::new(tether_sandbox::long_task_project());
    let tools = tether_sandbox::tool_specs(tether_sandbox::ApplyPatchForm::Freeform);
    let key = format!("bench-{}-{tag}-{}", std::process::id(), leg.key());
    let mut conversation =
        vec![json!({"role": "user", "content": tether_sandbox::LONG_TASK_PROMPT})];
    let mut new_input = conversation.clone();
    let mut previous: Option<String> = None;
    let mut run = TaskRun::default();
    let timeout = Duration::from_secs(300);
    // As the page does: the connection is open and the sandbox ready before the clock starts.
    let started = Instant::now();
    // The task's turns, and a margin: a scenario that never stops calling fails the run.
    for turn in 0..60 {
        let mut body = json!({"model": model, "tools": tools, "store": false,
            "metadata": {"scenario": task}, "prompt_cache_key": key});
        let done = match (&mut ws, &mut http) {
            (Some(socket), _) => {
                body["type"] = json!("response.create");
                body["input"] = json!(new_input);
                if let Some(id) = &previous {
                    body["previous_response_id"] = json!(id);
                }
                ws_frame_turn(socket, body.to_string(), timeout).await
            }
            (_, Some(connection)) => {
                body["stream"] = json!(true);
                body["input"] = json!(conversation);
                http_body_turn(connection, body.to_string().into_bytes(), timeout).await
            }
            _ => unreachable!("one client per leg"),
        }
        .unwrap_or_else(|error| panic!("{} turn {turn}: {error:?}", leg.name()));
        run.turns += 1;
        let timing = done.timing.clone().unwrap_or_default();
        let us = |value: &Value| Duration::from_micros(value.as_u64().unwrap_or(0));
        run.api += us(&timing["api_us"]);
        run.engine += us(&timing["engine"]["iapi_total_us"]);
        run.link_up += us(&timing["link"]["up_us"]);
        run.link_down += us(&timing["link"]["down_us"]);
        run.up_bytes += timing["link"]["up_bytes"].as_u64().unwrap_or(0);
        run.input_last = done
            .response
            .usage
            .as_ref()
            .map_or(0, |usage| usage.input_tokens);
        let response = serde_json::to_value(&done.response).unwrap();
        let output = response["output"].as_array().unwrap().clone();
        let tool_started = Instant::now();
        let mut results = Vec::new();
        for call in output.iter().filter(|item| item["type"] == "function_call") {
            let name = call["name"].as_str().unwrap();
            let result = sandbox
                .call_tool(name, call["arguments"].as_str().unwrap())
                .await;
            results.push(
                json!({"type": "function_call_output", "call_id": call["call_id"],
                "output": result.output}),
            );
        }
        run.tools += tool_started.elapsed();
        run.calls += results.len();
        previous = Some(done.response.id.clone());
        if results.is_empty() {
            run.total = started.elapsed();
            return run;
        }
        conversation.extend(output.iter().cloned());
        conversation.extend(results.iter().cloned());
        new_input = results;
    }
    panic!("{} did not finish {task} in 60 turns", leg.name());
}
