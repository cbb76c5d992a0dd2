//! The conditions a run is measured under, chosen on the page: the task's length, the model's
//! speed (the profiles, with their numbers), the network link (presets and custom values) and
//! the API costs (with where their numbers come from). The server applies them to both legs
//! alike ([`crate::conditions`]). Every choice shows what it means beside it, not in a tooltip.

use leptos::prelude::*;

use crate::conditions::{ApiCosts, LinkPreset, number};
use crate::profiles::{profile, short_label};
use crate::settings::{ModelChoices, Settings, TaskLength};

/// A bandwidth field's text: empty for unlimited.
fn mbit_text(mbit: Option<f64>) -> String {
    mbit.map(number).unwrap_or_default()
}

/// The conditions form (`data-testid="conditions"`): task length (`task-length`), model profile
/// (`profile`), link (`link`, and `rtt-ms`, `up-mbit`, `down-mbit`), API costs (`api-costs`).
/// `id` prefixes the controls' ids, so the overview and the agent view can each have one.
#[component]
pub fn ConditionsPanel(
    /// The settings being edited.
    settings: RwSignal<Settings>,
    /// The server's model profiles.
    models: RwSignal<ModelChoices>,
    /// True while a run is going: nothing may change under it.
    #[prop(into)]
    locked: Signal<bool>,
    /// Prefix of the controls' ids.
    #[prop(optional)]
    id: &'static str,
) -> impl IntoView {
    let field_id = move |name: &str| format!("{id}{name}");
    let profile_control = move || match models.get() {
        ModelChoices::Loaded(ids) => {
            let current = settings.with_untracked(|s| s.profile.clone());
            let mut ids = ids;
            if !ids.contains(&current) {
                ids.push(current);
            }
            view! {
                <select
                    id=field_id("setting-profile")
                    data-testid="profile"
                    aria-describedby=field_id("profile-note")
                    prop:value=move || settings.with(|s| s.profile.clone())
                    on:change=move |ev| {
                        let value = event_target_value(&ev);
                        settings.update(|s| s.profile = value);
                    }
                >
                    {ids
                        .into_iter()
                        .map(|id| {
                            let this = id.clone();
                            let label = short_label(&id);
                            view! {
                                <option value=id selected=move || settings.with(|s| s.profile == this)>
                                    {label}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            }
            .into_any()
        }
        _ => view! {
            <input
                id=field_id("setting-profile")
                data-testid="profile"
                aria-describedby=field_id("profile-note")
                prop:value=move || settings.with(|s| s.profile.clone())
                on:input=move |ev| {
                    let value = event_target_value(&ev);
                    settings.update(|s| s.profile = value);
                }
            />
        }
        .into_any(),
    };
    // The note under the profile always takes the same room (two lines): applying an API key
    // swaps a refusal for the list, and the controls below must not move under a click.
    let profile_note = move || match models.get() {
        ModelChoices::Failed(error) => format!("Cannot load the model list: {error}"),
        ModelChoices::Loading => "Loading the model list…".to_string(),
        ModelChoices::Loaded(_) => settings.with(|s| match profile(s.profile.trim()) {
            Some(p) => format!("{}: {}", p.speed(), p.what),
            None => "A model this page has no numbers for.".to_string(),
        }),
    };
    let link_note = move || {
        settings.with(|s| match s.conditions() {
            Ok(c) if c.link.is_loopback() => {
                "Nothing in between: the page and the server on one machine.".to_string()
            }
            Ok(c) => format!(
                "The server delays and paces the bytes each leg really sends and receives: {}.",
                c.link.describe()
            ),
            Err(why) => why,
        })
    };
    let custom = move || settings.with(|s| s.link == LinkPreset::Custom);
    // Editing a number makes the link custom, starting from the values shown.
    let edit_link = move |change: fn(&mut crate::conditions::Link, Option<f64>)| {
        move |ev: leptos::ev::Event| {
            let text = event_target_value(&ev);
            let value = text.trim().parse::<f64>().ok().filter(|v| *v >= 0.0);
            settings.update(|s| {
                let mut link = s.link();
                change(&mut link, value);
                s.link = LinkPreset::Custom;
                s.custom_link = link;
            });
        }
    };
    view! {
        <fieldset class="settings conditions" data-testid="conditions" prop:disabled=locked>
            <legend>"Conditions (both legs alike)"</legend>
            <div class="field">
                <label for=field_id("setting-task-length")>"Task"</label>
                <select
                    id=field_id("setting-task-length")
                    data-testid="task-length"
                    aria-describedby=field_id("task-length-note")
                    prop:value=move || settings.with(|s| s.task_length.as_str())
                    on:change=move |ev| {
                        if let Some(length) = TaskLength::parse(&event_target_value(&ev)) {
                            settings.update(|s| s.task_length = length);
                        }
                    }
                >
                    {TaskLength::ALL
                        .map(|t| {
                            view! {
                                <option value=t.as_str() selected=move || settings.with(|s| s.task_length == t)>
                                    {t.label()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
                <span id=field_id("task-length-note") class="field-note" data-testid="task-length-note">
                    {move || settings.with(|s| s.task_length.note())}
                </span>
            </div>
            <div class="field">
                <label for=field_id("setting-profile")>"Model speed (profile)"</label>
                {profile_control}
                <span
                    id=field_id("profile-note")
                    class="field-note profile-note"
                    data-testid="profile-note"
                    title=profile_note
                >
                    {profile_note}
                </span>
            </div>
            <div class="field">
                <label for=field_id("setting-link")>"Network link"</label>
                <select
                    id=field_id("setting-link")
                    data-testid="link"
                    aria-describedby=field_id("link-note")
                    prop:value=move || settings.with(|s| s.link.as_str())
                    on:change=move |ev| {
                        if let Some(preset) = LinkPreset::parse(&event_target_value(&ev)) {
                            settings.update(|s| {
                                if preset == LinkPreset::Custom {
                                    s.custom_link = s.link();
                                }
                                s.link = preset;
                            });
                        }
                    }
                >
                    {LinkPreset::ALL
                        .map(|p| {
                            view! {
                                <option value=p.as_str() selected=move || settings.with(|s| s.link == p)>
                                    {p.label()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
                <div class="link-values" class:custom=custom>
                    <label>
                        "RTT, ms"
                        <input
                            type="number"
                            min="0"
                            max="1000"
                            step="any"
                            data-testid="rtt-ms"
                            prop:value=move || settings.with(|s| number(s.link().rtt_ms))
                            on:change=edit_link(|l, v| l.rtt_ms = v.unwrap_or(0.0))
                        />
                    </label>
                    <label>
                        "Up, Mbit/s"
                        <input
                            type="number"
                            min="0"
                            step="any"
                            placeholder="unlimited"
                            data-testid="up-mbit"
                            prop:value=move || settings.with(|s| mbit_text(s.link().up_mbit))
                            on:change=edit_link(|l, v| l.up_mbit = v.filter(|m| *m > 0.0))
                        />
                    </label>
                    <label>
                        "Down, Mbit/s"
                        <input
                            type="number"
                            min="0"
                            step="any"
                            placeholder="unlimited"
                            data-testid="down-mbit"
                            prop:value=move || settings.with(|s| mbit_text(s.link().down_mbit))
                            on:change=edit_link(|l, v| l.down_mbit = v.filter(|m| *m > 0.0))
                        />
                    </label>
                </div>
                <span id=field_id("link-note") class="field-note" data-testid="link-note">
                    {link_note}
                </span>
            </div>
            <div class="field">
                <label for=field_id("setting-api-costs")>"API costs"</label>
                <select
                    id=field_id("setting-api-costs")
                    data-testid="api-costs"
                    aria-describedby=field_id("api-costs-source")
                    prop:value=move || settings.with(|s| s.api_costs.as_str())
                    on:change=move |ev| {
                        if let Some(costs) = ApiCosts::parse(&event_target_value(&ev)) {
                            settings.update(|s| s.api_costs = costs);
                        }
                    }
                >
                    {ApiCosts::ALL
                        .map(|c| {
                            view! {
                                <option value=c.as_str() selected=move || settings.with(|s| s.api_costs == c)>
                                    {c.label()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
                <span id=field_id("api-costs-source") class="field-note" data-testid="api-costs-source">
                    {move || settings.with(|s| s.api_costs.source())}
                </span>
            </div>
        </fieldset>
    }
}
