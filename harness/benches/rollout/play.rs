//! What the rollout's parts share: a server with the link layer, the rollout's requests (its
//! scenario, tool outputs, tools and instructions), one rollout played in a mode, and the
//! medians and ratios its tables print.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_client::{APPEND_BETA, Endpoint, Finished, Http, WebSocket};
use tether_server::Config;

use crate::common::router;
use crate::{Mode, OUTPUT_TOKENS_PER_TURN, TURNS};

/// Starts a server for `config` on 127.0.0.1 port 0.
pub(crate) async fn start(config: &Config) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let router = router(config);
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

/// Turns a turn's settings (`body`: model, instructions, tools, metadata) into what `mode`
/// sends: the whole conversation over HTTP stateless, the new items and the previous id when
/// chained or over WebSocket, and for WS append a `response.create` once, then only
/// `response.append` frames (the paused response keeps its settings). Parts 1 and 2 share it,
/// so the two measure the same requests.
pub(crate) fn shape_turn(
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

pub(crate) trait BenchConfig {
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
pub(crate) fn bench_scenario() -> String {
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
pub(crate) fn tool_output(turn: usize) -> String {
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

pub(crate) fn tools() -> Value {
    json!([{"type": "function", "name": "shell", "description": "Runs a shell command.",
        "parameters": {"type": "object", "required": ["command"],
            "properties": {"command": {"type": "array", "items": {"type": "string"}},
                           "workdir": {"type": "string"}, "timeout_ms": {"type": "integer"}}}}])
}

/// How many tokens of instructions every request carries.
pub(crate) const INSTRUCTION_TOKENS: usize = 3_000;

/// The instructions every request carries, as a coding agent sends them: a base prompt and the
/// repository's agent guide, ~`INSTRUCTION_TOKENS` tokens (Codex's own base instructions alone are
/// longer). The guide here is `sandbox/README.md`, cut at a line once the budget is reached. So
/// turn 1 renders a realistic first prompt rather than one sentence, and every turn's context
/// grows by ~3,000 tokens from the first.
pub(crate) fn instructions() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(build_instructions)
}

pub(crate) fn build_instructions() -> String {
    let tokenizer = tether_server::tokenizer::tokenizer();
    let mut text = String::from(
        "You are a coding agent working in a repository. Use the shell tool to inspect files and \
         run tests. Keep changes minimal and explain them.\n\n# Project guide (AGENTS.md)\n\n",
    );
    for line in include_str!("../../../sandbox/README.md").lines() {
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

pub(crate) struct Rollout {
    pub(crate) turns: Vec<Duration>,
    /// The prompt each turn's engine call read.
    pub(crate) input_tokens: Vec<u64>,
    /// WS append: closing the long-running response (it completes: billed, cached).
    pub(crate) closing: Option<Duration>,
    /// The server's stage timings of each turn (`x-tether-timing: 1`).
    pub(crate) stages: Vec<Value>,
}

/// Plays the rollout in `mode`; with `tool_time`, sleeps that long per turn as the tool.
pub(crate) async fn rollout(
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
        let (output, call_id) = turn_items(&response, mode, &mut outputs_seen, turn);
        if let Some(tool_time) = tool_time {
            tokio::time::sleep(tool_time).await;
        }
        let tool_result =
            json!({"type": "function_call_output", "call_id": call_id, "output": tool_text});
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

/// This turn's output items in `response` — for WS append, those since the last turn (`seen`
/// counts the items already read) — and the call id of its tool call.
pub(crate) fn turn_items(
    response: &Value,
    mode: Mode,
    seen: &mut usize,
    turn: usize,
) -> (Vec<Value>, Value) {
    let mut output = response["output"].as_array().unwrap().clone();
    if mode == Mode::WsAppend {
        let from = std::mem::replace(seen, output.len());
        output.drain(..from);
    }
    let call_id = output
        .iter()
        .find(|item| item["type"] == "function_call")
        .unwrap_or_else(|| panic!("turn {turn}: no tool call in {response}"))["call_id"]
        .clone();
    (output, call_id)
}

/// The endpoint every client of `mode` talks to: the server's stage timings asked for, and for
/// WS append the v1 beta.
pub(crate) fn bench_endpoint(addr: std::net::SocketAddr, mode: Mode) -> Endpoint {
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
pub(crate) async fn post(http: &mut Http, body: &Value) -> (tether_protocol::Response, Value) {
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
pub(crate) async fn until_terminal(
    socket: &mut WebSocket,
    turn: usize,
) -> (tether_protocol::Response, Value) {
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
pub(crate) async fn close_paused(
    socket: &mut WebSocket,
    model: &str,
) -> (tether_protocol::Response, Value) {
    let close = json!({"type": "response.create", "model": model, "store": false,
                       "generate": false, "input": []});
    socket.send_text(close.to_string()).await.unwrap();
    let paused = until_terminal(socket, TURNS).await;
    until_terminal(socket, TURNS).await;
    paused
}

/// The pipeline stages the server reports, in order.
pub(crate) const STAGE_NAMES: [&str; 8] = [
    "load", "resolve", "render", "validate", "classify", "generate", "persist", "bill",
];

pub(crate) fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

pub(crate) fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

pub(crate) fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

pub(crate) fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}
