//! The settings panel: transport, scenario, max turns, repetitions, server URL, API key and
//! where a run's files start from (the model profile is one of the conditions:
//! [`super::conditions`]). Every control has a label and a `data-testid`; the panel is a
//! `<fieldset>`, disabled as a whole while a run is going.

use leptos::prelude::*;

use super::field::{Control, Form, FormField};
use crate::settings::{
    Field, KNOWN_SCENARIOS, LONG_SCENARIO, LONG_TURNS, TaskLength, TransportChoice,
};

/// The settings form fields (the task and Run/Stop live with the agent view).
#[component]
pub fn SettingsPanel(
    /// The settings being edited, and what was typed.
    form: Form,
    /// True while a run is going: nothing may change under it.
    #[prop(into)]
    locked: Signal<bool>,
    /// The scenarios the server says it plays, suggested at the field (the ones Tether ships
    /// until it answers, or from a server that does not say).
    #[prop(into)]
    scenarios: Signal<Option<Vec<String>>>,
) -> impl IntoView {
    let settings = form.settings;
    let long = Signal::derive(move || settings.with(|s| s.task_length == TaskLength::Long));
    // The long task's own fields are locked, but one the URL gave a value in error stays open
    // until that value is corrected.
    let locked_for_long =
        move |field: Field| Signal::derive(move || long.get() && form.error(field).is_none());
    let bounds = |field: Field, what: &'static str| {
        let bounds = field.bounds().unwrap_or_default();
        format!("{bounds}: {what}")
    };
    let max_turns_note = Signal::derive(move || {
        if long.get() {
            format!(
                "The long rollout takes its own {LONG_TURNS} turns; this limit is the short \
                 task's."
            )
        } else {
            bounds(Field::MaxTurns, "a run fails after this many requests.")
        }
    });
    // Names the server a run will use, as typed or this page's, so a change says where it
    // leads; a URL in error is said by the field's own message. Short: on a phone each line
    // of it pushes the run's view down.
    let server_note = Signal::derive(move || {
        match crate::page_origin_url().and_then(|origin| settings.with(|s| s.base_url(&origin))) {
            Ok(base) => format!("Runs use {base}; empty: this page's server."),
            Err(_) => "http(s)://host:port; WebSocket and HTTP URLs derive from it.".to_string(),
        }
    });
    let toggle = move |change: fn(&mut crate::settings::Settings, bool)| {
        move |ev: leptos::ev::Event| {
            let checked = event_target_checked(&ev);
            settings.update(|s| change(s, checked));
        }
    };
    view! {
        <fieldset class="settings" data-testid="settings" prop:disabled=locked>
            <legend>"Settings"</legend>
            <FormField
                form=form
                field=Field::Transport
                control=Control::choice(TransportChoice::ALL.map(|c| (c.as_str(), c.label())).into())
            />
            <FormField
                form=form
                field=Field::Scenario
                control=Control::Text {
                    inputmode: "text",
                    placeholder: "none: the echo generator",
                    list: Some("known-scenarios"),
                }
                note=Signal::derive(move || {
                    if long.get() {
                        "The long rollout's scenario (choose the short task to set your own)."
                    } else if settings.with(|s| s.scenario.trim().is_empty()) {
                        // Said before a run, not found out from a failed call.
                        "Empty: the echo generator, not an agent — it calls the first tool once \
                         with placeholder arguments from its schema (the shell gets an empty \
                         command, which fails), then quotes your task."
                    } else {
                        "Sent as metadata.scenario: a scripted agent the server plays."
                    }
                        .to_string()
                })
                disabled=locked_for_long(Field::Scenario)
            />
            <datalist id="known-scenarios">
                {move || {
                    scenarios
                        .get()
                        .unwrap_or_else(|| KNOWN_SCENARIOS.map(str::to_string).to_vec())
                        .into_iter()
                        // The field is the short task's: the long task's scenario needs its
                        // project and turns (the field says so if it is typed).
                        .filter(|name| name != LONG_SCENARIO)
                        .map(|name| view! { <option value=name></option> })
                        .collect_view()
                }}
            </datalist>
            <FormField
                form=form
                field=Field::MaxTurns
                control=Control::number("20")
                note=max_turns_note
                disabled=locked_for_long(Field::MaxTurns)
            />
            <FormField
                form=form
                field=Field::Repetitions
                label="Repetitions (compare)"
                control=Control::number("3")
                note=Signal::stored(
                    bounds(
                        Field::Repetitions,
                        "each leg runs this often, the legs taking turns to go first; the medians are compared.",
                    ),
                )
            />
            <FormField
                form=form
                field=Field::ServerUrl
                control=Control::text("url", "this page's server")
                note=server_note
            />
            <div class="field">
                <label for="setting-api-key">"API key"</label>
                <input
                    id="setting-api-key"
                    data-testid="api-key"
                    type="password"
                    autocomplete="off"
                    placeholder="none"
                    aria-describedby="api-key-note"
                    prop:value=move || settings.with(|s| s.api_key.clone())
                    on:change=move |ev| {
                        let key = event_target_value(&ev).trim().to_string();
                        settings.update(|s| s.api_key = key);
                    }
                />
                <span id="api-key-note" class="field-note">
                    "Kept in this browser only; never in a link or a URL."
                </span>
            </div>
            <div class="field field-check in-grid">
                <input
                    id="setting-compare-long-running"
                    data-testid="compare-long-running"
                    type="checkbox"
                    prop:checked=move || settings.with(|s| s.compare_long_running)
                    on:change=toggle(|s, on| s.compare_long_running = on)
                />
                <label for="setting-compare-long-running">
                    "Compare also the long-running design (response.append) as a third leg"
                </label>
            </div>
            <div class="field field-check">
                <input
                    id="setting-keep-files"
                    data-testid="keep-files"
                    type="checkbox"
                    prop:checked=move || settings.with(|s| s.keep_files)
                    on:change=toggle(|s, on| s.keep_files = on)
                />
                <label for="setting-keep-files">
                    "Start from the last run's files (else a fresh sample project)"
                </label>
            </div>
        </fieldset>
    }
}
