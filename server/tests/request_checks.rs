//! The request checks that answer as the reference does: an input item of a type no Responses
//! input item has, and sampling or limit parameters out of their ranges, are 400s naming the
//! parameter (`server/src/pipeline/checks.rs`); so is a top-level field Tether does not know
//! (`unknown_parameter`) or knows and does not implement (`unsupported_parameter`,
//! `server/src/pipeline/parameters.rs`); the item types real clients replay keep being accepted.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tether_server::{AppState, app};
use tower::ServiceExt;

mod common;

fn router() -> Router {
    let config = common::config(":memory:");
    app(
        AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    )
}

/// `POST /v1/responses` with `body`: the status and the JSON answer.
async fn create(router: &Router, body: Value) -> (StatusCode, Value) {
    let request = Request::builder()
        .method("POST")
        .uri("/v1/responses")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")),
    )
}

/// `body` is refused with 400 `invalid_request_error`, naming `param`, with `code`.
async fn refused(router: &Router, body: Value, param: &str, code: &str) -> Value {
    let (status, answer) = create(router, body.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body} → {answer}");
    let error = &answer["error"];
    assert_eq!(error["type"], "invalid_request_error", "{answer}");
    assert_eq!(error["param"], param, "{body} → {answer}");
    assert_eq!(error["code"], code, "{body} → {answer}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    answer
}

async fn accepted(router: &Router, body: Value) -> Value {
    let (status, answer) = create(router, body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body} → {answer}");
    assert_eq!(answer["status"], "completed", "{answer}");
    answer
}

fn with(field: &str, value: Value) -> Value {
    let mut body = json!({"model": "tether-sim", "input": "hi", "store": false});
    body[field] = value;
    body
}

#[tokio::test]
async fn an_input_item_of_no_responses_type_is_refused_naming_its_type() {
    let router = router();
    let answer = refused(
        &router,
        json!({"model": "tether-sim", "store": false, "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "not_an_item", "id": "x"}
        ]}),
        "input[1].type",
        "invalid_value",
    )
    .await;
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("'not_an_item'"), "{message}");
    assert!(
        message.contains("'web_search_call'"),
        "lists the valid types: {message}"
    );
    // A typo of a modelled type is refused the same way.
    refused(
        &router,
        json!({"model": "tether-sim", "input": [{"type": "mesage", "role": "user", "content": "hi"}]}),
        "input[0].type",
        "invalid_value",
    )
    .await;
}

#[tokio::test]
async fn item_types_tether_does_not_model_are_still_accepted() {
    let router = router();
    // What Codex and the SDKs replay: every one is a Responses input item type. (A `compaction`
    // item is modelled: only one this server sealed is accepted, tests/dry_run.rs.)
    let replayed = json!([
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "q"}},
        {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_l", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}},
        {"type": "local_shell_call_output", "call_id": "call_l", "output": "ok"},
        {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": null},
        {"type": "tool_search_call", "id": "ts_1", "call_id": "call_t", "arguments": {}, "status": "completed"},
        {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "s", "tools": []},
        {"type": "message", "role": "user", "content": "and now?"}
    ]);
    accepted(
        &router,
        json!({"model": "tether-sim", "store": false, "input": replayed}),
    )
    .await;
}

#[tokio::test]
async fn temperature_and_top_p_out_of_range_are_refused() {
    let router = router();
    refused(
        &router,
        with("temperature", json!(2.5)),
        "temperature",
        "decimal_above_max_value",
    )
    .await;
    refused(
        &router,
        with("temperature", json!(-0.1)),
        "temperature",
        "decimal_below_min_value",
    )
    .await;
    refused(
        &router,
        with("top_p", json!(1.5)),
        "top_p",
        "decimal_above_max_value",
    )
    .await;
    refused(
        &router,
        with("top_p", json!(-1)),
        "top_p",
        "decimal_below_min_value",
    )
    .await;
    // The bounds themselves are fine.
    for (field, value) in [
        ("temperature", json!(0)),
        ("temperature", json!(2)),
        ("top_p", json!(0)),
        ("top_p", json!(1)),
    ] {
        accepted(&router, with(field, value)).await;
    }
}

#[tokio::test]
async fn top_logprobs_and_max_tool_calls_out_of_range_are_refused() {
    let router = router();
    refused(
        &router,
        with("top_logprobs", json!(21)),
        "top_logprobs",
        "integer_above_max_value",
    )
    .await;
    refused(
        &router,
        with("max_tool_calls", json!(0)),
        "max_tool_calls",
        "integer_below_min_value",
    )
    .await;
    // A negative value is not an integer of the field's type: refused as it decodes, naming it.
    for field in ["top_logprobs", "max_tool_calls"] {
        let (status, answer) = create(&router, with(field, json!(-1))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert_eq!(answer["error"]["param"], field, "{answer}");
    }
    accepted(&router, with("top_logprobs", json!(20))).await;
    accepted(&router, with("top_logprobs", json!(0))).await;
    accepted(&router, with("max_tool_calls", json!(1))).await;
}

#[tokio::test]
async fn truncation_takes_only_auto_or_disabled() {
    let router = router();
    let answer = refused(
        &router,
        with("truncation", json!("sometimes")),
        "truncation",
        "invalid_value",
    )
    .await;
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'sometimes'")
    );
    for value in ["auto", "disabled"] {
        let answer = accepted(&router, with("truncation", json!(value))).await;
        assert_eq!(answer["truncation"], value);
    }
}

#[tokio::test]
async fn an_unknown_parameter_is_refused_by_name() {
    let router = router();
    // A typo must not quietly start a new conversation.
    let answer = refused(
        &router,
        with("previous_responce_id", json!("resp_x")),
        "previous_responce_id",
        "unknown_parameter",
    )
    .await;
    assert_eq!(
        answer["error"]["message"],
        "Unknown parameter: 'previous_responce_id'."
    );
    refused(
        &router,
        with("frobnicate", json!(1)),
        "frobnicate",
        "unknown_parameter",
    )
    .await;
    // Not a Responses request parameter, though the Response object has it.
    refused(
        &router,
        with("presence_penalty", json!(0.5)),
        "presence_penalty",
        "unknown_parameter",
    )
    .await;
    // The endpoints that stop before the engine take the same parameters.
    let request = Request::builder()
        .method("POST")
        .uri("/v1/responses/input_tokens")
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"input": "hi", "frobnicate": 1}).to_string(),
        ))
        .unwrap();
    let reply = router.clone().oneshot(request).await.unwrap();
    assert_eq!(reply.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn known_parameters_tether_does_not_implement_say_so() {
    let router = router();
    for (field, value, param) in [
        ("prompt", json!({"id": "pmpt_1"}), "prompt"),
        (
            "moderation",
            json!({"model": "omni-moderation-latest"}),
            "moderation",
        ),
        (
            "stream_options",
            json!({"include_obfuscation": true}),
            "stream_options.include_obfuscation",
        ),
        ("stream_id", json!("lane"), "stream_id"),
    ] {
        let answer = refused(&router, with(field, value), param, "unsupported_parameter").await;
        assert!(
            answer["error"]["message"].as_str().unwrap().contains("not"),
            "{answer}"
        );
    }
    accepted(
        &router,
        with("stream_options", json!({"include_obfuscation": false})),
    )
    .await;
    refused(
        &router,
        json!({"model": "tether-sim", "input": "hi", "conversation": "conv_1",
               "previous_response_id": "resp_1"}),
        "conversation",
        "mutually_exclusive_parameters",
    )
    .await;
}

#[tokio::test]
async fn included_encrypted_reasoning_is_the_sealed_summary() {
    let router = router();
    let mut body = with("metadata", json!({"sim_reasoning_tokens": "20"}));
    let plain = accepted(&router, body.clone()).await;
    assert_eq!(plain["output"][0]["type"], "reasoning", "{plain}");
    assert!(
        plain["output"][0].get("encrypted_content").is_none(),
        "{plain}"
    );
    body["include"] = json!(["reasoning.encrypted_content"]);
    let sealed = accepted(&router, body).await;
    let reasoning = &sealed["output"][0];
    let content = reasoning["encrypted_content"].as_str().unwrap();
    assert!(content.starts_with("tc1."), "{reasoning}");
    // Replayed statelessly, the item is input like any other reasoning item.
    let mut replay = with(
        "input",
        json!([
            {"type": "message", "role": "user", "content": "hi"},
            reasoning,
            {"type": "message", "role": "user", "content": "go on"}
        ]),
    );
    replay["include"] = json!(["reasoning.encrypted_content"]);
    accepted(&router, replay).await;
}

#[tokio::test]
async fn over_websocket_a_refusal_is_an_error_frame_with_status_and_param() {
    let server = common::TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    for (frame, param, code) in [
        (
            json!({"type": "response.create", "model": "tether-sim", "input": "hi", "temperature": 9}),
            "temperature",
            "decimal_above_max_value",
        ),
        (
            json!({"type": "response.create", "model": "tether-sim",
                   "input": [{"type": "bogus_item"}]}),
            "input[0].type",
            "invalid_value",
        ),
        (
            json!({"type": "response.create", "model": "tether-sim", "input": "hi",
                   "truncation": "never"}),
            "truncation",
            "invalid_value",
        ),
        (
            json!({"type": "response.create", "model": "tether-sim", "input": "hi",
                   "previous_responce_id": "resp_x"}),
            "previous_responce_id",
            "unknown_parameter",
        ),
        (
            json!({"type": "response.create", "model": "tether-sim", "input": "hi",
                   "background": true}),
            "background",
            "invalid_request_error",
        ),
    ] {
        client.send(&frame.to_string()).await;
        let error = client.next_json().await;
        assert_eq!(error["type"], "error", "{error}");
        assert_eq!(error["status"], 400, "{error}");
        assert_eq!(error["error"]["param"], param, "{error}");
        assert_eq!(error["error"]["code"], code, "{error}");
        assert!(
            error.get("sequence_number").is_none(),
            "refused before the response began: {error}"
        );
    }
    // The connection stays usable.
    client
        .send(
            &json!({"type": "response.create", "model": "tether-sim", "input": "still here"})
                .to_string(),
        )
        .await;
    let events = client.response_events().await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    server.stop().await;
}
