//! Authentication a browser can use without putting an API key in a URL: the key as a
//! WebSocket subprotocol (`openai-insecure-api-key.<key>`, with `responses` selected), and
//! short-lived client secrets (`POST /v1/responses/client_secrets`) accepted on the upgrade
//! only, expiring, and scoped to the minting key's project. The `api_key` query parameter still
//! works, and never shows in the server's logs.

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::{Socket, TestServer};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};

/// `method path` with a bearer `key` (none if empty) and a raw `body`; the status and the JSON
/// body (`Null` if none).
async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    key: &str,
    body: &str,
) -> (u16, Value) {
    let body = (!body.is_empty()).then(|| body.as_bytes().to_vec());
    let reply = tether_client::Http::new(&server.endpoint().with_api_key(key))
        .request(method, path, body)
        .await
        .unwrap();
    (reply.status, reply.json().unwrap_or(Value::Null))
}

/// Mints a client secret with `key`; the secret and its `expires_at`.
async fn mint(server: &TestServer, key: &str, seconds: u64) -> (String, u64) {
    let body = json!({"expires_after": {"anchor": "created_at", "seconds": seconds}});
    let (status, minted) = call(
        server,
        "POST",
        "/v1/responses/client_secrets",
        key,
        &body.to_string(),
    )
    .await;
    assert_eq!(status, 200, "{minted}");
    let value = minted["value"].as_str().unwrap().to_string();
    (value, minted["expires_at"].as_u64().unwrap())
}

/// The outcome of an upgrade of `path_and_query` offering `subprotocols` (none if empty): the
/// socket and the subprotocol the server selected, or the refusal's status and JSON body. A raw
/// tungstenite upgrade: this file tests the handshake itself — what is offered, what is
/// selected, keys in the query — which the client does its own way.
async fn upgrade(
    server: &TestServer,
    path_and_query: &str,
    subprotocols: &[&str],
) -> Result<(Socket, Option<String>), (u16, Value)> {
    let mut request = format!("ws://{}{path_and_query}", server.addr)
        .into_client_request()
        .unwrap();
    if !subprotocols.is_empty() {
        request.headers_mut().insert(
            "sec-websocket-protocol",
            subprotocols.join(", ").parse().unwrap(),
        );
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, response)) => {
            let selected = response
                .headers()
                .get("sec-websocket-protocol")
                .map(|value| value.to_str().unwrap().to_string());
            Ok((socket, selected))
        }
        Err(tungstenite::Error::Http(response)) => {
            let body = response.body().clone().unwrap_or_default();
            Err((
                response.status().as_u16(),
                serde_json::from_slice(&body).unwrap_or(Value::Null),
            ))
        }
        Err(other) => panic!("the upgrade failed otherwise: {other}"),
    }
}

/// Offers `responses` and the key token for `key`, as a browser client would.
fn browser_protocols(key: &str) -> [String; 2] {
    [
        "responses".to_string(),
        format!("openai-insecure-api-key.{key}"),
    ]
}

async fn connected(
    server: &TestServer,
    path_and_query: &str,
    subprotocols: &[&str],
) -> (Socket, Option<String>) {
    match upgrade(server, path_and_query, subprotocols).await {
        Ok(connected) => connected,
        Err((status, body)) => panic!("upgrade refused: {status} {body}"),
    }
}

/// Sends one `response.create` (`extra` merged in) and reads it to its end.
async fn respond(socket: &mut Socket, extra: Value) -> Vec<Value> {
    let mut frame = json!({"type": "response.create", "model": "tether-sim", "input": "hi",
        "store": false});
    for (name, value) in extra.as_object().unwrap() {
        frame[name] = value.clone();
    }
    socket
        .send(Message::Text(frame.to_string().into()))
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let Some(Ok(Message::Text(text))) = socket.next().await else {
            panic!("the connection ended before the response did")
        };
        let event: Value = serde_json::from_str(&text).unwrap();
        let end = matches!(
            event["type"].as_str(),
            Some("response.completed" | "response.failed" | "error")
        );
        events.push(event);
        if end {
            return events;
        }
    }
}

async fn keyed_server() -> TestServer {
    let mut config = common::config(":memory:");
    config.api_keys = vec!["browser-key-a".into(), "browser-key-b".into()];
    TestServer::start_with(config).await
}

/// Everything tracing (and `log`) emits in this test binary, at every level, but the test
/// client's own handshake, which prints its request line (the server never runs tungstenite's
/// client handshake: axum answers the upgrade).
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        tracing_subscriber::fmt()
            .with_env_filter("trace,tungstenite::handshake::client=off")
            .with_ansi(false)
            .with_writer(move || Capture(sink.clone()))
            .try_init()
            .expect("the only subscriber of this test binary");
        logs
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_key_as_a_subprotocol_opens_the_connection_and_a_wrong_one_is_401() {
    let server = keyed_server().await;
    let offered = browser_protocols("browser-key-a");
    let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
    let (mut client, selected) = connected(&server, "/v1/responses", &offered).await;
    // The server selects the marker, never the token that carries the key.
    assert_eq!(selected.as_deref(), Some("responses"));
    let events = respond(&mut client, json!({})).await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    drop(client);

    // Also when it is offered among others, in any order.
    let (_, selected) = connected(
        &server,
        "/v1/responses",
        &[
            "graphql-ws",
            "openai-insecure-api-key.browser-key-b",
            "responses",
        ],
    )
    .await;
    assert_eq!(selected.as_deref(), Some("responses"));

    let (status, body) = upgrade(
        &server,
        "/v1/responses",
        &["responses", "openai-insecure-api-key.wrong"],
    )
    .await
    .expect_err("a wrong key is refused");
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "invalid_api_key");
    // The marker alone carries no key.
    let (status, _) = upgrade(&server, "/v1/responses", &["responses"])
        .await
        .expect_err("no key is refused");
    assert_eq!(status, 401);
    // A key token without the marker: browsers would fail the handshake, so the server says why.
    let (status, body) = upgrade(
        &server,
        "/v1/responses",
        &["openai-insecure-api-key.browser-key-a"],
    )
    .await
    .expect_err("a key without the marker is refused");
    assert_eq!(status, 400);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("'responses' subprotocol"), "{message}");
    server.stop().await;
}

#[tokio::test]
async fn without_keys_the_marker_is_still_selected() {
    let server = TestServer::start(":memory:").await;
    let (mut client, selected) = connected(&server, "/v1/responses", &["responses"]).await;
    assert_eq!(selected.as_deref(), Some("responses"));
    let events = respond(&mut client, json!({})).await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    // An upgrade that offers none gets none, as before.
    let (_, selected) = connected(&server, "/v1/responses", &[]).await;
    assert_eq!(selected, None);
    server.stop().await;
}

#[tokio::test]
async fn a_client_secret_opens_the_upgrade_and_nothing_else() {
    let server = keyed_server().await;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (secret, expires_at) = mint(&server, "browser-key-a", 120).await;
    assert!(secret.starts_with("ek_"), "{secret}");
    assert!(
        (before + 119..=before + 121).contains(&expires_at),
        "{expires_at}"
    );

    // On the upgrade: as the subprotocol token, as the query parameter, as a bearer header.
    let offered = browser_protocols(&secret);
    let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
    let (mut client, selected) = connected(&server, "/v1/responses", &offered).await;
    assert_eq!(selected.as_deref(), Some("responses"));
    let events = respond(&mut client, json!({})).await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    let (mut client, _) = connected(&server, &format!("/v1/responses?api_key={secret}"), &[]).await;
    let events = respond(&mut client, json!({})).await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");

    // Anywhere else it is not a key, and the error says so.
    let create = json!({"model": "tether-sim", "input": "hi"}).to_string();
    for (method, path, body) in [
        ("POST", "/v1/responses", create.as_str()),
        ("GET", "/v1/responses/resp_x", ""),
        ("GET", "/v1/models", ""),
        ("POST", "/v1/responses/client_secrets", "{}"),
    ] {
        let (status, error) = call(&server, method, path, &secret, body).await;
        assert_eq!(status, 401, "{method} {path}: {error}");
        assert_eq!(error["error"]["code"], "invalid_api_key");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("only on the WebSocket upgrade"),
            "{message}"
        );
    }
    // The query parameter is read on the upgrade only.
    let (status, _) = call(
        &server,
        "GET",
        &format!("/v1/responses/resp_x?api_key={secret}"),
        "",
        "",
    )
    .await;
    assert_eq!(status, 401);
    // An unknown secret on the upgrade.
    let (status, body) = upgrade(&server, "/v1/responses?api_key=ek_0123", &[])
        .await
        .expect_err("an unknown secret is refused");
    assert_eq!(status, 401);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown or expired")
    );
    server.stop().await;
}

#[tokio::test]
async fn minting_needs_a_valid_api_key_and_a_valid_body() {
    let server = keyed_server().await;
    let path = "/v1/responses/client_secrets";
    let (status, _) = call(&server, "POST", path, "", "{}").await;
    assert_eq!(status, 401);
    let (status, _) = call(&server, "POST", path, "not-a-key", "{}").await;
    assert_eq!(status, 401);
    // No body: the default lifetime, ten minutes.
    let (status, minted) = call(&server, "POST", path, "browser-key-b", "").await;
    assert_eq!(status, 200, "{minted}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expires_at = minted["expires_at"].as_u64().unwrap();
    assert!((now + 598..=now + 600).contains(&expires_at), "{minted}");
    for (body, param, code) in [
        (
            r#"{"expires_after": {"seconds": 3601}}"#,
            "expires_after.seconds",
            Some("integer_above_max_value"),
        ),
        (
            r#"{"expires_after": {"seconds": 0}}"#,
            "expires_after.seconds",
            Some("integer_below_min_value"),
        ),
        (
            r#"{"expires_after": {"seconds": "60"}}"#,
            "expires_after.seconds",
            None,
        ),
        (
            r#"{"expires_after": {"anchor": "later"}}"#,
            "expires_after.anchor",
            Some("invalid_value"),
        ),
        (r#"{"expires_after": 60}"#, "expires_after", None),
    ] {
        let (status, error) = call(&server, "POST", path, "browser-key-b", body).await;
        assert_eq!(status, 400, "{body}: {error}");
        assert_eq!(error["error"]["param"], param, "{body}");
        assert_eq!(error["error"]["code"].as_str(), code, "{body}");
    }
    let (status, error) = call(&server, "POST", path, "browser-key-b", "{nope").await;
    assert_eq!(status, 400, "{error}");
    // Only POST.
    let (status, _) = call(&server, "GET", path, "browser-key-b", "").await;
    assert_eq!(status, 405);
    server.stop().await;
}

#[tokio::test]
async fn a_client_secret_expires() {
    let server = keyed_server().await;
    let (secret, _) = mint(&server, "browser-key-a", 1).await;
    let query = format!("/v1/responses?api_key={secret}");
    let (client, _) = connected(&server, &query, &[]).await;
    drop(client);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, body) = upgrade(&server, &query, &[])
        .await
        .expect_err("an expired secret is refused");
    assert_eq!(status, 401, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown or expired")
    );
    server.stop().await;
}

/// A server with the two keys and `secret` as its server secret.
async fn replica(secret: &str) -> TestServer {
    let mut config = common::config(":memory:");
    config.api_keys = vec!["browser-key-a".into(), "browser-key-b".into()];
    config.server_secret = Some(secret.into());
    TestServer::start_with(config).await
}

#[tokio::test]
async fn a_client_secret_minted_by_one_replica_opens_the_upgrade_on_another() {
    // Behind a load balancer the page mints through one replica and upgrades through another:
    // a secret is signed, not remembered, so any server with the same server secret takes it.
    let (a, b) = (
        replica("a-deployment-wide-secret").await,
        replica("a-deployment-wide-secret").await,
    );
    let (secret, _) = mint(&a, "browser-key-a", 60).await;
    let offered = browser_protocols(&secret);
    let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
    let (mut client, selected) = connected(&b, "/v1/responses", &offered).await;
    assert_eq!(selected.as_deref(), Some("responses"));
    let events = respond(&mut client, json!({})).await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    drop(client);
    // A server with another secret (another deployment) does not.
    let stranger = replica("another-deployments-secret").await;
    let (status, body) = upgrade(&stranger, &format!("/v1/responses?api_key={secret}"), &[])
        .await
        .expect_err("another deployment's secret is refused");
    assert_eq!(status, 401, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("another server secret"), "{message}");
    for server in [a, b, stranger] {
        server.stop().await;
    }
}

#[tokio::test]
async fn a_client_secret_sees_only_its_projects_responses() {
    let server = keyed_server().await;
    let create = json!({"model": "tether-sim", "input": "the plan", "store": true}).to_string();
    let (status, stored) = call(&server, "POST", "/v1/responses", "browser-key-a", &create).await;
    assert_eq!(status, 200, "{stored}");
    let id = stored["id"].as_str().unwrap();
    // HTTP answers once the response is stored.
    let continuation = json!({"previous_response_id": id, "input": "more"});

    let (secret_b, _) = mint(&server, "browser-key-b", 60).await;
    let (mut client, _) =
        connected(&server, &format!("/v1/responses?api_key={secret_b}"), &[]).await;
    let events = respond(&mut client, continuation.clone()).await;
    let error = events.last().unwrap();
    assert_eq!(error["type"], "error", "{events:?}");
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    drop(client);

    // The same continuation with a secret of the project that stored it.
    let (secret_a, _) = mint(&server, "browser-key-a", 60).await;
    let offered = browser_protocols(&secret_a);
    let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
    let (mut client, _) = connected(&server, "/v1/responses", &offered).await;
    let events = respond(&mut client, continuation).await;
    assert_eq!(
        events.last().unwrap()["type"],
        "response.completed",
        "{events:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn keys_and_secrets_in_an_upgrade_url_never_reach_the_logs() {
    let logs = captured_logs();
    let server = keyed_server().await;
    let (secret, _) = mint(&server, "browser-key-a", 60).await;
    for query in [
        "api_key=browser-key-a".to_string(),
        format!("api_key={secret}"),
    ] {
        let (mut client, _) = connected(&server, &format!("/v1/responses?{query}"), &[]).await;
        let events = respond(&mut client, json!({})).await;
        assert_eq!(events.last().unwrap()["type"], "response.completed");
    }
    let refused = upgrade(&server, "/v1/responses?api_key=browser-key-wrong", &[]).await;
    assert_eq!(refused.err().map(|(status, _)| status), Some(401));
    server.stop().await;
    tracing::info!("capture check");
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).to_string();
    assert!(text.contains("capture check"), "the capture works");
    for secret in ["browser-key", secret.as_str(), "api_key="] {
        assert!(!text.contains(secret), "{secret} in the logs:\n{text}");
    }
}
