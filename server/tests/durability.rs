//! The durability contract (docs/server.md, "What is on disk when"): a `store: true` response
//! whose `response.completed` a client received is on disk — over HTTP (JSON and SSE) always,
//! over WebSocket with `--ws-writes durable` — so a SIGKILL at any moment loses none of them.
//! Each case kills a real server process at random points of a run (the seed is printed), starts
//! a new one on the same data directory and reads back every response a client saw completed.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::process::ServerProcess;
use parking_lot::Mutex;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use tether_client::{Http, WebSocket};
use tether_protocol::{ResponseCreate, ResponseStatus};

#[derive(Clone, Copy, Debug)]
enum Transport {
    Json,
    Sse,
    WebSocket,
}

/// One client's loop: chained `store: true` turns until the server goes away; every id whose
/// completion it saw goes into `seen`.
async fn client(addr: SocketAddr, transport: Transport, seen: Arc<Mutex<Vec<String>>>) {
    let endpoint = common::endpoint(addr);
    let mut previous: Option<String> = None;
    let mut socket = match transport {
        Transport::WebSocket => {
            match tokio::time::timeout(Duration::from_secs(5), WebSocket::connect(&endpoint)).await
            {
                Ok(Ok(socket)) => Some(socket),
                _ => return,
            }
        }
        _ => None,
    };
    let mut http = Http::new(&endpoint);
    for turn in 0.. {
        let mut request = ResponseCreate::new("m", format!("turn {turn}"));
        request.store = Some(true);
        request.previous_response_id = previous.clone();
        let response = match (&mut socket, transport) {
            (Some(socket), _) => socket.turn(&request).await.map(|done| done.response),
            (None, Transport::Sse) => http.turn(&request).await.map(|done| done.response),
            (None, _) => http.create(&request).await,
        };
        let id = match response {
            Ok(response) if response.status == ResponseStatus::Completed => response.id,
            _ => return,
        };
        seen.lock().push(id.clone());
        previous = Some(id);
    }
}

/// Runs `clients` of `transport` against a server on `data`, SIGKILLs it after `kill_after`;
/// every response they saw completed.
async fn run_until_killed(
    data: &str,
    extra: &[&str],
    transport: Transport,
    kill_after: Duration,
) -> Vec<String> {
    let mut args = vec!["--data-dir", data, "--tokens-per-second", "20000"];
    args.extend_from_slice(extra);
    let server = ServerProcess::start(&args);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..4)
        .map(|_| tokio::spawn(client(server.addr, transport, seen.clone())))
        .collect();
    tokio::time::sleep(kill_after).await;
    server.signal("KILL");
    drop(server);
    for client in clients {
        let _ = tokio::time::timeout(Duration::from_secs(10), client).await;
    }
    std::mem::take(&mut *seen.lock())
}

async fn contract_holds(transport: Transport, extra: &[&str]) {
    let seed: u64 = rand::random();
    println!("{transport:?}: seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = std::env::temp_dir().join(format!("tether-durability-{seed}"));
    let data = dir.to_str().unwrap().to_string();
    let mut all = Vec::new();
    for _ in 0..3 {
        let kill_after = Duration::from_millis(rng.random_range(150..900));
        let seen = run_until_killed(&data, extra, transport, kill_after).await;
        assert!(!seen.is_empty(), "no response completed in {kill_after:?}");
        all.extend(seen);
    }
    let server = ServerProcess::start(&["--data-dir", &data]);
    let mut missing = Vec::new();
    for id in &all {
        let reply = common::http_get(server.addr, &format!("/v1/responses/{id}")).await;
        if reply.status != 200 {
            missing.push(id.clone());
        }
    }
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        missing.is_empty(),
        "{transport:?} (seed {seed}): {} of {} responses seen completed are not on disk: {missing:?}",
        missing.len(),
        all.len()
    );
    println!(
        "{transport:?}: all {} completed responses survived three SIGKILLs",
        all.len()
    );
}

#[tokio::test]
async fn http_json_responses_seen_completed_survive_sigkill() {
    contract_holds(Transport::Json, &[]).await;
}

#[tokio::test]
async fn sse_responses_seen_completed_survive_sigkill() {
    contract_holds(Transport::Sse, &[]).await;
}

#[tokio::test]
async fn websocket_responses_seen_completed_survive_sigkill_with_durable_writes() {
    contract_holds(Transport::WebSocket, &["--ws-writes", "durable"]).await;
}

/// `POST path` with `body`; the JSON answer.
async fn post(addr: SocketAddr, path: &str, body: &Value) -> Value {
    let reply = common::request(&common::endpoint(addr), "POST", path, Some(body)).await;
    reply
        .json()
        .unwrap_or_else(|_| panic!("not JSON: {}", reply.text()))
}

/// The stored response `id`, as `GET /v1/responses/{id}` answers it.
async fn stored(addr: SocketAddr, id: &str) -> Value {
    let reply = common::http_get(addr, &format!("/v1/responses/{id}")).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json().unwrap()
}

/// The events of `GET /v1/responses/{id}?stream=true{query}`, which must end within 10 s.
async fn resumed(addr: SocketAddr, id: &str, query: &str) -> Vec<Value> {
    let path = format!("/v1/responses/{id}?stream=true{query}");
    let reply = tokio::time::timeout(Duration::from_secs(10), common::http_get(addr, &path))
        .await
        .unwrap_or_else(|_| panic!("{path}: the stream never ended"));
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply
        .text()
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

#[tokio::test]
async fn background_responses_running_at_a_sigkill_end_failed_with_a_reason() {
    let dir = std::env::temp_dir().join(format!("tether-background-{}", rand::random::<u64>()));
    let data = dir.to_str().unwrap().to_string();
    // 100 tokens/s, 100,000 tokens: they run far longer than the test.
    let args = ["--data-dir", &data, "--tokens-per-second", "100"];
    let server = ServerProcess::start(&args);
    let long = json!({"model": "tether-sim", "input": "a long story", "background": true,
                      "metadata": {"sim_output_tokens": "100000"}});
    let mut ids = Vec::new();
    for _ in 0..3 {
        let queued = post(server.addr, "/v1/responses", &long).await;
        assert_eq!(queued["status"], "queued", "{queued}");
        ids.push(queued["id"].as_str().unwrap().to_string());
    }
    // Each one running (stored `in_progress`) before the kill.
    for id in &ids {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while stored(server.addr, id).await["status"] != "in_progress" {
            assert!(tokio::time::Instant::now() < deadline, "{id} never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    server.signal("KILL");
    drop(server);
    // The restarted server ends them before it serves.
    let server = ServerProcess::start(&args);
    for id in &ids {
        let response = stored(server.addr, id).await;
        assert_eq!(response["status"], "failed", "{response}");
        assert_eq!(response["error"]["code"], "server_error", "{response}");
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains("stopped"),
            "{response}"
        );
        // A client resuming its stream learns how it ended: its events died with the server,
        // its terminal event did not — numbered after the last one the client saw.
        for (query, number) in [("&starting_after=7", 8), ("", 0)] {
            let events = resumed(server.addr, id, query).await;
            assert_eq!(events.len(), 1, "{events:?}");
            assert_eq!(events[0]["type"], "response.failed", "{events:?}");
            assert_eq!(events[0]["sequence_number"], number, "{events:?}");
            assert_eq!(events[0]["response"]["id"], id.as_str());
            assert_eq!(events[0]["response"]["status"], "failed");
            assert_eq!(events[0]["response"]["error"], response["error"]);
        }
    }
    // A new one runs as usual.
    let quick = json!({"model": "tether-sim", "input": "hi", "background": true,
                       "metadata": {"sim_output_tokens": "3"}});
    let queued = post(server.addr, "/v1/responses", &quick).await;
    let id = queued["id"].as_str().unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while stored(server.addr, id).await["status"] != "completed" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{id} never completed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}
