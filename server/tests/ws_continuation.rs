//! WebSocket-mode continuations: the connection cache, store hydration, misses and eviction.

mod common;

use common::TestServer;
use serde_json::{Value, json};

fn shell_tool() -> Value {
    json!([{"type": "function", "name": "shell", "parameters": {"type": "object",
        "properties": {"command": {"type": "array", "items": {"type": "string"}}}, "required": ["command"]}}])
}

fn completed(events: &[Value]) -> &Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{last}");
    &last["response"]
}

fn error_of(event: &Value) -> (&Value, &Value) {
    assert_eq!(event["type"], "error", "{event}");
    (&event["status"], &event["error"]["code"])
}

#[tokio::test]
async fn a_tool_loop_continues_from_the_connection_cache() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    // Codex opens with a warm-up, then chains its first real turn from it.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "generate": false,
            "input": [{"type": "message", "role": "developer", "content": "You fix bugs."}],
            "tools": shell_tool()})
            .to_string(),
        )
        .await;
    let warm = completed(&client.response_events().await).clone();
    assert_eq!(warm["output"], json!([]));

    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false,
            "previous_response_id": warm["id"], "tools": shell_tool(),
            "input": [{"type": "message", "role": "user", "content": "list the files"}]})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"response.function_call_arguments.delta"));
    assert!(types.contains(&"response.function_call_arguments.done"));
    let first = completed(&events).clone();
    let call = &first["output"][0];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["name"], "shell");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"command": []}));

    // The next frame holds just the tool output.
    client
        .send(&json!({"type": "response.create", "model": "m", "store": false,
            "previous_response_id": first["id"], "tools": shell_tool(),
            "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "README.md\nsrc/"}]})
        .to_string())
        .await;
    let second = completed(&client.response_events().await).clone();
    let text = second["output"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("The tool returned \"README.md\nsrc/\""),
        "{text}"
    );
    assert!(
        text.contains("\"list the files\""),
        "the context reaches back to the first turn: {text}"
    );
    // Input tokens cover the whole context, not just the new item.
    assert!(second["usage"]["input_tokens"].as_u64() > first["usage"]["input_tokens"].as_u64());

    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        2
    );
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"store\"}")
            .await,
        0
    );
    assert_eq!(
        server
            .metric("tether_responses_total{transport=\"ws\"}")
            .await,
        3
    );
    assert_eq!(server.metric("tether_ws_connections_active").await, 1);
    server.stop().await;
}

#[tokio::test]
async fn after_a_reconnect_stored_responses_hydrate_and_unstored_ones_are_not_found() {
    let server = TestServer::start(":memory:").await;
    let mut first = server.connect().await;
    first.send(&json!({"type": "response.create", "model": "m", "store": true, "input": "remember me"}).to_string()).await;
    let stored = completed(&first.response_events().await)["id"].clone();
    first
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "forget me"})
                .to_string(),
        )
        .await;
    let unstored = completed(&first.response_events().await)["id"].clone();
    drop(first);

    let mut second = server.connect().await;
    second
        .send(&json!({"type": "response.create", "model": "m", "previous_response_id": unstored, "input": "again"}).to_string())
        .await;
    let error = second.next_json().await;
    let (status, code) = error_of(&error);
    assert_eq!(
        (status, code),
        (&json!(400), &json!("previous_response_not_found"))
    );
    assert_eq!(error["error"]["param"], "previous_response_id");

    second
        .send(&json!({"type": "response.create", "model": "m", "previous_response_id": stored, "input": []}).to_string())
        .await;
    let hydrated = completed(&second.response_events().await).clone();
    assert_eq!(hydrated["previous_response_id"], stored);
    assert!(
        hydrated["output"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("remember me")
    );
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"store\"}")
            .await,
        1
    );
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"miss\"}")
            .await,
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn a_failed_continuation_evicts_the_previous_response() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "hi"})
                .to_string(),
        )
        .await;
    let id = completed(&client.response_events().await)["id"].clone();

    // A tool output answering no call is refused ...
    client
        .send(&json!({"type": "response.create", "model": "m", "store": false, "previous_response_id": id,
            "input": [{"type": "function_call_output", "call_id": "call_nobody", "output": "x"}]}).to_string())
        .await;
    let error = client.next_json().await;
    assert_eq!(error["status"], 400);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("call_nobody")
    );
    // ... and the response it continued is gone from the cache (and was never stored).
    client
        .send(&json!({"type": "response.create", "model": "m", "store": false, "previous_response_id": id, "input": "retry"}).to_string())
        .await;
    assert_eq!(
        client.next_json().await["error"]["code"],
        "previous_response_not_found"
    );
    // The connection still serves fresh requests.
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "fresh"}).to_string())
        .await;
    completed(&client.response_events().await);
    server.stop().await;
}

#[tokio::test]
async fn a_finished_conversation_superseded_on_its_lane_is_kept_only_if_told_to() {
    for (superseded, kept) in [(0, false), (4, true)] {
        let mut config = common::config(":memory:");
        config.connection_cache_superseded = superseded;
        let server = TestServer::start_with(config).await;
        let mut client = server.connect().await;
        let mut answer = async |extra: Value| {
            let mut frame = json!({"type": "response.create", "model": "m", "store": false});
            frame
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            client.send(&frame.to_string()).await;
            // Its terminal event, or the error frame that refuses it.
            loop {
                let event = client.next_json().await;
                if event["type"] == "error" || event["type"] == "response.completed" {
                    return event;
                }
            }
        };
        // A lead agent's response calls a tool; the agent run as that tool, and then others,
        // answer on the same lane meanwhile.
        let lead = answer(json!({"input": "lead task", "tools": shell_tool()})).await;
        let call = lead["response"]["output"][0].clone();
        assert_eq!(call["type"], "function_call", "{lead}");
        // Two conversations one after the other on the default lane, a third on lane "side".
        let first = answer(json!({"input": "first task"})).await["response"]["id"].clone();
        let second = answer(json!({"input": "second task"})).await["response"]["id"].clone();
        answer(json!({"input": "side task", "stream_id": "side"})).await;
        // The second is its lane's latest: continued whatever the setting.
        let event = answer(json!({"previous_response_id": second, "input": "go on"})).await;
        assert_eq!(event["type"], "response.completed", "{event}");
        // The first was superseded by the second (store: false: nothing else holds it).
        let event = answer(json!({"previous_response_id": first, "input": "go on"})).await;
        if kept {
            assert_eq!(event["type"], "response.completed", "{superseded}: {event}");
        } else {
            assert_eq!(
                error_of(&event),
                (&json!(400), &json!("previous_response_not_found")),
                "{superseded}"
            );
        }
        // The lead waits for its tool's output: never superseded.
        let event = answer(json!({"previous_response_id": lead["response"]["id"],
            "tools": shell_tool(), "input": [{"type": "function_call_output",
            "call_id": call["call_id"], "output": "ok"}]}))
        .await;
        assert_eq!(event["type"], "response.completed", "{superseded}: {event}");
        // From memory: the second conversation's continuation, the lead's, and the first's
        // when kept.
        assert_eq!(
            server
                .metric("tether_cache_lookups_total{result=\"hit\"}")
                .await,
            2 + u64::from(kept),
            "{superseded}"
        );
        server.stop().await;
    }
}

#[tokio::test]
async fn item_references_resolve_against_the_previous_context() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "hello"})
                .to_string(),
        )
        .await;
    let first = completed(&client.response_events().await).clone();
    let message_id = first["output"][0]["id"].clone();
    client
        .send(&json!({"type": "response.create", "model": "m", "store": false, "previous_response_id": first["id"],
            "input": [{"type": "item_reference", "id": message_id}]}).to_string())
        .await;
    completed(&client.response_events().await);
    client
        .send(&json!({"type": "response.create", "model": "m", "input": [{"type": "item_reference", "id": "msg_missing"}]}).to_string())
        .await;
    let error = client.next_json().await;
    assert_eq!(error["status"], 400);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("msg_missing")
    );
    server.stop().await;
}

#[tokio::test]
async fn item_references_resolve_against_cached_and_stored_items_without_a_previous_response() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    // Unstored: the connection cache holds it.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "hello",
            "tools": shell_tool()})
            .to_string(),
        )
        .await;
    let first = completed(&client.response_events().await).clone();
    let call = &first["output"][0];
    assert_eq!(call["type"], "function_call", "{first}");
    // A full history again, the call by reference, its output after it: no previous response.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false,
            "tools": shell_tool(), "input": [
                {"type": "message", "role": "user", "content": "hello"},
                {"type": "item_reference", "id": call["id"]},
                {"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}]})
            .to_string(),
        )
        .await;
    let second = completed(&client.response_events().await).clone();
    assert_eq!(second["output"][0]["type"], "message", "{second}");
    // Stored: found from another connection (and over HTTP), through the store's item index.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": true, "input": "again",
            "tools": shell_tool()})
            .to_string(),
        )
        .await;
    let stored = completed(&client.response_events().await).clone();
    let stored_call = &stored["output"][0];
    let mut other = server.connect().await;
    other
        .send(&json!({"type": "response.create", "model": "m", "store": false,
            "tools": shell_tool(), "input": [
                {"type": "item_reference", "id": stored_call["id"]},
                {"type": "function_call_output", "call_id": stored_call["call_id"], "output": "ok"}]})
        .to_string())
        .await;
    completed(&other.response_events().await);
    // The unstored response's items are not visible from another connection.
    other
        .send(
            &json!({"type": "response.create", "model": "m",
            "input": [{"type": "item_reference", "id": call["id"]}]})
            .to_string(),
        )
        .await;
    let refused = other.next_json().await;
    assert_eq!(error_of(&refused).0, 400);
    server.stop().await;
}

#[tokio::test]
async fn stored_responses_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!("tether-restart-{}", std::process::id()));
    let dir_str = dir.to_str().unwrap().to_string();
    let server = TestServer::start(&dir_str).await;
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "durable"}).to_string())
        .await;
    let id = completed(&client.response_events().await)["id"]
        .as_str()
        .unwrap()
        .to_string();
    drop(client);
    server.stop().await;

    let server = TestServer::start(&dir_str).await;
    let reply = server.get(&format!("/v1/responses/{id}")).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.text().contains("durable"));
    server.stop().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn parallel_and_custom_tool_calls_round_trip() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    let tools = json!([
        {"type": "function", "name": "read_file", "parameters": {"type": "object",
            "properties": {"path": {"type": "string"}}, "required": ["path"]}},
        {"type": "custom", "name": "apply_patch", "description": "freeform patch"},
        {"type": "tool_search"}
    ]);
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "tools": tools,
            "parallel_tool_calls": true, "input": "fix it"})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"response.custom_tool_call_input.delta"));
    assert!(types.contains(&"response.custom_tool_call_input.done"));
    assert_eq!(
        types
            .iter()
            .filter(|t| **t == "response.output_item.done")
            .count(),
        2
    );
    let response = completed(&events).clone();
    let (function, custom) = (&response["output"][0], &response["output"][1]);
    assert_eq!(function["type"], "function_call");
    assert_eq!(custom["type"], "custom_tool_call");
    assert_eq!(custom["input"], "input for apply_patch");

    client
        .send(&json!({"type": "response.create", "model": "m", "store": false, "tools": tools,
            "previous_response_id": response["id"], "input": [
                {"type": "function_call_output", "call_id": function["call_id"], "output": "file text"},
                {"type": "custom_tool_call_output", "call_id": custom["call_id"], "output": "Done!"}
            ]}).to_string())
        .await;
    let answer = completed(&client.response_events().await).clone();
    let text = answer["output"][0]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("The tool returned \"Done!\""), "{text}");
    server.stop().await;
}
