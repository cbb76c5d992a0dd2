//! Per-project rate limits (`--rate-limit-requests-per-minute`, `--rate-limit-tokens-per-minute`):
//! off by default; over HTTP a refused `POST /v1/responses` gets 429 with the API's error body,
//! `retry-after` and the `x-ratelimit-*` headers every response of a limited server carries;
//! over WebSocket a refused `response.create` gets an error frame on its lane and the connection
//! goes on; one project's use never limits another's; and a project recovers as its buckets
//! refill.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::{Client, TestServer};
use serde_json::{Value, json};

/// An HTTP answer: status, headers (lower-case names), JSON body (`Null` if none).
struct Reply {
    status: u16,
    headers: HashMap<String, String>,
    body: Value,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    fn number(&self, name: &str) -> u64 {
        self.header(name)
            .unwrap_or_else(|| panic!("no {name} header in {:?}", self.headers))
            .parse()
            .unwrap()
    }
}

/// `method path` with a bearer `key` (none if empty) and a JSON `body`.
async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
) -> Reply {
    let reply = common::request(&server.endpoint().with_api_key(key), method, path, body).await;
    Reply {
        status: reply.status,
        body: reply.json().unwrap_or(Value::Null),
        headers: reply.headers.into_iter().collect(),
    }
}

fn create() -> Value {
    json!({"model": "tether-sim", "input": "hello", "store": false})
}

/// A server with two single-key projects and the given limits.
async fn limited_server(requests_per_minute: u64, tokens_per_minute: u64) -> TestServer {
    let mut config = common::config(":memory:");
    config.api_keys = vec!["key-a".into(), "key-b".into()];
    config.rate_limit_requests_per_minute = requests_per_minute;
    config.rate_limit_tokens_per_minute = tokens_per_minute;
    TestServer::start_with(config).await
}

/// A WebSocket client whose upgrade carries `Authorization: Bearer <key>`; the upgrade's
/// headers too.
async fn connect(server: &TestServer, key: &str) -> (Client, HashMap<String, String>) {
    let client = common::connect_endpoint(server.endpoint().with_api_key(key)).await;
    let headers = client.ws.handshake_headers().iter().cloned().collect();
    (client, headers)
}

#[tokio::test]
async fn without_limits_nothing_is_counted_and_no_headers_are_sent() {
    let server = TestServer::start(":memory:").await;
    for _ in 0..5 {
        let reply = call(&server, "POST", "/v1/responses", "", Some(&create())).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(
            !reply
                .headers
                .keys()
                .any(|name| name.starts_with("x-ratelimit")),
            "{:?}",
            reply.headers
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn over_http_a_project_past_its_requests_gets_429_and_another_is_unaffected() {
    let server = limited_server(2, 0).await;
    let first = call(&server, "POST", "/v1/responses", "key-a", Some(&create())).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.number("x-ratelimit-limit-requests"), 2);
    assert_eq!(first.number("x-ratelimit-remaining-requests"), 1);
    // One request comes back every 30 s; the bucket is full again 30 s after the first.
    assert_eq!(first.header("x-ratelimit-reset-requests"), Some("30s"));
    // The tokens limit is off: no tokens headers.
    assert_eq!(first.header("x-ratelimit-limit-tokens"), None);
    let second = call(&server, "POST", "/v1/responses", "key-a", Some(&create())).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.number("x-ratelimit-remaining-requests"), 0);

    let refused = call(&server, "POST", "/v1/responses", "key-a", Some(&create())).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    let error = &refused.body["error"];
    assert_eq!(error["type"], "requests", "{error}");
    assert_eq!(error["code"], "rate_limit_exceeded");
    assert_eq!(error["param"], Value::Null);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("requests per min (RPM): Limit 2, Remaining 0")
            && message.contains("Please try again in"),
        "{message}"
    );
    assert_eq!(refused.number("retry-after"), 30);
    let wait_ms = refused.number("retry-after-ms");
    assert!((29_000..=30_000).contains(&wait_ms), "{wait_ms}");
    assert_eq!(refused.number("x-ratelimit-limit-requests"), 2);
    assert_eq!(refused.number("x-ratelimit-remaining-requests"), 0);
    let reset = refused.header("x-ratelimit-reset-requests").unwrap();
    assert!(reset.ends_with('s') && reset != "0s", "{reset}");

    // Requests that create nothing are not counted, and still say where the project stands.
    let read = call(&server, "GET", "/v1/responses/resp_nope", "key-a", None).await;
    assert_eq!(read.status, 404);
    assert_eq!(read.number("x-ratelimit-remaining-requests"), 0);
    // A bad key is refused as before, not counted against anyone.
    let bad = call(&server, "POST", "/v1/responses", "nope", Some(&create())).await;
    assert_eq!(bad.status, 401);

    // Another project has buckets of its own.
    let other = call(&server, "POST", "/v1/responses", "key-b", Some(&create())).await;
    assert_eq!(other.status, 200, "{}", other.body);
    assert_eq!(other.number("x-ratelimit-remaining-requests"), 1);
    server.stop().await;
}

#[tokio::test]
async fn tokens_are_charged_after_each_response_and_refuse_once_used_up() {
    let server = limited_server(0, 10).await;
    let long = json!({"model": "tether-sim", "input": "hello there ".repeat(20), "store": false});
    let first = call(&server, "POST", "/v1/responses", "key-a", Some(&long)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    // Counted as the request arrives, before its tokens are known.
    assert_eq!(first.number("x-ratelimit-limit-tokens"), 10);
    assert_eq!(first.number("x-ratelimit-remaining-tokens"), 10);
    assert_eq!(first.header("x-ratelimit-reset-tokens"), Some("0s"));
    assert_eq!(first.header("x-ratelimit-limit-requests"), None);
    let used = first.body["usage"]["total_tokens"].as_u64().unwrap();
    assert!(used > 10, "the response used {used} tokens");

    let refused = call(&server, "POST", "/v1/responses", "key-a", Some(&create())).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.body["error"]["type"], "tokens");
    assert_eq!(refused.body["error"]["code"], "rate_limit_exceeded");
    assert_eq!(refused.number("x-ratelimit-remaining-tokens"), 0);
    // 10 tokens a minute pay back the debt (`used` - 10) and one more token: 6 s a token.
    let expected = (used - 10 + 1) * 6;
    let wait = refused.number("retry-after");
    assert!(
        (expected - 2..=expected).contains(&wait),
        "retry-after {wait}, expected about {expected}"
    );
    let reset = refused.header("x-ratelimit-reset-tokens").unwrap();
    assert!(reset.contains('m'), "a reset of minutes, got {reset}");

    let other = call(&server, "POST", "/v1/responses", "key-b", Some(&create())).await;
    assert_eq!(other.status, 200, "{}", other.body);
    server.stop().await;
}

#[tokio::test]
async fn over_websocket_a_refused_create_gets_an_error_frame_and_the_connection_goes_on() {
    // 60 a minute: one more request each second.
    let server = limited_server(60, 0).await;
    let (mut client, upgrade) = connect(&server, "key-a").await;
    // The upgrade is not counted, and says where the project stands.
    assert_eq!(
        upgrade
            .get("x-ratelimit-remaining-requests")
            .map(String::as_str),
        Some("60"),
        "{upgrade:?}"
    );
    let prewarm = json!({"type": "response.create", "model": "tether-sim", "input": "hi",
        "store": false, "generate": false});
    for _ in 0..60 {
        client.send(&prewarm.to_string()).await;
    }
    let mut late = prewarm.clone();
    late["stream_id"] = json!("late");
    for _ in 0..5 {
        client.send(&late.to_string()).await;
    }
    let (mut completed, mut refused) = (0, Vec::new());
    while completed + refused.len() < 65 {
        let event = client.next_json().await;
        match event["type"].as_str() {
            Some("response.completed") => completed += 1,
            Some("error") => refused.push(event),
            _ => {}
        }
    }
    assert!(
        !refused.is_empty() && completed >= 60,
        "{completed} completed"
    );
    for error in &refused {
        assert_eq!(error["status"], 429, "{error}");
        assert_eq!(error["stream_id"], "late", "{error}");
        assert_eq!(error["error"]["code"], "rate_limit_exceeded", "{error}");
        assert_eq!(error["error"]["type"], "requests", "{error}");
    }

    // Another project is not limited by this one, over HTTP either.
    let other = call(&server, "POST", "/v1/responses", "key-b", Some(&create())).await;
    assert_eq!(other.status, 200, "{}", other.body);

    // After a second a request is back: over HTTP first, then on the same connection.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let recovered = call(&server, "POST", "/v1/responses", "key-a", Some(&create())).await;
    assert_eq!(recovered.status, 200, "{}", recovered.body);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client
        .send(
            &json!({"type": "response.create", "model": "tether-sim", "input": "again",
            "store": false})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{events:?}");
    drop(client);
    server.stop().await;
}

#[tokio::test]
async fn over_http_a_project_recovers_once_its_bucket_refills() {
    // 60 a minute; 70 at once leave at least ten refused, whatever the machine's speed.
    let server = limited_server(60, 0).await;
    let prewarm = json!({"model": "tether-sim", "input": "hi", "store": false, "generate": false});
    let calls = (0..70).map(|_| call(&server, "POST", "/v1/responses", "key-a", Some(&prewarm)));
    let replies = futures_util::future::join_all(calls).await;
    let refused: Vec<&Reply> = replies.iter().filter(|r| r.status == 429).collect();
    assert!(refused.len() >= 10, "{} refused", refused.len());
    assert!(replies.iter().all(|r| r.status == 200 || r.status == 429));
    for reply in &refused {
        assert_eq!(reply.number("retry-after"), 1);
        assert!(reply.number("retry-after-ms") <= 1000);
    }
    // Nothing else runs: a second after the last request, one is admitted again.
    tokio::time::sleep(Duration::from_millis(1050)).await;
    let recovered = call(&server, "POST", "/v1/responses", "key-a", Some(&prewarm)).await;
    assert_eq!(recovered.status, 200, "{}", recovered.body);
    server.stop().await;
}
