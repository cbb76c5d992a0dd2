//! Browser tests of the playground's event handling, run in headless Chromium by
//! `cargo test --target wasm32-unknown-unknown` (runner: wasm-bindgen-test-runner) or
//! `wasm-pack test --headless --chrome`.
#![cfg(target_arch = "wasm32")]

use leptos::mount::mount_to;
use leptos::prelude::*;
use leptos::task::tick;
use tether_playground::agent::{
    AgentConfig, AgentRun, ContinuationMode, RunStatus, StopSignal, Turn, run_agent,
};
use tether_playground::components::{AgentView, AnswerView, Conversation, Timeline};
use tether_playground::transport::TransportKind;
use tether_playground::transport::replay::ReplayTransport;
use tether_playground::transport::ws::decode_incoming;
use tether_protocol::{Response, ResponseCreate, ResponseStreamBuilder, ServerEvent, Usage};
use tether_sandbox::{Sandbox, sample_project};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Mounts an `AnswerView` over a fresh turn signal in its own element.
fn mount_answer() -> (web_sys::HtmlElement, RwSignal<Turn>, impl Drop) {
    let document = document();
    let wrapper = document.create_element("section").unwrap();
    document.body().unwrap().append_child(&wrapper).unwrap();
    let turn = RwSignal::new(Turn::default());
    let handle = mount_to(
        wrapper.clone().unchecked_into(),
        move || view! { <AnswerView turn=turn /> },
    );
    (wrapper.unchecked_into(), turn, handle)
}

fn text_of(root: &web_sys::HtmlElement, test_id: &str) -> String {
    root.query_selector(&format!("[data-testid={test_id}]"))
        .unwrap()
        .unwrap_or_else(|| panic!("no element {test_id}"))
        .text_content()
        .unwrap_or_default()
}

/// The frames of a streamed answer, as JSON text the way they arrive on the socket.
fn answer_frames(pieces: &[&str]) -> Vec<String> {
    let request = ResponseCreate::new("m", "hi");
    let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_w", 1, &request), None);
    let mut events: Vec<ServerEvent> = b.start();
    events.extend(b.begin_message("msg_w"));
    for piece in pieces {
        events.push(b.text_delta(piece));
    }
    events.extend(b.complete(Usage::new(2, 0, pieces.len() as u64, 0), 2));
    events.iter().map(ServerEvent::to_json).collect()
}

#[wasm_bindgen_test]
async fn deltas_render_as_they_arrive_and_stats_appear_on_completion() {
    let (root, turn, _handle) = mount_answer();
    assert_eq!(text_of(&root, "run-status"), "idle");

    turn.set(Turn::start(0.0));
    let frames = answer_frames(&["Stream", "ing", " works", "."]);
    // created, in_progress, output_item.added, content_part.added, then the first two deltas.
    for (i, frame) in frames.iter().take(6).enumerate() {
        turn.update(|t| t.on_incoming(decode_incoming(frame), 10.0 + i as f64));
    }
    tick().await;
    assert_eq!(text_of(&root, "run-status"), "running");
    assert_eq!(text_of(&root, "answer"), "Streaming");
    assert_eq!(text_of(&root, "ttft"), "14 ms");
    assert_eq!(text_of(&root, "total"), "–", "no total before completion");

    for (i, frame) in frames.iter().enumerate().skip(6) {
        turn.update(|t| t.on_incoming(decode_incoming(frame), 10.0 + i as f64));
    }
    tick().await;
    assert_eq!(text_of(&root, "run-status"), "done");
    assert_eq!(text_of(&root, "answer"), "Streaming works.");
    // The first delta arrived at 14 ms after a send at 0; four deltas 1 ms apart: 3 intervals.
    assert_eq!(text_of(&root, "ttft"), "14 ms");
    assert_eq!(text_of(&root, "tokens-per-second"), "1000 tokens/s");
    assert_eq!(text_of(&root, "tokens"), "2 / 4");
    assert_eq!(turn.get_untracked().status, RunStatus::Done);
}

#[wasm_bindgen_test]
async fn an_error_frame_shows_the_failure() {
    let (root, turn, _handle) = mount_answer();
    turn.set(Turn::start(0.0));
    let frame = r#"{"type":"error","status":400,"error":{"type":"invalid_request_error","code":null,"message":"bad input","param":"input"}}"#;
    turn.update(|t| t.on_incoming(decode_incoming(frame), 1.0));
    tick().await;
    assert_eq!(text_of(&root, "run-status"), "failed");
    assert_eq!(text_of(&root, "error"), "server error (400): bad input");
}

/// A scripted two-turn run: a `shell` call, then an answer.
fn agent_scripts() -> Vec<tether_playground::transport::replay::Script> {
    let request = ResponseCreate::new("m", "x");
    let mut first = ResponseStreamBuilder::new(Response::in_progress("resp_a", 1, &request), None);
    let mut turn1 = first.start();
    turn1.push(first.begin_function_call("fc_1", "call_1", "shell"));
    turn1.push(first.arguments_delta(r#"{"command":["bash","-lc","#));
    turn1.push(first.arguments_delta(r#""cat package.json | head -3"]}"#));
    turn1.extend(first.end_item());
    turn1.extend(first.complete(Usage::new(800, 0, 20, 0), 2));
    let mut second = ResponseStreamBuilder::new(Response::in_progress("resp_b", 1, &request), None);
    let mut turn2 = second.start();
    turn2.extend(second.begin_message("msg_b"));
    turn2.push(second.text_delta("It is "));
    turn2.push(second.text_delta("the sample project."));
    turn2.extend(second.complete(Usage::new(850, 800, 6, 0), 3));
    vec![
        turn1.into_iter().map(Ok).collect(),
        turn2.into_iter().map(Ok).collect(),
    ]
}

#[wasm_bindgen_test]
async fn an_agent_run_in_the_browser_renders_its_conversation_and_timeline() {
    let document = document();
    let wrapper = document.create_element("section").unwrap();
    document.body().unwrap().append_child(&wrapper).unwrap();
    let run = RwSignal::new(AgentRun::default());
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        view! {
            <Conversation run=run />
            <Timeline run=run />
        }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();

    // The loop runs here, in wasm, with the real sandbox; only the server is replayed.
    let mut transport = ReplayTransport::new(TransportKind::WebSocket, agent_scripts());
    let mut sandbox = Sandbox::new(sample_project());
    let config = AgentConfig::new("tether-sim", ContinuationMode::WebSocket);
    let ticks = std::cell::Cell::new(0.0);
    let clock = || {
        ticks.set(ticks.get() + 2.0);
        ticks.get()
    };
    let finished = run_agent(
        &mut transport,
        &mut sandbox,
        &config,
        "What is this project?",
        &clock,
        &StopSignal::new(),
        &mut |state| run.set(state.clone()),
    )
    .await;
    tick().await;
    assert_eq!(finished.status, RunStatus::Done, "{:?}", finished.error);

    assert_eq!(text_of(&root, "tool-name"), "shell");
    assert_eq!(
        text_of(&root, "tool-arguments"),
        r#"{"command":["bash","-lc","cat package.json | head -3"]}"#
    );
    let output = text_of(&root, "tool-output");
    assert!(output.starts_with("Exit code: 0\nOutput:\n{"), "{output}");
    assert!(output.contains("\"name\""), "{output}");
    assert_eq!(
        text_of(&root, "assistant-text"),
        "It is the sample project."
    );

    let body = root
        .query_selector("[data-testid=timeline] tbody")
        .unwrap()
        .unwrap();
    assert_eq!(body.child_element_count(), 2);
    let second = root
        .query_selector("[data-testid=timeline-row]:nth-child(2)")
        .unwrap()
        .unwrap()
        .text_content()
        .unwrap();
    assert!(second.contains("1 new item(s) after resp_a"), "{second}");
    assert!(second.contains("850 (800 cached) / 6"), "{second}");
    assert_eq!(transport.requests().len(), 2);
}

#[wasm_bindgen_test]
async fn the_agent_view_starts_idle_with_stop_disabled() {
    let document = document();
    let wrapper = document.create_element("section").unwrap();
    document.body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), AgentView);
    tick().await;
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    assert_eq!(text_of(&root, "run-status"), "idle");
    assert_eq!(text_of(&root, "turn-count"), "0");
    let button = |id: &str| -> web_sys::HtmlButtonElement {
        root.query_selector(&format!("[data-testid={id}]"))
            .unwrap()
            .unwrap()
            .unchecked_into()
    };
    assert!(button("stop").disabled());
    assert!(!button("run").disabled());
    let select = root
        .query_selector("[data-testid=transport]")
        .unwrap()
        .unwrap();
    assert_eq!(select.child_element_count(), 3);
}

#[wasm_bindgen_test]
async fn node_runs_the_sample_projects_tests_in_a_web_worker() {
    use tether_playground::js::WorkerRuntime;
    use tether_sandbox::SAMPLE_FIX_PATCH;

    let mut sandbox = Sandbox::new(sample_project()).with_js_runtime(Box::new(WorkerRuntime));
    let before = sandbox.run_shell("node test/run.js").await;
    assert_eq!(before.exit_code, 1, "{before:?}");
    assert!(before.stdout.contains("3 passing, 3 failing"), "{before:?}");
    assert!(before.stdout.contains("  FAIL "), "{before:?}");

    let patched = sandbox
        .call_custom_tool("apply_patch", SAMPLE_FIX_PATCH)
        .await;
    assert!(patched.success, "{patched:?}");
    let after = sandbox.run_shell("node test/run.js").await;
    assert_eq!(after.exit_code, 0, "{after:?}");
    assert!(after.stdout.contains("6 passing, 0 failing"), "{after:?}");

    let thrown = sandbox
        .run_shell("node -e \"console.log(require('./package.json').name); process.exit(3)\"")
        .await;
    assert_eq!(thrown.exit_code, 3, "{thrown:?}");
    assert!(!thrown.stdout.trim().is_empty());
    let missing = sandbox.run_shell("node -e \"require('fs')\"").await;
    assert_eq!(missing.exit_code, 1);
    assert!(
        missing.stderr.contains("Cannot find module 'fs'"),
        "{missing:?}"
    );
}

#[wasm_bindgen_test]
async fn a_runaway_script_is_terminated_at_its_time_budget() {
    use tether_playground::js::WorkerRuntime;
    use tether_sandbox::Limits;

    let limits = Limits {
        wall_clock_ms: 300,
        ..Limits::default()
    };
    let mut sandbox = Sandbox::new(sample_project())
        .with_limits(limits)
        .with_js_runtime(Box::new(WorkerRuntime));
    let looped = sandbox.run_shell("node -e \"while (true) {}\"").await;
    assert_eq!(looped.exit_code, 124, "{looped:?}");
}
