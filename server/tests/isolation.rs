//! Isolation between API keys: what one project stores, another neither reads, continues,
//! references nor deletes — and is answered exactly as if it did not exist, over HTTP and over
//! WebSocket. Keys grouped into one project by a keys file share their responses.

mod common;

use common::TestServer;
use serde_json::{Value, json};

/// A request to the server with a bearer `key`; the status and the JSON body.
async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let reply = common::request(&server.endpoint().with_api_key(key), method, path, body).await;
    (reply.status, reply.json().unwrap_or(Value::Null))
}

/// `error` with the response id in its message replaced, so two answers can be compared.
fn shape(mut error: Value, id: &str) -> Value {
    if let Some(message) = error["error"]["message"].as_str() {
        error["error"]["message"] = Value::String(message.replace(id, "ID"));
    }
    error
}

async fn isolated_server(keys_file: Option<&std::path::Path>) -> TestServer {
    let mut config = common::config(":memory:");
    config.api_keys = vec!["key-one".into(), "key-two".into()];
    config.keys_file = keys_file.map(std::path::Path::to_path_buf);
    TestServer::start_with(config).await
}

#[tokio::test]
async fn another_projects_response_is_answered_like_a_missing_one_over_http() {
    let server = isolated_server(None).await;
    let create = json!({"model": "tether-sim", "store": true, "input": [
        {"type": "message", "id": "msg_secret", "role": "user", "content": "the plan"}]});
    let (status, stored) = call(&server, "POST", "/v1/responses", "key-one", Some(&create)).await;
    assert_eq!(status, 200, "{stored}");
    let id = stored["id"].as_str().unwrap();

    // Read, input items, delete: 404 exactly as for an id nobody stored.
    for (method, path) in [
        ("GET", format!("/v1/responses/{id}")),
        ("GET", format!("/v1/responses/{id}/input_items")),
        ("DELETE", format!("/v1/responses/{id}")),
    ] {
        let unknown = path.replace(id, "resp_000000000000000000000000");
        let (status, theirs) = call(&server, method, &path, "key-two", None).await;
        let (unknown_status, nobodys) = call(&server, method, &unknown, "key-two", None).await;
        assert_eq!(
            (status, unknown_status),
            (404, 404),
            "{method} {path}: {theirs}"
        );
        assert_eq!(
            shape(theirs, id),
            shape(nobodys, "resp_000000000000000000000000"),
            "{method} {path}"
        );
    }
    // Continue with previous_response_id, or reference its item: not found.
    let continued = json!({"model": "tether-sim", "previous_response_id": id, "input": "more"});
    let (status, error) = call(
        &server,
        "POST",
        "/v1/responses",
        "key-two",
        Some(&continued),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    let referenced =
        json!({"model": "tether-sim", "input": [{"type": "item_reference", "id": "msg_secret"}]});
    let (status, error) = call(
        &server,
        "POST",
        "/v1/responses",
        "key-two",
        Some(&referenced),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not found"),
        "{error}"
    );

    // Its owner still has all of it.
    let (status, _) = call(
        &server,
        "GET",
        &format!("/v1/responses/{id}"),
        "key-one",
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call(
        &server,
        "POST",
        "/v1/responses",
        "key-one",
        Some(&referenced),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call(
        &server,
        "DELETE",
        &format!("/v1/responses/{id}"),
        "key-one",
        None,
    )
    .await;
    assert_eq!(status, 200);
    server.stop().await;
}

#[tokio::test]
async fn another_projects_response_cannot_be_hydrated_over_websocket() {
    let server = isolated_server(None).await;
    let create = json!({"model": "tether-sim", "store": true, "input": "remember this"});
    let (_, stored) = call(&server, "POST", "/v1/responses", "key-one", Some(&create)).await;
    let id = stored["id"].as_str().unwrap();
    let mut intruder =
        common::connect_with_headers(server.addr, &[("authorization", "Bearer key-two")]).await;
    intruder
        .send(&json!({"type": "response.create", "model": "tether-sim", "previous_response_id": id, "input": "go on"}).to_string())
        .await;
    let error = intruder.next_json().await;
    assert_eq!(error["type"], "error");
    assert_eq!(error["status"], 400);
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    let mut owner =
        common::connect_with_headers(server.addr, &[("authorization", "Bearer key-one")]).await;
    owner
        .send(&json!({"type": "response.create", "model": "tether-sim", "previous_response_id": id, "input": "go on"}).to_string())
        .await;
    let events = owner.response_events().await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    server.stop().await;
}

#[tokio::test]
async fn another_projects_conversation_is_answered_like_a_missing_one() {
    let server = isolated_server(None).await;
    let create = json!({"metadata": {"owner": "one"},
                        "items": [{"type": "message", "role": "user", "content": "secret"}]});
    let (status, conversation) = call(
        &server,
        "POST",
        "/v1/conversations",
        "key-one",
        Some(&create),
    )
    .await;
    assert_eq!(status, 200, "{conversation}");
    let id = conversation["id"].as_str().unwrap();
    let (_, items) = call(
        &server,
        "GET",
        &format!("/v1/conversations/{id}/items"),
        "key-one",
        None,
    )
    .await;
    let item_id = items["data"][0]["id"].as_str().unwrap().to_string();
    let update = json!({"metadata": {"owner": "two"}});
    let add = json!({"items": [{"type": "message", "role": "user", "content": "intruder"}]});
    let turn = json!({"model": "tether-sim", "input": "what was the secret?", "conversation": id});
    let missing = "conv_doesnotexist";
    let turn_missing = json!({"model": "tether-sim", "input": "what was the secret?",
                              "conversation": missing});
    let requests: Vec<(&str, String, Option<&Value>, Option<&Value>)> = vec![
        ("GET", format!("/v1/conversations/{id}"), None, None),
        (
            "POST",
            format!("/v1/conversations/{id}"),
            Some(&update),
            Some(&update),
        ),
        ("GET", format!("/v1/conversations/{id}/items"), None, None),
        (
            "POST",
            format!("/v1/conversations/{id}/items"),
            Some(&add),
            Some(&add),
        ),
        (
            "GET",
            format!("/v1/conversations/{id}/items/{item_id}"),
            None,
            None,
        ),
        (
            "DELETE",
            format!("/v1/conversations/{id}/items/{item_id}"),
            None,
            None,
        ),
        (
            "POST",
            "/v1/responses".to_string(),
            Some(&turn),
            Some(&turn_missing),
        ),
        ("DELETE", format!("/v1/conversations/{id}"), None, None),
    ];
    for (method, path, body, body_missing) in requests {
        let (status, answer) = call(&server, method, &path, "key-two", body).await;
        let unknown_path = path.replace(id, missing);
        let (unknown_status, unknown) =
            call(&server, method, &unknown_path, "key-two", body_missing).await;
        assert_eq!(status, 404, "{method} {path}: {answer}");
        assert_eq!(unknown_status, 404, "{method} {unknown_path}: {unknown}");
        assert_eq!(
            shape(answer, id),
            shape(unknown, missing),
            "{method} {path}"
        );
    }
    // The owner's conversation is as it was, and still serves a response.
    let (_, still) = call(
        &server,
        "GET",
        &format!("/v1/conversations/{id}"),
        "key-one",
        None,
    )
    .await;
    assert_eq!(still["metadata"], json!({"owner": "one"}));
    let (_, items) = call(
        &server,
        "GET",
        &format!("/v1/conversations/{id}/items"),
        "key-one",
        None,
    )
    .await;
    assert_eq!(items["data"].as_array().unwrap().len(), 1, "{items}");
    let (status, answered) = call(&server, "POST", "/v1/responses", "key-one", Some(&turn)).await;
    assert_eq!(status, 200, "{answered}");
    server.stop().await;
}

#[tokio::test]
async fn keys_grouped_into_a_project_share_its_responses() {
    let dir = std::env::temp_dir().join(format!("tether-keys-{}", rand::random::<u64>()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("keys.json");
    std::fs::write(&file, r#"{"team": ["team-a", "team-b"]}"#).unwrap();
    let server = isolated_server(Some(&file)).await;
    let create = json!({"model": "tether-sim", "store": true, "input": "shared"});
    let (_, stored) = call(&server, "POST", "/v1/responses", "team-a", Some(&create)).await;
    let id = stored["id"].as_str().unwrap();
    let (status, _) = call(
        &server,
        "GET",
        &format!("/v1/responses/{id}"),
        "team-b",
        None,
    )
    .await;
    assert_eq!(status, 200, "a teammate's key reads it");
    let (status, _) = call(
        &server,
        "GET",
        &format!("/v1/responses/{id}"),
        "key-one",
        None,
    )
    .await;
    assert_eq!(status, 404, "another project's key does not");
    server.stop().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn the_admin_key_never_doubles_as_an_api_key() {
    let mut config = common::config(":memory:");
    config.api_keys = vec!["same".into()];
    config.admin_key = Some("same".into());
    let refused = tether_server::AppState::new(&config)
        .err()
        .expect("refused");
    assert!(refused.to_string().contains("admin key"), "{refused}");
}

#[tokio::test]
async fn projects_do_not_share_the_engines_prompt_cache() {
    let server = isolated_server(None).await;
    let body = json!({"model": "spark", "store": false, "input": "word ".repeat(1500)});
    let cached = |reply: &Value| {
        reply["usage"]["input_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap()
    };
    let (_, first) = call(&server, "POST", "/v1/responses", "key-one", Some(&body)).await;
    assert_eq!(cached(&first), 0);
    let (_, same_project) = call(&server, "POST", "/v1/responses", "key-one", Some(&body)).await;
    assert!(cached(&same_project) > 0, "{same_project}");
    let (_, other_project) = call(&server, "POST", "/v1/responses", "key-two", Some(&body)).await;
    assert_eq!(
        cached(&other_project),
        0,
        "no prompt is shared across projects"
    );
    server.stop().await;
}
