//! Part 2: the rollout end to end on `spark` with ~300 output tokens and 100 ms of tool time a
//! turn, its time split into the API's, the engine's, the tools' and the network's — on
//! loopback, through the link emulator, and with the hosted API costs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_client::{Http, WebSocket};
use tether_harness::load::turn::{http_body_turn, ws_frame_turn};
use tether_link::LinkConfig;
use tether_server::Config;

use crate::play::{
    BenchConfig, bench_endpoint, instructions, median, median_f64, ms, shape_turn, start, tools,
    turn_items,
};
use crate::{MODES, Mode, TURNS};

/// How many times part 2 plays each rollout (the order of the modes turns every time).
const E2E_REPETITIONS: usize = 3;
/// The tool's time per turn in part 2.
const TOOL_TIME: Duration = Duration::from_millis(100);

/// Part 2: the rollout end to end on `spark` (1,000 tokens/s, prefill 80 ms + 20 µs per uncached
/// token) with the engine's prompt cache on, each mode in turn, on loopback, through a WAN link,
/// and with the hosted API costs.
pub(crate) async fn end_to_end(
    dir: &std::path::Path,
    scenarios: &std::path::Path,
    outputs: &[String],
) {
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
        let (output, call_id) = turn_items(&response, mode, &mut outputs_seen, turn);
        let tool_started = Instant::now();
        tokio::time::sleep(TOOL_TIME).await;
        result.tools += tool_started.elapsed();
        let tool_result =
            json!({"type": "function_call_output", "call_id": call_id, "output": tool_text});
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
