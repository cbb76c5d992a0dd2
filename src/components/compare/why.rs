//! Why a comparison came out as it did, under its chart: the sentence of
//! [`crate::agent::explain_why`] (measured first, the link's round trips, then the modelled
//! waits) or a sweep's description, the difference part by part, and what the server said it
//! applied.

use leptos::prelude::*;

use crate::agent::{Comparison, ContinuationMode, WARM_UP, describe_sweep, explain_why};

/// `speedup-why`, `speedup-explained` (and the long-running leg's), `conditions-applied`.
#[component]
pub fn WhyLines(
    /// The comparison.
    #[prop(into)]
    comparison: Signal<Comparison>,
) -> impl IntoView {
    let long = ContinuationMode::LongRunning;
    let why = move || {
        comparison.with(|c| {
            if c.is_sweep() {
                describe_sweep(c)
            } else {
                explain_why(c, ContinuationMode::WebSocket)
            }
        })
    };
    let explained = move || comparison.with(|c| c.explain()).unwrap_or_default();
    let long_explained = move || {
        comparison.with(|c| {
            c.has_long_running()
                .then(|| c.explain_of(long))
                .flatten()
                .map(|text| view! { <p class="speedup-explained">{text}</p> })
        })
    };
    // What the server said it applied, once a counted leg has reported it.
    let applied = move || {
        comparison.with(|c| {
            let latest = c.legs.iter().rev().find_map(|l| {
                l.conditions
                    .as_ref()
                    .filter(|_| l.repetition != WARM_UP)
                    .map(|a| (a.describe(), a.chosen_by.clone()))
            });
            let exhausted = c.legs.iter().any(|l| l.link_budget_exhausted);
            latest.map(|(described, chosen_by)| {
                let by = if chosen_by == "client" {
                    "as this page asked"
                } else {
                    "the server's own"
                };
                let lifted = if exhausted {
                    " The link's time budget ran out on a leg: its bandwidth limit was lifted for the rest of it."
                } else {
                    ""
                };
                format!("The server applied: {described} ({by}).{lifted}")
            })
        })
    };
    view! {
        <p class="speedup-why" data-testid="speedup-why">{why}</p>
        <p class="speedup-explained" data-testid="speedup-explained">{explained}</p>
        {long_explained}
        <p class="conditions-applied" data-testid="conditions-applied">{applied}</p>
    }
}
