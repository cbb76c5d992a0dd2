//! The latest run of each leg of a comparison, one above the other: its status, turns,
//! timeline and (collapsed) conversation.

use leptos::prelude::*;

use crate::agent::{Comparison, ContinuationMode, WARM_UP, leg_name};
use crate::components::{Conversation, RunView, Timeline, TimelineDefinitions};

/// The latest run of each leg, side by side: status, turns, timeline and (collapsed)
/// conversation (`data-testid="leg-ws"`, `leg-http`, `leg-long-running`).
#[component]
pub fn LegsView(
    /// The comparison, for each leg's repetition.
    #[prop(into)]
    comparison: Signal<Comparison>,
    /// The latest WebSocket run.
    ws: RunView,
    /// The latest HTTP run.
    http: RunView,
    /// The latest long-running run, shown when the comparison has that leg.
    long_running: RunView,
    /// Embedded: no conversations.
    #[prop(optional)]
    embed: bool,
) -> impl IntoView {
    let [ws_mode, http_mode] = Comparison::MODES;
    let has_long = Memo::new(move |_| comparison.with(Comparison::has_long_running));
    let leg = move |mode: ContinuationMode, run: RunView, id: &'static str| {
        let name = leg_name(mode);
        let heading = move || {
            comparison.with(|c| match c.latest(mode) {
                Some(leg) if leg.repetition == WARM_UP => {
                    format!("{name} — warm-up (not counted)")
                }
                Some(leg) if c.is_sweep() => match c.sweep_point(leg.repetition) {
                    Some(at) => format!("{name} — {}", at.describe()),
                    None => name.to_string(),
                },
                Some(leg) => format!(
                    "{name} — repetition {} of {}",
                    leg.repetition, c.repetitions
                ),
                None => name.to_string(),
            })
        };
        let status = Memo::new(move |_| run.with(|r| r.status));
        view! {
            <section class="leg" data-testid=format!("leg-{id}") aria-label=format!("{name} leg")>
                <h3>{heading}</h3>
                <p class="leg-status">
                    <span
                        class=move || format!("status status-{}", status.get().as_str())
                        data-testid="leg-status"
                    >
                        {move || status.get().as_str()}
                    </span>
                    " · Turns: "
                    <span data-testid="leg-turns">{move || run.with(|r| r.turns.len())}</span>
                    " · Tool calls: "
                    <span>{move || run.with(|r| r.tool_call_count())}</span>
                </p>
                <Timeline run=run label=format!("Timeline of the {name} leg") />
                {(!embed)
                    .then(|| {
                        view! {
                            <Conversation
                                run=run
                                closed=true
                                label=format!("Conversation of the {name} leg")
                            />
                        }
                    })}
            </section>
        }
    };
    view! {
        <div class="legs">
            {leg(ws_mode, ws, "ws")}
            {leg(http_mode, http, "http")}
            {move || {
                has_long
                    .get()
                    .then(|| leg(ContinuationMode::LongRunning, long_running, "long-running"))
            }}
        </div>
        {(!embed).then(|| view! { <TimelineDefinitions /> })}
    }
}
