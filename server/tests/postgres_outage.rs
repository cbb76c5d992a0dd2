//! The PostgreSQL store's failure modes, against a real cluster this test stops and starts
//! (`postgres_cluster`; a cluster of its own, since it is taken away): while the database is
//! down, what needs it is answered 503 (HTTP) or an error frame with status 503 (WebSocket),
//! never a panic; `/readyz` says so while `/healthz` stays 200; a response served meanwhile is
//! written once the database is back; everything recovers without a restart. And a database
//! that is down at start stops the server with a clear error and a non-zero exit.

mod common;
mod postgres_cluster;

use std::time::{Duration, Instant};

use postgres_cluster::{Cluster, Replica, config, http};
use serde_json::json;

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not within 20 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_database_that_goes_away_is_503_until_it_returns() {
    let Some(cluster) = Cluster::start("postgres_outage") else {
        return;
    };
    let url = cluster.fresh_database("outage").await;
    let mut config = config(&url);
    config.store_statement_timeout_ms = 2000;
    let replica = Replica::start(config).await;
    let addr = replica.addr;
    let (status, ready) = http(addr, "GET", "/readyz", None).await;
    assert_eq!(status, 200, "{ready}");
    let (status, first) = http(
        addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "before"})),
    )
    .await;
    assert_eq!(status, 200, "{first}");
    let id = first["id"].as_str().unwrap().to_string();

    cluster.stop();
    let (status, _) = http(addr, "GET", "/healthz", None).await;
    assert_eq!(status, 200, "alive");
    let (status, ready) = http(addr, "GET", "/readyz", None).await;
    assert_eq!(status, 503, "{ready}");
    assert!(ready.to_string().contains("unavailable"), "{ready}");
    let (status, error) = http(addr, "GET", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, 503, "{error}");
    assert_eq!(error["error"]["type"], "server_error", "{error}");
    let (status, error) = http(
        addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "next", "previous_response_id": id})),
    )
    .await;
    assert_eq!(status, 503, "{error}");
    let (status, _) = http(addr, "DELETE", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, 503);
    // Over WebSocket, a continuation that must hydrate gets an error frame with status 503,
    // and the connection stays usable.
    let mut socket = common::connect(addr).await;
    socket
        .send(
            &json!({"type": "response.create", "model": "m", "previous_response_id": id,
                "input": "next"})
            .to_string(),
        )
        .await;
    let frame = socket.next_json().await;
    assert_eq!(frame["type"], "error", "{frame}");
    assert_eq!(frame["status"], 503, "{frame}");
    // What needs no store is still served; its write waits for the database.
    let (status, during) = http(
        addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "during"})),
    )
    .await;
    assert_eq!(status, 200, "{during}");
    let during_id = during["id"].as_str().unwrap().to_string();
    let (status, _) = http(addr, "GET", &format!("/v1/responses/{during_id}"), None).await;
    assert_eq!(status, 200, "readable on its replica while queued");

    cluster.restart();
    eventually("ready again", async || {
        http(addr, "GET", "/readyz", None).await.0 == 200
    })
    .await;
    let (status, read) = http(addr, "GET", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, 200, "{read}");
    let (status, next) = http(
        addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "after", "previous_response_id": id})),
    )
    .await;
    assert_eq!(status, 200, "{next}");
    socket
        .send(
            &json!({"type": "response.create", "model": "m", "previous_response_id": id,
                "input": "next"})
            .to_string(),
        )
        .await;
    let events = socket.response_events().await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    // The response served during the outage reached the database.
    let client = postgres_cluster::client(&url).await;
    eventually("the queued write landed", async || {
        client
            .query_opt("SELECT 1 FROM responses WHERE id = $1", &[&during_id])
            .await
            .unwrap()
            .is_some()
    })
    .await;
    let billed: i64 = client
        .query_one(
            "SELECT count(*) FROM usage_ledger WHERE response_id = $1",
            &[&during_id],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(billed, 1);
    replica.stop().await;
}

#[test]
fn a_database_down_at_start_is_a_clear_error_and_a_failed_exit() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tether-server"))
        .args(["--addr", "127.0.0.1:0", "--static-dir", "/nonexistent"])
        .arg("--store")
        // A password no log line could contain by chance ("secret" is a word the server uses).
        .arg(format!(
            "postgres://tether:pw-7f3a9c@127.0.0.1:{port}/tether"
        ))
        .args([
            "--store-connect-retries",
            "2",
            "--store-connect-retry-ms",
            "100",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success(), "exited {}", output.status);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot reach PostgreSQL at 127.0.0.1:")
            && stderr.contains("after 3 attempt(s)"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("pw-7f3a9c"),
        "the password stays out: {stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("listening on"),
        "it never said it was listening"
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}
