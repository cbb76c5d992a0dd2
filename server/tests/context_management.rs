//! `context_management` compaction (docs/protocol.md §10) on both transports: past the
//! threshold the model reads the context compacted — its user messages and a sealed
//! `compaction` item, which leads the response's output — and continuations carry it forward;
//! under it nothing changes.

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};

mod common;

fn router() -> Router {
    common::router_at(100_000.0)
}

async fn create(router: &Router, body: Value) -> (StatusCode, Value) {
    common::oneshot_json(router, "POST", "/v1/responses", Some(body)).await
}

/// A tool call whose output is long: about 3,000 tokens of context.
fn long_history() -> Vec<Value> {
    vec![
        json!({"type": "message", "role": "user", "content": "run the tests"}),
        json!({"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"cmd\":\"cargo test\"}"}),
        json!({"type": "function_call_output", "call_id": "c1", "output": "test output line ".repeat(1000)}),
    ]
}

fn compacting(threshold: u64) -> Value {
    json!([{"type": "compaction", "compact_threshold": threshold}])
}

#[tokio::test]
async fn past_the_threshold_the_context_is_compacted_and_the_output_begins_with_the_item() {
    let router = router();
    let mut input = long_history();
    input.push(json!({"type": "message", "role": "user", "content": "what failed?"}));
    let (_, plain) = create(
        &router,
        json!({"model": "tether-sim", "input": input, "store": false}),
    )
    .await;
    let full = plain["usage"]["input_tokens"].as_u64().unwrap();
    assert!(full > 2000, "{full}");
    assert_ne!(plain["output"][0]["type"], "compaction");
    // Under the threshold, nothing changes.
    let (_, under) = create(
        &router,
        json!({"model": "tether-sim", "input": input, "store": false,
               "context_management": compacting(full + 1)}),
    )
    .await;
    assert_eq!(under["usage"]["input_tokens"].as_u64(), Some(full));
    assert_ne!(under["output"][0]["type"], "compaction");
    let (status, over) = create(
        &router,
        json!({"model": "tether-sim", "input": input, "context_management": compacting(1000)}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{over}");
    let item = &over["output"][0];
    assert_eq!(item["type"], "compaction", "{over}");
    assert!(
        item["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("tc1.")
    );
    assert_eq!(over["output"][1]["type"], "message", "then the answer");
    let compacted = over["usage"]["input_tokens"].as_u64().unwrap();
    assert!(compacted < 1000, "the model read {compacted} tokens");
    // A continuation reads the compacted context, not the long one.
    let (status, next) = create(
        &router,
        json!({"model": "tether-sim", "input": "and now?", "previous_response_id": over["id"]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{next}");
    assert!(
        next["usage"]["input_tokens"].as_u64().unwrap() < 1000,
        "{next}"
    );
    // A stateless client sends the output back: the item is sealed for it.
    let mut again: Vec<Value> =
        vec![json!({"type": "message", "role": "user", "content": "what failed?"})];
    again.extend(over["output"].as_array().unwrap().iter().cloned());
    again.push(json!({"type": "message", "role": "user", "content": "thanks"}));
    let (status, replayed) = create(
        &router,
        json!({"model": "tether-sim", "input": again, "store": false}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{replayed}");
}

#[tokio::test]
async fn a_bad_context_management_is_refused() {
    let router = router();
    for (value, param) in [
        (compacting(999), "context_management[0].compact_threshold"),
        (
            json!([{"type": "compaction"}]),
            "context_management[0].compact_threshold",
        ),
        (
            json!([{"type": "other", "compact_threshold": 5000}]),
            "context_management[0].type",
        ),
        (json!("compaction"), "context_management"),
    ] {
        let (status, answer) = create(
            &router,
            json!({"model": "tether-sim", "input": "hi", "context_management": value}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert_eq!(answer["error"]["param"], param, "{answer}");
    }
}

#[tokio::test]
async fn over_websocket_a_cache_hit_compacts_and_the_next_turn_continues_from_it() {
    let server = common::TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    let turn = |body: Value| {
        let mut frame = body;
        frame["type"] = json!("response.create");
        frame["model"] = json!("tether-sim");
        frame["store"] = json!(false);
        frame.to_string()
    };
    client.send(&turn(json!({"input": long_history()}))).await;
    let first = client.response_events().await.pop().unwrap();
    assert_eq!(first["type"], "response.completed", "{first}");
    // The next turn is a cache hit whose context passes the threshold.
    client
        .send(&turn(
            json!({"input": "what failed?", "previous_response_id": first["response"]["id"],
                           "context_management": compacting(1000)}),
        ))
        .await;
    let events = client.response_events().await;
    let added = events
        .iter()
        .find(|e| e["type"] == "response.output_item.added")
        .unwrap();
    assert_eq!(added["item"]["type"], "compaction", "{added}");
    assert_eq!(added["output_index"], 0);
    let second = events.last().unwrap();
    assert_eq!(second["type"], "response.completed", "{second}");
    assert!(
        second["response"]["usage"]["input_tokens"]
            .as_u64()
            .unwrap()
            < 1000
    );
    client
        .send(&turn(
            json!({"input": "go on", "previous_response_id": second["response"]["id"]}),
        ))
        .await;
    let third = client.response_events().await.pop().unwrap();
    assert_eq!(third["type"], "response.completed", "{third}");
    assert!(
        third["response"]["usage"]["input_tokens"].as_u64().unwrap() < 1000,
        "{third}"
    );
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        2,
        "both continuations came from the connection cache"
    );
    server.stop().await;
}
