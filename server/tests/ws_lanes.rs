//! `stream_id` lanes: validation, concurrency across lanes, FIFO within one, the lane limit.

mod common;

use common::{TestServer, config};
use serde_json::{Value, json};

fn create(input: &str, lane: Option<&str>) -> String {
    let mut frame =
        json!({"type": "response.create", "model": "m", "store": false, "input": input});
    if let Some(lane) = lane {
        frame["stream_id"] = json!(lane);
    }
    frame.to_string()
}

/// Reads events until `terminals` responses have ended.
async fn collect(client: &mut common::Client, terminals: usize) -> Vec<Value> {
    let mut events = Vec::new();
    let mut ended = 0;
    while ended < terminals {
        let event = client.next_json().await;
        if event["type"] == "response.completed" || event["type"] == "error" {
            ended += 1;
        }
        events.push(event);
    }
    events
}

#[tokio::test]
async fn different_lanes_stream_concurrently_and_tag_their_events() {
    let mut cfg = config(":memory:");
    cfg.tokens_per_second = 300.0; // each answer takes about 0.2 s
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    client.send(&create("on lane a", Some("lane-a"))).await;
    client.send(&create("on lane b", Some("lane.b_2"))).await;
    let events = collect(&mut client, 2).await;

    let position = |lane: &str, kind: &str| {
        events
            .iter()
            .position(|e| e["stream_id"] == lane && e["type"] == kind)
            .unwrap()
    };
    // Both started before either finished: the lanes ran side by side.
    assert!(position("lane.b_2", "response.created") < position("lane-a", "response.completed"));
    assert!(position("lane-a", "response.created") < position("lane.b_2", "response.completed"));
    for lane in ["lane-a", "lane.b_2"] {
        let mine: Vec<&Value> = events.iter().filter(|e| e["stream_id"] == lane).collect();
        for (i, event) in mine.iter().enumerate() {
            assert_eq!(
                event["sequence_number"], i,
                "{lane} counts its own sequence from 0"
            );
        }
        let text = mine.last().unwrap()["response"]["output"][0]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(
            text.contains(&format!("\"on lane {}\"", &lane[5..6])),
            "{text}"
        );
    }
    assert!(
        events.iter().all(|e| e.get("stream_id").is_some()),
        "every lane event is tagged"
    );
    server.stop().await;
}

#[tokio::test]
async fn one_lane_is_first_in_first_out() {
    let mut cfg = config(":memory:");
    cfg.tokens_per_second = 1000.0;
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    client.send(&create("first", Some("same"))).await;
    client.send(&create("second", Some("same"))).await;
    let events = collect(&mut client, 2).await;
    let completed_first = events
        .iter()
        .position(|e| e["type"] == "response.completed")
        .unwrap();
    let created: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "response.created")
        .map(|(i, _)| i)
        .collect();
    assert!(
        created[1] > completed_first,
        "the second waits for the first"
    );
    let first_text = events[completed_first]["response"]["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(first_text.contains("\"first\""));
    server.stop().await;
}

#[tokio::test]
async fn invalid_stream_ids_are_refused() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    for bad in ["has space", "", &"x".repeat(257), "ünï"] {
        client.send(&create("x", Some(bad))).await;
        let error = client.next_json().await;
        assert_eq!(error["type"], "error");
        assert_eq!(error["status"], 400);
        assert_eq!(error["error"]["code"], "invalid_stream_id", "{bad:?}");
        assert_eq!(error["error"]["param"], "stream_id");
    }
    client.send(&create("ok", Some(&"y".repeat(256)))).await;
    assert_eq!(
        client.response_events().await.last().unwrap()["type"],
        "response.completed"
    );
    server.stop().await;
}

#[tokio::test]
async fn at_most_32_named_lanes_per_connection() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    for i in 0..32 {
        client.send(&create("x", Some(&format!("lane{i}")))).await;
    }
    collect(&mut client, 32).await;
    client.send(&create("x", Some("lane32"))).await;
    let error = client.next_json().await;
    assert_eq!(error["error"]["code"], "websocket_stream_limit_reached");
    assert_eq!(error["stream_id"], "lane32");
    // Existing lanes and the default lane keep working.
    client.send(&create("x", Some("lane7"))).await;
    assert_eq!(
        client.response_events().await.last().unwrap()["stream_id"],
        "lane7"
    );
    client.send(&create("x", None)).await;
    let last = client.response_events().await.pop().unwrap();
    assert_eq!(last["type"], "response.completed");
    assert!(last.get("stream_id").is_none());
    server.stop().await;
}

#[tokio::test]
async fn lanes_share_the_connection_cache() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    client.send(&create("from lane a", Some("a"))).await;
    let id = client.response_events().await.last().unwrap()["response"]["id"].clone();
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "stream_id": "b",
            "previous_response_id": id, "input": "continue on b"})
            .to_string(),
        )
        .await;
    assert_eq!(
        client.response_events().await.last().unwrap()["type"],
        "response.completed"
    );
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn at_most_16_responses_run_at_once() {
    let mut cfg = config(":memory:");
    cfg.tokens_per_second = 200.0; // each answer takes about 0.3 s
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    for i in 0..20 {
        client.send(&create("x", Some(&format!("l{i}")))).await;
    }
    let events = collect(&mut client, 20).await;
    let (mut running, mut most) = (0i32, 0i32);
    for event in &events {
        match event["type"].as_str().unwrap() {
            "response.created" => running += 1,
            "response.completed" => running -= 1,
            _ => {}
        }
        most = most.max(running);
    }
    assert_eq!(most, 16, "16 lanes ran side by side, the other 4 waited");
    server.stop().await;
}

#[tokio::test]
async fn a_chain_forks_onto_another_lane_and_both_branches_continue_from_the_cache() {
    let server = TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    let tools = json!([{"type": "function", "name": "read", "parameters": {"type": "object",
        "properties": {"path": {"type": "string"}}, "required": ["path"]}}]);
    let on = |lane: &str, body: Value| {
        let mut frame = body;
        frame["type"] = json!("response.create");
        frame["stream_id"] = json!(lane);
        frame.to_string()
    };
    client
        .send(&on(
            "a",
            json!({"model": "m", "store": false, "tools": tools, "input": "Read the notes."}),
        ))
        .await;
    let first = collect(&mut client, 1).await;
    let root = first.last().unwrap()["response"].clone();
    let call = root["output"][0].clone();
    assert_eq!(call["type"], "function_call");
    let output = |text: &str| json!([{"type": "function_call_output", "call_id": call["call_id"], "output": text}]);
    // Lane b forks the chain: it continues lane a's response; then lane a continues the same
    // response on its own branch. Both are served from the connection cache.
    for (lane, text) in [
        ("b", "notes, as seen from b"),
        ("a", "notes, as seen from a"),
    ] {
        client
            .send(&on(
                lane,
                json!({"model": "m", "store": false, "tools": tools,
                "previous_response_id": root["id"], "input": output(text)}),
            ))
            .await;
        let events = collect(&mut client, 1).await;
        let done = events.last().unwrap();
        assert_eq!(done["type"], "response.completed", "{done}");
        assert_eq!(done["stream_id"], lane);
        let answer = done["response"]["output"][0]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(
            answer.contains(text),
            "{lane} continued its own branch: {answer}"
        );
        // The branch counts the tokens a full render of its conversation counts.
        let whole = json!({"model": "m", "store": false, "tools": tools, "input": [
            {"role": "user", "content": "Read the notes."}, call, output(text)[0]]});
        let full = server.post_json("/v1/responses", &whole).await;
        assert_eq!(
            done["response"]["usage"]["input_tokens"],
            full["usage"]["input_tokens"]
        );
    }
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        2,
        "the fork and the branch both hit"
    );
    server.stop().await;
}
