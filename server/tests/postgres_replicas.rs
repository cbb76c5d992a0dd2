//! Replicas sharing one PostgreSQL database (a throwaway cluster: `postgres_cluster`): what one
//! stores, another reads, continues over HTTP, hydrates over WebSocket, resolves as an
//! `item_reference`, and sees deleted at once; every response is billed exactly once; and a
//! WebSocket response whose `response.completed` a client has seen survives SIGKILL of the
//! replica that served it (real `tether-server` processes).

mod common;
mod postgres_cluster;

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use postgres_cluster::{Cluster, Replica, config, http, metric};
use serde_json::{Value, json};

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();

fn cluster() -> Option<&'static Cluster> {
    CLUSTER
        .get_or_init(|| Cluster::start("postgres_replicas"))
        .as_ref()
}

/// Two replicas on a fresh database, and its URL; `None` without PostgreSQL.
async fn two_replicas() -> Option<(Replica, Replica, String)> {
    let url = cluster()?.fresh_database("replicas").await;
    let a = Replica::start(config(&url)).await;
    let b = Replica::start(config(&url)).await;
    Some((a, b, url))
}

fn tools() -> Value {
    json!([{"type": "function", "name": "shell", "parameters": {"type": "object",
        "properties": {"command": {"type": "string"}}, "required": ["command"]}}])
}

fn completed(events: &[Value]) -> &Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{last}");
    &last["response"]
}

/// Every response id in the ledger, with how many lines it has.
async fn ledger_counts(url: &str) -> Vec<(String, i64)> {
    let client = postgres_cluster::client(url).await;
    client
        .query(
            "SELECT response_id, count(*) FROM usage_ledger GROUP BY response_id ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

#[tokio::test]
async fn an_http_chain_moves_between_replicas_and_a_delete_is_seen_at_once() {
    let Some((a, b, url)) = two_replicas().await else {
        return;
    };
    let (status, first) = http(
        a.addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "one"})),
    )
    .await;
    assert_eq!(status, 200, "{first}");
    let first_id = first["id"].as_str().unwrap().to_string();
    // Stored through A, read through B.
    let (status, read) = http(b.addr, "GET", &format!("/v1/responses/{first_id}"), None).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["output"], first["output"]);
    // Continued on B, then on A again.
    let (status, second) = http(
        b.addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "two", "previous_response_id": first_id})),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    let second_id = second["id"].as_str().unwrap().to_string();
    let (status, third) = http(
        a.addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "three", "previous_response_id": second_id})),
    )
    .await;
    assert_eq!(status, 200, "{third}");
    let third_id = third["id"].as_str().unwrap().to_string();
    // B lists the input A's response was generated from: the whole chain.
    let (status, items) = http(
        b.addr,
        "GET",
        &format!("/v1/responses/{third_id}/input_items?order=asc&limit=100"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{items}");
    let roles: Vec<&str> = items["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["role"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    // A delete through B is seen by A at once.
    let (status, deleted) = http(
        b.addr,
        "DELETE",
        &format!("/v1/responses/{second_id}"),
        None,
    )
    .await;
    assert_eq!((status, &deleted["deleted"]), (200, &json!(true)));
    let (status, _) = http(a.addr, "GET", &format!("/v1/responses/{second_id}"), None).await;
    assert_eq!(status, 404);
    let (status, error) = http(
        a.addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "x", "previous_response_id": second_id})),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    // Three responses, three ledger lines, from two replicas.
    let lines = ledger_counts(&url).await;
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines.iter().all(|(_, n)| *n == 1), "{lines:?}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_websocket_reconnect_to_another_replica_hydrates_from_the_store() {
    let Some((a, b, url)) = two_replicas().await else {
        return;
    };
    let mut on_a = common::connect(a.addr).await;
    on_a.send(
        &json!({"type": "response.create", "model": "m", "store": true, "tools": tools(),
            "input": "run something"})
        .to_string(),
    )
    .await;
    let first = completed(&on_a.response_events().await).clone();
    let call = &first["output"][0];
    assert_eq!(call["type"], "function_call", "{first}");
    // Continued from A's connection cache once.
    on_a.send(
        &json!({"type": "response.create", "model": "m", "store": true, "tools": tools(),
            "previous_response_id": first["id"],
            "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}]})
        .to_string(),
    )
    .await;
    let second = completed(&on_a.response_events().await).clone();
    assert_eq!(
        metric(a.addr, "tether_cache_lookups_total{result=\"hit\"}").await,
        1
    );
    // The client reconnects — to the other replica — as soon as it has seen `completed`: the
    // response is in the shared store already (written before `completed` was sent).
    drop(on_a);
    let mut on_b = common::connect(b.addr).await;
    on_b.send(
        &json!({"type": "response.create", "model": "m", "store": true,
            "previous_response_id": second["id"], "input": "and now?"})
        .to_string(),
    )
    .await;
    let third = completed(&on_b.response_events().await).clone();
    assert_eq!(
        metric(b.addr, "tether_cache_lookups_total{result=\"store\"}").await,
        1,
        "hydrated from the store"
    );
    // The hydrated context is the whole conversation: A's two turns, then B's.
    let (status, items) = http(
        a.addr,
        "GET",
        &format!(
            "/v1/responses/{}/input_items?order=asc&limit=100",
            third["id"].as_str().unwrap()
        ),
        None,
    )
    .await;
    assert_eq!(status, 200, "{items}");
    let types: Vec<&str> = items["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.len(), 5, "{types:?}");
    assert_eq!(
        types[..3],
        ["message", "function_call", "function_call_output"]
    );
    assert_eq!(types[4], "message", "B's new input, last");
    let lines = ledger_counts(&url).await;
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines.iter().all(|(_, n)| *n == 1), "{lines:?}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn an_item_reference_resolves_on_another_replica() {
    let Some((a, b, _url)) = two_replicas().await else {
        return;
    };
    let (_, first) = http(
        a.addr,
        "POST",
        "/v1/responses",
        Some(&json!({"model": "m", "input": "hi", "tools": tools()})),
    )
    .await;
    let call = first["output"][0].clone();
    assert_eq!(call["type"], "function_call", "{first}");
    let with_reference = json!({"model": "m", "tools": tools(), "store": false, "input": [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "item_reference", "id": call["id"]},
        {"type": "function_call_output", "call_id": call["call_id"], "output": "done"}]});
    let (status, second) = http(b.addr, "POST", "/v1/responses", Some(&with_reference)).await;
    assert_eq!(status, 200, "{second}");
    // Over WebSocket too.
    let mut on_b = common::connect(b.addr).await;
    let mut frame = with_reference.clone();
    frame["type"] = json!("response.create");
    on_b.send(&frame.to_string()).await;
    completed(&on_b.response_events().await);
    // Deleted through B: A no longer resolves it.
    let id = first["id"].as_str().unwrap();
    let (status, _) = http(b.addr, "DELETE", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(status, 200);
    let (status, error) = http(a.addr, "POST", "/v1/responses", Some(&with_reference)).await;
    assert_eq!(status, 400, "{error}");
    a.stop().await;
    b.stop().await;
}

/// A server process, killed when dropped (a failed assertion must not leave it running).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `tether-server` process on the store `url`; its base URL.
fn spawn_server(url: &str, extra: &[&str]) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether-server"))
        .args(["--addr", "127.0.0.1:0", "--static-dir", "/nonexistent"])
        .args(["--tokens-per-second", "100000", "--store", url])
        .args(extra)
        .env("RUST_LOG", "tether_server=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("tether-server starts");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let child = Server(child);
    // The `listening on` line (a log line may come first).
    let base = lines
        .by_ref()
        .take(20)
        .map_while(Result::ok)
        .find_map(|line| Some(line.split_once("listening on ")?.1.trim().to_string()))
        .expect("tether-server says where it listens");
    // Keep reading, so the pipe never fills.
    std::thread::spawn(move || for _ in lines.by_ref() {});
    (child, base)
}

fn addr_of(base: &str) -> std::net::SocketAddr {
    base.trim_start_matches("http://").parse().unwrap()
}

#[tokio::test]
async fn a_completed_websocket_response_survives_sigkill_of_its_replica() {
    let Some(cluster) = cluster() else {
        return;
    };
    let url = cluster.fresh_database("sigkill").await;
    let (mut a, a_url) = spawn_server(&url, &[]);
    let (b, b_url) = spawn_server(&url, &[]);
    let mut ids = Vec::new();
    for turn in 0..5 {
        let mut on_a = common::connect(addr_of(&a_url)).await;
        on_a.send(
            &json!({"type": "response.create", "model": "m", "store": true,
                "input": format!("turn {turn}")})
            .to_string(),
        )
        .await;
        ids.push(completed(&on_a.response_events().await)["id"].clone());
    }
    // SIGKILL the moment the last `completed` arrived: nothing gets to finish.
    a.0.kill().unwrap();
    a.0.wait().unwrap();
    let b_addr = addr_of(&b_url);
    for id in &ids {
        let mut on_b = common::connect(b_addr).await;
        on_b.send(
            &json!({"type": "response.create", "model": "m", "store": true,
                "previous_response_id": id, "input": "continue"})
            .to_string(),
        )
        .await;
        completed(&on_b.response_events().await);
    }
    assert_eq!(
        metric(b_addr, "tether_cache_lookups_total{result=\"store\"}").await,
        ids.len() as u64
    );
    // Billed once each: A's five lines made it before the kill, B's five after.
    let lines = ledger_counts(&url).await;
    assert_eq!(lines.len(), 10, "{lines:?}");
    assert!(lines.iter().all(|(_, n)| *n == 1), "{lines:?}");
    drop(b);
}
