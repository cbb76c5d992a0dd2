//! The top of the agent view: the task to run (`data-testid="task"`; Ctrl+Enter runs it), or,
//! in an embedded demo, a title saying what runs and a link to open it in the playground.

use leptos::prelude::*;

use crate::settings::{Settings, TaskLength, TransportChoice};

/// The task field and its hint. The long rollout has a task of its own, shown and locked.
#[component]
pub fn TaskField(
    settings: RwSignal<Settings>,
    running: Signal<bool>,
    /// Runs the task (`true`: started by the user, so the focus follows the buttons).
    on_run: Callback<bool>,
) -> impl IntoView {
    let long_task = move || settings.with(|s| s.task_length == TaskLength::Long);
    view! {
        <label for="task">"Task"</label>
        <textarea
            id="task"
            data-testid="task"
            rows="3"
            aria-describedby="task-hint"
            prop:disabled=move || running.get() || long_task()
            prop:value=move || settings.with(|s| s.run_task().to_string())
            on:input=move |ev| {
                let text = event_target_value(&ev);
                settings.update(|s| s.task = text);
            }
            on:keydown=move |ev| {
                if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                    ev.prevent_default();
                    on_run.run(true);
                }
            }
        ></textarea>
        <span id="task-hint" class="hint">
            {move || {
                if long_task() {
                    "The long rollout's own task (choose the short task to write yours)"
                } else {
                    "Ctrl+Enter runs it"
                }
            }}
        </span>
    }
}

/// An embedded demo's title (`embed-summary`, `open-in-playground`).
#[component]
pub fn EmbedTitle(settings: RwSignal<Settings>) -> impl IntoView {
    let open = move || {
        format!(
            "{}?{}",
            crate::page_path_url().unwrap_or_default(),
            settings.with(Settings::settings_query),
        )
    };
    view! {
        <h1 class="embed-title">
            {move || {
                if settings.with(|s| s.transport == TransportChoice::Compare) {
                    "Live: WebSocket mode against HTTP stateless"
                } else {
                    "Live: an agent run against this server"
                }
            }}
        </h1>
        <p class="embed-summary" data-testid="embed-summary">
            {move || settings.with(Settings::summary)}
            " · "
            <a href=open target="_blank" rel="noopener" data-testid="open-in-playground">
                "Open in the playground"
            </a>
        </p>
    }
}
