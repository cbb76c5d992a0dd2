//! Graceful shutdown of a real `tether-server` process: on SIGTERM it stops accepting, lets
//! running responses finish within `--shutdown-grace-seconds`, ends the rest with
//! `response.failed`, closes WebSocket connections with code 1001, drains the store's queue and
//! exits 0; a second signal exits at once.

mod common;

use std::time::{Duration, Instant};

use common::process::ServerProcess;
use serde_json::{Value, json};

/// A response of ~`seconds` at 100 tokens/s.
fn slow(seconds: u64, store: bool) -> String {
    json!({"type": "response.create", "model": "m", "store": store, "input": "take your time",
           "metadata": {"sim_output_tokens": (seconds * 100).to_string()}})
    .to_string()
}

fn terminal(events: &[Value]) -> Option<&Value> {
    events.iter().find(|e| {
        matches!(
            e["type"].as_str(),
            Some("response.completed" | "response.failed" | "response.incomplete")
        )
    })
}

#[tokio::test]
async fn sigterm_lets_running_responses_finish_then_closes_with_1001_and_exits_0() {
    let dir = std::env::temp_dir().join(format!("tether-shutdown-{}", rand::random::<u64>()));
    let data = dir.to_str().unwrap();
    let mut server = ServerProcess::start(&[
        "--tokens-per-second",
        "100",
        "--data-dir",
        data,
        "--shutdown-grace-seconds",
        "20",
    ]);
    let mut busy = common::connect(server.addr).await;
    let mut idle = common::connect(server.addr).await;
    busy.send(&slow(2, true)).await;
    // Streaming: the response is running when the signal comes.
    loop {
        if busy.next_json().await["type"] == "response.output_text.delta" {
            break;
        }
    }
    let signalled = Instant::now();
    server.signal("TERM");
    // The idle connection closes at once, "going away".
    let (events, code) = idle.until_close().await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(code, Some(1001));
    assert!(signalled.elapsed() < Duration::from_secs(2));
    // A new connection is not accepted any more.
    let refused =
        tokio_tungstenite::connect_async(format!("ws://{}/v1/responses", server.addr)).await;
    assert!(refused.is_err(), "no new connection while draining");
    // The running response completes, then its connection closes.
    let (events, code) = busy.until_close().await;
    let done = terminal(&events).expect("a terminal event");
    assert_eq!(done["type"], "response.completed", "{done}");
    assert_eq!(code, Some(1001));
    let status = server.wait_for(Duration::from_secs(10)).expect("it exits");
    assert!(status.success(), "{status:?}");
    // What it completed is on disk: a new process finds it.
    let id = done["response"]["id"].as_str().unwrap().to_string();
    drop(server);
    let server = ServerProcess::start(&["--data-dir", data]);
    let stored = common::http_get(server.addr, &format!("/v1/responses/{id}")).await;
    assert_eq!(stored.status, 200, "{}", stored.text());
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn at_the_deadline_what_still_runs_fails_and_the_process_still_exits_0() {
    let mut server = ServerProcess::start(&[
        "--tokens-per-second",
        "100",
        "--data-dir",
        ":memory:",
        "--shutdown-grace-seconds",
        "1",
    ]);
    let mut client = common::connect(server.addr).await;
    client.send(&slow(30, false)).await;
    loop {
        if client.next_json().await["type"] == "response.output_text.delta" {
            break;
        }
    }
    let signalled = Instant::now();
    server.signal("TERM");
    let (events, code) = client.until_close().await;
    let done = terminal(&events).expect("a terminal event");
    assert_eq!(done["type"], "response.failed", "{done}");
    assert_eq!(done["response"]["error"]["code"], "server_shutting_down");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "error" && e["status"] == 503),
        "an error frame with the status: {events:?}"
    );
    assert_eq!(code, Some(1001));
    let status = server.wait_for(Duration::from_secs(10)).expect("it exits");
    assert!(status.success(), "{status:?}");
    assert!(signalled.elapsed() < Duration::from_secs(8));
}

#[tokio::test]
async fn a_second_signal_exits_at_once() {
    let mut server = ServerProcess::start(&[
        "--tokens-per-second",
        "100",
        "--data-dir",
        ":memory:",
        "--shutdown-grace-seconds",
        "60",
    ]);
    let mut client = common::connect(server.addr).await;
    client.send(&slow(30, false)).await;
    loop {
        if client.next_json().await["type"] == "response.output_text.delta" {
            break;
        }
    }
    server.signal("TERM");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(server.wait_for(Duration::ZERO).is_none(), "still draining");
    let signalled = Instant::now();
    server.signal("INT");
    let status = server.wait_for(Duration::from_secs(5)).expect("it exits");
    assert!(!status.success(), "{status:?}");
    assert!(signalled.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn requests_on_an_open_connection_are_refused_while_draining() {
    let mut server = ServerProcess::start(&[
        "--tokens-per-second",
        "100",
        "--data-dir",
        ":memory:",
        "--shutdown-grace-seconds",
        "20",
    ]);
    let mut client = common::connect(server.addr).await;
    client.send(&slow(2, false)).await;
    // A second request on the same lane waits behind the first.
    client.send(&slow(1, false)).await;
    loop {
        if client.next_json().await["type"] == "response.output_text.delta" {
            break;
        }
    }
    server.signal("TERM");
    let (events, code) = client.until_close().await;
    assert_eq!(terminal(&events).unwrap()["type"], "response.completed");
    let refused = events
        .iter()
        .find(|e| e["type"] == "error")
        .expect("the queued request is refused");
    assert_eq!(refused["status"], 503);
    assert_eq!(refused["error"]["code"], "server_shutting_down");
    assert_eq!(code, Some(1001));
    assert!(server.wait_for(Duration::from_secs(10)).unwrap().success());
}
