//! One form field: its label, its control, and under it a hint (its bounds, what a choice
//! means) that the field's error replaces. The control shows what was typed or linked, as given
//! ([`Inputs::shown`]), and hands every change to the field's own parser
//! ([`Inputs::edit`]); an error sets `aria-invalid` and is what the control is described by.
//! The run's own check is [`InputErrors`], where the run would start.

use leptos::prelude::*;

use crate::focus_id;
use crate::settings::{Field, Inputs, Settings};

/// The settings being edited and what was typed into them: a form's state.
#[derive(Clone, Copy)]
pub struct Form {
    pub settings: RwSignal<Settings>,
    pub inputs: RwSignal<Inputs>,
}

impl Form {
    pub fn new(settings: RwSignal<Settings>, inputs: RwSignal<Inputs>) -> Self {
        Form { settings, inputs }
    }

    /// `text` typed or chosen in `field`: parsed into the settings when it can be.
    pub fn edit(self, field: Field, text: String) {
        let mut settings = self.settings.get_untracked();
        let mut inputs = self.inputs.get_untracked();
        inputs.edit(&mut settings, field, &text);
        if self.settings.with_untracked(|s| *s != settings) {
            self.settings.set(settings);
        }
        self.inputs.set(inputs);
    }

    /// What `field` shows.
    pub fn shown(self, field: Field) -> String {
        self.settings
            .with(|s| self.inputs.with(|inputs| inputs.shown(field, s)))
    }

    /// The error standing at `field`, in words ([`Inputs::standing`]).
    pub fn error(self, field: Field) -> Option<String> {
        self.settings.with(|s| {
            self.inputs
                .with(|inputs| inputs.standing(field, s).map(ToString::to_string))
        })
    }

    /// The errors that keep a run from starting, in words.
    pub fn blocking(self) -> Vec<String> {
        self.settings.with(|s| {
            self.inputs.with(|inputs| {
                inputs
                    .blocking(s)
                    .into_iter()
                    .map(ToString::to_string)
                    .collect()
            })
        })
    }

    /// The first field whose error keeps a run from starting.
    pub fn first_blocking(self) -> Option<Field> {
        self.settings.with_untracked(|s| {
            self.inputs
                .with_untracked(|inputs| inputs.blocking(s).first().map(|e| e.field))
        })
    }

    /// Whether a run may start; if not, and given the prefix of the form's ids, the focus goes
    /// to the first field in error that is on the page.
    pub fn check(self, focus: Option<&str>) -> bool {
        let Some(field) = self.first_blocking() else {
            return true;
        };
        let Some(prefix) = focus else {
            return false;
        };
        focus_id(&format!("{prefix}setting-{}", field.testid()));
        false
    }
}

/// Takes the focus to `field`'s control in the form whose ids start with `prefix` (which scrolls
/// it into view) as soon as it is on the page — a view just switched to mounts on its next
/// frames, or once its module has loaded —, trying for about two seconds.
pub fn focus_field_when_shown(prefix: &'static str, field: Field) {
    fn attempt(id: String, left: u32) {
        if !focus_id(&id) && left > 0 {
            set_timeout(
                move || attempt(id, left - 1),
                std::time::Duration::from_millis(50),
            );
        }
    }
    attempt(format!("{prefix}setting-{}", field.testid()), 40);
}

/// What the control is.
#[derive(Clone)]
pub enum Control {
    /// A line of text: how a phone's keyboard should take it (`inputmode`: `decimal`, `url`,
    /// `text`), its placeholder, and a `<datalist>` of suggestions.
    Text {
        inputmode: &'static str,
        placeholder: &'static str,
        list: Option<&'static str>,
    },
    /// A select of `(value, label)` options.
    Choice(Signal<Vec<(String, String)>>),
}

impl Control {
    /// A number typed as text: the page reads exactly what was typed (a number input would
    /// hand it an empty string for "abc" and call that valid).
    pub fn number(placeholder: &'static str) -> Self {
        Control::Text {
            inputmode: "decimal",
            placeholder,
            list: None,
        }
    }

    /// A line of text (`inputmode` as a phone's keyboard should take it).
    pub fn text(inputmode: &'static str, placeholder: &'static str) -> Self {
        Control::Text {
            inputmode,
            placeholder,
            list: None,
        }
    }

    /// A select of a fixed list.
    pub fn choice(options: Vec<(&'static str, &'static str)>) -> Self {
        let options: Vec<(String, String)> = options
            .into_iter()
            .map(|(value, label)| (value.to_string(), label.to_string()))
            .collect();
        Control::Choice(Signal::stored(options))
    }
}

/// A form field (`data-testid` the field's, its hint `<testid>-note`). With `described_by`,
/// the hint is a shared one the parent shows (the link's three numbers), and the field shows
/// none of its own.
#[component]
pub fn FormField(
    form: Form,
    field: Field,
    control: Control,
    /// The hint under the control (none: only an error is said there); the error takes its
    /// place.
    #[prop(optional, into)]
    note: Option<Signal<String>>,
    /// The id of a hint shown by the parent instead.
    #[prop(optional)]
    described_by: Option<String>,
    /// With `described_by`: the id of this field's own error in the parent's hint, which
    /// describes the control while it is in error (the hint may say other fields' errors too).
    #[prop(optional)]
    error_id: Option<String>,
    /// Prefix of the ids (two forms on one page).
    #[prop(optional)]
    id: &'static str,
    /// The label, when it is not the field's name.
    #[prop(optional)]
    label: Option<&'static str>,
    #[prop(optional, into)] disabled: Signal<bool>,
    /// Extra classes of the hint (`profile-note`: always two lines).
    #[prop(optional)]
    note_class: &'static str,
) -> impl IntoView {
    let control_id = format!("{id}setting-{}", field.testid());
    let note_id = described_by
        .clone()
        .unwrap_or_else(|| format!("{id}{}-note", field.testid()));
    let invalid = move || form.error(field).is_some();
    let described = {
        let note_id = note_id.clone();
        move || match &error_id {
            Some(own) if invalid() => own.clone(),
            _ => note_id.clone(),
        }
    };
    let edit = move |ev: leptos::ev::Event| form.edit(field, event_target_value(&ev));
    let input = match control {
        Control::Text {
            inputmode,
            placeholder,
            list,
        } => view! {
            <input
                id=control_id.clone()
                data-testid=field.testid()
                type="text"
                inputmode=inputmode
                autocomplete="off"
                placeholder=placeholder
                list=list
                aria-invalid=move || invalid().to_string()
                aria-describedby=described.clone()
                prop:disabled=disabled
                prop:value=move || form.shown(field)
                on:input=edit
            />
        }
        .into_any(),
        Control::Choice(options) => view! {
            <select
                id=control_id.clone()
                data-testid=field.testid()
                aria-invalid=move || invalid().to_string()
                aria-describedby=described.clone()
                prop:disabled=disabled
                prop:value=move || form.shown(field)
                on:change=edit
            >
                {move || {
                    // A value given that is none of the options (the URL's) is shown as given.
                    let shown = form.shown(field);
                    let mut options = options.get();
                    if !options.iter().any(|(value, _)| *value == shown) {
                        options.push((shown.clone(), format!("{shown:?}: not one of these")));
                    }
                    options
                        .into_iter()
                        .map(|(value, label)| {
                            let selected = value == shown;
                            view! { <option value=value selected=selected>{label}</option> }
                        })
                        .collect_view()
                }}
            </select>
        }
        .into_any(),
    };
    // The field's own hint, unless the parent shows a shared one; without a note it is empty
    // (no room taken) until there is an error to say.
    let hint = described_by.is_none().then(|| {
        view! {
            <span
                id=note_id.clone()
                class=format!("field-note {note_class}")
                class:field-error=invalid
                data-testid=format!("{}-note", field.testid())
            >
                {move || {
                    form.error(field)
                        .unwrap_or_else(|| note.map(|note| note.get()).unwrap_or_default())
                }}
            </span>
        }
    });
    view! {
        <div class="field" class:invalid=invalid>
            <label for=control_id>{label.unwrap_or(field.label())}</label>
            {input}
            {hint}
        </div>
    }
}

/// Where the run would start: the values that keep it from starting, each naming its field and
/// what it takes (`data-testid="input-errors"`); nothing when there are none. With `elsewhere`,
/// an error in a field this form does not show (`shows` says which it does: the overview has
/// no Repetitions) says where the field is and leads there (`input-error-elsewhere`).
#[component]
pub fn InputErrors(
    form: Form,
    /// The fields this form shows (none given: all of them).
    #[prop(optional)]
    shows: Option<fn(Field) -> bool>,
    /// Where the other fields are, and the way there (to the field given).
    #[prop(optional)]
    elsewhere: Option<(&'static str, Callback<Field>)>,
) -> impl IntoView {
    move || {
        let errors: Vec<(Field, String)> = form.settings.with(|s| {
            form.inputs.with(|inputs| {
                inputs
                    .blocking(s)
                    .into_iter()
                    .map(|e| (e.field, e.to_string()))
                    .collect()
            })
        });
        (!errors.is_empty()).then(|| {
            let items = errors
                .into_iter()
                .map(|(field, error)| {
                    let away = elsewhere.filter(|_| shows.is_some_and(|shows| !shows(field)));
                    let lead = away.map(|(place, go)| {
                        view! {
                            ". "
                            <button
                                type="button"
                                class="link-button"
                                data-testid="input-error-elsewhere"
                                on:click=move |_| go.run(field)
                            >
                                {format!("{} is on the {place}: fix it there", field.label())}
                            </button>
                        }
                    });
                    view! { <li>{error}{lead}</li> }
                })
                .collect_view();
            view! {
                <div class="input-errors" role="alert" data-testid="input-errors">
                    <p>"Nothing runs until these are fixed:"</p>
                    <ul>{items}</ul>
                </div>
            }
        })
    }
}
