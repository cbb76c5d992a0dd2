//! The Conversations API and responses bound to a conversation (docs/protocol.md §11), through
//! the router (HTTP) and over a real socket (WebSocket): its endpoints and their limits, the
//! context a response reads and what it appends, one response at a time per conversation, and
//! steering refused.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

mod common;

fn router() -> Router {
    common::router_at(100_000.0)
}

async fn call(
    router: &Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    common::oneshot_json(router, method, uri, body).await
}

async fn ok(router: &Router, method: &str, uri: &str, body: Option<Value>) -> Value {
    let (status, answer) = call(router, method, uri, body).await;
    assert_eq!(status, StatusCode::OK, "{method} {uri} → {answer}");
    answer
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": text})
}

/// The texts of a listing's items, in its order.
fn texts(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| match &item["content"] {
            Value::Array(parts) => parts
                .iter()
                .map(|p| p["text"].as_str().unwrap_or(""))
                .collect(),
            Value::String(text) => text.clone(),
            _ => item["type"].as_str().unwrap().to_string(),
        })
        .collect()
}

#[tokio::test]
async fn a_conversation_is_created_read_updated_and_deleted() {
    let router = router();
    let created = ok(
        &router,
        "POST",
        "/v1/conversations",
        Some(json!({"metadata": {"topic": "cats"}, "items": [user("hello"), user("again")]})),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("conv_"), "{created}");
    assert_eq!(created["object"], "conversation");
    assert_eq!(created["metadata"], json!({"topic": "cats"}));
    assert!(created["created_at"].as_u64().unwrap() > 0);
    let read = ok(&router, "GET", &format!("/v1/conversations/{id}"), None).await;
    assert_eq!(read, created);
    let updated = ok(
        &router,
        "POST",
        &format!("/v1/conversations/{id}"),
        Some(json!({"metadata": {"topic": "dogs"}})),
    )
    .await;
    assert_eq!(updated["metadata"], json!({"topic": "dogs"}));
    assert_eq!(updated["created_at"], created["created_at"]);
    // Items list newest first by default, with ids and statuses.
    let items = ok(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items"),
        None,
    )
    .await;
    assert_eq!(texts(&items), ["again", "hello"]);
    let first = &items["data"][1];
    assert!(first["id"].as_str().unwrap().starts_with("msg_"), "{first}");
    assert_eq!(first["status"], "completed");
    assert_eq!(first["content"][0]["type"], "input_text");
    let deleted = ok(&router, "DELETE", &format!("/v1/conversations/{id}"), None).await;
    assert_eq!(
        deleted,
        json!({"id": id, "object": "conversation.deleted", "deleted": true})
    );
    for (method, uri) in [
        ("GET", format!("/v1/conversations/{id}")),
        ("DELETE", format!("/v1/conversations/{id}")),
        ("GET", format!("/v1/conversations/{id}/items")),
    ] {
        let (status, answer) = call(&router, method, &uri, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {uri}: {answer}");
    }
}

#[tokio::test]
async fn items_are_added_paged_read_and_deleted() {
    let router = router();
    let id = ok(&router, "POST", "/v1/conversations", None).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let items: Vec<Value> = (0..5).map(|n| user(&format!("m{n}"))).collect();
    let added = ok(
        &router,
        "POST",
        &format!("/v1/conversations/{id}/items?include=message.output_text.logprobs"),
        Some(json!({"items": items})),
    )
    .await;
    assert_eq!(added["object"], "list");
    assert_eq!(texts(&added), ["m0", "m1", "m2", "m3", "m4"]);
    assert_eq!(added["has_more"], false);
    let page = ok(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items?order=asc&limit=2"),
        None,
    )
    .await;
    assert_eq!(texts(&page), ["m0", "m1"]);
    assert_eq!(page["has_more"], true);
    let last = page["last_id"].as_str().unwrap();
    let next = ok(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items?order=asc&limit=2&after={last}"),
        None,
    )
    .await;
    assert_eq!(texts(&next), ["m2", "m3"]);
    let desc = ok(
        &router,
        "GET",
        &format!(
            "/v1/conversations/{id}/items?limit=2&after={}",
            added["data"][2]["id"].as_str().unwrap()
        ),
        None,
    )
    .await;
    assert_eq!(texts(&desc), ["m1", "m0"]);
    assert_eq!(desc["has_more"], false);
    let item_id = added["data"][1]["id"].as_str().unwrap();
    let item = ok(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items/{item_id}"),
        None,
    )
    .await;
    assert_eq!(item, added["data"][1]);
    let conversation = ok(
        &router,
        "DELETE",
        &format!("/v1/conversations/{id}/items/{item_id}"),
        None,
    )
    .await;
    assert_eq!(conversation["id"], id.as_str());
    assert_eq!(conversation["object"], "conversation");
    let (status, _) = call(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items/{item_id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let all = ok(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items?order=asc"),
        None,
    )
    .await;
    assert_eq!(texts(&all), ["m0", "m2", "m3", "m4"]);
}

#[tokio::test]
async fn bad_requests_are_refused_naming_what_is_wrong() {
    let router = router();
    let id = ok(&router, "POST", "/v1/conversations", None).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let too_many: Vec<Value> = (0..21).map(|n| user(&format!("m{n}"))).collect();
    let metadata: serde_json::Map<String, Value> =
        (0..17).map(|n| (format!("k{n}"), json!("v"))).collect();
    for (method, uri, body, param) in [
        (
            "POST",
            "/v1/conversations".to_string(),
            json!({"items": too_many}),
            "items",
        ),
        (
            "POST",
            format!("/v1/conversations/{id}/items"),
            json!({"items": too_many}),
            "items",
        ),
        (
            "POST",
            "/v1/conversations".to_string(),
            json!({"metadata": metadata}),
            "metadata",
        ),
        (
            "POST",
            "/v1/conversations".to_string(),
            json!({"metadata": {"k": 1}}),
            "metadata",
        ),
        (
            "POST",
            "/v1/conversations".to_string(),
            json!({"itemz": []}),
            "itemz",
        ),
        (
            "POST",
            "/v1/conversations".to_string(),
            json!({"items": [{"type": "bogus"}]}),
            "items[0].type",
        ),
        (
            "POST",
            format!("/v1/conversations/{id}/items"),
            json!({}),
            "items",
        ),
        (
            "POST",
            format!("/v1/conversations/{id}"),
            json!({}),
            "metadata",
        ),
    ] {
        let (status, answer) = call(&router, method, &uri, Some(body.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri} {body} → {answer}");
        assert_eq!(answer["error"]["param"], param, "{uri} {body} → {answer}");
    }
    for (query, param) in [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("order=up", "order"),
        ("after=msg_none", "after"),
        ("include=nothing", "include"),
        ("colour=red", "colour"),
    ] {
        let (status, answer) = call(
            &router,
            "GET",
            &format!("/v1/conversations/{id}/items?{query}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query} → {answer}");
        assert_eq!(answer["error"]["param"], param, "{query} → {answer}");
    }
}

/// `POST /v1/responses` on conversation `id` (as a string or `{id}`) with `input`.
fn turn(conversation: Value, input: &str) -> Value {
    json!({"model": "tether-sim", "input": input, "conversation": conversation})
}

#[tokio::test]
async fn a_response_reads_the_conversation_and_appends_its_input_and_output() {
    let router = router();
    let id = ok(
        &router,
        "POST",
        "/v1/conversations",
        Some(json!({"items": [user("my name is Ada")]})),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let first = ok(
        &router,
        "POST",
        "/v1/responses",
        Some(turn(json!(id), "hi")),
    )
    .await;
    assert_eq!(first["status"], "completed");
    assert_eq!(first["conversation"], json!({"id": id}));
    // The context was the conversation's item, then the input.
    let listed = ok(
        &router,
        "GET",
        &format!(
            "/v1/responses/{}/input_items?order=asc",
            first["id"].as_str().unwrap()
        ),
        None,
    )
    .await;
    assert_eq!(texts(&listed), ["my name is Ada", "hi"]);
    let second = ok(
        &router,
        "POST",
        "/v1/responses",
        Some(turn(json!({"id": id}), "and now?")),
    )
    .await;
    let answer = first["output"][0]["content"][0]["text"].as_str().unwrap();
    let items = ok(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items?order=asc"),
        None,
    )
    .await;
    let second_answer = second["output"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        texts(&items),
        ["my name is Ada", "hi", answer, "and now?", second_answer]
    );
    // The output items keep the ids the response gave them.
    assert_eq!(items["data"][2]["id"], first["output"][0]["id"]);
    // A failed response adds nothing.
    let mut failing = turn(json!(id), "fail please");
    failing["metadata"] = json!({"sim_fail": "server_error"});
    let (status, _) = call(&router, "POST", "/v1/responses", Some(failing)).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let after = ok(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items"),
        None,
    )
    .await;
    assert_eq!(after["data"].as_array().unwrap().len(), 5);
    // A refused request gives the conversation back before it is answered: the retry runs.
    let mut refused = turn(json!(id), "call a tool");
    refused["tool_choice"] = json!("required");
    let (status, answer) = call(&router, "POST", "/v1/responses", Some(refused)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["param"], "tool_choice");
    let retried = ok(
        &router,
        "POST",
        "/v1/responses",
        Some(turn(json!(id), "answer then")),
    )
    .await;
    assert_eq!(retried["status"], "completed");
    // An unknown conversation is 404; with previous_response_id it is 400.
    let (status, answer) = call(
        &router,
        "POST",
        "/v1/responses",
        Some(turn(json!("conv_missing"), "hi")),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    let mut both = turn(json!(id), "hi");
    both["previous_response_id"] = first["id"].clone();
    let (status, answer) = call(&router, "POST", "/v1/responses", Some(both)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["param"], "conversation");
}

#[tokio::test]
async fn a_second_response_on_a_running_conversation_is_refused_until_the_first_ends() {
    // 1,000 tokens/s is one delta a token: 1,500 of them fill the stream's channel (256), so
    // the first response cannot end before its stream is read.
    let router = common::router_at(1000.0);
    let id = ok(&router, "POST", "/v1/conversations", None).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A long answer, streamed: the first response holds the conversation while it runs.
    let mut long = turn(json!(id), "tell me a long story");
    long["stream"] = json!(true);
    long["metadata"] = json!({"sim_output_tokens": "1500"});
    let request = Request::builder()
        .method("POST")
        .uri("/v1/responses")
        .header("content-type", "application/json")
        .body(Body::from(long.to_string()))
        .unwrap();
    let streaming = router.clone().oneshot(request).await.unwrap();
    assert_eq!(streaming.status(), StatusCode::OK);
    let (status, answer) = call(
        &router,
        "POST",
        "/v1/responses",
        Some(turn(json!(id), "me too")),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], "conversation_locked");
    assert_eq!(answer["error"]["param"], "conversation");
    // Adding items is not locked out.
    ok(
        &router,
        "POST",
        &format!("/v1/conversations/{id}/items"),
        Some(json!({"items": [user("a note")]})),
    )
    .await;
    // Once the first has ended, the next is served.
    let body = streaming.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("response.completed"));
    let next = ok(
        &router,
        "POST",
        "/v1/responses",
        Some(turn(json!(id), "now me")),
    )
    .await;
    assert_eq!(next["status"], "completed");
}

#[tokio::test]
async fn over_websocket_a_conversation_is_the_context_and_steering_is_refused() {
    // Slow enough (5,000 tokens at 1,000 tokens/s) that the steer reaches the response running.
    let mut config = common::config(":memory:");
    config.tokens_per_second = 1000.0;
    let server = common::TestServer::start_with(config).await;
    let created = server
        .post_json(
            "/v1/conversations",
            &json!({"items": [user("remember 42")]}),
        )
        .await;
    let id = created["id"].as_str().unwrap();
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "tether-sim", "input": "what number?",
                    "conversation": id, "store": false})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let done = events.last().unwrap();
    assert_eq!(done["type"], "response.completed", "{done}");
    assert_eq!(done["response"]["conversation"]["id"], id);
    let listed: Value = server
        .get(&format!("/v1/conversations/{id}/items?order=asc"))
        .await
        .json()
        .unwrap();
    assert_eq!(listed["data"].as_array().unwrap().len(), 3, "{listed}");
    // A steer for a conversation's response is handed back.
    client
        .send(
            &json!({"type": "response.create", "model": "tether-sim", "input": "go on",
                    "conversation": id, "metadata": {"sim_output_tokens": "5000"}})
            .to_string(),
        )
        .await;
    let created = client.next_json().await;
    let response_id = created["response"]["id"].as_str().unwrap().to_string();
    client
        .send(
            &json!({"type": "response.steer", "previous_response_id": response_id,
                    "input": "change course"})
            .to_string(),
        )
        .await;
    let refused = loop {
        let event = client.next_json().await;
        match event["type"].as_str().unwrap() {
            "response.steer.failed" => break event,
            "response.completed" | "response.incomplete" | "response.failed" => {
                panic!("the response ended before the steer was answered: {event}")
            }
            _ => {}
        }
    };
    assert_eq!(
        refused["error"]["code"], "steering_not_supported",
        "{refused}"
    );
    // The response runs on, unsteered; closing the connection ends it.
    drop(client);
    server.stop().await;
}
