//! The HTTP API, driven through the router without a socket (`tower::ServiceExt::oneshot`).

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

async fn call(
    router: &Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, String, String) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        // The official SDKs send this even when streaming; it must not matter.
        .header("accept", "application/json")
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        content_type,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

async fn json_call(
    router: &Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let (status, _, text) = call(router, method, uri, body).await;
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")),
    )
}

#[tokio::test]
async fn create_returns_the_completed_response() {
    let router = router();
    let (status, response) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "gpt-x", "input": "ping"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(response["object"], "response");
    assert_eq!(response["status"], "completed");
    assert_eq!(response["model"], "gpt-x");
    assert!(
        response["output"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"ping\"")
    );
    assert!(response["usage"]["output_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn stream_true_answers_with_server_sent_events() {
    let router = router();
    let (status, content_type, body) = call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "stream me", "stream": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let events: Vec<(String, Value)> = body
        .split("\n\n")
        .filter(|block| !block.trim().is_empty() && !block.starts_with(':'))
        .map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap()
                .to_string();
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            (name, serde_json::from_str(data).unwrap())
        })
        .collect();
    assert_eq!(events.first().unwrap().0, "response.created");
    assert_eq!(events.last().unwrap().0, "response.completed");
    for (i, (name, data)) in events.iter().enumerate() {
        assert_eq!(
            &data["type"], name,
            "the event name matches the payload type"
        );
        assert_eq!(data["sequence_number"], i);
    }
    assert!(!body.contains("[DONE]"));
}

#[tokio::test]
async fn stored_responses_can_be_read_listed_chained_and_deleted() {
    let router = router();
    let (_, first) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "one"})),
    )
    .await;
    let id = first["id"].as_str().unwrap();
    let (status, fetched) = json_call(&router, "GET", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fetched, first);

    let (status, second) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "previous_response_id": id, "input": "two"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let second_id = second["id"].as_str().unwrap();

    // Input of the second response: "one", the first answer, "two" — newest first by default.
    let (status, page) = json_call(
        &router,
        "GET",
        &format!("/v1/responses/{second_id}/input_items"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["object"], "list");
    let data = page["data"].as_array().unwrap();
    assert_eq!(data.len(), 3);
    assert_eq!(data[0]["content"][0]["text"], "two");
    assert_eq!(data[0]["content"][0]["type"], "input_text");
    assert_eq!(data[2]["content"][0]["text"], "one");
    assert!(data.iter().all(|item| item["id"].is_string()));
    assert_eq!(page["has_more"], false);

    let (_, asc) = json_call(
        &router,
        "GET",
        &format!("/v1/responses/{second_id}/input_items?order=asc&limit=1"),
        None,
    )
    .await;
    assert_eq!(asc["data"][0]["content"][0]["text"], "one");
    assert_eq!(asc["has_more"], true);
    let after = asc["last_id"].as_str().unwrap();
    let (_, next) = json_call(
        &router,
        "GET",
        &format!("/v1/responses/{second_id}/input_items?order=asc&limit=2&after={after}"),
        None,
    )
    .await;
    assert_eq!(next["data"].as_array().unwrap().len(), 2);
    assert_eq!(next["has_more"], false);

    let (status, deleted) =
        json_call(&router, "DELETE", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        deleted,
        json!({"id": id, "object": "response", "deleted": true})
    );
    let (status, missing) = json_call(&router, "GET", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(missing["error"]["message"].as_str().unwrap().contains(id));
    let (status, _) = json_call(&router, "DELETE", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn unstored_responses_cannot_be_continued_over_http() {
    let router = router();
    let (_, first) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "x", "store": false})),
    )
    .await;
    let (status, error) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "y", "previous_response_id": first["id"]})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    assert_eq!(error["error"]["param"], "previous_response_id");
    assert_eq!(error["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn bad_requests_get_the_standard_error_shape() {
    let router = router();
    let (status, _, body) = call(&router, "POST", "/v1/responses", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let cases = [
        (json!({"model": 3}), "model"),
        (json!({"input": "x"}), "model"),
        (json!({"model": "m", "tools": "all"}), "tools"),
        // Background mode needs the response stored.
        (
            json!({"model": "m", "background": true, "store": false}),
            "store",
        ),
        (
            json!({"model": "m", "tool_choice": {"type": "function", "name": "nope"},
                "tools": [{"type": "function", "name": "shell"}]}),
            "tool_choice",
        ),
        (
            json!({"model": "m", "tool_choice": "required"}),
            "tool_choice",
        ),
        (
            json!({"model": "m", "metadata": {"scenario": "nope"}}),
            "metadata.scenario",
        ),
        (
            json!({"model": "m", "metadata": {"generator": "nope"}}),
            "metadata.generator",
        ),
    ];
    for (body, param) in cases {
        let (status, error) = json_call(&router, "POST", "/v1/responses", Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(error["error"]["param"], param, "{error}");
        assert!(error["error"]["message"].is_string());
    }
    let (status, error) = json_call(&router, "POST", "/v1/responses",
        Some(json!({"model": "m", "input": [{"type": "function_call_output", "call_id": "call_x", "output": "?"}]}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("call_x")
    );
    let (status, _) = json_call(
        &router,
        "GET",
        "/v1/responses/resp_x/input_items?limit=0",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn errors_outside_the_handlers_keep_the_error_shape() {
    let router = router();
    // A method the route does not have: 405 with `Allow`, as JSON.
    let response = router
        .clone()
        .oneshot(
            Request::builder()
                .method("PUT")
                .uri("/v1/responses")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(response.headers().get("allow").is_some());
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["error"]["code"], "method_not_allowed", "{error}");
    // A body over the limit (1 MiB in tests): 413, naming the limit.
    let huge = json!({"model": "m", "input": "x".repeat(2 << 20)});
    let (status, error) = json_call(&router, "POST", "/v1/responses", Some(huge)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error["error"]["code"], "request_too_large");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1048576 bytes"),
        "{error}"
    );
    // A query that does not parse.
    let (status, error) = json_call(
        &router,
        "GET",
        "/v1/responses/resp_x/input_items?limit=abc",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["error"]["type"], "invalid_request_error", "{error}");
}

#[tokio::test]
async fn other_origins_may_call_the_api() {
    let router = router();
    let preflight = router
        .clone()
        .oneshot(
            Request::builder()
                .method("OPTIONS")
                .uri("/v1/responses")
                .header("origin", "http://elsewhere.example")
                .header("access-control-request-method", "POST")
                .header(
                    "access-control-request-headers",
                    "authorization, content-type",
                )
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{}", preflight.status());
    let headers = preflight.headers();
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert!(
        headers["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    // Named: a `*` would not cover `Authorization`.
    let allowed = headers["access-control-allow-headers"].to_str().unwrap();
    assert!(allowed.contains("authorization"), "{allowed}");
    let response = router
        .oneshot(
            Request::builder()
                .method("GET")
                .uri("/v1/models")
                .header("origin", "http://elsewhere.example")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
}

#[tokio::test]
async fn max_output_tokens_cuts_the_output_and_ends_incomplete() {
    let router = router();
    let create = |body: Value| {
        let router = router.clone();
        async move { json_call(&router, "POST", "/v1/responses", Some(body)).await }
    };
    let text_of = |response: &Value| {
        response["output"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["type"] == "message")
            .map(|item| item["content"][0]["text"].as_str().unwrap().to_string())
            .collect::<String>()
    };
    // Text: cut at exactly the limit, the message closed as incomplete.
    let (status, cut) = create(json!({"model": "m", "input": "x", "max_output_tokens": 10,
        "metadata": {"sim_output_tokens": "40"}}))
    .await;
    assert_eq!(status, StatusCode::OK, "{cut}");
    assert_eq!(cut["status"], "incomplete", "{cut}");
    assert_eq!(cut["incomplete_details"]["reason"], "max_output_tokens");
    assert_eq!(cut["usage"]["output_tokens"], 10);
    assert_eq!(cut["output"][0]["status"], "incomplete");
    assert_eq!(tether_server::tokenizer::count(&text_of(&cut)), 10);
    // An answer exactly as long as the limit completes.
    let (_, exact) = create(json!({"model": "m", "input": "x", "max_output_tokens": 12,
        "metadata": {"sim_output_tokens": "12"}}))
    .await;
    assert_eq!(exact["status"], "completed", "{exact}");
    assert_eq!(exact["usage"]["output_tokens"], 12);
    // Reasoning counts: 8 summary tokens leave 2 of text.
    let (_, reasoned) = create(json!({"model": "m", "input": "x", "max_output_tokens": 10,
        "metadata": {"sim_output_tokens": "20", "sim_reasoning_tokens": "8"}}))
    .await;
    assert_eq!(reasoned["status"], "incomplete", "{reasoned}");
    assert_eq!(
        reasoned["usage"]["output_tokens_details"]["reasoning_tokens"],
        8
    );
    assert_eq!(reasoned["usage"]["output_tokens"], 10);
    assert_eq!(tether_server::tokenizer::count(&text_of(&reasoned)), 2);
    // A tool call's arguments are cut too; the call is incomplete.
    let (_, tool_call) = create(json!({"model": "m", "input": "x", "max_output_tokens": 3,
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object",
            "properties": {"command": {"type": "string"}}, "required": ["command"]}}]}))
    .await;
    assert_eq!(tool_call["status"], "incomplete", "{tool_call}");
    assert_eq!(tool_call["output"][0]["type"], "function_call");
    assert_eq!(tool_call["output"][0]["status"], "incomplete");
    assert_eq!(tool_call["usage"]["output_tokens"], 3);
    // Streaming ends with response.incomplete.
    let (_, _, body) = call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m",
        "input": "x", "stream": true, "max_output_tokens": 5,
        "metadata": {"sim_output_tokens": "30"}})),
    )
    .await;
    let last = body
        .split("\n\n")
        .filter(|block| block.starts_with("event: "))
        .last()
        .unwrap();
    assert!(last.starts_with("event: response.incomplete"), "{last}");
    // Zero is refused.
    let (status, error) = create(json!({"model": "m", "input": "x", "max_output_tokens": 0})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["error"]["param"], "max_output_tokens");
}

#[tokio::test]
async fn item_references_resolve_against_stored_items_without_a_previous_response() {
    let router = router();
    let tools = json!([{"type": "function", "name": "shell", "parameters": {"type": "object",
        "properties": {"command": {"type": "string"}}, "required": ["command"]}}]);
    let (_, first) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "hi", "tools": tools})),
    )
    .await;
    let call = first["output"][0].clone();
    assert_eq!(call["type"], "function_call", "{first}");
    // Unstored, so the referenced call stays in the first response only.
    let continue_with_reference = json!({"model": "m", "tools": tools, "store": false, "input": [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "item_reference", "id": call["id"]},
        {"type": "function_call_output", "call_id": call["call_id"], "output": "done"}]});
    let (status, second) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(continue_with_reference.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(second["status"], "completed");
    // Once the response is deleted, its items are gone too.
    let id = first["id"].as_str().unwrap();
    let (status, _) = json_call(&router, "DELETE", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, error) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(continue_with_reference),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
}

#[tokio::test]
async fn a_tool_loop_over_http_chains_through_the_store() {
    let router = router();
    let tools = json!([{"type": "function", "name": "read_file", "parameters": {"type": "object",
        "properties": {"path": {"type": "string"}}, "required": ["path"]}}, {"type": "web_search"}]);
    let (_, first) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "read it", "tools": tools})),
    )
    .await;
    let call = &first["output"][0];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["arguments"], "{\"path\":\"example\"}");
    let (status, second) = json_call(&router, "POST", "/v1/responses", Some(json!({"model": "m",
        "previous_response_id": first["id"], "tools": tools,
        "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "contents"}]}))).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert!(
        second["output"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("The tool returned \"contents\"")
    );
}

#[tokio::test]
async fn models_and_metrics_are_listed() {
    let router = router();
    let (status, models) = json_call(&router, "GET", "/v1/models", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(models["data"][0]["id"], "tether-sim");
    json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "x"})),
    )
    .await;
    let (status, _, text) = call(&router, "GET", "/metrics", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        text.contains("tether_responses_total{transport=\"http\"} 1"),
        "{text}"
    );
}

#[tokio::test]
async fn unknown_models_are_served_unless_configured_otherwise() {
    let (status, _) = json_call(
        &router(),
        "POST",
        "/v1/responses",
        Some(json!({"model": "gpt-9", "input": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let mut config = common::config(":memory:");
    config.reject_unknown_models = true;
    let strict = app(
        AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    );
    let (status, error) = json_call(
        &strict,
        "POST",
        "/v1/responses",
        Some(json!({"model": "gpt-9", "input": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error["error"]["code"], "model_not_found");
    assert_eq!(error["error"]["param"], "model");
    let (status, _) = json_call(
        &strict,
        "POST",
        "/v1/responses",
        Some(json!({"model": "tether-sim", "input": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // Every profile, and a scenario's name (which plays it), is served.
    for model in ["instant", "spark", "fix-sample-project"] {
        let (status, body) = json_call(
            &strict,
            "POST",
            "/v1/responses",
            Some(json!({"model": model, "input": "x", "tools": [{"type": "function", "name": "list_dir"}]})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{model}: {body}");
    }
}
