//! The chosen limits of WebSocket mode: connections open at once, requests waiting per
//! connection, the memory of connection caches (one connection's and all of them together),
//! quiet and idle connections.

mod common;

use std::time::Duration;

use common::{TestServer, config};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tether_client::WebSocket;
use tokio_tungstenite::tungstenite::Message;

fn create(input: &str, store: bool, previous: Option<&Value>) -> String {
    let mut frame =
        json!({"type": "response.create", "model": "m", "store": store, "input": input});
    if let Some(previous) = previous {
        frame["previous_response_id"] = previous.clone();
    }
    frame.to_string()
}

#[tokio::test]
async fn beyond_max_connections_the_upgrade_is_refused_with_503_and_http_still_serves() {
    let mut cfg = config(":memory:");
    cfg.max_connections = 2;
    let server = TestServer::start_with(cfg).await;
    let first = server.connect().await;
    let _second = server.connect().await;
    let refused = WebSocket::connect(&server.endpoint())
        .await
        .expect_err("a third connection is refused");
    assert!(
        matches!(refused, tether_client::Error::UpgradeRefused { .. }),
        "not an HTTP refusal: {refused:?}"
    );
    assert_eq!(refused.status(), Some(503));
    assert_eq!(refused.code(), Some("too_many_connections"));
    assert!(refused.api_error().unwrap().message.contains("2"));
    // HTTP is served meanwhile.
    let answer = server
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(answer["status"], "completed");
    // A closed connection frees its place.
    drop(first);
    let mut again = None;
    for _ in 0..50 {
        if let Ok(socket) = WebSocket::connect(&server.endpoint()).await {
            again = Some(socket);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(again.is_some(), "the place came back");
    server.stop().await;
}

#[tokio::test]
async fn requests_waiting_on_a_connection_are_counted_across_its_lanes() {
    let mut cfg = config(":memory:");
    cfg.tokens_per_second = 200.0;
    cfg.max_queued_requests = 2;
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    let on = |lane: &str| {
        json!({"type": "response.create", "model": "m", "store": false, "input": "wait",
               "stream_id": lane, "metadata": {"sim_output_tokens": "100"}})
        .to_string()
    };
    // Lane a runs one, b runs one: nothing waits yet.
    client.send(&on("a")).await;
    client.send(&on("b")).await;
    let mut started = 0;
    while started < 2 {
        if client.next_json().await["type"] == "response.created" {
            started += 1;
        }
    }
    // Then two wait (one on a, one on b), and a third is refused on its lane.
    for lane in ["a", "b", "a"] {
        client.send(&on(lane)).await;
    }
    let mut refusals = Vec::new();
    let mut completed = 0;
    while completed < 4 {
        let event = client.next_json().await;
        match event["type"].as_str() {
            Some("error") => refusals.push(event),
            Some("response.completed") => completed += 1,
            _ => {}
        }
    }
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0]["status"], 429);
    assert_eq!(refusals[0]["error"]["code"], "too_many_queued_requests");
    assert_eq!(refusals[0]["stream_id"], "a");
    server.stop().await;
}

#[tokio::test]
async fn the_cache_budget_evicts_the_least_recently_used_connection_first() {
    let mut cfg = config(":memory:");
    // Room for about one short conversation across every connection.
    cfg.cache_memory_bytes = 12 * 1024;
    let server = TestServer::start_with(cfg).await;
    let mut idle = server.connect().await;
    let mut busy = server.connect().await;
    idle.send(&create("remember me", false, None)).await;
    let unstored = idle.response_events().await.last().unwrap()["response"]["id"].clone();
    idle.send(&create("remember me too", true, None)).await;
    let stored = idle.response_events().await.last().unwrap()["response"]["id"].clone();
    // The other connection works on: the idle one's entries go.
    let mut previous = None;
    for turn in 0..6 {
        busy.send(&create(
            &format!("turn {turn} {}", "x".repeat(500)),
            false,
            previous.as_ref(),
        ))
        .await;
        let done = busy.response_events().await;
        previous = Some(done.last().unwrap()["response"]["id"].clone());
    }
    // Its unstored response: `previous_response_not_found`, which a client acts on (it resends
    // the context); its stored one comes back from the store.
    idle.send(&create("and now?", false, Some(&unstored))).await;
    let refused = idle.next_json().await;
    assert_eq!(refused["error"]["code"], "previous_response_not_found");
    idle.send(&create("and now?", false, Some(&stored))).await;
    let events = idle.response_events().await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    assert!(
        server
            .metric("tether_cache_lookups_total{result=\"store\"}")
            .await
            >= 1
    );
    // The busy connection's chain was served from its cache all along.
    assert!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await
            >= 5
    );
    server.stop().await;
}

#[tokio::test]
async fn an_idle_connection_is_told_and_closed() {
    let mut cfg = config(":memory:");
    cfg.idle_timeout_seconds = 0.5;
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    client.send(&create("hi", false, None)).await;
    client.response_events().await;
    let error = client.next_json().await;
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["code"], "websocket_idle_timeout");
    let (after, code) = client.until_close().await;
    assert!(after.is_empty(), "{after:?}");
    assert_eq!(code, Some(1001));
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_answers_pings_stays_and_a_silent_one_is_dropped() {
    let mut cfg = config(":memory:");
    cfg.ping_interval_seconds = 0.2;
    cfg.idle_timeout_seconds = 0.0;
    let server = TestServer::start_with(cfg).await;
    // tungstenite answers pings while it reads; a raw socket lets the test count them.
    let mut answering = common::connect_raw(server.addr).await;
    let mut pings = 0;
    let reading = async {
        while let Some(Ok(message)) = answering.next().await {
            if matches!(message, Message::Ping(_)) {
                pings += 1;
                if pings == 3 {
                    break;
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), reading)
        .await
        .expect("three pings");
    assert!(
        served(&mut answering).await,
        "the answering connection is served"
    );

    // A client that never reads never answers: after two intervals it is gone. (On a loaded
    // machine the server's check may run late, so the test waits for it, up to 10 s, answering
    // pings all the while.)
    let silent = server.connect().await;
    let mut seen_both = false;
    let mut active = 0;
    for _ in 0..100 {
        active = server.metric("tether_ws_connections_active").await;
        seen_both |= active == 2;
        if seen_both && active == 1 {
            break;
        }
        let keep_answering = async { while let Some(Ok(_)) = answering.next().await {} };
        let _ = tokio::time::timeout(Duration::from_millis(100), keep_answering).await;
    }
    assert!(seen_both, "the silent connection was counted");
    assert_eq!(active, 1, "only the answering one");
    // The one left is the answering connection: it is still served.
    assert!(
        served(&mut answering).await,
        "the answering connection is still served"
    );
    drop(silent);
    server.stop().await;
}

/// Sends a turn on a raw connection and reads until it completes (false if the connection ends
/// first).
async fn served(socket: &mut common::Socket) -> bool {
    socket
        .send(Message::Text(create("still here", false, None).into()))
        .await
        .unwrap();
    while let Some(Ok(message)) = socket.next().await {
        if message
            .to_text()
            .is_ok_and(|t| t.contains("response.completed"))
        {
            return true;
        }
    }
    false
}
