//! Part 3: the playground's long task exactly as its Compare runs it — a discarded warm-up,
//! then the WebSocket and HTTP stateless legs alternating, every tool call run by the sandbox —
//! under the conditions given on the command line.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_client::{Endpoint, Http, WebSocket};
use tether_harness::load::turn::{http_body_turn, ws_frame_turn};
use tether_server::Config;

use crate::BenchArgs;
use crate::play::{BenchConfig, median, median_f64, start};

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
pub(crate) async fn long_task(dir: &std::path::Path, args: &BenchArgs) {
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
