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

#[path = "common/mod.rs"]
mod common;
#[path = "rollout/end_to_end.rs"]
mod end_to_end;
#[path = "rollout/engine.rs"]
mod engine;
#[path = "rollout/long_task.rs"]
mod long_task;
#[path = "rollout/play.rs"]
mod play;

use std::time::Duration;

use serde_json::Value;
use tether_server::Config;

use common::{machine, start_plain};
use end_to_end::end_to_end;
use long_task::long_task;
use play::{
    BenchConfig, INSTRUCTION_TOKENS, STAGE_NAMES, bench_scenario, median, median_f64, ms, ratio,
    rollout, start, tool_output,
};

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
        println!("machine: {}", machine());
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
        println!("machine: {}", machine());
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
    println!("machine: {}", machine());
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
