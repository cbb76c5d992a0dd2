//! Client-chosen conditions against a real server on 127.0.0.1: an emulated link applied to
//! the bytes really read and written at the socket, the same for HTTP (JSON and SSE) and
//! WebSocket mode; the API-cost preset chosen per request; what the timing summary says applied;
//! and the refusals (not allowed, out of bounds).
//!
//! What the link cost is asserted from the server's own account (the link model's figures,
//! exact) and the bytes the client itself sent and received; wall-clock time only as a lower
//! bound (nothing can arrive sooner than the link allows), so a loaded machine cannot fail it.

mod common;

use std::time::{Duration, Instant};

use common::{TestServer, config};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

async fn allowing() -> TestServer {
    let mut config = config(":memory:");
    config.allow_client_conditions = true;
    TestServer::start_with(config).await
}

/// A kept-alive HTTP/1.1 connection that counts every byte.
struct Raw {
    stream: TcpStream,
    /// Read past the end of the last response.
    buffered: Vec<u8>,
}

/// One response: its status, headers, body, and every byte it took on the socket.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    bytes: usize,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

impl Raw {
    async fn connect(server: &TestServer) -> Raw {
        let stream = TcpStream::connect(server.addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Raw {
            stream,
            buffered: Vec::new(),
        }
    }

    /// Sends `request` (all of it in one write, as a client on loopback does).
    async fn send(&mut self, request: &[u8]) {
        self.stream.write_all(request).await.unwrap();
    }

    async fn fill(&mut self) {
        let mut chunk = [0u8; 16 * 1024];
        let n = tokio::time::timeout(Duration::from_secs(20), self.stream.read(&mut chunk))
            .await
            .expect("a reply within 20 s")
            .unwrap();
        assert!(n > 0, "the server closed the connection");
        self.buffered.extend_from_slice(&chunk[..n]);
    }

    /// Reads a response with a `Content-Length` body.
    async fn reply(&mut self) -> Reply {
        let (status, headers, head) = self.head().await;
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .expect("a Content-Length");
        while self.buffered.len() < length {
            self.fill().await;
        }
        let body: Vec<u8> = self.buffered.drain(..length).collect();
        Reply {
            status,
            headers,
            body,
            bytes: head + length,
        }
    }

    /// Reads a chunked SSE response up to and including the chunk whose event `ends`; the
    /// body is the events' text.
    async fn sse_until(&mut self, ends: &str) -> Reply {
        let (status, headers, head) = self.head().await;
        let mut body = Vec::new();
        let mut bytes = head;
        loop {
            let line_end = loop {
                if let Some(at) = find(&self.buffered, b"\r\n") {
                    break at;
                }
                self.fill().await;
            };
            let size =
                usize::from_str_radix(std::str::from_utf8(&self.buffered[..line_end]).unwrap(), 16)
                    .unwrap();
            while self.buffered.len() < line_end + 2 + size + 2 {
                self.fill().await;
            }
            let chunk: Vec<u8> = self.buffered.drain(..line_end + 2 + size + 2).collect();
            bytes += chunk.len();
            let text = &chunk[line_end + 2..line_end + 2 + size];
            body.extend_from_slice(text);
            if size == 0 || String::from_utf8_lossy(text).contains(ends) {
                return Reply {
                    status,
                    headers,
                    body,
                    bytes,
                };
            }
        }
    }

    /// Reads a response's head: its status, headers and length in bytes.
    async fn head(&mut self) -> (u16, Vec<(String, String)>, usize) {
        let end = loop {
            if let Some(at) = find(&self.buffered, b"\r\n\r\n") {
                break at + 4;
            }
            self.fill().await;
        };
        let head: Vec<u8> = self.buffered.drain(..end).collect();
        let text = String::from_utf8(head).unwrap();
        let mut lines = text.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|line| line.split_once(": "))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        (status, headers, end)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A `POST /v1/responses` request, its path carrying `query`, with extra `headers`.
fn post(query: &str, headers: &str, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST /v1/responses{query} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         x-tether-timing: 1\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A request body whose input is about `bytes` long.
fn body_of(bytes: usize, stream: bool) -> Value {
    let text = "The tests fail at the page boundary. ".repeat(bytes / 37);
    json!({"model": "tether-sim", "input": text, "store": false, "stream": stream})
}

fn us(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

/// At 8 Mbit/s a byte takes a microsecond; 40 ms RTT is 20,000 µs each way.
const LINK: &str = "?tether_rtt_ms=40&tether_up_mbit=8&tether_down_mbit=8";
const ONE_WAY_US: u64 = 20_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refuses_client_chosen_conditions_unless_it_allows_them() {
    let server = TestServer::start(":memory:").await;
    let mut raw = Raw::connect(&server).await;
    raw.send(&post("?tether_rtt_ms=40", "", &body_of(100, false)))
        .await;
    let refused = raw.reply().await;
    assert_eq!(refused.status, 400);
    let error = &refused.json()["error"];
    assert_eq!(error["code"], "conditions_not_allowed");
    assert_eq!(error["param"], "tether_rtt_ms");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("--allow-client-conditions"),
        "{error}"
    );
    // The model list says so beforehand, without asking for any.
    raw.send(b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await;
    let listed = raw.reply().await;
    assert_eq!(listed.status, 200);
    assert_eq!(listed.header("x-tether-client-conditions"), Some("refused"));
    // As a header too, and on any API route; the connection stays usable.
    raw.send(b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\nx-tether-api-costs: hosted\r\n\r\n")
        .await;
    let refused = raw.reply().await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["error"]["param"], "tether_api_costs");
    raw.send(&post("", "", &body_of(100, false))).await;
    let served = raw.reply().await;
    assert_eq!(served.status, 200);
    let timing: Value = serde_json::from_str(served.header("x-tether-timing").unwrap()).unwrap();
    assert_eq!(timing["conditions"]["chosen_by"], "server");
    assert!(timing.get("link").is_none(), "no link: {timing}");

    // Over WebSocket the upgrade itself is refused.
    let url = format!("ws://{}/v1/responses?tether_up_mbit=20", server.addr);
    match tokio_tungstenite::connect_async(url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 400);
        }
        other => panic!("expected a 400 to the upgrade, got {other:?}"),
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditions_out_of_bounds_are_refused_before_anything_runs() {
    let server = allowing().await;
    let mut raw = Raw::connect(&server).await;
    raw.send(b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await;
    assert_eq!(
        raw.reply().await.header("x-tether-client-conditions"),
        Some("allowed")
    );
    for (query, param) in [
        ("?tether_rtt_ms=5000", "tether_rtt_ms"),
        ("?tether_up_mbit=0.001", "tether_up_mbit"),
        ("?tether_down_mbit=-3", "tether_down_mbit"),
        ("?tether_api_costs=free", "tether_api_costs"),
        ("?tether_rtt=40", "tether_rtt"),
    ] {
        raw.send(&post(query, "", &body_of(100, false))).await;
        let refused = raw.reply().await;
        assert_eq!(refused.status, 400, "{query}");
        let error = &refused.json()["error"];
        assert_eq!(error["code"], "invalid_condition", "{query}");
        assert_eq!(error["param"], param, "{query}");
    }
    let url = format!("ws://{}/v1/responses?tether_rtt_ms=1e6", server.addr);
    match tokio_tungstenite::connect_async(url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 400);
        }
        other => panic!("expected a 400 to the upgrade, got {other:?}"),
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_pays_for_every_byte_it_uploads_and_each_request_for_its_own() {
    let server = allowing().await;
    let mut raw = Raw::connect(&server).await;
    // ~100 kB of history re-sent, as HTTP stateless does.
    let request = post(LINK, "", &body_of(100_000, false));
    let started = Instant::now();
    raw.send(&request).await;
    let reply = raw.reply().await;
    let elapsed = started.elapsed();
    assert_eq!(reply.status, 200);
    let timing: Value = serde_json::from_str(reply.header("x-tether-timing").unwrap()).unwrap();
    let conditions = &timing["conditions"];
    assert_eq!(conditions["rtt_ms"], 40.0);
    assert_eq!(conditions["up_mbit"], 8.0);
    assert_eq!(conditions["down_mbit"], 8.0);
    assert_eq!(conditions["api_costs"], "local");
    assert_eq!(conditions["chosen_by"], "client");
    assert_eq!(conditions["model"], "tether-sim");
    assert_eq!(conditions["tokens_per_second"], 100_000.0);
    let link = &timing["link"];
    // Every byte of the request, its head included, at a microsecond each, then the delay.
    assert_eq!(us(&link["up_bytes"]), request.len() as u64, "{link}");
    let up = us(&link["up_us"]);
    let expected = request.len() as u64 + ONE_WAY_US;
    assert!(
        up.abs_diff(expected) <= 2,
        "up {up} µs, expected {expected}"
    );
    // The way down: the JSON body (the head is not counted), its serialisation and the delay
    // at least.
    assert_eq!(us(&link["down_bytes"]), reply.body.len() as u64, "{link}");
    assert!(
        us(&link["down_us"]) >= ONE_WAY_US + reply.body.len() as u64,
        "{link}"
    );
    assert_eq!(link["budget_exhausted"], false);
    // Nothing arrives sooner than the link allows: both ways' serialisation and the RTT.
    let floor = Duration::from_micros(expected + ONE_WAY_US + reply.body.len() as u64);
    assert!(elapsed >= floor, "{elapsed:?} < {floor:?}");

    // The next request on the same socket asks for nothing: it is served without a link.
    raw.send(&post("", "", &body_of(100, false))).await;
    let plain = raw.reply().await;
    assert_eq!(plain.status, 200);
    let timing: Value = serde_json::from_str(plain.header("x-tether-timing").unwrap()).unwrap();
    assert!(timing.get("link").is_none(), "{timing}");
    assert_eq!(timing["conditions"]["rtt_ms"], 0.0);
    assert_eq!(timing["conditions"]["up_mbit"], Value::Null);
    assert_eq!(timing["conditions"]["chosen_by"], "server");

    // And a third asks again, by headers this time: its own bytes, not the previous ones'.
    let request = post(
        "",
        "x-tether-rtt-ms: 10\r\nx-tether-up-mbit: 8\r\n",
        &body_of(2_000, false),
    );
    raw.send(&request).await;
    let again = raw.reply().await;
    let timing: Value = serde_json::from_str(again.header("x-tether-timing").unwrap()).unwrap();
    assert_eq!(us(&timing["link"]["up_bytes"]), request.len() as u64);
    let up = us(&timing["link"]["up_us"]);
    assert!(up.abs_diff(request.len() as u64 + 5_000) <= 2, "{up}");
    assert_eq!(timing["conditions"]["down_mbit"], Value::Null);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_reports_the_bytes_it_streamed_through_the_link() {
    let server = allowing().await;
    let mut raw = Raw::connect(&server).await;
    let request = post(LINK, "", &body_of(20_000, true));
    raw.send(&request).await;
    let reply = raw.sse_until("response.completed").await;
    assert_eq!(reply.status, 200);
    let text = String::from_utf8(reply.body.clone()).unwrap();
    let completed = text
        .split("\n\n")
        .find(|event| event.starts_with("event: response.completed"))
        .unwrap();
    let data = completed.split_once("data: ").unwrap().1;
    let event: Value = serde_json::from_str(data).unwrap();
    let link = &event["tether_timing"]["link"];
    assert_eq!(us(&link["up_bytes"]), request.len() as u64);
    // The head and every chunk up to the terminal event's, as the client received them.
    assert_eq!(us(&link["down_bytes"]), reply.bytes as u64, "{link}");
    let terminal_chunk = format!("{:X}\r\n", completed.len() + 2).len() + completed.len() + 4;
    assert!(
        us(&link["down_us"]) >= ONE_WAY_US + terminal_chunk as u64,
        "{link}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_mode_pays_for_what_it_sends_and_its_upgrade() {
    let server = allowing().await;
    let url = format!(
        "ws://{}/v1/responses{LINK}&tether_api_costs=hosted&tether_timing=1",
        server.addr
    );
    let started = Instant::now();
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    // The upgrade is a round trip over the link.
    assert!(started.elapsed() >= Duration::from_millis(40));
    let mut previous: Option<String> = None;
    for (turn, input_bytes) in [(0, 50_000), (1, 300)].into_iter() {
        let mut body = body_of(input_bytes, false);
        body["type"] = json!("response.create");
        body.as_object_mut().unwrap().remove("stream");
        if let Some(id) = &previous {
            body["previous_response_id"] = json!(id);
        }
        let frame = body.to_string();
        // A client's frame: 2 bytes, the extended length, the 4-byte mask.
        let extended = match frame.len() {
            0..=125 => 0,
            126..=65_535 => 2,
            _ => 8,
        };
        let sent = frame.len() + 2 + extended + 4;
        let started = Instant::now();
        socket.send(Message::Text(frame.into())).await.unwrap();
        let mut received = 0usize;
        let completed = loop {
            let message = tokio::time::timeout(Duration::from_secs(20), socket.next())
                .await
                .expect("an event within 20 s")
                .unwrap()
                .unwrap();
            let Message::Text(text) = message else {
                continue;
            };
            // A server's frame: 2 bytes and the extended length, unmasked.
            received += text.len()
                + match text.len() {
                    0..=125 => 2,
                    126..=65_535 => 4,
                    _ => 10,
                };
            let event: Value = serde_json::from_str(&text).unwrap();
            if event["type"] == "response.completed" {
                break event;
            }
            assert_ne!(event["type"], "error", "{event}");
        };
        let elapsed = started.elapsed();
        let timing = &completed["tether_timing"];
        assert_eq!(timing["conditions"]["api_costs"], "hosted", "turn {turn}");
        assert!(
            us(&timing["modelled"]["engine_hop_us"]) >= 1000,
            "turn {turn}"
        );
        let link = &timing["link"];
        assert_eq!(us(&link["up_bytes"]), sent as u64, "turn {turn}: {link}");
        let up = us(&link["up_us"]);
        assert!(
            up.abs_diff(sent as u64 + ONE_WAY_US) <= 2,
            "turn {turn}: up {up} µs for {sent} bytes"
        );
        assert_eq!(
            us(&link["down_bytes"]),
            received as u64,
            "turn {turn}: {link}"
        );
        let down = us(&link["down_us"]);
        assert!(
            down >= ONE_WAY_US && down <= ONE_WAY_US + received as u64 + 1,
            "turn {turn}: down {down} µs for {received} bytes"
        );
        let floor = Duration::from_micros(sent as u64 + 2 * ONE_WAY_US);
        assert!(elapsed >= floor, "turn {turn}: {elapsed:?} < {floor:?}");
        previous = Some(completed["response"]["id"].as_str().unwrap().to_string());
    }
    socket.close(None).await.unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_cost_preset_is_chosen_per_request() {
    let server = allowing().await;
    let mut raw = Raw::connect(&server).await;
    raw.send(&post(
        "?tether_api_costs=hosted",
        "",
        &body_of(4_000, false),
    ))
    .await;
    let hosted = raw.reply().await;
    let timing: Value = serde_json::from_str(hosted.header("x-tether-timing").unwrap()).unwrap();
    assert_eq!(timing["conditions"]["api_costs"], "hosted");
    assert!(timing.get("link").is_none(), "costs alone ask for no link");
    // 5.66 µs per scanned token, and the 1 ms hop.
    assert!(us(&timing["modelled"]["classify_us"]) > 1_000, "{timing}");
    assert_eq!(us(&timing["modelled"]["engine_hop_us"]), 1_000);
    raw.send(&post("", "", &body_of(4_000, false))).await;
    let local = raw.reply().await;
    let timing: Value = serde_json::from_str(local.header("x-tether-timing").unwrap()).unwrap();
    assert_eq!(timing["conditions"]["api_costs"], "local");
    assert_eq!(timing["modelled"], json!({}), "{timing}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_response_counts_every_frame_it_took() {
    let server = allowing().await;
    let url = format!(
        "ws://{}/v1/responses{LINK}&tether_timing=1&openai_beta=responses_websockets%3D2026-02-04",
        server.addr
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let tool = json!({"type": "function", "name": "lookup", "description": "Looks a word up.",
        "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}});
    let create = json!({"type": "response.create", "model": "tether-sim", "store": false,
        "input": "look it up", "tools": [tool]})
    .to_string();
    let masked = |payload: usize| payload + 2 + if payload > 125 { 2 } else { 0 } + 4;
    socket
        .send(Message::Text(create.clone().into()))
        .await
        .unwrap();
    let paused = loop {
        let Message::Text(text) = socket.next().await.unwrap().unwrap() else {
            continue;
        };
        let event: Value = serde_json::from_str(&text).unwrap();
        assert_ne!(event["type"], "error", "{event}");
        if event["type"] == "response.done" {
            break event;
        }
    };
    let call = paused["response"]["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call")
        .unwrap()
        .clone();
    let append = json!({"type": "response.append", "input": [{"type": "function_call_output",
        "call_id": call["call_id"], "output": "a small animal"}]})
    .to_string();
    socket
        .send(Message::Text(append.clone().into()))
        .await
        .unwrap();
    let completed = loop {
        let Message::Text(text) = socket.next().await.unwrap().unwrap() else {
            continue;
        };
        let event: Value = serde_json::from_str(&text).unwrap();
        if event["type"] == "response.completed" {
            break event;
        }
    };
    let link = &completed["tether_timing"]["link"];
    let sent = masked(create.len()) + masked(append.len());
    assert_eq!(us(&link["up_bytes"]), sent as u64, "{link}");
    // Each frame paid its own serialisation and the one-way delay.
    let up = us(&link["up_us"]);
    assert!(up.abs_diff(sent as u64 + 2 * ONE_WAY_US) <= 4, "{up}");
    server.stop().await;
}
