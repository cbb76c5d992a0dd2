//! Refusals and limits: 426 when WebSocket mode is off, API keys, the connection lifetime,
//! oversized frames, frames longer than many reads, and clients that vanish mid-stream.

mod common;

use std::time::Duration;

use common::{TestServer, config};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

fn status_of(error: WsError) -> u16 {
    match error {
        WsError::Http(response) => response.status().as_u16(),
        other => panic!("expected an HTTP refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn disabled_websocket_mode_answers_426() {
    let mut cfg = config(":memory:");
    cfg.no_websocket = true;
    let server = TestServer::start_with(cfg).await;
    let error = tokio_tungstenite::connect_async(format!("ws://{}/v1/responses", server.addr))
        .await
        .unwrap_err();
    assert_eq!(status_of(error), 426);
    server.stop().await;
}

#[tokio::test]
async fn api_keys_guard_http_and_the_upgrade() {
    let mut cfg = config(":memory:");
    cfg.api_keys = vec!["k1".into(), "k2".into()];
    let server = TestServer::start_with(cfg).await;
    let url = format!("ws://{}/v1/responses", server.addr);
    assert_eq!(
        status_of(tokio_tungstenite::connect_async(&url).await.unwrap_err()),
        401
    );
    let mut request = url.as_str().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", "Bearer wrong".parse().unwrap());
    assert_eq!(
        status_of(tokio_tungstenite::connect_async(request).await.unwrap_err()),
        401
    );

    let mut request = url.as_str().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", "Bearer k2".parse().unwrap());
    // Headers real clients send must be accepted and ignored.
    request.headers_mut().insert(
        "openai-beta",
        "responses_websockets=2026-02-06".parse().unwrap(),
    );
    request
        .headers_mut()
        .insert("originator", "codex_cli_rs".parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    socket
        .send(Message::Text(
            json!({"type": "response.create", "model": "m", "input": "hi"})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    let first = socket.next().await.unwrap().unwrap();
    assert!(first.to_text().unwrap().contains("response.created"));

    let response = server.get("/v1/models").await;
    assert_eq!(response.status, 401, "{}", response.text());
    assert!(response.text().contains("invalid_api_key"));
    assert_eq!(
        server.get("/healthz").await.status,
        200,
        "health needs no key"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_browser_passes_the_key_as_a_query_parameter_on_the_upgrade_only() {
    let mut cfg = config(":memory:");
    cfg.api_keys = vec!["k/1 x".into()];
    let server = TestServer::start_with(cfg).await;
    let base = format!("ws://{}/v1/responses", server.addr);
    let wrong = format!("{base}?api_key=nope");
    assert_eq!(
        status_of(tokio_tungstenite::connect_async(&wrong).await.unwrap_err()),
        401
    );
    // Percent-encoded, as the playground sends it.
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("{base}?api_key=k%2F1%20x"))
        .await
        .unwrap();
    socket
        .send(Message::Text(
            json!({"type": "response.create", "model": "m", "input": "hi"})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    let first = socket.next().await.unwrap().unwrap();
    assert!(first.to_text().unwrap().contains("response.created"));
    // A plain HTTP request must use the header: the query parameter does not count there.
    let models = server.get("/v1/models?api_key=k%2F1%20x").await;
    assert_eq!(models.status, 401, "{}", models.text());
    server.stop().await;
}

#[tokio::test]
async fn the_connection_lifetime_ends_with_a_limit_error() {
    let mut cfg = config(":memory:");
    cfg.ws_lifetime_seconds = 0.3;
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    let error = client.next_json().await;
    assert_eq!(error["type"], "error");
    assert_eq!(error["status"], 400);
    assert_eq!(error["error"]["code"], "websocket_connection_limit_reached");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("its 0.3-second limit"), "{message}");
    let (after, _) = client.until_close().await;
    assert!(after.is_empty(), "then it closes: {after:?}");
    server.stop().await;
}

#[tokio::test]
async fn an_oversized_frame_closes_only_that_connection() {
    let server = TestServer::start(":memory:").await; // 1 MiB limit in tests
    let mut client = server.connect().await;
    let huge =
        json!({"type": "response.create", "model": "m", "input": "x".repeat(2 << 20)}).to_string();
    let _ = client.ws.send_text(huge).await;
    // The server says why, then closes with 1009 (message too big).
    let error = client.next_json().await;
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["status"], 400);
    assert_eq!(error["error"]["code"], "message_too_large");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1048576 bytes"),
        "{error}"
    );
    let (after, code) = client.until_close().await;
    assert!(after.is_empty(), "{after:?}");
    assert_eq!(code, Some(1009), "a close frame with code 1009");
    let mut other = server.connect().await;
    other
        .send(
            &json!({"type": "response.create", "model": "m", "input": "still serving"}).to_string(),
        )
        .await;
    assert_eq!(
        other.response_events().await.last().unwrap()["type"],
        "response.completed"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_frame_many_reads_long_arrives_whole() {
    // The server reads at most 16 KiB per system call: a 900 KB frame takes dozens of reads,
    // and what is stored must be every byte of it.
    let server = TestServer::start(":memory:").await; // 1 MiB limit in tests
    let mut client = server.connect().await;
    let text: String = (0..150_000)
        .map(|i| format!("{:05} ", i % 100_000))
        .collect();
    assert!(text.len() > 800_000);
    client
        .send(
            &json!({"type": "response.create", "model": "instant", "input": text, "store": true})
                .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let done = events.last().unwrap();
    assert_eq!(done["type"], "response.completed", "{done}");
    let id = done["response"]["id"].as_str().unwrap();
    let body = server.get(&format!("/v1/responses/{id}/input_items")).await;
    let items: serde_json::Value = body.json().unwrap();
    let stored = items["data"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(stored.len(), text.len());
    assert!(
        stored == text,
        "the stored input differs from what was sent"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_client_leaving_mid_stream_releases_its_connection() {
    let mut cfg = config(":memory:");
    cfg.tokens_per_second = 20.0; // about three seconds of answer
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "long"}).to_string())
        .await;
    assert_eq!(client.next_json().await["type"], "response.created");
    assert_eq!(server.metric("tether_ws_connections_active").await, 1);
    drop(client);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while server.metric("tether_ws_connections_active").await != 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the connection task did not end"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn x_tether_fail_on_the_upgrade_fails_that_connections_responses() {
    let server = TestServer::start(":memory:").await;
    let refused = tether_client::WebSocket::connect(
        &server
            .endpoint()
            .with_header("x-tether-fail", "no_such_failure"),
    )
    .await
    .expect_err("refused");
    assert_eq!(refused.status(), Some(400));

    let mut client =
        common::connect_with_headers(server.addr, &[("x-tether-fail", "server_error")]).await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "hi"})
                .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let error = events
        .iter()
        .find(|e| e["type"] == "error")
        .expect("an error event");
    assert_eq!(error["status"], 500);
    let failed = events.last().unwrap();
    assert_eq!(failed["type"], "response.failed");
    // A failed response is not cached: it cannot be continued.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false,
            "previous_response_id": failed["response"]["id"], "input": "again"})
            .to_string(),
        )
        .await;
    assert_eq!(
        client.next_json().await["error"]["code"],
        "previous_response_not_found"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_frame_that_does_not_decode_is_refused_on_its_lane() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "input": 5, "stream_id": "L1"})
                .to_string(),
        )
        .await;
    let error = client.next_json().await;
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["stream_id"], "L1", "{error}");
    // An invalid lane name is not echoed back.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "input": 5, "stream_id": "bad id"})
                .to_string(),
        )
        .await;
    let error = client.next_json().await;
    assert_eq!(error["type"], "error", "{error}");
    assert!(error.get("stream_id").is_none(), "{error}");
    server.stop().await;
}
