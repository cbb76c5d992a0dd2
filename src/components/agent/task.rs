//! The top of the agent view: the task to run (`data-testid="task"`; Ctrl+Enter runs it), or,
//! in an embedded demo, a title saying what runs and a link to open it in the playground.

use leptos::prelude::*;

use crate::components::field::Form;
use crate::settings::{Field, Settings, TaskLength, TransportChoice};

/// The task field and its hint, which an empty task's error replaces. The long rollout has a
/// task of its own, shown and locked.
#[component]
pub fn TaskField(
    form: Form,
    running: Signal<bool>,
    /// Runs the task (`true`: started by the user, so the focus follows the buttons).
    on_run: Callback<bool>,
) -> impl IntoView {
    let settings = form.settings;
    let long_task = move || settings.with(|s| s.task_length == TaskLength::Long);
    let error = move || form.error(Field::Task);
    view! {
        <label for="setting-task">"Task"</label>
        <textarea
            id="setting-task"
            data-testid="task"
            rows="3"
            aria-describedby="task-hint"
            aria-invalid=move || error().is_some().to_string()
            prop:disabled=move || running.get() || long_task()
            prop:value=move || form.shown(Field::Task)
            on:input=move |ev| form.edit(Field::Task, event_target_value(&ev))
            on:keydown=move |ev| {
                if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                    ev.prevent_default();
                    on_run.run(true);
                }
            }
        ></textarea>
        <span id="task-hint" class="hint" class:field-error=move || error().is_some()>
            {move || {
                if let Some(error) = error() {
                    error
                } else if long_task() {
                    "The long rollout's own task (choose the short task to write yours)".into()
                } else {
                    "Ctrl+Enter runs it".into()
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
            settings.with(Settings::share_query),
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
