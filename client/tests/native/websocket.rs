//! WebSocket mode: a conversation from the connection cache, lanes side by side, a warm-up,
//! and the frames that reach a running response.

use tether_client::{APPEND_BETA, Ending, Frame, MULTI_AGENT_BETA, Session, WebSocket};
use tether_protocol::{Input, Item, StreamEvent};

use crate::common::Server;
use crate::{agent_request, text_request, tool_output};

#[tokio::test]
async fn a_conversation_continues_from_the_connection_cache() {
    let server = Server::start(&[]).await;
    let mut ws = WebSocket::connect(&server.endpoint().with_timing(true))
        .await
        .unwrap();
    let mut kinds = Vec::new();
    let first = ws
        .turn_with(&agent_request("List the files."), |frame: &Frame| {
            kinds.push(frame.kind().into_owned())
        })
        .await
        .unwrap();
    assert_eq!(first.ending, Ending::Completed);
    assert_eq!(kinds.first().map(String::as_str), Some("response.created"));
    assert_eq!(kinds.last().map(String::as_str), Some("response.completed"));
    assert_eq!(first.events, kinds.len() as u64);
    assert!(first.timing.is_some(), "the endpoint asked for timings");
    let call = first.tool_calls().next().expect("a tool call").clone();

    let mut next = agent_request("");
    next.input = Input::Items(vec![tool_output(&call, "3 files")]);
    next.previous_response_id = Some(first.response.id.clone());
    let second = ws.turn(&next).await.unwrap();
    assert_eq!(second.ending, Ending::Completed);
    assert_eq!(
        second.response.previous_response_id.as_deref(),
        Some(first.response.id.as_str())
    );
    ws.close().await;
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn lanes_run_side_by_side_and_each_reads_its_own_events() {
    let server = Server::start(&[]).await;
    let mut ws = WebSocket::connect(&server.endpoint()).await.unwrap();
    let mut on_a = text_request("lane a", 20);
    on_a.stream_id = Some("a".into());
    let mut on_b = text_request("lane b", 20);
    on_b.stream_id = Some("b".into());
    ws.create(&on_a).await.unwrap();
    ws.create(&on_b).await.unwrap();
    // Read b first: a's events, interleaved with b's on the wire, wait for a's reader.
    let mut lanes_seen = Vec::new();
    let b = ws
        .finish_with(Some("b"), |frame| lanes_seen.push(frame.lane()))
        .await
        .unwrap();
    let a = ws
        .finish_with(Some("a"), |frame| lanes_seen.push(frame.lane()))
        .await
        .unwrap();
    assert_ne!(a.response.id, b.response.id);
    let (on_b_lane, on_a_lane): (Vec<_>, Vec<_>) = lanes_seen
        .iter()
        .partition(|lane| lane.as_deref() == Some("b"));
    assert_eq!(on_b_lane.len() as u64, b.events);
    assert!(on_a_lane.iter().all(|lane| lane.as_deref() == Some("a")));
    // The lanes share the connection cache: b's response continues on a.
    let mut next = text_request("continue b on a", 5);
    next.stream_id = Some("a".into());
    next.previous_response_id = Some(b.response.id.clone());
    let continued = ws.turn(&next).await.unwrap();
    assert_eq!(continued.ending, Ending::Completed);
    ws.close().await;
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn a_warm_up_samples_nothing_and_the_first_turn_chains_from_it() {
    let server = Server::start(&[]).await;
    let mut session = Session::new(server.endpoint());
    let mut warm_up = agent_request("");
    warm_up.input = Input::Items(Vec::new());
    warm_up.instructions = Some("You are a coding agent.".into());
    let warm = session
        .prewarm(warm_up)
        .await
        .unwrap()
        .expect("over WebSocket");
    assert!(warm.response.output.is_empty());
    assert_eq!(warm.response.usage.as_ref().unwrap().output_tokens, 0);
    let first = session
        .turn(agent_request("List the files."))
        .await
        .unwrap();
    assert_eq!(
        first.response.previous_response_id.as_deref(),
        Some(warm.response.id.as_str())
    );
    assert!(session.recoveries().is_empty());
    session.close().await;
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"hit\"}")
            .await,
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn a_paused_response_resumes_with_append() {
    let server = Server::start(&[]).await;
    let mut ws = WebSocket::connect(&server.endpoint().with_beta(APPEND_BETA))
        .await
        .unwrap();
    let paused = ws.turn(&agent_request("List the files.")).await.unwrap();
    assert_eq!(paused.ending, Ending::Paused);
    let call = paused
        .tool_calls()
        .next()
        .expect("paused at a call")
        .clone();
    ws.append(Input::Items(vec![tool_output(&call, "3 files")]), None)
        .await
        .unwrap();
    let done = ws.finish_with(None, |_| {}).await.unwrap();
    assert_eq!(done.response.id, paused.response.id, "one response");
    assert_eq!(done.ending, Ending::Completed);
    ws.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_waiting_response_takes_an_inject() {
    let server = Server::start(&[]).await;
    let mut ws = WebSocket::connect(&server.endpoint().with_beta(MULTI_AGENT_BETA))
        .await
        .unwrap();
    let mut request = agent_request("List the files.");
    request.multi_agent = Some(serde_json::json!({"enabled": true}));
    ws.create(&request).await.unwrap();
    // The response waits once its call is done: read up to that event.
    let mut response_id = None;
    let call = loop {
        let event = ws.next().await.unwrap().decode().unwrap();
        match event.event {
            StreamEvent::Created { response } => response_id = Some(response.id),
            StreamEvent::OutputItemDone { item, .. } if matches!(item, Item::FunctionCall(_)) => {
                break item;
            }
            _ => {}
        }
    };
    let response_id = response_id.expect("response.created came first");
    ws.inject(
        &response_id,
        Input::Items(vec![tool_output(&call, "3 files")]),
    )
    .await
    .unwrap();
    let mut injected = false;
    let done = ws
        .finish_with(None, |frame| {
            injected |= frame.kind() == "response.inject.created";
        })
        .await
        .unwrap();
    assert!(injected);
    assert_eq!(done.response.id, response_id);
    assert_eq!(done.ending, Ending::Completed);
    ws.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_steer_ends_the_response_and_its_successor_follows() {
    // The echo answer (~60 tokens) at 60 tokens/s: the steer arrives while it streams. (The
    // successor inherits the settings, so its answer is the same length.)
    let server = Server::start(&["--tokens-per-second", "60"]).await;
    let mut ws = WebSocket::connect(&server.endpoint()).await.unwrap();
    let mut request = tether_protocol::ResponseCreate::new("tether-sim", "write a long story");
    request.store = Some(false);
    ws.create(&request).await.unwrap();
    let created = ws.next().await.unwrap().decode().unwrap();
    let StreamEvent::Created { response } = created.event else {
        panic!("{created:?}")
    };
    // Steer once the answer streams.
    while !ws.next().await.unwrap().carries_tokens() {}
    ws.steer(&response.id, Input::Text("make it about a cat".into()))
        .await
        .unwrap();
    let mut accepted = false;
    let steered = ws
        .finish_with(None, |frame| {
            accepted |= frame.kind() == "response.steer.accepted";
        })
        .await
        .unwrap();
    assert!(accepted);
    assert_eq!(steered.response.id, response.id);
    assert_eq!(steered.incomplete_reason(), Some("steered"));
    let successor = ws.finish_with(None, |_| {}).await.unwrap();
    assert_eq!(
        successor.response.previous_response_id.as_deref(),
        Some(response.id.as_str())
    );
    ws.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_refused_frame_is_an_api_error_and_the_connection_goes_on() {
    let server = Server::start(&[]).await;
    let mut ws = WebSocket::connect(&server.endpoint()).await.unwrap();
    let mut request = text_request("hi", 5);
    request.previous_response_id = Some("resp_nowhere".into());
    let error = ws.turn(&request).await.unwrap_err();
    assert_eq!(error.code(), Some("previous_response_not_found"));
    assert_eq!(error.status(), Some(400));
    ws.send_text("{\"type\":\"response.cancel\"}")
        .await
        .unwrap();
    let refusal = ws.next().await.unwrap();
    assert_eq!(refusal.kind(), "error");
    let fine = ws.turn(&text_request("hi", 5)).await.unwrap();
    assert_eq!(fine.ending, Ending::Completed);
    ws.close().await;
    server.stop().await;
}
