//! The agent view: a task, a transport, Run and Stop; then the run's status, its conversation
//! and its per-turn timeline. The loop itself is [`crate::agent::run_agent`]; this component
//! only opens the transport, hands the loop a fresh sandbox over the sample project, and renders
//! each state the loop reports.

use leptos::prelude::*;
use tether_sandbox::{Sandbox, sample_project};

use crate::agent::{
    AgentConfig, AgentRun, ContinuationMode, RunStatus, SharedRun, StopSignal, run_agent_shared,
};
use crate::components::frame_batch::FrameBatch;
use crate::components::{Conversation, RunDetails, Timeline};
use crate::js::WorkerRuntime;
use crate::transport::http::HttpTransport;
use crate::transport::ws::{WsTransport, responses_url};
use crate::transport::{Transport, responses_http_url};
use crate::{MODEL, now_ms, page_origin};

/// Opens the transport `mode` runs on, against the server that served the page.
fn open_transport(mode: ContinuationMode) -> Result<Box<dyn Transport>, String> {
    let (protocol, host) = page_origin()?;
    Ok(match mode {
        ContinuationMode::WebSocket => Box::new(
            WsTransport::connect(&responses_url(&protocol, &host)).map_err(|e| e.to_string())?,
        ),
        ContinuationMode::HttpChained | ContinuationMode::HttpStateless => {
            Box::new(HttpTransport::new(&responses_http_url(&protocol, &host)))
        }
    })
}

/// The agent page: task prompt (`data-testid="task"`), transport selector (`transport`),
/// optional server scenario (`scenario`), Run (`run`) and Stop (`stop`), status (`run-status`),
/// turn count (`turn-count`), error (`error`), conversation and timeline.
#[component]
pub fn AgentView() -> impl IntoView {
    let task = RwSignal::new(String::from(
        "The pagination tests in the sample project fail. Find the bug, fix it, and run the tests.",
    ));
    let mode = RwSignal::new(ContinuationMode::WebSocket);
    let scenario = RwSignal::new(String::new());
    let max_turns = RwSignal::new(20usize);
    let run = RwSignal::new(AgentRun::default());
    let stop = StoredValue::new_local(None::<StopSignal>);
    let running = move || run.with(|r| r.status == RunStatus::Running);

    let start = move || {
        if running() || task.with_untracked(|t| t.trim().is_empty()) {
            return;
        }
        let mut config = AgentConfig::new(MODEL, mode.get_untracked());
        config.max_turns = max_turns.get_untracked();
        config.scenario =
            Some(scenario.get_untracked().trim().to_string()).filter(|s| !s.is_empty());
        let mut transport = match open_transport(config.mode) {
            Ok(transport) => transport,
            Err(error) => {
                run.set(AgentRun {
                    status: RunStatus::Failed,
                    error: Some(format!("cannot open the transport: {error}")),
                    ..AgentRun::default()
                });
                return;
            }
        };
        let signal = StopSignal::new();
        stop.set_value(Some(signal.clone()));
        let text = task.get_untracked();
        leptos::task::spawn_local(async move {
            let mut sandbox =
                Sandbox::new(sample_project()).with_js_runtime(Box::new(WorkerRuntime));
            // One copy of the state and one DOM update per animation frame, not per event.
            let shared = SharedRun::default();
            let latest = shared.clone();
            // `try_set`: the view may be gone (tab switched) while the run winds down.
            let batch = FrameBatch::per_animation_frame(move || {
                run.try_set(latest.snapshot());
            });
            run_agent_shared(
                transport.as_mut(),
                &mut sandbox,
                &config,
                &text,
                &now_ms,
                &signal,
                &shared,
                &mut |state| {
                    if state.status == RunStatus::Running {
                        batch.changed();
                    } else {
                        batch.flush();
                    }
                },
            )
            .await;
        });
    };

    // Leaving the view stops its run (the transport closes when the loop returns).
    on_cleanup(move || {
        stop.try_with_value(|s| s.iter().for_each(StopSignal::stop));
    });

    view! {
        <section class="agent-view">
            <form
                class="prompt agent-form"
                on:submit=move |ev| {
                    ev.prevent_default();
                    start();
                }
            >
                <label for="task">"Task"</label>
                <textarea
                    id="task"
                    data-testid="task"
                    rows="3"
                    prop:value=move || task.get()
                    on:input=move |ev| task.set(event_target_value(&ev))
                ></textarea>
                <div class="controls">
                    <label>
                        "Transport "
                        <select
                            data-testid="transport"
                            on:change=move |ev| {
                                if let Some(m) = ContinuationMode::parse(&event_target_value(&ev)) {
                                    mode.set(m);
                                }
                            }
                            prop:value=move || mode.get().as_str()
                        >
                            {ContinuationMode::ALL
                                .into_iter()
                                .map(|m| view! { <option value=m.as_str()>{m.label()}</option> })
                                .collect_view()}
                        </select>
                    </label>
                    <label>
                        "Scenario "
                        <input
                            data-testid="scenario"
                            placeholder="metadata.scenario (optional)"
                            prop:value=move || scenario.get()
                            on:input=move |ev| scenario.set(event_target_value(&ev))
                        />
                    </label>
                    <label>
                        "Max turns "
                        <input
                            data-testid="max-turns"
                            type="number"
                            min="1"
                            max="100"
                            prop:value=move || max_turns.get().to_string()
                            on:input=move |ev| {
                                if let Ok(n) = event_target_value(&ev).parse::<usize>() {
                                    max_turns.set(n.clamp(1, 100));
                                }
                            }
                        />
                    </label>
                    <button type="submit" data-testid="run" disabled=running>
                        "Run"
                    </button>
                    <button
                        type="button"
                        data-testid="stop"
                        disabled=move || !running()
                        on:click=move |_| stop.with_value(|s| s.iter().for_each(StopSignal::stop))
                    >
                        "Stop"
                    </button>
                </div>
            </form>
            <div class="status-line">
                "Status: "
                <span
                    class=move || format!("status status-{}", run.with(|r| r.status.as_str()))
                    data-testid="run-status"
                >
                    {move || run.with(|r| r.status.as_str())}
                </span>
                " · Turns: "
                <span data-testid="turn-count">{move || run.with(|r| r.turns.len())}</span>
                " · Tool calls: "
                <span data-testid="tool-call-count">{move || run.with(|r| r.tool_calls().count())}</span>
            </div>
            <Show when=move || run.with(|r| r.error.is_some())>
                <p class="error" role="alert" data-testid="error">
                    {move || run.with(|r| r.error.clone().unwrap_or_default())}
                </p>
            </Show>
            <h2>"Conversation"</h2>
            <Conversation run=run />
            <h2>"Timeline"</h2>
            <Timeline run=run />
            <RunDetails run=run />
        </section>
    }
}
