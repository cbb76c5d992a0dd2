//! `responsesapi.websocket_timing`, the reference's split of a turn, sent before the terminal
//! event to a connection whose upgrade asked for it (`x-responsesapi-include-timing-metrics:
//! true`) and to no other; and Tether's own summary (`x-tether-timing`), the same numbers,
//! with the modelled API services (`--api-costs`) apart from measured work.

mod common;

use common::TestServer;
use serde_json::{Value, json};

const SIX: [&str; 6] = [
    "responses_duration_excl_engine_and_client_tool_time_ms",
    "engine_service_total_ms",
    "engine_iapi_ttft_total_ms",
    "engine_service_ttft_total_ms",
    "engine_iapi_tbt_across_engine_calls_ms",
    "engine_service_tbt_across_engine_calls_ms",
];

fn create(input: &str) -> String {
    json!({"type": "response.create", "model": "spark", "store": false, "input": input}).to_string()
}

#[tokio::test]
async fn the_timing_event_comes_before_completed_only_when_asked_for() {
    let server = TestServer::start(":memory:").await;
    let mut asked = common::connect_with_headers(
        server.addr,
        &[("x-responsesapi-include-timing-metrics", "true")],
    )
    .await;
    asked.send(&create("time me")).await;
    let events = asked.response_events().await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let at = types
        .iter()
        .position(|t| *t == "responsesapi.websocket_timing")
        .expect("a timing event");
    assert_eq!(
        at,
        types.len() - 2,
        "just before the terminal event: {types:?}"
    );
    let timing = &events[at]["timing_metrics"];
    for field in SIX {
        assert!(
            timing[field].as_f64().is_some_and(|v| v >= 0.0),
            "{field}: {timing}"
        );
    }
    let ms = |field: &str| timing[field].as_f64().unwrap();
    // spark decodes at 1,000 tokens/s after an 80 ms prefill overhead: the engine's time is
    // most of the turn, its time to first token most of that.
    assert!(ms("engine_service_ttft_total_ms") >= 80.0, "{timing}");
    assert!(ms("engine_service_total_ms") >= ms("engine_service_ttft_total_ms"));
    assert!(ms("engine_iapi_ttft_total_ms") >= ms("engine_service_ttft_total_ms"));
    assert_eq!(timing["num_engine_calls"], 1);
    assert_eq!(timing["timing_scope"], "response");
    assert!(events[at].get("sequence_number").is_none());

    // Without the header, no timing event.
    let mut plain = server.connect().await;
    plain.send(&create("do not time me")).await;
    let events = plain.response_events().await;
    assert!(
        events
            .iter()
            .all(|e| e["type"] != "responsesapi.websocket_timing")
    );
    server.stop().await;
}

#[tokio::test]
async fn modelled_services_are_charged_on_the_tokens_each_transport_really_scans() {
    let mut config = common::config(":memory:");
    // 20 µs a scanned token, 5 ms an engine call: large enough to see, fixed before measuring.
    config.classifier_us_per_token = Some(20.0);
    config.engine_hop_ms = Some(5.0);
    let server = TestServer::start_with(config).await;
    let history = "word ".repeat(2000);
    let mut client = common::connect_with_query(server.addr, &[("tether_timing", "1")]).await;
    client
        .send(
            &json!({"type": "response.create", "model": "instant", "store": false,
                "input": history})
            .to_string(),
        )
        .await;
    let first = client.response_events().await;
    let summary = |events: &[Value]| events.last().unwrap()["tether_timing"].clone();
    let miss = summary(&first);
    let scanned_full = miss["modelled"]["classify_us"].as_u64().unwrap();
    assert!(
        scanned_full >= 2000 * 20,
        "the whole prompt was scanned: {miss}"
    );
    assert_eq!(miss["modelled"]["engine_hop_us"], 5000);
    assert!(miss["engine"]["iapi_ttft_us"].as_u64() >= miss["engine"]["service_ttft_us"].as_u64());

    // A continuation on the connection scans only its new input.
    let id = first.last().unwrap()["response"]["id"].clone();
    client
        .send(
            &json!({"type": "response.create", "model": "instant", "store": false,
                "previous_response_id": id, "input": "short"})
            .to_string(),
        )
        .await;
    let hit = summary(&client.response_events().await);
    assert_eq!(hit["path"], "ws_hit");
    let scanned_new = hit["modelled"]["classify_us"].as_u64().unwrap();
    assert!(
        scanned_new < scanned_full / 50,
        "{scanned_new} vs {scanned_full}"
    );
    // The API's own time is told apart from the engine's.
    assert!(hit["api_us"].as_u64().is_some());
    assert!(hit["tokens"]["reused_by_connection"].as_u64().unwrap() > 2000);
    server.stop().await;
}
