//! The conditions a run is measured under, chosen on the page: the task's length, the model's
//! speed (the profiles, with their numbers), the network link (presets and custom values) and
//! the API costs (with where their numbers come from). The server applies them to both legs
//! alike ([`crate::conditions`]). Every choice shows what it means beside it, not in a tooltip.

use leptos::prelude::*;

use super::field::{Control, Form, FormField, focus_field_when_shown};
use crate::conditions::{ApiCosts, LinkPreset};
use crate::focus_id;
use crate::profiles::{profile, short_label};
use crate::settings::{Field, ModelChoices, Settings, TaskLength};

/// The id (after the form's prefix) of the button that takes the server's own conditions.
const USE_SERVER_CONDITIONS: &str = "use-server-conditions";

/// Whether a run of the settings must not start because the server refuses the conditions they
/// ask for; if so, and given the prefix of the form's ids, the focus goes to the way out.
pub fn conditions_refused(
    refused: RwSignal<Option<String>>,
    settings: &Settings,
    focus: Option<&str>,
) -> bool {
    if refused.with_untracked(Option::is_none) || !settings.asks_for_conditions() {
        return false;
    }
    if let Some(prefix) = focus {
        focus_id(&format!("{prefix}{USE_SERVER_CONDITIONS}"));
    }
    true
}

/// The conditions form (`data-testid="conditions"`): task length (`task-length`), model profile
/// (`profile`), link (`link`, and `rtt-ms`, `up-mbit`, `down-mbit`), API costs (`api-costs`).
/// `id` prefixes the controls' ids, so the overview and the agent view can each have one.
#[component]
pub fn ConditionsPanel(
    /// The settings being edited, and what was typed.
    form: Form,
    /// The server's model profiles.
    models: RwSignal<ModelChoices>,
    /// True while a run is going: nothing may change under it.
    #[prop(into)]
    locked: Signal<bool>,
    /// The server's refusal of client-chosen conditions, if it refuses them.
    #[prop(optional, into)]
    refused: Signal<Option<String>>,
    /// Prefix of the controls' ids.
    #[prop(optional)]
    id: &'static str,
) -> impl IntoView {
    let settings = form.settings;
    // On a server that refuses client-chosen conditions, conditions that ask for any are said
    // to be refused before a run is tried, with the way to what the server does take.
    let refusal = move || {
        let message = refused.get()?;
        settings.with(Settings::asks_for_conditions).then(|| {
            view! {
                <div class="input-errors" role="alert" data-testid="conditions-refused">
                    <p>"This server does not take the link or API costs chosen here."</p>
                    <p class="refusal">{message}</p>
                    <button
                        type="button"
                        id=format!("{id}{USE_SERVER_CONDITIONS}")
                        data-testid="use-server-conditions"
                        on:click=move |_| {
                            form.edit(Field::Link, LinkPreset::Loopback.as_str().to_string());
                            form.edit(Field::ApiCosts, ApiCosts::Server.as_str().to_string());
                            // The button goes with the refusal: the focus to what it changed.
                            focus_field_when_shown(id, Field::Link);
                        }
                    >
                        "Use what this server runs: the same machine, its own API costs"
                    </button>
                </div>
            }
        })
    };
    // The profiles the server offers, and the one of the settings if it offers no such (kept
    // from another server).
    let profiles = Signal::derive(move || {
        let ModelChoices::Loaded(mut ids) = models.get() else {
            return Vec::new();
        };
        let current = settings.with(|s| s.profile.clone());
        if !ids.contains(&current) {
            ids.push(current);
        }
        ids.into_iter()
            .map(|id| {
                let label = short_label(&id);
                (id, label)
            })
            .collect()
    });
    let loaded = move || matches!(models.get(), ModelChoices::Loaded(_));
    // The note under the profile always takes the same room (two lines): applying an API key
    // swaps a refusal for the list, and the controls below must not move under a click.
    let profile_note = Signal::derive(move || match models.get() {
        ModelChoices::Failed(error) => format!("Cannot load the model list: {error}"),
        ModelChoices::Loading => "Loading the model list…".to_string(),
        ModelChoices::Loaded(_) => settings.with(|s| match profile(s.profile.trim()) {
            Some(p) => p.note(),
            None => "A model this page has no numbers for.".to_string(),
        }),
    });
    // The link's note says what the link is, or what is wrong with the preset given or a
    // number typed for it.
    let link_fields = [Field::Link, Field::RttMs, Field::UpMbit, Field::DownMbit];
    // Each field's own error, by the id its control is described by while it is in error.
    let error_id = move |field: Field| format!("{id}{}-error", field.testid());
    let link_note = move || {
        // Every number in error, not just the first: each is typed in a field of its own.
        let errors: Vec<(Field, String)> = link_fields
            .into_iter()
            .filter_map(|f| Some((f, form.error(f)?)))
            .collect();
        if !errors.is_empty() {
            let count = errors.len();
            return errors
                .into_iter()
                .enumerate()
                .map(|(i, (field, error))| {
                    view! {
                        <span id=error_id(field)>{error}</span>
                        {(i + 1 < count).then_some(" · ")}
                    }
                })
                .collect_view()
                .into_any();
        }
        let said = settings.with(|s| match s.conditions() {
            Ok(c) if c.link.is_loopback() => {
                "Nothing in between: the page and the server on one machine.".to_string()
            }
            // Not what will happen on a server that refuses it (the notice above says so).
            Ok(c) if refused.with(Option::is_some) => format!(
                "This server does not emulate a link: {} is refused (above).",
                c.link.describe()
            ),
            Ok(c) => format!(
                "The server delays and paces the bytes each leg really sends and receives: {}.",
                c.link.describe()
            ),
            Err(why) => why,
        });
        said.into_any()
    };
    let link_invalid = move || link_fields.into_iter().any(|f| form.error(f).is_some());
    let custom = move || settings.with(|s| s.link == LinkPreset::Custom);
    let link_note_id = format!("{id}link-note");
    let number = |field: Field, label: &'static str, placeholder: &'static str| {
        view! {
            <FormField
                form=form
                field=field
                control=Control::number(placeholder)
                described_by=link_note_id.clone()
                error_id=error_id(field)
                id=id
                label=label
            />
        }
    };
    view! {
        <fieldset class="settings conditions" data-testid="conditions" prop:disabled=locked>
            <legend>"Conditions (both legs alike)"</legend>
            {refusal}
            <FormField
                form=form
                field=Field::TaskLength
                control=Control::choice(TaskLength::ALL.map(|t| (t.as_str(), t.label())).into())
                note=Signal::derive(move || settings.with(|s| s.task_length.note()).to_string())
                id=id
            />
            <Show
                when=loaded
                fallback=move || {
                    view! {
                        <FormField
                            form=form
                            field=Field::Profile
                            control=Control::text("text", "a profile's name")
                            note=profile_note
                            note_class="profile-note"
                            id=id
                        />
                    }
                }
            >
                <FormField
                    form=form
                    field=Field::Profile
                    control=Control::Choice(profiles)
                    note=profile_note
                    note_class="profile-note"
                    id=id
                />
            </Show>
            <div class="field link-field">
                <FormField
                    form=form
                    field=Field::Link
                    control=Control::choice(LinkPreset::ALL.map(|p| (p.as_str(), p.label())).into())
                    described_by=link_note_id.clone()
                    error_id=error_id(Field::Link)
                    id=id
                />
                <div class="link-values" class:custom=custom>
                    {number(Field::RttMs, "RTT, ms", "0")}
                    {number(Field::UpMbit, "Up, Mbit/s", "unlimited")}
                    {number(Field::DownMbit, "Down, Mbit/s", "unlimited")}
                </div>
                <span
                    id=link_note_id.clone()
                    class="field-note"
                    class:field-error=link_invalid
                    data-testid="link-note"
                >
                    {link_note}
                </span>
            </div>
            <FormField
                form=form
                field=Field::ApiCosts
                control=Control::choice(ApiCosts::ALL.map(|c| (c.as_str(), c.label())).into())
                note=Signal::derive(move || settings.with(|s| s.api_costs.source()).to_string())
                id=id
            />
        </fieldset>
    }
}
