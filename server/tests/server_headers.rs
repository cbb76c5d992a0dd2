//! The headers the server's answers carry about itself (docs/protocol.md §11): on the WebSocket
//! upgrade and on `POST /v1/responses`, with the server's true values — the message limit it
//! enforces, the model it serves, its models catalog's version, a turn-state token naming the
//! replica that it echoes back unchanged.

use axum::http::HeaderMap;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

mod common;
use common::TestServer;

const LIMIT: usize = 64 * 1024;

async fn server() -> TestServer {
    let mut config = common::config(":memory:");
    config.max_frame_bytes = LIMIT;
    config.replica_id = "r7".into();
    TestServer::start_with(config).await
}

/// Upgrades `path` with `headers`; the socket and the upgrade answer's headers.
async fn upgrade(
    server: &TestServer,
    path: &str,
    headers: &[(&str, &str)],
) -> (common::Socket, HeaderMap) {
    let mut request = format!("ws://{}{path}", server.addr)
        .into_client_request()
        .unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    let (socket, answer) = tokio_tungstenite::connect_async(request)
        .await
        .expect("upgrade");
    (socket, answer.headers().clone())
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).map(|v| v.to_str().unwrap())
}

/// `POST /v1/responses` with `body` and `headers`: the status, the headers (lower-cased names)
/// and the body.
async fn post(
    server: &TestServer,
    body: &Value,
    headers: &[(&str, &str)],
) -> (u16, Vec<(String, String)>, String) {
    let endpoint = headers
        .iter()
        .fold(server.endpoint(), |endpoint, (name, value)| {
            endpoint.with_header(*name, *value)
        });
    let reply = common::request(&endpoint, "POST", "/v1/responses", Some(body)).await;
    let text = reply.text();
    (reply.status, reply.headers, text)
}

fn find<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The `ETag` of `GET /v1/models`.
async fn models_etag(server: &TestServer) -> String {
    let reply = server.get("/v1/models").await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.header("etag").expect("an ETag").to_string()
}

#[tokio::test]
async fn the_upgrade_announces_the_limit_it_enforces_the_catalog_and_a_turn_state() {
    let server = server().await;
    let etag = models_etag(&server).await;
    let (mut socket, headers) = upgrade(&server, "/v1/responses", &[]).await;
    assert_eq!(
        header(&headers, "x-codex-websocket-max-message-bytes"),
        Some(LIMIT.to_string().as_str())
    );
    assert_eq!(header(&headers, "x-models-etag"), Some(etag.as_str()));
    assert_eq!(header(&headers, "x-reasoning-included"), Some("true"));
    // The upgrade names no model, so the header does not claim one.
    assert_eq!(header(&headers, "openai-model"), None);
    let token = header(&headers, "x-codex-turn-state").expect("a turn state");
    assert!(token.starts_with("t1.r7."), "{token}");

    // The announced limit is the one enforced: a message of exactly that many bytes is served,
    // one byte more closes the connection with 1009.
    let frame = |len: usize| {
        let body = json!({"type": "response.create", "model": "tether-sim", "input": "hi",
            "store": false})
        .to_string();
        format!("{body}{}", " ".repeat(len - body.len()))
    };
    use futures_util::SinkExt;
    socket
        .send(Message::Text(frame(LIMIT).into()))
        .await
        .unwrap();
    loop {
        let Message::Text(text) = socket.next().await.unwrap().unwrap() else {
            continue;
        };
        let event: Value = serde_json::from_str(&text).unwrap();
        assert_ne!(event["type"], "error", "{event}");
        if event["type"] == "response.completed" {
            break;
        }
    }
    socket
        .send(Message::Text(frame(LIMIT + 1).into()))
        .await
        .unwrap();
    let mut code = None;
    while let Some(Ok(message)) = socket.next().await {
        match message {
            Message::Text(text) => {
                let event: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(event["error"]["code"], "message_too_large", "{event}");
            }
            Message::Close(frame) => {
                code = frame.map(|f| u16::from(f.code));
                break;
            }
            _ => {}
        }
    }
    assert_eq!(code, Some(1009));
    server.stop().await;
}

#[tokio::test]
async fn a_turn_state_comes_back_unchanged_and_a_foreign_one_is_replaced() {
    let server = server().await;
    let (_, first) = upgrade(&server, "/v1/responses", &[]).await;
    let token = header(&first, "x-codex-turn-state").unwrap().to_string();
    // A reconnect of the same turn presents it: the same token comes back.
    let (_, again) = upgrade(&server, "/v1/responses", &[("x-codex-turn-state", &token)]).await;
    assert_eq!(header(&again, "x-codex-turn-state"), Some(token.as_str()));
    // One this deployment did not sign (another secret, a forged name, garbage) is not echoed:
    // a fresh token of this replica's, and the upgrade is served all the same.
    let forged = token.replacen("t1.r7.", "t1.r8.", 1);
    for foreign in [forged.as_str(), "opaque-state"] {
        let (_, answer) =
            upgrade(&server, "/v1/responses", &[("x-codex-turn-state", foreign)]).await;
        let fresh = header(&answer, "x-codex-turn-state").unwrap();
        assert!(fresh.starts_with("t1.r7.") && fresh != token, "{fresh}");
    }
    // Over HTTP too: the token of the upgrade is echoed on a POST of the same turn.
    let body = json!({"model": "spark", "input": "hi", "store": false});
    let (status, headers, _) = post(&server, &body, &[("x-codex-turn-state", &token)]).await;
    assert_eq!(status, 200);
    assert_eq!(find(&headers, "x-codex-turn-state"), Some(token.as_str()));
    server.stop().await;
}

#[tokio::test]
async fn the_model_is_the_one_asked_for_on_the_url_or_in_the_request() {
    let server = server().await;
    let (_, headers) = upgrade(&server, "/v1/responses?model=spark", &[]).await;
    assert_eq!(header(&headers, "openai-model"), Some("spark"));
    assert!(header(&headers, "x-codex-websocket-max-message-bytes").is_some());

    let etag = models_etag(&server).await;
    for stream in [false, true] {
        let body = json!({"model": "flagship", "input": "hi", "store": false, "stream": stream});
        let (status, headers, text) = post(&server, &body, &[]).await;
        assert_eq!(status, 200, "{text}");
        assert_eq!(find(&headers, "openai-model"), Some("flagship"));
        assert_eq!(find(&headers, "x-models-etag"), Some(etag.as_str()));
        assert_eq!(find(&headers, "x-reasoning-included"), Some("true"));
        let token = find(&headers, "x-codex-turn-state").expect("a turn state");
        assert!(token.starts_with("t1.r7."), "{token}");
        // The WebSocket limit is the upgrade's to announce.
        assert_eq!(find(&headers, "x-codex-websocket-max-message-bytes"), None);
        assert!(
            text.contains("\"model\":\"flagship\""),
            "the body names the same model"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn the_models_etag_follows_the_catalog() {
    let plain = server().await;
    let dir = std::env::temp_dir().join(format!("tether-etag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sim.json");
    std::fs::write(&path, r#"{"aliases": {"gpt-5-codex": "flagship"}}"#).unwrap();
    let mut config = common::config(":memory:");
    config.sim_config = Some(path);
    let aliased = TestServer::start_with(config).await;
    let (a, b) = (models_etag(&plain).await, models_etag(&aliased).await);
    assert_ne!(a, b, "another catalog, another version");
    assert_eq!(
        a,
        models_etag(&plain).await,
        "the same catalog, the same version"
    );
    assert!(a.starts_with('"') && a.ends_with('"'), "an entity tag: {a}");
    plain.stop().await;
    aliased.stop().await;
    std::fs::remove_dir_all(dir).unwrap();
}
