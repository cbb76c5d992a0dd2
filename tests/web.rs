//! Browser tests of the playground's event handling, run in headless Chromium by
//! `cargo test --target wasm32-unknown-unknown` (runner: wasm-bindgen-test-runner) or
//! `wasm-pack test --headless --chrome`.
#![cfg(target_arch = "wasm32")]

use leptos::mount::mount_to;
use leptos::prelude::*;
use leptos::task::tick;
use tether_playground::agent::{RunStatus, Turn};
use tether_playground::components::AnswerView;
use tether_playground::transport::ws::decode_incoming;
use tether_protocol::{Response, ResponseCreate, ResponseStreamBuilder, ServerEvent, Usage};
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
