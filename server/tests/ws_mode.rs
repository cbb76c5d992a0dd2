//! WebSocket mode over a real socket: a server on 127.0.0.1 port 0, the project's client (and a
//! raw tokio-tungstenite socket where a test sends what the client never does).

mod common;

use common::TestServer;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

fn create(input: &str) -> String {
    json!({"type": "response.create", "model": "any-model-name", "input": input}).to_string()
}

#[tokio::test]
async fn a_turn_streams_the_full_event_sequence() {
    // At 200 tokens/s a token falls due every 5 ms, several timer ticks apart, so it streams as
    // its own delta even when a loaded machine delays this one-thread runtime by a few ticks (at
    // 1,000 tokens/s, under a load average of 20, the answer came as 4 deltas; at the suite's
    // usual 100,000 tokens/s every tick's worth merges into one delta).
    let mut config = common::config(":memory:");
    config.tokens_per_second = 200.0;
    let server = TestServer::start_with(config).await;
    let mut client = server.connect().await;
    client.send(&create("What is WebSocket mode?")).await;
    let events = client.response_events().await;

    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let deltas = types
        .iter()
        .filter(|t| **t == "response.output_text.delta")
        .count();
    assert!(
        deltas > 10,
        "the answer streams as many deltas, got {deltas}"
    );
    let mut expected = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ];
    expected.extend(std::iter::repeat_n("response.output_text.delta", deltas));
    expected.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(types, expected);
    for (i, event) in events.iter().enumerate() {
        assert_eq!(
            event["sequence_number"], i,
            "sequence numbers count from 0 without gaps"
        );
    }

    let created = &events[0]["response"];
    assert!(created["id"].as_str().unwrap().starts_with("resp_"));
    assert!(created["created_at"].is_u64());
    assert_eq!(created["model"], "any-model-name");
    assert_eq!(created["status"], "in_progress");

    let streamed: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert!(streamed.contains("What is WebSocket mode?"));
    let done = &events[deltas + 4];
    assert_eq!(done["text"], streamed);
    let item = &events[deltas + 6]["item"];
    assert_eq!(item["status"], "completed");
    assert_eq!(item["content"][0]["text"], streamed);

    let completed = &events.last().unwrap()["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["id"], created["id"]);
    assert_eq!(completed["output"][0], *item);
    let usage = &completed["usage"];
    // Output tokens are real o200k tokens of what streamed (a delta holds one or more).
    let output_tokens = tether_server::tokenizer::count(&streamed) as u64;
    assert!(output_tokens >= deltas as u64);
    assert_eq!(usage["output_tokens"], output_tokens);
    assert!(usage["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["input_tokens"].as_u64().unwrap() + output_tokens
    );
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 0);
    assert_eq!(usage["output_tokens_details"]["reasoning_tokens"], 0);
    server.stop().await;
}

#[tokio::test]
async fn bad_frames_get_error_frames_and_the_connection_stays_usable() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;

    client.send("this is not json").await;
    let error = client.next_json().await;
    assert_eq!(error["type"], "error");
    assert_eq!(error["status"], 400);
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert!(error.get("sequence_number").is_none());

    client.send(r#"{"type":"response.cancel"}"#).await;
    let error = client.next_json().await;
    assert_eq!(error["status"], 400);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("response.cancel")
    );
    assert_eq!(error["error"]["param"], "type");

    client
        .send(r#"{"type":"response.create","model":"m","input":42}"#)
        .await;
    let error = client.next_json().await;
    assert_eq!(error["status"], 400);
    assert_eq!(error["error"]["param"], "input");

    client
        .send(r#"{"type":"response.create","model":["m"]}"#)
        .await;
    assert_eq!(client.next_json().await["error"]["param"], "model");

    client.send(&create("still there?")).await;
    let events = client.response_events().await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");

    // A binary frame (no client of the protocol sends one) is refused, and the connection goes
    // on.
    let mut raw = common::connect_raw(server.addr).await;
    raw.send(Message::Binary(vec![1, 2, 3].into()))
        .await
        .unwrap();
    let refusal = raw.next().await.unwrap().unwrap();
    let refusal: Value = serde_json::from_str(refusal.to_text().unwrap()).unwrap();
    assert_eq!(refusal["status"], 400);
    raw.send(Message::Text(create("still there?").into()))
        .await
        .unwrap();
    let first = raw.next().await.unwrap().unwrap();
    assert!(first.to_text().unwrap().contains("response.created"));
    server.stop().await;
}

#[tokio::test]
async fn a_second_request_while_one_runs_is_queued_then_served() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    client.send(&create("first")).await;
    client.send(&create("second")).await;
    let first = client.response_events().await;
    let second = client.response_events().await;
    let text = |events: &[Value]| {
        events.last().unwrap()["response"]["output"][0]["content"][0]["text"].clone()
    };
    assert!(text(&first).as_str().unwrap().contains("\"first\""));
    assert!(text(&second).as_str().unwrap().contains("\"second\""));
    assert_ne!(first[0]["response"]["id"], second[0]["response"]["id"]);
    assert_eq!(
        second[0]["sequence_number"], 0,
        "each response counts from 0"
    );
    server.stop().await;
}

#[tokio::test]
async fn warm_up_samples_nothing() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    client
        .send(&json!({"type":"response.create","model":"m","instructions":"be terse","generate":false}).to_string())
        .await;
    let events = client.response_events().await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "response.created",
            "response.in_progress",
            "response.completed"
        ]
    );
    let response = &events[2]["response"];
    assert_eq!(response["output"], json!([]));
    assert_eq!(response["usage"]["output_tokens"], 0);
    server.stop().await;
}

#[tokio::test]
async fn healthz_answers_200_and_the_missing_playground_is_explained() {
    let server = TestServer::start(":memory:").await;
    let health = server.get("/healthz").await;
    assert_eq!(health.status, 200, "{}", health.text());
    assert!(health.text().ends_with("ok"));
    let page = server.get("/").await;
    assert_eq!(page.status, 404, "{}", page.text());
    assert!(page.text().contains("cargo xtask run"));
    server.stop().await;
}

#[tokio::test]
async fn a_model_on_the_upgrade_url_is_the_default_for_frames_without_one() {
    let server = TestServer::start(":memory:").await;
    let mut client = common::connect_with_query(server.addr, &[("model", "gpt-5.6+mini")]).await;
    client
        .send(r#"{"type":"response.create","store":false,"input":"hi"}"#)
        .await;
    let events = client.response_events().await;
    assert_eq!(events.last().unwrap()["response"]["model"], "gpt-5.6+mini");
    // A frame's own model wins.
    client
        .send(r#"{"type":"response.create","model":"other","store":false,"input":"hi"}"#)
        .await;
    let events = client.response_events().await;
    assert_eq!(events.last().unwrap()["response"]["model"], "other");
    server.stop().await;
}
