//! Tether in front of llmsim (an OpenAI-compatible server nobody here wrote, installed by
//! `cargo xtask setup`): a tool loop over WebSocket mode and over HTTP through the Chat
//! Completions dialect, a text answer through the Responses dialect, and the committed replay
//! fixture (`tests/fixtures/llmsim-tool-loop/`) — that recording it again against llmsim gives
//! the same exchanges, and that it replays with no upstream at all. Without llmsim the tests
//! that need it print `SKIPPED` and pass; the replay test needs nothing.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::llmsim::{Answers, Llmsim};
use common::{Client, TestServer, config};
use serde_json::{Value, json};
use tether_server::Config;

/// The tool loop every client of the fixture runs (docs in its README.md): the instructions,
/// the prompt, the one tool, and what the tool prints.
const MODEL: &str = "gpt-5";
const INSTRUCTIONS: &str = "You run shell commands for the user.";
const PROMPT: &str = "Run `echo hi` and tell me what it printed.";
const TOOL_OUTPUT: &str = "hi\n";
const ANSWER: &str = "Done: the command printed hi.";

fn tools() -> Value {
    json!([{"type": "function", "name": "exec_command", "description": "Runs a shell command.",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                           "required": ["cmd"]}}])
}

/// llmsim's script for the loop: a call of `exec_command`, then the answer, again and again.
fn script() -> Value {
    json!({"turns": [
        {"type": "tool_calls", "calls": [{"name": "exec_command", "arguments": {"cmd": "echo hi"}}]},
        {"type": "assistant", "text": ANSWER}
    ], "on_exhausted": "loop"})
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/llmsim-tool-loop")
}

fn engine_config(engine: &str) -> Config {
    let mut config = config(":memory:");
    config.engines = vec![engine.to_string()];
    config
}

/// The loop over one WebSocket connection: the call, then the answer; the two terminal
/// responses.
async fn websocket_loop(client: &mut Client) -> (Value, Value) {
    client
        .send(
            &json!({"type": "response.create", "model": MODEL, "instructions": INSTRUCTIONS,
                      "input": PROMPT, "tools": tools(), "store": false})
            .to_string(),
        )
        .await;
    let first = client.response_events().await.pop().unwrap()["response"].clone();
    assert_eq!(first["status"], "completed", "{first}");
    let call = &first["output"][0];
    assert_eq!(call["type"], "function_call", "{first}");
    client
        .send(
            &json!({"type": "response.create", "model": MODEL, "instructions": INSTRUCTIONS,
                      "previous_response_id": first["id"], "tools": tools(), "store": false,
                      "input": [{"type": "function_call_output", "call_id": call["call_id"],
                                 "output": TOOL_OUTPUT}]})
            .to_string(),
        )
        .await;
    let second = client.response_events().await.pop().unwrap()["response"].clone();
    (first, second)
}

/// The status and body of `POST /v1/responses`.
async fn post(server: &TestServer, body: &Value) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let text = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "POST /v1/responses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(20),
        stream.read_to_string(&mut response),
    )
    .await
    .expect("an answer within 20 s")
    .unwrap();
    let status = response[9..12].parse().unwrap();
    let (_, payload) = response.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(payload).unwrap_or(Value::Null))
}

/// The loop over HTTP, chained through the store.
async fn http_loop(server: &TestServer) -> (Value, Value) {
    let (status, first) = post(
        server,
        &json!({"model": MODEL, "instructions": INSTRUCTIONS, "input": PROMPT, "tools": tools()}),
    )
    .await;
    assert_eq!(status, 200, "{first}");
    let call = &first["output"][0];
    let (status, second) = post(
        server,
        &json!({"model": MODEL, "instructions": INSTRUCTIONS, "previous_response_id": first["id"],
                "tools": tools(), "input": [{"type": "function_call_output",
                "call_id": call["call_id"], "output": TOOL_OUTPUT}]}),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    (first, second)
}

fn assert_the_loop(first: &Value, second: &Value) {
    let call = &first["output"][0];
    assert_eq!(call["name"], "exec_command");
    assert_eq!(call["arguments"], "{\"cmd\":\"echo hi\"}");
    assert!(call["call_id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(second["status"], "completed", "{second}");
    assert_eq!(second["output"][0]["content"][0]["text"], ANSWER);
    assert!(second["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(second["usage"]["output_tokens"], 7, "llmsim's own count");
}

#[tokio::test]
async fn a_tool_loop_runs_through_tether_to_llmsim_over_websocket_and_http() {
    let Some(llmsim) = Llmsim::start(Answers::Script(script())) else {
        return;
    };
    let server = TestServer::start_with(engine_config(&llmsim.url())).await;
    let mut client = server.connect().await;
    let (first, second) = websocket_loop(&mut client).await;
    assert_the_loop(&first, &second);
    let (first, second) = http_loop(&server).await;
    assert_the_loop(&first, &second);
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        1,
        "the WebSocket continuation came from the connection cache"
    );
    server.stop().await;
}

#[tokio::test]
async fn the_responses_dialect_against_llmsim() {
    // llmsim lowercases its fixed text, and gpt-5 reasons first (an empty reasoning item).
    let Some(llmsim) = Llmsim::start(Answers::Fixed("hello from llmsim.")) else {
        return;
    };
    let mut config = engine_config(&llmsim.url());
    config.engine_dialect = tether_server::engine::spec::Dialect::Responses;
    let server = TestServer::start_with(config).await;
    let (status, body) = post(&server, &json!({"model": MODEL, "input": "hi"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["output"][0]["type"], "reasoning", "{body}");
    assert_eq!(
        body["output"][1]["content"][0]["text"],
        "hello from llmsim."
    );
    // Over WebSocket too. (llmsim's /responses reads only messages with text content — no
    // output items — so a continuation is the scripted upstream's test, engine_upstream.rs.)
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": MODEL, "input": "hi again"}).to_string())
        .await;
    let events = client.response_events().await;
    let response = &events.last().unwrap()["response"];
    assert_eq!(
        response["output"][1]["content"][0]["text"],
        "hello from llmsim."
    );
    server.stop().await;
}

/// The keys (normalised requests) of the fixtures in `dir`.
fn keys(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            name.strip_suffix(".jsonl").map(str::to_string)
        })
        .collect()
}

#[tokio::test]
async fn recording_the_loop_against_llmsim_gives_the_committed_fixture() {
    let Some(llmsim) = Llmsim::start(Answers::Script(script())) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("tether-record-{}", rand::random::<u64>()));
    let mut config = engine_config(&llmsim.url());
    config.record = Some(dir.clone());
    let server = TestServer::start_with(config).await;
    let mut client = server.connect().await;
    let (first, second) = websocket_loop(&mut client).await;
    assert_the_loop(&first, &second);
    drop(client);
    server.stop().await;
    // The files are written behind the responses.
    let recorded = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let found = keys(&dir);
            if found.len() == 2 {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("two exchanges recorded");
    if std::env::var_os("TETHER_UPDATE_FIXTURES").is_some() {
        let committed = fixture_dir();
        for entry in std::fs::read_dir(&committed).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                std::fs::remove_file(path).unwrap();
            }
        }
        for key in &recorded {
            let name = format!("{key}.jsonl");
            std::fs::copy(dir.join(&name), committed.join(&name)).unwrap();
        }
        println!("updated {}", committed.display());
    }
    assert_eq!(
        recorded,
        keys(&fixture_dir()),
        "the loop's requests changed: re-record with TETHER_UPDATE_FIXTURES=1 cargo test -p \
         tether-server --test engine_llmsim recording"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_committed_fixture_replays_with_no_upstream() {
    let mut config = engine_config(&format!("replay:{}", fixture_dir().display()));
    config.replay_timing = "instant".into();
    let server = TestServer::start_with(config).await;
    let mut client = server.connect().await;
    let (first, second) = websocket_loop(&mut client).await;
    assert_the_loop(&first, &second);
    // The same exchanges serve HTTP (the same conversation makes the same upstream request).
    let (first, second) = http_loop(&server).await;
    assert_the_loop(&first, &second);
    // A conversation that was not recorded: the error names where it departs.
    let (status, body) = post(
        &server,
        &json!({"model": MODEL, "instructions": INSTRUCTIONS, "input": "Run `ls`.", "tools": tools()}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "replay_miss");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("messages[1].content") && message.contains("Run `ls`."),
        "{message}"
    );
    server.stop().await;
    // Asked to, the simulator serves a miss.
    let mut config = engine_config(&format!("replay:{}", fixture_dir().display()));
    config.replay_timing = "instant".into();
    config.replay_fallback = true;
    let server = TestServer::start_with(config).await;
    let (status, body) = post(&server, &json!({"model": MODEL, "input": "Run `ls`."})).await;
    assert_eq!(status, 200, "{body}");
    let text = body["output"][0]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Tether's inference simulator"), "{text}");
    server.stop().await;
}
