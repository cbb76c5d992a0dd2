//! A comparison's result in its first lines: HTTP's median over a WebSocket design's — measured
//! on this machine first, then with the modelled waits when there were any — coloured only when
//! the repetitions' spread separates the legs ([`crate::agent::Verdict`]), and the result in
//! words. It shows once a repetition has both legs done, and is refined as the others arrive.

use leptos::prelude::*;

use crate::PageContext;
use crate::agent::{Comparison, ContinuationMode, RunStatus};
use crate::conditions::ApiCosts;

/// The result against HTTP stateless of the leg `leg` (`data-testid="speedup"`, the words
/// `speedup-text`, with the modelled waits `speedup-total`; for the long-running leg
/// `speedup-long-running`, `speedup-long-running-text`, `speedup-long-running-total`).
#[component]
pub fn SpeedupHeadline(
    /// The comparison.
    #[prop(into)]
    comparison: Signal<Comparison>,
    /// WebSocket mode, or the long-running design.
    leg: ContinuationMode,
) -> impl IntoView {
    let long = leg == ContinuationMode::LongRunning;
    let id = if long {
        "speedup-long-running"
    } else {
        "speedup"
    };
    let speedup = Memo::new(move |_| comparison.with(|c| c.speedup_of(leg)));
    let status = Memo::new(move |_| comparison.with(Comparison::status));
    let text = move || match (speedup.get(), status.get()) {
        (Some(s), _) => s.headline().shown(),
        (None, RunStatus::Running) => "measuring…".to_string(),
        (None, _) => "–".to_string(),
    };
    let verdict = move || {
        speedup
            .get()
            .map_or("pending", |s| s.verdict().as_str())
            .to_string()
    };
    // A run the settings give hosted costs has its modelled part said from its start, its
    // value to come: the line takes its room before the first result, not under the reader's
    // eyes when it arrives.
    let page = use_context::<PageContext>().unwrap_or_else(PageContext::standalone);
    let modelled_coming = move || {
        speedup.with(Option::is_none)
            && status.get() == RunStatus::Running
            && page.settings.with(|s| s.api_costs == ApiCosts::Hosted)
    };
    let total = move || {
        let value = match speedup.get() {
            Some(s) if s.has_modelled() => s.total.shown(),
            _ if modelled_coming() => "measuring…".to_string(),
            _ => return None,
        };
        Some(view! {
            <span class="speedup-modelled">
                "With the modelled hosted costs (not measured): "
                <strong data-testid=format!("{id}-total") class="speedup-total">
                    {value}
                </strong>
            </span>
        })
    };
    let said = move || match (speedup.get(), status.get()) {
        (Some(s), _) => s.describe(),
        (None, RunStatus::Running) => comparison.with(|c| {
            let (done, all) = c.legs_done();
            format!("{done} of {all} legs done; a first result once a repetition has both legs.")
        }),
        (None, RunStatus::Idle) => "Not run yet.".to_string(),
        (None, other) => format!("The comparison {}.", other.as_str()),
    };
    // The headline is the measured ratio: end to end less the modelled waits (none with local
    // costs). One label throughout, whatever the result: a label that changed with it would
    // move what is under it when the first result arrives.
    let label = if long {
        "Long-running response, measured (HTTP's median ÷ the long-running design's, modelled costs left out): "
    } else {
        "Speedup, measured (HTTP's median ÷ WebSocket's, modelled costs left out): "
    };
    view! {
        <p class="speedup-line">
            {label}
            <strong data-testid=id class=move || format!("speedup verdict-{}", verdict())>
                {text}
            </strong>
            // Beside the number, what it is not yet (a final result, one that separates the
            // legs), so that the number alone is not taken for one; its room kept throughout.
            <span class="speedup-qualifier" data-testid=format!("{id}-qualifier")>
                {move || speedup.with(|s| s.as_ref().map_or("", |s| s.qualifier()))}
            </span>
            {total}
        </p>
        <p class="speedup-said" data-testid=format!("{id}-text")>{said}</p>
    }
}
