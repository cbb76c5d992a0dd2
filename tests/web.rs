//! Browser tests of the playground's event handling, run in headless Chromium by
//! `cargo test --target wasm32-unknown-unknown` (runner: wasm-bindgen-test-runner) or
//! `wasm-pack test --headless --chrome`.
#![cfg(target_arch = "wasm32")]

use leptos::mount::mount_to;
use leptos::prelude::*;
use leptos::task::tick;
use tether_playground::agent::WARM_UP;
use tether_playground::agent::{
    AgentConfig, AgentRun, ContinuationMode, RunStatus, StopSignal, Turn, run_agent,
};
use tether_playground::components::{
    AgentView, AnswerView, CompareView, ConditionsPanel, Conversation, FilesView, Inspector,
    RunView, Timeline, TurnChart,
};
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
    // A screen reader hears that it streams, not each fragment.
    assert_eq!(text_of(&root, "announce"), "Streaming the answer.");

    for (i, frame) in frames.iter().enumerate().skip(6) {
        turn.update(|t| t.on_incoming(decode_incoming(frame), 10.0 + i as f64));
    }
    tick().await;
    assert_eq!(text_of(&root, "run-status"), "done");
    assert_eq!(text_of(&root, "answer"), "Streaming works.");
    // The first delta arrived at 14 ms after a send at 0; four deltas 1 ms apart: 3 intervals.
    assert_eq!(text_of(&root, "ttft"), "14 ms");
    assert_eq!(text_of(&root, "tokens-per-second"), "1,000 tokens/s");
    assert_eq!(text_of(&root, "tokens"), "2 / 4");
    assert_eq!(turn.get_untracked().status, RunStatus::Done);
    assert_eq!(text_of(&root, "announce"), "Answer: Streaming works.");
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
    let run = RunView::new(AgentRun::default());
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

    // One <tbody> per turn: the measured row, then the server's stage timings.
    let turn_row = |n: usize| {
        root.query_selector(&format!(
            "[data-testid=timeline] tbody:nth-of-type({n}) [data-testid=timeline-row]"
        ))
        .unwrap()
    };
    assert!(turn_row(2).is_some() && turn_row(3).is_none(), "two turns");
    let second = turn_row(2).unwrap().text_content().unwrap();
    assert!(second.contains("1 new item(s) after resp_a"), "{second}");
    assert!(second.contains("850 (800 cached) / 6"), "{second}");
    // The replayed server sent no stage timings.
    assert_eq!(
        text_of(&root, "server-timing"),
        "server stages: not reported"
    );
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
    assert_eq!(
        select.child_element_count(),
        5,
        "ws, ws-append (long-running), two HTTP modes, compare"
    );
    // Run and Sweep say how long they take before they start: one WebSocket run of the long
    // rollout (the page's default), a sweep of four model speeds three pairs each.
    let estimate = |id: &str| {
        let span = root
            .query_selector(&format!("[data-testid={id}]"))
            .unwrap()
            .unwrap_or_else(|| panic!("no {id}"));
        let ms: f64 = span.get_attribute("data-ms").unwrap().parse().unwrap();
        (span.text_content().unwrap(), ms)
    };
    let (run, run_ms) = estimate("run-estimate");
    assert!(run.starts_with(" · about ") && run.ends_with(" s"), "{run}");
    let (sweep, sweep_ms) = estimate("sweep-estimate");
    assert!(sweep.starts_with(" · about "), "{sweep}");
    assert!(sweep_ms > 10.0 * run_ms, "{run_ms} {sweep_ms}");
}

#[wasm_bindgen_test]
async fn the_overview_says_what_is_simulated_and_how_long_its_comparison_takes() {
    use tether_playground::components::Overview;
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), Overview);
    tick().await;
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    let simulated = text_of(&root, "intro-simulated");
    assert!(
        simulated.starts_with("Simulated alike for both transports: the model's pace")
            && simulated.contains("Measured here: this server's work")
            && simulated.contains("Modelled, with hosted costs only"),
        "{simulated}"
    );
    // The line comes before the button.
    let order = root
        .query_selector("[data-testid=intro-simulated] ~ [data-testid=intro-compare]")
        .unwrap();
    assert!(order.is_some(), "the simulated line precedes the button");
    // The long rollout on spark over a home uplink with hosted costs, three repetitions.
    let estimate = text_of(&root, "intro-estimate");
    assert!(estimate.starts_with(" · about 2 min"), "{estimate}");
    assert!(text_of(&root, "intro-what").contains("It takes about 2 min"));
}

#[wasm_bindgen_test]
async fn the_turn_chart_draws_what_was_modelled_apart() {
    use tether_playground::agent::{ServerTimings, TurnRecord};
    let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
    turn.completed_at = Some(100.0);
    turn.server = ServerTimings::parse(&serde_json::json!({"path": "http", "stages": {},
        "modelled": {"classify_us": 30_000, "engine_hop_us": 1_000},
        "api_us": 35_000,
        "engine": {"queue_us": 0, "prefill_us": 20_000, "decode_us": 30_000,
                   "service_total_us": 50_000, "service_ttft_us": 0, "iapi_ttft_us": 0,
                   "iapi_total_us": 51_000}}));
    let run = RunView::new(AgentRun {
        status: RunStatus::Done,
        turns: vec![turn],
        ..AgentRun::default()
    });
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        view! { <TurnChart legs=vec![("This run".to_string(), run)] caption="one" /> }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    let modelled = root
        .query_selector("rect.seg-modelled")
        .unwrap()
        .expect("the modelled waits have a bar of their own");
    assert!(
        modelled.text_content().unwrap().contains("31.0 ms"),
        "{:?}",
        modelled.text_content()
    );
    let api = root.query_selector("rect.seg-api").unwrap().unwrap();
    assert!(
        api.text_content().unwrap().contains("5.0 ms"),
        "the measured API work alone"
    );
    assert!(text_of(&root, "chart-legend").contains("modelled, not measured"));
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

/// Runs `scripts` through the real loop and sandbox (server replayed); the final state.
async fn replayed_run(scripts: Vec<tether_playground::transport::replay::Script>) -> AgentRun {
    let mut transport = ReplayTransport::new(TransportKind::WebSocket, scripts);
    let mut sandbox = Sandbox::new(sample_project());
    let config = AgentConfig::new("tether-sim", ContinuationMode::WebSocket);
    let ticks = std::cell::Cell::new(0.0);
    let clock = || {
        ticks.set(ticks.get() + 1.0);
        ticks.get()
    };
    let run = run_agent(
        &mut transport,
        &mut sandbox,
        &config,
        "Fix it.",
        &clock,
        &StopSignal::new(),
        &mut |_| {},
    )
    .await;
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    run
}

/// Mounts `view` over a view of `run`.
fn mount_run<V: IntoView + 'static>(
    run: AgentRun,
    view: impl FnOnce(RunView) -> V + 'static,
) -> (web_sys::HtmlElement, impl Drop) {
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let signal = RunView::new(run);
    let handle = mount_to(wrapper.clone().unchecked_into(), move || view(signal));
    (wrapper.unchecked_into(), handle)
}

fn count(root: &web_sys::HtmlElement, selector: &str) -> u32 {
    // `:nth-of-type` probing: NodeList is not among the enabled web-sys types.
    let mut n = 0;
    while root
        .query_selector(&format!("{selector}:nth-of-type({})", n + 1))
        .unwrap()
        .is_some()
    {
        n += 1;
    }
    n
}

fn set_input(root: &web_sys::HtmlElement, test_id: &str, value: &str, event: &str) {
    let element = root
        .query_selector(&format!("[data-testid={test_id}]"))
        .unwrap()
        .unwrap();
    js_sys::Reflect::set(&element, &"value".into(), &value.into()).unwrap();
    element
        .dispatch_event(&web_sys::Event::new(event).unwrap())
        .unwrap();
}

#[wasm_bindgen_test]
async fn the_inspector_lists_every_frame_and_filters_by_text_and_direction() {
    let run = replayed_run(agent_scripts()).await;
    let total = run.frames.len();
    let (root, _handle) = mount_run(run, |run| view! { <Inspector run=run /> });
    tick().await;
    let rows = "[data-testid=inspector] li[data-testid=inspector-row]";
    assert_eq!(count(&root, rows) as usize, total);
    assert_eq!(
        text_of(&root, "inspector-count"),
        format!("{total} of {total} frames.")
    );
    let first = root
        .query_selector(rows)
        .unwrap()
        .unwrap()
        .text_content()
        .unwrap();
    assert!(
        first.contains("sent") && first.contains("response.create"),
        "{first}"
    );

    // Text: the type or the JSON. `cat package.json` is only in the arguments deltas and the
    // second request (which carries the call's output).
    set_input(&root, "inspector-filter", "PACKAGE.JSON", "input");
    tick().await;
    let matching = count(&root, rows);
    assert!(
        matching >= 2 && (matching as usize) < total,
        "{matching} of {total}"
    );
    assert_eq!(
        text_of(&root, "inspector-count"),
        format!("{matching} of {total} frames.")
    );

    // Without the deltas, the requests and the turns' other events are all there.
    set_input(&root, "inspector-filter", "", "input");
    let hide: web_sys::HtmlElement = root
        .query_selector("[data-testid=inspector-hide-deltas]")
        .unwrap()
        .unwrap()
        .unchecked_into();
    hide.click();
    tick().await;
    let deltas = run_deltas(&root, rows);
    assert_eq!(deltas, 0, "no delta is listed");
    assert!(
        count(&root, rows) >= 4,
        "the requests and the ends of the turns"
    );
    hide.click();
    tick().await;
    assert_eq!(count(&root, rows) as usize, total);

    // Direction: only what was sent, two requests.
    set_input(&root, "inspector-direction", "sent", "change");
    tick().await;
    assert_eq!(count(&root, rows), 2);

    // Expanding a row shows its JSON pretty-printed.
    let button: web_sys::HtmlElement = root
        .query_selector(&format!("{rows} button[aria-expanded]"))
        .unwrap()
        .unwrap()
        .unchecked_into();
    button.click();
    tick().await;
    assert_eq!(
        button.get_attribute("aria-expanded").as_deref(),
        Some("true")
    );
    let json = root.query_selector(".frame-json").unwrap().unwrap();
    let json = json.text_content().unwrap();
    assert!(json.starts_with("{\n  \""), "{json}");
    assert!(json.contains("\"type\": \"response.create\""), "{json}");
}

/// How many of the listed rows are deltas.
fn run_deltas(root: &web_sys::HtmlElement, rows: &str) -> u32 {
    let mut deltas = 0;
    for n in 1..=count(root, rows) {
        let row = root
            .query_selector(&format!("{rows}:nth-of-type({n})"))
            .unwrap()
            .unwrap()
            .text_content()
            .unwrap();
        if row.contains(".delta") {
            deltas += 1;
        }
    }
    deltas
}

/// One turn applying the sample fix, then an answer.
fn patch_scripts() -> Vec<tether_playground::transport::replay::Script> {
    use tether_protocol::items::CustomToolCall;
    let request = ResponseCreate::new("m", "x");
    let mut first = ResponseStreamBuilder::new(Response::in_progress("resp_p", 1, &request), None);
    let mut turn1 = first.start();
    turn1.push(
        first.begin_tool_call(tether_protocol::Item::CustomToolCall(CustomToolCall {
            id: Some("ctc_1".into()),
            call_id: "call_patch".into(),
            name: "apply_patch".into(),
            input: String::new(),
            status: None,
        })),
    );
    turn1.push(first.arguments_delta(tether_sandbox::SAMPLE_FIX_PATCH));
    turn1.extend(first.end_item());
    turn1.extend(first.complete(Usage::new(800, 0, 60, 0), 2));
    let mut second = ResponseStreamBuilder::new(Response::in_progress("resp_q", 1, &request), None);
    let mut turn2 = second.start();
    turn2.extend(second.begin_message("msg_q"));
    turn2.push(second.text_delta("Fixed."));
    turn2.extend(second.complete(Usage::new(900, 800, 2, 0), 3));
    vec![
        turn1.into_iter().map(Ok).collect(),
        turn2.into_iter().map(Ok).collect(),
    ]
}

#[wasm_bindgen_test]
async fn the_files_view_shows_the_tree_a_file_and_the_diff_of_a_patch() {
    let run = replayed_run(patch_scripts()).await;
    let (root, _handle) = mount_run(run, |run| view! { <FilesView run=run /> });
    tick().await;
    let tree = text_of(&root, "file-tree");
    for name in ["src/", "paginate.js", "package.json", "test/", "run.js"] {
        assert!(tree.contains(name), "{name} in {tree}");
    }
    assert!(text_of(&root, "file-view").contains("Select a file"));

    // The patched file is marked; selecting it shows its content after the patch.
    let button: web_sys::HtmlElement = root
        .query_selector("[data-testid=file-tree] button.changed")
        .unwrap()
        .expect("the changed file is marked")
        .unchecked_into();
    assert_eq!(button.text_content().unwrap(), "paginate.js");
    button.click();
    tick().await;
    assert_eq!(
        button.get_attribute("aria-current").as_deref(),
        Some("true")
    );
    let view = text_of(&root, "file-view");
    assert!(view.starts_with("/src/paginate.js"), "{view}");
    assert!(
        view.contains("const start = (current - 1) * pageSize;"),
        "{view}"
    );

    let diff = text_of(&root, "diff");
    assert!(
        diff.starts_with("--- a/src/paginate.js\n+++ b/src/paginate.js\n@@"),
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
    let added = root
        .query_selector("[data-testid=diff] .diff-add")
        .unwrap()
        .unwrap();
    assert!(added.text_content().unwrap().starts_with('+'));
    assert!(text_of(&root, "file-change").contains("modified"));
}

#[wasm_bindgen_test]
fn settings_survive_in_local_storage_until_cleared() {
    use tether_playground::settings::{Settings, TransportChoice};
    use tether_playground::storage::{self, Restored};
    storage::clear();
    assert_eq!(Restored::load().settings, Settings::default());
    let chosen = Settings {
        transport: TransportChoice::Compare,
        profile: "spark".into(),
        ..Settings::default()
    };
    storage::save(storage::SETTINGS_KEY, &chosen.to_json()).unwrap();
    let restored = Restored::load();
    assert_eq!(restored.settings, chosen);
    assert!(restored.notices.is_empty(), "{:?}", restored.notices);
    // A corrupt value is reported and replaced by the defaults.
    storage::save(storage::SETTINGS_KEY, "{\"version\":1,\"max_turns\":[]}").unwrap();
    let restored = Restored::load();
    assert_eq!(restored.settings, Settings::default());
    assert_eq!(restored.notices.len(), 1, "{:?}", restored.notices);
    storage::clear();
    assert_eq!(storage::load(storage::SETTINGS_KEY), None);
}

#[wasm_bindgen_test]
async fn a_call_cut_off_by_stop_shows_stopped_and_is_not_counted() {
    use tether_playground::agent::{CallKind, Entry, ToolCallEntry};
    let call = |id: &str, output: Option<&str>, stopped: bool| {
        Entry::ToolCall(ToolCallEntry {
            call_id: id.into(),
            name: "shell".into(),
            kind: CallKind::Function,
            arguments: "{}".into(),
            output: output.map(String::from),
            success: output.map(|_| true),
            changes: Vec::new(),
            tool_ms: output.map(|_| 1.0),
            stopped,
        })
    };
    let run = AgentRun {
        status: RunStatus::Stopped,
        entries: vec![
            call("call_1", Some("ok"), false),
            call("call_2", None, true),
        ],
        ..AgentRun::default()
    };
    assert_eq!(run.tool_call_count(), 1);
    let (root, _handle) = mount_run(run, |run| view! { <Conversation run=run /> });
    tick().await;
    let states: Vec<String> = ["1", "2"]
        .iter()
        .map(|n| {
            root.query_selector(&format!("li[data-testid=tool-call]:nth-of-type({n})"))
                .unwrap()
                .unwrap()
                .get_attribute("data-state")
                .unwrap()
        })
        .collect();
    assert_eq!(states, ["ok", "stopped"]);
    // The conversation scrolls in its own box, which the keyboard can reach.
    let scroller = root.query_selector(".conversation-box").unwrap().unwrap();
    assert_eq!(scroller.get_attribute("tabindex").as_deref(), Some("0"));
}

#[wasm_bindgen_test]
async fn a_turn_stopped_before_it_completed_says_its_server_stages_will_not_come() {
    use tether_playground::agent::TurnRecord;
    let mut cut = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
    cut.first_event_at = Some(4.0);
    let run = |status| AgentRun {
        status,
        turns: vec![cut.clone()],
        ..AgentRun::default()
    };
    let shown = RunView::new(run(RunStatus::Running));
    let (root, _handle) = mount_run(
        AgentRun::default(),
        move |_| view! { <Timeline run=shown /> },
    );
    tick().await;
    assert_eq!(
        text_of(&root, "server-timing"),
        "server stages: when the response completes"
    );
    shown.set(run(RunStatus::Stopped));
    tick().await;
    assert_eq!(
        text_of(&root, "server-timing"),
        "server stages: none, the turn did not complete"
    );
}

#[wasm_bindgen_test]
async fn a_comparison_shows_every_leg_and_colours_its_verdict() {
    use tether_playground::agent::{Comparison, ContinuationMode, LegSummary, TurnRecord};
    let leg = |mode, repetition, ms: f64| {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(ms);
        let run = AgentRun {
            status: RunStatus::Done,
            turns: vec![turn],
            ..AgentRun::default()
        };
        LegSummary::of(mode, repetition, &run)
    };
    let (ws, http) = (ContinuationMode::WebSocket, ContinuationMode::HttpStateless);
    let mut done = Comparison::new(3);
    // The warm-up, slower than any repetition and not counted.
    done.update(leg(ws, WARM_UP, 900.0));
    done.update(leg(http, WARM_UP, 900.0));
    done.update(leg(ws, 1, 100.0));
    done.update(leg(http, 1, 90.0));
    done.update(leg(http, 2, 88.0));
    let comparison = RwSignal::new(done.clone());
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        let (ws, http) = (
            RunView::new(AgentRun::default()),
            RunView::new(AgentRun::default()),
        );
        view! { <CompareView comparison=comparison ws=ws http=http /> }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    // One leg to go: a first result from the repetition with both legs, within noise.
    assert_eq!(text_of(&root, "speedup"), "0.90×");
    assert!(
        text_of(&root, "speedup-text").starts_with(
            "So far (1 of 3 repetitions): Within noise: 0.90× (1 repetition: no spread to judge by)"
        ),
        "{}",
        text_of(&root, "speedup-text")
    );
    let class = |root: &web_sys::HtmlElement| {
        root.query_selector("[data-testid=speedup]")
            .unwrap()
            .unwrap()
            .class_name()
    };
    assert!(class(&root).contains("verdict-noise"), "{}", class(&root));
    // Beside the number, what it is not: a final result, one that separates the legs.
    assert_eq!(text_of(&root, "speedup-qualifier"), "so far, within noise");
    // The warm-up's row first, not a result, then the three repetitions'.
    assert_eq!(count(&root, ".compare-repetitions tbody tr"), 4);
    let warm_up = text_of(&root, "compare-warm-up");
    assert!(warm_up.starts_with("warm-up (not counted)"), "{warm_up}");
    assert!(
        warm_up.ends_with("not a result (instant, local costs)") && !warm_up.contains("ms"),
        "{warm_up}"
    );

    done.update(leg(ws, 2, 101.0));
    // Two repetitions apart are too few to judge by (legs alike are one time in three).
    comparison.set(done.clone());
    tick().await;
    assert!(class(&root).contains("verdict-noise"), "{}", class(&root));
    assert!(
        text_of(&root, "speedup-text").contains("too few to judge by"),
        "{}",
        text_of(&root, "speedup-text")
    );
    done.update(leg(ws, 3, 102.0));
    done.update(leg(http, 3, 89.0));
    comparison.set(done);
    tick().await;
    let speedup = root
        .query_selector("[data-testid=speedup]")
        .unwrap()
        .unwrap();
    assert_eq!(speedup.text_content().unwrap(), "0.88×");
    assert_eq!(
        text_of(&root, "speedup-qualifier"),
        "",
        "a final verdict stands alone"
    );
    assert!(
        speedup.class_name().contains("verdict-slower"),
        "a slowdown is not green: {}",
        speedup.class_name()
    );
    // Every WebSocket run (100–102 ms) slower than every HTTP run (88–90 ms).
    assert!(text_of(&root, "speedup-text").starts_with("WebSocket mode was slower"));
    assert!(text_of(&root, "compare-end-to-end").contains("100 ms"));
    assert!(
        !text_of(&root, "compare-end-to-end").contains("900 ms"),
        "the warm-up is not counted"
    );
    // Each row says what it is, in the open.
    assert!(text_of(&root, "compare-network").contains("the browser handing each frame"));
}

#[wasm_bindgen_test]
async fn a_long_running_leg_gets_its_own_columns_and_speedup() {
    use tether_playground::agent::{Comparison, LegSummary, TurnRecord};
    let leg = |mode, ms: f64| {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(ms);
        let run = AgentRun {
            status: RunStatus::Done,
            turns: vec![turn],
            ..AgentRun::default()
        };
        LegSummary::of(mode, 1, &run)
    };
    let mut done = Comparison {
        warm_up: false,
        ..Comparison::with_long_running(1, true)
    };
    done.update(leg(ContinuationMode::WebSocket, 100.0));
    done.update(leg(ContinuationMode::HttpStateless, 150.0));
    let comparison = RwSignal::new(done.clone());
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        let (ws, http) = (
            RunView::new(AgentRun::default()),
            RunView::new(AgentRun::default()),
        );
        view! { <CompareView comparison=comparison ws=ws http=http /> }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    assert_eq!(text_of(&root, "speedup-long-running"), "measuring…");
    assert_eq!(
        text_of(&root, "speedup"),
        "1.50×",
        "WebSocket's and HTTP's legs of the repetition are done"
    );
    let header = root
        .query_selector(".compare-totals thead")
        .unwrap()
        .unwrap()
        .text_content()
        .unwrap();
    assert!(header.contains("WebSocket long-running") && header.contains("HTTP − long-running"));
    done.update(leg(ContinuationMode::LongRunning, 75.0));
    comparison.set(done);
    tick().await;
    assert_eq!(text_of(&root, "speedup"), "1.50×");
    assert_eq!(text_of(&root, "speedup-long-running"), "2.00×");
    assert_eq!(
        text_of(&root, "speedup-long-running-text"),
        "Within noise: 2.00× (1 repetition: no spread to judge by)."
    );
}

#[wasm_bindgen_test]
async fn the_timeline_shows_each_steer_under_its_turn_and_a_paused_turn() {
    use tether_playground::agent::{SentAs, SteerOutcome, SteerRecord, TurnRecord};
    let mut first = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
    first.response_id = Some("resp_1".into());
    first.completed_at = Some(10.0);
    first.paused = true;
    let mut second = TurnRecord::new(2, &ResponseCreate::new("m", "x"), 12.0);
    second.sent_as = SentAs::Append;
    second.response_id = Some("resp_1".into());
    let run = AgentRun {
        status: RunStatus::Running,
        turns: vec![first, second],
        steers: vec![SteerRecord {
            turn: 1,
            text: "about a cat".into(),
            target: "resp_1".into(),
            sent_at: 2.0,
            answered_at: Some(5.0),
            outcome: SteerOutcome::Failed {
                code: "too_many_pending_steers".into(),
                message: "8 steers wait already.".into(),
            },
        }],
        ..AgentRun::default()
    };
    let view_of = RunView::new(run);
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        view! { <Timeline run=view_of /> }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    let steer = text_of(&root, "timeline-steer");
    assert!(
        steer.contains("response.steer “about a cat” → failed: too_many_pending_steers — 8 steers wait already. · answered in 3 ms"),
        "{steer}"
    );
    let first = text_of(&root, "timeline-row");
    assert!(first.contains("paused (response.done)"), "{first}");
    let all = text_of(&root, "timeline");
    assert!(
        all.contains("response.append: 1 item(s) to resp_1"),
        "{all}"
    );
    // The steer row sits under turn 1, before turn 2's rows.
    let steer_at = all.find("about a cat").unwrap();
    assert!(steer_at < all.find("response.append").unwrap(), "{all}");
}

#[wasm_bindgen_test]
async fn the_turn_chart_draws_a_panel_per_leg_a_stack_per_turn_and_the_context() {
    let run = replayed_run(agent_scripts()).await;
    let second = run.clone();
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let (ws, http) = (RunView::new(run), RunView::new(second));
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        view! {
            <TurnChart
                legs=vec![("WebSocket".to_string(), ws), ("HTTP stateless".to_string(), http)]
                caption="both legs"
            />
        }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    assert_eq!(count(&root, "[data-testid=chart-panel]"), 2);
    let panel = root
        .query_selector("[data-testid=chart-panel]")
        .unwrap()
        .unwrap();
    // The replay has no server timings: each response is one segment, the page's work another.
    assert!(panel.query_selector("rect.seg-unsplit").unwrap().is_some());
    assert!(panel.query_selector("rect.seg-client").unwrap().is_some());
    let bar = panel.query_selector("rect").unwrap().unwrap();
    let height: f64 = bar.get_attribute("height").unwrap().parse().unwrap();
    assert!(height > 0.0);
    assert!(
        bar.text_content().unwrap().starts_with("turn 1: "),
        "a bar says what it is"
    );
    // The context line has a point per turn: 800 and 850 tokens.
    let points = root
        .query_selector("[data-testid=chart-context]")
        .unwrap()
        .unwrap()
        .get_attribute("points")
        .unwrap();
    assert_eq!(points.split(' ').count(), 2, "{points}");
    let legend = text_of(&root, "chart-legend");
    assert!(legend.contains("response, not split per turn") && legend.contains("context"));
    let label = root
        .query_selector("svg[role=img]")
        .unwrap()
        .unwrap()
        .get_attribute("aria-label")
        .unwrap();
    assert!(label.contains("WebSocket: 2 turns"), "{label}");
}

#[wasm_bindgen_test]
async fn the_conditions_show_what_they_mean_and_a_typed_link_is_custom() {
    use tether_playground::components::field::Form;
    use tether_playground::conditions::{ApiCosts, LinkPreset};
    use tether_playground::settings::{Inputs, ModelChoices, Settings};
    let settings = RwSignal::new(Settings {
        link: LinkPreset::Loopback,
        ..Settings::default()
    });
    let inputs = RwSignal::new(Inputs::default());
    let form = Form::new(settings, inputs);
    let models = RwSignal::new(ModelChoices::Loaded(vec![
        "spark".to_string(),
        "instant".to_string(),
    ]));
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        view! { <ConditionsPanel form=form models=models locked=Signal::stored(false) /> }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    assert!(text_of(&root, "profile-note").starts_with("1,000 tok/s, TTFT 80 ms"));
    assert!(text_of(&root, "link-note").starts_with("Nothing in between"));

    set_input(&root, "link", "home-uplink", "change");
    tick().await;
    let control = |id: &str| {
        root.query_selector(&format!("[data-testid={id}]"))
            .unwrap()
            .unwrap()
    };
    let value = |id: &str| {
        js_sys::Reflect::get(&control(id), &"value".into())
            .unwrap()
            .as_string()
            .unwrap()
    };
    assert_eq!(
        (value("rtt-ms"), value("up-mbit"), value("down-mbit")),
        ("40".into(), "20".into(), "100".into()),
        "a preset's numbers are shown"
    );
    assert!(text_of(&root, "link-note").contains("40 ms RTT, 20 Mbit/s up, 100 Mbit/s down"));

    // Typing a number makes the link custom, from the values shown.
    set_input(&root, "rtt-ms", "55", "input");
    tick().await;
    let now = settings.get_untracked();
    assert_eq!(now.link, LinkPreset::Custom);
    assert_eq!(
        (now.custom_link.rtt_ms, now.custom_link.up_mbit),
        (55.0, Some(20.0))
    );
    assert_eq!(value("link"), "custom");
    assert_eq!(
        control("rtt-ms").get_attribute("aria-invalid").as_deref(),
        Some("false")
    );

    // A value the page does not understand stays as typed, is said at the field, and changes
    // nothing.
    for typed in ["-5", "abc", "5000"] {
        set_input(&root, "rtt-ms", typed, "input");
        tick().await;
        assert_eq!(value("rtt-ms"), typed);
        assert_eq!(
            control("rtt-ms").get_attribute("aria-invalid").as_deref(),
            Some("true")
        );
        // Described by its own error, which the link's note holds.
        assert_eq!(
            control("rtt-ms")
                .get_attribute("aria-describedby")
                .as_deref(),
            Some("rtt-ms-error")
        );
        assert_eq!(
            text_of(&root, "link-note"),
            format!("RTT must be a number of milliseconds from 0 to 1000; got \"{typed}\"")
        );
        assert_eq!(settings.get_untracked().custom_link.rtt_ms, 55.0);
    }
    set_input(&root, "up-mbit", "abc", "input");
    tick().await;
    assert_eq!(
        settings.get_untracked().custom_link.up_mbit,
        Some(20.0),
        "not unlimited"
    );
    assert!(!inputs.with_untracked(|i| i.runnable(&settings.get_untracked())));
    // A preset puts its numbers back, and the errors go with what was typed.
    set_input(&root, "link", "same-region", "change");
    tick().await;
    assert_eq!(value("rtt-ms"), "10");
    assert_eq!(
        control("rtt-ms").get_attribute("aria-invalid").as_deref(),
        Some("false")
    );
    assert!(inputs.with_untracked(|i| i.runnable(&settings.get_untracked())));

    set_input(&root, "api-costs", "hosted", "change");
    tick().await;
    assert_eq!(settings.get_untracked().api_costs, ApiCosts::Hosted);
    assert!(text_of(&root, "api-costs-note").contains("Llama Guard 3 1B"));
}

#[wasm_bindgen_test]
async fn a_server_that_refuses_conditions_is_said_above_them_with_the_way_out() {
    use tether_playground::components::field::Form;
    use tether_playground::conditions::{ApiCosts, LinkPreset};
    use tether_playground::settings::{Inputs, ModelChoices, Settings};
    let settings = RwSignal::new(Settings {
        link: LinkPreset::HomeUplink,
        api_costs: ApiCosts::Hosted,
        ..Settings::default()
    });
    let form = Form::new(settings, RwSignal::new(Inputs::default()));
    let models = RwSignal::new(ModelChoices::Loaded(vec!["spark".to_string()]));
    let refused = RwSignal::new(Some(
        "This server does not accept client-chosen conditions (tether_api_costs)".to_string(),
    ));
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        view! {
            <ConditionsPanel form=form models=models refused=refused locked=Signal::stored(false) />
        }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    assert!(text_of(&root, "conditions-refused").contains("does not accept client-chosen"));
    assert!(
        tether_playground::components::conditions::conditions_refused(
            refused,
            &settings.get_untracked(),
            None
        ),
        "a run of these settings does not start"
    );
    let button: web_sys::HtmlElement = root
        .query_selector("[data-testid=use-server-conditions]")
        .unwrap()
        .unwrap()
        .unchecked_into();
    button.click();
    tick().await;
    let now = settings.get_untracked();
    assert_eq!(
        (now.link, now.api_costs),
        (LinkPreset::Loopback, ApiCosts::Server)
    );
    assert!(
        root.query_selector("[data-testid=conditions-refused]")
            .unwrap()
            .is_none(),
        "nothing is refused any more"
    );
    assert!(!tether_playground::components::conditions::conditions_refused(refused, &now, None));
}

#[wasm_bindgen_test]
async fn a_sweep_plots_a_point_per_measured_pair() {
    use tether_playground::agent::{Comparison, LegSummary, SWEEP_PROFILES, TurnRecord};
    let leg = |mode, point, ms: f64| {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(ms);
        let run = AgentRun {
            status: RunStatus::Done,
            turns: vec![turn],
            ..AgentRun::default()
        };
        LegSummary::of(mode, point, &run)
    };
    let mut sweep = Comparison::sweep(&SWEEP_PROFILES);
    let (ws, http) = (ContinuationMode::WebSocket, ContinuationMode::HttpStateless);
    for mode in [ws, http] {
        sweep.update(leg(mode, WARM_UP, 10.0));
    }
    sweep.update(leg(ws, 1, 99.0));
    sweep.update(leg(http, 1, 100.0));
    sweep.update(leg(http, 2, 100.0));
    sweep.update(leg(ws, 2, 80.0));
    let comparison = RwSignal::new(sweep);
    let wrapper = document().create_element("section").unwrap();
    document().body().unwrap().append_child(&wrapper).unwrap();
    let _handle = mount_to(wrapper.clone().unchecked_into(), move || {
        let (ws, http) = (
            RunView::new(AgentRun::default()),
            RunView::new(AgentRun::default()),
        );
        view! { <CompareView comparison=comparison ws=ws http=http /> }
    });
    let root: web_sys::HtmlElement = wrapper.unchecked_into();
    tick().await;
    assert_eq!(
        count(&root, "[data-testid=sweep-point]"),
        2,
        "two pairs measured"
    );
    assert!(
        root.query_selector("[data-testid=speedup]")
            .unwrap()
            .is_none(),
        "no median across models"
    );
    assert!(
        text_of(&root, "speedup-why").starts_with(
            "WebSocket mode's saving over HTTP stateless, one pair a point: +1 % (1 pair: no \
             spread to judge by) at 65 tokens/s (flagship), +20 %"
        ),
        "{}",
        text_of(&root, "speedup-why")
    );
    // Hollow: one pair has no spread to judge by.
    let point = root
        .query_selector("[data-testid=sweep-point]")
        .unwrap()
        .unwrap();
    let class = point.get_attribute("class").unwrap_or_default();
    assert!(class.contains("verdict-noise"), "{class}");
    let progress = root
        .query_selector("[data-testid=sweep-progress]")
        .unwrap()
        .unwrap();
    assert_eq!(progress.get_attribute("value").as_deref(), Some("6"));
    assert_eq!(progress.get_attribute("max").as_deref(), Some("10"));
    // The line joins the points at a model speed; none yet at no model time.
    let drawn = |id: &str| {
        root.query_selector(&format!("[data-testid={id}]"))
            .unwrap()
            .is_some()
    };
    assert!(drawn("sweep-line"));
    assert!(!drawn("sweep-line-unpaced"));
    // burst, then instant: the step to the point past the log axis is drawn apart.
    for (point, ws_ms) in [(3, 90.0), (4, 95.0)] {
        sweep_leg(comparison, leg(ws, point, ws_ms));
        sweep_leg(comparison, leg(http, point, 100.0));
    }
    tick().await;
    assert_eq!(count(&root, "[data-testid=sweep-point]"), 4);
    assert!(drawn("sweep-line-unpaced"));
}

fn sweep_leg(
    comparison: RwSignal<tether_playground::agent::Comparison>,
    leg: tether_playground::agent::LegSummary,
) {
    comparison.update(|c| c.update(leg));
}
