//! The HTTP endpoints real clients call besides creating responses: counting input tokens,
//! compacting a conversation (and expanding the compaction item when it comes back, over both
//! transports), cancelling.

mod common;

use common::TestServer;
use serde_json::{Value, json};

fn tool() -> Value {
    json!({"type": "function", "name": "shell", "description": "Runs a command.",
           "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                          "required": ["cmd"]}})
}

/// A stored conversation: a question, a tool call, its long output, the answer.
async fn conversation(server: &TestServer) -> (String, u64) {
    let first = server
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "why does the build fail?", "tools": [tool()]}),
        )
        .await;
    let call_id = first["output"][0]["call_id"].as_str().unwrap();
    let log = "error[E0308]: mismatched types\n".repeat(200);
    let second = server
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "previous_response_id": first["id"], "tools": [tool()],
                    "input": [{"type": "function_call_output", "call_id": call_id, "output": log}]}),
        )
        .await;
    assert_eq!(second["status"], "completed", "{second}");
    (
        second["id"].as_str().unwrap().to_string(),
        second["usage"]["input_tokens"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn input_tokens_counts_what_usage_counts() {
    let server = TestServer::start(":memory:").await;
    let body = json!({"model": "m", "input": "count these words please", "instructions": "Be brief.",
                      "tools": [tool()], "tool_choice": "none"});
    let counted = server.post_json("/v1/responses/input_tokens", &body).await;
    assert_eq!(counted["object"], "response.input_tokens");
    let created = server.post_json("/v1/responses", &body).await;
    assert_eq!(counted["input_tokens"], created["usage"]["input_tokens"]);

    // With a previous response: its whole conversation counts.
    let (id, _) = conversation(&server).await;
    let next = json!({"model": "m", "previous_response_id": id, "input": "and now?",
                      "tools": [tool()], "tool_choice": "none"});
    let counted = server.post_json("/v1/responses/input_tokens", &next).await;
    let created = server.post_json("/v1/responses", &next).await;
    assert_eq!(counted["input_tokens"], created["usage"]["input_tokens"]);

    // Every field is optional; bad ones are refused as a create would refuse them.
    let empty = server
        .post_json("/v1/responses/input_tokens", &json!({}))
        .await;
    assert_eq!(empty["input_tokens"], 0, "nothing to render");
    let refused = server
        .post_json(
            "/v1/responses/input_tokens",
            &json!({"previous_response_id": "resp_nope"}),
        )
        .await;
    assert_eq!(refused["error"]["param"], "previous_response_id");
    server.stop().await;
}

#[tokio::test]
async fn a_compacted_conversation_continues_smaller_over_both_transports() {
    let server = TestServer::start(":memory:").await;
    let (id, full) = conversation(&server).await;
    let compacted = server
        .post_json(
            "/v1/responses/compact",
            &json!({"model": "m", "previous_response_id": id}),
        )
        .await;
    assert_eq!(compacted["object"], "response.compaction", "{compacted}");
    assert!(compacted["id"].as_str().unwrap().starts_with("resp_"));
    let output = compacted["output"].as_array().unwrap();
    // The user message, then one compaction item.
    assert_eq!(output.len(), 2, "{output:?}");
    assert_eq!(output[0]["role"], "user");
    assert_eq!(output[0]["content"][0]["text"], "why does the build fail?");
    assert_eq!(output[1]["type"], "compaction");
    let content = output[1]["encrypted_content"].as_str().unwrap();
    assert!(!content.contains("mismatched"), "opaque: {content}");
    assert!(compacted["usage"]["input_tokens"].as_u64().unwrap() >= full);
    assert!(compacted["usage"]["output_tokens"].as_u64().unwrap() > 0);

    // Sent back as input, it starts a new chain that reads the summary, not the whole log.
    let mut input = output.clone();
    input.push(json!({"role": "user", "content": "so what is wrong?"}));
    let body = json!({"model": "m", "input": input, "tools": [tool()], "tool_choice": "none"});
    let continued = server.post_json("/v1/responses", &body).await;
    assert_eq!(continued["status"], "completed", "{continued}");
    let smaller = continued["usage"]["input_tokens"].as_u64().unwrap();
    assert!(
        smaller * 3 < full,
        "{smaller} tokens after compaction, {full} before"
    );

    // The same over WebSocket.
    let mut client = server.connect().await;
    let mut frame = body.clone();
    frame["type"] = json!("response.create");
    client.send(&frame.to_string()).await;
    let events = client.response_events().await;
    let done = &events.last().unwrap()["response"];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["usage"]["input_tokens"], smaller);

    // An altered content is refused, naming it.
    let mut forged = output.clone();
    let (head, _) = content.rsplit_once('.').unwrap();
    forged[1]["encrypted_content"] = json!(format!("{head}.AAAA"));
    let refused = server
        .post_json("/v1/responses", &json!({"model": "m", "input": forged}))
        .await;
    assert_eq!(refused["error"]["code"], "invalid_encrypted_content");
    assert_eq!(refused["error"]["param"], "input[1].encrypted_content");
    server.stop().await;
}

#[tokio::test]
async fn compact_needs_a_model_and_a_real_conversation() {
    let server = TestServer::start(":memory:").await;
    let refused = server
        .post_json("/v1/responses/compact", &json!({"input": "hi"}))
        .await;
    assert_eq!(refused["error"]["param"], "model");
    let refused = server
        .post_json(
            "/v1/responses/compact",
            &json!({"model": "m", "previous_response_id": "resp_nope"}),
        )
        .await;
    assert_eq!(refused["error"]["param"], "previous_response_id");
    // Only user messages: nothing to compact, they come back as they are.
    let compacted = server
        .post_json(
            "/v1/responses/compact",
            &json!({"model": "m", "input": "just this"}),
        )
        .await;
    assert_eq!(compacted["output"].as_array().unwrap().len(), 1);
    assert_eq!(compacted["usage"]["output_tokens"], 0);
    server.stop().await;
}

#[tokio::test]
async fn cancel_is_for_background_responses_only() {
    let server = TestServer::start(":memory:").await;
    let (id, _) = conversation(&server).await;
    let refused = server
        .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("background"),
        "{refused}"
    );
    assert_eq!(refused["error"]["type"], "invalid_request_error");
    let unknown = server
        .post_json("/v1/responses/resp_nope/cancel", &json!({}))
        .await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not found"),
        "{unknown}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_compaction_opens_after_a_restart_on_the_same_data_directory() {
    let dir = std::env::temp_dir().join(format!("tether-compact-{}", rand::random::<u64>()));
    let data_dir = dir.to_str().unwrap().to_string();
    let server = TestServer::start(&data_dir).await;
    let (id, _) = conversation(&server).await;
    let compacted = server
        .post_json(
            "/v1/responses/compact",
            &json!({"model": "m", "previous_response_id": id}),
        )
        .await;
    server.stop().await;

    let server = TestServer::start(&data_dir).await;
    let continued = server
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": compacted["output"]}),
        )
        .await;
    assert_eq!(continued["status"], "completed", "{continued}");
    server.stop().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
