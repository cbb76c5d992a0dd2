//! The agent loop, natively: scripted server turns (built with `ResponseStreamBuilder`) replayed
//! by `ReplayTransport`, tool calls run for real in a sandbox over the sample project.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::Cell;

use futures::executor::block_on;
use tether_playground::agent::{
    Agent, AgentConfig, AgentRun, Breakdown, CallKind, ContinuationMode, Direction, Entry,
    FileBody, Resume, RunStatus, SentAs, SharedRun, StopSignal, run_agent, run_agent_shared,
};
use tether_playground::transport::TransportKind;
use tether_playground::transport::replay::{ReplayTransport, Script};
use tether_playground::transport::{Received, Transport, TransportError};
use tether_protocol::items::CustomToolCall;
use tether_protocol::{
    ApiError, Input, Item, Response, ResponseCreate, ResponseStreamBuilder, ServerEvent, Usage,
};
use tether_sandbox::{SAMPLE_FIX_PATCH, Sandbox, sample_project};

const TASK: &str = "Fix the pagination bug and run the tests.";

/// One output item of a scripted response.
enum Out<'a> {
    Text(&'a str),
    Call(&'a str, &'a str, &'a str),
    Custom(&'a str, &'a str, &'a str),
}

/// The full event sequence of response `id`, each item streamed in small deltas.
fn response(id: &str, outputs: &[Out], usage: Usage) -> Vec<ServerEvent> {
    let request = ResponseCreate::new("m", "x");
    let mut b = ResponseStreamBuilder::new(Response::in_progress(id, 1, &request), None);
    let mut events = b.start();
    for (i, out) in outputs.iter().enumerate() {
        let pieces = |text: &str| -> Vec<String> {
            let chars: Vec<char> = text.chars().collect();
            chars.chunks(7).map(|c| c.iter().collect()).collect()
        };
        match out {
            Out::Text(text) => {
                events.extend(b.begin_message(format!("msg_{id}_{i}")));
                for piece in pieces(text) {
                    events.push(b.text_delta(&piece));
                }
            }
            Out::Call(call_id, name, arguments) => {
                events.push(b.begin_function_call(format!("fc_{id}_{i}"), *call_id, *name));
                for piece in pieces(arguments) {
                    events.push(b.arguments_delta(&piece));
                }
            }
            Out::Custom(call_id, name, input) => {
                events.push(b.begin_tool_call(Item::CustomToolCall(CustomToolCall {
                    id: Some(format!("ctc_{id}_{i}")),
                    call_id: call_id.to_string(),
                    name: name.to_string(),
                    input: String::new(),
                    status: None,
                })));
                for piece in pieces(input) {
                    events.push(b.arguments_delta(&piece));
                }
            }
        }
        events.extend(b.end_item());
    }
    events.extend(b.complete(usage, 2));
    events
}

fn script(events: Vec<ServerEvent>) -> Script {
    events.into_iter().map(Ok).collect()
}

/// A grep, the fix as a freeform patch, then the check that the fix is in.
fn fixing_turns() -> Vec<Script> {
    vec![
        script(response(
            "resp_1",
            &[Out::Call(
                "call_grep",
                "shell",
                r#"{"command":["bash","-lc","grep -n 'const start' src/paginate.js"]}"#,
            )],
            Usage::new(900, 0, 30, 0),
        )),
        script(response(
            "resp_2",
            &[
                Out::Text("The offset is off by one; fixing it."),
                Out::Custom("call_patch", "apply_patch", SAMPLE_FIX_PATCH),
            ],
            Usage::new(1000, 900, 80, 0),
        )),
        script(response(
            "resp_3",
            &[Out::Call(
                "call_check",
                "exec_command",
                r#"{"cmd":"grep -c 'current - 1' src/paginate.js"}"#,
            )],
            Usage::new(1100, 1000, 20, 0),
        )),
        script(response(
            "resp_4",
            &[Out::Text("Fixed: page N now starts at (N - 1) * size.")],
            Usage::new(1150, 1100, 15, 0),
        )),
    ]
}

struct Outcome {
    run: AgentRun,
    transport: ReplayTransport,
    sandbox: Sandbox,
    snapshots: Vec<AgentRun>,
}

/// Runs `TASK` over the sample project; `on_state` sees every state and may raise `stop`.
fn run_with(
    mode: ContinuationMode,
    scripts: Vec<Script>,
    max_turns: usize,
    mut on_state: impl FnMut(&AgentRun, &StopSignal),
) -> Outcome {
    let mut transport = ReplayTransport::new(mode.transport_kind(), scripts);
    let mut sandbox = Sandbox::new(sample_project());
    let mut config = AgentConfig::new("tether-sim", mode);
    config.max_turns = max_turns;
    config.scenario = Some("fix-sample-project".into());
    let ticks = Cell::new(0.0);
    // Every reading advances the clock by 1 ms, so every interval measured is positive.
    let clock = || {
        ticks.set(ticks.get() + 1.0);
        ticks.get()
    };
    let stop = StopSignal::new();
    let mut snapshots = Vec::new();
    let run = block_on(run_agent(
        &mut transport,
        &mut sandbox,
        &config,
        TASK,
        &clock,
        &stop,
        &mut |state| {
            snapshots.push(state.clone());
            on_state(state, &stop);
        },
    ));
    Outcome {
        run,
        transport,
        sandbox,
        snapshots,
    }
}

fn items(request: &ResponseCreate) -> &[Item] {
    match &request.input {
        Input::Items(items) => items,
        Input::Text(_) => panic!("the loop always sends items"),
    }
}

fn output_of(item: &Item, call_id: &str) -> Option<String> {
    match item {
        Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) if o.call_id == call_id => {
            Some(o.output.text())
        }
        _ => None,
    }
}

#[test]
fn a_websocket_run_executes_every_call_in_the_sandbox_and_chains_turns() {
    let Outcome {
        run,
        transport,
        sandbox,
        snapshots,
    } = run_with(ContinuationMode::WebSocket, fixing_turns(), 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(run.turns.len(), 4);
    assert_eq!(
        run.answer(),
        Some("Fixed: page N now starts at (N - 1) * size.")
    );

    // The patch really ran: the file is fixed.
    let fixed = sandbox.vfs().read_text("/src/paginate.js").unwrap();
    assert!(fixed.contains("const start = (current - 1) * pageSize;"));

    let requests = transport.requests();
    assert_eq!(requests.len(), 4);
    let first = &requests[0];
    assert_eq!(first.store, Some(false));
    assert_eq!(first.previous_response_id, None);
    assert_eq!(items(first), &[Item::user_text(TASK)]);
    let tool_names: Vec<_> = first.tools.iter().filter_map(|t| t.name()).collect();
    for name in ["shell", "exec_command", "apply_patch", "read_file"] {
        assert!(tool_names.contains(&name), "{name} offered: {tool_names:?}");
    }
    assert_eq!(
        first.metadata.as_ref().unwrap()["scenario"],
        "fix-sample-project"
    );

    // Each continuation sends only the new tool outputs, chained to the previous response.
    assert_eq!(requests[1].previous_response_id.as_deref(), Some("resp_1"));
    let grep = output_of(&items(&requests[1])[0], "call_grep").unwrap();
    assert_eq!(
        grep,
        "Exit code: 0\nOutput:\n10:  const start = current * pageSize;\n"
    );
    assert_eq!(items(&requests[1]).len(), 1);
    assert_eq!(requests[2].previous_response_id.as_deref(), Some("resp_2"));
    assert!(
        matches!(items(&requests[2]), [Item::CustomToolCallOutput(o)] if o.call_id == "call_patch"
            && o.output.text().contains("M src/paginate.js")),
        "{:?}",
        items(&requests[2])
    );
    let check = output_of(&items(&requests[3])[0], "call_check").unwrap();
    assert_eq!(check, "Exit code: 0\nOutput:\n1\n");
    assert!(requests.iter().all(|r| r.store == Some(false)));

    // The conversation: task, call, text, patch call, call, answer — with outputs and changes.
    let kinds: Vec<_> = run
        .entries
        .iter()
        .map(|e| match e {
            Entry::Task(_) => "task",
            Entry::Assistant(_) => "text",
            Entry::ToolCall(_) => "call",
            Entry::Steer(_) => "steer",
        })
        .collect();
    assert_eq!(kinds, ["task", "call", "text", "call", "call", "text"]);
    let calls: Vec<_> = run.tool_calls().collect();
    assert_eq!(calls[1].kind, CallKind::Custom);
    assert_eq!(calls[1].arguments, SAMPLE_FIX_PATCH);
    assert_eq!(calls[1].success, Some(true));
    assert_eq!(calls[1].changes, ["modified /src/paginate.js"]);
    assert!(
        calls
            .iter()
            .all(|c| c.output.is_some() && c.tool_ms > Some(0.0))
    );

    // Timeline: ordered instants, tokens and cache hits from usage, tool time where tools ran.
    for turn in &run.turns {
        let first_event = turn.first_event_at.unwrap();
        let first_token = turn.first_token_at.unwrap();
        let last_token = turn.last_token_at.unwrap();
        let completed = turn.completed_at.unwrap();
        assert!(turn.sent_at < first_event && first_event < first_token);
        assert!(first_token < last_token && last_token < completed);
        assert!(turn.deltas > 1);
        assert_eq!(turn.resumed, None);
    }
    assert_eq!(run.turns[1].response_id.as_deref(), Some("resp_2"));
    assert_eq!(
        (run.turns[1].input_tokens, run.turns[1].cached_tokens),
        (1000, 900)
    );
    assert_eq!(run.turns[3].output_tokens, 15);
    assert!(run.turns[..3].iter().all(|t| t.tool_ms > 0.0));
    assert_eq!(run.turns[3].tool_ms, 0.0);

    // The UI saw the run grow: running first, text streaming in before the turn completed.
    assert_eq!(snapshots.first().unwrap().status, RunStatus::Running);
    assert!(snapshots.iter().any(|s| {
        s.status == RunStatus::Running
            && matches!(s.entries.last(), Some(Entry::Assistant(t)) if !t.is_empty() && t.len() < 30)
    }));
}

#[test]
fn http_stateless_sends_the_full_conversation_every_turn() {
    let Outcome { run, transport, .. } = run_with(
        ContinuationMode::HttpStateless,
        fixing_turns(),
        10,
        |_, _| {},
    );
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(transport.kind(), TransportKind::Http);
    let requests = transport.requests();
    let lengths: Vec<_> = requests.iter().map(|r| items(r).len()).collect();
    // task; + call, output; + text, patch call, output; + call, output.
    assert_eq!(lengths, [1, 3, 6, 8]);
    assert!(
        requests
            .iter()
            .all(|r| r.previous_response_id.is_none() && r.store == Some(false))
    );
    let last = items(&requests[3]);
    assert_eq!(last[0], Item::user_text(TASK));
    assert!(matches!(&last[1], Item::FunctionCall(c) if c.call_id == "call_grep"));
    assert!(output_of(&last[2], "call_grep").is_some());
    assert!(matches!(&last[3], Item::Message(_)));
    assert!(matches!(&last[4], Item::CustomToolCall(c) if c.input == SAMPLE_FIX_PATCH));
    assert!(output_of(&last[7], "call_check").is_some());
    assert_eq!(run.turns[3].input_items, 8);
}

#[test]
fn http_chained_stores_and_sends_only_new_items() {
    let Outcome { run, transport, .. } =
        run_with(ContinuationMode::HttpChained, fixing_turns(), 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let requests = transport.requests();
    assert!(requests.iter().all(|r| r.store == Some(true)));
    let previous: Vec<_> = requests
        .iter()
        .map(|r| r.previous_response_id.as_deref())
        .collect();
    assert_eq!(
        previous,
        [None, Some("resp_1"), Some("resp_2"), Some("resp_3")]
    );
    assert_eq!(
        requests.iter().map(|r| items(r).len()).collect::<Vec<_>>(),
        [1, 1, 1, 1]
    );
}

#[test]
fn the_turn_limit_fails_a_run_that_keeps_calling_tools() {
    let endless: Vec<Script> = (1..=5)
        .map(|n| {
            script(response(
                &format!("resp_{n}"),
                &[Out::Call(
                    &format!("call_{n}"),
                    "shell",
                    r#"{"command":["ls"]}"#,
                )],
                Usage::new(10, 0, 5, 0),
            ))
        })
        .collect();
    let Outcome { run, transport, .. } =
        run_with(ContinuationMode::WebSocket, endless, 3, |_, _| {});
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(transport.requests().len(), 3);
    assert_eq!(run.turns.len(), 3);
    assert!(run.error.as_deref().unwrap().contains("max turns"));
    // The third turn's tool ran; its output was never sent.
    assert_eq!(run.tool_calls().count(), 3);
}

#[test]
fn stop_between_tool_calls_ends_the_run_before_the_next_turn() {
    let Outcome {
        run,
        transport,
        sandbox,
        ..
    } = run_with(
        ContinuationMode::WebSocket,
        fixing_turns(),
        10,
        |state, stop| {
            // Stop as soon as the first tool call has run.
            if state.tool_calls().any(|c| c.output.is_some()) {
                stop.stop();
            }
        },
    );
    assert_eq!(run.status, RunStatus::Stopped);
    assert_eq!(run.error, None);
    assert_eq!(transport.requests().len(), 1, "no turn after the stop");
    let untouched = sandbox.vfs().read_text("/src/paginate.js").unwrap();
    assert!(untouched.contains("const start = current * pageSize;"));
}

#[test]
fn stop_mid_stream_ends_the_turn_without_waiting_for_completion() {
    let Outcome { run, transport, .. } = run_with(
        ContinuationMode::WebSocket,
        fixing_turns(),
        10,
        |state, stop| {
            if state.turns.first().is_some_and(|t| t.deltas == 2) {
                stop.stop();
            }
        },
    );
    assert_eq!(run.status, RunStatus::Stopped);
    assert_eq!(transport.requests().len(), 1);
    let turn = &run.turns[0];
    assert_eq!(turn.deltas, 2);
    assert_eq!(turn.completed_at, None);
    assert!(run.tool_calls().all(|c| c.output.is_none()), "nothing ran");
    // The call cut off mid-arguments is stopped, not running, and not counted.
    let call = run.tool_calls().next().expect("the call had begun");
    assert!(call.stopped);
    assert_eq!(call.state(), "stopped");
    assert_eq!(run.tool_call_count(), 0);
}

#[test]
fn the_pages_own_work_on_each_turn_is_measured() {
    let scripts = fixing_turns();
    let events: Vec<usize> = scripts.iter().map(Vec::len).collect();
    let Outcome { run, .. } = run_with(ContinuationMode::WebSocket, scripts, 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    for (turn, events) in run.turns.iter().zip(events) {
        assert_eq!(turn.events, events as u64, "turn {}", turn.number);
        // The test clock ticks 1 ms per reading: one for encoding the request, and one per
        // event from the poll that had it to the state that holds it.
        assert_eq!(turn.client_ms, events as f64 + 1.0, "turn {}", turn.number);
        // Of which the deltas' share: one reading's worth per delta.
        assert!(turn.deltas > 0, "turn {}", turn.number);
        assert_eq!(
            turn.delta_client_ms, turn.deltas as f64,
            "turn {}",
            turn.number
        );
    }
    assert!(run.tool_call_count() == 3 && run.tool_calls().all(|c| !c.stopped));
}

/// The second turn's connection drops after two events; the resend gets the rest.
fn turns_with_a_drop() -> Vec<Script> {
    let mut turns = fixing_turns();
    let mut dropped: Script = turns[1].iter().take(4).cloned().collect();
    dropped.push(Err(TransportError::Closed("connection reset".into())));
    turns.insert(1, dropped);
    turns
}

#[test]
fn a_dropped_websocket_reconnects_once_and_resends_the_full_context() {
    let Outcome { run, transport, .. } = run_with(
        ContinuationMode::WebSocket,
        turns_with_a_drop(),
        10,
        |_, _| {},
    );
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(transport.reconnects(), 1);
    let requests = transport.requests();
    assert_eq!(requests.len(), 5);
    // The dropped attempt chained from the connection cache...
    assert_eq!(requests[1].previous_response_id.as_deref(), Some("resp_1"));
    // ...which the new connection lacks (store:false): the full conversation, unchained.
    assert_eq!(requests[2].previous_response_id, None);
    assert_eq!(items(&requests[2]).len(), 3);
    assert_eq!(items(&requests[2])[0], Item::user_text(TASK));
    // Later turns chain from the resent response on the new connection.
    assert_eq!(requests[3].previous_response_id.as_deref(), Some("resp_2"));
    assert_eq!(run.turns.len(), 4, "the resend is the same turn");
    assert_eq!(run.turns[1].resumed, Some(Resume::FullContext));
    assert_eq!(run.resumed_turns(), 1);
    // The half-streamed text of the dropped attempt is not left in the conversation twice.
    let texts = run
        .entries
        .iter()
        .filter(|e| matches!(e, Entry::Assistant(t) if t.starts_with("The offset")))
        .count();
    assert_eq!(texts, 1);
}

#[test]
fn a_dropped_stored_chain_resends_with_previous_response_id() {
    let Outcome { run, transport, .. } = run_with(
        ContinuationMode::HttpChained,
        turns_with_a_drop(),
        10,
        |_, _| {},
    );
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let requests = transport.requests();
    assert_eq!(requests[2], requests[1], "the same request, resent");
    assert_eq!(requests[2].previous_response_id.as_deref(), Some("resp_1"));
    assert_eq!(run.turns[1].resumed, Some(Resume::PreviousResponse));
}

#[test]
fn a_second_drop_in_the_same_turn_fails_the_run() {
    let mut turns = turns_with_a_drop();
    let again = turns[1].clone();
    turns.insert(2, again);
    let Outcome { run, transport, .. } =
        run_with(ContinuationMode::WebSocket, turns, 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(transport.reconnects(), 1);
    assert!(run.error.as_deref().unwrap().contains("connection reset"));
}

#[test]
fn a_failed_response_fails_the_run_with_the_server_message() {
    let request = ResponseCreate::new("m", "x");
    let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_f", 1, &request), None);
    let mut events = b.start();
    events.extend(b.fail(Some(500), ApiError::server("the simulator crashed")));
    let Outcome { run, .. } = run_with(
        ContinuationMode::WebSocket,
        vec![script(events)],
        10,
        |_, _| {},
    );
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.error.as_deref(),
        Some("server error (500): the simulator crashed")
    );
}

/// A server that accepts the request and then says nothing.
struct SilentServer {
    requests: usize,
}

impl Transport for SilentServer {
    fn kind(&self) -> TransportKind {
        TransportKind::WebSocket
    }

    fn send<'a>(
        &'a mut self,
        _request: &'a ResponseCreate,
        _text: &'a str,
    ) -> futures::future::LocalBoxFuture<'a, Result<(), TransportError>> {
        self.requests += 1;
        Box::pin(async { Ok(()) })
    }

    fn next_event(
        &mut self,
    ) -> futures::future::LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(futures::future::pending())
    }

    fn reconnect(&mut self) -> futures::future::LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }
}

#[test]
fn stop_while_waiting_on_a_silent_connection_ends_the_run() {
    use futures::task::LocalSpawnExt;

    let mut pool = futures::executor::LocalPool::new();
    let stop = StopSignal::new();
    let pressed = stop.clone();
    // The "user" presses Stop once the run is parked waiting for an event.
    pool.spawner()
        .spawn_local(async move { pressed.stop() })
        .unwrap();
    let mut transport = SilentServer { requests: 0 };
    let mut sandbox = Sandbox::new(sample_project());
    let config = AgentConfig::new("tether-sim", ContinuationMode::WebSocket);
    let run = pool.run_until(run_agent(
        &mut transport,
        &mut sandbox,
        &config,
        TASK,
        &|| 0.0,
        &stop,
        &mut |_| {},
    ));
    assert_eq!(run.status, RunStatus::Stopped);
    assert_eq!(transport.requests, 1);
    assert_eq!(run.turns.len(), 1);
    assert_eq!(run.turns[0].first_event_at, None);
}

/// Sets the `tether_timing` summary on the terminal event of a scripted turn.
fn with_summary(mut turn: Script, summary: serde_json::Value) -> Script {
    let Some(Ok(last)) = turn.last_mut() else {
        panic!("the script ends with an event")
    };
    last.tether_timing = Some(summary);
    turn
}

#[test]
fn server_stage_timings_are_read_from_the_terminal_event_and_never_fail_a_turn() {
    let mut turns = fixing_turns();
    turns[0] = with_summary(
        turns[0].clone(),
        serde_json::json!({"path": "ws_miss", "stages": {
            "resolve_us": 12, "render_us": 2100, "validate_us": 80, "classify_us": 40,
            "generate_us": 95000
        }}),
    );
    turns[1] = with_summary(
        turns[1].clone(),
        serde_json::json!({"path": "ws_hit", "stages": "not an object"}),
    );
    let Outcome { run, .. } = run_with(ContinuationMode::WebSocket, turns, 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let first = run.turns[0].server.as_ref().expect("turn 1 has timings");
    assert_eq!(first.path, "ws_miss");
    assert_eq!(
        first.summary(),
        "resolve 0.01 ms · render 2.1 ms · validate 0.08 ms · classify 0.04 ms · \
         generate 95.0 ms · path ws_miss"
    );
    assert_eq!(
        run.turns[1].server, None,
        "a malformed summary is no summary"
    );
    assert_eq!(run.turns[2].server, None, "no summary sent");
}

/// `(direction, turn, type)` of every frame the run logged.
fn frame_kinds(run: &AgentRun) -> Vec<(Direction, usize, String)> {
    run.frames.with(|frames| {
        frames
            .iter()
            .map(|f| (f.direction, f.turn, f.kind.to_string()))
            .collect()
    })
}

#[test]
fn every_frame_is_logged_in_order_over_websocket_with_a_resume() {
    let scripts = turns_with_a_drop();
    let expected_events: Vec<Vec<String>> = scripts
        .iter()
        .map(|s| {
            s.iter()
                .filter_map(|e| e.as_ref().ok().map(|e| e.type_name().to_string()))
                .collect()
        })
        .collect();
    let Outcome { run, transport, .. } =
        run_with(ContinuationMode::WebSocket, scripts, 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);

    // Five requests (turn 2 twice: dropped, then resent), each followed by what came back.
    let mut expected = Vec::new();
    for (events, turn) in expected_events.iter().zip([1, 2, 2, 3, 4]) {
        expected.push((Direction::Sent, turn, "response.create".to_string()));
        expected.extend(
            events
                .iter()
                .map(|kind| (Direction::Received, turn, kind.clone())),
        );
    }
    assert_eq!(frame_kinds(&run), expected);

    // The text is what crossed the wire: the `response.create` frame, the event JSON.
    let frames = run.frames.to_vec();
    let sent: Vec<_> = frames
        .iter()
        .filter(|f| f.direction == Direction::Sent)
        .collect();
    for (frame, request) in sent.iter().zip(transport.requests()) {
        let json: serde_json::Value = serde_json::from_str(&frame.json).unwrap();
        assert_eq!(json["type"], "response.create");
        assert_eq!(json["model"], request.model.as_str());
    }
    // The resend after the drop went out without previous_response_id, on the run's clock.
    let resend: serde_json::Value = serde_json::from_str(&sent[2].json).unwrap();
    assert!(resend.get("previous_response_id").is_none(), "{resend}");
    assert!(frames.windows(2).all(|w| w[0].at_ms < w[1].at_ms));
    let completed = frames
        .iter()
        .rfind(|f| f.kind == "response.completed")
        .unwrap();
    assert!(completed.json.contains("resp_4"), "{}", completed.json);
}

#[test]
fn over_http_the_request_body_and_each_sse_event_are_logged() {
    let Outcome { run, .. } =
        run_with(ContinuationMode::HttpChained, fixing_turns(), 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let frames = run.frames.to_vec();
    let bodies: Vec<serde_json::Value> = frames
        .iter()
        .filter(|f| f.direction == Direction::Sent)
        .map(|f| serde_json::from_str(&f.json).unwrap())
        .collect();
    assert_eq!(bodies.len(), 4);
    // A request body, not a WebSocket frame: no `type`, `stream: true`.
    assert!(
        bodies
            .iter()
            .all(|b| b.get("type").is_none() && b["stream"] == true && b["store"] == true)
    );
    let first_turn: Vec<String> = frames
        .iter()
        .filter(|f| f.turn == 1)
        .map(|f| f.kind.to_string())
        .collect();
    assert_eq!(first_turn.first().unwrap(), "response.create");
    assert_eq!(first_turn[1], "response.created");
    assert_eq!(first_turn.last().unwrap(), "response.completed");
    assert!(
        first_turn
            .iter()
            .any(|k| k == "response.function_call_arguments.delta")
    );
}

#[test]
fn the_file_tree_and_the_patch_diff_are_published_after_the_tool_call() {
    let Outcome {
        run,
        sandbox,
        snapshots,
        ..
    } = run_with(ContinuationMode::WebSocket, fixing_turns(), 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);

    // The tree is there from the start: the sample project, unpatched.
    let start = &snapshots[0].files;
    assert!(matches!(&*start.files["/src/paginate.js"],
        FileBody::Text(t) if t.contains("const start = current * pageSize;")));

    // The grep changed nothing; the patch changed one file, logged with its diff.
    let changes = run.changes.to_vec();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let change = &changes[0];
    assert_eq!(
        (change.turn, change.tool.as_str(), change.path.as_str()),
        (2, "apply_patch", "/src/paginate.js")
    );
    assert_eq!(change.call_id, "call_patch");
    assert_eq!(change.kind_name(), "modified");
    let diff = change.diff.as_deref().unwrap();
    assert!(
        diff.starts_with("--- a/src/paginate.js\n+++ b/src/paginate.js\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-  const start = current * pageSize;\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+  const start = (current - 1) * pageSize;\n"),
        "{diff}"
    );

    // The published tree matches the sandbox's; unchanged files share the starting content.
    let files = &run.files;
    let fixed = sandbox.vfs().read_text("/src/paginate.js").unwrap();
    assert_eq!(*files.files["/src/paginate.js"], FileBody::Text(fixed));
    assert_eq!(files.files.len(), sandbox.vfs().files().count());
    assert!(std::sync::Arc::ptr_eq(
        &files.files["/package.json"],
        &start.files["/package.json"]
    ));
    let rows = files.rows();
    assert!(rows.iter().any(|r| r.path == "/src" && !r.is_file));
    assert!(
        rows.iter()
            .any(|r| r.path == "/src/paginate.js" && r.is_file && r.depth == 1)
    );
}

#[test]
fn a_shared_run_holds_what_the_loop_returns() {
    let mut transport = ReplayTransport::new(TransportKind::WebSocket, fixing_turns());
    let mut sandbox = Sandbox::new(sample_project());
    let config = AgentConfig::new("tether-sim", ContinuationMode::WebSocket);
    let shared = SharedRun::default();
    let reads = Cell::new(0);
    let agent = Agent {
        transport: &mut transport,
        sandbox: &mut sandbox,
        config: &config,
        clock: &|| 0.0,
        stop: &StopSignal::new(),
    };
    let run = block_on(run_agent_shared(
        agent,
        TASK,
        &shared,
        // The observer may read the shared state while the loop reports a change.
        &mut |state| {
            assert_eq!(shared.with(|s| s.status), state.status);
            reads.set(reads.get() + 1);
        },
    ));
    assert_eq!(run.status, RunStatus::Done);
    assert_eq!(shared.snapshot(), run);
    assert!(reads.get() > 10);
}

/// One long-running response (v1 beta) over three turns: a grep, then the fix as a freeform
/// patch — each pausing with `response.done` — then the answer and `response.completed`, with
/// the whole response's timing summary. Usage is the response's so far, as the server reports it.
fn long_running_turns() -> Vec<Script> {
    let request = ResponseCreate::new("m", "x");
    let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_long", 1, &request), None);
    let mut first = b.start();
    first.push(b.begin_function_call("fc_1", "call_grep", "exec_command"));
    first.push(b.arguments_delta(r#"{"cmd":"grep -n 'current' "#));
    first.push(b.arguments_delta(r#"src/paginate.js"}"#));
    first.extend(b.end_item());
    first.extend(b.pause(Usage::new(1000, 0, 20, 0)));
    let mut second = vec![b.numbered(tether_protocol::StreamEvent::InProgress {
        response: b.response().clone(),
    })];
    second.push(b.begin_tool_call(Item::CustomToolCall(CustomToolCall {
        id: Some("ctc_2".into()),
        call_id: "call_patch".into(),
        name: "apply_patch".into(),
        input: String::new(),
        status: None,
    })));
    for piece in SAMPLE_FIX_PATCH.as_bytes().chunks(40) {
        second.push(b.arguments_delta(std::str::from_utf8(piece).unwrap()));
    }
    second.extend(b.end_item());
    second.extend(b.pause(Usage::new(2100, 900, 60, 0)));
    let mut third = b.begin_message("msg_3");
    third.push(b.text_delta("Fixed: page N starts "));
    third.push(b.text_delta("at (N - 1) * size."));
    third.extend(b.end_item());
    third.extend(b.complete(Usage::new(3300, 1900, 75, 0), 2));
    let summary = serde_json::json!({"path": "ws_hit", "stages": {}, "api_us": 3000,
        "engine": {"queue_us": 0, "prefill_us": 4000, "decode_us": 6000,
                   "service_total_us": 10_000, "service_ttft_us": 0,
                   "iapi_ttft_us": 0, "iapi_total_us": 10_000}});
    vec![
        script(first),
        script(second),
        with_summary(script(third), summary),
    ]
}

#[test]
fn a_long_running_run_is_one_response_resumed_by_appends() {
    let Outcome { run, sandbox, .. } = run_with(
        ContinuationMode::LongRunning,
        long_running_turns(),
        10,
        |_, _| {},
    );
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(
        run.answer(),
        Some("Fixed: page N starts at (N - 1) * size.")
    );
    let fixed = sandbox.vfs().read_text("/src/paginate.js").unwrap();
    assert!(fixed.contains("const start = (current - 1) * pageSize;"));

    // One create, then each turn's tool outputs as an append — nothing else.
    let sent: Vec<(String, serde_json::Value)> = run.frames.with(|frames| {
        frames
            .iter()
            .filter(|f| f.direction == Direction::Sent)
            .map(|f| (f.kind.to_string(), serde_json::from_str(&f.json).unwrap()))
            .collect()
    });
    let kinds: Vec<&str> = sent.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["response.create", "response.append", "response.append"]
    );
    assert_eq!(sent[0].1["type"], "response.create");
    assert_eq!(sent[0].1["store"], false);
    let append = &sent[1].1;
    assert_eq!(append["type"], "response.append");
    let keys: Vec<&String> = append.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["input", "type"], "an append carries no settings");
    assert_eq!(append["input"][0]["type"], "function_call_output");
    assert_eq!(append["input"][0]["call_id"], "call_grep");
    assert_eq!(sent[2].1["input"][0]["type"], "custom_tool_call_output");
    assert_eq!(sent[2].1["input"][0]["call_id"], "call_patch");
    assert_eq!(
        sent[2].1["input"].as_array().unwrap().len(),
        1,
        "only the new output"
    );

    // The timeline: three turns of the one response, the first two paused.
    let how: Vec<(SentAs, bool)> = run.turns.iter().map(|t| (t.sent_as, t.paused)).collect();
    assert_eq!(
        how,
        [
            (SentAs::Create, true),
            (SentAs::Append, true),
            (SentAs::Append, false)
        ]
    );
    assert!(
        run.turns
            .iter()
            .all(|t| t.response_id.as_deref() == Some("resp_long"))
    );
    // Each turn's own tokens, from the response's running usage.
    let tokens: Vec<(u64, u64, u64)> = run
        .turns
        .iter()
        .map(|t| (t.input_tokens, t.cached_tokens, t.output_tokens))
        .collect();
    assert_eq!(tokens, [(1000, 0, 20), (1100, 900, 40), (1200, 1000, 15)]);
    // Every call ran once: the snapshot at each pause repeats earlier calls, which do not.
    assert_eq!(run.tool_call_count(), 2);
    assert!(run.tool_calls().all(|c| c.success == Some(true)));

    // The server's stages come once, at the end, and cover the whole response.
    assert!(run.turns[..2].iter().all(|t| t.server.is_none()));
    let breakdown = Breakdown::of(&run).unwrap();
    let server = breakdown
        .server
        .expect("the paused turns do not hide the server's part");
    assert_eq!(server.api_ms, 3.0);
    assert!(breakdown.network_ms.is_some());
}

#[test]
fn a_dropped_long_running_response_is_started_again_with_the_full_conversation() {
    let mut turns = long_running_turns();
    // The connection drops while the first append streams; the paused response is gone.
    turns[1].truncate(2);
    turns[1].push(Err(TransportError::Closed("reset".into())));
    let request = ResponseCreate::new("m", "x");
    let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_new", 1, &request), None);
    let mut again = b.start();
    again.extend(b.begin_message("msg"));
    again.push(b.text_delta("Done."));
    again.extend(b.end_item());
    again.extend(b.complete(Usage::new(10, 0, 2, 0), 2));
    turns.insert(2, script(again));
    let Outcome { run, transport, .. } =
        run_with(ContinuationMode::LongRunning, turns, 10, |_, _| {});
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(transport.reconnects(), 1);
    assert_eq!(run.turns[1].resumed, Some(Resume::FullContext));
    assert_eq!(
        run.turns[1].sent_as,
        SentAs::Create,
        "resent as a new response"
    );
    let resent = &transport.requests()[2];
    assert_eq!(resent.previous_response_id, None);
    assert_eq!(items(resent).len(), 3, "task, call and its output");
}

#[test]
fn a_steered_response_is_followed_by_its_automatic_successor() {
    let request = ResponseCreate::new("m", "x");
    let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_1", 1, &request), None);
    let mut events = b.start();
    events.extend(b.begin_message("msg_1"));
    events.push(b.text_delta("Looking at the"));
    events.push(b.numbered(tether_protocol::StreamEvent::SteerAccepted {
        steer: tether_protocol::Steer {
            id: "steer_1".into(),
            previous_response_id: "resp_1".into(),
        },
    }));
    events.extend(b.incomplete("steered", Usage::new(100, 0, 3, 0)));
    // The successor starts on its own: no request from the client.
    let mut s = ResponseStreamBuilder::new(Response::in_progress("resp_2", 1, &request), None);
    events.extend(s.start());
    events.extend(s.begin_message("msg_2"));
    events.push(s.text_delta("A cat, then."));
    events.extend(s.end_item());
    events.extend(s.complete(Usage::new(120, 100, 4, 0), 2));
    let Outcome { run, transport, .. } = run_with(
        ContinuationMode::WebSocket,
        vec![script(events)],
        10,
        |_, _| {},
    );
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    assert_eq!(
        transport.requests().len(),
        1,
        "the successor was not asked for"
    );
    assert_eq!(run.turns.len(), 2);
    assert!(run.turns[0].steered && run.turns[0].completed_at.is_some());
    assert_eq!(run.turns[0].response_id.as_deref(), Some("resp_1"));
    assert_eq!(run.turns[1].sent_as, SentAs::Successor);
    assert_eq!(run.turns[1].previous_response_id.as_deref(), Some("resp_1"));
    assert_eq!(run.turns[1].response_id.as_deref(), Some("resp_2"));
    assert_eq!(run.turns[1].output_tokens, 4);
    assert_eq!(run.answer(), Some("A cat, then."));
}
