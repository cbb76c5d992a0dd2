//! Traces (`--otlp-endpoint`) reach a real OTLP/HTTP receiver the test starts (an axum endpoint
//! decoding the protobuf with `opentelemetry-proto`): a span per response under the client's
//! `traceparent` — the header over HTTP, `client_metadata` over WebSocket — with a child per
//! stage and the engine call under `generate`, all in the client's trace.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderMap;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::{Value, json};
use tether_server::{AppState, Config, app};

mod common;

/// What the receiver was sent: each request's content type and body.
type Received = Arc<Mutex<Vec<(String, Bytes)>>>;

/// An OTLP/HTTP receiver on 127.0.0.1: `POST /v1/traces` kept and answered 200.
async fn receiver() -> (SocketAddr, Received, tokio::task::JoinHandle<()>) {
    let received: Received = Arc::default();
    let kept = received.clone();
    let router = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = kept.clone();
            async move {
                let kind = headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                kept.lock().unwrap().push((kind, body));
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    (addr, received, task)
}

/// A server exporting to `collector`, and its state (to flush the exporter).
async fn server(
    collector: SocketAddr,
    tweak: impl FnOnce(&mut Config),
) -> (SocketAddr, AppState, tokio::task::JoinHandle<()>) {
    let mut config = common::config(":memory:");
    config.otlp_endpoint = Some(format!("http://{collector}"));
    config.replica_id = "r1".into();
    tweak(&mut config);
    let state = AppState::new(&config).unwrap();
    let router = app(state.clone(), std::path::Path::new("does-not-exist"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    (addr, state, task)
}

/// Writes queued behind WebSocket responses are done, and every span ended is exported.
async fn flush(state: &AppState) {
    state.records.drain().await;
    let traces = state.traces.clone().expect("traces are on");
    tokio::task::spawn_blocking(move || traces.flush())
        .await
        .unwrap()
        .expect("the receiver took the spans");
}

/// Every span the receiver got (protobuf bodies).
fn spans(received: &Received) -> Vec<Span> {
    let received = received.lock().unwrap();
    let mut spans = Vec::new();
    for (kind, body) in received.iter() {
        assert_eq!(kind, "application/x-protobuf");
        let request = ExportTraceServiceRequest::decode(body.as_ref()).expect("OTLP protobuf");
        for resource in request.resource_spans {
            let attributes = resource.resource.expect("a resource").attributes;
            let service = attributes
                .iter()
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| kv.value.as_ref()?.value.as_ref());
            assert_eq!(
                service,
                Some(&AnyValue::StringValue("tether-server".into()))
            );
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    spans
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<AnyValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone()?.value)
}

/// The response span with id `response_id`, and its children by name.
fn response_tree<'s>(
    spans: &'s [Span],
    response_id: &str,
) -> (&'s Span, HashMap<String, Vec<&'s Span>>) {
    let response = spans
        .iter()
        .find(|span| {
            span.name == "tether.response"
                && attribute(span, "tether.response.id")
                    == Some(AnyValue::StringValue(response_id.into()))
        })
        .unwrap_or_else(|| panic!("no span for {response_id} among {}", spans.len()));
    let mut children: HashMap<String, Vec<&Span>> = HashMap::new();
    for span in spans
        .iter()
        .filter(|s| s.parent_span_id == response.span_id)
    {
        children.entry(span.name.clone()).or_default().push(span);
    }
    (response, children)
}

const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_response_is_a_span_of_the_client_s_trace_with_one_child_per_stage() {
    let (collector, received, collector_task) = receiver().await;
    let (addr, state, server_task) = server(collector, |_| {}).await;
    let body = json!({"model": "spark", "input": "hello", "store": true}).to_string();
    let reply = raw_post(
        addr,
        &body,
        &[
            (
                "traceparent",
                &format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"),
            ),
            ("tracestate", "vendor=codex"),
        ],
    )
    .await;
    let response: Value = serde_json::from_str(&reply).unwrap();
    let id = response["id"].as_str().unwrap();
    flush(&state).await;

    let spans = spans(&received);
    let (span, children) = response_tree(&spans, id);
    assert_eq!(hex(&span.trace_id), CLIENT_TRACE, "the client's trace");
    assert_eq!(
        hex(&span.parent_span_id),
        CLIENT_SPAN,
        "under the client's span"
    );
    assert_eq!(span.trace_state, "vendor=codex");
    assert_eq!(
        attribute(span, "tether.transport"),
        Some(AnyValue::StringValue("http".into()))
    );
    assert_eq!(
        attribute(span, "gen_ai.request.model"),
        Some(AnyValue::StringValue("spark".into()))
    );
    let output = response["usage"]["output_tokens"].as_i64().unwrap();
    assert_eq!(
        attribute(span, "gen_ai.usage.output_tokens"),
        Some(AnyValue::IntValue(output))
    );
    // Over HTTP the response is stored and billed before its reply: those are its stages too.
    for stage in [
        "resolve", "render", "validate", "classify", "generate", "persist", "bill",
    ] {
        let stage_spans = children
            .get(&format!("tether.{stage}"))
            .unwrap_or_else(|| panic!("no {stage} span: {:?}", children.keys()));
        assert_eq!(stage_spans.len(), 1, "{stage}");
        let child = stage_spans[0];
        assert_eq!(child.trace_id, span.trace_id);
        assert!(
            child.start_time_unix_nano >= span.start_time_unix_nano
                && child.end_time_unix_nano <= span.end_time_unix_nano,
            "{stage} lies within the response"
        );
    }
    // The stages ran in order.
    let start = |name: &str| children[name][0].start_time_unix_nano;
    assert!(start("tether.resolve") <= start("tether.render"));
    assert!(start("tether.render") <= start("tether.generate"));
    assert!(start("tether.generate") <= start("tether.persist"));
    // The engine call is the generate stage's child.
    let generate = children["tether.generate"][0];
    let engine: Vec<&Span> = spans.iter().filter(|s| s.name == "tether.engine").collect();
    assert_eq!(engine.len(), 1);
    assert_eq!(engine[0].parent_span_id, generate.span_id);
    assert_eq!(
        attribute(engine[0], "gen_ai.usage.output_tokens"),
        Some(AnyValue::IntValue(output))
    );
    server_task.abort();
    collector_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_turn_takes_its_parent_from_client_metadata_and_a_hit_loads_nothing() {
    let (collector, received, collector_task) = receiver().await;
    let (addr, state, server_task) = server(collector, |_| {}).await;
    let mut client = common::connect(addr).await;
    let turn = |n: u8| format!("00-{CLIENT_TRACE}-00000000000000{n:02x}-01");
    client
        .send(
            &json!({"type": "response.create", "model": "spark", "input": "hi", "store": true,
                "client_metadata": {"ws_request_header_traceparent": turn(1)}})
            .to_string(),
        )
        .await;
    let first = client.response_events().await;
    let first_id = first.last().unwrap()["response"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    client
        .send(
            &json!({"type": "response.create", "model": "spark", "input": "and then?",
                "store": true, "previous_response_id": first_id,
                "client_metadata": {"ws_request_header_traceparent": turn(2)}})
            .to_string(),
        )
        .await;
    let second = client.response_events().await;
    let second_id = second.last().unwrap()["response"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A frame without trace keys starts a trace of its own.
    client
        .send(
            &json!({"type": "response.create", "model": "spark", "input": "x", "store": false})
                .to_string(),
        )
        .await;
    let third = client.response_events().await;
    let third_id = third.last().unwrap()["response"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A client span that says "not sampled" (flags 00): nothing is exported for the response.
    let unsampled = format!("00-{CLIENT_TRACE}-0000000000000009-00");
    client
        .send(
            &json!({"type": "response.create", "model": "spark", "input": "y", "store": false,
                "client_metadata": {"ws_request_header_traceparent": unsampled}})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let unsampled_id = events.last().unwrap()["response"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    flush(&state).await;

    let spans = spans(&received);
    for (id, n) in [(&first_id, 1), (&second_id, 2)] {
        let (span, children) = response_tree(&spans, id);
        assert_eq!(hex(&span.trace_id), CLIENT_TRACE);
        assert_eq!(hex(&span.parent_span_id), format!("00000000000000{n:02x}"));
        assert_eq!(
            attribute(span, "tether.transport"),
            Some(AnyValue::StringValue("ws".into()))
        );
        // Written behind the terminal event, and still the response's children.
        for stage in ["persist", "bill", "render", "generate"] {
            assert!(
                children.contains_key(&format!("tether.{stage}")),
                "{id}: {stage}"
            );
        }
        assert!(
            !children.contains_key("tether.load"),
            "nothing came from the store"
        );
    }
    let (_, hit) = response_tree(&spans, &second_id);
    let (second_span, _) = response_tree(&spans, &second_id);
    assert_eq!(
        attribute(second_span, "tether.path"),
        Some(AnyValue::StringValue("ws_hit".into())),
        "the continuation was served from the connection cache"
    );
    assert_eq!(hit["tether.render"].len(), 1);
    let (third_span, _) = response_tree(&spans, &third_id);
    assert!(third_span.parent_span_id.is_empty(), "a root span");
    assert_ne!(hex(&third_span.trace_id), CLIENT_TRACE);
    let unsampled_id = AnyValue::StringValue(unsampled_id);
    assert!(
        !spans
            .iter()
            .any(|span| attribute(span, "tether.response.id").as_ref() == Some(&unsampled_id)),
        "an unsampled parent's response is not exported"
    );
    assert!(
        !spans
            .iter()
            .any(|span| hex(&span.parent_span_id) == "0000000000000009"),
        "nor anything under it"
    );
    server_task.abort();
    collector_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_can_be_json() {
    let (collector, received, collector_task) = receiver().await;
    let (addr, state, server_task) = server(collector, |config| {
        config.otlp_protocol = tether_server::traces::OtlpProtocol::HttpJson;
    })
    .await;
    let body = json!({"model": "spark", "input": "hello", "store": false}).to_string();
    raw_post(
        addr,
        &body,
        &[(
            "traceparent",
            &format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"),
        )],
    )
    .await;
    flush(&state).await;
    let received = received.lock().unwrap();
    assert!(!received.is_empty());
    let mut names = Vec::new();
    for (kind, body) in received.iter() {
        assert_eq!(kind, "application/json");
        let export: Value = serde_json::from_slice(body).unwrap();
        for span in export["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .unwrap()
        {
            assert_eq!(
                span["traceId"], CLIENT_TRACE,
                "hex ids, as OTLP/JSON has them"
            );
            names.push(span["name"].as_str().unwrap().to_string());
        }
    }
    assert!(names.contains(&"tether.response".to_string()), "{names:?}");
    assert!(names.contains(&"tether.engine".to_string()), "{names:?}");
    server_task.abort();
    collector_task.abort();
}

#[test]
fn a_bad_endpoint_stops_the_server_at_start() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _inside = runtime.enter();
    let mut config = common::config(":memory:");
    config.otlp_endpoint = Some("localhost:4318".into());
    let error = AppState::new(&config).err().expect("refused").to_string();
    assert!(
        error.contains("--otlp-endpoint") && error.contains("http://"),
        "{error}"
    );
}

/// `POST /v1/responses` with `body` and `headers`; the reply's body.
async fn raw_post(addr: SocketAddr, body: &str, headers: &[(&str, &str)]) -> String {
    let endpoint = headers
        .iter()
        .fold(common::endpoint(addr), |endpoint, (name, value)| {
            endpoint.with_header(*name, *value)
        });
    let reply = tether_client::Http::new(&endpoint)
        .post_json("/v1/responses", body)
        .await
        .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.text()
}
