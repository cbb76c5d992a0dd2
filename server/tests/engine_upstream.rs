//! Tether in front of an upstream engine (`--engine URL`), against a scripted upstream
//! (`common/upstream.rs`): what it streams becomes the Responses events — text, reasoning,
//! parallel tool calls with their ids, the engine's usage with its cached tokens, the timing —
//! over WebSocket mode and HTTP; its failures become errors that name it; a client that goes
//! away or steers cancels the upstream request (the upstream sees its stream abandoned); retries
//! happen only before anything streamed; the queue is bounded; `/readyz` follows the upstream;
//! a connection keeps its replica.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::upstream::{Reply, ScriptedUpstream, answer, content};
use common::{TestServer, config, connect_with_headers, http_get};
use serde_json::{Value, json};
use tether_server::Config;

fn engine_config(urls: &[String]) -> Config {
    let mut config = config(":memory:");
    config.engines = urls.to_vec();
    config
}

async fn server_for(upstream: &ScriptedUpstream) -> TestServer {
    TestServer::start_with(engine_config(&[upstream.url()])).await
}

fn usage(prompt: u64, cached: u64, completion: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion,
           "total_tokens": prompt + completion,
           "prompt_tokens_details": {"cached_tokens": cached}})
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["type"].as_str()).collect()
}

/// The status and JSON body of `POST /v1/responses` with `body`.
async fn post(server: &TestServer, body: &Value) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let text = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "POST /v1/responses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(20),
        stream.read_to_string(&mut response),
    )
    .await
    .expect("an answer within 20 s")
    .unwrap();
    let status = response[9..12].parse().unwrap();
    let (_, payload) = response.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(payload).unwrap_or(Value::Null))
}

#[tokio::test]
async fn text_reasoning_and_the_engines_usage_stream_over_websocket() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([Reply::Chunks(vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "The user greets."}}]}),
        content("Hello"),
        content(" there"),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": usage(2048, 1536, 9)}),
        json!("[DONE]"),
    ])]);
    let server = server_for(&upstream).await;
    let mut client = connect_with_headers(
        server.addr,
        &[
            ("x-responsesapi-include-timing-metrics", "true"),
            ("x-tether-timing", "1"),
        ],
    )
    .await;
    client
        .send(
            &json!({"type": "response.create", "model": "qwen3", "instructions": "Be kind.",
                      "input": "hi", "max_output_tokens": 100, "temperature": 0.5})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let kinds = types(&events);
    assert!(
        kinds.contains(&"response.reasoning_summary_text.delta"),
        "{kinds:?}"
    );
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello there");
    let timing = events
        .iter()
        .find(|e| e["type"] == "responsesapi.websocket_timing")
        .expect("the timing event");
    let metrics = &timing["timing_metrics"];
    assert_eq!(metrics["num_engine_calls"], 1);
    assert_eq!(metrics["engine_cached_prompt_tokens_total"], 1536);
    assert_eq!(metrics["engine_total_prompt_tokens_total"], 2048);
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    let response = &completed["response"];
    assert_eq!(response["usage"]["input_tokens"], 2048);
    assert_eq!(
        response["usage"]["input_tokens_details"]["cached_tokens"],
        1536
    );
    assert_eq!(response["usage"]["output_tokens"], 9);
    assert_eq!(response["output"][0]["type"], "reasoning");
    assert_eq!(response["output"][1]["content"][0]["text"], "Hello there");
    // The engine's part is measured from its stream: the first chunk came after the request.
    let engine = &completed["tether_timing"]["engine"];
    assert!(engine["iapi_ttft_us"].as_u64().unwrap() <= engine["iapi_total_us"].as_u64().unwrap());
    // What the upstream was asked.
    let seen = upstream.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    let body = &seen[0].body;
    assert_eq!(body["model"], "qwen3");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}])
    );
    assert!(
        seen[0].authorization.is_none(),
        "no key configured, none sent"
    );
    server.stop().await;
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_ids_and_the_loop_goes_on_from_the_cache() {
    let upstream = ScriptedUpstream::start().await;
    let call = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut function = json!({"arguments": args});
        if let Some(name) = name {
            function["name"] = name.into();
        }
        let mut call = json!({"index": index, "function": function});
        if let Some(id) = id {
            call["id"] = id.into();
            call["type"] = "function".into();
        }
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    };
    upstream.then([
        Reply::Chunks(vec![
            call(0, Some("call_up_1"), Some("shell"), ""),
            call(0, None, None, "{\"cmd\": "),
            call(0, None, None, "\"ls\"}"),
            call(1, Some("call_up_2"), Some("shell"), "{\"cmd\": \"pwd\"}"),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!("[DONE]"),
        ]),
        answer("Two files.", usage(80, 0, 3)),
    ]);
    let server = server_for(&upstream).await;
    let mut client = server.connect().await;
    let tools = json!([{"type": "function", "name": "shell",
                        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]);
    client
        .send(
            &json!({"type": "response.create", "model": "m", "input": "look around",
                      "tools": tools, "parallel_tool_calls": true})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let arguments: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "response.function_call_arguments.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(arguments, ["{\"cmd\": ", "\"ls\"}", "{\"cmd\": \"pwd\"}"]);
    let response = &events.last().unwrap()["response"];
    assert_eq!(response["status"], "completed");
    let calls = response["output"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["call_id"], "call_up_1");
    assert_eq!(calls[0]["arguments"], "{\"cmd\": \"ls\"}");
    assert_eq!(calls[1]["call_id"], "call_up_2");
    let id = response["id"].as_str().unwrap();
    client
        .send(
            &json!({"type": "response.create", "model": "m", "previous_response_id": id,
                      "tools": tools, "input": [
            {"type": "function_call_output", "call_id": "call_up_1", "output": "a.txt b.txt"},
            {"type": "function_call_output", "call_id": "call_up_2", "output": "/work"}]})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let response = &events.last().unwrap()["response"];
    assert_eq!(response["output"][0]["content"][0]["text"], "Two files.");
    // The second request carried the whole conversation, the calls as one assistant message.
    let seen = upstream.seen();
    assert_eq!(
        seen[1].body["messages"],
        json!([
            {"role": "user", "content": "look around"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_up_1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\": \"ls\"}"}},
                {"id": "call_up_2", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\": \"pwd\"}"}}]},
            {"role": "tool", "tool_call_id": "call_up_1", "content": "a.txt b.txt"},
            {"role": "tool", "tool_call_id": "call_up_2", "content": "/work"}
        ])
    );
    assert_eq!(seen[1].body["tools"][0]["function"]["name"], "shell");
    assert_eq!(seen[0].body["parallel_tool_calls"], true);
    // The continuation came from the connection cache.
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn http_json_and_sse_answer_from_the_upstream() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([
        answer("From the engine.", usage(12, 0, 4)),
        answer("Streamed.", usage(12, 0, 2)),
    ]);
    let server = server_for(&upstream).await;
    let (status, response) = post(&server, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(
        response["output"][0]["content"][0]["text"],
        "From the engine."
    );
    assert_eq!(response["usage"]["output_tokens"], 4);
    let reply = {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let body = json!({"model": "m", "input": "hi", "stream": true}).to_string();
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let request = format!(
            "POST /v1/responses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).await.unwrap();
        text
    };
    assert!(
        reply.contains("event: response.output_text.delta"),
        "{reply}"
    );
    assert!(reply.contains("event: response.completed"), "{reply}");
    assert!(reply.contains("Streamed."), "{reply}");
    server.stop().await;
}

#[tokio::test]
async fn failures_become_errors_that_name_the_upstream() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([
        Reply::Status(
            429,
            json!({"error": {"message": "Too many requests", "type": "rate_limit"}}),
            Some("30"),
        ),
        Reply::Status(500, json!({"error": {"message": "CUDA out of memory"}}), None),
        Reply::Status(
            400,
            json!({"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}}),
            None,
        ),
    ]);
    let server = server_for(&upstream).await;
    let url = upstream.url();
    let (status, body) = post(&server, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 429, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&url) && message.contains("Retry after 30 s"),
        "{message}"
    );
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    let (status, body) = post(&server, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], "engine_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("CUDA out of memory")
    );
    let (status, body) = post(&server, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "context_length_exceeded");
    // One attempt each: a 429 asking for 30 s, a 500 and a 400 are not retried.
    assert_eq!(upstream.seen().len(), 3);
    // Over WebSocket: an error event with the status, then response.failed.
    upstream.then([Reply::Status(
        503,
        json!({"error": {"message": "overloaded"}}),
        None,
    )]);
    upstream.then([Reply::Status(
        503,
        json!({"error": {"message": "overloaded"}}),
        None,
    )]);
    upstream.then([Reply::Status(
        503,
        json!({"error": {"message": "overloaded"}}),
        None,
    )]);
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "hi"}).to_string())
        .await;
    let events = client.response_events().await;
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["status"], 502);
    assert!(error["error"]["message"].as_str().unwrap().contains(&url));
    assert_eq!(events.last().unwrap()["type"], "response.failed");
    // 503 is retried twice (the default), then given up.
    assert_eq!(upstream.seen().len(), 6);
    server.stop().await;
    // An upstream nobody listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        format!("http://127.0.0.1:{port}/v1")
    };
    let mut config = engine_config(std::slice::from_ref(&closed));
    config.engine_retries = 0;
    let server = TestServer::start_with(config).await;
    let (status, body) = post(&server, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "engine_unavailable");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&closed) && message.contains("refused"),
        "{message}"
    );
    server.stop().await;
}

#[tokio::test]
async fn only_what_has_streamed_nothing_is_tried_again() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([
        Reply::Status(503, json!({"error": {"message": "warming up"}}), Some("0")),
        answer("Second time lucky.", usage(5, 0, 4)),
        Reply::Cut(vec![
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
            content("Half an ans"),
        ]),
    ]);
    let server = server_for(&upstream).await;
    let (status, body) = post(&server, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["output"][0]["content"][0]["text"],
        "Second time lucky."
    );
    assert_eq!(upstream.seen().len(), 2);
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "hi"}).to_string())
        .await;
    let events = client.response_events().await;
    assert!(types(&events).contains(&"response.output_text.delta"));
    let failed = events.last().unwrap();
    assert_eq!(failed["type"], "response.failed");
    assert_eq!(failed["response"]["error"]["code"], "engine_stream_cut");
    assert!(
        failed["response"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&upstream.url())
    );
    // Part of the answer had streamed: no second attempt.
    assert_eq!(upstream.seen().len(), 3);
    assert_eq!(
        server
            .metric(&format!(
                "tether_engine_requests_total{{engine=\"{}\",outcome=\"cut\",upstream=\"{}\"}}",
                upstream.url(),
                upstream.url()
            ))
            .await,
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn a_silent_upstream_times_out() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([Reply::Stall]);
    let mut config = engine_config(&[upstream.url()]);
    config.engine_idle_timeout_seconds = 0.2;
    config.engine_retries = 0;
    let server = TestServer::start_with(config).await;
    let (status, body) = post(&server, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["error"]["code"], "engine_timeout");
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_the_upstream_request() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([Reply::Endless, Reply::Endless]);
    let server = server_for(&upstream).await;
    // WebSocket: the connection closes in the middle of the answer.
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "go on"}).to_string())
        .await;
    loop {
        if client.next_json().await["type"] == "response.output_text.delta" {
            break;
        }
    }
    drop(client);
    upstream.wait_abandoned(1).await;
    // HTTP SSE: the client hangs up.
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let body = json!({"model": "m", "input": "go on", "stream": true}).to_string();
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let request = format!(
            "POST /v1/responses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains("output_text.delta") {
            let n = stream.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the stream ended early");
            seen.extend_from_slice(&buffer[..n]);
        }
    }
    upstream.wait_abandoned(2).await;
    assert_eq!(upstream.script.open.load(Ordering::SeqCst), 0);
    server.stop().await;
}

#[tokio::test]
async fn a_steer_cancels_the_upstream_request_and_its_successor_asks_again() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([Reply::Endless, Reply::Endless]);
    let server = server_for(&upstream).await;
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false,
                      "input": "write forever"})
            .to_string(),
        )
        .await;
    let mut id = String::new();
    loop {
        let event = client.next_json().await;
        if event["type"] == "response.created" {
            id = event["response"]["id"].as_str().unwrap().to_string();
        }
        if event["type"] == "response.output_text.delta" {
            break;
        }
    }
    client
        .send(
            &json!({"type": "response.steer", "previous_response_id": id,
                      "input": "stop and summarise"})
            .to_string(),
        )
        .await;
    let rest = client.response_events().await;
    let ended = rest.last().unwrap();
    assert_eq!(ended["type"], "response.incomplete", "{ended}");
    assert_eq!(ended["response"]["incomplete_details"]["reason"], "steered");
    upstream.wait_abandoned(1).await;
    // The successor is a new upstream request with the steer's input.
    loop {
        if client.next_json().await["type"] == "response.output_text.delta" {
            break;
        }
    }
    let seen = upstream.seen();
    assert_eq!(seen.len(), 2);
    let last = seen[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last,
        json!({"role": "user", "content": "stop and summarise"})
    );
    drop(client);
    upstream.wait_abandoned(2).await;
    server.stop().await;
}

#[tokio::test]
async fn the_queue_in_front_of_an_upstream_is_bounded() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([Reply::Endless, answer("Your turn came.", usage(3, 0, 3))]);
    let mut config = engine_config(&[upstream.url()]);
    config.engine_max_concurrency = 1;
    config.engine_max_queue = 1;
    let server = TestServer::start_with(config).await;
    // The first holds the one slot.
    let mut first = server.connect().await;
    first
        .send(&json!({"type": "response.create", "model": "m", "input": "long"}).to_string())
        .await;
    loop {
        if first.next_json().await["type"] == "response.output_text.delta" {
            break;
        }
    }
    // The second waits for it.
    let mut second = server.connect().await;
    second
        .send(&json!({"type": "response.create", "model": "m", "input": "next"}).to_string())
        .await;
    let waiting = format!(
        "tether_engine_waiting{{engine=\"{0}\",upstream=\"{0}\"}}",
        upstream.url()
    );
    tokio::time::timeout(Duration::from_secs(10), async {
        while server.metric(&waiting).await != 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the second request queued");
    // The third finds the queue full.
    let (status, body) = post(&server, &json!({"model": "m", "input": "third"})).await;
    assert_eq!(status, 429, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("1 requests run and 1 wait"), "{message}");
    assert_eq!(
        upstream.seen().len(),
        1,
        "neither queued request reached the upstream"
    );
    // The first goes away: the second gets the slot.
    drop(first);
    let events = second.response_events().await;
    assert_eq!(
        events.last().unwrap()["response"]["output"][0]["content"][0]["text"],
        "Your turn came."
    );
    server.stop().await;
}

#[tokio::test]
async fn readiness_follows_the_upstream() {
    let upstream = ScriptedUpstream::start().await;
    let server = server_for(&upstream).await;
    let ready = |server: &TestServer| {
        let addr = server.addr;
        async move { http_get(addr, "/readyz").await }
    };
    tokio::time::timeout(Duration::from_secs(10), async {
        while ready(&server).await.status != 200 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("ready once the upstream answers its probe");
    // The probe listed the upstream's models.
    let models = server.get("/v1/models").await.text();
    assert!(models.contains("\"scripted\""), "{models}");
    server.stop().await;
    let url = upstream.url();
    upstream.stop();
    let server = TestServer::start_with(engine_config(std::slice::from_ref(&url))).await;
    let reply = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let reply = ready(&server).await;
            if reply.status == 503 {
                return reply.text();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("not ready while the upstream is down");
    assert!(reply.contains(&url), "{reply}");
    assert!(reply.contains("no replica answers"), "{reply}");
    // Alive all the same.
    assert_eq!(http_get(server.addr, "/healthz").await.status, 200);
    server.stop().await;
}

#[tokio::test]
async fn a_connection_keeps_its_replica() {
    let a = ScriptedUpstream::start().await;
    let b = ScriptedUpstream::start().await;
    let server = TestServer::start_with(engine_config(&[a.url(), b.url()])).await;
    let mut client = server.connect().await;
    let mut previous: Option<String> = None;
    for turn in 0..4 {
        let mut create = json!({"type": "response.create", "model": "m",
                                "input": format!("turn {turn}"), "prompt_cache_key": format!("k{turn}")});
        if let Some(id) = &previous {
            create["previous_response_id"] = id.clone().into();
        }
        client.send(&create.to_string()).await;
        let events = client.response_events().await;
        previous = events.last().unwrap()["response"]["id"]
            .as_str()
            .map(str::to_string);
    }
    let (on_a, on_b) = (a.seen().len(), b.seen().len());
    assert_eq!(on_a + on_b, 4);
    assert!(
        on_a == 4 || on_b == 4,
        "one replica served the connection: {on_a} + {on_b}"
    );
    // Over HTTP the same prompt and key go to the same replica each time.
    let before = (a.seen().len(), b.seen().len());
    for _ in 0..3 {
        let (status, _) = post(
            &server,
            &json!({"model": "m", "input": "same prefix", "prompt_cache_key": "shared"}),
        )
        .await;
        assert_eq!(status, 200);
    }
    let added = (a.seen().len() - before.0, b.seen().len() - before.1);
    assert!(added == (3, 0) || added == (0, 3), "{added:?}");
    server.stop().await;
}

#[tokio::test]
async fn the_responses_dialect_sends_the_conversation_and_reads_its_events() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([Reply::Chunks(vec![
        json!({"type": "response.created", "response": {"id": "resp_up"}}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "function_call", "call_id": "call_r1", "name": "shell", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "delta": "{\"cmd\":\"ls\"}"}),
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": {"type": "function_call", "call_id": "call_r1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"}}),
        json!({"type": "response.completed", "response": {"usage": {"input_tokens": 30,
               "input_tokens_details": {"cached_tokens": 16}, "output_tokens": 5}}}),
    ])]);
    let mut config = engine_config(&[upstream.url()]);
    config.engine_dialect = tether_server::engine::spec::Dialect::Responses;
    let server = TestServer::start_with(config).await;
    let (status, body) = post(
        &server,
        &json!({"model": "m", "input": "list", "tools": [{"type": "function", "name": "shell"}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["output"][0]["call_id"], "call_r1");
    assert_eq!(body["output"][0]["arguments"], "{\"cmd\":\"ls\"}");
    assert_eq!(body["usage"]["input_tokens_details"]["cached_tokens"], 16);
    let seen = upstream.seen();
    assert_eq!(seen[0].path, "/v1/responses");
    assert_eq!(seen[0].body["store"], false);
    assert_eq!(seen[0].body["input"][0]["content"], "list");
    assert_eq!(seen[0].body["tools"][0]["name"], "shell");
    server.stop().await;
}

#[tokio::test]
async fn what_cannot_be_mapped_is_refused_before_the_upstream_is_asked() {
    let upstream = ScriptedUpstream::start().await;
    let server = server_for(&upstream).await;
    let (status, body) = post(
        &server,
        &json!({"model": "m", "input": "search", "tools": [{"type": "web_search"}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "unsupported_by_engine");
    assert_eq!(body["error"]["param"], "tools[0]");
    assert!(upstream.seen().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn the_api_key_goes_upstream_and_nowhere_else() {
    use common::process::ServerProcess;
    const KEY: &str = "sk-upstream-test-0123456789";
    let upstream = ScriptedUpstream::start().await;
    upstream.then([
        answer("Authorised.", usage(3, 0, 2)),
        // An upstream that echoes the key it was sent, as some do.
        Reply::Status(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}),
            None,
        ),
    ]);
    let url = upstream.url();
    let (server, log) = tokio::task::spawn_blocking(move || {
        ServerProcess::start_logged(
            &[
                "--data-dir",
                ":memory:",
                "--engine",
                &url,
                "--engine-api-key-env",
                "TETHER_TEST_UPSTREAM_KEY",
            ],
            &[("TETHER_TEST_UPSTREAM_KEY", KEY)],
        )
    })
    .await
    .unwrap();
    let addr = server.addr;
    let tether = TestServerAddr(addr);
    let (status, body) = tether.post(&json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = tether.post(&json!({"model": "m", "input": "hi"})).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], "engine_unauthorized");
    assert!(!body.to_string().contains(KEY), "{body}");
    // The probe and both requests carried it.
    let seen = upstream.seen();
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some(&format!("Bearer {KEY}")[..])),
        "{seen:?}"
    );
    drop(server);
    let log = log.lock().unwrap().clone();
    assert!(log.contains("with an API key"), "{log}");
    assert!(!log.contains(KEY), "the key is in the log:\n{log}");
    // Unset, the server does not start, and says which variable it wanted.
    let url = upstream.url();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_tether-server"))
            .args([
                "--addr",
                "127.0.0.1:0",
                "--data-dir",
                ":memory:",
                "--engine",
                &url,
            ])
            .args(["--engine-api-key-env", "TETHER_TEST_KEY_THAT_IS_NOT_SET"])
            .env_remove("TETHER_TEST_KEY_THAT_IS_NOT_SET")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("TETHER_TEST_KEY_THAT_IS_NOT_SET") && stderr.contains("is not set"),
        "{stderr}"
    );
}

/// A server known only by its address (a process).
struct TestServerAddr(std::net::SocketAddr);

impl TestServerAddr {
    async fn post(&self, body: &Value) -> (u16, Value) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let text = body.to_string();
        let mut stream = tokio::net::TcpStream::connect(self.0).await.unwrap();
        let request = format!(
            "POST /v1/responses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        let status = response[9..12].parse().unwrap();
        let (_, payload) = response.split_once("\r\n\r\n").unwrap();
        (status, serde_json::from_str(payload).unwrap_or(Value::Null))
    }
}

/// A router over a fresh in-memory server whose every model is `upstream`.
fn engine_router(upstream: &ScriptedUpstream) -> axum::Router {
    let config = engine_config(&[upstream.url()]);
    tether_server::app(
        tether_server::AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    )
}

async fn call(router: &axum::Router, method: &str, uri: &str, body: Option<Value>) -> Value {
    let (status, answer) = common::oneshot_json(router, method, uri, body).await;
    assert_eq!(status.as_u16(), 200, "{method} {uri} → {answer}");
    answer
}

/// Polls response `id` until it leaves `queued` and `in_progress` (20 s at most).
async fn settled(router: &axum::Router, id: &str) -> Value {
    let wait = async {
        loop {
            let response = call(router, "GET", &format!("/v1/responses/{id}"), None).await;
            if !matches!(response["status"].as_str(), Some("queued" | "in_progress")) {
                return response;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("the background response ends within 20 s")
}

/// The texts of the upstream request's messages.
fn message_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}: {}", m["role"].as_str().unwrap(), m["content"]))
        .collect()
}

#[tokio::test]
async fn a_background_response_runs_on_the_engine_and_its_cancel_stops_the_engine() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([
        answer("Done in the background.", usage(12, 4, 5)),
        Reply::Endless,
    ]);
    let router = engine_router(&upstream);
    let queued = call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "work", "background": true})),
    )
    .await;
    assert_eq!(queued["status"], "queued");
    let done = settled(&router, queued["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["output"][0]["content"][0]["text"],
        "Done in the background."
    );
    assert_eq!(done["usage"]["input_tokens"], 12);
    assert_eq!(done["usage"]["input_tokens_details"]["cached_tokens"], 4);
    // A second one streams forever until cancelled: the cancel ends the engine's request too.
    let queued = call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "forever", "background": true})),
    )
    .await;
    let id = queued["id"].as_str().unwrap();
    tokio::time::timeout(Duration::from_secs(20), async {
        while upstream.script.open.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the engine is asked within 20 s");
    let cancelled = call(&router, "POST", &format!("/v1/responses/{id}/cancel"), None).await;
    assert_eq!(cancelled["status"], "cancelled");
    upstream.wait_abandoned(1).await;
    let stored = call(&router, "GET", &format!("/v1/responses/{id}"), None).await;
    assert_eq!(stored["status"], "cancelled");
    assert_eq!(upstream.seen().len(), 2);
}

#[tokio::test]
async fn a_conversation_goes_to_the_engine_whole_and_gets_its_answers() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([
        answer("First answer.", usage(5, 0, 2)),
        answer("Second answer.", usage(9, 5, 2)),
    ]);
    let router = engine_router(&upstream);
    let conversation = call(
        &router,
        "POST",
        "/v1/conversations",
        Some(json!({"items": [{"type": "message", "role": "user", "content": "earlier"}]})),
    )
    .await;
    let id = conversation["id"].as_str().unwrap();
    for input in ["one", "two"] {
        call(
            &router,
            "POST",
            "/v1/responses",
            Some(json!({"model": "m", "conversation": id, "input": input})),
        )
        .await;
    }
    let seen = upstream.seen();
    assert_eq!(
        message_texts(&seen[0].body),
        [r#"user: "earlier""#, r#"user: "one""#]
    );
    assert_eq!(
        message_texts(&seen[1].body),
        [
            r#"user: "earlier""#,
            r#"user: "one""#,
            r#"assistant: "First answer.""#,
            r#"user: "two""#
        ]
    );
    // The engine's answers are the conversation's items.
    let items = call(
        &router,
        "GET",
        &format!("/v1/conversations/{id}/items?order=asc"),
        None,
    )
    .await;
    let last = items["data"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["text"], "Second answer.", "{items}");
}

#[tokio::test]
async fn context_management_compacts_before_the_engine_reads_the_context() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([answer("The tests failed.", usage(40, 0, 4))]);
    let router = engine_router(&upstream);
    let input = json!([
        {"type": "message", "role": "user", "content": "run the tests"},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"cmd\":\"cargo test\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "test output line ".repeat(1000)},
        {"type": "message", "role": "user", "content": "what failed?"}
    ]);
    let response = call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": input,
                    "tools": [{"type": "function", "name": "shell"}],
                    "context_management": [{"type": "compaction", "compact_threshold": 1000}]})),
    )
    .await;
    assert_eq!(response["output"][0]["type"], "compaction", "{response}");
    assert_eq!(
        response["output"][1]["content"][0]["text"],
        "The tests failed."
    );
    // The engine read the user's messages and the summary the compaction item stands for,
    // not the 3,000-token tool output.
    let body = &upstream.seen()[0].body;
    let texts = message_texts(body);
    assert!(
        texts.contains(&r#"user: "run the tests""#.to_string()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&r#"user: "what failed?""#.to_string()),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("Summary of the conversation")),
        "{texts:?}"
    );
    // (The summary quotes the start of the output; the 17,000 bytes of it are not sent.)
    assert!(body.to_string().len() < 2_000, "{body}");
}

#[tokio::test]
async fn an_unknown_parameter_is_refused_before_the_engine_is_asked() {
    let upstream = ScriptedUpstream::start().await;
    let router = engine_router(&upstream);
    let (status, answer) = common::oneshot_json(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "hi", "frobnicate": true})),
    )
    .await;
    assert_eq!(status.as_u16(), 400, "{answer}");
    assert_eq!(answer["error"]["code"], "unknown_parameter");
    assert!(upstream.seen().is_empty());
}

#[tokio::test]
async fn an_engines_reasoning_is_sealed_and_the_seal_never_goes_upstream() {
    let upstream = ScriptedUpstream::start().await;
    let reasoning = |text: &str| {
        Reply::Chunks(vec![
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "reasoning", "id": "rs_up", "summary": []}}),
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0,
                   "summary_index": 0, "delta": "Thinking it over."}),
            json!({"type": "response.output_item.added", "output_index": 1,
                   "item": {"type": "message", "id": "msg_up", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0,
                   "delta": text}),
            json!({"type": "response.completed", "response": {"usage":
                   {"input_tokens": 3, "output_tokens": 4}}}),
        ])
    };
    upstream.then([reasoning("Yes."), reasoning("Still yes.")]);
    let mut config = engine_config(&[upstream.url()]);
    config.engine_dialect = tether_server::engine::spec::Dialect::Responses;
    let router = tether_server::app(
        tether_server::AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    );
    let first = call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": "think", "store": false,
                    "include": ["reasoning.encrypted_content"]})),
    )
    .await;
    let item = &first["output"][0];
    assert_eq!(item["type"], "reasoning", "{first}");
    assert!(item["encrypted_content"].as_str().is_some(), "{first}");
    // A stateless client sends it back: the engine gets the reasoning without Tether's seal.
    let mut input = vec![json!({"type": "message", "role": "user", "content": "think"})];
    input.extend(first["output"].as_array().unwrap().iter().cloned());
    input.push(json!({"type": "message", "role": "user", "content": "again"}));
    let second = call(
        &router,
        "POST",
        "/v1/responses",
        Some(json!({"model": "m", "input": input, "store": false,
                    "include": ["reasoning.encrypted_content"]})),
    )
    .await;
    assert_eq!(second["output"][1]["content"][0]["text"], "Still yes.");
    let body = &upstream.seen()[1].body;
    assert_eq!(body["input"][1]["type"], "reasoning", "{body}");
    assert!(
        body["input"][1].get("encrypted_content").is_none(),
        "{body}"
    );
    assert!(body.get("include").is_none(), "{body}");
}

#[tokio::test]
async fn hosted_api_costs_model_no_engine_hop_in_front_of_a_real_engine() {
    let upstream = ScriptedUpstream::start().await;
    upstream.then([answer("Costed.", usage(3, 0, 2))]);
    let mut config = engine_config(&[upstream.url()]);
    config.api_costs = tether_server::costs::ApiCostPreset::Hosted;
    let server = TestServer::start_with(config).await;
    let mut client = connect_with_headers(server.addr, &[("x-tether-timing", "1")]).await;
    client
        .send(&json!({"type": "response.create", "model": "m", "input": "hello there"}).to_string())
        .await;
    let events = client.response_events().await;
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed", "{completed}");
    let modelled = &completed["tether_timing"]["modelled"];
    // The classifier is the API's own (modelled) work; the hop to this engine is real.
    assert!(modelled["classify_us"].as_u64().unwrap() > 0, "{modelled}");
    assert!(
        modelled.get("engine_hop_us").is_none_or(|hop| hop == 0),
        "{modelled}"
    );
    server.stop().await;
}
