//! The Steer box: while a single run streams over a WebSocket transport, a text field and a
//! button send `response.steer` for the response under way. What the server answered — accepted,
//! pending or failed with its code — shows in the timeline (one row per steer, under its turn)
//! and in the Events tab; the box's note says the latest one, or why it is disabled (no response
//! running, HTTP, a comparison). What a steer does is the agent session's ([`crate::agent`]).

use leptos::prelude::*;

use crate::agent::{ContinuationMode, steer_target};
use crate::components::RunView;

/// The Steer box (`data-testid="steer-input"`, `steer`, its note `steer-note`).
#[component]
pub fn SteerBox(
    /// The run it steers.
    run: RunView,
    /// The mode of the single run shown; `None` for a comparison.
    #[prop(into)]
    mode: Signal<Option<ContinuationMode>>,
    /// Sends a steer; the error says why nothing was sent.
    on_steer: Callback<String, Result<(), String>>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let refused = RwSignal::new(None::<String>);
    let target = Memo::new(move |_| {
        let mode = mode.get();
        run.with(|r| steer_target(r, mode))
    });
    let latest = Memo::new(move |_| {
        run.with(|r| {
            r.steers
                .last()
                .map(|s| format!("Last steer: “{}” — {}", s.text, s.outcome.describe()))
        })
    });
    let unavailable = move || target.with(Result::is_err);
    let note = move || {
        if let Some(why) = refused.get() {
            return why;
        }
        match (target.get(), latest.get()) {
            (_, Some(latest)) => latest,
            (Ok(id), None) => format!(
                "Sends response.steer for {id}: the server takes the input at the response's \
                 next safe boundary and continues in an automatic successor."
            ),
            (Err(why), None) => why,
        }
    };
    let send = move || {
        let steer = text.get_untracked();
        match on_steer.run(steer) {
            Ok(()) => {
                text.set(String::new());
                refused.set(None);
            }
            Err(why) => refused.set(Some(why)),
        }
    };
    view! {
        <form
            class="steer"
            data-testid="steer-form"
            on:submit=move |ev| {
                ev.prevent_default();
                send();
            }
        >
            <label for="steer-input">"Steer the running response"</label>
            <div class="steer-field">
                <input
                    id="steer-input"
                    data-testid="steer-input"
                    type="text"
                    placeholder="e.g. make the summary about a cat"
                    aria-describedby="steer-note"
                    prop:disabled=unavailable
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        refused.set(None);
                        text.set(event_target_value(&ev));
                    }
                />
                <button type="submit" data-testid="steer" disabled=unavailable>
                    "Steer"
                </button>
            </div>
            <p id="steer-note" class="field-note steer-note" data-testid="steer-note" role="status" title=note>
                {note}
            </p>
        </form>
    }
}
