//! Background responses over HTTP (docs/protocol.md §12), through the router: `queued` at once,
//! then run to the end with nobody connected; polled; streamed and the stream resumed from a
//! sequence number; cancelled. (A server killed while they run: `durability.rs`.)

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};

mod common;

use common::{oneshot as call, oneshot_json as json_call, router_at as router};

/// The `data:` payloads of an SSE body.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// Polls response `id` until it leaves `queued` and `in_progress` (at most 20 s).
async fn settled(router: &Router, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (status, response) =
            json_call(router, "GET", &format!("/v1/responses/{id}"), None).await;
        assert_eq!(status, StatusCode::OK, "{response}");
        let state = response["status"].as_str().unwrap();
        if !matches!(state, "queued" | "in_progress") {
            return response;
        }
        assert!(tokio::time::Instant::now() < deadline, "still {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn background(input: &str) -> Value {
    json!({"model": "tether-sim", "input": input, "background": true})
}

#[tokio::test]
async fn a_background_response_is_queued_at_once_and_runs_to_its_end() {
    let router = router(100_000.0);
    let (status, queued) =
        json_call(&router, "POST", "/v1/responses", Some(background("hi"))).await;
    assert_eq!(status, StatusCode::OK, "{queued}");
    assert_eq!(queued["status"], "queued");
    assert_eq!(queued["background"], true);
    assert_eq!(queued["output"], json!([]));
    let id = queued["id"].as_str().unwrap();
    let done = settled(&router, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(!done["output"].as_array().unwrap().is_empty());
    assert!(done["usage"]["output_tokens"].as_u64().unwrap() > 0);
    // Cancelling an ended one answers it as it is.
    let (status, again) =
        json_call(&router, "POST", &format!("/v1/responses/{id}/cancel"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["status"], "completed");
    // It is a stored response like any other: it can be continued.
    let (status, next) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "tether-sim", "input": "more", "previous_response_id": id})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{next}");
}

#[tokio::test]
async fn background_mode_needs_store_and_is_refused_over_websocket() {
    let router = router(100_000.0);
    let mut unstored = background("hi");
    unstored["store"] = json!(false);
    let (status, answer) = json_call(&router, "POST", "/v1/responses", Some(unstored)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["param"], "store");
    let server = common::TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    let mut frame = background("hi");
    frame["type"] = json!("response.create");
    client.send(&frame.to_string()).await;
    let error = client.next_json().await;
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["status"], 400);
    assert_eq!(error["error"]["param"], "background");
    server.stop().await;
}

#[tokio::test]
async fn a_streamed_background_response_resumes_after_any_sequence_number() {
    let router = router(100_000.0);
    let mut body = background("stream it");
    body["stream"] = json!(true);
    let (status, text) = call(&router, "POST", "/v1/responses", Some(body)).await;
    assert_eq!(status, StatusCode::OK);
    let first = events(&text);
    assert_eq!(first[0]["type"], "response.created");
    assert_eq!(first[0]["response"]["status"], "queued");
    assert_eq!(first[1]["type"], "response.in_progress");
    assert_eq!(first.last().unwrap()["type"], "response.completed");
    let numbers: Vec<u64> = first
        .iter()
        .map(|e| e["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (0..first.len() as u64).collect::<Vec<_>>());
    let id = first[0]["response"]["id"].as_str().unwrap();
    // As a client whose connection dropped after event 3 resumes.
    let (status, text) = call(
        &router,
        "GET",
        &format!("/v1/responses/{id}?stream=true&starting_after=3"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(events(&text), first[4..].to_vec());
    let (_, text) = call(
        &router,
        "GET",
        &format!("/v1/responses/{id}?stream=true"),
        None,
    )
    .await;
    assert_eq!(events(&text), first);
    // A response that is not a background one cannot be streamed again.
    let (_, plain) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "tether-sim", "input": "plain"})),
    )
    .await;
    let plain_id = plain["id"].as_str().unwrap();
    let (status, answer) = json_call(
        &router,
        "GET",
        &format!("/v1/responses/{plain_id}?stream=true"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let (status, _) = json_call(&router, "GET", "/v1/responses/resp_none?stream=true", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_running_background_response_is_cancelled_with_what_it_had() {
    // 20,000 tokens at 1,000 tokens/s: it runs for 20 s unless cancelled.
    let router = router(1000.0);
    let mut body = background("a very long answer");
    body["metadata"] = json!({"sim_output_tokens": "20000"});
    let (_, queued) = json_call(&router, "POST", "/v1/responses", Some(body)).await;
    let id = queued["id"].as_str().unwrap();
    // Its stream, followed live, ends with the cancel.
    let follower = {
        let router = router.clone();
        let uri = format!("/v1/responses/{id}?stream=true");
        tokio::spawn(async move { call(&router, "GET", &uri, None).await })
    };
    let (status, cancelled) =
        json_call(&router, "POST", &format!("/v1/responses/{id}/cancel"), None).await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    let (_, stored) = json_call(&router, "GET", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(stored["status"], "cancelled");
    let (_, again) = json_call(&router, "POST", &format!("/v1/responses/{id}/cancel"), None).await;
    assert_eq!(again["status"], "cancelled", "cancelling twice is harmless");
    let (status, text) = tokio::time::timeout(Duration::from_secs(10), follower)
        .await
        .expect("the stream ends with the cancel")
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let seen = events(&text);
    assert_eq!(seen[0]["type"], "response.created");
    assert!(
        seen.iter().all(|e| e["type"] != "response.completed"),
        "no terminal event after a cancel"
    );
    // Only background responses can be cancelled.
    let (_, plain) = json_call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "tether-sim", "input": "plain", "metadata": {"sim_output_tokens": "5"}})),
    )
    .await;
    let (status, answer) = json_call(
        &router,
        "POST",
        &format!("/v1/responses/{}/cancel", plain["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let (status, _) = json_call(&router, "POST", "/v1/responses/resp_none/cancel", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A router over the server whose data is in `dir` — two of them on one directory are two
/// replicas of one store: neither has in memory what the other runs.
fn replica(dir: &std::path::Path, tokens_per_second: f64) -> Router {
    let mut config = common::config(dir.to_str().unwrap());
    config.tokens_per_second = tokens_per_second;
    tether_server::app(
        tether_server::AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    )
}

/// The events of response `id` after `after`, streamed by `router`, which must end the stream
/// within 10 s.
async fn resumed(router: &Router, id: &str, after: u64) -> Vec<Value> {
    let uri = format!("/v1/responses/{id}?stream=true&starting_after={after}");
    let (status, text) =
        tokio::time::timeout(Duration::from_secs(10), call(router, "GET", &uri, None))
            .await
            .expect("the resumed stream ends");
    assert_eq!(status, StatusCode::OK, "{text}");
    events(&text)
}

#[tokio::test]
async fn another_replica_resumes_every_ending_from_the_kept_events() {
    let dir = std::env::temp_dir().join(format!("tether-resume-{}", rand::random::<u64>()));
    let (ran, other) = (replica(&dir, 1000.0), replica(&dir, 1000.0));
    // Completed, and incomplete (`max_output_tokens`): streamed where they ran, resumed on the
    // other replica once they ended — the same events after `starting_after`, to the end.
    let mut completed = background("short");
    completed["metadata"] = json!({"sim_output_tokens": "20"});
    let mut incomplete = background("cut short");
    incomplete["metadata"] = json!({"sim_output_tokens": "100"});
    incomplete["max_output_tokens"] = json!(16);
    for (mut body, ending) in [
        (completed, "response.completed"),
        (incomplete, "response.incomplete"),
    ] {
        body["stream"] = json!(true);
        let (status, text) = call(&ran, "POST", "/v1/responses", Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        let first = events(&text);
        assert_eq!(first.last().unwrap()["type"], ending, "{first:?}");
        let id = first[0]["response"]["id"].as_str().unwrap();
        assert_eq!(
            resumed(&other, id, 3).await,
            first[4..].to_vec(),
            "{ending}"
        );
    }
    // Cancelled: its stream ends without a terminal event where it ran and where it resumes.
    let mut long = background("a very long answer");
    long["metadata"] = json!({"sim_output_tokens": "20000"});
    let (_, queued) = json_call(&ran, "POST", "/v1/responses", Some(long)).await;
    let id = queued["id"].as_str().unwrap().to_string();
    let follower = {
        let (ran, uri) = (ran.clone(), format!("/v1/responses/{id}?stream=true"));
        tokio::spawn(async move { call(&ran, "GET", &uri, None).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_, cancelled) = json_call(&ran, "POST", &format!("/v1/responses/{id}/cancel"), None).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let (_, text) = tokio::time::timeout(Duration::from_secs(10), follower)
        .await
        .expect("the stream ends with the cancel")
        .unwrap();
    let live = events(&text);
    assert!(live.len() > 2, "{live:?}");
    let again = resumed(&other, &id, 1).await;
    assert_eq!(again, live[2..].to_vec());
    let numbers: Vec<u64> = again
        .iter()
        .map(|e| e["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (2..2 + again.len() as u64).collect::<Vec<_>>());
    drop((ran, other));
    std::fs::remove_dir_all(&dir).ok();
}
