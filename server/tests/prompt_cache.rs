//! The engine's prompt cache, through the server: shared by both transports, exact prefixes in
//! 128-token steps or at breakpoints, keyed by `prompt_cache_key`, with diagnostics against an
//! earlier response, and replicas a connection sticks to while stateless traffic spills.
//! `cached_tokens` is what the engine read from it; `cache_write_tokens` what it wrote.

mod common;

use common::TestServer;
use serde_json::{Value, json};

/// About `n` tokens of text ("word" is one token, and so is " word").
fn words(n: usize) -> String {
    "word ".repeat(n)
}

fn usage(response: &Value) -> (u64, u64, u64) {
    let usage = &response["usage"];
    (
        usage["input_tokens"].as_u64().unwrap(),
        usage["input_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap(),
        usage["input_tokens_details"]["cache_write_tokens"]
            .as_u64()
            .unwrap(),
    )
}

fn completed(events: &[Value]) -> Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{last}");
    last["response"].clone()
}

#[tokio::test]
async fn both_transports_share_one_cache_in_128_token_steps() {
    let server = TestServer::start(":memory:").await;
    let history = json!([{"role": "user", "content": words(1500)}]);
    // First over HTTP: nothing to read, every whole block of 128 tokens written.
    let first = server
        .post_json(
            "/v1/responses",
            &json!({"model": "spark", "store": false, "input": history}),
        )
        .await;
    let (input, cached, written) = usage(&first);
    assert!(input > 1500, "{input}");
    assert_eq!(cached, 0);
    assert_eq!(written, input / 128 * 128);

    // The same conversation and a new question, over a fresh WebSocket connection (no
    // connection cache to help): the engine still holds the prefix the HTTP request wrote.
    let mut conversation = history.as_array().unwrap().clone();
    conversation.extend(first["output"].as_array().unwrap().iter().cloned());
    conversation.push(json!({"role": "user", "content": "And then?"}));
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "spark", "store": false,
                "input": conversation})
            .to_string(),
        )
        .await;
    let second = completed(&client.response_events().await);
    let (input2, cached2, written2) = usage(&second);
    assert_eq!(cached2, written, "the HTTP request's prefix, whole blocks");
    assert_eq!(cached2 % 128, 0);
    assert_eq!(written2, input2 / 128 * 128 - cached2);
    // A different prompt_cache_key is a different cache: nothing read.
    let keyed = server
        .post_json(
            "/v1/responses",
            &json!({"model": "spark", "store": false, "input": history,
                "prompt_cache_key": "another-conversation"}),
        )
        .await;
    assert_eq!(usage(&keyed).1, 0);
    // A prompt under 1,024 tokens is not cached at all.
    let short = server
        .post_json("/v1/responses", &json!({"model": "spark", "input": "hi"}))
        .await;
    assert_eq!(usage(&short), (usage(&short).0, 0, 0));
    assert!(
        server
            .metric("vllm:prefix_cache_hits_total{model_name=\"spark\"}")
            .await
            > 0
    );
    server.stop().await;
}

#[tokio::test]
async fn implicit_breakpoints_read_exactly_what_the_last_turn_wrote() {
    let server = TestServer::start(":memory:").await;
    let tools = json!([{"type": "function", "name": "shell", "parameters": {"type": "object",
        "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}]);
    let options = json!({"mode": "implicit", "ttl": "12h"});
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "spark", "store": false, "tools": tools,
                "prompt_cache_options": options, "input": words(1200)})
            .to_string(),
        )
        .await;
    let first = completed(&client.response_events().await);
    let (input, cached, written) = usage(&first);
    assert_eq!(
        (cached, written),
        (0, input),
        "one breakpoint, at the prompt's end"
    );
    assert_eq!(
        first["usage"]["input_tokens_details"]["cache_write_tokens_details"],
        json!({"ttl_30m_tokens": 0, "ttl_12h_tokens": input})
    );
    assert_eq!(
        first["prompt_cache_options"],
        json!({"mode": "implicit", "ttl": "12h", "comparison_response_id": null})
    );
    // The model called the tool; its output goes back on the same connection.
    let call = &first["output"][0];
    assert_eq!(call["type"], "function_call", "{first}");
    client
        .send(
            &json!({"type": "response.create", "model": "spark", "store": false, "tools": tools,
                "prompt_cache_options": options, "previous_response_id": first["id"],
                "input": [{"type": "function_call_output", "call_id": call["call_id"],
                    "output": words(300)}]})
            .to_string(),
        )
        .await;
    let second = completed(&client.response_events().await);
    let (input2, cached2, written2) = usage(&second);
    assert_eq!(
        cached2, input,
        "exactly the first prompt, not rounded to a block"
    );
    assert_eq!(written2, input2 - input, "the tool call and its output");

    // Explicit mode without a marker caches nothing; with one, up to it.
    let explicit = json!({"mode": "explicit"});
    let unmarked = server
        .post_json(
            "/v1/responses",
            &json!({"model": "spark", "store": false, "prompt_cache_options": explicit,
                "input": words(1300)}),
        )
        .await;
    assert_eq!(usage(&unmarked).1 + usage(&unmarked).2, 0);
    let marked = server
        .post_json(
            "/v1/responses",
            &json!({"model": "spark", "store": false, "prompt_cache_options": explicit,
                "input": [
                    {"role": "developer", "content": [{"type": "input_text", "text": words(1300),
                        "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "30m"}}]},
                    {"role": "user", "content": "What now?"}]}),
        )
        .await;
    let (marked_input, _, marked_written) = usage(&marked);
    assert!(
        marked_written > 1300 && marked_written < marked_input,
        "up to the marker"
    );
    server.stop().await;
}

#[tokio::test]
async fn diagnostics_name_why_the_cache_was_not_reused() {
    let server = TestServer::start(":memory:").await;
    let create = |tools: Value, comparison: Option<&str>| {
        json!({"model": "spark", "store": false, "input": words(1400), "tools": tools,
            "prompt_cache_options": {"mode": "implicit", "comparison_response_id": comparison}})
    };
    let no_tools = json!([]);
    let first = server
        .post_json("/v1/responses", &create(no_tools.clone(), None))
        .await;
    let id = first["id"].as_str().unwrap();
    let again = server
        .post_json("/v1/responses", &create(no_tools.clone(), Some(id)))
        .await;
    assert_eq!(
        again["prompt_cache_diagnostics"],
        json!({"type": "cache_hit"})
    );
    let tools = json!([{"type": "function", "name": "shell"}]);
    let changed = server
        .post_json("/v1/responses", &create(tools, Some(id)))
        .await;
    assert_eq!(changed["prompt_cache_diagnostics"]["type"], "cache_miss");
    assert_eq!(
        changed["prompt_cache_diagnostics"]["reason"],
        "tools_changed"
    );
    let unknown = server
        .post_json("/v1/responses", &create(no_tools, Some("resp_nowhere")))
        .await;
    assert_eq!(
        unknown["prompt_cache_diagnostics"],
        json!({"type": "comparison_response_not_found"})
    );
    server.stop().await;
}

#[tokio::test]
async fn stateless_traffic_spills_to_cold_replicas_while_a_connection_keeps_its_own() {
    let mut config = common::config(":memory:");
    config.admin_key = Some("admin".into());
    let server = TestServer::start_with(config).await;
    // Two replicas; one request a minute per prefix and key before spilling.
    let change = json!({"profiles": {"spark": {"replicas": 2, "spill_requests_per_minute": 1.0}}});
    let reply = admin_patch(&server, &change).await.text();
    assert!(reply.contains("\"replicas\":2"), "{reply}");
    let body = json!({"model": "spark", "store": false, "input": words(1500)});
    let first = server.post_json("/v1/responses", &body).await;
    assert!(usage(&first).2 > 0, "written on the first replica");
    let spilled = server.post_json("/v1/responses", &body).await;
    assert_eq!(usage(&spilled).1, 0, "spilled to the second replica: cold");
    // A WebSocket connection keeps the replica its first request went to.
    let mut client = server.connect().await;
    let mut hits = Vec::new();
    for _ in 0..3 {
        client
            .send(
                &json!({"type": "response.create", "model": "spark", "store": false,
                    "input": words(1500)})
                .to_string(),
            )
            .await;
        hits.push(usage(&completed(&client.response_events().await)).1);
    }
    assert!(
        hits[1] > 0 && hits[2] > 0,
        "the same replica every turn: {hits:?}"
    );
    server.stop().await;
}

/// `PATCH /admin/simulator` with the admin key `admin`; the reply.
async fn admin_patch(server: &TestServer, change: &Value) -> tether_client::Reply {
    let admin = server.endpoint().with_api_key("admin");
    common::request(&admin, "PATCH", "/admin/simulator", Some(change)).await
}

#[tokio::test]
async fn prompt_cache_settings_take_only_the_documented_values() {
    let server = TestServer::start(":memory:").await;
    for (body, param) in [
        (
            json!({"prompt_cache_retention": "forever"}),
            "prompt_cache_retention",
        ),
        (
            json!({"prompt_cache_options": "on"}),
            "prompt_cache_options",
        ),
        (
            json!({"prompt_cache_options": {"mode": "always"}}),
            "prompt_cache_options.mode",
        ),
        (
            json!({"prompt_cache_options": {"ttl": "1h"}}),
            "prompt_cache_options.ttl",
        ),
    ] {
        let mut request = json!({"model": "spark", "input": "hi"});
        request
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        let reply = server.post_json("/v1/responses", &request).await;
        assert_eq!(reply["error"]["param"], param, "{reply}");
    }
    // `24h` retention and a `prewarm` are fine; a prewarm samples nothing but writes the cache.
    let prewarm = server
        .post_json(
            "/v1/responses",
            &json!({"model": "spark", "store": false, "input": words(1500),
                "prompt_cache_retention": "24h", "prompt_cache_options": {"prewarm": true}}),
        )
        .await;
    assert_eq!(prewarm["output"], json!([]), "{prewarm}");
    assert!(usage(&prewarm).2 > 1500);
    server.stop().await;
}
