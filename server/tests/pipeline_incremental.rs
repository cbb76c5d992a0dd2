//! The incremental pipeline: a WebSocket continuation renders only its new items, yet counts
//! exactly the tokens a full render of the same conversation counts; stages are timed and the
//! usage is billed.

mod common;

use common::{TestServer, config};
use serde_json::{Value, json};
use tether_server::stages::classify::ClassifierPolicy;

fn completed(events: &[Value]) -> Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{last}");
    last["response"].clone()
}

#[tokio::test]
async fn a_continuation_counts_the_same_tokens_as_a_full_render() {
    let server = TestServer::start(":memory:").await;
    // With the timing summary, which says how many tokens the connection cache supplied.
    let mut client = common::connect_with_query(server.addr, &[("tether_timing", "1")]).await;
    let tools = read_file_tools();
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "tools": tools,
            "instructions": "Be precise.", "input": "Read the config file."})
            .to_string(),
        )
        .await;
    let first = completed(&client.response_events().await);
    let call = first["output"][0].clone();
    let output = json!({"type": "function_call_output", "call_id": call["call_id"], "output": "port = 8080\nhost = 'localhost'"});
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "tools": tools,
            "instructions": "Be precise.", "previous_response_id": first["id"], "input": [output]})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let second = completed(&events);
    let usage = &second["usage"];
    let reused = events.last().unwrap()["tether_timing"]["tokens"]["reused_by_connection"]
        .as_u64()
        .unwrap();
    let input = usage["input_tokens"].as_u64().unwrap();
    assert!(
        reused >= first["usage"]["input_tokens"].as_u64().unwrap(),
        "the whole first prompt is reused"
    );
    assert!(reused < input, "the new item is not");
    // `cached_tokens` is the engine's prompt cache, not the connection's: a prompt this short
    // (under 1,024 tokens) is not cached on either transport.
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 0);

    // The same conversation sent whole, statelessly, over HTTP.
    let body = json!({"model": "m", "store": false, "tools": tools, "instructions": "Be precise.",
        "input": [{"role": "user", "content": "Read the config file."}, call, output]});
    let response = server.post_json("/v1/responses", &body).await;
    assert_eq!(response["usage"]["input_tokens"].as_u64().unwrap(), input);
    assert_eq!(
        response["usage"]["input_tokens_details"]["cached_tokens"],
        0
    );

    let metrics = server.get("/metrics").await.text();
    for series in [
        "tether_stage_duration_seconds_count{path=\"ws_hit\",stage=\"render\"} 1",
        "tether_stage_duration_seconds_count{path=\"ws_miss\",stage=\"render\"} 1",
        "tether_stage_duration_seconds_count{path=\"http\",stage=\"render\"} 1",
        "tether_stage_duration_seconds_count{path=\"ws_hit\",stage=\"validate\"} 1",
        "tether_stage_duration_seconds_count{path=\"http\",stage=\"classify\"} 1",
        "tether_stage_duration_seconds_count{path=\"http\",stage=\"bill\"} 1",
    ] {
        assert!(metrics.contains(series), "missing {series}");
    }
    server.stop().await;
}

#[tokio::test]
async fn secrets_are_flagged_or_refused_per_policy() {
    let secret = "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let server = TestServer::start(":memory:").await;
    let response = server
        .post_json("/v1/responses", &json!({"model": "m", "input": secret}))
        .await;
    assert_eq!(response["status"], "completed", "flagging lets it through");
    let metrics = server.get("/metrics").await.text();
    assert!(
        metrics.contains("tether_classifier_findings_total{rule=\"openai_api_key\"} 1"),
        "{metrics}"
    );
    server.stop().await;

    let mut cfg = config(":memory:");
    cfg.classifier = ClassifierPolicy::Refuse;
    let server = TestServer::start_with(cfg).await;
    let refused = server
        .post_json("/v1/responses", &json!({"model": "m", "input": secret}))
        .await;
    assert_eq!(refused["error"]["code"], "sensitive_content", "{refused}");
    assert!(
        !refused.to_string().contains("sk-proj"),
        "the secret is never echoed"
    );
    server.stop().await;
}

#[tokio::test]
async fn broken_tool_schemas_are_refused() {
    let server = TestServer::start(":memory:").await;
    let response = server
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "x",
            "tools": [{"type": "function", "name": "f", "parameters": {"type": 12}}]}),
        )
        .await;
    assert_eq!(
        response["error"]["param"], "tools[0].parameters",
        "{response}"
    );
    server.stop().await;
}

#[tokio::test]
async fn websocket_responses_are_billed_and_stored_behind_the_reply() {
    let dir = std::env::temp_dir().join(format!("tether-ledger-{}", std::process::id()));
    let server = TestServer::start(dir.to_str().unwrap()).await;
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "bill me"}).to_string())
        .await;
    let id = completed(&client.response_events().await)["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Readable at once, whether or not the background write has happened yet.
    assert!(server.get(&format!("/v1/responses/{id}")).await.status == 200);
    drop(client);
    server.stop().await;
    let store = tether_server::store::SqliteStore::open(&dir).unwrap();
    use tether_server::store::ResponseStore;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let ledger = store.ledger(&id).await.unwrap();
        if ledger.len() == 1 {
            assert_eq!(ledger[0].transport, "ws");
            assert!(ledger[0].input_tokens > 0);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the ledger line was never written"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(store.get("default", &id).await.unwrap().is_some());
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn the_timing_summary_is_sent_only_on_request() {
    let server = TestServer::start(":memory:").await;
    let mut client = common::connect_with_headers(server.addr, &[("x-tether-timing", "1")]).await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "one"})
                .to_string(),
        )
        .await;
    let first = client.response_events().await;
    assert_eq!(first.last().unwrap()["tether_timing"]["path"], "ws_miss");
    assert!(
        first[..first.len() - 1]
            .iter()
            .all(|e| e.get("tether_timing").is_none())
    );
    let id = first.last().unwrap()["response"]["id"].clone();
    client
        .send(&json!({"type": "response.create", "model": "m", "store": false, "previous_response_id": id, "input": "two"}).to_string())
        .await;
    let timing = client.response_events().await.last().unwrap()["tether_timing"].clone();
    assert_eq!(timing["path"], "ws_hit");
    for stage in [
        "resolve_us",
        "render_us",
        "validate_us",
        "classify_us",
        "generate_us",
    ] {
        assert!(timing["stages"][stage].is_u64(), "{stage} in {timing}");
    }

    let mut plain = server.connect().await;
    plain
        .send(&json!({"type": "response.create", "model": "m", "input": "x"}).to_string())
        .await;
    assert!(
        plain
            .response_events()
            .await
            .iter()
            .all(|e| e.get("tether_timing").is_none())
    );
    server.stop().await;
}

#[tokio::test]
async fn browsers_ask_for_the_timing_summary_on_the_upgrade_url() {
    let server = TestServer::start(":memory:").await;
    let request = json!({"type": "response.create", "model": "m", "store": false, "input": "q"});
    let summary_of = |events: Vec<Value>| events.last().unwrap().get("tether_timing").cloned();

    for (query, wanted) in [
        (&[("tether_timing", "1")][..], true),
        (&[("a", "b"), ("tether_timing", "1")][..], true),
        (&[("tether_timing", "0")][..], false),
        (&[("tether_timing", "10")][..], false),
        (&[][..], false),
    ] {
        let mut client = common::connect_with_query(server.addr, query).await;
        client.send(&request.to_string()).await;
        let summary = summary_of(client.response_events().await);
        assert_eq!(summary.is_some(), wanted, "{query:?}: {summary:?}");
        if let Some(summary) = summary {
            assert_eq!(summary["path"], "ws_miss");
            assert!(summary["stages"]["render_us"].is_u64(), "{summary}");
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn a_conversation_paused_behind_many_others_continues_with_the_same_tokens() {
    let server = TestServer::start(":memory:").await;
    let mut client = common::connect_with_query(server.addr, &[("tether_timing", "1")]).await;
    let tools = read_file_tools();
    let create = |extra: Value| {
        let mut frame = json!({"type": "response.create", "model": "m", "store": false,
            "tools": tools, "instructions": "Be precise."});
        frame
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        frame.to_string()
    };
    // A finding in the first input (the default policy flags it): scanned once, when sent. On
    // a lane of its own, so it stays that lane's latest response, which the cache keeps.
    client
        .send(&create(json!({"stream_id": "paused",
            "input": "Read the config file; mail ops@example.com if it is missing."})))
        .await;
    let first = completed(&client.response_events().await);
    // 40 other conversations on the same connection, one after the other on the default lane:
    // past the point where the cache compacts the paused one's entry (16 responses) and gives
    // up its rendering (32).
    for i in 0..40 {
        client
            .send(&create(
                json!({"input": format!("Another task, number {i}.")}),
            ))
            .await;
        completed(&client.response_events().await);
    }
    let call = first["output"][0].clone();
    let output = json!({"type": "function_call_output", "call_id": call["call_id"],
        "output": "port = 8080\nhost = 'localhost'"});
    client
        .send(&create(
            json!({"stream_id": "paused", "previous_response_id": first["id"], "input": [output]}),
        ))
        .await;
    let events = client.response_events().await;
    let continued = completed(&events);
    let timing = &events.last().unwrap()["tether_timing"];
    assert_eq!(
        timing["tokens"]["reused_by_connection"], 0,
        "rendered again: {timing}"
    );
    // Still served from the connection's cache (store: false has no other copy), and with the
    // tokens a full render of the same conversation counts.
    // Only the new input is checked again: the first input's finding is still counted once.
    let metrics = server.get("/metrics").await.text();
    assert!(
        metrics.contains("tether_classifier_findings_total{rule=\"email_address\"} 1"),
        "{metrics}"
    );
    let body = json!({"model": "m", "store": false, "tools": tools, "instructions": "Be precise.",
        "input": [{"role": "user", "content": "Read the config file; mail ops@example.com if it is missing."}, call, output]});
    let whole = server.post_json("/v1/responses", &body).await;
    assert_eq!(
        continued["usage"]["input_tokens"],
        whole["usage"]["input_tokens"]
    );
    server.stop().await;
}

/// The one tool both conversations offer.
fn read_file_tools() -> Value {
    json!([{"type": "function", "name": "read_file", "parameters": {"type": "object",
        "properties": {"path": {"type": "string"}}, "required": ["path"]}}])
}
