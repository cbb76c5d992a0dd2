//! The settings panel: server URL, API key, scenario, transport, max turns, repetitions and
//! where a run's files start from (the model profile is one of the conditions:
//! [`super::conditions`]). Every control has a label and a `data-testid`; the panel is a
//! `<fieldset>`, disabled as a whole while a run is going.

use leptos::prelude::*;

use crate::agent::REPETITIONS;
use crate::settings::{
    KNOWN_SCENARIOS, LONG_SCENARIO, MAX_TURNS, Settings, TaskLength, TransportChoice,
};

/// The settings form fields (the task and Run/Stop live with the agent view).
#[component]
pub fn SettingsPanel(
    /// The settings being edited.
    settings: RwSignal<Settings>,
    /// True while a run is going: nothing may change under it.
    #[prop(into)]
    locked: Signal<bool>,
) -> impl IntoView {
    let edit = move |change: fn(&mut Settings, String)| {
        move |ev: leptos::ev::Event| {
            let value = event_target_value(&ev);
            settings.update(|s| change(s, value));
        }
    };
    let long = move || settings.with(|s| s.task_length == TaskLength::Long);
    view! {
        <fieldset class="settings" data-testid="settings" prop:disabled=locked>
            <legend>"Settings"</legend>
            <div class="field">
                <label for="setting-transport">"Transport"</label>
                <select
                    id="setting-transport"
                    data-testid="transport"
                    prop:value=move || settings.with(|s| s.transport.as_str())
                    on:change=move |ev| {
                        if let Some(choice) = TransportChoice::parse(&event_target_value(&ev)) {
                            settings.update(|s| s.transport = choice);
                        }
                    }
                >
                    {TransportChoice::ALL
                        .into_iter()
                        .map(|c| {
                            view! {
                                <option
                                    value=c.as_str()
                                    selected=move || settings.with(|s| s.transport == c)
                                >
                                    {c.label()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="setting-scenario">"Scenario"</label>
                <input
                    id="setting-scenario"
                    data-testid="scenario"
                    list="known-scenarios"
                    placeholder="none: the echo generator"
                    aria-describedby="scenario-note"
                    prop:disabled=long
                    prop:value=move || {
                        settings
                            .with(|s| match s.task_length {
                                TaskLength::Long => LONG_SCENARIO.to_string(),
                                TaskLength::Short => s.scenario.clone(),
                            })
                    }
                    on:input=edit(|s, v| s.scenario = v.trim().to_string())
                />
                <datalist id="known-scenarios">
                    {KNOWN_SCENARIOS.map(|name| view! { <option value=name></option> }).collect_view()}
                </datalist>
                <span id="scenario-note" class="field-note">
                    {move || {
                        if long() {
                            "The long rollout's scenario (choose the short task to set your own)."
                        } else {
                            "Sent as metadata.scenario: a scripted agent the server plays."
                        }
                    }}
                </span>
            </div>
            <div class="field">
                <label for="setting-max-turns">"Max turns"</label>
                <input
                    id="setting-max-turns"
                    data-testid="max-turns"
                    type="number"
                    min=*MAX_TURNS.start()
                    max=*MAX_TURNS.end()
                    prop:value=move || settings.with(|s| s.max_turns.to_string())
                    on:change=move |ev| {
                        if let Ok(n) = event_target_value(&ev).parse::<usize>() {
                            settings.update(|s| s.max_turns = n.clamp(*MAX_TURNS.start(), *MAX_TURNS.end()));
                        }
                    }
                />
            </div>
            <div class="field">
                <label for="setting-repetitions">"Repetitions (compare)"</label>
                <input
                    id="setting-repetitions"
                    data-testid="repetitions"
                    type="number"
                    min=*REPETITIONS.start()
                    max=*REPETITIONS.end()
                    aria-describedby="repetitions-note"
                    prop:value=move || settings.with(|s| s.repetitions.to_string())
                    on:change=move |ev| {
                        if let Ok(n) = event_target_value(&ev).parse::<usize>() {
                            settings
                                .update(|s| {
                                    s.repetitions = n.clamp(*REPETITIONS.start(), *REPETITIONS.end());
                                });
                        }
                    }
                />
                <span id="repetitions-note" class="field-note">
                    "Each leg runs this often, the legs taking turns to go first; the medians are compared."
                </span>
            </div>
            <div class="field">
                <label for="setting-server">"Server URL"</label>
                <input
                    id="setting-server"
                    data-testid="server-url"
                    type="url"
                    placeholder="this page's server"
                    aria-describedby="server-note"
                    prop:value=move || settings.with(|s| s.server_url.clone())
                    on:change=edit(|s, v| s.server_url = v.trim().to_string())
                />
                <span id="server-note" class="field-note">
                    "http(s)://host:port; WebSocket and HTTP URLs derive from it."
                </span>
            </div>
            <div class="field">
                <label for="setting-api-key" title="HTTP requests send it as Authorization: Bearer; a WebSocket upgrade carries a 60-second client secret minted with it">
                    "API key"
                </label>
                <input
                    id="setting-api-key"
                    data-testid="api-key"
                    type="password"
                    autocomplete="off"
                    placeholder="none"
                    aria-describedby="api-key-note"
                    prop:value=move || settings.with(|s| s.api_key.clone())
                    on:change=edit(|s, v| s.api_key = v.trim().to_string())
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
                    on:change=move |ev| {
                        let checked = event_target_checked(&ev);
                        settings.update(|s| s.compare_long_running = checked);
                    }
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
                    on:change=move |ev| {
                        let checked = event_target_checked(&ev);
                        settings.update(|s| s.keep_files = checked);
                    }
                />
                <label for="setting-keep-files">
                    "Start from the last run's files (else a fresh sample project)"
                </label>
            </div>
        </fieldset>
    }
}
